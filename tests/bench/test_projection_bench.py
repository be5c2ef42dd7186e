"""The projection bench runs against the library as it is: a renamed attribute fails here, not
in the next `make bench` (mypy does not read bench/)."""

from __future__ import annotations

from typing import Any

import pytest
from bench.corpus import tool_corpus
from bench.projection import TARGETS, _ours


@pytest.mark.parametrize(("target", "options"), TARGETS)
def test_each_row_of_the_projection_bench_runs(target: str, options: dict[str, Any]) -> None:
    row = _ours(tool_corpus(5), target, options, runs=1)
    assert row.label.startswith(f"schemawire {target}")

"""Eval tests: cases written in a temporary folder that run in the refund example, and the
``schemawire eval`` command. (Helpers they import: `tests.evals.cases`.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.evals.cases import REFUND, WriteCase


@pytest.fixture(autouse=True)
def _no_ledger(monkeypatch: pytest.MonkeyPatch) -> None:
    """create_refund writes to REFUND_LEDGER when set (the workflow tests set it)."""
    monkeypatch.delenv("REFUND_LEDGER", raising=False)


@pytest.fixture
def write_case(tmp_path: Path) -> WriteCase:
    """Write a case (run in the refund example unless it names a repo) under ``tmp_path``."""

    def write(document: dict[str, Any], name: str = "case.json") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"repo": str(REFUND), **document}, indent=2), encoding="utf-8")
        return path

    return write

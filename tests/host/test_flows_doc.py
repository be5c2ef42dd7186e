"""docs/flows.md says what flows do: its flow file is the example's, and each figure and name
it gives (steps, stores, short ids, trace files, commands, crash runs) is the code's."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from schemawire.cli._app import app
from schemawire.host.workflow import FlowRunner
from schemawire.store import DEFAULT_STORE, SHORT_ID, SqliteStore
from schemawire.trace import trace_path
from tests.host import test_crash
from tests.host.flows import FLOW

PAGE = (Path(__file__).parents[2] / "docs" / "flows.md").read_text(encoding="utf-8")


def prose() -> str:
    return " ".join(PAGE.split())


def shortened(shown: Any, real: Any) -> bool:
    """Whether ``shown`` is ``real`` abridged: some members left out, some strings cut short
    (``...`` at their end)."""
    if isinstance(shown, str) and shown.endswith("...") and isinstance(real, str):
        return real.startswith(shown.removesuffix("..."))
    if isinstance(shown, dict) and isinstance(real, dict):
        return shown.keys() <= real.keys() and all(shortened(shown[k], real[k]) for k in shown)
    if isinstance(shown, list) and isinstance(real, list):
        return len(shown) == len(real) and all(map(shortened, shown, real))
    return bool(shown == real)


def test_the_flow_file_shown_is_the_examples() -> None:
    (shown,) = re.findall(r"```json\n(.*?)```", PAGE, flags=re.DOTALL)
    assert shortened(json.loads(shown), json.loads(FLOW.read_text(encoding="utf-8")))


def test_the_figures_are_the_codes(tmp_path: Path) -> None:
    text = prose()
    steps = inspect.signature(FlowRunner).parameters["max_steps"].default
    assert f"A run stops after {steps} steps (`FlowRunner(max_steps=...)`)" in text
    assert f"`sqlite:PATH` (the default, `{DEFAULT_STORE.removeprefix('sqlite:')}`)" in text
    store = SqliteStore(tmp_path / "runs.db")
    try:
        synchronous = store._db.execute("PRAGMA synchronous").fetchone()[0]
    finally:
        store.close()
    assert synchronous == 2  # FULL
    assert "`synchronous=FULL`" in text
    assert f"or its first {SHORT_ID} characters or more" in text
    assert f"`{trace_path('<run id>')}`" in text
    runs = test_crash.RUNS
    assert f"{runs} runs on SQLite and {runs} on PostgreSQL" in text


def test_the_runs_commands_shown_exist_with_their_options() -> None:
    (block,) = [
        b for b in re.findall(r"```text\n(.*?)```", PAGE, flags=re.DOTALL) if "schemawire runs" in b
    ]
    for line in block.splitlines():
        words = line.split("  ")[0].split()
        command = words[1:3]
        options = [w.strip("[]") for w in words[3:] if w.strip("[]").startswith("--")]
        result = CliRunner().invoke(app, [*command, "--help"])
        assert result.exit_code == 0, line
        for option in options:
            assert option in result.output, (line, option)

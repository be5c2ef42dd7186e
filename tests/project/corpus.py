"""Real tool definitions for tests: the Berkeley Function Calling Leaderboard's functions.

`make test` installs the ``bfcl-eval`` package without its dependencies, for its data files
only; the package is found without importing it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from schemawire._json import dumps, loads_lines

INSTALL = "pip install --no-deps bfcl-eval==2026.3.23 (make test does)"


def bfcl_data() -> Path:
    """The folder of the leaderboard's data files."""
    spec = importlib.util.find_spec("bfcl_eval")
    locations = spec.submodule_search_locations if spec is not None else None
    assert locations, f"bfcl-eval is not installed: {INSTALL}"
    return Path(next(iter(locations))) / "data"


def bfcl_tool_lists() -> Iterator[tuple[str, list[Any]]]:
    """Every record's ``function`` list, and each multi-turn API's functions as one list."""
    data = bfcl_data()
    for path in sorted(data.glob("BFCL_v4_*.json")):
        if path.name == "BFCL_v4_format_sensitivity.json":
            continue  # one JSON object, not JSON Lines, and no tools in it
        for line in loads_lines(path.read_bytes(), source=str(path)):
            assert line.error is None, line.error
            if isinstance(line.value, dict) and "function" in line.value:
                yield f"{path.name}:{line.number}", line.value["function"]  # type: ignore[misc]
    for path in sorted((data / "multi_turn_func_doc").glob("*.json")):
        yield path.name, [line.value for line in loads_lines(path.read_bytes())]


def bfcl_tools() -> list[Any]:
    """Each distinct tool definition of the leaderboard, once."""
    distinct: dict[str, Any] = {}
    for _, tools in bfcl_tool_lists():
        for tool in tools:
            distinct.setdefault(dumps(tool, indent=False, sort_keys=True), tool)
    return list(distinct.values())

"""docs/host.md says what a host does by default; these are its claims, checked against the code."""

from __future__ import annotations

import re
from pathlib import Path

from schemawire import HostOptions, PythonTool, ToolSpec

HOST_MD = (Path(__file__).parents[2] / "docs" / "host.md").read_text(encoding="utf-8")


def _row(name: str) -> str:
    (row,) = [line for line in HOST_MD.splitlines() if line.startswith(f"| `{name}` |")]
    return row


def test_the_documented_option_defaults_are_the_defaults() -> None:
    row = _row("options")
    documented = dict(re.findall(r"`(\w+)` \((?:default )?(\w+)\)", row))
    defaults = HostOptions()
    assert documented == {
        "strict": "true" if defaults.strict else "false",
        "max_turns": str(defaults.max_turns),
        "retries_per_tool": str(defaults.retries_per_tool),
        "max_concurrency": str(defaults.max_concurrency),
    }


def test_the_documented_tool_timeout_is_the_default() -> None:
    tool = PythonTool(ToolSpec("t", {"type": "object"}), lambda: None)
    assert f"`PythonTool.timeout` ({tool.timeout:g} s)" in HOST_MD


def test_every_host_argument_is_documented_in_order() -> None:
    import inspect

    from schemawire import Host

    parameters = [p for p in inspect.signature(Host.__init__).parameters if p != "self"]
    documented = re.findall(r"^\| `(\w+)` \|", HOST_MD, flags=re.MULTILINE)
    assert documented[: len(parameters)] == parameters

"""What the library's layers import: a program that checks schemas, runs Python tools or evals
never loads the MCP SDK, and one that plays a scripted model never loads the HTTP client (what
each command imports is tests/cli/test_startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

MCP = ("mcp", "mcp_types", "schemawire.mcp")
HTTP = ("httpx2", "httpcore2", "schemawire.host.providers")


def loaded_by(code: str, packages: tuple[str, ...]) -> list[str]:
    """Which of ``packages`` (or their submodules) running ``code`` in a fresh process loads."""
    code += "\nimport json, sys; print(json.dumps(sorted(sys.modules)))"
    printed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    modules: list[str] = json.loads(printed.splitlines()[-1])
    return [m for m in modules if m in packages or m.startswith(tuple(f"{p}." for p in packages))]


@pytest.mark.parametrize(
    "module",
    [
        "schemawire.application.check",
        "schemawire.evals",
        "schemawire.host.loop",
        "schemawire.host.workflow",
        "schemawire.schema.implementations",
        "schemawire.trace",
    ],
)
def test_a_layer_below_mcp_never_loads_the_mcp_sdk_or_the_http_client(module: str) -> None:
    assert loaded_by(f"import {module}", MCP + HTTP) == []


def test_a_scripted_models_run_loads_no_http_client() -> None:
    run = """
import anyio
from schemawire import Host, ScriptedModel
answer = {"choices": [{"index": 0, "finish_reason": "stop",
                       "message": {"role": "assistant", "content": "hi"}}]}
result = anyio.run(Host(ScriptedModel("openai.chat", [answer]), []).run, "hello")
assert result.answer == "hi", result
"""
    assert loaded_by(run, MCP + HTTP) == []


def test_a_script_named_as_a_model_loads_no_http_client(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"api": "openai.chat", "responses": []}', encoding="utf-8")
    code = f"from schemawire import model_from_spec; model_from_spec({f'script:{script}'!r})"
    assert loaded_by(code, HTTP) == []


def test_naming_a_providers_model_loads_it() -> None:
    code = "from schemawire import model_from_spec; model_from_spec('openai-compatible:http://127.0.0.1:1/v1:m')"
    assert "schemawire.host.providers" in loaded_by(code, HTTP)

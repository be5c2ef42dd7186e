"""``schemawire tools``, ``call`` and ``serve`` on the command line: output and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import SUPPORT_DESK, invoke
from tests.mcp.conftest import SCRIPTED

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
DESK = ["--", SCHEMAWIRE, "serve", str(SUPPORT_DESK)]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCHEMAWIRE, *args], capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip


def test_tools_lists_and_projects() -> None:
    listed = run("tools", "--json", *DESK)
    assert listed.returncode == 0, listed.stderr
    body = json.loads(listed.stdout)
    assert body["server"]["serverInfo"]["name"] == "support-desk"
    assert [t["name"] for t in body["tools"]] == ["get_weather", "create_refund"]
    projected = run("tools", "--target", "openai.chat", "--strict", *DESK)
    assert projected.returncode == 0, projected.stderr
    assert [t["function"]["strict"] for t in json.loads(projected.stdout)] == [True, True]


def test_call_exit_codes_and_json() -> None:
    good = run("call", "get_weather", '{"city": "Paris"}', "--json", *DESK)
    refused = run("call", "create_refund", '{"order_id": "A-1", "amount": 1, "reason": "late"}',
                  "--json", "--repo", str(SUPPORT_DESK), *DESK)  # fmt: skip
    assert (good.returncode, refused.returncode) == (0, 1)
    assert json.loads(good.stdout)["output"]["structuredContent"]["city"] == "Paris"
    body = json.loads(refused.stdout)
    assert body["sent"] is False
    error = body["arguments"]["rejection"]
    assert error["schema"] == "https://example.com/schemas/tools/create_refund.json"
    assert error["violations"][0]["pointer"] == "/order_id"


def test_call_repairs_only_when_asked() -> None:
    broken = "{'city': 'Paris',}"
    assert run("call", "get_weather", broken, *DESK).returncode == 1
    repaired = run("call", "get_weather", broken, "--tolerant", "--json", *DESK)
    assert repaired.returncode == 0, repaired.stdout
    assert json.loads(repaired.stdout)["arguments"]["outcome"] == "repaired"


def test_a_server_that_cannot_start_exits_2(tmp_path: Path) -> None:
    result = run("tools", "--", str(tmp_path / "no-such-server"))
    assert result.returncode == 2
    assert "error: MCP server no-such-server" in result.stderr


def test_a_crashing_tool_exits_1_and_says_why() -> None:
    result = run("call", "crash", "{}", "--", sys.executable, str(SCRIPTED))
    assert result.returncode == 1
    assert "crashing on purpose" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve", "--upstream"], "needs the upstream server's command"),
        (["serve", "a", "b"], "one repository to serve"),
        (["serve", "--repo", ".", "."], "not both"),
        (["serve", str(SUPPORT_DESK), "--http", "--host", "0.0.0.0"], "--allow-remote"),
        (["call", "echo", "{}"], "give the server's command"),
        (["tools", "--url", "http://127.0.0.1:9/mcp", "--", "x"], "one of them"),
        (["tools", "--url", "http://127.0.0.1:9/mcp", "-H", "nocolon"], "Name: value"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.stderr

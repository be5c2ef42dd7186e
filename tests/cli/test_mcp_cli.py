"""``schemawire tools``, ``call`` and ``serve`` on the command line: output and exit codes."""

from __future__ import annotations

import contextlib
import json
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_cli import SUPPORT_DESK, invoke
from tests.mcp.helpers import SCRIPTED

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
DESK = ["--", SCHEMAWIRE, "serve", str(SUPPORT_DESK)]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCHEMAWIRE, *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.slow
def test_tools_lists_and_projects() -> None:
    listed = run("tools", "--json", *DESK)
    assert listed.returncode == 0, listed.stderr
    body = json.loads(listed.stdout)
    assert body["server"]["serverInfo"]["name"] == "support-desk"
    assert [t["name"] for t in body["tools"]] == ["get_weather", "create_refund"]
    projected = run("tools", "--target", "openai.chat", "--strict", *DESK)
    assert projected.returncode == 0, projected.stderr
    assert [t["function"]["strict"] for t in json.loads(projected.stdout)] == [True, True]


@pytest.mark.slow
def test_call_exit_codes_and_json() -> None:
    good = run("call", "get_weather", '{"city": "Paris"}', "--json", *DESK)
    refused = run(
        "call",
        "create_refund",
        '{"order_id": "A-1", "amount": 1, "reason": "late"}',
        "--json",
        "--repo",
        str(SUPPORT_DESK),
        *DESK,
    )
    assert (good.returncode, refused.returncode) == (0, 1)
    assert json.loads(good.stdout)["output"]["structuredContent"]["city"] == "Paris"
    body = json.loads(refused.stdout)
    assert body["sent"] is False
    error = body["arguments"]["rejection"]
    assert error["schema"] == "https://example.com/schemas/tools/create_refund.json"
    assert error["violations"][0]["pointer"] == "/order_id"


@pytest.mark.slow
def test_call_repairs_only_when_asked() -> None:
    broken = "{'city': 'Paris',}"
    assert run("call", "get_weather", broken, *DESK).returncode == 1
    repaired = run("call", "get_weather", broken, "--tolerant", "--json", *DESK)
    assert repaired.returncode == 0, repaired.stdout
    assert json.loads(repaired.stdout)["arguments"]["outcome"] == "repaired"


@pytest.mark.slow
def test_a_server_that_cannot_start_exits_2(tmp_path: Path) -> None:
    result = run("tools", "--", str(tmp_path / "no-such-server"))
    assert result.returncode == 2
    assert "error: MCP server no-such-server" in result.stderr


@pytest.mark.slow
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


# --- a server that cannot be used: one line, what happened and what to pass ---------------------


@contextlib.contextmanager
def serving_http(*args: str) -> Iterator[str]:
    """``schemawire serve --http --port 0`` with ``args``, as a process: its URL, read from what
    it announces on stderr (within 60 s); stopped at the end."""
    command = [SCHEMAWIRE, "serve", str(SUPPORT_DESK), "--http", "--port", "0", *args]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        yield _announced(process)
    finally:
        process.terminate()
        process.wait(timeout=30)
        assert process.stderr is not None
        process.stderr.close()


def _announced(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], deadline - time.monotonic())
        line = process.stderr.readline() if ready else ""
        found = re.search(r"serving MCP at (http://\S+)", line)
        if found:
            return found.group(1)
        if not line and process.poll() is not None:
            break
    raise AssertionError("the server did not say where it listens")


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: MCP server ")
    assert "Group" not in line
    assert "Traceback" not in line
    return line


@pytest.mark.slow
def test_a_server_that_wants_a_token_is_http_401_and_says_to_pass_it() -> None:
    with serving_http("--token", "s3cret") as url:
        listed = one_error_line(run("tools", "--url", url))
        called = one_error_line(run("call", "get_weather", '{"city": "Paris"}', "--url", url))
        refused = one_error_line(run("tools", "--url", url, "--token", "guess"))
        wrong_path = one_error_line(run("tools", "--url", url[: -len("/mcp")], "--token", "s3cret"))
        fine = run("tools", "--json", "--url", url, "--token", "s3cret")
    for line in (listed, called):
        assert "HTTP 401" in line
        assert "--token" in line
        assert "--header" in line
    assert "HTTP 401" in refused
    assert "HTTP 404" in wrong_path
    assert "--url" in wrong_path
    assert fine.returncode == 0, fine.stderr
    gone = one_error_line(run("tools", "--url", url))
    assert "connection refused" in gone


@pytest.mark.slow
def test_a_typo_in_serve_tools_is_the_servers_own_line(tmp_path: Path) -> None:
    desk = tmp_path / "desk"
    shutil.copytree(SUPPORT_DESK, desk)
    config = desk / "schemawire.toml"
    typo = config.read_text().replace(
        "implementations:create_refund", "implementations:create_refnd"
    )
    config.write_text(typo)
    line = one_error_line(run("tools", "--", SCHEMAWIRE, "serve", str(desk)))
    assert "exited during start-up" in line
    assert "/serve/tools/create_refund" in line  # the server's own reason, with its pointer
    assert "create_refnd" in line

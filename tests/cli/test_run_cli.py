"""``schemawire demo`` and ``schemawire run``: the walkthrough, and the loop on the command line."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.responses import JSONResponse, Response

from schemawire.trace import read_trace, trace_path
from tests.cli.test_cli import SUPPORT_DESK, invoke
from tests.helpers import EXAMPLES
from tests.host.test_models import provider

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
DEMO_SCRIPT = Path(__file__).parents[2] / "src" / "schemawire" / "host" / "demo.json"


def run_script(script: Path) -> tuple[str, ...]:
    """``schemawire run`` with the scripted model ``script`` over the support desk's tools."""
    return ("run", "-m", f"script:{script}", "--repo", str(SUPPORT_DESK))


def demo_responses() -> list[dict[str, Any]]:
    """The model responses the demo's script holds."""
    responses: list[dict[str, Any]] = json.loads(DEMO_SCRIPT.read_text(encoding="utf-8"))[
        "responses"
    ]
    return responses


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCHEMAWIRE, *args], capture_output=True, text=True, timeout=60, check=False, cwd=cwd
    )


@pytest.mark.slow
def test_demo_walks_through_the_articles_example(tmp_path: Path) -> None:
    trace = tmp_path / "demo.jsonl"
    result = run("demo", "--trace", str(trace), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for expected in [
        "mcp tools/list",  # the host lists the server's tools
        "OPTIONAL_TO_NULLABLE",  # the loss report of the strict projection
        'calls get_weather({"city": "上海", "unit": "celsius"})',  # a JSON string, read
        "gate arguments accepted get_weather",
        "mcp tools/call get_weather",
        "gate results accepted get_weather",
        "answer: 上海今天 18°C，晴。",
        "gate arguments rejected get_weather  arguments_invalid: /unit must be one of",
        "answer: 上海現在 18°C，約 291 K，晴。",
    ]:
        assert expected in out, expected
    hops = list(read_trace(trace))
    rejected = [h for h in hops if h.verdict and h.verdict["outcome"] == "rejected"]
    assert len(rejected) == 1
    calls = [h for h in hops if h.protocol == "mcp" and h.payload.get("method") == "tools/call"]
    assert len(calls) == 2  # the refused call never reached the server
    # It ends by saying how to see the trace it wrote on the local page, as it was typed.
    assert out.rstrip().splitlines()[-1] == (
        f"see every hop: {SCHEMAWIRE} ui --traces {trace.parent} --open"
    )


def script_file(tmp_path: Path, responses: list[dict[str, Any]]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"api": "openai.chat", "responses": responses}), encoding="utf-8")
    return path


@pytest.mark.slow
def test_run_with_a_script_and_the_repositorys_functions(tmp_path: Path) -> None:
    demo = demo_responses()
    script = script_file(tmp_path, demo[:2])
    result = run(
        *run_script(script),
        "上海今天多少度？",
        "--json",
        "--trace",
        str(tmp_path / "t.jsonl"),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["answer"] == "上海今天 18°C，晴。"
    ((call),) = body["calls"]
    assert [g["outcome"] for g in call["gates"]] == ["accepted", "accepted"]
    assert (tmp_path / "t.jsonl").exists()


@pytest.mark.slow
def test_run_exits_1_without_an_answer(tmp_path: Path) -> None:
    demo = demo_responses()
    script = script_file(tmp_path, [demo[0], demo[0]])
    result = run(
        *run_script(script),
        "q",
        "--max-turns",
        "2",
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert "no answer: turn_limit" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "-m", "openai:x"], "give the user's input"),
        (["run", "q"], "give --model"),
        (["run", "-m", "openai:x", "q", "cmd"], "add --mcp"),
        (["run", "-m", "openai:x", "--mcp", "q"], "--mcp needs"),
        (["run", "-m", "wat:x", "q"], "unknown provider"),
    ],
)
def test_run_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.stderr


# --- one id per run, its trace, and values printed as JSON ---------------------------------------

REFUND = EXAMPLES / "refund"
REFUND_FLOW = REFUND / "flows" / "refund.json"
REQUEST = "I was charged twice for order A-1042; please refund the 20."
STATE = {"intent": "refund", "order_id": "A-1042", "refund_id": "R-2001", "amount": 20.0}


def run_json(*args: str, cwd: Path) -> Any:
    result = run(*args, "--json", cwd=cwd)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


@pytest.mark.slow
def test_run_flow_prints_its_id_state_and_trace_and_they_agree(tmp_path: Path) -> None:
    result = run("run", "--flow", str(REFUND_FLOW), REQUEST, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    (done,) = [line for line in lines if line.startswith("done run ")]
    run_id = done.removeprefix("done run ").split(":")[0]
    assert f"state: {json.dumps(STATE, separators=(',', ':'))}" in lines
    assert f"trace: .schemawire/traces/{run_id}.jsonl" in lines
    assert "handoff accepted triage_to_billing  → confident refund" in result.stdout
    assert "handoff handoff" not in result.stdout
    hops = list(read_trace(tmp_path / ".schemawire" / "traces" / f"{run_id}.jsonl"))
    assert {hop.run_id for hop in hops} == {run_id}
    (listed,) = run_json("runs", "list", cwd=tmp_path)
    assert (listed["run_id"], listed["status"]) == (run_id, "done")


@pytest.mark.slow
def test_each_flow_run_has_a_trace_of_its_own(tmp_path: Path) -> None:
    first = run_json("run", "--flow", str(REFUND_FLOW), REQUEST, cwd=tmp_path)
    second = run_json("run", "--flow", str(REFUND_FLOW), REQUEST, cwd=tmp_path)
    assert first["run_id"] != second["run_id"]
    for body in (first, second):
        assert body["trace"] == f".schemawire/traces/{body['run_id']}.jsonl"
        hops = list(read_trace(tmp_path / body["trace"]))
        assert {hop.run_id for hop in hops} == {body["run_id"]}
        assert body["state"] == STATE


@pytest.mark.slow
def test_run_json_names_its_run_the_hops_and_the_file(tmp_path: Path) -> None:
    demo = demo_responses()
    script = script_file(tmp_path, demo[:2])
    body = run_json(*run_script(script), "q", cwd=tmp_path)
    assert body["trace"] == f".schemawire/traces/{body['run_id']}.jsonl"
    assert {hop.run_id for hop in read_trace(tmp_path / body["trace"])} == {body["run_id"]}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_runs_show_takes_the_start_of_an_id_and_prints_json_values(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = (
        f"sqlite:{tmp_path / 'runs.db'}"
        if kind == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    body = run_json("run", "--flow", str(REFUND_FLOW), REQUEST, "--store", store, cwd=tmp_path)
    short = body["run_id"][:6]
    shown = run("runs", "show", short, "--store", store, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"{body['run_id']} refund: done, step 2"
    states = {line.split(":")[0]: json.loads(line.split(": ", 1)[1]) for line in lines[1:4]}
    assert states == {
        "  step 0 → triage": {},
        "  step 1 → billing": {"intent": "refund", "order_id": "A-1042"},
        "  step 2 → end": STATE,
    }
    if kind == "sqlite":  # key order kept (JSONB keeps its own order)
        assert f"  step 2 → end: {json.dumps(STATE, separators=(',', ':'))}" in lines
    assert not any("None" in line or "'" in line for line in lines)
    assert f"trace: .schemawire/traces/{body['run_id']}.jsonl" in lines
    record = run_json("runs", "show", short, "--store", store, cwd=tmp_path)
    created = [checkpoint["created"] for checkpoint in record["checkpoints"]]
    assert created[0] == record["run"]["created"]
    assert created == sorted(created)
    assert created[-1] <= record["run"]["updated"]
    saved = [h.payload for h in read_trace(tmp_path / body["trace"]) if h.protocol == "checkpoint"]
    assert saved == record["checkpoints"][1:]  # the hops hold what the store wrote, times too


def test_runs_show_and_resume_name_the_runs_an_ambiguous_start_fits(tmp_path: Path) -> None:
    from schemawire.store import Checkpoint, SqliteStore

    store = SqliteStore(tmp_path / "runs.db")
    for run_id in ("abcd1111", "abcd2222"):
        store.create_run(run_id, "refund", Checkpoint(run_id, 0, {}, None, None, "triage", "q"))
    store.close()
    url = f"sqlite:{tmp_path / 'runs.db'}"
    for args in (["runs", "show", "abcd"], ["runs", "resume", "abcd", "--flow", str(REFUND_FLOW)]):
        result = invoke(*args, "--store", url)
        assert result.exit_code == 2
        assert "abcd2222, abcd1111" in result.stderr
    unknown = invoke("runs", "show", "ffff", "--store", url)
    assert unknown.exit_code == 2
    assert "no run has an id that starts with ffff" in unknown.stderr
    assert invoke("runs", "show", "abcd1", "--store", url).exit_code == 0


# --- runs that stop: the error, the run and its trace, and the exit code -------------------------


def refusing(status: int) -> Callable[[int, dict[str, Any]], Response]:
    def answer(attempt: int, body: dict[str, Any]) -> Response:
        return JSONResponse({"error": {"message": "no"}}, status, headers={"Retry-After": "0"})

    return answer


def closed_port() -> int:
    """A loopback port nothing listens on (a model that cannot be reached)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def run_async(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command in a subprocess while this test's event loop serves the model."""
    with anyio.fail_after(90):
        done = await anyio.run_process([SCHEMAWIRE, *args], cwd=cwd, check=False)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("status", [401, 503, None])
async def test_a_run_whose_model_fails_prints_the_error_and_its_trace(
    tmp_path: Path, status: int | None
) -> None:
    async with provider(refusing(status or 500)) as (url, _):
        base = f"{url}/v1" if status else f"http://127.0.0.1:{closed_port()}/v1"
        model = f"openai-compatible:{base}:m"
        text = await run_async("run", "-m", model, "--repo", str(SUPPORT_DESK), "q", cwd=tmp_path)
        quiet = ("run", "-m", model, "--repo", str(SUPPORT_DESK), "q", "--json")
        body = await run_async(*quiet, cwd=tmp_path) if status else None
    assert text.returncode == 2, text.stdout + text.stderr
    said = f"answered HTTP {status}" if status else "ConnectError"
    assert said in text.stderr
    lines = text.stderr.splitlines()
    (where,) = [line.removeprefix("trace: ") for line in lines if line.startswith("trace: ")]
    hops = list(read_trace(tmp_path / where))
    assert {hop.run_id for hop in hops} == {Path(where).stem}
    if body is None:
        return  # the JSON of an unreachable model is that of a refusing one; it waits longer
    assert body.returncode == 2
    stopped = json.loads(body.stdout)
    assert said in stopped["error"]
    assert stopped["trace"] == f".schemawire/traces/{stopped['run_id']}.jsonl"


def refusing_once() -> Callable[[int, dict[str, Any]], Response]:
    """A model that refuses the first request (401), then answers as billing's script."""
    script = json.loads((REFUND / "scripts" / "billing.json").read_text(encoding="utf-8"))

    def answer(attempt: int, body: dict[str, Any]) -> Response:
        if attempt == 1:
            return JSONResponse({"error": {"message": "bad key"}}, 401)
        return JSONResponse(script["responses"][attempt - 2])

    return answer


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_flow_whose_model_fails_stops_and_its_resume_command_goes_on(
    tmp_path: Path,
) -> None:
    flow = json.loads(REFUND_FLOW.read_text(encoding="utf-8"))
    flow["agents"]["triage"]["model"] = f"script:{REFUND / 'scripts' / 'triage.json'}"
    async with provider(refusing_once()) as (url, _):
        flow["agents"]["billing"]["model"] = f"openai-compatible:{url}/v1:m"
        live = tmp_path / "live.json"
        live.write_text(json.dumps(flow), encoding="utf-8")
        args = ("run", "--flow", str(live), "--repo", str(REFUND), REQUEST)
        stopped = await run_async(*args, cwd=tmp_path)
        assert stopped.returncode == 2, stopped.stdout + stopped.stderr
        assert "answered HTTP 401" in stopped.stderr
        (said,) = [line for line in stopped.stderr.splitlines() if "go on with:" in line]
        run_id = said.split()[1]
        command = f"schemawire runs resume {run_id} --flow {live} --repo {REFUND}"
        assert said == f"run {run_id} stopped; go on with: {command}"
        where = f".schemawire/traces/{run_id}.jsonl"
        assert f"trace: {where}" in stopped.stderr.splitlines()
        (failed,) = run_json("runs", "list", cwd=tmp_path)
        assert (failed["run_id"], failed["status"], failed["step"]) == (run_id, "failed", 1)
        assert "answered HTTP 401" in failed["error"]
        before = len(list(read_trace(tmp_path / where)))
        resumed = await run_async(*shlex.split(command)[1:], "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    body = json.loads(resumed.stdout)
    assert (body["run_id"], body["status"], body["steps"], body["trace"]) == (
        run_id,
        "done",
        ["billing"],
        where,
    )
    again = run_json("runs", "resume", run_id[:6], "--flow", str(REFUND_FLOW), cwd=tmp_path)
    assert (again["run_id"], again["status"], again["steps"]) == (run_id, "done", [])
    hops = list(read_trace(tmp_path / where))
    assert len(hops) > before
    assert {hop.run_id for hop in hops} == {run_id}
    assert [hop.seq for hop in hops] == list(range(1, len(hops) + 1))


def test_the_hop_printer_shows_values_as_json() -> None:
    from io import StringIO

    from rich.console import Console

    from schemawire.cli._hops import HopPrinter
    from schemawire.types import Hop

    refused = {"code": "arguments_invalid", "violations": [{"pointer": "/unit", "message": "no"}]}
    hops = [
        Hop(
            "r",
            1,
            0.0,
            "agent:triage",
            "host",
            "handoff",
            "check",
            {"handoff": {}, "route": "confident refund"},
            {"gate": "handoff", "outcome": "accepted", "tool": "triage_to_billing"},
        ),
        Hop(
            "r",
            2,
            0.0,
            "host",
            "gate",
            "gate",
            "check",
            {},
            {"gate": "arguments", "outcome": "rejected", "tool": "t", "rejection": refused},
        ),
        Hop(
            "r",
            3,
            0.0,
            "store",
            "host",
            "checkpoint",
            "receive",
            {"step": 1, "node": "billing", "state": {"a": None, "b": True, "c": [1.5, "é"]}},
        ),
        Hop(
            "r",
            4,
            0.0,
            "host",
            "store",
            "checkpoint",
            "send",
            {"step": 2, "node": None, "state": {}},
        ),
        Hop(
            "r",
            5,
            0.0,
            "host",
            "mcp:x",
            "mcp",
            "send",
            {"method": "tools/call", "params": {"name": "get", "arguments": {"x": None}}},
        ),
    ]
    out = StringIO()
    printer = HopPrinter(Console(file=out, width=200, highlight=False, soft_wrap=True))
    for hop in hops:
        printer(hop)
    assert out.getvalue().splitlines() == [
        "  1 agent:triage → host  handoff accepted triage_to_billing  → confident refund",
        "  2 host → gate  gate arguments rejected t  arguments_invalid: /unit no",
        "  3 store → host  checkpoint resumed at step 1, next billing: "
        '{"a":null,"b":true,"c":[1.5,"é"]}',
        "  4 host → store  checkpoint step 2 saved, next end: {}",
        '  5 host → mcp:x  mcp tools/call get {"x":null}',
    ]


@pytest.mark.slow
def test_a_flow_the_flow_fails_exits_1_with_its_trace(tmp_path: Path) -> None:
    flow = json.loads(REFUND_FLOW.read_text(encoding="utf-8"))
    flow["agents"]["triage"]["model"] = f"script:{REFUND / 'scripts' / 'triage_prose.json'}"
    flow["agents"]["billing"]["model"] = f"script:{REFUND / 'scripts' / 'billing.json'}"
    prose = tmp_path / "prose.json"
    prose.write_text(json.dumps(flow), encoding="utf-8")
    result = run("run", "--flow", str(prose), "--repo", str(REFUND), REQUEST, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    (failed,) = [line for line in result.stdout.splitlines() if line.startswith("failed run ")]
    run_id = failed.removeprefix("failed run ").split(":")[0]
    assert f"trace: .schemawire/traces/{run_id}.jsonl" in result.stdout.splitlines()


@pytest.mark.slow
def test_the_trace_path_host_md_gives_is_where_run_and_run_flow_write(tmp_path: Path) -> None:
    page = (Path(__file__).parents[2] / "docs" / "host.md").read_text(encoding="utf-8")
    (claim,) = re.findall(r"`(\.schemawire/traces/<run id>\.jsonl)`", page)
    assert claim == str(trace_path("<run id>"))
    demo = demo_responses()
    script = script_file(tmp_path, demo[:2])
    args = (*run_script(script), "q")
    single = run_json(*args, cwd=tmp_path)
    flow = run_json("run", "--flow", str(REFUND_FLOW), REQUEST, cwd=tmp_path)
    for body in (single, flow):
        assert body["trace"] == claim.replace("<run id>", body["run_id"])


@pytest.mark.slow
def test_a_flow_agent_whose_provider_key_is_missing_stops_it_before_it_starts(
    tmp_path: Path,
) -> None:
    flow = json.loads(REFUND_FLOW.read_text(encoding="utf-8"))
    flow["agents"]["triage"]["model"] = f"script:{REFUND / 'scripts' / 'triage.json'}"
    flow["agents"]["billing"]["model"] = "anthropic:claude-sonnet-4-5"  # runs second
    keyless = tmp_path / "keyless.json"
    keyless.write_text(json.dumps(flow), encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    result = subprocess.run(
        [SCHEMAWIRE, "run", "--flow", str(keyless), "--repo", str(REFUND), REQUEST],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
        env=environment,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert run_json("runs", "list", cwd=tmp_path) == []  # nothing ran: triage's turn included

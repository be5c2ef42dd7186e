"""``schemawire eval``: the table, JSON and JUnit, exit codes 0/1/2, and --from-trace."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from schemawire.evals import RecordedCase
from tests.evals.cases import (
    CASES,
    FLOW,
    REFUND,
    REQUEST,
    WriteCase,
    chat,
    flow_case,
    invoke,
)

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))


def test_help_has_examples() -> None:
    result = invoke("eval", "--help")
    assert result.exit_code == 0
    assert "Examples" in result.output
    assert "schemawire eval --from-trace" in result.output


def test_the_example_cases_pass_and_exit_0(tmp_path: Path) -> None:
    junit = tmp_path / "reports" / "evals.xml"
    result = invoke("eval", str(CASES), "--junit", str(junit))
    assert result.exit_code == 0, result.output
    for name in ("refund happy path", "unsure triage ends the run", "passed"):
        assert name in result.output
    assert "3 passed, 0 failed, 0 could not run" in result.output
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert suite.get("tests") == "3"


def test_without_paths_it_runs_the_repositorys_evals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REFUND / "flows")
    result = invoke("eval", "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert (body["ok"], body["passed"], len(body["cases"])) == (True, 3, 3)


def test_a_failing_case_exits_1_and_says_where(write_case: WriteCase) -> None:
    path = write_case(flow_case(status="failed"))
    result = invoke("eval", str(path), str(CASES / "happy_path.json"))
    assert result.exit_code == 1
    assert "#/expect/status: expected status `failed`, got `done`" in result.output
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if '"status"' in text)
    assert f"{path}:{line}:" in result.output
    assert "1 passed, 1 failed, 0 could not run" in result.output


def test_json_lists_each_failure_with_its_pointer_and_line(write_case: WriteCase) -> None:
    result = invoke("eval", str(write_case(flow_case(route="end"))), "--json")
    assert result.exit_code == 1
    (case,) = json.loads(result.stdout)["cases"]
    (failure,) = case["failures"]
    assert (failure["pointer"], failure["line"] > 1) == ("/expect/route", True)
    assert case["outcome"]["route"] == "billing"


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "nowhere/case.json"],
        ["eval", "--out", "x.json"],
        ["eval", str(CASES), "--from-trace", "t.jsonl"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    assert invoke(*args).exit_code == 2


def test_an_unusable_case_exits_2_even_beside_a_failing_one(write_case: WriteCase) -> None:
    unusable = write_case({**flow_case(status="done"), "tools": ["lookup_order"]}, "u.json")
    failing = write_case(flow_case(status="failed"), "f.json")
    result = invoke("eval", str(unusable), str(failing))
    assert result.exit_code == 2
    assert '/tools: "tools" applies to a case without a flow' in result.output
    assert "0 passed, 1 failed, 1 could not run" in result.output


# --- --from-trace -------------------------------------------------------------------------------


def schemawire(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCHEMAWIRE, *args], capture_output=True, text=True, timeout=60, check=False, cwd=cwd
    )


@pytest.mark.slow
def test_a_recorded_flow_run_becomes_a_case_that_passes(tmp_path: Path) -> None:
    trace = tmp_path / "refund.jsonl"
    run = schemawire(
        "run",
        "--flow",
        str(FLOW),
        REQUEST,
        "--store",
        "sqlite:runs.db",
        "--trace",
        str(trace),
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = tmp_path / "evals" / "recorded.json"
    written = invoke("eval", "--from-trace", str(trace), "--flow", str(FLOW), "--out", str(out))
    assert written.exit_code == 0, written.output
    case = json.loads(out.read_text())
    assert "models" not in case  # each agent's responses are its own script's
    assert case["flow"] == "flows/refund.json"
    assert case["input"] == REQUEST
    expect = case["expect"]
    assert (expect["status"], expect["steps"], expect["route"]) == (
        "done",
        ["triage", "billing"],
        "billing",
    )
    assert [c["tool"] for c in expect["calls"]] == ["lookup_order", "create_refund"]
    assert expect["state"]["equals"]["refund_id"] == "R-2001"
    replayed = invoke("eval", str(out))
    assert replayed.exit_code == 0, replayed.output
    again = invoke("eval", "--from-trace", str(trace), "--flow", str(FLOW), "--out", str(out))
    assert again.exit_code == 2  # it never overwrites a case


@pytest.mark.slow
def test_a_recorded_single_agent_run_is_replayed_from_its_responses(tmp_path: Path) -> None:
    calls = chat(None, ("lookup_order", {"order_id": "A-2001"}))
    answer = chat("A-2001 has shipped.")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"api": "openai.chat", "responses": [calls, answer]}))
    trace = tmp_path / "one.jsonl"
    run = schemawire(
        "run",
        "-m",
        f"script:{script}",
        "--repo",
        str(REFUND),
        "Where is A-2001?",
        "--trace",
        str(trace),
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    script.unlink()  # the case must not need it
    printed = invoke("eval", "--from-trace", str(trace), "--repo", str(REFUND))
    assert printed.exit_code == 0
    assert "note: the trace does not say which script" in printed.stderr
    case = json.loads(printed.stdout)
    assert case["model"]["responses"] == [calls, answer]
    assert case["expect"]["output"] == {"equals": "A-2001 has shipped."}
    out = tmp_path / "elsewhere" / "one.json"
    assert (
        invoke(
            "eval", "--from-trace", str(trace), "--repo", str(REFUND), "--out", str(out)
        ).exit_code
        == 0
    )
    assert not Path(json.loads(out.read_text())["repo"]).is_absolute()
    replayed = invoke("eval", str(out))
    assert replayed.exit_code == 0, replayed.output


def test_a_file_that_is_not_a_runs_trace_cannot_become_a_case(tmp_path: Path) -> None:
    trace = tmp_path / "empty.jsonl"
    trace.write_text("")
    result = invoke("eval", "--from-trace", str(trace))
    assert result.exit_code == 2
    assert "holds no user input" in result.output


@pytest.mark.parametrize("option", [["--json"], ["--junit", "evals.xml"]])
def test_from_trace_runs_no_case_so_json_and_junit_are_usage_errors(
    tmp_path: Path, option: list[str]
) -> None:
    trace = tmp_path / "run.jsonl"
    trace.write_text("")
    out = tmp_path / "case.json"
    result = invoke("eval", "--from-trace", str(trace), "--out", str(out), *option)
    assert result.exit_code == 2
    assert f"{option[0]}: not with --from-trace" in result.output
    assert not out.exists()
    assert not (tmp_path / "evals.xml").exists()


@pytest.mark.parametrize("to_file", [True, False], ids=["out", "stdout"])
def test_a_recorded_case_that_breaks_the_case_schema_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, to_file: bool
) -> None:
    import schemawire.evals

    trace = tmp_path / "run.jsonl"
    trace.write_text("")
    out = tmp_path / "evals" / "case.json"
    broken = {"input": "q", "model": "script:s.json", "expect": {"status": "maybe"}}
    monkeypatch.setattr(
        schemawire.evals, "case_from_trace", lambda *_, **__: RecordedCase(broken, out)
    )
    result = invoke("eval", "--from-trace", str(trace), *(["--out", str(out)] if to_file else []))
    assert result.exit_code == 2
    assert "/expect/status" in result.output
    assert "case.schema.json" in result.output
    assert not out.exists()
    assert '"input"' not in result.stdout

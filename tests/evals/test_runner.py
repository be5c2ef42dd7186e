"""Running cases: the example's cases pass, and each kind of failure says what and where."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from schemawire.errors import ConfigError
from schemawire.evals import CaseResult, run_case, run_cases
from tests.evals.cases import (
    CASES,
    REQUEST,
    WriteCase,
    chat,
    flow_case,
    flow_copy,
    invoke,
    script,
)


@pytest.mark.parametrize("path", sorted(CASES.glob("*.json")), ids=lambda p: p.stem)
def test_the_example_cases_pass(path: Any) -> None:
    result = run_case(path)
    assert result.status == "passed", [str(f) for f in result.failures]
    assert result.failures == []


def test_the_happy_path_is_what_the_flow_does() -> None:
    outcome = run_case(CASES / "happy_path.json").outcome
    assert outcome is not None
    assert (outcome.status, outcome.steps, outcome.route) == (
        "done",
        ["triage", "billing"],
        "billing",
    )
    assert [(c.tool, c.agent) for c in outcome.calls] == [
        ("lookup_order", "billing"),
        ("create_refund", "billing"),
    ]
    assert outcome.state["refund_id"] == "R-2001"


def test_a_refused_handoff_fails_the_run_before_any_route() -> None:
    outcome = run_case(CASES / "handoff_refused.json").outcome
    assert outcome is not None
    assert (outcome.status, outcome.route, outcome.handoff, outcome.steps) == (
        "failed",
        None,
        "none",
        ["triage"],
    )
    assert "output_invalid after 3 turns" in (outcome.error or "")


def failures(write_case: WriteCase, document: dict[str, Any]) -> dict[str, str]:
    """Each failing expectation's first failure."""
    result = run_case(write_case(document))
    assert result.status == "failed"
    found: dict[str, str] = {}
    for failure in result.failures:
        found.setdefault(failure.pointer, failure.message)
    return found


@pytest.mark.parametrize(
    ("expect", "pointer", "message"),
    [
        ({"status": "failed"}, "/expect/status", "expected status `failed`, got `done`"),
        (
            {"error": "unrouted"},
            "/expect/error",
            "expected an error containing `unrouted`, but the run has none (status `done`)",
        ),
        ({"steps": ["triage"]}, "/expect/steps", "expected steps `triage`, got `triage → billing`"),
        ({"route": "end"}, "/expect/route", "expected route `end`, got route `billing`"),
        ({"route": None}, "/expect/route", "expected no routed handoff, got route `billing`"),
        (
            {"output": {"contains": "R-9"}},
            "/expect/output/contains",
            "expected the output to contain `R-9`, got `Refund R-2001 of 20.00 for order A-1042 is "
            "filed and pending approval.`",
        ),
        ({"output": {"equals": "done"}}, "/expect/output/equals", "expected the output `done`"),
        (
            {"output": {"schema": "handoffs/triage_to_billing"}},
            "/expect/output/schema",
            "the output breaks triage_to_billing: / must be of type object",
        ),
        (
            {"state": {"fields": {"refund_id": "R-2002"}}},
            "/expect/state/fields/refund_id",
            "the state's `refund_id`: expected `R-2002`, got `R-2001`",
        ),
        (
            {"state": {"fields": {"amount": "20"}}},
            "/expect/state/fields/amount",
            "the state's `amount`: expected `20`, got `20.0`",
        ),
        (
            {"state": {"fields": {"/reason": "duplicate"}}},
            "/expect/state/fields/~1reason",
            "the state has no `/reason`",
        ),
        (
            {"state": {"absent": ["reason", "refund_id"]}},
            "/expect/state/absent/1",
            "expected the state without `refund_id`, got `R-2001`",
        ),
        (
            {"state": {"schema": "handoffs/triage_to_billing"}},
            "/expect/state/schema",
            "the state breaks triage_to_billing: /confidence missing required property",
        ),
    ],
)
def test_each_failure_names_its_expectation(
    write_case: WriteCase, expect: dict[str, Any], pointer: str, message: str
) -> None:
    found = failures(write_case, flow_case(**expect))
    assert list(found) == [pointer]
    assert found[pointer].startswith(message), found[pointer]


LOOKUP = {"tool": "lookup_order", "arguments": {"order_id": "A-1042"}}
REFUND_CALL = {"tool": "create_refund", "arguments": {"order_id": "A-1042", "amount": 20}}


@pytest.mark.parametrize(
    ("calls", "order", "expected"),
    [
        ([LOOKUP, REFUND_CALL], "exact", {}),
        (
            [REFUND_CALL, LOOKUP],
            "exact",
            {
                "/expect/calls/0/tool": "expected call 1 to be `create_refund`, got lookup_order",
                "/expect/calls/1/tool": "expected call 2 to be `lookup_order`, got create_refund",
            },
        ),
        (
            [LOOKUP, {**REFUND_CALL, "arguments": {"amount": 25}}],
            "exact",
            {
                "/expect/calls/1/arguments/amount": (
                    "call 2 (create_refund): argument `/amount`: expected `25`, got `20.0`"
                )
            },
        ),
        (
            [LOOKUP, {**REFUND_CALL, "arguments": {"note": "x"}}],
            "exact",
            {
                "/expect/calls/1/arguments/note": (
                    "call 2 (create_refund): argument `/note` is missing (expected `x`)"
                )
            },
        ),
        (
            [{**LOOKUP, "agent": "triage"}, REFUND_CALL],
            "exact",
            {
                "/expect/calls/0/agent": (
                    "call 1 (lookup_order): expected it from agent `triage`, "
                    "it came from agent `billing`"
                )
            },
        ),
        (
            [LOOKUP],
            "exact",
            {"/expect/calls": "expected 1 call, the run made 2; the calls after: create_refund"},
        ),
        (
            [LOOKUP, REFUND_CALL, LOOKUP],
            "exact",
            {"/expect/calls/2": "expected call 3 to be `lookup_order`, but the run made 2 calls"},
        ),
        ([REFUND_CALL, LOOKUP], "set", {}),
        (
            [REFUND_CALL],
            "set",
            {"/expect/calls": "the run made calls the case does not expect: lookup_order"},
        ),
        ([REFUND_CALL], "includes", {}),
        (
            [REFUND_CALL, REFUND_CALL],
            "includes",
            {"/expect/calls/1": "no call of the run matches `create_refund`"},
        ),
        ([], "exact", {"/expect/calls": "expected 0 calls, the run made 2"}),
    ],
)
def test_calls_are_matched_in_order_as_a_set_or_as_included(
    write_case: WriteCase, calls: list[Any], order: str, expected: dict[str, str]
) -> None:
    result = run_case(write_case(flow_case(calls=calls, calls_order=order)))
    found = {failure.pointer: failure.message for failure in result.failures}
    assert list(found) == list(expected)
    for pointer, start in expected.items():
        assert found[pointer].startswith(start), found[pointer]


def test_a_set_finds_a_matching_where_a_greedy_pick_would_not(write_case: WriteCase) -> None:
    # The first expected call fits both calls; taking the first call for it would leave the
    # second expected call (which fits only the first call) without one.
    calls = [
        {"tool": "lookup_order"},
        {"tool": "lookup_order", "arguments": {"order_id": "A-1042"}},
    ]
    both = chat(
        None, ("lookup_order", {"order_id": "A-1042"}), ("lookup_order", {"order_id": "A-2001"})
    )
    single = {
        "input": "q",
        "tools": ["lookup_order"],
        "model": script(both, chat("ok")),
        "expect": {"calls": calls, "calls_order": "set"},
    }
    assert run_case(write_case(single)).failures == []


def test_a_failure_knows_its_line_in_the_case_file(write_case: WriteCase) -> None:
    path = write_case(flow_case(status="failed"))
    (failure,) = run_case(path).failures
    line = path.read_text().splitlines()[failure.line - 1]
    assert line[failure.column - 1 :].startswith('"status"')


# --- one agent ----------------------------------------------------------------------------------


def test_a_case_without_a_flow_is_one_agent_with_the_repositorys_tools(
    write_case: WriteCase,
) -> None:
    case = {
        "input": "Where is order A-2001?",
        "tools": ["lookup_order"],
        "instructions": "Answer in one line.",
        "model": script(
            chat(None, ("lookup_order", {"order_id": "A-2001"})),
            chat('{"order_id": "A-2001", "status": "shipped"}'),
        ),
        "expect": {
            "status": "done",
            "calls": [{"tool": "lookup_order"}],
            "output": {"fields": {"status": "shipped"}},
        },
    }
    result = run_case(write_case(case))
    assert result.status == "passed", [str(f) for f in result.failures]
    assert result.outcome is not None
    assert result.outcome.steps == []


def test_one_agent_that_never_answers_fails_with_the_reason(write_case: WriteCase) -> None:
    call = chat(None, ("lookup_order", {"order_id": "A-2001"}))
    case = {
        "input": "q",
        "model": script(call, call),
        "max_turns": 2,
        "expect": {"status": "failed", "error": "turn_limit"},
    }
    assert run_case(write_case(case)).status == "passed"


def test_a_model_that_cannot_answer_fails_the_run_not_the_eval(write_case: WriteCase) -> None:
    case = {
        **flow_case(status="done"),
        "models": {"billing": script(chat(None, ("lookup_order", {"order_id": "A-1042"})))},
    }
    found = failures(write_case, case)
    assert found["/expect/status"].startswith(
        "expected status `done`, got `failed`: ModelError: the script has 1 responses"
    )


def test_a_case_model_stands_in_for_agents_without_one(
    write_case: WriteCase, tmp_path: Path
) -> None:
    flow = flow_copy(tmp_path, lambda flow: flow["agents"]["billing"].pop("model"))
    case = {
        **flow_case(status="done", steps=["triage", "billing"]),
        "flow": str(flow),
        "model": "script:scripts/billing.json",
    }
    result = run_case(write_case(case))
    assert result.status == "passed", [str(f) for f in result.failures]
    assert result.outcome is not None
    assert [(c.tool, c.agent) for c in result.outcome.calls] == [
        ("lookup_order", "billing"),
        ("create_refund", "billing"),
    ]
    assert result.outcome.state["refund_id"] == "R-2001"


def test_without_a_model_for_an_agent_the_case_cannot_run(
    write_case: WriteCase, tmp_path: Path
) -> None:
    flow = flow_copy(tmp_path, lambda flow: flow["agents"]["billing"].pop("model"))
    with pytest.raises(ConfigError, match="agent billing names no model"):
        run_case(write_case({**flow_case(status="done"), "flow": str(flow)}))


# --- cases that cannot run ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "pointer", "message"),
    [
        ({"flow": "flows/nowhere.json"}, "/flow", "no flow file"),
        ({"models": {"triage": "script:scripts/nowhere.json"}}, "/models/triage", "no script"),
        (
            {"models": {"auditor": "script:scripts/triage.json"}},
            "/models/auditor",
            'flow refund has no agent "auditor"',
        ),
        ({"models": {"triage": "telepathy:x"}}, "/models/triage", "unknown provider"),
        (
            {"expect": {"calls": [{"tool": "teleport"}]}},
            "/expect/calls/0/tool",
            'the run offers no tool "teleport"',
        ),
        (
            {"expect": {"calls": [{"tool": "lookup_order", "agent": "x"}]}},
            "/expect/calls/0/agent",
            'flow refund has no agent "x"',
        ),
        (
            {"expect": {"steps": ["triage", "shipping"]}},
            "/expect/steps/1",
            'flow refund has no agent "shipping"',
        ),
        ({"expect": {"route": "shipping"}}, "/expect/route", "flow refund has no agent"),
        (
            {"expect": {"output": {"schema": "tools/nothing"}}},
            "/expect/output/schema",
            'no schema "tools/nothing"',
        ),
    ],
)
def test_a_case_naming_what_is_not_there_cannot_run(
    write_case: WriteCase, change: dict[str, Any], pointer: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        run_case(write_case({**flow_case(status="done"), **change}))
    assert caught.value.pointer == pointer
    assert message in caught.value.message


def test_a_flow_naming_a_missing_schema_makes_the_case_unusable_not_failed(
    write_case: WriteCase, tmp_path: Path
) -> None:
    flow = flow_copy(tmp_path, lambda flow: flow.update(state="state/nowhere"))
    path = write_case({**flow_case(status="failed"), "flow": str(flow)})
    with pytest.raises(ConfigError) as caught:
        run_case(path)
    assert caught.value.pointer == "/flow"
    assert "flow refund cannot run" in caught.value.message
    assert "state/nowhere" in caught.value.message
    (result,) = run_cases([path])
    assert (result.status, result.outcome) == ("error", None)
    assert "state/nowhere" in result.summary
    assert invoke("eval", str(path)).exit_code == 2


def test_a_single_agent_case_needs_a_model_and_known_tools(write_case: WriteCase) -> None:
    with pytest.raises(ConfigError, match='needs a "model"'):
        run_case(write_case({"input": "q", "expect": {"status": "done"}}))
    with pytest.raises(ConfigError) as caught:
        run_case(
            write_case(
                {
                    "input": "q",
                    "model": script(chat("hi")),
                    "tools": ["a"],
                    "expect": {"status": "done"},
                }
            )
        )
    assert caught.value.pointer == "/tools/0"


def test_run_cases_reports_an_unusable_case_and_runs_the_others(write_case: WriteCase) -> None:
    bad = write_case({**flow_case(status="done"), "flow": "flows/x.json"}, "bad.json")
    results = run_cases([bad, CASES / "happy_path.json", bad.with_name("missing.json")])
    assert [r.status for r in results] == ["error", "passed", "error"]
    assert "/flow: no flow file" in (results[0].error or "")
    assert "missing.json" in (results[2].error or "")
    assert isinstance(results[1], CaseResult)
    assert results[1].to_json()["outcome"]["route"] == "billing"


def test_the_request_reaches_the_first_agent(write_case: WriteCase) -> None:
    outcome = run_case(write_case(flow_case(status="done"))).outcome
    assert outcome is not None
    assert outcome.input == REQUEST


def test_a_repo_that_is_not_there_or_has_no_functions_cannot_run(
    write_case: WriteCase, tmp_path: Any
) -> None:
    single = {"input": "q", "model": script(chat("hi")), "expect": {"status": "done"}}
    with pytest.raises(ConfigError, match="no folder") as caught:
        run_case(write_case({**single, "repo": "nowhere"}))
    assert caught.value.pointer == "/repo"
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "schemawire.toml").write_text("")
    with pytest.raises(ConfigError, match="names no tool functions") as caught:
        run_case(write_case({**single, "repo": str(bare)}))
    assert caught.value.pointer == "/repo"

"""The result gate: what the model reads is valid, free of secrets, within budget, and a failure
or a mismatch is an error the model can read, never an exception."""

from __future__ import annotations

import functools
from typing import Any

import orjson
import pytest

from schemawire import Repository
from schemawire.gates import ResultGate, ResultOptions
from schemawire.types import ToolResult, ToolSpec
from tests.conftest import EXAMPLES

REFUND = {"refund_id": "R-2001", "order_id": "A-1042", "amount": 25.5, "status": "pending"}


@functools.cache
def refund_gate(**options: Any) -> ResultGate:
    repository = Repository.load(EXAMPLES / "support-desk")
    return ResultGate.from_repository(repository, "create_refund", ResultOptions(**options))


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def test_a_valid_structured_result_passes_as_it_is() -> None:
    verdict = refund_gate().check(REFUND, call_id="c1")
    assert verdict.accepted
    assert verdict.outcome == "accepted"
    assert verdict.conforms is True
    assert verdict.value == ToolResult("c1", REFUND, False, REFUND)


def test_an_mcp_call_tool_result_is_read_as_mcp_sends_it() -> None:
    result = {"content": [text_block(orjson.dumps(REFUND).decode())],
              "structuredContent": REFUND, "isError": False}  # fmt: skip
    verdict = refund_gate().check(result)
    assert verdict.accepted
    assert verdict.value.structured == REFUND


def test_a_result_that_breaks_the_output_schema_becomes_an_error_the_model_reads() -> None:
    verdict = refund_gate().check({**REFUND, "status": "done", "amount": -1}, call_id="c2")
    assert not verdict.accepted
    assert verdict.rejection is not None
    result = verdict.value
    assert result.call_id == "c2"
    assert result.is_error
    assert result.structured is None
    error = result.content["error"]
    assert error["code"] == "result_invalid"
    assert error["schema"] == "https://example.com/schemas/tools/create_refund.output.json"
    assert {(v["pointer"], v["keyword"]) for v in error["violations"]} == {
        ("/status", "enum"), ("/amount", "exclusiveMinimum")}  # fmt: skip
    assert "do not rely on it" in error["hint"]


def test_json_inside_text_is_parsed_and_checked_when_the_tool_has_an_output_schema() -> None:
    good = refund_gate().check({"content": [text_block(orjson.dumps(REFUND).decode())]})
    assert good.accepted
    assert good.value.structured == REFUND
    bad = refund_gate().check({"content": [text_block('{"refund_id": "nope"}')]})
    assert bad.rejection is not None
    assert bad.rejection.code == "result_invalid"
    prose = refund_gate().check({"content": [text_block("Refund created.")]})
    assert prose.rejection is not None
    assert prose.rejection.violations[0].message.startswith("the tool has an output schema")


def test_a_tool_without_an_output_schema_passes_text_through() -> None:
    gate = ResultGate(ToolSpec("echo", {"type": "object"}))
    verdict = gate.check({"content": [text_block("hello")]})
    assert verdict.accepted
    assert verdict.conforms is None
    assert verdict.value.content == [text_block("hello")]


TRACEBACK = """Traceback (most recent call last):
  File "/srv/app/tools.py", line 12, in create_refund
    db.execute(query)
sqlite3.OperationalError: database is locked"""


@pytest.mark.parametrize(("failure", "line"), [
    (ValueError("amount must be positive\nat line 2 of the internals"),
     "ValueError: amount must be positive"),
    (KeyError("order"), "KeyError: 'order'"),
    ({"content": [text_block(TRACEBACK)], "isError": True},
     "sqlite3.OperationalError: database is locked"),
    (ToolResult("c", "first line\nsecond line", is_error=True), "first line"),
    (RuntimeError("connect to postgres://app:s3cr3tpass@db:5432 failed"),
     "RuntimeError: connect to postgres://app:[REDACTED:url_password]@db:5432 failed"),
])  # fmt: skip
def test_a_failure_is_one_line_with_a_stable_code_and_no_internals(failure: Any, line: str) -> None:
    verdict = refund_gate().check(failure)
    assert verdict.rejection is not None
    assert verdict.rejection.code == "tool_failed"
    assert verdict.value.is_error
    (violation,) = verdict.value.content["error"]["violations"]
    assert violation["message"] == line
    assert "Traceback" not in orjson.dumps(verdict.value.content).decode()


def test_a_failure_keeps_the_call_id_it_answers() -> None:
    verdict = refund_gate().check(KeyError("order"), call_id="call_7")
    assert verdict.value.call_id == "call_7"


SECRET_SCHEMA = {
    "type": "object",
    "properties": {
        "user": {"type": "string"},
        "session": {"type": "string", "x-redact": True},
        "pin": {"type": "integer", "writeOnly": True},
        "notes": {"type": "string"},
        "headers": {"type": "object"},
    },
    "required": ["user"],
}


def secret_gate(**options: Any) -> ResultGate:
    return ResultGate(ToolSpec("lookup", {"type": "object"}, SECRET_SCHEMA),
                      options=ResultOptions(**options))  # fmt: skip


def test_secrets_are_redacted_by_schema_mark_by_key_and_by_detector() -> None:
    result = {"user": "ada", "session": "abc", "pin": 1234,
              "notes": "use key sk-proj-FAKEFAKEFAKEFAKEFAKE1234 for staging",
              "headers": {"Authorization": "Basic YWRhOmxvdmVsYWNl", "Accept": "json"}}  # fmt: skip
    verdict = secret_gate().check(result)
    assert verdict.accepted
    assert verdict.outcome == "redacted"
    assert verdict.value.structured == {
        "user": "ada", "session": "[REDACTED:x-redact]", "pin": "[REDACTED:writeOnly]",
        "notes": "use key [REDACTED:openai_key] for staging",
        "headers": {"Authorization": "[REDACTED:authorization]", "Accept": "json"},
    }  # fmt: skip
    pointers = sorted(c.pointer for c in verdict.changes)
    assert pointers == ["/content/headers/Authorization", "/content/notes", "/content/pin",
                        "/content/session", "/structured/headers/Authorization",
                        "/structured/notes", "/structured/pin", "/structured/session"]  # fmt: skip
    assert verdict.conforms is False  # the pin is a string now: the verdict says so


def test_secrets_in_text_blocks_are_redacted_json_text_member_by_member() -> None:
    gate = ResultGate(ToolSpec("shell", {"type": "object"}))
    result = {"content": [text_block('{"password": "hunter22", "ok": true}'),
                          text_block("export GITHUB_TOKEN=ghp_" + "A1b2" * 9)]}  # fmt: skip
    verdict = gate.check(result)
    assert verdict.value.content == [
        text_block('{"password":"[REDACTED:password]","ok":true}'),
        text_block("export GITHUB_TOKEN=[REDACTED:github_token]"),
    ]
    assert [c.pointer for c in verdict.changes] == ["/content/0/text/password", "/content/1/text"]


def test_redaction_can_be_turned_off() -> None:
    verdict = secret_gate(redact=False).check({"user": "ada", "session": "abc"})
    assert verdict.value.structured == {"user": "ada", "session": "abc"}


def test_a_large_result_is_cut_to_the_budget_as_valid_json_keeping_required_members() -> None:
    rows = [{"id": i, "name": f"row {i}", "comment": "x" * 300} for i in range(400)]
    schema = {"type": "object", "required": ["count", "rows"],
              "properties": {"count": {"type": "integer"}, "rows": {"type": "array"},
                             "summary": {"type": "string"}}}  # fmt: skip
    gate = ResultGate(ToolSpec("rows", {"type": "object"}, schema),
                      options=ResultOptions(max_bytes=4000))  # fmt: skip
    result = {"count": 400, "rows": rows, "summary": "y" * 20_000}
    verdict = gate.check(result)
    structured = verdict.value.structured
    assert len(orjson.dumps(structured)) <= 4000
    assert structured["count"] == 400
    assert structured["rows"][-1].endswith("more items]")
    assert structured["summary"].endswith("of 20000 characters]")
    assert verdict.outcome == "truncated"
    assert verdict.conforms is True
    cut = {c.pointer: c.detail for c in verdict.changes if c.kind == "truncated"}
    assert "/structured/rows" in cut
    assert cut["/structured/rows"].startswith("array cut: kept ")
    assert result["summary"] == "y" * 20_000  # the tool's own value is left as it was


def test_a_cut_that_breaks_the_output_schema_is_reported_as_not_conforming() -> None:
    schema = {"type": "object", "properties": {"ids": {"type": "array",
              "items": {"type": "integer"}}}}  # fmt: skip
    gate = ResultGate(ToolSpec("ids", {"type": "object"}, schema),
                      options=ResultOptions(max_bytes=200))  # fmt: skip
    verdict = gate.check({"ids": list(range(1000))})
    assert verdict.accepted
    assert verdict.truncated
    assert verdict.conforms is False  # the "…more items" marker is not an integer


def test_a_text_result_over_budget_is_cut_with_a_marker() -> None:
    gate = ResultGate(ToolSpec("read_file", {"type": "object"}),
                      options=ResultOptions(max_bytes=100))  # fmt: skip
    verdict = gate.check({"content": [text_block("z" * 1000)]})
    (block,) = verdict.value.content
    assert len(orjson.dumps(block["text"])) <= 100
    assert block["text"].startswith("zzz")
    assert block["text"].endswith("of 1000 characters]")

"""The result gate: what the model reads is valid, free of secrets, within budget, and a failure
or a mismatch is an error the model can read, never an exception."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schemawire.gates
from schemawire import Repository
from schemawire._json import dumps
from schemawire.gates import (
    REJECTION_META,
    McpResult,
    ResultGate,
    ResultOptions,
    Verdict,
    rejection_meta,
)
from schemawire.gates._rejection import cut_rejection
from schemawire.schema.validator import compile_schema
from schemawire.types import ToolResult, ToolSpec
from tests.gates.secret_placements import PLACEMENTS, corpus_cases, leaked, look_alikes
from tests.helpers import EXAMPLES

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
    result = McpResult.from_json(
        {
            "content": [text_block(orjson.dumps(REFUND).decode())],
            "structuredContent": REFUND,
            "isError": False,
        }
    )
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
        ("/status", "enum"),
        ("/amount", "exclusiveMinimum"),
    }
    assert "do not rely on it" in error["hint"]


def test_json_inside_text_is_parsed_and_checked_when_the_tool_has_an_output_schema() -> None:
    good = refund_gate().check(McpResult([text_block(orjson.dumps(REFUND).decode())]))
    assert good.accepted
    assert good.value.structured == REFUND
    bad = refund_gate().check(McpResult([text_block('{"refund_id": "nope"}')]))
    assert bad.rejection is not None
    assert bad.rejection.code == "result_invalid"
    prose = refund_gate().check(McpResult([text_block("Refund created.")]))
    assert prose.rejection is not None
    assert prose.rejection.violations[0].message.startswith("the tool has an output schema")


def test_a_tool_without_an_output_schema_passes_text_through() -> None:
    gate = ResultGate(ToolSpec("echo", {"type": "object"}))
    verdict = gate.check(McpResult([text_block("hello")]))
    assert verdict.accepted
    assert verdict.conforms is None
    assert verdict.value.content == [text_block("hello")]


TRACEBACK = """Traceback (most recent call last):
  File "/srv/app/tools.py", line 12, in create_refund
    db.execute(query)
sqlite3.OperationalError: database is locked"""


@pytest.mark.parametrize(
    ("failure", "line"),
    [
        (
            ValueError("amount must be positive\nat line 2 of the internals"),
            "ValueError: amount must be positive",
        ),
        (KeyError("order"), "KeyError: 'order'"),
        (
            McpResult([text_block(TRACEBACK)], is_error=True),
            "sqlite3.OperationalError: database is locked",
        ),
        (ToolResult("c", "first line\nsecond line", is_error=True), "first line"),
        (
            RuntimeError("connect to postgres://app:s3cr3tpass@db:5432 failed"),
            "RuntimeError: connect to postgres://app:[REDACTED:url_password]@db:5432 failed",
        ),
    ],
)
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
    return ResultGate(
        ToolSpec("lookup", {"type": "object"}, SECRET_SCHEMA), options=ResultOptions(**options)
    )


def test_secrets_are_redacted_by_schema_mark_by_key_and_by_detector() -> None:
    result = {
        "user": "ada",
        "session": "abc",
        "pin": 1234,
        "notes": "use key sk-proj-FAKEFAKEFAKEFAKEFAKE1234 for staging",
        "headers": {"Authorization": "Basic YWRhOmxvdmVsYWNl", "Accept": "json"},
    }
    verdict = secret_gate().check(result)
    assert verdict.accepted
    assert verdict.outcome == "redacted"
    assert verdict.value.structured == {
        "user": "ada",
        "session": "[REDACTED:x-redact]",
        "pin": "[REDACTED:writeOnly]",
        "notes": "use key [REDACTED:openai_key] for staging",
        "headers": {"Authorization": "[REDACTED:authorization]", "Accept": "json"},
    }
    pointers = sorted(c.pointer for c in verdict.changes)
    assert pointers == [
        "/content/headers/Authorization",
        "/content/notes",
        "/content/pin",
        "/content/session",
        "/structured/headers/Authorization",
        "/structured/notes",
        "/structured/pin",
        "/structured/session",
    ]
    assert verdict.conforms is False  # the pin is a string now: the verdict says so


def test_secrets_in_text_blocks_are_redacted_json_text_member_by_member() -> None:
    gate = ResultGate(ToolSpec("shell", {"type": "object"}))
    result = McpResult(
        [
            text_block('{"password": "hunter22", "ok": true}'),
            text_block("export GITHUB_TOKEN=ghp_" + "A1b2" * 9),
        ]
    )
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
    schema = {
        "type": "object",
        "required": ["count", "rows"],
        "properties": {
            "count": {"type": "integer"},
            "rows": {"type": "array"},
            "summary": {"type": "string"},
        },
    }
    gate = ResultGate(
        ToolSpec("rows", {"type": "object"}, schema), options=ResultOptions(max_bytes=4000)
    )
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
    schema = {
        "type": "object",
        "properties": {"ids": {"type": "array", "items": {"type": "integer"}}},
    }
    gate = ResultGate(
        ToolSpec("ids", {"type": "object"}, schema), options=ResultOptions(max_bytes=200)
    )
    verdict = gate.check({"ids": list(range(1000))})
    assert verdict.accepted
    assert verdict.truncated
    assert verdict.conforms is False  # the "…more items" marker is not an integer


def test_a_text_result_over_budget_is_cut_with_a_marker() -> None:
    gate = ResultGate(
        ToolSpec("read_file", {"type": "object"}), options=ResultOptions(max_bytes=100)
    )
    verdict = gate.check(McpResult([text_block("z" * 1000)]))
    (block,) = verdict.value.content
    assert len(orjson.dumps(block["text"])) <= 100
    assert block["text"].startswith("zzz")
    assert block["text"].endswith("of 1000 characters]")


# --- what a result is: said by its type, never guessed from a dict's shape -------------------

ENVELOPE_SCHEMA = {
    "type": "object",
    "properties": {"content": {"type": "array"}, "isError": {"type": "boolean"}},
    "required": ["content", "isError"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("is_error", [False, True])
def test_a_local_value_shaped_like_an_mcp_result_is_validated_as_that_value(
    is_error: bool,
) -> None:
    gate = ResultGate(ToolSpec("render", {"type": "object"}, ENVELOPE_SCHEMA))
    value = {"content": [text_block("hello")], "isError": is_error}
    verdict = gate.check(value, call_id="c1")
    assert verdict.accepted, verdict.rejection
    assert verdict.value == ToolResult("c1", value, False, value)
    assert verdict.conforms is True


@pytest.mark.parametrize(
    ("content", "pointer"),
    [
        ("just text", "/content"),
        ({"type": "text"}, "/content"),
        ([text_block("a"), 5], "/content/1"),
    ],
)
def test_an_mcp_result_without_content_blocks_is_malformed(content: Any, pointer: str) -> None:
    verdict = ResultGate(ToolSpec("echo", {"type": "object"})).check(McpResult(content))
    assert verdict.rejection is not None
    assert verdict.rejection.code == "result_malformed"
    assert [v.pointer for v in verdict.rejection.violations] == [pointer]


# --- rejections across hops ------------------------------------------------------------------

REJECTION_SCHEMA = orjson.loads(
    (Path(schemawire.gates.__file__).parent / "rejection.schema.json").read_bytes()
)
is_rejection = compile_schema(REJECTION_SCHEMA).is_valid


def served(verdict: Verdict, *, meta: Any = "marked") -> McpResult:
    """The error result a schemawire server sends for a refused ``verdict``."""
    assert verdict.rejection is not None
    text = dumps(verdict.value.content, indent=False)  # as `schemawire serve` writes it
    marked = rejection_meta(verdict.rejection) if meta == "marked" else meta
    return McpResult([text_block(text)], True, None, marked)


def a_servers_rejection() -> Verdict:
    """What the support desk's server answers when create_refund returns the wrong shape."""
    return refund_gate().check({"status": "ok"})


def test_a_marked_rejection_from_a_server_is_passed_on_whole() -> None:
    original = a_servers_rejection()
    assert original.rejection is not None
    # The client checks the call against the server's listed schema, not the repository's.
    listed = ToolSpec("create_refund", {"type": "object"}, {"type": "object"})
    verdict = ResultGate(listed).check(served(original), call_id="c9")
    assert verdict.rejection is not None
    assert verdict.rejection.code == "result_invalid"
    assert verdict.value == ToolResult("c9", original.value.content, True, None)
    assert verdict.rejection.to_json() == original.rejection.to_json()
    assert verdict.rejection.gate == "results"


@pytest.mark.parametrize(
    "meta",
    [
        None,  # a foreign server's error that happens to be our JSON: not guessed
        {REJECTION_META: {"gate": "results", "code": "tool_failed"}},  # the codes disagree
        {REJECTION_META: "results"},
        {"other/key": {"gate": "results", "code": "result_invalid"}},
    ],
)
def test_an_error_result_not_marked_as_a_rejection_is_one_line(meta: Any) -> None:
    verdict = ResultGate(ToolSpec("create_refund", {"type": "object"})).check(
        served(a_servers_rejection(), meta=meta)
    )
    assert verdict.rejection is not None
    assert verdict.rejection.code == "tool_failed"
    (violation,) = verdict.rejection.violations
    assert "\n" not in violation.message
    assert len(violation.message) <= 300


def test_a_passed_on_rejection_may_quote_an_integer_beyond_64_bits() -> None:
    gate = ResultGate(ToolSpec("count", {"type": "object"}, {"type": "string"}))
    original = gate.check(McpResult([text_block(str(2**70))]))
    assert original.value.content["error"]["violations"][0]["got"] == 2**70
    verdict = ResultGate(ToolSpec("count", {"type": "object"})).check(served(original))
    assert verdict.value.content == original.value.content


def test_a_marked_result_whose_text_is_not_a_rejection_is_one_line() -> None:
    meta = {REJECTION_META: {"gate": "results", "code": "result_invalid"}}
    texts = ["Refund failed: the bank is down", '{"error": {"code": "result_invalid"}}']
    for text in texts:
        result = McpResult([text_block(text)], True, None, meta)
        verdict = refund_gate().check(result)
        assert verdict.rejection is not None
        assert verdict.rejection.code == "tool_failed"


def many_fields_gate(budget: int) -> ResultGate:
    properties = {f"field_{i:03}": {"type": "integer"} for i in range(80)}
    schema = {
        "$id": "https://example.com/wide.output.json",
        "type": "object",
        "properties": properties,
    }
    return ResultGate(ToolSpec("wide", {"type": "object"}, schema), options=ResultOptions(budget))


def test_a_rejection_over_budget_leaves_violations_out_from_the_end_and_says_how_many() -> None:
    gate = many_fields_gate(2000)
    verdict = gate.check({f"field_{i:03}": "not a number" for i in range(80)})
    shown = verdict.value.content
    assert is_rejection(shown), shown
    assert len(orjson.dumps(shown)) <= 2000
    error = shown["error"]
    assert error["code"] == "result_invalid"
    kept = [v["pointer"] for v in error["violations"]]
    assert kept == [f"/field_{i:03}" for i in range(len(kept))]
    assert error["violations_omitted"] == 80 - len(kept)
    assert list(error) == [
        "code",
        "tool",
        "schema",
        "version",
        "violations",
        "violations_omitted",
        "hint",
    ]
    assert verdict.truncated


def test_a_passed_on_rejection_is_cut_to_the_next_budget_and_stays_a_rejection() -> None:
    original = many_fields_gate(32 * 1024).check({f"field_{i:03}": "x" for i in range(80)})
    assert original.rejection is not None
    verdict = many_fields_gate(1500).check(served(original))
    shown = verdict.value.content
    assert is_rejection(shown)
    assert len(orjson.dumps(shown)) <= 1500
    assert (
        shown["error"]["violations"]
        == original.value.content["error"]["violations"][: len(shown["error"]["violations"])]
    )
    again = many_fields_gate(1000).check(served(verdict))  # cut twice: the counts add up
    error = again.value.content["error"]
    assert len(error["violations"]) + error["violations_omitted"] == 80


violation_texts = st.text(max_size=300) | st.integers(-(2**63), 2**63 - 1)
violations_json = st.lists(
    st.fixed_dictionaries(
        {
            "pointer": st.text(alphabet="abc/", max_size=12),
            "keyword": st.sampled_from(["type", "enum", "required"]),
            "message": st.text(max_size=400),
            "expected": violation_texts | st.none(),
            "got": violation_texts | st.lists(st.integers(-1000, 1000), max_size=50),
        }
    ),
    min_size=1,
    max_size=60,
)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(violations=violations_json, hint=st.text(max_size=300), budget=st.integers(1, 20_000))
def test_a_rejection_cut_to_any_budget_is_still_a_rejection(
    violations: list[dict[str, Any]], hint: str, budget: int
) -> None:
    shown = {
        "error": {
            "code": "result_invalid",
            "tool": "t",
            "schema": None,
            "version": None,
            "violations": violations,
            "hint": hint,
        }
    }
    cut, changes = cut_rejection(shown, budget)
    assert is_rejection(cut)
    error = cut["error"]
    assert len(error["violations"]) + error.get("violations_omitted", 0) == len(violations)
    kept_pointers = [v["pointer"] for v in error["violations"]]
    assert kept_pointers == [v["pointer"] for v in violations[: len(kept_pointers)]]
    size = len(orjson.dumps(cut))
    if budget >= 4000:  # room for the skeleton and one violation's cut strings
        assert size <= budget
    if size <= budget and len(orjson.dumps(shown)) <= budget:
        assert (cut, changes) == (shown, [])


def test_a_local_tools_string_is_its_value_when_the_output_schema_takes_a_string() -> None:
    gate = ResultGate(ToolSpec("greet", {"type": "object"}, {"type": "string", "minLength": 1}))
    verdict = gate.check("hello")
    assert verdict.accepted
    assert verdict.value.structured == "hello"
    assert gate.check("").rejection is not None  # still checked: minLength


def test_a_local_tools_json_text_is_still_read_as_json_where_a_string_would_not_do() -> None:
    gate = ResultGate(ToolSpec("count", {"type": "object"}, {"type": "object"}))
    verdict = gate.check('{"n": 3}')
    assert verdict.accepted
    assert verdict.value.structured == {"n": 3}


# --- secrets through every channel the gate passes on ---------------------------------------


def _placed(placement: str, text: str) -> Any:
    result, schema = PLACEMENTS[placement](text)
    gate = ResultGate(ToolSpec("lookup", {"type": "object"}, schema))
    verdict = gate.check(result)
    return verdict, [verdict.value.content, verdict.value.structured]


def test_every_secret_of_the_corpus_is_redacted_in_every_placement() -> None:
    cases = list(corpus_cases())
    missed = {
        placement: [
            case.kind for case in cases if leaked(case.secret, _placed(placement, case.text)[1])
        ]
        for placement in PLACEMENTS
    }
    assert len({case.kind for case in cases}) >= 30
    assert missed == {placement: [] for placement in PLACEMENTS}


def test_no_detector_finds_a_look_alike_in_any_placement() -> None:
    # (A look-alike used as a key may still name a secret, "password": its member is then
    # redacted for the key's word, which is not a detector's false positive.)
    changed = {
        placement: [
            text
            for text in look_alikes()
            if any("was found" in c.detail for c in _placed(placement, text)[0].changes)
        ]
        for placement in PLACEMENTS
    }
    assert changed == {placement: [] for placement in PLACEMENTS}


def test_a_key_that_is_a_secret_is_replaced_and_colliding_keys_are_kept_apart() -> None:
    first, second = "sk-proj-" + "FAKE0123456789ab" * 2, "sk-proj-" + "EXAMPLE012345678" * 2
    verdict = ResultGate(ToolSpec("keys", {"type": "object"})).check({first: 1, second: 2})
    assert verdict.value.content == {"[REDACTED:openai_key]": 1, "[REDACTED:openai_key] (2)": 2}
    assert [(c.pointer, c.detail) for c in verdict.changes] == [
        ("/content/[REDACTED:openai_key]", "a openai_key was found in the key"),
        ("/content/[REDACTED:openai_key] (2)", "a openai_key was found in the key"),
    ]


def test_a_secret_named_member_is_redacted_whole_whatever_its_type() -> None:
    credentials = {"user": "ada", "pass": "x"}
    result = {
        "pin": 7123,
        "password": ["FAKEpass-0123"],
        "credentials": credentials,
        "token": None,
        "password_set": True,
        "otp": "",
    }
    verdict = ResultGate(ToolSpec("who", {"type": "object"})).check(result)
    assert verdict.value.content == {
        "pin": "[REDACTED:pin]",
        "password": "[REDACTED:password]",
        "credentials": "[REDACTED:credentials]",
        "token": None,
        "password_set": True,
        "otp": "",
    }


def test_a_rejection_quotes_a_marked_or_secret_named_value_redacted_even_when_invalid() -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "session": {"type": "string", "x-redact": True},
            "pin": {"type": "integer", "writeOnly": True},
        },
    }
    gate = ResultGate(ToolSpec("login", {"type": "object"}, schema))
    verdict = gate.check({"session": 12345678, "pin": "FAKE-pin-0123", "password": "FAKEpass-0123"})
    assert verdict.rejection is not None
    assert verdict.rejection.code == "result_invalid"
    quoted = {v["pointer"]: v["got"] for v in verdict.value.content["error"]["violations"]}
    assert quoted == {
        "/session": "[REDACTED:x-redact]",
        "/pin": "[REDACTED:writeOnly]",
        "/password": "[REDACTED:password]",
    }


def test_the_results_own_meta_is_not_passed_on() -> None:
    secret = "ghp_" + "FAKE0123456789ab" * 3
    verdict = ResultGate(ToolSpec("t", {"type": "object"})).check(
        McpResult([text_block("ok")], meta={"debug": secret})
    )
    assert not leaked(secret, [verdict.value.content, verdict.value.structured])


# --- the byte budget covers the whole content --------------------------------------------------


def budget_gate(max_bytes: int = 32 * 1024) -> ResultGate:
    return ResultGate(ToolSpec("fetch", {"type": "object"}), options=ResultOptions(max_bytes))


def valid_mcp_content(content: Any) -> bool:
    """Whether the official SDK reads ``content`` as a ``CallToolResult``'s content."""
    from mcp.types import CallToolResult

    CallToolResult.model_validate({"content": content})
    return True


def cuts_of(verdict: Verdict) -> dict[str, str]:
    return {c.pointer: c.detail for c in verdict.changes if c.kind == "truncated"}


def test_an_image_over_the_budget_is_replaced_by_a_text_block_that_says_its_size() -> None:
    # The old gate passed a 13 MB image on unchanged: only text blocks were cut.
    image = {"type": "image", "data": "A" * 13_000_000, "mimeType": "image/png"}
    verdict = budget_gate().check(McpResult([text_block("the chart"), image]))
    content = verdict.value.content
    assert len(orjson.dumps(content)) <= 32 * 1024
    assert content[0] == text_block("the chart")
    assert content[1]["type"] == "text"
    size = len(orjson.dumps(image))
    assert content[1]["text"].startswith(f"[an image (image/png) left out: {size:,} bytes")
    assert "/content/1" in cuts_of(verdict)
    assert verdict.outcome == "truncated"
    assert valid_mcp_content(content)


def test_a_text_resource_is_cut_like_text_and_a_blob_is_left_out_with_a_note() -> None:
    # The old gate passed a 10 MB resource on unchanged.
    text = {"type": "resource", "resource": {"uri": "file:///log.txt", "text": "z" * 10**7}}
    blob = {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "QQ==" * 10**6}}
    verdict = budget_gate().check(McpResult([text, blob]))
    content = verdict.value.content
    assert len(orjson.dumps(content)) <= 32 * 1024
    resource = content[0]["resource"]
    assert resource["uri"] == "file:///log.txt"
    assert resource["text"].startswith("zzz")
    assert resource["text"].endswith("of 10000000 characters]")
    assert content[1]["text"].startswith("[a resource (file:///a.bin) left out: 4,000,0")
    assert set(cuts_of(verdict)) == {"/content/0/resource/text", "/content/1"}
    assert valid_mcp_content(content)


def test_many_text_blocks_fit_the_budget_together() -> None:
    # 100 blocks of 1,000 characters: the old gate gave each text a hundredth of the budget and
    # forgot the blocks around the texts (35,101 bytes against 32,768, and no change said so).
    verdict = budget_gate().check(McpResult([text_block("t" * 1000) for _ in range(100)]))
    content = verdict.value.content
    assert len(content) == 100
    assert len(orjson.dumps(content)) <= 32 * 1024
    assert set(cuts_of(verdict)) == {f"/content/{i}/text" for i in range(100)}


def test_blocks_too_many_to_cut_are_left_out_from_the_end_and_the_verdict_says_how_many() -> None:
    verdict = budget_gate(4096).check(McpResult([text_block("t" * 100) for _ in range(1000)]))
    content = verdict.value.content
    assert len(orjson.dumps(content)) <= 4096
    kept = len(content) - 1
    assert content[-1] == text_block(f"…[truncated: {1000 - kept} more content blocks]")
    cuts = cuts_of(verdict)
    assert cuts["/content"] == f"content cut: kept {kept} of 1000 blocks"
    assert all(int(pointer.split("/")[2]) < kept for pointer in cuts if pointer != "/content")
    assert valid_mcp_content(content)


def test_content_that_cannot_be_cut_to_a_tiny_budget_says_it_is_still_over() -> None:
    verdict = budget_gate(16).check(McpResult([text_block("t" * 100), text_block("u" * 100)]))
    assert any(d.startswith("still ") for d in cuts_of(verdict).values())


_blocks = st.lists(
    st.one_of(
        st.builds(text_block, st.text(max_size=600)),
        st.builds(
            lambda data: {"type": "image", "data": data, "mimeType": "image/png"},
            st.text(alphabet="AQ=", max_size=900),
        ),
        st.builds(
            lambda text: {"type": "resource", "resource": {"uri": "file:///r", "text": text}},
            st.text(max_size=600),
        ),
        st.builds(
            lambda blob: {"type": "resource", "resource": {"uri": "file:///b", "blob": blob}},
            st.text(alphabet="AQ=", max_size=900),
        ),
        st.just({"type": "resource_link", "uri": "file:///l", "name": "l"}),
    ),
    min_size=1,
    max_size=30,
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_blocks, st.integers(1, 3000))
def test_cut_content_is_valid_mcp_content_within_budget_or_says_it_is_not(
    blocks: list[dict[str, Any]], budget: int
) -> None:
    verdict = budget_gate(budget).check(McpResult(blocks))
    content = verdict.value.content
    assert valid_mcp_content(content)
    if len(orjson.dumps(content)) > budget:
        assert any(d.startswith("still ") for d in cuts_of(verdict).values())


def test_a_result_over_the_limits_is_refused_as_too_large_not_as_unwritable() -> None:
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    verdict = ResultGate(ToolSpec("deep", {"type": "object"})).check({"rows": deep})
    assert verdict.rejection is not None
    assert verdict.rejection.code == "result_malformed"
    assert verdict.rejection.violations[0].keyword == "maxDepth"
    assert "more than a result may hold" in verdict.rejection.hint


# --- the budget covers every byte of a block --------------------------------------------------


def within_budget(verdict: Verdict, budget: int = 32 * 1024) -> list[dict[str, Any]]:
    """The verdict's content, after checking it is valid MCP content within ``budget`` bytes."""
    assert verdict.value is not None
    content = verdict.value.content
    assert valid_mcp_content(content)
    assert len(orjson.dumps(content)) <= budget
    return list(content)


def test_a_blocks_meta_and_annotations_are_held_to_the_budget_too() -> None:
    # The old gate cut only the text: a text block with a 10 MB _meta, or 7 MB of annotations,
    # reached the model whole (the verdict said "still over").
    big_meta = {**text_block("the answer"), "_meta": {"debug": "m" * 10**7}}
    big_notes = {**text_block("more"), "annotations": {"audience": ["user"], "x": "n" * 7 * 10**6}}
    verdict = budget_gate().check(McpResult([big_meta, big_notes]))
    content = within_budget(verdict)
    assert content == [text_block("the answer"), text_block("more")]
    cuts = cuts_of(verdict)
    assert set(cuts) == {"/content/0/_meta", "/content/1/annotations"}
    assert not any(detail.startswith("still ") for detail in cuts.values())
    assert verdict.outcome == "truncated"


def test_small_meta_and_annotations_stay_while_a_large_text_is_cut() -> None:
    annotations = {"audience": ["assistant"], "priority": 0.5}
    block = {**text_block("t" * 10**6), "_meta": {"source": "db"}, "annotations": annotations}
    content = within_budget(budget_gate().check(McpResult([block])))
    assert content[0]["_meta"] == {"source": "db"}
    assert content[0]["annotations"] == annotations
    assert content[0]["text"].startswith("ttt")


def test_a_resources_own_meta_is_held_to_the_budget() -> None:
    resource = {"uri": "file:///log.txt", "text": "ok", "_meta": {"trace": "r" * 10**7}}
    block = {"type": "resource", "resource": resource, "_meta": {"outer": "o" * 10**6}}
    verdict = budget_gate().check(McpResult([block]))
    content = within_budget(verdict)
    assert content == [{"type": "resource", "resource": {"uri": "file:///log.txt", "text": "ok"}}]
    assert set(cuts_of(verdict)) == {"/content/0/_meta", "/content/0/resource/_meta"}


def test_a_blocks_optional_members_leave_before_the_block_does() -> None:
    # A link or an image whose own bytes are small keeps its place; a description, a title or
    # an unknown member over the room is left out.
    link = {"type": "resource_link", "uri": "file:///a", "name": "a", "description": "d" * 10**6}
    image = {"type": "image", "data": "QQ==", "mimeType": "image/png", "extra": "e" * 10**6}
    verdict = budget_gate().check(McpResult([link, image]))
    content = within_budget(verdict)
    assert content == [
        {"type": "resource_link", "uri": "file:///a", "name": "a"},
        {"type": "image", "data": "QQ==", "mimeType": "image/png"},
    ]
    assert set(cuts_of(verdict)) == {"/content/0/description", "/content/1/extra"}


def test_a_block_whose_required_members_are_over_is_replaced_by_a_short_note() -> None:
    # The note names the block by its mime type or URI: one of 10 MB must not make the note as
    # large as the block (the old gate then kept the block whole).
    image = {"type": "image", "data": "QQ==", "mimeType": "image/" + "p" * 10**7}
    link = {"type": "resource_link", "uri": "file:///" + "u" * 10**7, "name": "n"}
    verdict = budget_gate().check(McpResult([image, link]))
    content = within_budget(verdict)
    assert [block["type"] for block in content] == ["text", "text"]
    assert all(len(block["text"]) < 400 for block in content)
    assert set(cuts_of(verdict)) == {"/content/0", "/content/1"}


_extras = st.fixed_dictionaries(
    {},
    optional={
        "_meta": st.dictionaries(st.text(max_size=5), st.text(max_size=900), max_size=3),
        "annotations": st.builds(
            lambda audience, priority: {"audience": audience, "priority": priority},
            st.lists(st.sampled_from(["user", "assistant"]), max_size=2),
            st.floats(0, 1),
        ),
        "x-extra": st.text(max_size=900),
    },
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.builds(text_block, st.text(max_size=600)),
                st.just({"type": "image", "data": "QQ==", "mimeType": "image/png"}),
                st.builds(
                    lambda meta: {
                        "type": "resource",
                        "resource": {"uri": "file:///r", "text": "r", "_meta": meta},
                    },
                    st.dictionaries(st.text(max_size=5), st.text(max_size=900), max_size=3),
                ),
                st.just({"type": "resource_link", "uri": "file:///l", "name": "l"}),
            ),
            _extras,
        ),
        min_size=1,
        max_size=8,
    ),
    st.integers(1, 4000),
)
def test_blocks_with_meta_and_annotations_are_cut_within_budget_or_say_they_are_not(
    blocks: list[tuple[dict[str, Any], dict[str, Any]]], budget: int
) -> None:
    content_in = [{**block, **extras} for block, extras in blocks]
    verdict = budget_gate(budget).check(McpResult(content_in))
    assert verdict.value is not None
    content = verdict.value.content
    assert valid_mcp_content(content)
    size = len(orjson.dumps(content))
    if size > budget:
        assert any(d.startswith("still ") for d in cuts_of(verdict).values())
    if budget >= 120 * len(content_in):  # room enough for a note or a marker per block
        assert size <= budget


# --- what a rejection quotes is redacted as the model would read it ----------------------------

QUOTED_SCHEMA = {
    "type": "object",
    "properties": {
        "password": {"type": "array", "items": {"type": "integer"}},
        "credentials": {"type": "object", "properties": {"pass": {"type": "integer"}}},
        "k": {"type": "array", "items": {"type": "integer"}, "x-redact": True},
        "profile": {
            "type": "object",
            "properties": {"pin": {"type": "array", "items": {"type": "string"}}},
        },
    },
}


@pytest.mark.parametrize(
    ("result", "pointer", "got"),
    [
        ({"password": ["FAKEhunter2xyz", 5]}, "/password/0", "[REDACTED:password]"),
        (
            {"credentials": {"user": "bob", "pass": "FAKEs3cr3tPW!"}},
            "/credentials/pass",
            "[REDACTED:credentials]",
        ),
        ({"k": ["FAKEtopsecretvalue"]}, "/k/0", "[REDACTED:x-redact]"),
        ({"profile": {"pin": [["FAKE-0123"]]}}, "/profile/pin/0", "[REDACTED:pin]"),
    ],
)
def test_a_rejection_quotes_nothing_below_a_secret_named_or_marked_member(
    result: dict[str, Any], pointer: str, got: str
) -> None:
    gate = ResultGate(ToolSpec("who", {"type": "object"}, QUOTED_SCHEMA))
    verdict = gate.check(result)
    assert verdict.rejection is not None
    assert verdict.rejection.code == "result_invalid"
    quoted = {v["pointer"]: v["got"] for v in verdict.value.content["error"]["violations"]}
    assert quoted == {pointer: got}
    assert [(v.pointer, v.got) for v in verdict.rejection.violations] == [(pointer, got)]
    assert "FAKE" not in dumps([verdict.value.content, verdict.rejection.to_json()])


LONG_URL = "a" * 270 + " postgres://app:FAKEHunter2Secret01234567@db:5432/orders"
LONG_KEY = "b" * 270 + " sk-proj-FAKEabcdefghijklmnopqrstuv"


@pytest.mark.parametrize(
    "failure",
    [
        McpResult([text_block(f"fatal: {LONG_URL}")], is_error=True),
        McpResult([text_block(f"fatal: {LONG_KEY}")], is_error=True),
        # The "@" past 500 characters, where one_line cut before redaction could see it.
        RuntimeError("c" * 260 + " postgres://app:FAKE" + "p" * 300 + "@db:5432/orders"),
        McpResult([text_block('{"error": "denied", "pin": 7123}')], is_error=True),
        McpResult(
            [text_block(TRACEBACK + "\nValueError: bad password=\n  FAKEhunter2pass")],
            is_error=True,
        ),
    ],
    ids=["url cut", "key cut", "exception", "json keys", "secret across lines"],
)
def test_a_failure_is_redacted_whole_before_its_line_is_cut(failure: Any) -> None:
    verdict = refund_gate().check(failure)
    assert verdict.rejection is not None
    assert verdict.rejection.code == "tool_failed"
    (shown,) = verdict.value.content["error"]["violations"]
    (kept,) = verdict.rejection.violations
    assert shown["message"] == kept.message  # McpCall.to_json prints the rejection
    assert len(kept.message) <= 300
    written = dumps([verdict.value.content, verdict.rejection.to_json(), verdict.to_json()])
    assert "FAKE" not in written
    assert "7123" not in written
    assert "[REDACTED:" not in kept.message or kept.message.count("[") == kept.message.count("]")


def test_a_failure_line_cut_at_a_redaction_marker_leaves_the_marker_out() -> None:
    line = "x" * 280 + " postgres://app:FAKEpassword01@db"
    verdict = refund_gate().check(McpResult([text_block(line)], is_error=True))
    (kept,) = verdict.rejection.violations
    assert kept.message == "x" * 280 + " postgres://app:"


def test_a_failure_whose_message_holds_a_lone_surrogate_is_one_writable_line() -> None:
    # Found by `make fuzz`: the redacted line was measured as JSON, which cannot hold "\ud800".
    verdict = refund_gate().check(ValueError("bad input \ud800 near order A-1042"))
    assert verdict.rejection is not None
    assert verdict.rejection.code == "tool_failed"
    assert (
        verdict.rejection.violations[0].message == "ValueError: bad input \ufffd near order A-1042"
    )

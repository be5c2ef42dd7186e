"""Properties of the gates, over generated schemas and instances, and over hostile input.

- The argument gate accepts every instance of its schema, in every form arguments arrive in,
  and passes it on unchanged.
- It rejects every instance broken in one place (`strategies.mutations`) as
  ``arguments_invalid``, with a violation at that place.
- Neither gate raises, whatever it is given, and every verdict is well formed (or its fault is
  one of the known bugs, each pinned by a strict xfail test at the end of its section).
- The result gate cuts valid results to valid JSON within the budget where it can, says so
  where it cannot, and says truly whether what is left still satisfies the output schema.

For a long random run outside CI: ``python -m tests.gates.fuzz``.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from schemawire.gates import (
    ArgumentGate,
    ArgumentOptions,
    McpResult,
    ResultGate,
    ResultOptions,
    ValueLimits,
)
from schemawire.schema.validator import compile_schema
from schemawire.types import ToolResult, ToolSpec
from tests.gates.strategies import (
    CHANGE_KINDS,
    KNOWN_BUGS,
    MUTATION_KINDS,
    Count,
    Text,
    hostile_results,
    hostile_texts,
    hostile_values,
    input_schemas,
    instances,
    judge,
    mutations,
    output_schemas,
    validator_for,
    verdict_problems,
)

# Bounded so that the whole file runs in seconds; `tests.gates.fuzz` runs for longer.
GENERATED = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
HOSTILE = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _spec(input_schema: dict[str, Any], output_schema: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec("generated", input_schema, output_schema)


@st.composite
def schemas_and_instances(
    draw: st.DrawFn, schemas: st.SearchStrategy[dict[str, Any]]
) -> tuple[dict[str, Any], Any]:
    schema = draw(schemas)
    return schema, draw(instances(schema))


def _xfail(bug: str) -> pytest.MarkDecorator:
    """A known bug: strict, so that a fix shows as XPASS (then drop the mark)."""
    return pytest.mark.xfail(strict=True, reason=f"BUG: {KNOWN_BUGS[bug]}")


# --- the argument gate on valid and invalid instances ----------------------------------------


@pytest.mark.slow
@GENERATED
@given(schemas_and_instances(input_schemas()))
def test_instances_of_the_schema_are_accepted_in_every_form_unchanged(
    case: tuple[dict[str, Any], Any],
) -> None:
    schema, instance = case
    assert validator_for(schema).is_valid(instance)  # the generator and jsonschema-rs agree
    gate = ArgumentGate(_spec(schema))
    forms = [
        instance,
        json.dumps(instance),
        json.dumps(instance, ensure_ascii=False, indent=2),
        orjson.dumps(instance).decode(),
        orjson.dumps(instance),
        bytearray(orjson.dumps(instance)),
        memoryview(orjson.dumps(instance)),
    ]
    for arguments in forms:
        verdict = gate.check(arguments)
        assert verdict.accepted, (arguments, verdict.rejection)
        assert verdict.value == instance
        assert verdict.changes == ()
        assert verdict.conforms is True
        assert verdict_problems(verdict, gate.spec, "arguments") == []


@pytest.mark.slow
@GENERATED
@given(schemas_and_instances(input_schemas()))
def test_arguments_sent_as_a_json_string_holding_json_are_decoded_once(
    case: tuple[dict[str, Any], Any],
) -> None:
    schema, instance = case
    verdict = ArgumentGate(_spec(schema)).check(json.dumps(json.dumps(instance)))
    assert verdict.accepted, verdict.rejection
    assert verdict.value == instance
    assert [change.kind for change in verdict.changes] == ["double_encoded"]


@pytest.mark.slow
@GENERATED
@given(st.data())
def test_mutated_instances_are_rejected_with_a_violation_at_the_mutated_place(
    data: st.DataObject,
) -> None:
    schema, instance = data.draw(schemas_and_instances(input_schemas()))
    mutation = data.draw(mutations(schema, instance))
    event(mutation.kind)
    gate = ArgumentGate(_spec(schema))
    for arguments in (mutation.value, orjson.dumps(mutation.value), json.dumps(mutation.value)):
        verdict = gate.check(arguments)
        assert not verdict.accepted, (mutation, verdict)
        assert verdict.rejection is not None
        assert verdict.rejection.code == "arguments_invalid", (mutation, verdict.rejection)
        pointers = [violation.pointer for violation in verdict.rejection.violations]
        assert mutation.pointer in pointers, (mutation, pointers)
        assert verdict_problems(verdict, gate.spec, "arguments") == []


RICH = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^A-[0-9]{4,}$"},
        "count": {"type": "integer", "minimum": 1, "maximum": 99},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "currency": {"enum": ["EUR", "USD"]},
        "note": {"type": "string", "minLength": 2, "maxLength": 8},
        "items": {
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}$"}},
                "required": ["sku"],
                "additionalProperties": False,
            },
        },
        "a/b": {"type": "boolean"},
    },
    "required": ["order_id", "count", "ratio", "currency", "note", "items", "a/b"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("kind", MUTATION_KINDS)
@settings(GENERATED, max_examples=15)
@given(data=st.data())
def test_each_kind_of_mutation_is_rejected_at_its_place(kind: str, data: st.DataObject) -> None:
    """Every kind, every run (the generated schemas above offer some kinds only rarely)."""
    instance = data.draw(instances(RICH))
    mutation = data.draw(mutations(RICH, instance, kind))
    verdict = ArgumentGate(_spec(RICH)).check(orjson.dumps(mutation.value))
    assert verdict.rejection is not None, mutation
    assert verdict.rejection.code == "arguments_invalid"
    assert mutation.pointer in [v.pointer for v in verdict.rejection.violations], mutation


EMPTY_KEY = {
    "type": "object",
    "properties": {"": {"type": "object"}, "amount": {"type": "integer", "maximum": 10}},
    "required": ["amount"],
}


@_xfail("empty_key_pointer")
def test_a_violation_inside_a_member_named_empty_points_at_that_member() -> None:
    violations = compile_schema(EMPTY_KEY).violations({"": 1, "amount": 1})
    assert [v.pointer for v in violations] == ["/"]  # today: [""], the arguments as a whole


def test_a_json_string_in_a_member_named_empty_does_not_replace_the_arguments() -> None:
    # Through that pointer, the string once was decoded in place of the whole arguments: the
    # gate accepted {"amount": 5}.
    verdict = ArgumentGate(_spec(EMPTY_KEY)).check({"": '{"amount": 5}', "amount": 1000000})
    assert not verdict.accepted, verdict.value


# --- hostile input: no gate raises, every verdict is well formed ----------------------------

# Not fuzz.REFUND: a smaller refund, with the members (note, reason) these tests name.

REFUND = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^A-[0-9]{4,}$"},
        "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 10000},
        "reason": {"enum": ["damaged", "late", "other"]},
        "items": {
            "type": "array",
            "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}},
                "required": ["sku"],
                "additionalProperties": False,
            },
        },
        "note": {"type": "object"},
    },
    "required": ["order_id", "amount"],
    "additionalProperties": False,
}
REFUND_OUTPUT = {
    "type": "object",
    "properties": {
        "refund_id": {"type": "string"},
        "token": {"type": "string", "x-redact": True},
        "lines": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["refund_id"],
}
SPEC = ToolSpec("create_refund", REFUND, REFUND_OUTPUT)
FREE = ToolSpec("free", REFUND)
ARGUMENT_GATES = [
    ArgumentGate(SPEC),
    ArgumentGate(SPEC, options=ArgumentOptions(tolerant=True)),
    ArgumentGate(
        SPEC,
        options=ArgumentOptions(
            limits=ValueLimits(max_bytes=64, max_depth=3, max_string=8, max_items=3),
            decode_strings=False,
            allow_duplicate_keys=True,
        ),
    ),
]
RESULT_GATES = [
    ResultGate(SPEC),
    ResultGate(SPEC, options=ResultOptions(max_bytes=40)),
    ResultGate(FREE, options=ResultOptions(max_bytes=24)),
    ResultGate(SPEC, options=ResultOptions(max_bytes=1, redact=False, json_in_text=False)),
]


def _assert_sound(gate: ArgumentGate | ResultGate, given: Any, verdict: Any) -> None:
    """The verdict is well formed."""
    assert judge(gate, verdict) == [], verdict


def _check_every_gate(given: Any) -> None:
    for gate in (*ARGUMENT_GATES, *RESULT_GATES):
        _assert_sound(gate, given, gate.check(given))  # and it returned: it never raises


@pytest.mark.slow
@HOSTILE
@given(hostile_values())
def test_hostile_python_values_never_make_a_gate_raise(value: Any) -> None:
    _check_every_gate(value)


@pytest.mark.slow
@HOSTILE
@given(hostile_texts())
def test_random_text_and_bytes_never_make_a_gate_raise(text: str | bytes) -> None:
    _check_every_gate(text)
    wrapped = McpResult([{"type": "text", "text": text}])
    for gate in RESULT_GATES:
        _assert_sound(gate, wrapped, gate.check(wrapped))


@pytest.mark.slow
@HOSTILE
@given(hostile_results())
def test_whatever_a_tool_returns_the_result_gate_never_raises(result: Any) -> None:
    for gate in RESULT_GATES:
        _assert_sound(gate, result, gate.check(result, call_id="c1"))


class BrokenError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("__str__ fails")


@pytest.mark.parametrize(
    "error", [BrokenError("x"), ValueError("", 10**5000)], ids=["str-raises", "arg-unprintable"]
)
def test_an_exception_that_cannot_be_printed_still_fails_the_call_cleanly(
    error: Exception,
) -> None:
    verdict = ResultGate(SPEC).check(error)
    assert verdict.rejection is not None
    assert verdict.rejection.code == "tool_failed"


@pytest.mark.parametrize(
    "gate",
    [ArgumentGate(SPEC), ResultGate(SPEC), ResultGate(FREE)],
    ids=["arguments", "results", "results-free"],
)
def test_a_lone_surrogate_in_a_key_above_another_fault_is_refused_cleanly(gate: Any) -> None:
    verdict = gate.check({"note": {"\ud800": float("inf")}})
    kind = "arguments" if isinstance(gate, ArgumentGate) else "results"
    assert verdict_problems(verdict, gate.spec, kind) == []


def test_text_with_a_raw_lone_surrogate_is_not_repaired() -> None:
    gate = ArgumentGate(SPEC, options=ArgumentOptions(tolerant=True))
    verdict = gate.check('{\ud800"order_id": "A-1234", "amount": 5}')
    assert verdict_problems(verdict, SPEC, "arguments") == []
    assert verdict.rejection is not None
    assert verdict.rejection.code == "arguments_malformed"


def test_an_escaped_surrogate_pair_survives_repair() -> None:
    gate = ArgumentGate(SPEC, options=ArgumentOptions(tolerant=True))
    verdict = gate.check('{"order_id": "A-1234", "amount": 5, "note": {"r": "\\ud83d\\ude00"},}')
    assert verdict.accepted, verdict.rejection
    assert verdict.value["note"] == {"r": "\N{GRINNING FACE}"}


def test_a_repaired_infinity_beside_a_big_integer_is_refused_as_malformed() -> None:
    gate = ArgumentGate(SPEC, options=ArgumentOptions(tolerant=True))
    verdict = gate.check('{"n": 1e999, "m": 18446744073709551616,}')
    assert verdict.rejection is not None
    assert verdict.rejection.code == "arguments_malformed", verdict.rejection


@_xfail("tolerant_duplicates")
def test_repaired_arguments_with_a_duplicate_key_are_refused() -> None:
    verdict = ArgumentGate(SPEC, options=ArgumentOptions(tolerant=True)).check(
        '{"order_id": "A-1234", "amount": 5, "amount": 7,}'
    )
    assert verdict.rejection is not None, verdict.value  # today: accepted, amount 7
    assert verdict.rejection.code == "arguments_malformed"


# Bugs found by the properties above and since fixed; kept as they were found.


@pytest.mark.parametrize(
    "arguments",
    [
        {Text("order_id"): "A-1234", "amount": 5},
        {"order_id": Text("A-1234"), "amount": 5},
        {"order_id": "A-1234", "amount": Count(5)},
    ],
    ids=["str-subclass-key", "str-subclass-value", "int-subclass-value"],
)
def test_subclasses_of_str_and_int_are_read_as_str_and_int(arguments: dict[Any, Any]) -> None:
    verdict = ArgumentGate(SPEC).check(arguments)  # once: gate_error from jsonschema-rs
    assert verdict.accepted, verdict.rejection
    assert verdict_problems(verdict, SPEC, "arguments") == []


@pytest.mark.parametrize(
    ("options", "arguments"),
    [
        (ArgumentOptions(), {"order_id": "A-1234\ud800", "amount": 5}),
        (ArgumentOptions(), {"order_id": "A-1234", "amount": 5, "note": {"k": "\udfff"}}),
        (ArgumentOptions(), {"order_id": "A-1234", "amount": 5, "note": {"\ud800": 1}}),
        (ArgumentOptions(tolerant=True), '{"order_id": "A-1234", "amount": 5, "note": "\\ud800"'),
        (ArgumentOptions(tolerant=True), '["\\udc00'),
    ],
    ids=["parsed-pattern", "parsed-value", "parsed-key", "repaired-value", "repaired-array"],
)
def test_lone_surrogates_are_refused_as_malformed(options: ArgumentOptions, arguments: Any) -> None:
    # Once: gate_error, or accepted with a value no UTF-8 JSON text can hold.
    verdict = ArgumentGate(SPEC, options=options).check(arguments)
    assert verdict.rejection is not None, verdict.value
    assert verdict.rejection.code == "arguments_malformed", verdict.rejection
    assert verdict_problems(verdict, SPEC, "arguments") == []


@pytest.mark.parametrize(
    "text",
    [
        '{"order_id": "A-1234", "amount": 5, "note": {"n": 123456789012345678901234567890}',
        '{"order_id": "A-1234", "amount": 5, "note": {"n": 1e999},}',
    ],
    ids=["big-integer", "infinity"],
)
def test_repaired_arguments_are_held_to_the_parsers_checks(text: str) -> None:
    verdict = ArgumentGate(SPEC, options=ArgumentOptions(tolerant=True)).check(text)
    assert verdict.rejection is not None, verdict.value  # once: accepted
    assert verdict.rejection.code == "arguments_malformed", verdict.rejection


def _deep(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "result",
    [{"ids": {1, 2}}, {1: "one"}, b"raw", {"t": "\ud800"}, _deep(300), _deep(2000)],
    ids=["set", "int-key", "bytes", "lone-surrogate", "deep", "deeper"],
)
@pytest.mark.parametrize("spec", [SPEC, FREE], ids=["output-schema", "free"])
def test_a_result_json_cannot_hold_is_refused_as_malformed(spec: ToolSpec, result: Any) -> None:
    verdict = ResultGate(spec).check(result)  # once: gate_error
    assert verdict.rejection is not None
    assert verdict.rejection.code == "result_malformed", verdict.rejection
    assert verdict_problems(verdict, spec, "results") == []


# --- the result gate on valid results ---------------------------------------------------------


def _result(form: str, instance: Any) -> Any:
    if form == "structured":
        return ToolResult("c1", None, False, instance)
    if form == "mcp":
        text = {"type": "text", "text": json.dumps(instance)}
        return McpResult([text], False, instance)
    return instance  # a local tool's return value: both the content and the structured result


def _size(value: Any) -> int:
    return len(orjson.dumps(value))


@pytest.mark.slow
@GENERATED
@given(
    schemas_and_instances(output_schemas()),
    st.integers(1, 400),
    st.sampled_from(["structured", "mcp", "value"]),
)
def test_the_result_gate_cuts_valid_results_to_valid_json_and_says_if_they_conform(
    case: tuple[dict[str, Any], Any], budget: int, form: str
) -> None:
    schema, instance = case
    gate = ResultGate(_spec({"type": "object"}, schema), options=ResultOptions(max_bytes=budget))
    verdict = gate.check(_result(form, instance))
    assert verdict_problems(verdict, gate.spec, "results") == []
    assert verdict.accepted, verdict.rejection
    assert all(change.kind in CHANGE_KINDS for change in verdict.changes)
    structured = verdict.value.structured
    size = _size(structured)  # valid JSON: orjson writes it
    cuts = [c for c in verdict.changes if c.kind == "truncated" and c.pointer.startswith("/struc")]
    if size > budget:  # then the gate says it could not cut further
        assert any(c.pointer == "/structured" and "over the budget" in c.detail for c in cuts)
    if not schema.get("required") and budget >= 2:  # every member may go: {} always fits
        assert size <= budget, (structured, verdict.changes)
    if _size(instance) <= budget:
        assert not cuts
    assert verdict.conforms == validator_for(schema).is_valid(structured)
    if form == "mcp":
        orjson.loads(verdict.value.content[0]["text"])  # JSON text is cut as JSON
    if form == "value":
        _size(verdict.value.content)


@pytest.mark.slow
@GENERATED
@example(
    case=(
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"a": "0123456789"},
    ),
    budget=10,
)
@given(schemas_and_instances(output_schemas()), st.integers(1, 400))
def test_cutting_a_result_never_makes_it_larger(
    case: tuple[dict[str, Any], Any], budget: int
) -> None:
    schema, instance = case
    gate = ResultGate(_spec({"type": "object"}, schema), options=ResultOptions(max_bytes=budget))
    verdict = gate.check(ToolResult("c1", None, False, instance))
    # Once, a string or array cut in less room than its "…[truncated …]" marker takes came out
    # larger than it was (the example: 18 bytes became 42).
    if not verdict.redacted:
        assert _size(verdict.value.structured) <= max(budget, _size(instance))

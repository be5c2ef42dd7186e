"""How deeply a schema lets a value nest (`SchemaView.nesting_bound`), and the argument gate that
measures a short text's depth only once such a schema refuses it.

The bound must never be too low: a value the schema accepts that nests deeper would skip the
parser's depth limit. The properties check that over generated schemas and their instances, and
that a gate using the bound gives the verdict of one that measures every text.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemawire.gates import ArgumentGate, ArgumentOptions, ValueLimits
from schemawire.gates._schema_view import SchemaView
from schemawire.types import ToolSpec
from tests.gates.strategies import input_schemas, instances

CLOSED = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}

BOUNDS: list[tuple[str, Any, int | None]] = [
    ("a string", {"type": "string"}, 0),
    ("a closed object of strings", CLOSED, 1),
    ("an open object", {"type": "object", "properties": {"a": {"type": "string"}}}, None),
    ("an untyped value", {}, None),
    (
        "an array of closed objects",
        {"type": "array", "items": CLOSED},
        2,
    ),
    ("an array of anything", {"type": "array"}, None),
    ("a tuple, items closed", {"type": "array", "prefixItems": [CLOSED], "items": False}, 2),
    ("a tuple, items open", {"type": "array", "prefixItems": [CLOSED]}, None),
    ("a draft-07 tuple", {"type": "array", "items": [CLOSED], "additionalItems": False}, 2),
    ("a constant", {"const": {"a": [1]}}, 2),
    ("an enum", {"enum": ["x", [[1]]]}, 2),
    ("one branch open", {"anyOf": [{"type": "string"}, {"type": "object"}]}, None),
    ("every branch bounded", {"oneOf": [{"type": "string"}, CLOSED]}, 1),
    ("one conjunct bounded", {"allOf": [{}, {"type": "string"}]}, 0),
    (
        "a reference beside a type",
        {"$defs": {"any": {}}, "$ref": "#/$defs/any", "type": "string"},
        0,
    ),
    (
        "draft 7: the reference alone counts",
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {"any": {}},
            "$ref": "#/definitions/any",
            "type": "string",
        },
        None,
    ),
    (
        "a recursive reference",
        {
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {"child": {"$ref": "#/$defs/node"}},
                    "additionalProperties": False,
                }
            },
            "$ref": "#/$defs/node",
        },
        None,
    ),
    ("a reference that leads nowhere", {"$ref": "#/$defs/missing"}, None),
]


@pytest.mark.parametrize(("label", "schema", "bound"), BOUNDS, ids=[row[0] for row in BOUNDS])
def test_the_nesting_bound_of_a_schema(label: str, schema: Any, bound: int | None) -> None:
    assert SchemaView(schema).nesting_bound == bound


def test_a_reference_into_another_document_is_followed() -> None:
    documents = {"https://example.com/item.json": CLOSED}
    schema = {"type": "array", "items": {"$ref": "https://example.com/item.json"}}
    assert SchemaView(schema, documents).nesting_bound == 2


def nesting(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((nesting(member) for member in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((nesting(item) for item in value), default=0)
    return 0


@st.composite
def schemas_and_instances(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    schema = draw(input_schemas())
    return schema, draw(instances(schema))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas_and_instances())
def test_no_instance_nests_deeper_than_its_schema_s_bound(
    case: tuple[dict[str, Any], Any],
) -> None:
    schema, instance = case
    bound = SchemaView(schema).nesting_bound
    assert bound is None or nesting(instance) <= bound


LIMITS = ValueLimits(max_depth=4)


def gates(schema: dict[str, Any]) -> tuple[ArgumentGate, ArgumentGate]:
    """A gate over ``schema``, and the same gate measuring every text's depth (as before the
    schema could vouch for it)."""
    spec = ToolSpec("generated", schema)
    vouching = ArgumentGate(spec, options=ArgumentOptions(limits=LIMITS))
    measuring = ArgumentGate(spec, options=ArgumentOptions(limits=LIMITS))
    measuring._depth_vouched = False  # the gate as it was
    return vouching, measuring


DEEP = st.recursive(st.integers(0, 3), lambda inner: st.lists(inner, min_size=1, max_size=2))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas_and_instances(), st.text(max_size=3), DEEP)
def test_a_gate_whose_schema_vouches_for_depth_decides_as_one_that_measures_it(
    case: tuple[dict[str, Any], Any], key: str, deep: Any
) -> None:
    schema, instance = case
    vouching, measuring = gates(schema)
    planted = {**instance, key: deep} if isinstance(instance, dict) else instance
    for value in (instance, planted):
        text = orjson.dumps(value).decode()
        assert vouching.check(text).to_json() == measuring.check(text).to_json()


def test_a_text_too_deep_for_the_limit_is_refused_as_too_deep_though_the_schema_bounds_depth() -> (
    None
):
    vouching, _ = gates(CLOSED)
    assert vouching._depth_vouched
    verdict = vouching.check('{"a": [[[[[["x"]]]]]]}')
    assert verdict.rejection is not None
    assert verdict.rejection.code == "arguments_too_large"
    assert [v.keyword for v in verdict.rejection.violations] == ["json_too_deep"]

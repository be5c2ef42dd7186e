"""What each shared transform does to a schema, and how a call in the projected shape comes back."""

from __future__ import annotations

from typing import Any

import pytest

from schemawire.project import _ANTHROPIC_STRICT, _transforms, project, project_catalogue
from schemawire.project._arguments import ArgumentMap
from schemawire.project._transforms import Walk
from schemawire.project.checkers import check_payload, check_request
from schemawire.project.importers import import_openai
from schemawire.project.openai import STRICT, STRICT_LIMITS
from schemawire.schema.validator import compile_schema
from schemawire.types import Projection, ToolSpec
from tests.project.corpus import bfcl_tools

CITY = {"type": "string", "description": "A city."}


def spec(properties: dict[str, Any], name: str = "t", **schema: Any) -> ToolSpec:
    document = {"type": "object", "properties": properties, **schema}
    return ToolSpec(name=name, input_schema=document)


def codes(projection: Projection) -> list[str]:
    return [loss.code for loss in projection.losses]


def parameters(projection: Projection) -> dict[str, Any]:
    payload = projection.payload
    return payload["function"]["parameters"] if "function" in payload else payload["input_schema"]


def test_strict_makes_optional_properties_nullable_and_null_comes_back_as_absent() -> None:
    tool = spec({"city": CITY, "unit": {"type": "string", "enum": ["c", "f"]}}, required=["city"])
    projection = project(tool, "openai.chat", strict=True)
    unit = parameters(projection)["properties"]["unit"]
    assert unit == {"type": ["string", "null"], "enum": ["c", "f", None]}
    assert parameters(projection)["required"] == ["city", "unit"]
    assert projection.argument_map.restore({"city": "上海", "unit": None}) == {"city": "上海"}
    assert "OPTIONAL_TO_NULLABLE" in codes(projection)


def test_tool_names_and_property_keys_are_renamed_reversibly() -> None:
    tool = spec({"order id": CITY, "x.y": CITY}, name="orders.lookup", required=["order id"])
    projection = project(tool, "anthropic")
    assert projection.projected_name == "orders_lookup"
    assert list(parameters(projection)["properties"]) == ["order_id", "x.y"]
    assert parameters(projection)["required"] == ["order_id"]
    assert projection.argument_map.restore({"order_id": "A-1", "x.y": "z"}) == {
        "order id": "A-1",
        "x.y": "z",
    }


def test_renamed_keys_that_collide_get_distinct_names() -> None:
    tool = spec({"a b": CITY, "a_b": CITY, "a-b": CITY})
    keys = list(project(tool, "gemini", openapi=True).payload["parameters"]["properties"])
    assert keys == ["a_b", "a_b_2", "a_b_3"]


def test_a_map_becomes_key_value_pairs_under_strict_and_comes_back() -> None:
    tool = spec(
        {"labels": {"type": "object", "additionalProperties": {"type": "string"}}},
        required=["labels"],
    )
    projection = project(tool, "openai.chat", strict=True)
    labels = parameters(projection)["properties"]["labels"]
    assert labels["type"] == "array"
    assert labels["items"]["properties"]["value"] == {"type": "string"}
    sent = {"labels": [{"key": "tier", "value": "gold"}]}
    assert projection.argument_map.restore(sent) == {"labels": {"tier": "gold"}}
    assert "MAP_TO_PAIRS" in codes(projection)


@pytest.mark.parametrize("target", ["openai.chat", "anthropic"])
def test_a_free_form_object_is_a_map_too_and_closing_an_open_object_is_reported(
    target: str,
) -> None:
    """JSON Schema objects take any other key unless they say otherwise; strict targets take
    none. A free-form object is sent as pairs, like a map; an object with named properties
    is closed, and that is a loss, not a silent change."""
    tool = spec(
        {"extra": {"type": "object"}, "address": {"type": "object", "properties": {"city": CITY}}},
        required=["extra", "address"],
    )
    projection = project(tool, target, strict=True)
    extra = parameters(projection)["properties"]["extra"]
    assert extra["type"] == "array"
    sent = {"extra": [{"key": "a", "value": 1}], "address": {"city": "Oslo"}}
    assert projection.argument_map.restore(sent) == {"extra": {"a": 1}, "address": {"city": "Oslo"}}
    closed = [loss.pointer for loss in projection.losses if loss.code == "MAP_CLOSED"]
    assert closed == ["/properties/address", ""]


def test_a_free_form_root_can_only_be_closed_and_says_so() -> None:
    projection = project(ToolSpec("t", {"type": "object"}), "openai.chat", strict=True)
    assert parameters(projection)["additionalProperties"] is False
    assert [(loss.code, loss.pointer) for loss in projection.losses] == [("MAP_CLOSED", "")]


def test_one_of_becomes_any_of_and_all_of_is_merged() -> None:
    tool = spec(
        {"id": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
        allOf=[{"required": ["id"]}],
        required=[],
    )
    projected = parameters(project(tool, "openai.chat", strict=True))
    assert projected["properties"]["id"]["anyOf"][:2] == [{"type": "string"}, {"type": "integer"}]
    assert projected["required"] == ["id"]


def test_const_becomes_an_enum_for_gemini() -> None:
    tool = spec({"to": {"const": "billing"}}, required=["to"])
    projected = project(tool, "gemini").payload["parametersJsonSchema"]
    assert projected["properties"]["to"] == {"enum": ["billing"]}


def test_recursion_is_cut_where_the_target_takes_none() -> None:
    node = {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}
    tool = spec({"root": {"$ref": "#/$defs/node"}}, **{"$defs": {"node": node}})
    kept = project(tool, "mcp").payload["inputSchema"]
    assert kept["$defs"]["node"]["properties"]["child"] == {"$ref": "#/$defs/node"}
    cut = project(tool, "anthropic", strict=True)
    assert "RECURSION_TRUNCATED" in codes(cut)
    assert check_payload("anthropic", cut.payload) == ()


def test_references_to_other_documents_are_inlined() -> None:
    money = {"$id": "https://x.test/money.json", "$defs": {"amount": {"type": "number"}}}
    tool = ToolSpec(
        "pay",
        {
            "$id": "https://x.test/pay.json",
            "type": "object",
            "properties": {"amount": {"$ref": "money.json#/$defs/amount"}},
        },
    )
    projection = project(tool, "mcp", documents={money["$id"]: money})
    assert projection.payload["inputSchema"]["properties"]["amount"] == {"type": "number"}
    assert codes(projection) == ["REF_INLINED"]


def test_a_root_combinator_is_merged_into_one_object() -> None:
    tool = spec(
        {},
        anyOf=[
            {"properties": {"id": CITY}, "required": ["id"]},
            {"properties": {"email": CITY}, "required": ["email"]},
        ],
    )
    projected = parameters(project(tool, "openai.chat"))
    assert list(projected["properties"]) == ["id", "email"]
    assert "anyOf" not in projected


def test_limits_are_reported_as_blocking_before_a_provider_says_400() -> None:
    many = {f"p{i}": {"type": "string", "enum": [f"v{j}" for j in range(30)]} for i in range(40)}
    projection = project(spec(many), "openai.chat", strict=True)
    assert projection.blocked
    assert [loss.code for loss in projection.losses if loss.blocking] == ["LIMIT_EXCEEDED"]


def test_a_catalogue_makes_names_unique_and_checks_request_budgets() -> None:
    tools = [spec({"a": CITY}, name="lookup.order"), spec({"a": CITY}, name="lookup_order")]
    catalogue = project_catalogue(tools, "openai.chat")
    names = [p["function"]["name"] for p in catalogue.payload]
    assert names == ["lookup_order", "lookup_order_2"]
    assert check_request("openai.chat", catalogue.payload) == ()
    optional = [spec({f"o{i}": CITY for i in range(5)}, name=f"t{n}") for n in range(6)]
    strict = project_catalogue(optional, "anthropic", strict=True)
    assert strict.blocked  # 30 optional parameters, over Anthropic's 24 per request


def test_restoring_leaves_what_it_cannot_undo_for_the_gate() -> None:
    arguments = ArgumentMap(pairs=True)
    assert arguments.restore([{"key": 1, "value": 2}]) == [{"key": 1, "value": 2}]
    assert arguments.restore("text") == "text"


@pytest.mark.slow
def test_every_real_tool_projects_to_every_target_within_its_rules() -> None:
    """Each BFCL tool, imported, then projected to each target: the payload follows the
    target's rules, and a call made in the projected shape comes back valid for the canonical
    schema whenever it is valid for the projected one (names and keys map back)."""
    tools = [imported for tool in bfcl_tools() for imported in import_openai([tool])]
    assert len(tools) > 3000
    problems = []
    for imported in tools:
        tool = ToolSpec(imported.name, imported.schema)
        for target, options in (
            ("openai.chat", {"strict": True}),
            ("openai.responses", {}),
            ("anthropic", {"strict": True}),
            ("gemini", {}),
            ("gemini", {"openapi": True}),
            ("mcp", {}),
        ):
            payload = project(tool, target, **options).payload
            problems += [(tool.name, target, p.rule) for p in check_payload(target, payload)]
    assert problems == []


def test_a_canonical_call_survives_the_round_trip_through_strict() -> None:
    unit = {"type": "string", "enum": ["c", "f"]}
    tool = spec(
        {"city": CITY, "unit": unit, "n": {"type": "integer"}},
        required=["city"],
        additionalProperties=False,
    )
    projection = project(tool, "openai.chat", strict=True)
    canonical = compile_schema(tool.input_schema)
    projected = compile_schema(parameters(projection))
    sent = {"city": "上海", "unit": None, "n": None}
    assert projected.is_valid(sent)
    assert canonical.is_valid(projection.argument_map.restore(sent))


def test_the_same_loss_met_again_is_the_same_object_and_the_table_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = project(spec({"city": CITY}), "openai.chat", strict=True)
    again = project(spec({"city": CITY}), "openai.chat", strict=True)
    assert first.losses == again.losses
    assert all(a is b for a, b in zip(first.losses, again.losses, strict=True))

    monkeypatch.setattr(_transforms, "_MOST_SHARED_LOSSES", 2)
    project(spec({"city": CITY, "other": CITY}), "openai.chat", strict=True)
    assert len(_transforms._SHARED_LOSSES) <= 2


def test_a_walk_counts_optional_and_union_properties_only_when_a_limit_bounds_them() -> None:
    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"]}}}
    openai = Walk(STRICT, "input", "urn:t", {}, measure=STRICT_LIMITS).run(schema)
    anthropic = Walk(STRICT, "input", "urn:t", {}, measure=_ANTHROPIC_STRICT).run(schema)
    assert openai.size is not None
    assert anthropic.size is not None
    assert (openai.size.properties, openai.size.unions) == (1, 0)
    assert (anthropic.size.properties, anthropic.size.unions) == (1, 1)

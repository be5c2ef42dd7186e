"""docs/projections.md says what the projections do: each keyword list of a strict target is
what projecting that keyword does, the formats and limits are the code's, and MCP reports
exactly the losses the page names."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from schemawire.project import (
    LOSS_CODES,
    TARGETS,
    anthropic,
    gemini,
    mcp,
    openai,
    project,
    project_catalogue,
)
from schemawire.project._limits import measure
from schemawire.project._transforms import METADATA
from schemawire.schema.dialect import DRAFT_2020_12
from schemawire.types import ToolSpec
from tests.project.strategies import tool_schemas

PAGE = (Path(__file__).parents[2] / "docs" / "projections.md").read_text(encoding="utf-8")
# Keywords that make the shape of a schema (objects, arrays, references, unions): the page
# says what strict targets do to them in prose; the lists name every other keyword.
STRUCTURE = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "$ref",
    "$defs",
    "$dynamicRef",
    "anyOf",
    "definitions",
    "dependencies",
}
LISTED = DRAFT_2020_12.keywords - METADATA - STRUCTURE

STRING, NUMBER = {"type": "string"}, {"type": "number"}
ARRAY = {"type": "array", "items": STRING}
OBJECT = {"type": "object", "properties": {"a": STRING, "b": STRING}}
# One subschema using each listed keyword, as a tool's property would.
SAMPLES: dict[str, dict[str, Any]] = {
    "enum": {"enum": ["a", "b"]},
    "const": {"const": "a"},
    "description": {**STRING, "description": "A city."},
    "title": {**STRING, "title": "City"},
    "default": {**STRING, "default": "a"},
    "examples": {**STRING, "examples": ["a"]},
    "deprecated": {**STRING, "deprecated": True},
    "readOnly": {**STRING, "readOnly": True},
    "writeOnly": {**STRING, "writeOnly": True},
    "contentEncoding": {**STRING, "contentEncoding": "base64"},
    "contentMediaType": {**STRING, "contentMediaType": "application/json"},
    "contentSchema": {
        **STRING,
        "contentMediaType": "application/json",
        "contentSchema": {"type": "object"},
    },
    "pattern": {**STRING, "pattern": "^[a-z]+$"},
    "format": {**STRING, "format": "date-time"},
    "minLength": {**STRING, "minLength": 1},
    "maxLength": {**STRING, "maxLength": 9},
    "minimum": {**NUMBER, "minimum": 1},
    "maximum": {**NUMBER, "maximum": 9},
    "exclusiveMinimum": {**NUMBER, "exclusiveMinimum": 0},
    "exclusiveMaximum": {**NUMBER, "exclusiveMaximum": 10},
    "multipleOf": {**NUMBER, "multipleOf": 2},
    "minItems": {**ARRAY, "minItems": 1},
    "maxItems": {**ARRAY, "maxItems": 3},
    "uniqueItems": {**ARRAY, "uniqueItems": True},
    "contains": {**ARRAY, "contains": {"const": "a"}},
    "minContains": {**ARRAY, "contains": {"const": "a"}, "minContains": 2},
    "maxContains": {**ARRAY, "contains": {"const": "a"}, "maxContains": 2},
    "prefixItems": {"type": "array", "prefixItems": [STRING]},
    "unevaluatedItems": {"type": "array", "prefixItems": [STRING], "unevaluatedItems": False},
    "minProperties": {**OBJECT, "minProperties": 1},
    "maxProperties": {**OBJECT, "maxProperties": 1},
    "patternProperties": {"type": "object", "patternProperties": {"^a": STRING}},
    "propertyNames": {"type": "object", "propertyNames": {"maxLength": 3}},
    "dependentRequired": {**OBJECT, "dependentRequired": {"a": ["b"]}},
    "dependentSchemas": {**OBJECT, "dependentSchemas": {"a": {"required": ["b"]}}},
    "unevaluatedProperties": {**OBJECT, "unevaluatedProperties": False},
    "not": {**STRING, "not": {"const": "a"}},
    "if": {**STRING, "if": {"const": "a"}, "then": {"minLength": 1}},
    "then": {**STRING, "if": {"const": "a"}, "then": {"minLength": 1}},
    "else": {**STRING, "if": {"const": "a"}, "else": {"maxLength": 3}},
    "oneOf": {"oneOf": [STRING, {"type": "integer"}]},
    "allOf": {"allOf": [STRING, {"minLength": 1}]},
}
KINDS = {
    "Sent": "sent",
    "Rewritten": "rewritten",
    "Restated in the description": "restated",
    "Left out": "left out",
}
_REWRITES = {"ONEOF_TO_ANYOF": "oneOf", "ALLOF_MERGED": "allOf", "CONST_TO_ENUM": "const"}


def bullet(lead: str) -> str:
    """The text of the top-level bullet of "What each target takes" that starts with ``lead``."""
    start = PAGE.index(f"- **{lead}**")
    end = PAGE.find("\n- **", start + 1)
    return PAGE[start:end]


def sub_bullets(text: str) -> dict[str, str]:
    """``{lead: text}`` of a bullet's sub-bullets (``  - Lead: text``)."""
    found = re.findall(r"^  - ([^:\n]+): (.*?)(?=^  - |\Z)", text, flags=re.MULTILINE | re.DOTALL)
    return {lead: " ".join(body.split()) for lead, body in found}


def keywords(text: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", text)) & LISTED


def property_payload(target: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The projected schema of property ``x`` in a tool's payload."""
    if target == "openai.chat":
        parameters = payload["function"]["parameters"]
    elif target == "anthropic":
        parameters = payload["input_schema"]
    else:
        parameters = payload.get("parametersJsonSchema") or payload["parameters"]
    found: dict[str, Any] = parameters["properties"]["x"]
    return found


def what_happens(target: str, options: dict[str, Any], keyword: str) -> str:
    """What projecting a property that uses ``keyword`` does to the keyword."""
    schema = {
        "type": "object",
        "properties": {"x": SAMPLES[keyword]},
        "required": ["x"],
        "additionalProperties": False,
    }
    projection = project(ToolSpec("t", schema), target, **options)
    codes = {loss.code for loss in projection.losses if loss.keyword == keyword}
    if any(_REWRITES.get(loss.code) == keyword for loss in projection.losses):
        return "rewritten"
    sent = property_payload(target, projection.payload)
    if keyword in sent and not codes:
        return "sent"
    if "KEYWORD_DROPPED" in codes:
        return "left out"
    assert f"{keyword}:" in sent.get("description", ""), (keyword, sent)
    return "restated"


STRICT_TARGETS = [
    ("OpenAI strict", "openai.chat", {"strict": True}),
    ("Anthropic", "anthropic", {"strict": True}),
    ("Gemini", "gemini", {}),
    ("Gemini, `openapi=True`", "gemini", {"openapi": True}),
]


@pytest.mark.parametrize(("lead", "target", "options"), STRICT_TARGETS)
def test_each_keyword_list_is_what_projecting_the_keyword_does(
    lead: str, target: str, options: dict[str, Any]
) -> None:
    lists = sub_bullets(bullet(lead))
    named = [keyword for name in KINDS for keyword in re.findall(r"`([^`]+)`", lists[name])]
    named = [keyword for keyword in named if keyword in LISTED]
    assert sorted(named) == sorted(LISTED)  # every keyword in one list, once
    documented = {keyword: KINDS[name] for name in KINDS for keyword in keywords(lists[name])}
    measured = {keyword: what_happens(target, options, keyword) for keyword in LISTED}
    assert documented == measured


@pytest.mark.parametrize(
    ("lead", "formats"),
    [("OpenAI strict", openai.STRICT_FORMATS), ("Anthropic", anthropic.STRICT_FORMATS)],
)
def test_the_formats_listed_are_the_ones_sent(lead: str, formats: frozenset[str]) -> None:
    listed = sub_bullets(bullet(lead))["Formats"].split(".")[0]
    assert set(re.findall(r"`([^`]+)`", listed)) == formats


def numbers(text: str) -> list[int]:
    return [int(figure.replace(",", "")) for figure in re.findall(r"\d[\d,]*\d|\d", text)]


def test_the_openai_limits_are_the_codes() -> None:
    *limits, long_enum, tools = numbers(sub_bullets(bullet("OpenAI strict"))["Limits"])
    assert limits == [limit.maximum for limit in openai.STRICT_LIMITS]
    assert tools == TARGETS["openai.chat"].tool_limit
    # "an enum over 250 values": the long-enum limit counts enums past that many
    assert measure({"enum": ["a"] * long_enum}).long_enum_chars == 0
    assert measure({"enum": ["a"] * (long_enum + 1)}).long_enum_chars == long_enum + 1


def test_the_anthropic_budgets_are_the_ones_checked() -> None:
    strict_tools, optional, unions = numbers(sub_bullets(bullet("Anthropic"))["Limits"])
    many = [ToolSpec(f"t{n}", {"type": "object"}) for n in range(strict_tools + 1)]
    assert _over(project_catalogue(many[:-1], "anthropic", strict=True)) == []
    assert _over(project_catalogue(many, "anthropic", strict=True)) == [
        f"{strict_tools + 1} strict tools"
    ]
    for field, figure in (("optional", optional), ("unions", unions)):
        (limit,) = [limit for limit in TARGETS["anthropic"].limits if limit.field == field]
        assert limit.maximum == figure


def _over(catalogue: Any) -> list[str]:
    return [loss.detail.split(",")[0] for loss in catalogue.losses if loss.code == "LIMIT_EXCEEDED"]


def test_a_pattern_or_format_a_strict_target_cannot_take_is_restated() -> None:
    for target, pattern in (("openai.chat", "(?=a)a"), ("anthropic", "\\bword")):
        for extra in ({"pattern": pattern}, {"format": "ipv4-or-not"}):
            schema = {
                "type": "object",
                "properties": {"x": {**STRING, **extra}},
                "required": ["x"],
                "additionalProperties": False,
            }
            projection = project(ToolSpec("t", schema), target, strict=True)
            sent = property_payload(target, projection.payload)
            (keyword,) = extra
            assert keyword not in sent
            assert f"{keyword}:" in sent["description"]


# --- MCP -----------------------------------------------------------------------------------------

BASE = "https://example.com/schemas/tools/"
DOCUMENTS = {
    f"{BASE}other.json": {"$defs": {"n": {"type": "integer"}}},
    f"{BASE}node.json": {"type": "object", "properties": {"next": {"$ref": "node.json"}}},
}


def mcp_codes(
    schema: dict[str, Any], name: str = "t", output: Any = None, version: str = "2026-07-28"
) -> set[str]:
    spec = ToolSpec(name, {"$id": f"{BASE}t.json", **schema}, output)
    projection = project(spec, "mcp", version=version, documents=DOCUMENTS)
    return {loss.code for loss in projection.losses}


def documented_mcp_codes() -> set[str]:
    return set(re.findall(r"^  - `([A-Z_]+)`:", bullet("MCP"), flags=re.MULTILINE))


def test_mcp_reports_each_loss_the_page_names() -> None:
    seen = {
        "REF_INLINED": mcp_codes({"properties": {"n": {"$ref": "other.json#/$defs/n"}}}),
        "RECURSION_TRUNCATED": mcp_codes({"properties": {"n": {"$ref": "node.json"}}}),
        "REF_UNRESOLVED": mcp_codes({"properties": {"n": {"$ref": "nowhere.json"}}}),
        "DIALECT_TRANSLATED": mcp_codes(
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "properties": {"t": {"items": [STRING]}},
            }
        ),
        "NAME_RENAMED": mcp_codes({"type": "object"}, name="a tool"),
        "OUTPUT_SCHEMA_WRAPPED": mcp_codes({"type": "object"}, output=ARRAY, version="2025-11-25"),
    }
    assert set(seen) == documented_mcp_codes()
    for code, codes in seen.items():
        assert code in codes, code
        assert codes <= documented_mcp_codes()
    assert mcp_codes({"type": "object"}, output=ARRAY) == set()  # 2026-07-28 takes any output


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(schema=tool_schemas())
def test_mcp_reports_no_loss_the_page_does_not_name(schema: dict[str, Any]) -> None:
    for version in ("2025-06-18", "2025-11-25", "2026-07-28"):
        assert mcp_codes(schema, version=version) <= documented_mcp_codes()


# --- the tables ----------------------------------------------------------------------------------


def table(heading: str) -> list[list[str]]:
    """The rows (cells stripped) of the first table after ``heading``, without its header."""
    lines = PAGE[PAGE.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_targets_table_names_every_target_and_its_options() -> None:
    rows = table("## Targets")
    assert [row[0].strip("`") for row in rows] == list(TARGETS)
    for row in rows:  # the options cell starts with the option, if there is one
        option = re.match(r"`([a-z]+)`", row[2])
        documented = (option[1],) if option else ()
        assert documented == TARGETS[row[0].strip("`")].options


def test_the_loss_codes_table_is_the_catalogue() -> None:
    rows = table("## Loss codes")
    assert {row[0].strip("`"): row[1] for row in rows} == LOSS_CODES


def test_the_metadata_keywords_go_where_the_table_says() -> None:
    rows = {row[0]: row[1] for row in table("## Metadata keywords")}
    for keyword, hint in mcp.ANNOTATIONS.items():
        assert rows[f"`{keyword}`"] == f"MCP `annotations.{hint}`"
    schema = {"title": "Refund", "type": "object", **dict.fromkeys(mcp.ANNOTATIONS, True)}
    payload = project(ToolSpec("t", schema), "mcp").payload
    assert payload["title"] == "Refund"
    assert payload["annotations"] == dict.fromkeys(mcp.ANNOTATIONS.values(), True)


def test_every_a2a_skill_reports_that_it_has_no_place_for_a_schema() -> None:
    assert "every tool reports `SCHEMA_NOT_REPRESENTABLE`" in " ".join(bullet("A2A").split())
    for schema in ({"type": "object"}, {"type": "object", "properties": {"a": STRING}}):
        projection = project(ToolSpec("t", schema), "a2a")
        assert "SCHEMA_NOT_REPRESENTABLE" in {loss.code for loss in projection.losses}


def test_what_the_page_says_of_each_policy_is_so() -> None:
    strict, json_schema, openapi = anthropic.STRICT, gemini.JSON_SCHEMA, gemini.OPENAPI
    assert (strict.recursion, strict.max_min_items) == (False, 1)  # "cuts recursion", "0 or 1"
    assert {"$ref", "$defs", "additionalProperties"} <= json_schema.keep
    assert (json_schema.recursion, json_schema.inline_refs) == (False, "siblings")
    assert (openapi.upper_case_types, openapi.type_lists, openapi.enum_values) == (
        True,
        "nullable",
        "strings",
    )
    assert (openapi.inline_refs, "additionalProperties" in openapi.keep) == ("all", False)
    assert "$schema" in mcp.POLICY.keep
    assert "$schema" not in mcp.POLICY_2025_06_18.keep
    schema = {
        "type": "object",
        "properties": {"x": {**ARRAY, "minItems": 2}},
        "required": ["x"],
        "additionalProperties": False,
    }
    projection = project(ToolSpec("t", schema), "anthropic", strict=True)
    assert "minItems" not in property_payload("anthropic", projection.payload)
    assert ("KEYWORD_DROPPED", "minItems") in {(x.code, x.keyword) for x in projection.losses}

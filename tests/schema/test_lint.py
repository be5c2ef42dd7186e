"""`schema.lint`: every rule fires on the mistake it names and stays quiet on the fix."""

from __future__ import annotations

from typing import Any

import pytest

from schemawire.schema.lint import FILE_CHECKS, SITE_CHECKS, lint_repository
from schemawire.schema.repository import Repository
from schemawire.schema.rules import RULES
from tests.helpers import WriteRepo, tool_schema

CITY = {"type": "string", "description": "A city name."}


def lint(
    write_repo: WriteRepo, files: dict[str, Any], settings: str = "", *, valid: bool = True
) -> list[tuple[str, str]]:
    root = write_repo({"schemawire.toml": settings, **files})
    repository = Repository.load(root)
    assert repository.findings == () or not valid, "the case must be a valid repository"
    return [(f.rule.id, f.pointer) for f in lint_repository(repository)]


def tool(name: str = "t", **overrides: Any) -> dict[str, Any]:
    return {f"schemas/tools/{name}.json": tool_schema(name, **overrides)}


def handoff(**overrides: Any) -> dict[str, Any]:
    schema = tool_schema("h", **{"$id": "https://example.com/schemas/handoffs/h.json"}, **overrides)
    return {"schemas/handoffs/h.json": schema}


# rule -> (files that break it, pointer of the finding, files that fix it)
CASES: dict[str, tuple[dict[str, Any], str, dict[str, Any]]] = {
    "SW101": (
        tool(additionalProperties=None),
        "",
        tool(properties={"city": CITY, "metadata": {"type": "object", "description": "Labels."}}),
    ),
    "SW102": (
        tool(properties={"city": {"description": "Anything."}}),
        "/properties/city",
        tool(properties={"city": {"$ref": "#/$defs/c"}}, **{"$defs": {"c": CITY}}),
    ),
    "SW103": (
        tool(properties={"city": {"type": "string"}}),
        "/properties/city",
        handoff(properties={"city": {"type": "string"}}),
    ),
    "SW104": (
        tool(required=["city", "cty"]),
        "/required/1",
        tool(required=["city", "zip"], patternProperties={"^z": {"type": "string"}}),
    ),
    "SW105": (
        tool(require=["city"]),
        "/require",
        tool(**{"x-require": ["city"]}),
    ),
    "SW106": (
        tool(properties={"city": {**CITY, "type": ["String", "null"]}}),
        "/properties/city/type/0",
        tool(properties={"city": {**CITY, "type": ["string", "null"]}}),
    ),
    "SW107": (
        tool(properties={"n": {"type": "integer", "description": "N.", "enum": [1, 2.5]}}),
        "/properties/n/enum/1",
        tool(properties={"n": {"type": "integer", "description": "N.", "enum": [1, 2.0]}}),
    ),
    "SW108": (
        tool(properties={"n": {"type": "number", "description": "N.", "enum": [1, 2, 1.0]}}),
        "/properties/n/enum/2",
        tool(properties={"n": {"description": "N.", "enum": [1, True, "1", [1], {"a": 1}]}}),
    ),
    "SW109": (
        tool(**{"$defs": {"unused": CITY}}),
        "/$defs/unused",
        tool(
            properties={"city": {"$ref": "#/$defs/c/allOf/0"}},
            **{"$defs": {"c": {"allOf": [CITY]}}},
        ),
    ),
    "SW110": (
        tool(properties={"city": {**CITY, "format": "e-mail"}}),
        "/properties/city/format",
        tool(properties={"city": {**CITY, "format": "email"}}),
    ),
    "SW111": (
        tool(name="lookup.order"),
        "",
        tool(name="lookup-order_2"),
    ),
    "SW112": (
        tool(properties={"city name": CITY}, required=[]),
        "/properties/city name",
        tool(properties={"city_name": CITY}, required=[]),
    ),
    "SW113": (
        tool(type=None, anyOf=[{"required": ["city"]}]),
        "",
        tool(
            properties={
                "city": CITY,
                "place": {"anyOf": [CITY, {"type": "null"}], "description": "Where."},
            }
        ),
    ),
    "SW114": (
        tool(properties={"city": CITY, "extra": {"type": "object", "description": "E."}}),
        "/properties/extra",
        tool(
            properties={
                "city": CITY,
                "extra": {
                    "type": "object",
                    "description": "E.",
                    "additionalProperties": {"type": "string"},
                },
            }
        ),
    ),
    "SW115": (
        tool(description=None),
        "",
        tool(description="Look a city up."),
    ),
    "SW116": (
        tool(**{"x-keywords": ["town", "Town"]}),
        "/x-keywords/1",
        tool(**{"x-keywords": ["town", "place"]}),
    ),
}


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_fires_on_its_mistake(write_repo: WriteRepo, rule_id: str) -> None:
    broken, pointer, _ = CASES[rule_id]
    # Type names that are not JSON Schema also break the metaschema; lint says what was meant.
    assert (rule_id, pointer) in lint(write_repo, broken, valid=rule_id != "SW106")


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_is_quiet_on_the_fix(write_repo: WriteRepo, rule_id: str) -> None:
    _, _, fixed = CASES[rule_id]
    assert [found for found in lint(write_repo, fixed) if found[0] == rule_id] == []


def test_every_lint_rule_has_a_check_and_a_case() -> None:
    lint_rules = {rule_id for rule_id in RULES if rule_id.startswith("SW1")}
    assert lint_rules == set(SITE_CHECKS) | set(FILE_CHECKS) == set(CASES)


def test_the_clean_template_schema_passes_every_rule(write_repo: WriteRepo) -> None:
    assert lint(write_repo, tool()) == []


def test_unknown_keyword_hints_at_the_keyword_meant(write_repo: WriteRepo) -> None:
    root = write_repo(
        {
            **tool(
                properties={
                    "tags": {
                        "type": "array",
                        "item": CITY,
                        "description": "Tags.",
                        "nullable": True,
                    }
                },
                required=[],
            )
        }
    )
    hints = {f.pointer: f.hint for f in lint_repository(Repository.load(root))}
    assert hints["/properties/tags/item"] == 'did you mean "items"?'
    assert "OpenAPI" in (hints["/properties/tags/nullable"] or "")


def test_type_name_hints_give_the_json_schema_name(write_repo: WriteRepo) -> None:
    properties = {
        name: {"type": name, "description": "x"}
        for name in ("dict", "float", "int", "tuple", "any", "String")
    }
    root = write_repo(tool(properties=properties, required=[]))
    repository = Repository.load(root)  # the metaschema rejects them too (SW004)
    hints = {f.pointer: f.hint for f in lint_repository(repository) if f.rule.id == "SW106"}
    assert hints == {
        "/properties/dict/type": 'use "object"',
        "/properties/float/type": 'use "number"',
        "/properties/int/type": 'use "integer"',
        "/properties/tuple/type": 'use "array"',
        "/properties/any/type": "leave type out to accept any value, or list the types the "
        "value may have",
        "/properties/String/type": 'write "string" (type names are lower case)',
    }


def test_type_name_hints_know_the_names_the_importers_read(write_repo: WriteRepo) -> None:
    # One table for the linter and the importers: Java's names are suggested a fix too.
    properties = {name: {"type": name, "description": "x"} for name in ("HashMap", "short")}
    root = write_repo(tool(properties=properties, required=[]))
    findings = lint_repository(Repository.load(root))
    hints = {f.pointer: f.hint for f in findings if f.rule.id == "SW106"}
    assert hints == {
        "/properties/HashMap/type": 'use "object"',
        "/properties/short/type": 'use "integer"',
    }


def test_default_outside_its_enum_is_a_mismatch(write_repo: WriteRepo) -> None:
    unit = {"type": "string", "description": "U.", "enum": ["c", "f"], "default": "k"}
    findings = lint(write_repo, tool(properties={"city": CITY, "unit": unit}))
    assert findings == [("SW107", "/properties/unit/default")]


def test_definitions_used_from_another_file_are_used(write_repo: WriteRepo) -> None:
    common = {
        "$id": "https://example.com/schemas/common/c.json",
        "x-version": "1.0.0",
        "$defs": {"city": CITY, "unused": CITY},
    }
    files = {
        "schemas/common/c.json": common,
        **tool(properties={"city": {"$ref": "../common/c.json#/$defs/city"}}),
    }
    assert lint(write_repo, files) == [("SW109", "/$defs/unused")]


def test_constraint_subschemas_are_not_shapes(write_repo: WriteRepo) -> None:
    conditional = {
        "if": {"type": "object", "properties": {"city": {"const": "上海"}}},
        "then": {"required": ["city"]},
    }
    assert lint(write_repo, handoff(**conditional)) == []


def test_a_branch_closed_by_its_parent_is_not_open(write_repo: WriteRepo) -> None:
    composed = {
        "allOf": [{"type": "object", "properties": {"city": CITY}}],
        "unevaluatedProperties": False,
        "additionalProperties": None,
    }
    assert lint(write_repo, handoff(**composed)) == []


def test_rules_can_be_switched_off_everywhere_or_per_file(write_repo: WriteRepo) -> None:
    files = {
        **tool("a", description=None),
        **tool("legacy_b", description=None, additionalProperties=None),
    }
    settings = (
        '[lint]\nignore = ["SW115"]\n'
        '[lint.per-file-ignores]\n"schemas/tools/legacy_*.json" = ["SW101"]\n'
    )
    assert lint(write_repo, files, settings) == []
    assert sorted(lint(write_repo, files)) == [("SW101", ""), ("SW115", ""), ("SW115", "")]


def test_extra_formats_and_keywords_can_be_declared(write_repo: WriteRepo) -> None:
    files = tool(properties={"city": {**CITY, "format": "city-code", "x-ui": 1, "ui": 2}})
    settings = '[lint]\nformats = ["city-code"]\nkeywords = ["ui"]\n'
    assert lint(write_repo, files, settings) == []


def test_valid_idioms_are_not_flagged(write_repo: WriteRepo) -> None:
    closed = {"type": "object", "additionalProperties": False}
    idioms = handoff(
        additionalProperties=None,
        oneOf=[
            {**closed, "properties": {"a": CITY}, "required": ["a"]},
            {**closed, "properties": {"b": CITY}, "required": ["b"]},
        ],
        properties=None,
        required=None,
    )
    conditional = handoff(
        **{
            "if": {"properties": {"city": {"const": "x"}}},
            "then": {"type": "object", "required": ["city"]},
        }
    )
    composed = handoff(
        additionalProperties=None,
        unevaluatedProperties=False,
        allOf=[{"$ref": "#/$defs/base"}],
        properties={"city": CITY},
        required=["id", "city"],
        **{"$defs": {"base": {"type": "object", "properties": {"id": CITY}}}},
    )
    for files in (idioms, conditional, composed):
        assert lint(write_repo, files) == []


def test_odd_keyword_values_do_not_crash_lint(write_repo: WriteRepo) -> None:
    files = tool(patternProperties=None, required=["city", "zip"])
    files["schemas/tools/t.json"]["patternProperties"] = {}
    assert ("SW104", "/required/1") in lint(write_repo, files)


def test_percent_encoded_references_count_as_uses(write_repo: WriteRepo) -> None:
    files = tool(properties={"city": {"$ref": "#/$defs/a%20city"}}, **{"$defs": {"a city": CITY}})
    assert lint(write_repo, files) == []

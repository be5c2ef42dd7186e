"""`schema.diff`: every change classified with a stable code, the side it breaks, and whether
that is breaking for a tool's input, a tool's output, a handoff or a state."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemawire.schema.diff import (
    ABSENT,
    CHANGE_KINDS,
    ChangeSeverity,
    FileStatus,
    RepositoryDiff,
    Role,
    SchemaDiff,
    Side,
    diff_repositories,
    diff_schemas,
    version_findings,
)
from schemawire.schema.repository import Repository
from tests.helpers import WriteRepo, tool_schema

BREAKING, COMPATIBLE, ANNOTATION = (
    ChangeSeverity.BREAKING,
    ChangeSeverity.COMPATIBLE,
    ChangeSeverity.ANNOTATION,
)
NO_CHANGE = None
STRING = {"type": "string"}


def obj(*required: str, closed: bool = True, **properties: Any) -> dict[str, Any]:
    """An object schema with ``properties`` (each a schema), ``required`` and, by default,
    additionalProperties: false."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    return schema


def prop(**keywords: Any) -> dict[str, Any]:
    """An object with one property ``x`` whose schema is ``keywords``."""
    return obj(x=keywords)


# (name, old, new, [(code, pointer)], verdict for a tool's input, verdict for a tool's output)
CASES: list[tuple[str, Any, Any, list[tuple[str, str]], Any, Any]] = [
    (
        "required added",
        obj(a=STRING, b=STRING),
        obj("b", a=STRING, b=STRING),
        [("REQUIRED_ADDED", "/required")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "required removed",
        obj("a", a=STRING),
        obj(a=STRING),
        [("REQUIRED_REMOVED", "/required")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "optional property added to a closed object",
        obj(a=STRING),
        obj(a=STRING, b=STRING),
        [("PROPERTY_ADDED", "/properties/b")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "property removed from a closed object",
        obj(a=STRING, b=STRING),
        obj(a=STRING),
        [("PROPERTY_REMOVED", "/properties/b")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "required property added",
        obj(a=STRING),
        obj("b", a=STRING, b=STRING),
        [("REQUIRED_ADDED", "/required"), ("PROPERTY_ADDED", "/properties/b")],
        BREAKING,
        BREAKING,
    ),
    (
        "property declared on an open object",
        obj(closed=False),
        obj(closed=False, b=STRING),
        [("PROPERTY_DECLARED", "/properties/b"), ("TYPE_NARROWED", "/properties/b/type")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "additionalProperties closed",
        obj(closed=False, a=STRING),
        obj(a=STRING),
        [("ADDITIONAL_PROPERTIES_CLOSED", "/additionalProperties")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "additionalProperties opened",
        obj(a=STRING),
        obj(closed=False, a=STRING),
        [("ADDITIONAL_PROPERTIES_OPENED", "/additionalProperties")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "enum value removed",
        prop(enum=["c", "f", "k"]),
        prop(enum=["c", "f"]),
        [("ENUM_VALUE_REMOVED", "/properties/x/enum")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "enum value added",
        prop(enum=["c", "f"]),
        prop(enum=["c", "f", "k"]),
        [("ENUM_VALUE_ADDED", "/properties/x/enum")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "enum values reordered",
        prop(enum=["c", "f"]),
        prop(enum=["f", "c"]),
        [],
        NO_CHANGE,
        NO_CHANGE,
    ),
    (
        "enum added",
        prop(type="string"),
        prop(type="string", enum=["c"]),
        [("ENUM_ADDED", "/properties/x/enum")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "type narrowed",
        prop(type=["string", "null"]),
        prop(type="string"),
        [("TYPE_NARROWED", "/properties/x/type")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "number narrowed to integer",
        prop(type="number"),
        prop(type="integer"),
        [("TYPE_NARROWED", "/properties/x/type")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "type widened",
        prop(type="integer"),
        prop(type="number"),
        [("TYPE_WIDENED", "/properties/x/type")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "type changed",
        prop(type="string"),
        prop(type="integer"),
        [("TYPE_CHANGED", "/properties/x/type")],
        BREAKING,
        BREAKING,
    ),
    (
        "pattern added",
        prop(type="string"),
        prop(type="string", pattern="^A-"),
        [("PATTERN_ADDED", "/properties/x/pattern")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "pattern tightened",
        prop(pattern="^A-[0-9]{4,}$"),
        prop(pattern="^A-[0-9]{5,}$"),
        [("PATTERN_CHANGED", "/properties/x/pattern")],
        BREAKING,
        BREAKING,
    ),
    (
        "pattern removed",
        prop(pattern="^A-"),
        prop(),
        [("PATTERN_REMOVED", "/properties/x/pattern")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "format added",
        prop(type="string"),
        prop(type="string", format="date"),
        [("FORMAT_ADDED", "/properties/x/format")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "format changed",
        prop(format="date"),
        prop(format="date-time"),
        [("FORMAT_CHANGED", "/properties/x/format")],
        BREAKING,
        BREAKING,
    ),
    (
        "minimum raised",
        prop(minimum=0),
        prop(minimum=1),
        [("BOUND_TIGHTENED", "/properties/x/minimum")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "minimum became exclusive",
        prop(minimum=0),
        prop(exclusiveMinimum=0),
        [("BOUND_TIGHTENED", "/properties/x/exclusiveMinimum")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "maximum raised",
        prop(maximum=10),
        prop(maximum=100),
        [("BOUND_LOOSENED", "/properties/x/maximum")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "maxLength lowered",
        prop(maxLength=64),
        prop(maxLength=32),
        [("BOUND_TIGHTENED", "/properties/x/maxLength")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "minLength 0 written out",
        prop(type="string"),
        prop(type="string", minLength=0),
        [],
        NO_CHANGE,
        NO_CHANGE,
    ),
    (
        "maxItems removed",
        prop(maxItems=3),
        prop(),
        [("BOUND_LOOSENED", "/properties/x/maxItems")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "multipleOf doubled",
        prop(multipleOf=1),
        prop(multipleOf=2),
        [("BOUND_TIGHTENED", "/properties/x/multipleOf")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "multipleOf to another step",
        prop(multipleOf=2),
        prop(multipleOf=3),
        [("BOUND_CHANGED", "/properties/x/multipleOf")],
        BREAKING,
        BREAKING,
    ),
    (
        "const changed",
        prop(const="triage"),
        prop(const="billing"),
        [("CONST_CHANGED", "/properties/x/const")],
        BREAKING,
        BREAKING,
    ),
    (
        "items narrowed",
        prop(type="array", items={"type": ["string", "integer"]}),
        prop(type="array", items={"type": "string"}),
        [("TYPE_NARROWED", "/properties/x/items/type")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "uniqueItems added",
        prop(type="array"),
        prop(type="array", uniqueItems=True),
        [("UNIQUE_ITEMS_ADDED", "/properties/x/uniqueItems")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "tuple position opened",
        prop(prefixItems=[STRING], items=False),
        prop(prefixItems=[STRING, STRING], items=False),
        [("FALSE_SCHEMA_REMOVED", "/properties/x/prefixItems/1")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "contains added",
        prop(type="array"),
        prop(type="array", contains=STRING),
        [("CONTAINS_ADDED", "/properties/x/contains")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "null became an alternative",
        prop(type="string"),
        prop(anyOf=[STRING, {"type": "null"}]),
        [("ANY_OF_BRANCH_ADDED", "/properties/x/anyOf/1")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "alternative removed",
        prop(anyOf=[STRING, {"type": "integer"}]),
        prop(anyOf=[STRING]),
        [("ANY_OF_BRANCH_REMOVED", "/properties/x/anyOf/1")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "alternative loosened in place",
        prop(oneOf=[{"type": "string", "maxLength": 5}, {"type": "null"}]),
        prop(oneOf=[{"type": "null"}, {"type": "string", "maxLength": 9}]),
        [("BOUND_LOOSENED", "/properties/x/oneOf/1/maxLength")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "allOf gained a schema",
        prop(allOf=[STRING]),
        prop(allOf=[STRING, {"maxLength": 3}]),
        [("ALL_OF_BRANCH_ADDED", "/properties/x/allOf/1")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "anyOf dropped",
        prop(anyOf=[STRING, {"type": "integer"}], minimum=0),
        prop(minimum=0),
        [("COMBINATOR_REMOVED", "/properties/x/anyOf")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "not added",
        prop(type="string"),
        prop(type="string", **{"not": {"const": ""}}),
        [("NOT_ADDED", "/properties/x/not")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "if/then changed",
        prop(**{"if": STRING, "then": {"minLength": 1}}),
        prop(**{"if": STRING, "then": {"minLength": 2}}),
        [("CONDITIONAL_CHANGED", "/properties/x/if")],
        BREAKING,
        BREAKING,
    ),
    (
        "dependentRequired added",
        obj(a=STRING, b=STRING),
        {**obj(a=STRING, b=STRING), "dependentRequired": {"a": ["b"]}},
        [("DEPENDENCY_ADDED", "/dependentRequired/a")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "description changed",
        prop(type="string", description="A city."),
        prop(type="string", description="A city name."),
        [("ANNOTATION_CHANGED", "/properties/x/description")],
        ANNOTATION,
        ANNOTATION,
    ),
    (
        "title, examples and default added",
        prop(type="string"),
        prop(type="string", title="X", examples=["a"], default="a"),
        [
            ("ANNOTATION_CHANGED", "/properties/x/title"),
            ("ANNOTATION_CHANGED", "/properties/x/examples"),
            ("ANNOTATION_CHANGED", "/properties/x/default"),
        ],
        ANNOTATION,
        ANNOTATION,
    ),
    (
        "x-version bumped alone",
        {**obj(a=STRING), "x-version": "1.0.0"},
        {**obj(a=STRING), "x-version": "2.0.0"},
        [],
        NO_CHANGE,
        NO_CHANGE,
    ),
    (
        "definition narrowed behind a $ref",
        {**prop(**{"$ref": "#/$defs/amount"}), "$defs": {"amount": {"minimum": 0}}},
        {**prop(**{"$ref": "#/$defs/amount"}), "$defs": {"amount": {"minimum": 1}}},
        [("BOUND_TIGHTENED", "/properties/x/$ref/minimum")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "a $ref inlined unchanged",
        {**prop(**{"$ref": "#/$defs/amount"}), "$defs": {"amount": {"minimum": 0}}},
        prop(minimum=0),
        [("DEFINITION_REMOVED", "/$defs/amount")],
        COMPATIBLE,
        COMPATIBLE,
    ),
    (
        "unused definition added",
        obj(a=STRING),
        {**obj(a=STRING), "$defs": {"spare": STRING}},
        [("DEFINITION_ADDED", "/$defs/spare")],
        COMPATIBLE,
        COMPATIBLE,
    ),
    (
        "property undeclared on an open object",
        obj(closed=False, b=STRING),
        obj(closed=False),
        [("PROPERTY_UNDECLARED", "/properties/b"), ("TYPE_WIDENED", "/properties/b/type")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "items forbidden",
        prop(type="array", items=STRING),
        prop(type="array", items=False),
        [("FALSE_SCHEMA_ADDED", "/properties/x/items")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "enum removed",
        prop(type="string", enum=["a"]),
        prop(type="string"),
        [("ENUM_REMOVED", "/properties/x/enum")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "const added",
        prop(type="string"),
        prop(type="string", const="triage"),
        [("CONST_ADDED", "/properties/x/const")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "const removed",
        prop(type="string", const="triage"),
        prop(type="string"),
        [("CONST_REMOVED", "/properties/x/const")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "format removed",
        prop(format="email"),
        prop(),
        [("FORMAT_REMOVED", "/properties/x/format")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "uniqueItems removed",
        prop(uniqueItems=True),
        prop(uniqueItems=False),
        [("UNIQUE_ITEMS_REMOVED", "/properties/x/uniqueItems")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "contains removed",
        prop(contains=STRING),
        prop(),
        [("CONTAINS_REMOVED", "/properties/x/contains")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "anyOf added beside other keywords",
        prop(minimum=0),
        prop(minimum=0, anyOf=[{"maximum": 1}, {"multipleOf": 5}]),
        [("COMBINATOR_ADDED", "/properties/x/anyOf")],
        BREAKING,
        COMPATIBLE,
    ),
    (
        "allOf lost a schema",
        prop(allOf=[STRING, {"maxLength": 3}]),
        prop(allOf=[STRING]),
        [("ALL_OF_BRANCH_REMOVED", "/properties/x/allOf/1")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "not changed",
        prop(**{"not": {"const": ""}}),
        prop(**{"not": {"const": "-"}}),
        [("NOT_CHANGED", "/properties/x/not")],
        BREAKING,
        BREAKING,
    ),
    (
        "not removed",
        prop(**{"not": {"const": ""}}),
        prop(),
        [("NOT_REMOVED", "/properties/x/not")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "dependentRequired dropped a name",
        {**obj(a=STRING, b=STRING), "dependentRequired": {"a": ["b"]}},
        obj(a=STRING, b=STRING),
        [("DEPENDENCY_REMOVED", "/dependentRequired/a")],
        COMPATIBLE,
        BREAKING,
    ),
    (
        "$id changed",
        {**obj(), "$id": "https://example.com/a.json"},
        {**obj(), "$id": "https://example.com/b.json"},
        [("ID_CHANGED", "/$id")],
        BREAKING,
        BREAKING,
    ),
    (
        "dialect changed",
        {**obj(), "$schema": "http://json-schema.org/draft-07/schema#"},
        {**obj(), "$schema": "https://json-schema.org/draft/2020-12/schema"},
        [("DIALECT_CHANGED", "/$schema")],
        BREAKING,
        BREAKING,
    ),
]


def verdict(changes: tuple[Any, ...]) -> ChangeSeverity | None:
    """The most severe change: breaking, then compatible, then annotation; None for none."""
    for severity in (BREAKING, COMPATIBLE, ANNOTATION):
        if any(change.severity is severity for change in changes):
            return severity
    return None


@pytest.mark.parametrize(
    ("old", "new", "expected", "for_input", "for_output"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_each_change_is_classified_for_input_and_output(
    old: Any, new: Any, expected: list[tuple[str, str]], for_input: Any, for_output: Any
) -> None:
    as_input = diff_schemas(old, new, role=Role.INPUT)
    as_output = diff_schemas(old, new, role=Role.OUTPUT)
    assert [(change.code, change.pointer) for change in as_input] == expected
    assert (verdict(as_input), verdict(as_output)) == (for_input, for_output)


def test_the_table_covers_at_least_thirty_changes_and_both_directions() -> None:
    assert len(CASES) >= 30
    verdicts = {(case[4], case[5]) for case in CASES}
    assert {(BREAKING, COMPATIBLE), (COMPATIBLE, BREAKING), (BREAKING, BREAKING)} <= verdicts


@pytest.mark.parametrize("role", [Role.HANDOFF, Role.STATE, Role.SHARED])
@pytest.mark.parametrize(
    ("old", "new", "breaks"),
    [
        (obj(a=STRING), obj("a", a=STRING), Side.PRODUCERS),
        (prop(enum=["a"]), prop(enum=["a", "b"]), Side.CONSUMERS),
    ],
    ids=["narrowed", "widened"],
)
def test_a_handoff_or_state_change_breaks_whichever_side_it_narrows_or_widens(
    old: Any, new: Any, breaks: Side, role: Role
) -> None:
    (change,) = diff_schemas(old, new, role=role)
    assert (change.breaks, change.severity) == (breaks, BREAKING)
    assert role.parties(breaks) != role.parties(Side.BOTH)


def test_the_sides_are_named_for_the_files_role() -> None:
    assert Role.INPUT.parties(Side.PRODUCERS) == "callers"
    assert Role.INPUT.parties(Side.CONSUMERS) == "the tool"
    assert Role.OUTPUT.parties(Side.PRODUCERS) == "the tool"
    assert Role.HANDOFF.parties(Side.BOTH) == "the sending agent and the receiving agent"


def test_changes_carry_the_values_before_and_after() -> None:
    removed, added = diff_schemas(prop(enum=["a", "b"]), prop(enum=["a", "c"]))
    assert (removed.old, removed.new) == ("b", ABSENT)
    assert (added.old, added.new) == (ABSENT, "c")
    assert added.to_json() == {
        "code": "ENUM_VALUE_ADDED",
        "pointer": "/properties/x/enum",
        "new": "c",
        "breaks": "consumers",
        "severity": "compatible",
    }
    (bound,) = diff_schemas(prop(minimum=0), prop(exclusiveMinimum=0))
    assert (bound.old, bound.new) == ({"minimum": 0}, {"exclusiveMinimum": 0})


def test_every_code_has_a_summary_and_a_case() -> None:
    for code, kind in CHANGE_KINDS.items():
        assert (kind.code, code.isupper(), kind.summary[-1]) == (code, True, ".")
    codes_in_the_table = {code for case in CASES for code, _ in case[3]}
    tested_apart = {"SCHEMA_ADDED", "SCHEMA_REMOVED", "REF_CHANGED"}
    assert set(CHANGE_KINDS) - codes_in_the_table == tested_apart


def test_the_docs_list_every_code_with_the_side_it_breaks() -> None:
    page = (Path(__file__).parents[2] / "docs" / "diff.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([A-Z_]+)` \| (\w+) \|", page, flags=re.MULTILINE)
    assert rows == [(code, str(kind.breaks)) for code, kind in CHANGE_KINDS.items()]


def test_a_recursive_schema_is_compared_once_per_definition() -> None:
    def tree(max_length: int) -> dict[str, Any]:
        node = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "maxLength": max_length},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
        }
        return {"$ref": "#/$defs/node", "$defs": {"node": node}}

    changes = diff_schemas(tree(10), tree(5))
    assert [(c.code, c.pointer) for c in changes] == [
        ("BOUND_TIGHTENED", "/$ref/properties/name/maxLength")
    ]


def test_a_reference_that_resolves_nowhere_is_compared_as_written() -> None:
    old = prop(**{"$ref": "https://elsewhere.example/money.json"})
    new = prop(**{"$ref": "https://elsewhere.example/price.json"})
    assert [c.code for c in diff_schemas(old, new)] == ["REF_CHANGED"]
    assert diff_schemas(old, copy.deepcopy(old)) == ()


def test_references_resolve_into_the_repositorys_other_files(write_repo: WriteRepo) -> None:
    order = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/schemas/common/order.json",
        "x-version": "1.0.0",
        "$defs": {"order_id": {"type": "string", "pattern": "^A-[0-9]{4,}$"}},
    }
    refund = tool_schema(
        "refund",
        properties={
            "order_id": {"$ref": "../common/order.json#/$defs/order_id", "description": "Order."}
        },
        required=["order_id"],
    )
    old = (
        write_repo(
            {"old/schemas/common/order.json": order, "old/schemas/tools/refund.json": refund}
        )
        / "old"
    )
    order["$defs"]["order_id"]["pattern"] = "^A-[0-9]{5,}$"
    new = (
        write_repo(
            {"new/schemas/common/order.json": order, "new/schemas/tools/refund.json": refund}
        )
        / "new"
    )
    diff = diff_repositories(Repository.load(old), Repository.load(new))
    found = {f.file: [(c.code, c.pointer) for c in f.changes] for f in diff.files}
    assert found == {
        "schemas/common/order.json": [("PATTERN_CHANGED", "/$defs/order_id/pattern")],
        "schemas/tools/refund.json": [("PATTERN_CHANGED", "/properties/order_id/$ref/pattern")],
    }
    assert [f.role for f in diff.files] == [Role.SHARED, Role.INPUT]


def test_files_added_and_removed_are_listed(write_repo: WriteRepo) -> None:
    old = Repository.load(write_repo({"old/schemas/tools/a.json": tool_schema("a")}) / "old")
    new = Repository.load(write_repo({"new/schemas/tools/b.json": tool_schema("b")}) / "new")
    diff = diff_repositories(old, new)
    assert [(f.file, f.status, f.breaking) for f in diff.files] == [
        ("schemas/tools/a.json", FileStatus.REMOVED, True),
        ("schemas/tools/b.json", FileStatus.ADDED, False),
    ]
    assert diff.to_json()["counts"] == {"breaking": 1, "compatible": 1, "annotation": 0}


# --- x-version ------------------------------------------------------------------------------------


def file_diff(old_version: str, new_version: str, code: str) -> SchemaDiff:
    (change,) = [c for c in diff_schemas(*SAMPLES[code], role=Role.INPUT) if c.code == code]
    return SchemaDiff(
        "schemas/tools/t.json", Role.INPUT, FileStatus.CHANGED, (change,), old_version, new_version
    )


SAMPLES = {
    "REQUIRED_ADDED": (obj(a=STRING), obj("a", a=STRING)),
    "ENUM_VALUE_ADDED": (prop(enum=["a"]), prop(enum=["a", "b"])),
    "ANNOTATION_CHANGED": (prop(description="a"), prop(description="b")),
}


@pytest.mark.parametrize(
    ("old", "new", "code", "problem"),
    [
        ("1.0.0", "1.0.0", "REQUIRED_ADDED", ("SW401", "2.0.0")),
        ("1.4.2", "1.5.0", "REQUIRED_ADDED", ("SW401", "2.0.0")),
        ("1.4.2", "2.0.0", "REQUIRED_ADDED", None),
        ("1.4.2", "2.0.0-rc.1", "REQUIRED_ADDED", None),
        ("0.3.1", "0.4.0", "REQUIRED_ADDED", None),
        ("0.3.1", "0.3.2", "REQUIRED_ADDED", ("SW401", "0.4.0")),
        ("1.2.3", "1.2.3", "ENUM_VALUE_ADDED", ("SW402", "1.3.0")),
        ("1.2.3", "1.2.2", "ENUM_VALUE_ADDED", ("SW402", "1.3.0")),
        ("1.2.3", "1.2.4", "ENUM_VALUE_ADDED", None),
        ("1.2.3", "1.2.3", "ANNOTATION_CHANGED", ("SW402", "1.2.4")),
        ("1.2.3", "1.2.3-fix", "ANNOTATION_CHANGED", None),
        ("one", "1.0.0", "REQUIRED_ADDED", None),
    ],
)
def test_a_breaking_change_needs_a_major_bump_and_any_change_some_bump(
    old: str, new: str, code: str, problem: tuple[str, str] | None
) -> None:
    assert file_diff(old, new, code).version_problem == problem


def test_version_findings_point_at_the_x_version() -> None:
    files = (
        file_diff("1.0.0", "1.1.0", "REQUIRED_ADDED"),
        file_diff("1.0.0", "1.0.0", "ENUM_VALUE_ADDED"),
    )
    diff = RepositoryDiff(files, since="main")
    findings = list(version_findings(diff))
    assert [(f.rule.id, f.pointer, f.severity) for f in findings] == [
        ("SW401", "/x-version", "error"),
        ("SW402", "/x-version", "warning"),
    ]
    assert "REQUIRED_ADDED at /required" in findings[0].message
    assert findings[0].hint == 'set "x-version": "2.0.0", or undo the change'


# --- properties -----------------------------------------------------------------------------------

names = st.sampled_from(["a", "b", "city", "x-y"])
leaves = st.one_of(
    st.booleans(),
    st.builds(dict, type=st.sampled_from(["string", "integer", "number", "null", "boolean"])),
    st.builds(dict, enum=st.lists(st.integers(0, 3) | st.text(max_size=2), min_size=1, max_size=3)),
    st.builds(
        dict,
        type=st.just("string"),
        pattern=st.sampled_from(["^a", "b$"]),
        maxLength=st.integers(0, 9),
    ),
    st.builds(dict, minimum=st.integers(-5, 5), exclusiveMaximum=st.floats(0, 9)),
    st.builds(dict, **{"$ref": st.just("#/$defs/shared")}),
)


def _composites(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    objects = st.builds(
        lambda properties, closed: {
            "type": "object",
            "properties": properties,
            "required": sorted(properties)[:1],
            "additionalProperties": closed,
        },
        st.dictionaries(names, children, max_size=3),
        st.booleans() | children,
    )
    arrays = st.builds(
        lambda items, unique: {"type": "array", "items": items, "uniqueItems": unique},
        children,
        st.booleans(),
    )
    combined = st.builds(
        lambda keyword, branches: {keyword: branches},
        st.sampled_from(["anyOf", "oneOf", "allOf"]),
        st.lists(children, min_size=1, max_size=3),
    )
    return objects | arrays | combined | st.builds(lambda child: {"not": child}, children)


schemas = st.builds(
    lambda root, shared: {**root, "$defs": {"shared": shared}} if isinstance(root, dict) else root,
    st.recursive(leaves, _composites, max_leaves=12),
    st.recursive(
        leaves.filter(lambda s: not isinstance(s, dict) or "$ref" not in s),
        _composites,
        max_leaves=4,
    ),
)


@pytest.mark.slow
@given(schemas)
@settings(max_examples=300, deadline=None)
def test_a_schema_has_no_changes_from_itself(schema: Any) -> None:
    assert diff_schemas(schema, copy.deepcopy(schema)) == ()
    assert diff_schemas(schema, schema) == ()


ANNOTATIONS = st.fixed_dictionaries(
    {},
    optional={
        "title": st.text(max_size=5),
        "description": st.text(max_size=9),
        "examples": st.lists(st.integers(), max_size=2),
        "default": st.none() | st.integers(),
        "$comment": st.text(max_size=5),
        "deprecated": st.booleans(),
        "x-ui": st.text(max_size=3),
    },
)
_HOLDS_ONE = ("items", "not", "additionalProperties")
_HOLDS_MANY = ("anyOf", "oneOf", "allOf")
_HOLDS_NAMED = ("properties", "$defs")


def annotated(schema: Any, draw: Any) -> Any:
    """``schema`` with annotations added to some of its subschemas (``true`` becomes an
    annotated empty schema); ``false`` stays, having nothing to annotate."""
    if schema is False:
        return schema
    result = {} if schema is True else dict(schema)
    for keyword in _HOLDS_ONE:
        if keyword in result:
            result[keyword] = annotated(result[keyword], draw)
    for keyword in _HOLDS_MANY:
        if keyword in result:
            result[keyword] = [annotated(branch, draw) for branch in result[keyword]]
    for keyword in _HOLDS_NAMED:
        if keyword in result:
            result[keyword] = {k: annotated(v, draw) for k, v in result[keyword].items()}
    added = draw(ANNOTATIONS)
    return {**added, **result} if (added or schema is not True) else schema


@pytest.mark.slow
@given(schemas, st.data(), st.sampled_from(list(Role)))
@settings(max_examples=300, deadline=None)
def test_adding_annotations_is_never_breaking(schema: Any, data: st.DataObject, role: Role) -> None:
    changes = diff_schemas(schema, annotated(schema, data.draw), role=role)
    assert {change.code for change in changes} <= {"ANNOTATION_CHANGED"}
    assert all(change.severity is ANNOTATION for change in changes)


@pytest.mark.slow
@given(schemas, schemas, st.sampled_from(list(Role)))
@settings(max_examples=300, deadline=None)
def test_any_two_schemas_compare_into_known_codes(old: Any, new: Any, role: Role) -> None:
    for change in diff_schemas(old, new, role=role):
        assert change.kind.breaks is change.breaks
        assert change.pointer == "" or change.pointer.startswith("/")
        assert (change.severity is ANNOTATION) == change.kind.annotation

"""`project.importers`: each envelope, each normalisation code, malformed input, real corpora."""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemawire._json import dumps, load_file
from schemawire.errors import ErrorCode, InputError, UsageError
from schemawire.project.importers import (
    ImportedTool,
    Normalisation,
    NormalisationCode,
    import_anthropic,
    import_mcp,
    import_openai,
    import_tools,
    normalise_schema,
)
from tests.project.corpus import bfcl_tool_lists

Code = NormalisationCode
DRAFT = "https://json-schema.org/draft/2020-12/schema"
MCP_CAPTURES = Path(__file__).parents[1] / "data" / "mcp-tools"
WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "A city name."}},
    "required": ["city"],
    "additionalProperties": False,
}
Importer = Callable[..., tuple[ImportedTool, ...]]


def header(name: str = "t", *, output: bool = False) -> dict[str, Any]:
    stem = f"{name}.output" if output else name
    return {
        "$schema": DRAFT,
        "$id": f"https://example.com/schemas/tools/{stem}.json",
        "x-version": "1.0.0",
    }


def one(tools: tuple[ImportedTool, ...]) -> ImportedTool:
    assert len(tools) == 1
    return tools[0]


def bare(parameters: Any, name: str = "t") -> ImportedTool:
    """A bare function object, as BFCL and similar collections write them."""
    return one(import_openai([{"name": name, "parameters": parameters}]))


def same(actual: Any, expected: Any) -> bool:
    """Equal, key order included: the order is what a file shows."""
    return dumps(actual) == dumps(expected)


def notes(tool: ImportedTool) -> list[tuple[str, str]]:
    return [(note.code, note.pointer) for note in tool.notes]


def refused(call: Callable[[], object]) -> InputError:
    with pytest.raises(InputError) as caught:
        call()
    assert caught.value.code == ErrorCode.SCHEMA_INVALID
    return caught.value


# --- the three envelopes ----------------------------------------------------------------------


def test_imports_an_mcp_tools_list_result_with_title_output_and_annotations() -> None:
    result = {
        "tools": [
            {
                "name": "get_weather",
                "title": "Weather",
                "description": "Current weather for a city.",
                "inputSchema": WEATHER,
                "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}},
                "annotations": {"readOnlyHint": True, "openWorldHint": False},
            }
        ],
        "nextCursor": "page-2",
    }
    tool = one(import_mcp(result, id_base="https://acme.dev/", version="2.1.0"))
    base = "https://acme.dev/schemas/tools/get_weather"
    assert same(
        tool.schema,
        {
            "$schema": DRAFT,
            "$id": f"{base}.json",
            "x-version": "2.1.0",
            "title": "Weather",
            "description": "Current weather for a city.",
            **WEATHER,
            "x-read-only": True,
            "x-open-world": False,
        },
    )
    assert same(
        tool.output_schema,
        {
            "$schema": DRAFT,
            "$id": f"{base}.output.json",
            "x-version": "2.1.0",
            "type": "object",
            "properties": {"temp": {"type": "number"}},
        },
    )
    assert tool.annotations == {"x-read-only": True, "x-open-world": False}
    assert (tool.name, tool.file_name, tool.notes) == ("get_weather", "get_weather", ())


def test_accepts_the_mcp_tools_as_a_bare_list_or_inside_a_json_rpc_response() -> None:
    tool = {"name": "t", "inputSchema": WEATHER}
    response = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}
    assert import_mcp([tool]) == import_mcp(response) == import_mcp({"tools": [tool]})


def test_uses_the_mcp_annotation_title_when_the_tool_has_no_title() -> None:
    tool = one(import_mcp([{"name": "t", "inputSchema": WEATHER, "annotations": {"title": "T"}}]))
    assert tool.schema["title"] == "T"
    assert tool.notes == ()


def test_reads_openai_chat_responses_and_bare_function_tools_alike() -> None:
    function = {"name": "t", "description": "Weather.", "parameters": WEATHER}
    chat = import_openai([{"type": "function", "function": function}])
    responses = import_openai([{"type": "function", **function}])
    assert chat == responses == import_openai([function])
    assert same(one(chat).schema, {**header(), "description": "Weather.", **WEATHER})
    assert one(chat).output_schema is None


def test_reads_the_responses_output_schema_and_the_bfcl_response_as_the_output_schema() -> None:
    output = {"type": "object", "properties": {"temp": {"type": "number"}}}
    responses = one(
        import_openai(
            [{"type": "function", "name": "t", "parameters": WEATHER, "output_schema": output}]
        )
    )
    bfcl = one(import_openai([{"name": "t", "parameters": WEATHER, "response": output}]))
    assert responses.output_schema == bfcl.output_schema == {**header(output=True), **output}


def test_imports_anthropic_custom_tools() -> None:
    tools = [{"type": "custom", "name": "t", "description": "Weather.", "input_schema": WEATHER}]
    tool = one(import_anthropic(tools))
    assert same(tool.schema, {**header(), "description": "Weather.", **WEATHER})
    assert (tool.output_schema, tool.annotations, tool.notes) == (None, {}, ())


def test_import_tools_dispatches_on_the_source_and_passes_the_options() -> None:
    tools = [{"name": "t", "input_schema": WEATHER}]
    expected = import_anthropic(tools, version="3.0.0")
    assert import_tools("anthropic", tools, version="3.0.0") == expected


def test_import_tools_refuses_an_unknown_source() -> None:
    with pytest.raises(UsageError):
        import_tools("gemini", [])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("id_base", "version"),
    [("https://acme.dev", "1.0.0"), ("https://acme.dev/", "1.0"), ("https://acme.dev/", "v1.0.0")],
)
def test_refuses_an_id_base_without_a_trailing_slash_and_a_version_that_is_not_semver(
    id_base: str, version: str
) -> None:
    with pytest.raises(UsageError):
        import_openai([], id_base=id_base, version=version)


def test_leaves_the_input_untouched() -> None:
    tools: Any = [
        {"name": "t", "parameters": {"type": "dict", "properties": {"a": {"type": "int"}}}}
    ]
    before = dumps(tools)
    import_openai(tools)
    assert dumps(tools) == before


def test_keeps_a_name_with_dots_as_the_file_name() -> None:
    tool = bare(WEATHER, name="math.factorial")
    assert (tool.file_name, tool.notes) == ("math.factorial", ())
    assert tool.schema["$id"] == "https://example.com/schemas/tools/math.factorial.json"


# --- one test per normalisation code ----------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "standard"),
    [
        ("dict", {"type": "object"}),
        ("HashMap", {"type": "object"}),
        ("map", {"type": "object"}),
        ("float", {"type": "number"}),
        ("double", {"type": "number"}),
        ("int", {"type": "integer"}),
        ("long", {"type": "integer"}),
        ("tuple", {"type": "array"}),
        ("list", {"type": "array"}),
        ("Array", {"type": "array"}),
        ("ArrayList", {"type": "array"}),
        ("String", {"type": "string"}),
        ("str", {"type": "string"}),
        ("char", {"type": "string"}),
        ("Boolean", {"type": "boolean"}),
        ("bool", {"type": "boolean"}),
        (["str", "None"], {"type": ["string", "null"]}),
        ("List[str]", {"type": "array", "items": {"type": "string"}}),
        (
            "list[list[int | bool]]",
            {
                "type": "array",
                "items": {"type": "array", "items": {"type": ["integer", "boolean"]}},
            },
        ),
        ("Dict[str, float]", {"type": "object", "additionalProperties": {"type": "number"}}),
        ("Dict[str, Any]", {"type": "object"}),
        ("Tuple[float, ...]", {"type": "array", "items": {"type": "number"}}),
        ("Optional[int]", {"type": ["integer", "null"]}),
        (
            "Union[int, List[str]]",
            {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "string"}}]},
        ),
    ],
)
def test_renames_the_type_names_of_function_calling_collections(
    dialect: Any, standard: dict[str, Any]
) -> None:
    tool = bare({"type": "object", "properties": {"a": {"type": dialect, "description": "A."}}})
    assert same(tool.schema["properties"]["a"], {**standard, "description": "A."})
    assert notes(tool) == [(Code.TYPE_RENAMED, "/properties/a/type")]


def test_renames_dict_at_the_root_and_keeps_the_items_a_tuple_already_has() -> None:
    tool = bare(
        {
            "type": "dict",
            "properties": {"xy": {"type": "tuple", "items": {"type": "float"}}},
            "required": ["xy"],
        }
    )
    assert same(
        tool.schema,
        {
            **header(),
            "type": "object",
            "properties": {"xy": {"type": "array", "items": {"type": "number"}}},
            "required": ["xy"],
        },
    )
    assert notes(tool) == [
        (Code.TYPE_RENAMED, "/type"),
        (Code.TYPE_RENAMED, "/properties/xy/type"),
        (Code.TYPE_RENAMED, "/properties/xy/items/type"),
    ]


@pytest.mark.parametrize("dialect", ["any", "", "Any", "IResultSetController", "List[", "int, x"])
def test_removes_a_type_that_accepts_any_value_or_names_no_known_type(dialect: str) -> None:
    tool = bare({"type": "object", "properties": {"a": {"type": dialect, "description": "A."}}})
    assert tool.schema["properties"]["a"] == {"description": "A."}
    assert notes(tool) == [(Code.TYPE_REMOVED, "/properties/a/type")]


@pytest.mark.parametrize(
    ("flag", "required"),
    [
        ({"optional": True}, ["a"]),
        ({"optional": "True"}, ["a"]),
        ({"optional": "yes"}, ["a"]),
        ({"optional": False}, ["a", "b"]),
        ({"required": True}, ["a", "b"]),
        ({"required": "false"}, ["a"]),
    ],
)
def test_moves_per_property_optional_and_required_flags_into_required(
    flag: dict[str, Any], required: list[str]
) -> None:
    tool = bare(
        {
            "type": "object",
            "required": ["a"],
            "properties": {"a": {"type": "string"}, "b": {"type": "string", **flag}},
        }
    )
    assert same(
        tool.schema,
        {
            **header(),
            "type": "object",
            "required": required,
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        },
    )
    assert notes(tool) == [(Code.OPTIONAL_FLAG_MOVED, "/properties/b")]


def test_a_flag_wins_over_the_required_list_it_contradicts() -> None:
    tool = bare(
        {
            "type": "dict",
            "required": ["genre", "n"],
            "properties": {"genre": {"type": "string"}, "n": {"type": "integer", "optional": True}},
        }
    )
    assert tool.schema["required"] == ["genre"]
    assert (Code.OPTIONAL_FLAG_MOVED, "/properties/n") in notes(tool)


def test_moves_an_optional_list_and_a_type_that_says_optional_into_required() -> None:
    tool = bare(
        {
            "type": "object",
            "required": ["a", "b"],
            "optional": ["b"],
            "properties": {
                "a": {"type": "string, optional"},
                "b": {"type": "string"},
                "c": {
                    "type": "object",
                    "required": True,
                    "properties": {"d": {"type": "str", "required": True}},
                },
            },
        }
    )
    assert tool.schema["required"] == ["c"]
    assert tool.schema["properties"]["c"] == {
        "type": "object",
        "properties": {"d": {"type": "string"}},
        "required": ["d"],
    }
    assert [code for code, _ in notes(tool)].count(Code.OPTIONAL_FLAG_MOVED) == 4


def test_adds_the_object_type_to_a_root_without_one() -> None:
    tool = bare({"properties": {"a": {"type": "string"}}})
    assert same(
        tool.schema, {**header(), "type": "object", "properties": {"a": {"type": "string"}}}
    )
    assert notes(tool) == [(Code.ROOT_TYPE_ADDED, "/type")]


@pytest.mark.parametrize(
    ("importer", "tool"),
    [
        (import_openai, {"type": "function", "function": {"name": "t"}}),
        (import_openai, {"type": "function", "name": "t", "parameters": None, "strict": None}),
        (import_anthropic, {"name": "t"}),
        (import_mcp, {"name": "t"}),
    ],
)
def test_gives_a_tool_without_parameters_an_object_with_no_properties(
    importer: Importer, tool: dict[str, Any]
) -> None:
    imported = one(importer([tool]))
    assert same(
        imported.schema,
        {**header(), "type": "object", "properties": {}, "additionalProperties": False},
    )
    assert notes(imported) == [(Code.PARAMETERS_MISSING, "")]


def test_wraps_an_xlam_map_of_parameters_into_an_object() -> None:
    parameters = {
        "pid": {"description": "The post ID.", "type": "str", "default": "1552735248026411010"},
        "count": {"description": "How many.", "type": "int, optional", "default": 40},
        "type": {"description": "A parameter called type.", "type": "List[str], optional"},
    }
    tool = bare(parameters)
    assert same(
        tool.schema,
        {
            **header(),
            "type": "object",
            "properties": {
                "pid": {
                    "description": "The post ID.",
                    "type": "string",
                    "default": "1552735248026411010",
                },
                "count": {"description": "How many.", "type": "integer", "default": 40},
                "type": {
                    "description": "A parameter called type.",
                    "type": "array",
                    "items": {"type": "string"},
                },
            },
            "required": ["pid"],
        },
    )
    assert notes(tool) == [
        (Code.PARAMETERS_WRAPPED, ""),
        (Code.TYPE_RENAMED, "/properties/pid/type"),
        (Code.TYPE_RENAMED, "/properties/count/type"),
        (Code.TYPE_RENAMED, "/properties/type/type"),
        (Code.OPTIONAL_FLAG_MOVED, "/properties/count"),
        (Code.OPTIONAL_FLAG_MOVED, "/properties/type"),
    ]


@pytest.mark.parametrize(
    ("name", "file_name"),
    [
        ("repo/search", "repo_search"),
        ("a:b*c?", "a_b_c_"),
        ("end.", "end_"),
        ("con", "_con"),
        ("NUL.txt", "_NUL.txt"),
        ("report.output", "report_output"),
    ],
)
def test_changes_the_file_name_of_a_name_that_cannot_be_one(name: str, file_name: str) -> None:
    tool = bare(WEATHER, name=name)
    assert (tool.name, tool.file_name) == (name, file_name)
    assert tool.schema["$id"] == f"https://example.com/schemas/tools/{file_name}.json"
    assert notes(tool) == [(Code.NAME_CHANGED_FOR_FILE, "/$id")]


def test_reads_a_draft_07_schema_as_draft_2020_12() -> None:
    draft_07 = {"$schema": "http://json-schema.org/draft-07/schema#", **WEATHER}
    tool = one(import_mcp([{"name": "t", "inputSchema": draft_07, "outputSchema": draft_07}]))
    assert same(tool.schema, {**header(), **WEATHER})
    assert [(n.code, n.pointer, n.document) for n in tool.notes] == [
        (Code.DIALECT_CHANGED, "/$schema", "input"),
        (Code.DIALECT_CHANGED, "/$schema", "output"),
    ]


def test_turns_list_form_items_into_prefix_items() -> None:
    tool = bare(
        {
            "type": "object",
            "properties": {
                "pair": {
                    "type": "array",
                    "items": [{"type": "string"}, {"type": "float"}],
                    "additionalItems": False,
                }
            },
        }
    )
    assert same(
        tool.schema["properties"]["pair"],
        {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "items": False},
    )
    assert notes(tool) == [
        (Code.TYPE_RENAMED, "/properties/pair/prefixItems/1/type"),
        (Code.ITEMS_TO_PREFIX_ITEMS, "/properties/pair/prefixItems"),
    ]


def test_turns_draft_04_boolean_exclusive_bounds_into_numbers() -> None:
    tool = bare(
        {
            "type": "object",
            "properties": {
                "n": {
                    "type": "number",
                    "minimum": 0,
                    "exclusiveMinimum": True,
                    "maximum": 9,
                    "exclusiveMaximum": False,
                }
            },
        }
    )
    assert same(
        tool.schema["properties"]["n"], {"type": "number", "exclusiveMinimum": 0, "maximum": 9}
    )
    assert notes(tool) == [
        (Code.EXCLUSIVE_BOUND_CONVERTED, "/properties/n/exclusiveMinimum"),
        (Code.EXCLUSIVE_BOUND_CONVERTED, "/properties/n/exclusiveMaximum"),
    ]


def test_notes_the_header_keywords_of_the_schema_that_give_way_to_the_tool() -> None:
    schema = {
        "$id": "urn:old",
        "title": "Args",
        "description": "Same.",
        **WEATHER,
        "x-read-only": False,
    }
    tool = one(
        import_mcp(
            [
                {
                    "name": "t",
                    "title": "T",
                    "description": "Same.",
                    "inputSchema": schema,
                    "annotations": {"readOnlyHint": True},
                }
            ]
        )
    )
    assert same(
        tool.schema,
        {**header(), "title": "T", "description": "Same.", **WEATHER, "x-read-only": True},
    )
    assert notes(tool) == [
        (Code.KEYWORD_REPLACED, "/$id"),
        (Code.KEYWORD_REPLACED, "/title"),
        (Code.KEYWORD_REPLACED, "/x-read-only"),
    ]


def test_keeps_the_schema_title_and_description_when_the_tool_has_none() -> None:
    tool = bare({"title": "Args", "description": "From the schema.", **WEATHER})
    assert same(
        tool.schema, {**header(), "title": "Args", "description": "From the schema.", **WEATHER}
    )
    assert tool.notes == ()


def test_moves_anthropic_input_examples_into_examples() -> None:
    tool = one(
        import_anthropic(
            [{"name": "t", "input_schema": WEATHER, "input_examples": [{"city": "Oslo"}]}]
        )
    )
    assert same(tool.schema, {**header(), **WEATHER, "examples": [{"city": "Oslo"}]})
    assert notes(tool) == [(Code.EXAMPLES_MOVED, "/examples")]


@pytest.mark.parametrize(
    ("importer", "tool", "field"),
    [
        (
            import_openai,
            {"type": "function", "function": {"name": "t", "parameters": WEATHER, "strict": True}},
            "strict",
        ),
        (
            import_anthropic,
            {"name": "t", "input_schema": WEATHER, "cache_control": {"type": "ephemeral"}},
            "cache_control",
        ),
        (import_mcp, {"name": "t", "inputSchema": WEATHER, "_meta": {"k": 1}}, "_meta"),
        (
            import_mcp,
            {"name": "t", "inputSchema": WEATHER, "annotations": {"title": "A", "x": 1}},
            "annotations.x",
        ),
    ],
)
def test_notes_every_envelope_field_that_has_no_place_in_the_schema(
    importer: Importer, tool: dict[str, Any], field: str
) -> None:
    imported = one(importer([tool]))
    assert notes(imported) == [(Code.FIELD_DROPPED, "")]
    assert json.dumps(field) in imported.notes[0].detail


def test_keeps_defaults_even_where_they_do_not_fit_the_type() -> None:
    parameters = {
        "type": "dict",
        "default": "location",
        "properties": {"period": {"type": "integer", "optional": "true", "default": "5 years"}},
    }
    tool = bare(parameters)
    assert tool.schema["default"] == "location"
    assert tool.schema["properties"]["period"] == {"type": "integer", "default": "5 years"}


# --- normalise_schema -------------------------------------------------------------------------


def test_normalise_schema_fixes_the_dialect_and_adds_no_header() -> None:
    schema, changes = normalise_schema({"type": "dict", "properties": {"a": {"type": "any"}}})
    assert schema == {"type": "object", "properties": {"a": {}}}
    assert changes == (
        Normalisation("/type", Code.TYPE_RENAMED, '"type": "dict" became "type": "object"'),
        Normalisation(
            "/properties/a/type", Code.TYPE_REMOVED, '"type": "any" accepts any value: removed'
        ),
    )


def test_normalise_schema_gives_a_standard_schema_back_unchanged() -> None:
    assert normalise_schema(WEATHER) == (WEATHER, ())


# --- malformed input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("importer", "tools", "pointer"),
    [
        (import_openai, {"name": "t"}, ""),
        (import_mcp, {"tools": "none"}, "/tools"),
        (import_openai, ["t"], "/0"),
        (import_openai, [{"description": "no name"}], "/0"),
        (import_openai, [{"name": ""}], "/0/name"),
        (import_openai, [{"name": 7}], "/0/name"),
        (import_openai, [{"name": "t", "description": 7}], "/0/description"),
        (import_openai, [{"name": "t", "parameters": "a string"}], "/0/parameters"),
        (import_openai, [{"name": "t", "parameters": []}], "/0/parameters"),
        (import_openai, [{"type": "function", "function": "t"}], "/0/function"),
        (import_openai, [{"type": "web_search"}], "/0/type"),
        (import_anthropic, [{"type": "bash_20250124", "name": "bash"}], "/0/type"),
        (import_anthropic, [{"name": "t", "input_examples": {}}], "/0/input_examples"),
        (import_mcp, [{"name": "t", "annotations": []}], "/0/annotations"),
        (
            import_mcp,
            [{"name": "t", "annotations": {"readOnlyHint": "yes"}}],
            "/0/annotations/readOnlyHint",
        ),
        (import_mcp, [{"name": "t", "outputSchema": True}], "/0/outputSchema"),
        (import_openai, [{"name": "t", "parameters": {"type": "string"}}], "/0/parameters/type"),
        (
            import_openai,
            [
                {
                    "name": "t",
                    "parameters": {
                        "type": "object",
                        "properties": {"a": {"type": "string", "minLength": -1}},
                    },
                }
            ],
            "/0/parameters/properties/a/minLength",
        ),
        (
            import_openai,
            [
                {
                    "type": "function",
                    "function": {
                        "name": "t",
                        "parameters": {"type": "object", "properties": {"a": "string"}},
                    },
                }
            ],
            "/0/function/parameters/properties/a",
        ),
        (
            import_openai,
            [{"name": "t", "parameters": {"type": "object", "required": True}}],
            "/0/parameters/required",
        ),
        (
            import_openai,
            [{"name": "t", "parameters": {"a": {"type": "str", "enum": 1}}}],
            "/0/parameters/a/enum",
        ),
        (
            import_mcp,
            [{"name": "t", "inputSchema": {"$schema": "urn:mine", "type": "object"}}],
            "/0/inputSchema/$schema",
        ),
        (import_openai, [{"name": "t", "parameters": WEATHER}, {"name": "t"}], "/1/name"),
        (import_openai, [{"name": "Find"}, {"name": "find"}], "/1/name"),
        (import_openai, [{"name": "a/b"}, {"name": "a_b"}], "/1/name"),
        (
            import_openai,
            [{"name": "t", "parameters": {"type": "object", "default": float("nan")}}],
            "/0/parameters/default",
        ),
        (
            import_openai,
            [{"name": "t", "parameters": {"type": "object", "enum": [{1: "a"}]}}],
            "/0/parameters/enum/0",
        ),
        (
            import_openai,
            [{"name": "t", "parameters": {"type": "object", "const": (1, 2)}}],
            "/0/parameters/const",
        ),
    ],
)
def test_refuses_malformed_input_with_a_pointer_to_the_bad_element(
    importer: Importer, tools: Any, pointer: str
) -> None:
    assert refused(lambda: importer(tools)).pointer == pointer


def test_refuses_input_nested_too_deep_instead_of_overflowing_the_stack() -> None:
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(2000):
        deep = {"type": "object", "properties": {"a": deep}}
    refused(lambda: import_openai([{"name": "t", "parameters": deep}]))


def test_refuses_a_schema_that_cannot_be_normalised() -> None:
    assert refused(lambda: normalise_schema([])).pointer == ""
    assert refused(lambda: normalise_schema({"minimum": "0"})).pointer == "/minimum"


# Scalars that mean something to the importers, among plain ones.
MEANINGFUL = st.sampled_from(
    ["dict", "int, optional", "List[str]", "any", "object", "true", "Dict[str, int]", "urn:x"]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text("[]|,. intdaybOL", max_size=8) | MEANINGFUL,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["type", "properties", "items", "required", "optional", "name", "$schema", "a"]
            ),
            children,
            max_size=3,
        )
    ),
    max_leaves=12,
)


@pytest.mark.slow
@given(
    st.lists(
        st.fixed_dictionaries(
            {"name": st.sampled_from(["a", "b", "c/d"])},
            optional={"parameters": JSON, "input_schema": JSON, "inputSchema": JSON, "type": JSON},
        ),
        max_size=3,
    )
)
@settings(max_examples=300)
def test_raises_nothing_but_input_error_on_arbitrary_tools(tools: list[dict[str, Any]]) -> None:
    for importer in (import_openai, import_anthropic, import_mcp):
        outcome = imported_or_refused(importer, tools)
        if isinstance(outcome, InputError):
            assert outcome.code == ErrorCode.SCHEMA_INVALID
        else:
            assert all(jsonschema_rs.meta.is_valid(tool.schema) for tool in outcome)


def imported_or_refused(importer: Importer, tools: Any) -> tuple[ImportedTool, ...] | InputError:
    try:
        return importer(tools)
    except InputError as error:
        return error


# --- standard schemas come through unchanged --------------------------------------------------

NAMES = st.sampled_from(["city", "optional", "required", "type", "items", "a.b", "x y"]) | st.text(
    string.ascii_letters, min_size=1, max_size=6
)
TEXT = st.text(max_size=8)


def _leaf_schemas() -> st.SearchStrategy[Any]:
    string_schema = st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "description": TEXT,
            "minLength": st.integers(0, 3),
            "pattern": st.just("^[a-z]+$"),
            "format": st.sampled_from(["date", "email"]),
            "default": TEXT,
            "enum": st.lists(TEXT, min_size=1, max_size=3, unique=True),
        },
    )
    number = st.fixed_dictionaries(
        {"type": st.sampled_from(["number", "integer"])},
        optional={
            "minimum": st.integers(-5, 0),
            "exclusiveMaximum": st.integers(1, 9),
            "default": st.integers(0, 3),
            "multipleOf": st.just(2),
        },
    )
    other = st.fixed_dictionaries(
        {"type": st.sampled_from(["boolean", "null", ["string", "null"], ["integer", "boolean"]])}
    )
    return (
        string_schema
        | number
        | other
        | st.just({})
        | st.booleans()
        | st.fixed_dictionaries({"const": TEXT})
        | st.fixed_dictionaries({"$ref": st.just("#/$defs/code")})
    )


def _objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    def shaped(properties: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
        names = sorted(properties)
        return st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.just(properties)},
            optional={
                "required": st.lists(st.sampled_from(names), unique=True) if names else st.just([]),
                "additionalProperties": st.booleans() | children,
                "description": TEXT,
                "minProperties": st.integers(0, 2),
            },
        )

    return st.dictionaries(NAMES, children, max_size=4).flatmap(shaped)


def _standard_schemas(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return (
        _objects(children)
        | st.fixed_dictionaries(
            {"type": st.just("array"), "items": children},
            optional={"minItems": st.integers(0, 2), "uniqueItems": st.just(True)},
        )
        | st.fixed_dictionaries({"anyOf": st.lists(children, min_size=1, max_size=3)})
        | st.fixed_dictionaries({"not": children})
    )


ROOTS = _objects(st.recursive(_leaf_schemas(), _standard_schemas, max_leaves=8)).map(
    lambda root: {
        **{k: v for k, v in root.items() if k != "description"},
        "$defs": {"code": {"type": "string"}},
    }
)


@pytest.mark.slow
@given(ROOTS)
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
def test_a_standard_object_schema_comes_through_unchanged_but_for_the_header(
    schema: dict[str, Any],
) -> None:
    expected = {**header(), "description": "D.", **schema}
    for tool in (
        one(
            import_openai(
                [
                    {
                        "type": "function",
                        "function": {"name": "t", "description": "D.", "parameters": schema},
                    }
                ]
            )
        ),
        one(import_anthropic([{"name": "t", "description": "D.", "input_schema": schema}])),
        one(import_mcp([{"name": "t", "description": "D.", "inputSchema": schema}])),
    ):
        assert same(tool.schema, expected)
        assert tool.notes == ()
    assert normalise_schema(schema) == (schema, ())


# --- real corpora -----------------------------------------------------------------------------


def test_imports_every_captured_mcp_server_with_only_its_dialect_and_envelope_noted() -> None:
    captures = sorted(MCP_CAPTURES.glob("*.json")) if MCP_CAPTURES.is_dir() else []
    results: list[Any] = [load_file(path) for path in captures if path.name != "PROVENANCE.json"]
    assert len(results) == 3, f"captured tools/list results are missing from {MCP_CAPTURES}"
    for result in results:
        for source, tool in zip(result["tools"], import_mcp(result), strict=True):
            assert same(body(tool.schema, tool.annotations), body(source["inputSchema"]))
            if tool.output_schema is not None:
                assert same(body(tool.output_schema), body(source["outputSchema"]))
            assert {note.code for note in tool.notes} <= {Code.DIALECT_CHANGED, Code.FIELD_DROPPED}


def body(schema: dict[str, Any], annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """``schema`` without its header (and the annotations the importer wrote into it)."""
    left_out = {"$schema", "$id", "x-version", "title", "description", *(annotations or {})}
    return {key: value for key, value in schema.items() if key not in left_out}


@pytest.mark.slow
def test_imports_every_tool_of_the_berkeley_function_calling_leaderboard() -> None:
    imported = 0
    for where, tools in bfcl_tool_lists():
        try:
            results = import_openai(tools)
        except InputError as error:  # pragma: no cover - says which record failed
            pytest.fail(f"{where}: {error}")
        for tool in results:
            assert jsonschema_rs.meta.is_valid(tool.schema), where
            assert tool.schema["type"] == "object", where
            assert tool.output_schema is None or jsonschema_rs.meta.is_valid(tool.output_schema)
        imported += len(results)
    assert imported > 8000

"""The core types: a tool's description, annotations, id and version come from its schema, in
one place, so a tool built in code reaches every target with its description."""

from __future__ import annotations

import pytest

from schemawire import ToolSpec, UsageError
from schemawire.project import TARGETS, project

WEATHER = {
    "$id": "https://example.com/schemas/tools/get_weather.json",
    "x-version": "2.1.0",
    "x-read-only": True,
    "description": "The weather in a city.",
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_a_spec_reads_what_it_says_from_its_schema() -> None:
    spec = ToolSpec("get_weather", WEATHER)
    assert spec.description == "The weather in a city."
    assert spec.schema_id == "https://example.com/schemas/tools/get_weather.json"
    assert spec.version == "2.1.0"
    assert spec.annotations == {"version": "2.1.0", "read-only": True}


@pytest.mark.parametrize("target", [t for t, info in TARGETS.items() if "tools" in info.kinds])
def test_a_tool_built_in_code_reaches_every_target_with_its_description(target: str) -> None:
    payload = project(ToolSpec("get_weather", WEATHER), target).payload
    assert "The weather in a city." in str(payload)


def test_the_old_description_argument_is_refused_with_where_it_goes() -> None:
    with pytest.raises(UsageError, match='"description"'):
        ToolSpec("get_weather", "The weather in a city.", WEATHER)  # type: ignore[arg-type]

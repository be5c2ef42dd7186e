"""Importing an export gives back the canonical schema wherever the target was lossless for it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from schemawire.project import project
from schemawire.project.importers import import_anthropic, import_mcp, import_openai
from schemawire.schema.repository import Repository
from schemawire.types import ToolSpec
from tests.helpers import EXAMPLES
from tests.project.strategies import tool_schemas
from tests.project.test_project import mcp_specs

HEADER = {"$schema", "$id", "x-version"}
# target, its options, and the importer that reads its payloads back
ROUND_TRIPS = [
    ("mcp", {}, lambda payload: import_mcp([payload])),
    ("openai.chat", {}, lambda payload: import_openai([payload])),
    ("openai.responses", {"strict": False}, lambda payload: import_openai([payload])),
    ("anthropic", {}, lambda payload: import_anthropic([payload])),
]


def body(schema: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if key not in HEADER}


def round_trip(spec: ToolSpec) -> list[str]:
    """The targets that were lossless for ``spec`` but did not give it back on import."""
    broken = []
    for target, options, importer in ROUND_TRIPS:
        projection = project(spec, target, **options)
        if not projection.lossless:
            continue
        (imported,) = importer(projection.payload)
        if body(imported.schema) != body(spec.input_schema):
            broken.append(target)
        if spec.output_schema is not None and target == "mcp":
            assert imported.output_schema is not None
            if body(imported.output_schema) != body(spec.output_schema):
                broken.append("mcp output")
    return broken


def test_example_tools_come_back_from_every_lossless_export() -> None:
    repository = Repository.load(EXAMPLES / "support-desk")
    weather = next(t for t in repository.tools() if t.name == "get_weather")
    assert project(weather, "mcp").lossless
    assert round_trip(weather) == []


def test_real_mcp_tools_come_back() -> None:
    for server in ("everything", "filesystem", "memory"):
        for spec in mcp_specs(server):
            (canonical,) = import_mcp(
                [
                    {
                        "name": spec.name,
                        "inputSchema": spec.input_schema,
                        **({"outputSchema": spec.output_schema} if spec.output_schema else {}),
                    }
                ]
            )
            tool = ToolSpec(canonical.name, canonical.schema, canonical.output_schema)
            assert project(tool, "mcp").lossless, spec.name
            assert round_trip(tool) == [], spec.name


@pytest.mark.slow
@given(tool_schemas())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_tools_come_back_from_every_lossless_export(schema: dict[str, Any]) -> None:
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/schemas/tools/t.json",
        "x-version": "1.0.0",
        **schema,
    }
    assert round_trip(ToolSpec("t", document)) == []

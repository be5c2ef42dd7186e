"""A2A: an Agent Card with one skill per tool, and the schemas in a documented extension.

An A2A skill has no place for a JSON Schema (v1.0: id, name, description, tags, examples, input
and output media types). Each tool therefore loses its schemas in the standard card, which is
reported as ``SCHEMA_NOT_REPRESENTABLE``, and the card carries them in an extension that
schemawire defines: ``capabilities.extensions[]`` with `EXTENSION_URI` and ``params.skills``
mapping each skill id to ``{"input": <schema>, "output": <schema>}`` (references to other files
inlined). Agents that know the extension can validate; the others still see every skill.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemawire._json import dumps
from schemawire.project._draft import NO_DOCUMENTS, Draft
from schemawire.project.mcp import POLICY
from schemawire.types import Projection, ToolSpec

__all__ = ["EXTENSION_URI", "Agent", "agent_card", "project_a2a"]

EXTENSION_URI = "urn:schemawire:a2a:json-schema:v1"
_JSON = ["application/json"]


@dataclass(frozen=True, slots=True)
class Agent:
    """What an Agent Card says about the agent itself (``[export.a2a]`` in the settings)."""

    name: str = "schemawire-agent"
    description: str = "An agent whose skills are checked against JSON Schemas."
    url: str = "http://127.0.0.1:8000/a2a"
    version: str = "1.0.0"


def project_a2a(
    spec: ToolSpec, *, documents: Mapping[str, Any] | None = None, origins: bool = False
) -> Projection:
    """``spec`` as an A2A ``AgentSkill``; its schemas go to the card's extension."""
    draft = Draft("a2a", spec, documents or NO_DOCUMENTS, track_origins=origins)
    schemas = {
        "input": draft.schema(spec.input_schema, POLICY, document="input", at="/x-schemas/input")[0]
    }
    draft.lose(
        "SCHEMA_NOT_REPRESENTABLE",
        "",
        None,
        "an A2A skill has no place for a JSON "
        f"Schema; the card carries it in the {EXTENSION_URI} extension",
    )
    if spec.output_schema is not None:
        schemas["output"] = draft.schema(
            spec.output_schema, POLICY, document="output", at="/x-schemas/output"
        )[0]
        draft.lose(
            "SCHEMA_NOT_REPRESENTABLE",
            "",
            None,
            "an A2A skill has no place for an output schema; the card's extension carries it",
            document="output",
        )
    draft.origins["envelope:description"] = ("input:",)
    skill: dict[str, Any] = {
        "id": spec.name,
        "name": spec.input_schema.get("title") or spec.name,
        "description": spec.description or spec.name,
        "tags": [tag for tag in spec.input_schema.get("x-tags", []) if isinstance(tag, str)]
        or ["tool"],
        "inputModes": list(_JSON),
        "outputModes": list(_JSON),
    }
    examples = spec.input_schema.get("examples")
    if isinstance(examples, list) and examples:
        skill["examples"] = [e if isinstance(e, str) else dumps(e, indent=False) for e in examples]
    return draft.finish({**skill, "x-schemas": schemas}, spec.name)


def agent_card(projections: Sequence[Projection], agent: Agent) -> dict[str, Any]:
    """The Agent Card holding every skill of ``projections`` (made by `project_a2a`)."""
    skills, schemas = [], {}
    for projection in projections:
        skill = dict(projection.payload)
        schemas[skill["id"]] = skill.pop("x-schemas")
        skills.append(skill)
    extension = {
        "uri": EXTENSION_URI,
        "required": False,
        "params": {"skills": schemas},
        "description": "JSON Schemas of each skill's input and output, by skill id (schemawire).",
    }
    return {
        "name": agent.name,
        "description": agent.description,
        "supportedInterfaces": [
            {"url": agent.url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "version": agent.version,
        "capabilities": {"extensions": [extension]},
        "defaultInputModes": list(_JSON),
        "defaultOutputModes": list(_JSON),
        "skills": skills,
    }

"""`schemawire.project`: every target's payload, and every keyword kept or reported lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from schemawire.errors import UsageError
from schemawire.project import TARGETS, project, project_catalogue
from schemawire.project.checkers import check_payload
from schemawire.schema.repository import Repository
from schemawire.types import ToolSpec
from tests.helpers import EXAMPLES
from tests.project.accounting import unaccounted
from tests.project.strategies import tool_schemas

MCP_TOOLS = Path(__file__).parents[1] / "data" / "mcp-tools"
# Every target with each of its option settings.
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("openai.chat", {}),
    ("openai.chat", {"strict": True}),
    ("openai.responses", {"strict": False}),
    ("openai.responses", {}),
    ("openai.response_format", {}),
    ("openai.text_format", {}),
    ("anthropic", {}),
    ("anthropic", {"strict": True}),
    ("gemini", {}),
    ("gemini", {"openapi": True}),
    ("mcp", {"version": "2025-06-18"}),
    ("mcp", {"version": "2025-11-25"}),
    ("mcp", {}),
    ("a2a", {}),
]
# Targets that carry the output schema (so its keywords are accounted for there).
CARRY_OUTPUT = {"gemini", "mcp", "a2a"}


def variant_id(variant: tuple[str, dict[str, Any]]) -> str:
    target, options = variant
    return target + "".join(f"-{k}={v}" for k, v in options.items())


def mcp_specs(server: str) -> list[ToolSpec]:
    tools = json.loads((MCP_TOOLS / f"{server}.json").read_text(encoding="utf-8"))["tools"]
    return [ToolSpec(t["name"], _described(t), t.get("outputSchema")) for t in tools]


def _described(tool: dict[str, Any]) -> dict[str, Any]:
    """A listed tool's input schema, with the tool's description in it (where a spec's is)."""
    if "description" not in tool:
        return dict(tool["inputSchema"])
    return {**tool["inputSchema"], "description": tool["description"]}


def example_specs(target: str) -> tuple[Repository, list[ToolSpec]]:
    repository = Repository.load(EXAMPLES / "support-desk")
    return repository, list(repository.specs(*TARGETS[target].kinds))


@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_example_tools_keep_or_report_every_keyword(variant: tuple[str, dict[str, Any]]) -> None:
    target, options = variant
    repository, specs = example_specs(target)
    for spec in specs:
        projection = project(spec, target, documents=repository.documents, origins=True, **options)
        assert unaccounted(projection, spec, output=target in CARRY_OUTPUT) == []


@pytest.mark.parametrize("server", ["everything", "filesystem", "memory"])
@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_real_mcp_tools_keep_or_report_every_keyword(
    server: str, variant: tuple[str, dict[str, Any]]
) -> None:
    target, options = variant
    for spec in mcp_specs(server):
        projection = project(spec, target, origins=True, **options)
        assert unaccounted(projection, spec, output=target in CARRY_OUTPUT) == [], spec.name


@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_example_payloads_match_their_snapshots(
    variant: tuple[str, dict[str, Any]], snapshot: Any
) -> None:
    target, options = variant
    repository, specs = example_specs(target)
    catalogue = project_catalogue(specs, target, documents=repository.documents, **options)
    losses = {p.name: [loss.to_json() for loss in p.losses] for p in catalogue.projections}
    snapshot(
        f"projections/support-desk/{variant_id(variant)}",
        {"payload": catalogue.payload, "losses": losses},
    )


@pytest.mark.parametrize("server", ["everything", "filesystem", "memory"])
@pytest.mark.parametrize("variant", [v for v in VARIANTS if v[0] != "a2a"], ids=variant_id)
def test_mcp_server_payloads_match_their_snapshots(
    server: str, variant: tuple[str, dict[str, Any]], snapshot: Any
) -> None:
    target, options = variant
    catalogue = project_catalogue(mcp_specs(server), target, **options)
    snapshot(f"projections/mcp-{server}/{variant_id(variant)}", catalogue.payload)


@pytest.mark.slow
@given(tool_schemas())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_schemas_keep_or_report_every_keyword(schema: dict[str, Any]) -> None:
    spec = ToolSpec(name="generated.tool", input_schema=schema)
    for target, options in VARIANTS:
        projection = project(spec, target, origins=True, **options)
        assert unaccounted(projection, spec, output=False) == [], (target, options)


def test_unknown_targets_and_options_are_usage_errors() -> None:
    spec = ToolSpec(name="t", input_schema={"type": "object"})
    with pytest.raises(UsageError, match="unknown target"):
        project(spec, "openai.chatgpt")
    with pytest.raises(UsageError, match="takes no option"):
        project(spec, "gemini", strict=True)
    assert set(TARGETS) == {v[0] for v in VARIANTS}


def checker_options(target: str, options: dict[str, Any]) -> dict[str, Any]:
    return {"version": options["version"]} if "version" in options else {}


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v[0] != "a2a"], ids=variant_id)
def test_every_projection_follows_its_targets_rules(variant: tuple[str, dict[str, Any]]) -> None:
    target, options = variant
    specs = [s for server in ("everything", "filesystem", "memory") for s in mcp_specs(server)]
    repository, examples = example_specs(target)
    for spec in [*specs, *examples]:
        payload = project(spec, target, documents=repository.documents, **options).payload
        assert check_payload(target, payload, **checker_options(target, options)) == (), spec.name


def test_the_agent_card_follows_a2a_rules() -> None:
    repository, specs = example_specs("a2a")
    card = project_catalogue(specs, "a2a", documents=repository.documents).payload
    assert check_payload("a2a", card) == ()


@pytest.mark.slow
@given(tool_schemas())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_projections_follow_their_targets_rules(schema: dict[str, Any]) -> None:
    spec = ToolSpec(name="generated.tool", input_schema=schema)
    for target, options in VARIANTS:
        if target == "a2a":
            continue
        payload = project(spec, target, **options).payload
        assert check_payload(target, payload, **checker_options(target, options)) == (), (
            target,
            options,
            payload,
        )

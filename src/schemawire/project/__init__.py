"""Projections: one canonical schema, every protocol, with an honest loss report.

`project` turns one `ToolSpec` into the exact payload a target takes, with the `Loss` of
everything the target cannot say as the canonical schema does. `project_catalogue` does it for
every tool of one request, makes projected names unique and checks the per-request budgets.

Targets: ``openai.chat`` and ``openai.responses`` (``strict=``), ``openai.response_format`` and
``openai.text_format`` (Structured Outputs, for handoff and state schemas), ``anthropic``
(``strict=``), ``gemini`` (``openapi=``), ``mcp`` (``version=``) and ``a2a``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from schemawire._json import quoted
from schemawire.errors import UsageError
from schemawire.project._limits import TargetLimit, exceeded, measure
from schemawire.project._names import unique_name
from schemawire.project.a2a import Agent, agent_card, project_a2a
from schemawire.project.anthropic import project_anthropic
from schemawire.project.gemini import project_gemini
from schemawire.project.mcp import project_mcp
from schemawire.project.openai import (
    project_chat,
    project_response_format,
    project_responses,
    project_text_format,
)
from schemawire.types import Loss, Projection, ToolSpec

__all__ = [
    "LOSS_CODES",
    "TARGETS",
    "Catalogue",
    "Target",
    "project",
    "project_catalogue",
]

LOSS_CODES = {
    "NAME_RENAMED": "the tool's name is sent under another name (mapped back on the way in)",
    "PROPERTY_KEY_RENAMED": "a property key is sent under another name (mapped back)",
    "DESCRIPTION_TRUNCATED": "the tool's description was cut to the target's limit",
    "KEYWORD_DROPPED": "a keyword the target does not take was left out",
    "CONSTRAINT_TO_DESCRIPTION": "a constraint the target does not take is restated in text",
    "DEFAULT_DROPPED": "a default the target does not take was left out",
    "FORMAT_DROPPED": "a format the target does not take (restated in text)",
    "ENUM_VALUES_DROPPED": "enum values the target cannot list (restated in text)",
    "OPTIONAL_TO_NULLABLE": "an optional property is required and nullable (null = absent)",
    "ONEOF_TO_ANYOF": "oneOf became anyOf: exactly one became at least one",
    "ALLOF_MERGED": "allOf branches were merged into one schema",
    "ROOT_COMBINATOR_DROPPED": "a root anyOf/oneOf was merged into one object",
    "CONST_TO_ENUM": "const became a one-value enum",
    "TYPE_ARRAY_TO_ANYOF": "a list of types became anyOf",
    "TYPE_ARRAY_TO_NULLABLE": "[T, null] became T with nullable: true",
    "TYPE_NARROWED": "an untyped schema (any value) was narrowed to any scalar",
    "REF_INLINED": "a $ref was replaced by the schema it names",
    "REF_SIBLINGS_DROPPED": "a keyword beside a $ref conflicted with the referenced schema",
    "REF_UNRESOLVED": "a $ref names nothing (the repository check reports it too)",
    "DEFINITION_DROPPED": "a definition no longer referenced was left out",
    "DIALECT_TRANSLATED": "a draft-07 keyword was written in draft 2020-12's words",
    "FALSE_SCHEMA_DROPPED": "a false schema (no value allowed) cannot be said by the target",
    "RECURSION_TRUNCATED": "a recursive $ref was cut: the target takes no recursion",
    "MAP_TO_PAIRS": "a map is sent as a list of {key, value} objects (turned back)",
    "MAP_CLOSED": "an object's extra keys are refused: the target takes no open objects",
    "OUTPUT_SCHEMA_DROPPED": "the target has no place for the output schema",
    "OUTPUT_SCHEMA_WRAPPED": "the output schema is wrapped as {result: ...}",
    "SCHEMA_NOT_REPRESENTABLE": "the target has no place for a JSON Schema at all",
    "LIMIT_EXCEEDED": "over a limit of the target: it would refuse the payload",
}


@dataclass(frozen=True, slots=True)
class Target:
    """One target: how to project to it and what it takes.

    Attributes:
        name: the target's name in the API and on the command line.
        kinds: which schemas it takes (``tools``, or ``handoffs`` and ``state``).
        project: the projection function.
        options: the options ``project`` takes besides the spec and the registry.
        name_path: where the payload holds the tool's name.
        limits: per-request budgets, over all tools of one request.
        tool_limit: the most tools one request takes (None: no documented limit).
    """

    name: str
    kinds: tuple[str, ...]
    project: Callable[..., Projection]
    options: tuple[str, ...] = ()
    name_path: tuple[str, ...] = ("name",)
    limits: tuple[TargetLimit, ...] = ()
    tool_limit: int | None = None


_TOOLS, _FORMATS = ("tools",), ("handoffs", "state")
_ANTHROPIC_STRICT = (
    TargetLimit("optional", 24, "Anthropic strict tools: optional parameters per request"),
    TargetLimit("unions", 16, "Anthropic strict tools: parameters with unions per request"),
)

TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            "openai.chat", _TOOLS, project_chat, ("strict",), ("function", "name"), tool_limit=128
        ),
        Target("openai.responses", _TOOLS, project_responses, ("strict",), tool_limit=128),
        Target(
            "openai.response_format", _FORMATS, project_response_format, (), ("json_schema", "name")
        ),
        Target("openai.text_format", _FORMATS, project_text_format),
        Target("anthropic", _TOOLS, project_anthropic, ("strict",), limits=_ANTHROPIC_STRICT),
        Target("gemini", _TOOLS, project_gemini, ("openapi",), tool_limit=128),
        Target("mcp", _TOOLS, project_mcp, ("version",)),
        Target("a2a", _TOOLS, project_a2a),
    )
}


@dataclass(frozen=True, slots=True)
class Catalogue:
    """Every tool of one request, projected: what to send, and what the request as a whole
    loses (names made unique, per-request budgets)."""

    target: str
    projections: tuple[Projection, ...]
    payload: Any
    losses: tuple[Loss, ...] = field(default_factory=tuple)

    @property
    def refusals(self) -> list[Loss]:
        """The losses that make the target refuse the request or one of its tools."""
        return [loss for loss in self.losses if loss.blocking] + [
            loss for p in self.projections for loss in p.losses if loss.blocking
        ]

    @property
    def blocked(self) -> bool:
        """Whether the target would refuse the request."""
        return any(loss.blocking for loss in self.losses) or any(
            p.blocked for p in self.projections
        )

    def find(self, name: str) -> Projection:
        """The projection of the tool the model calls ``name`` (the name it was sent, or the
        canonical one): what a gate needs to read calls made under it.

        Raises:
            UsageError: no tool of this request goes by ``name``.
        """
        for projection in self.projections:
            if name in (projection.projected_name, projection.name):
                return projection
        known = ", ".join(p.projected_name for p in self.projections) or "none"
        raise UsageError(
            f"no tool {quoted(name)} in this {self.target} request (its tools: {known})"
        )


def project(
    spec: ToolSpec,
    target: str,
    *,
    documents: Mapping[str, Any] | None = None,
    origins: bool = False,
    **options: Any,
) -> Projection:
    """``spec`` projected to ``target``.

    Args:
        spec: the tool (or handoff or state schema) to project.
        target: a name in `TARGETS`.
        documents: the schemas that ``$ref`` may name, by URI (`Repository.documents`).
        origins: record where each projected subschema came from (`Projection.origins`).
        options: the target's options (``strict``, ``openapi``, ``version``).

    Raises:
        UsageError: an unknown target or option.
    """
    return _target(target, options).project(spec, documents=documents, origins=origins, **options)


def project_catalogue(
    specs: Sequence[ToolSpec],
    target: str,
    *,
    documents: Mapping[str, Any] | None = None,
    agent: Agent | None = None,
    **options: Any,
) -> Catalogue:
    """Every spec of ``specs`` projected to ``target`` as one request (or one Agent Card)."""
    info = _target(target, options)
    projections = _unique_names(
        info, [info.project(s, documents=documents, **options) for s in specs]
    )
    losses = list(_request_limits(info, projections, options))
    payload: Any = (
        agent_card(projections, agent or Agent())
        if target == "a2a"
        else [p.payload for p in projections]
    )
    return Catalogue(target, tuple(projections), payload, tuple(losses))


def _target(target: str, options: dict[str, Any]) -> Target:
    info = TARGETS.get(target)
    if info is None:
        raise UsageError(f"unknown target {quoted(target)}; targets: {', '.join(TARGETS)}")
    unknown = [option for option in options if option not in info.options]
    if unknown:
        allowed = ", ".join(info.options) or "none"
        raise UsageError(
            f"{target} takes no option {', '.join(sorted(unknown))} (options: {allowed})"
        )
    return info


def _unique_names(info: Target, projections: list[Projection]) -> list[Projection]:
    taken: set[str] = set()
    unique: list[Projection] = []
    for projection in projections:
        name = unique_name(projection.projected_name, taken, 128)
        taken.add(name)
        renamed = (
            projection if name == projection.projected_name else _renamed(info, projection, name)
        )
        unique.append(renamed)
    return unique


def _renamed(info: Target, projection: Projection, name: str) -> Projection:
    payload = _with_name(projection.payload, info.name_path, name)
    detail = f"{quoted(projection.projected_name)} is taken in this request; sent as {quoted(name)}"
    loss = Loss("NAME_RENAMED", "", detail, document="tool")
    return replace(
        projection, payload=payload, projected_name=name, losses=(*projection.losses, loss)
    )


def _with_name(payload: dict[str, Any], path: tuple[str, ...], name: str) -> dict[str, Any]:
    if len(path) == 1:
        return {**payload, path[0]: name}
    return {**payload, path[0]: _with_name(payload[path[0]], path[1:], name)}


def _request_limits(
    info: Target, projections: list[Projection], options: dict[str, Any]
) -> list[Loss]:
    losses: list[Loss] = []
    if info.tool_limit is not None and len(projections) > info.tool_limit:
        losses.append(_over(f"{len(projections)} tools, over the limit of {info.tool_limit}"))
    if info.name == "anthropic" and options.get("strict"):
        losses.extend(_anthropic_budgets(projections))
    return losses


def _anthropic_budgets(projections: list[Projection]) -> list[Loss]:
    losses: list[Loss] = []
    if len(projections) > 20:
        losses.append(_over(f"{len(projections)} strict tools, over Anthropic's limit of 20"))
    total = measure({"anyOf": [p.payload["input_schema"] for p in projections]})
    losses.extend(exceeded(total, _ANTHROPIC_STRICT))
    return losses


def _over(detail: str) -> Loss:
    return Loss("LIMIT_EXCEEDED", "", f"{detail} per request", document="tool", blocking=True)

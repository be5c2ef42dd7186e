"""`Draft`: a projection being assembled, shared by the target modules.

A target module walks the tool's schemas with its policies, fixes the name, takes the root
annotations up into the envelope and checks limits; the draft collects the losses and origins
of every step and turns into the frozen `Projection` at the end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from schemawire._json import quoted
from schemawire.project._arguments import IDENTITY, ArgumentMap
from schemawire.project._limits import TargetLimit, exceeded
from schemawire.project._names import NameRule
from schemawire.project._transforms import Policy, Walk
from schemawire.types import Loss, Projection, ToolSpec

__all__ = ["NO_DOCUMENTS", "Draft"]

NO_DOCUMENTS: Mapping[str, Any] = MappingProxyType({})

# Root annotations that say what the tool is: an envelope field carries them when there is one.
ENVELOPE_ANNOTATIONS = ("description", "title")


@dataclass(slots=True)
class Draft:
    """A projection of ``spec`` to ``target``, under construction."""

    target: str
    spec: ToolSpec
    # Plain factories (not dict[str, Any]: a generic alias is slow to call, once per projection)
    documents: Mapping[str, Any] = field(default_factory=dict)  # by URI
    argument_map: ArgumentMap = IDENTITY
    track_origins: bool = False
    losses: list[Loss] = field(default_factory=list)
    origins: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def schema(
        self,
        schema: Any,
        policy: Policy,
        *,
        document: str,
        at: str,
        limits: tuple[TargetLimit, ...] = (),
    ) -> tuple[Any, ArgumentMap]:
        """``schema`` walked under ``policy``; ``at`` is where the payload holds the result.

        ``limits`` are measured on the result as the walk goes: each one it is over is a
        blocking loss.
        """
        base = _base_uri(schema, self.spec, document)
        walk = Walk(
            policy, document, base, self.documents, origins=self.track_origins, measure=limits
        )
        result = walk.run(schema)
        self.losses.extend(result.losses)
        if result.size is not None:
            self.losses.extend(exceeded(result.size, limits))
        if result.origins:
            self.origins.update(
                {at + pointer: tuple(sources) for pointer, sources in result.origins.items()}
            )
        return result.schema, result.argument_map

    def parameters(
        self,
        policy: Policy,
        *,
        at: str,
        root_type: str = "object",
        limits: tuple[TargetLimit, ...] = (),
    ) -> dict[str, Any]:
        """The tool's input schema walked under ``policy`` (see `schema`) as the one object
        every provider's parameters are: ``type`` (``root_type``) said at the root. Its
        argument map becomes `argument_map`."""
        schema, self.argument_map = self.schema(
            self.spec.input_schema, policy, document="input", at=at, limits=limits
        )
        root: dict[str, Any] = schema if isinstance(schema, dict) else {}
        return root if "type" in root else {"type": root_type, **root}

    def envelope(self, parameters: dict[str, Any], rule: NameRule) -> dict[str, Any]:
        """A provider tool's first members: its name as ``rule`` fixes it, and the
        description lifted out of the root of ``parameters``, when it is a string."""
        lifted = self.lift(parameters, ["description"])
        envelope: dict[str, Any] = {"name": self.name(rule)}
        if isinstance(lifted.get("description"), str):
            envelope["description"] = lifted["description"]
        return envelope

    def name(self, rule: NameRule) -> str:
        """The tool's name as the target takes it; a change is a loss."""
        fixed = rule.fix(self.spec.name)
        if fixed != self.spec.name:
            self.lose(
                "NAME_RENAMED",
                "",
                None,
                f"name {quoted(self.spec.name)} is sent as {quoted(fixed)}",
                document="tool",
            )
        return fixed

    def lift(
        self, schema: Any, keywords: Iterable[str], *, document: str = "input"
    ) -> dict[str, Any]:
        """Take root ``keywords`` out of ``schema`` for the envelope; returns what was there.

        The envelope then says them (the origins record it as ``envelope``)."""
        lifted: dict[str, Any] = {}
        if isinstance(schema, dict):
            for keyword in keywords:
                if keyword in schema:
                    lifted[keyword] = schema.pop(keyword)
                    self.origins[f"envelope:{keyword}"] = (f"{document}:",)
        return lifted

    def drop_root(self, schema: Any, keywords: Iterable[str]) -> None:
        """Remove root annotations the envelope has no place for, as losses."""
        if isinstance(schema, dict):
            for keyword in keywords:
                if keyword in schema:
                    del schema[keyword]
                    self.lose("KEYWORD_DROPPED", "", keyword, f"the tool's {keyword} has no place")

    def lose(
        self, code: str, pointer: str, keyword: str | None, detail: str, *, document: str = "input"
    ) -> None:
        """Record a loss that no walk found (names, envelopes, whole documents)."""
        self.losses.append(Loss(code, pointer, detail, keyword, document))

    def output_dropped(self) -> None:
        """Report that the target has no place for the tool's output schema."""
        if self.spec.output_schema is not None:
            self.lose(
                "OUTPUT_SCHEMA_DROPPED",
                "",
                None,
                "the target has no place for an output schema; the result gate still enforces it",
                document="output",
            )

    def finish(
        self, payload: dict[str, Any], projected_name: str, argument_map: ArgumentMap = IDENTITY
    ) -> Projection:
        """The frozen projection."""
        return Projection(
            target=self.target,
            name=self.spec.name,
            payload=payload,
            losses=tuple(self.losses),
            projected_name=projected_name,
            argument_map=argument_map,
            origins=dict(self.origins),
        )


def _base_uri(schema: Any, spec: ToolSpec, document: str) -> str:
    """The URI a document's references resolve against: its ``$id``, else one made up."""
    identifier = schema.get("$id") if isinstance(schema, dict) else None
    if isinstance(identifier, str):
        return identifier
    base = spec.schema_id or f"urn:schemawire:tool:{spec.name}"
    return base + ".output" if document == "output" else base

"""The handoff gate: what one agent hands the next must satisfy its schema, and where it goes is
decided by schemas too, never by a word found in prose.

A route is ``{"when": <JSON Schema>, "to": <agent>}``: the first route whose ``when`` the
handoff object satisfies wins. A fallback route (``{"fallback": true, "to": ...}``) is
explicit; without one, a handoff that no route takes is a structured error, not a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from schemawire.errors import UsageError
from schemawire.gates.arguments import ArgumentGate, ArgumentOptions
from schemawire.gates.verdict import Verdict
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.types import Rejection, ToolSpec, Violation

__all__ = ["HandoffDecision", "HandoffGate", "Route"]


@dataclass(frozen=True, slots=True)
class Route:
    """Where a handoff goes.

    Attributes:
        to: the next agent (or ``"end"``).
        when: the JSON Schema the handoff object must satisfy; None for the fallback.
        name: a name for reports (default: ``to``).
    """

    to: str
    when: Mapping[str, Any] | None = None
    name: str | None = None

    @property
    def fallback(self) -> bool:
        return self.when is None

    @property
    def label(self) -> str:
        return self.name or (f"{self.to} (fallback)" if self.fallback else self.to)


@dataclass(frozen=True, slots=True)
class HandoffDecision:
    """The gate's decision on one handoff: the verdict (the object, checked) and the route
    taken, or why there is none (``verdict.rejection``)."""

    verdict: Verdict
    route: Route | None

    @property
    def accepted(self) -> bool:
        return self.verdict.accepted and self.route is not None


class HandoffGate:
    """Checks one agent's handoff object and routes it. Safe to share between threads."""

    def __init__(
        self,
        spec: ToolSpec,
        routes: Sequence[Route],
        validator: CompiledSchema | None = None,
        options: ArgumentOptions | None = None,
    ) -> None:
        """
        Args:
            spec: the handoff schema (as a spec: its name, ``$id`` and version).
            routes: in order; the first match wins; at most one fallback, last.
            validator: the schema compiled with its references (`Repository.validator`).
            options: how the handoff text is read (limits, duplicate keys).

        Raises:
            SchemaError: a schema (the handoff's or a route's ``when``) does not compile.
            UsageError: a fallback route is not last, or there are two.
        """
        fallbacks = [i for i, route in enumerate(routes) if route.fallback]
        if len(fallbacks) > 1 or (fallbacks and fallbacks[0] != len(routes) - 1):
            raise UsageError(f"{spec.name}: one fallback route at most, and last")
        self.spec = spec
        self.routes = tuple(routes)
        self._object = ArgumentGate(spec, validator, options)
        self._conditions = [
            compile_schema(dict(route.when), source=f"{spec.name} route to {route.to}")
            if route.when is not None
            else None
            for route in self.routes
        ]

    def check(self, handoff: Any) -> HandoffDecision:
        """The decision on ``handoff``: a JSON text or an already parsed object."""
        verdict = self._object.check(handoff)
        if not verdict.accepted:
            return HandoffDecision(_as_handoff(verdict), None)
        for route, condition in zip(self.routes, self._conditions, strict=True):
            if condition is None or condition.is_valid(verdict.value):
                return HandoffDecision(_as_handoff(verdict), route)
        return HandoffDecision(self._unrouted(verdict), None)

    def _unrouted(self, verdict: Verdict) -> Verdict:
        spec = self.spec
        tried = ", ".join(route.label for route in self.routes) or "none"
        violation = Violation(
            "",
            "routes",
            f"no route takes this handoff (routes: {tried}) and the flow declares no fallback",
            got=verdict.value,
        )
        rejection = Rejection.for_spec(
            spec,
            gate="handoff",
            code="handoff_unrouted",
            violations=(violation,),
            hint="Hand off something a route takes, or ask a person.",
        )
        return Verdict.reject(
            rejection, gate="handoff", tool=spec.name, changes=verdict.changes, conforms=True
        )


def _as_handoff(verdict: Verdict) -> Verdict:
    """The argument gate's verdict as the handoff gate's (same checks, its own codes)."""
    rejection = verdict.rejection
    if rejection is not None:
        code = rejection.code.replace("arguments_", "handoff_")
        hint = "Hand off one JSON object that satisfies the handoff schema."
        rejection = replace(rejection, gate="handoff", code=code, hint=hint)
    return verdict.replace(gate="handoff", rejection=rejection)

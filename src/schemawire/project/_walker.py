"""The walk as its steps see it: what a keyword handler or a step of the projection walk may
ask of the walk that calls it.

The steps (`_keywords`, `_references`, `_strict`, `_draft07`) are given the walk and call back
into it; the walk (`_transforms.Walk`, which satisfies `Walker`) imports them. Naming the walk
by this Protocol, which sits below both, keeps the steps from importing the module that imports
them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from schemawire.project._arguments import ArgumentMap
from schemawire.project._policy import Node, Policy, Where

__all__ = ["Walker"]


class Walker(Protocol):
    """One projection of one canonical document under one `Policy`, as its steps use it.

    The collections are the walk's own: a step adds to them and takes from them, never
    replaces them.
    """

    @property
    def policy(self) -> Policy:
        """What the target takes."""
        ...

    @property
    def base_uri(self) -> str:
        """The canonical document's URI (its ``$id``)."""
        ...

    @property
    def documents(self) -> Mapping[str, Any]:
        """Other schema documents that references may name, by URI."""
        ...

    @property
    def root(self) -> Any:
        """The canonical document being projected."""
        ...

    @property
    def following(self) -> list[str]:
        """The absolute URIs of the ``$ref`` being inlined, outermost first."""
        ...

    @property
    def kept_refs(self) -> set[str]:
        """The local fragments the projected schema still references."""
        ...

    @property
    def origins(self) -> dict[str, list[str]]:
        """Each projected subschema's pointer -> the canonical subschemas it came from."""
        ...

    def lose(self, code: str, where: Where, keyword: str | None, detail: str) -> None:
        """Record that the projection does not say what the canonical schema says here."""
        ...

    def schema(self, schema: Any, where: Where) -> tuple[Any, ArgumentMap]:
        """``schema``, found at ``where``, as the target takes it, and its argument map."""
        ...

    # The same lines as `Walk.child`: a Protocol restates each signature it asks for.
    def child(
        self,
        schema: Any,
        where: Where,
        canonical: tuple[str | int, ...],
        projected: tuple[str | int, ...],
    ) -> tuple[Any, ArgumentMap]:
        """``schema``, found at ``canonical`` below ``where`` and sent at ``projected`` below
        it, as the target takes it, and its argument map."""
        ...

    def as_is(self, schema: Any) -> dict[str, Any] | None:
        """``schema`` itself, or a copy, when the target takes it as it is; else None."""
        ...

    def subschemas(self, keyword: str, value: Any, where: Where) -> Any:
        """``value`` of ``keyword`` with each subschema it holds projected in turn."""
        ...

    def drop(self, node: Node, keyword: str, value: Any, where: Where) -> None:
        """Leave ``keyword`` out of ``node``, restating it in the description where the
        target's policy says so; a loss either way."""
        ...

    def kept_reference(self, reference: str) -> None:
        """Note that the output keeps ``reference`` (a local one)."""
        ...

    def reshaped(self) -> None:
        """Note that subschemas were merged or rebuilt: some origins may point at nothing."""
        ...

"""The model-facing rejection on its way across hops: marked, recognised, and cut to a budget.

A schemawire MCP server answers a refused call with an error result (``isError``) whose one
text block is exactly the rejection's model-facing object (`Rejection.to_json`, the shape of
``rejection.schema.json``), and whose ``_meta`` holds `REJECTION_META`:
``{"dev.schemawire/rejection": {"gate": "results", "code": "result_invalid"}}``. A schemawire
client that finds both, agreeing, passes the rejection on unchanged (its code, tool, schema,
version, violations and hint), so it reaches the model whole through any chain of our servers,
proxies and clients. Nothing is guessed from prose: an error result without the mark, or whose
text is not a rejection, is a foreign tool's error and is reduced to one line.

Cut to a byte budget, a rejection stays one: violations are left out from the end (their number
said in ``violations_omitted``), and only then are long strings and values inside it cut.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from schemawire._json import ParseLimits, loads
from schemawire.errors import JSONError
from schemawire.gates._truncate import size_of, truncate
from schemawire.gates.verdict import Change
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.types import Rejection, Violation

__all__ = ["REJECTION_META", "carried_rejection", "cut_rejection", "rejection_meta"]

REJECTION_META = "dev.schemawire/rejection"
"""The ``_meta`` key of an MCP error result that carries a schemawire rejection."""

_OMITTED = "violations_omitted"
_VIOLATION_MEMBERS = frozenset({"pointer", "keyword", "message", "expected", "got"})
# A violation may quote any value a result held, integers beyond 64 bits too.
_TEXT_LIMITS = ParseLimits(big_integers="exact")


def rejection_meta(rejection: Rejection) -> dict[str, Any]:
    """The ``_meta`` of an error result that carries ``rejection``."""
    return {REJECTION_META: {"gate": rejection.gate, "code": rejection.code}}


def carried_rejection(text: str, meta: Any) -> tuple[dict[str, Any], Rejection] | None:
    """The rejection an error result carries: its model-facing object as it came, and the
    `Rejection` it says; None unless ``meta`` marks it and ``text`` is a rejection of the code
    the mark names."""
    mark = meta.get(REJECTION_META) if isinstance(meta, dict) else None
    if not isinstance(mark, dict) or not isinstance(mark.get("gate"), str):
        return None
    if not text.lstrip().startswith("{"):
        return None
    try:
        shown: Any = loads(text, limits=_TEXT_LIMITS, source="<rejection>")
    except JSONError:  # not JSON, so not ours
        return None
    if not _rejection_schema().is_valid(shown) or shown["error"]["code"] != mark.get("code"):
        return None
    return shown, _rejection(mark["gate"], shown["error"])


def _rejection(gate: str, error: dict[str, Any]) -> Rejection:
    violations = tuple(
        Violation(v["pointer"], v["keyword"], v["message"], v["expected"], v["got"])
        for v in error["violations"]
    )
    return Rejection(
        gate=gate,
        code=error["code"],
        tool=error["tool"],
        schema_id=error["schema"],
        version=error["version"],
        violations=violations,
        hint=error["hint"],
    )


@functools.cache
def _rejection_schema() -> CompiledSchema:
    """The shape of every rejection (``rejection.schema.json``), compiled on first use."""
    schema: Any = loads(
        resources.files("schemawire.gates").joinpath("rejection.schema.json").read_bytes(),
        source="rejection.schema.json",
    )
    return compile_schema(schema, source="rejection.schema.json")


def cut_rejection(shown: dict[str, Any], budget: int) -> tuple[dict[str, Any], list[Change]]:
    """The model-facing rejection ``shown`` within ``budget`` bytes, still a rejection: the
    violations from the end left out until the rest fits (one is always kept), then the strings
    and values inside the one left cut as `truncate` cuts them, then the hint. The changes say
    what went. (A budget smaller than a rejection's bare members is still exceeded.)"""
    if size_of(shown) <= budget:
        return shown, []
    error = shown["error"]
    violations = error["violations"]
    kept = _violations_that_fit(error, violations, budget)
    changes: list[Change] = []
    if kept < len(violations):
        error = _with_violations(error, violations[:kept], len(violations) - kept)
        detail = f"violations cut: kept {kept} of {len(violations)}"
        changes.append(Change("truncated", "/error/violations", detail, len(violations), kept))
    if size_of({"error": error}) > budget:
        error = _cut_inside(error, budget, changes)
    return {"error": error}, changes


def _cut_inside(error: dict[str, Any], budget: int, changes: list[Change]) -> dict[str, Any]:
    """``error``, its one violation left, cut to ``budget`` where it can be: inside the
    violation first (its ``got``, ``expected`` and ``message``), then the hint."""
    (violation,) = error["violations"]
    room = budget - size_of({"error": {**error, "violations": []}})
    cut, cuts = truncate(violation, max(room, 0), _every_member, "/error/violations/0")
    error = {**error, "violations": [cut]}
    over = size_of({"error": error}) - budget
    if over > 0:
        hint, hint_cuts = truncate(
            error["hint"], max(size_of(error["hint"]) - over, 0), None, "/error/hint"
        )
        error = {**error, "hint": hint}
        cuts += hint_cuts
    changes.extend(cuts)
    return error


def _violations_that_fit(error: dict[str, Any], violations: list[Any], budget: int) -> int:
    """How many violations, from the first, fit beside the rest of ``error`` (at least one)."""
    rest = size_of({"error": _with_violations(error, [], len(violations))})
    sizes = [size_of(violation) for violation in violations]
    kept, used = len(sizes), sum(sizes) + max(len(sizes) - 1, 0)
    while kept > 1 and rest + used > budget:
        kept -= 1
        used -= sizes[kept] + 1
    return kept


def _with_violations(error: dict[str, Any], violations: list[Any], omitted: int) -> dict[str, Any]:
    """``error`` with these violations, and ``violations_omitted`` right after them."""
    result: dict[str, Any] = {}
    for key, value in error.items():
        if key == _OMITTED:
            continue
        result[key] = violations if key == "violations" else value
        total = omitted + int(error.get(_OMITTED) or 0)
        if key == "violations" and total:
            result[_OMITTED] = total
    return result


def _every_member(pointer: str) -> frozenset[str]:
    """The members `truncate` keeps: all of a violation's, none inside a value it quotes."""
    return _VIOLATION_MEMBERS if pointer == "/error/violations/0" else frozenset()

"""A case's expectations against a run's outcome: every failure, each with where it is written.

One function per key of ``expect`` (`CHECKS`); each gives the failures of its key, as a
sentence that says what was expected and what the run did, and the JSON Pointer of the
expectation in the case file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemawire._json import dumps, loads
from schemawire._pointer import escape, join, resolve
from schemawire.errors import JSONError
from schemawire.evals.outcome import ObservedCall, Outcome
from schemawire.schema.repository import Repository

__all__ = ["CHECKS", "Failure", "check_expectations", "same_json"]

_SHOWN = 100  # characters of a value shown in a message
_VIOLATIONS_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Failure:
    """One expectation a run did not meet.

    Attributes:
        message: one sentence: what was expected, and what the run did.
        pointer: the expectation's JSON Pointer in the case file.
        line: its line in the case file (0 when unknown).
        column: its column.
    """

    message: str
    pointer: str
    line: int = 0
    column: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
        }

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.message}"


Found = Iterator[tuple[str, str]]  # (pointer, message)
Check = Callable[[Mapping[str, Any], Outcome, Repository], Found]
"""A check of one key of ``expect``: given the whole ``expect`` (a key may read its
companions: ``calls`` reads ``calls_order``), the outcome and the repository."""


def check_expectations(
    expect: Mapping[str, Any], outcome: Outcome, repository: Repository
) -> list[tuple[str, str]]:
    """Every failure of ``outcome`` against ``expect`` (a case's ``expect``), as (pointer,
    sentence) pairs in the order of `CHECKS`."""
    return [
        found
        for key, check in CHECKS.items()
        if key in expect
        for found in check(expect, outcome, repository)
    ]


# --- status, error, steps, route ----------------------------------------------------------------


def _status(expect: Mapping[str, Any], outcome: Outcome, _: Repository) -> Found:
    expected = expect["status"]
    if outcome.status != expected:
        why = f": {outcome.error}" if outcome.error else ""
        yield "/expect/status", f"expected status `{expected}`, got `{outcome.status}`{why}"


def _error(expect: Mapping[str, Any], outcome: Outcome, _: Repository) -> Found:
    expected = expect["error"]
    if outcome.error is None:
        yield (
            "/expect/error",
            (
                f"expected an error containing `{expected}`, but the run has "
                f"none (status `{outcome.status}`)"
            ),
        )
    elif expected not in outcome.error:
        yield (
            "/expect/error",
            (f"expected an error containing `{expected}`, got `{_show(outcome.error)}`"),
        )


def _steps(expect: Mapping[str, Any], outcome: Outcome, _: Repository) -> Found:
    expected = expect["steps"]
    if expected != outcome.steps:
        shown = " → ".join(outcome.steps) or "no agent"
        yield "/expect/steps", f"expected steps `{' → '.join(expected)}`, got `{shown}`"


def _route(expect: Mapping[str, Any], outcome: Outcome, _: Repository) -> Found:
    expected = expect["route"]
    if expected == outcome.route:
        return
    if outcome.route is not None:
        got = f"route `{outcome.route}`"
    else:
        got = (
            "no route: the first handoff was refused"
            if outcome.handoff == "refused"
            else "no route: there was no handoff"
        )
    wanted = f"route `{expected}`" if expected is not None else "no routed handoff"
    yield "/expect/route", f"expected {wanted}, got {got}"


# --- calls --------------------------------------------------------------------------------------


def _calls(expect: Mapping[str, Any], outcome: Outcome, _: Repository) -> Found:
    order = _ORDERS[expect.get("calls_order", "exact")]
    yield from order(expect["calls"], outcome.calls)


def _exact(expected: list[dict[str, Any]], calls: list[ObservedCall]) -> Found:
    for index, (wanted, call) in enumerate(zip(expected, calls, strict=False)):
        yield from _call_mismatch(wanted, call, index)
    if len(calls) > len(expected):
        extra = ", ".join(_show_call(c) for c in calls[len(expected) :])
        yield (
            "/expect/calls",
            (
                f"expected {_count(len(expected), 'call')}, the run made "
                f"{len(calls)}; the calls after: {extra}"
            ),
        )
    for index in range(len(calls), len(expected)):
        yield (
            join("/expect/calls", index),
            (
                f"expected call {index + 1} to be `{expected[index]['tool']}`, but the run made "
                f"{_count(len(calls), 'call')}"
            ),
        )


def _set(expected: list[dict[str, Any]], calls: list[ObservedCall]) -> Found:
    yield from _unordered(expected, calls, extras_allowed=False)


def _includes(expected: list[dict[str, Any]], calls: list[ObservedCall]) -> Found:
    yield from _unordered(expected, calls, extras_allowed=True)


def _unordered(
    expected: list[dict[str, Any]], calls: list[ObservedCall], *, extras_allowed: bool
) -> Found:
    matched = _matching(expected, calls)
    made = ", ".join(_show_call(c) for c in calls) or "none"
    for index, wanted in enumerate(expected):
        if index not in matched:
            yield (
                join("/expect/calls", index),
                (f"no call of the run matches {_show_wanted(wanted)}; the run's calls: {made}"),
            )
    used = set(matched.values())
    unmatched = [call for i, call in enumerate(calls) if i not in used]
    if unmatched and not extras_allowed:
        yield (
            "/expect/calls",
            (
                "the run made calls the case does not expect: "
                + ", ".join(_show_call(c) for c in unmatched)
            ),
        )


def _matching(expected: Sequence[dict[str, Any]], calls: Sequence[ObservedCall]) -> dict[int, int]:
    """A largest one-to-one matching of expected calls to the run's calls (expected index ->
    call index), by augmenting paths: a greedy pick could take the call another needs."""
    fits = [
        [j for j, call in enumerate(calls) if not any(_call_mismatch(wanted, call, i))]
        for i, wanted in enumerate(expected)
    ]
    owner: dict[int, int] = {}  # call index -> expected index

    def assign(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or assign(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(expected)):
        assign(i, set())
    return {i: j for j, i in owner.items()}


def _call_mismatch(wanted: Mapping[str, Any], call: ObservedCall, index: int) -> Found:
    """How ``call`` differs from the expected call at ``index`` (nothing when it matches)."""
    where = join("/expect/calls", index)
    if wanted["tool"] != call.tool:
        yield (
            join(where, "tool"),
            (f"expected call {index + 1} to be `{wanted['tool']}`, got {_show_call(call)}"),
        )
        return
    agent = wanted.get("agent")
    if agent is not None and agent != call.agent:
        came = f"agent `{call.agent}`" if call.agent is not None else "no agent of a flow"
        yield (
            join(where, "agent"),
            f"call {index + 1} ({call.tool}): expected it from agent `{agent}`, it came from "
            f"{came}",
        )
    if "arguments" in wanted:
        for pointer, problem in _subset(wanted["arguments"], call.arguments, ""):
            yield join(where, "arguments") + pointer, f"call {index + 1} ({call.tool}): {problem}"


def _subset(wanted: Any, got: Any, pointer: str) -> Found:
    """Where ``got`` differs from ``wanted``, each member ``wanted`` names compared (objects
    member by member; anything else whole)."""
    if isinstance(wanted, dict) and isinstance(got, dict):
        for key, value in wanted.items():
            inner = join(pointer, key)
            if key in got:
                yield from _subset(value, got[key], inner)
            else:
                yield inner, f"argument `{inner}` is missing (expected `{_show(value)}`)"
    elif not same_json(wanted, got):
        shown = pointer or "/"
        yield pointer, f"argument `{shown}`: expected `{_show(wanted)}`, got `{_show(got)}`"


_ORDERS: dict[str, Callable[[list[dict[str, Any]], list[ObservedCall]], Found]] = {
    "exact": _exact,
    "set": _set,
    "includes": _includes,
}


# --- output and state ---------------------------------------------------------------------------


def _value_checks(key: str) -> Check:
    """The checks of ``expect[key]`` (``output`` or ``state``) against the outcome's value."""

    def check(expect: Mapping[str, Any], outcome: Outcome, repository: Repository) -> Found:
        expected = expect[key]
        value = getattr(outcome, key)
        base = f"/expect/{key}"
        parsed = _parsed(value)
        for name, check_one in _VALUE_CHECKS.items():
            if name in expected:
                yield from check_one(key, base, expected[name], value, parsed, repository)

    return check


def _schema(
    what: str, base: str, reference: str, _: Any, parsed: Any, repository: Repository
) -> Found:
    file = repository.find(reference)
    if file is None:  # the runner checks this before the run; a stale repository still says so
        yield f"{base}/schema", f"no schema {dumps(reference, indent=False)} in {repository.root}"
        return
    violations = repository.validator(file).violations(parsed)
    for violation in violations[:_VIOLATIONS_SHOWN]:
        yield (
            f"{base}/schema",
            (f"the {what} breaks {file.name}: {violation.pointer or '/'} {violation.message}"),
        )
    if len(violations) > _VIOLATIONS_SHOWN:
        yield (
            f"{base}/schema",
            (f"the {what} breaks {file.name} in {len(violations) - _VIOLATIONS_SHOWN} more places"),
        )


def _fields(
    what: str, base: str, fields: dict[str, Any], _: Any, parsed: Any, __: Repository
) -> Found:
    for name, wanted in fields.items():
        where = join(f"{base}/fields", name)
        try:
            got = resolve(parsed, _as_pointer(name))
        except (KeyError, ValueError):
            yield where, f"the {what} has no `{name}` (expected `{_show(wanted)}`): {_show(parsed)}"
            continue
        if not same_json(wanted, got):
            yield where, f"the {what}'s `{name}`: expected `{_show(wanted)}`, got `{_show(got)}`"


def _absent(what: str, base: str, names: list[str], _: Any, parsed: Any, __: Repository) -> Found:
    for index, name in enumerate(names):
        try:
            got = resolve(parsed, _as_pointer(name))
        except (KeyError, ValueError):
            continue
        yield (
            join(f"{base}/absent", index),
            (f"expected the {what} without `{name}`, got `{_show(got)}`"),
        )


def _contains(what: str, base: str, text: str, value: Any, _: Any, __: Repository) -> Found:
    shown = value if isinstance(value, str) else dumps(value, indent=False)
    if text not in shown:
        yield f"{base}/contains", f"expected the {what} to contain `{text}`, got `{_show(shown)}`"


def _equals(what: str, base: str, wanted: Any, value: Any, parsed: Any, _: Repository) -> Found:
    if not (same_json(wanted, value) or same_json(wanted, parsed)):
        yield f"{base}/equals", f"expected the {what} `{_show(wanted)}`, got `{_show(value)}`"


_VALUE_CHECKS: dict[str, Callable[[str, str, Any, Any, Any, Repository], Found]] = {
    "schema": _schema,
    "fields": _fields,
    "absent": _absent,
    "contains": _contains,
    "equals": _equals,
}


def _parsed(value: Any) -> Any:
    """A JSON text answer as its value (an agent's answer is text until a schema parses it)."""
    if isinstance(value, str):
        try:
            return loads(value, source="<output>")
        except JSONError:
            return value
    return value


def _as_pointer(name: str) -> str:
    return name if name.startswith("/") else "/" + escape(name)


# --- the table ----------------------------------------------------------------------------------

CHECKS: dict[str, Check] = {
    "status": _status,
    "error": _error,
    "steps": _steps,
    "route": _route,
    "calls": _calls,
    "output": _value_checks("output"),
    "state": _value_checks("state"),
}
"""The checks of ``expect``, by key, in the order failures are reported."""


# --- JSON values --------------------------------------------------------------------------------


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal as JSON: ``1 == 1.0``, but ``true != 1``, and objects
    compare member by member whatever their order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else dumps(value, indent=False)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _show_call(call: ObservedCall) -> str:
    by = f" by {call.agent}" if call.agent is not None else ""
    return f"{call.tool} {_show(call.arguments)}{by}"


def _show_wanted(wanted: Mapping[str, Any]) -> str:
    by = f" by {wanted['agent']}" if "agent" in wanted else ""
    return f"`{wanted['tool']}` {_show(wanted.get('arguments', {}))}{by}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"

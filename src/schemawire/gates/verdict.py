"""What a gate decided about one value, for the host to act on and the trace to carry.

A gate never raises on its input: it returns a `Verdict`. The verdict holds the value to pass
on (the arguments to call the tool with, or the result to show the model), whether the value was
accepted, and every change the gate made on the way: repairs of the JSON, redactions, cuts.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass
from typing import Any, Literal, final

from schemawire.types import Rejection

__all__ = ["CODES", "Change", "Verdict"]

# Stable codes of `Rejection.code` and of the changes a gate makes; compare these, not messages.
# Each code means one thing and belongs to one gate (`Rejection.gate`); docs/errors.md lists them.
CODES = {
    # rejections by the argument gate: the tool is not run
    "arguments_malformed": "the arguments are not acceptable JSON (syntax, duplicate key, NaN...)",
    "arguments_too_large": "the arguments are over a size limit (bytes, depth, string, array)",
    "arguments_invalid": "the arguments break the tool's input schema",
    "tool_unknown": "the call names a tool that is not offered",
    "tool_unusable": "the tool's own schema cannot be used (it does not compile), so it is not "
    "called",
    "tool_unavailable": "the tool's server could not be reached, so the call was not sent",
    "retries_exhausted": "the tool was refused too often in this run; it is not called again",
    # rejections by the result gate: the model reads the error instead of the result
    "result_invalid": "the result breaks the tool's output schema",
    "result_malformed": "the result holds what JSON cannot (a set, bytes, NaN, a cycle...), or "
    "an MCP result's content is not content blocks",
    "tool_failed": "the tool failed, timed out, or its server went away during the call; its "
    "error is shown in one line",
    "tool_interrupted": "an earlier attempt of the call was interrupted; not repeated",
    # either gate
    "gate_error": "the gate itself failed on this input (a bug: please report it)",
    # rejections by the handoff gate
    "handoff_malformed": "the handoff is not acceptable JSON (syntax, duplicate key, NaN...)",
    "handoff_too_large": "the handoff is over a size limit",
    "handoff_invalid": "the handoff breaks its schema",
    "handoff_unrouted": "no route takes the handoff, and the flow declares no fallback",
    # the state check of a flow
    "state_invalid": "the state after a step breaks the state schema: not checkpointed",
    # changes to an accepted value
    "double_encoded": "a JSON string holding the arguments was decoded once more",
    "string_decoded": "a JSON string where the schema wants an object or array was decoded",
    "json_repaired": "malformed JSON was repaired (tolerant mode)",
    "redacted": "a secret was replaced by [REDACTED:<kind>]",
    "truncated": "a value was cut to fit the byte budget",
}

ChangeKind = Literal["double_encoded", "string_decoded", "json_repaired", "redacted", "truncated"]


@dataclass(frozen=True, slots=True)
class Change:
    """One change a gate made to a value before passing it on.

    Attributes:
        kind: one of the change codes of `CODES`.
        pointer: where in the value (RFC 6901), as passed on.
        detail: one sentence for people.
        before: what was there (a repaired text, a cut string's length...); never a secret.
        after: what is there now, when it helps to see it.
    """

    kind: ChangeKind
    pointer: str
    detail: str
    before: Any = None
    after: Any = None

    def to_json(self) -> dict[str, Any]:
        """The change as a JSON object."""
        return {
            "kind": self.kind,
            "pointer": self.pointer,
            "detail": self.detail,
            "before": self.before,
            "after": self.after,
        }


class _VerdictFields:
    """A verdict's slots, writable: `_filled` fills one, then makes it a `Verdict`."""

    __slots__ = ("accepted", "changes", "conforms", "gate", "rejection", "tool", "value")

    gate: str
    tool: str
    accepted: bool
    value: Any
    rejection: Rejection | None
    changes: tuple[Change, ...]
    conforms: bool | None


@final
class Verdict(_VerdictFields):
    """A gate's decision on one value, frozen: made with `accept` or `reject`, or by keyword.

    Attributes:
        gate: ``"arguments"``, ``"results"`` or ``"handoff"``: the gate that decided.
        tool: the tool the value belongs to.
        accepted: whether the value passed; when not, ``rejection`` says why.
        value: what to pass on: the arguments to call the tool with (None when rejected), or the
            result to show the model (an error object when rejected).
        rejection: why the value was refused (a result gate may pass on another gate's).
        changes: every repair, redaction and cut, in the order they were made.
        conforms: after the changes, whether the value still satisfies its schema (None when
            there is no schema to say).

    Equal only to a verdict with the same fields. (Not a frozen dataclass: the argument gate
    makes one per call in about 3 µs, and a frozen dataclass's ``__init__``, an
    ``object.__setattr__`` per field, adds a sixth to that. `_filled` sets the slots of a
    writable `_VerdictFields` and then makes it a `Verdict`, whose ``__setattr__`` refuses: as
    fast as the named tuple it replaces.)
    """

    __slots__ = ()

    def __new__(
        cls,
        *,
        gate: str,
        tool: str,
        accepted: bool,
        value: Any,
        rejection: Rejection | None = None,
        changes: tuple[Change, ...] = (),
        conforms: bool | None = None,
    ) -> Verdict:
        return _filled(cls, gate, tool, accepted, value, rejection, changes, conforms)

    @classmethod
    def accept(
        cls,
        *,
        gate: str,
        tool: str,
        value: Any,
        changes: tuple[Change, ...] = (),
        conforms: bool | None = None,
    ) -> Verdict:
        """``value`` passed ``gate``, after ``changes``."""
        return _filled(cls, gate, tool, True, value, None, changes, conforms)

    @classmethod
    def reject(
        cls,
        rejection: Rejection,
        *,
        gate: str,
        tool: str,
        value: Any = None,
        changes: tuple[Change, ...] = (),
        conforms: bool | None = False,
    ) -> Verdict:
        """``gate`` refused the value for ``rejection``; ``value`` is what goes on instead
        (nothing for refused arguments, the error object for a refused result)."""
        return _filled(cls, gate, tool, False, value, rejection, changes, conforms)

    def replace(self, **changes: Any) -> Verdict:
        """This verdict with the fields named in ``changes`` changed."""
        return Verdict(**(self._fields() | changes))

    def _fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FIELDS}

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}: a Verdict is frozen")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}: a Verdict is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Verdict:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(tuple(self._fields().values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self._fields().items())
        return f"Verdict({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_verdict_from, (self._fields(),))

    def _has(self, *kinds: str) -> bool:
        return any(change.kind in kinds for change in self.changes)

    @property
    def repaired(self) -> bool:
        """Whether the JSON was repaired or decoded before it was accepted."""
        return self._has("double_encoded", "string_decoded", "json_repaired")

    @property
    def redacted(self) -> bool:
        """Whether a secret was replaced."""
        return self._has("redacted")

    @property
    def truncated(self) -> bool:
        """Whether a value was cut to fit the byte budget."""
        return self._has("truncated")

    @property
    def outcome(self) -> str:
        """One word for the trace: rejected, repaired, truncated, redacted or accepted."""
        if not self.accepted:
            return "rejected"
        for word in ("repaired", "truncated", "redacted"):
            if getattr(self, word):
                return word
        return "accepted"

    def to_json(self) -> dict[str, Any]:
        """The verdict as a JSON object, for the trace."""
        return {
            "gate": self.gate,
            "tool": self.tool,
            "outcome": self.outcome,
            "accepted": self.accepted,
            "rejection": self.rejection.to_json()["error"] if self.rejection else None,
            "changes": [change.to_json() for change in self.changes],
            "conforms": self.conforms,
        }


_new_object = object.__new__
_FIELDS = ("gate", "tool", "accepted", "value", "rejection", "changes", "conforms")


def _filled(  # noqa: PLR0917 (positional: the one call on the argument gate's hot path)
    cls: type[Verdict],
    gate: str,
    tool: str,
    accepted: bool,
    value: Any,
    rejection: Rejection | None,
    changes: tuple[Change, ...],
    conforms: bool | None,
) -> Verdict:
    """A `Verdict` of these fields: a `_VerdictFields` filled, then made a ``cls``."""
    verdict: Any = _new_object(_VerdictFields)
    verdict.gate = gate
    verdict.tool = tool
    verdict.accepted = accepted
    verdict.value = value
    verdict.rejection = rejection
    verdict.changes = changes
    verdict.conforms = conforms
    verdict.__class__ = cls
    made: Verdict = verdict
    return made


def _verdict_from(fields: dict[str, Any]) -> Verdict:
    """A pickled or copied verdict, made again."""
    return Verdict(**fields)

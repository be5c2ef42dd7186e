"""Hops recorded but not yet kept: what a trace holds between recording a hop and keeping it.

Recording a hop on the hot path costs what it must to fix the hop as it is at that moment: its
seq, its time, its labels, and its payload and verdict serialised to JSON (bytes, which cannot
change after; the caller may mutate the dict it passed). Redacting, building the `Hop` and
writing it wait for the trace's next barrier (`schemawire.trace.Trace.drain`), where one scan
over the JSON of every pending hop tells whether any of them can hold a secret at all: most
batches hold none, and each of their hops is then kept as its JSON reads back, without a walk.
A batch that may hold one has each of its hops redacted as a lone hop would be.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from schemawire.trace._lines import hop_line
from schemawire.types import Hop

__all__ = ["Pending", "frozen_json", "plain_verdict"]

# A value orjson writes as something else (a dataclass as an object, a datetime as a string, a
# str subclass as a str) is redacted at once instead, so that the hop kept holds it as today.
_EXACT_TYPES = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


class Pending(NamedTuple):
    """One hop recorded, not yet kept: its fields, its payload and verdict as JSON bytes."""

    seq: int
    time: float
    source: str
    target: str
    protocol: str
    direction: str
    payload: bytes
    verdict: bytes | None
    span: str | None
    run_id: str

    def hop(self, payload: Any, verdict: Any) -> Hop:
        """The hop, holding ``payload`` and ``verdict`` (redacted, or read back as clean)."""
        return Hop(
            self.run_id,
            self.seq,
            self.time,
            self.source,
            self.target,
            self.protocol,
            self.direction,
            payload,
            verdict,
            self.span,
        )

    def json(self) -> tuple[bytes, ...]:
        """The JSON texts it holds: its payload's, and its verdict's when it has one."""
        return (self.payload,) if self.verdict is None else (self.payload, self.verdict)

    def line(self) -> bytes:
        """Its line in a trace file (without the newline): the bytes `hop_line` writes for its
        hop, the payload and verdict spliced in as fixed (orjson writes a member's value in an
        object as it writes the value alone)."""
        head = {
            "run": self.run_id,
            "seq": self.seq,
            "time": self.time,
            "from": self.source,
            "to": self.target,
            "protocol": self.protocol,
            "direction": self.direction,
        }
        try:
            start = orjson.dumps(head)
        except orjson.JSONEncodeError:  # a label that is not Unicode: written with a note
            return hop_line(self.hop(orjson.loads(self.payload), _loaded(self.verdict)))
        verdict = self.verdict if self.verdict is not None else b"null"
        span = b',"span":' + orjson.dumps(self.span) if self.span is not None else b""
        return b"".join(
            (start[:-1], b',"payload":', self.payload, b',"verdict":', verdict, span, b"}")
        )


def _loaded(data: bytes | None) -> Any:
    return orjson.loads(data) if data is not None else None


def frozen_json(value: Any) -> bytes | None:
    """``value`` as JSON bytes, a copy no later change to ``value`` reaches; None when orjson
    cannot write it exactly (an integer beyond 64 bits, a lone surrogate, a dataclass): such a
    value is redacted when it is recorded, as before."""
    try:
        return orjson.dumps(value, option=_EXACT_TYPES)
    except orjson.JSONEncodeError:
        return None


def plain_verdict(verdict: dict[str, Any]) -> bool:
    """Whether a verdict's JSON holds no pointer to redact token by token (no violation, no
    change): its JSON text then shows the detectors everything, as a payload's does."""
    rejection = verdict.get("rejection")
    if isinstance(rejection, dict) and isinstance(rejection.get("violations"), list):
        return False
    changes = verdict.get("changes")
    return not (isinstance(changes, list) and changes)

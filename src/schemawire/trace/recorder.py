"""The trace: every hop of a run, in order, kept in memory and (optionally) written as JSON Lines.

A trace file holds one `Hop` per line, written and flushed as the hop happens, so a run that
crashes leaves every hop up to the crash; a line a crash cut short stays, the next hop starts a
line of its own, and `read_trace` skips the cut line and says so. Secrets are redacted before a
hop is kept, from every field of it (who sent it and to whom, the payload, the verdict): nothing
a trace holds, in memory or on disk, can leak a key (DESIGN: local first).

Recording never fails the call it records: a value a trace file cannot hold exactly is written
with a note (`schemawire.trace._lines`), and a value that cannot be redacted is not kept at all.

Off the hot path: inside `Trace.deferring` (the host loop's turn, an MCP call), a hop recorded is
only fixed (its seq, its time, its JSON: `schemawire.trace._pending`); redacting, keeping and
writing it wait for the block's end, where the whole batch is scanned for secrets at once,
written in recording order and flushed. Every reader drains first (`hops`, `drain`, `close`), so
none sees the wait; a hop recorded outside such a block is kept at once, as are those pending.

A long-running server keeps no hops in memory: ``Trace(keep=False)`` only writes them (and, with
no file, does nothing at all), so memory does not grow with the calls served.

One id per run: a run's id is its hops' ``run`` member and, by default, its trace file's name
(`trace_path`: ``.schemawire/traces/<run id>.jsonl``). A run resumed later appends to that file,
its hops numbered on from the last one there. The file is created with the first hop, so a run
that never starts leaves no empty trace behind.
"""

from __future__ import annotations

import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextvars import ContextVar, Token
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from schemawire.gates.redact import Redactor, default_redactor
from schemawire.trace._lines import CutLine, hop_line, hops_of
from schemawire.trace._pending import Pending, frozen_json, plain_verdict
from schemawire.trace.bodies import Wholes
from schemawire.trace.spans import (
    CURRENT,
    QUIET_SPAN,
    Current,
    Span,
    parse_traceparent,
    span_end,
    span_start,
    trace_id_of,
)
from schemawire.types import Hop, Violation

if TYPE_CHECKING:
    from schemawire.gates import Shortlist, Verdict

__all__ = [
    "TRACES",
    "Deferring",
    "Trace",
    "new_run_id",
    "read_trace",
    "record_shortlist",
    "record_verdicts",
    "trace_path",
]

TRACES = Path(".schemawire") / "traces"
"""Where runs write their traces by default, relative to the current folder."""


def new_run_id() -> str:
    """A fresh run id: 16 hexadecimal characters."""
    return uuid.uuid4().hex[:16]


def trace_path(run_id: str, folder: str | Path = TRACES) -> Path:
    """The trace file of run ``run_id``: ``<folder>/<run id>.jsonl``."""
    return Path(folder) / f"{run_id}.jsonl"


class Trace:
    """Records hops. Safe to share between tasks and threads of one run.

    Example:
        >>> trace = Trace(run_id="demo")
        >>> hop = trace.record("host", "mcp:echo", "mcp", "send", {"method": "ping"})
        >>> (hop.run_id, hop.seq, trace.hops[0].payload)
        ('demo', 1, {'method': 'ping'})
    """

    def __init__(
        self,
        run_id: str | None = None,
        *,
        path: str | Path | None = None,
        keep: bool = True,
        redactor: Redactor | None = None,
        redact: bool = True,
        clock: Callable[[], float] = time.time,
        on_hop: Callable[[Hop], None] | None = None,
    ) -> None:
        """
        Args:
            run_id: the run's id; a new one (`new_run_id`) when not given.
            path: a JSON Lines file to append each hop to, as it happens (created with the
                first hop). After a line a crash cut short, the next hop starts a new line.
            keep: keep every hop in `hops` too. A server that runs for days passes False: its
                hops go to the file only (with no file and no ``on_hop``, nowhere: recording
                costs nothing then).
            redactor: the secret detectors (default: `default_redactor`).
            redact: redact hops before keeping them; turn off only for benchmarks.
            clock: the time source, seconds since the epoch.
            on_hop: called with each hop once it is kept (to show hops as they happen).

        Raises:
            JSONError: ``path`` holds a line that is not a hop (and not one a crash cut short).
            OSError: ``path`` exists and cannot be read or written.
        """
        self.run_id = run_id or new_run_id()
        self._hops: list[Hop] = []
        # Hops kept after `_hops`, not yet built: each `Pending` one read back from its JSON
        # (clean: a scan found nothing a secret could be in) only when `hops` is read.
        self._unbuilt: list[Pending | Hop] = []
        self.path = Path(path) if path is not None else None
        self.keep = keep
        self._redactor = (redactor or default_redactor()) if redact else None
        self._clock = clock
        self._on_hop = on_hop
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._closed = False
        self._last_seq: dict[str, int] = {}  # run id -> the last hop's seq, here or in the file
        self._labels: dict[str, str] = {}  # who sent a hop and to whom, redacted: few, repeated
        if self.path is not None and self.path.is_file():  # not a pipe or a terminal
            self._file = _reopen(self.path, self._last_seq)
        self._holds_hops = bool(self._last_seq)
        # The span open in this task (or thread), for this trace alone: a contextvar, so the
        # tasks of parallel tool calls each see their own, and two traces never share one.
        self._span: ContextVar[str | None] = ContextVar("schemawire_span", default=None)
        # Open spans under a remote parent (a ``traceparent`` a client sent): their trace id,
        # which their children share and pass on; each leaves when its span closes.
        self._remote_trace: dict[str, int] = {}
        # Hops recorded, in seq order, not yet kept: each fixed as JSON, or redacted already
        # (a value JSON cannot copy exactly). Drained under `_draining`, which keeps batches in
        # order when threads drain at once (reentrant: an ``on_hop`` may record).
        self._pending: list[Pending | Hop] = []
        self._draining = threading.RLock()
        self._deferring: ContextVar[bool] = ContextVar("schemawire_deferring", default=False)

    @property
    def hops(self) -> list[Hop]:
        """Every hop kept, in order, those still pending included (a barrier: see `drain`)."""
        if self._pending or self._unbuilt:
            with self._draining:
                self.drain()
                self._build()
        return self._hops

    def deferring(self) -> Deferring:
        """A block (``with``) inside which hops recorded in this task (and the tasks it starts)
        are kept, redacted and written at its end, at once: a turn of the loop, a call of an MCP
        client. When the block ends, every hop recorded so far is in `hops` and flushed to the
        file, even when the block raised."""
        return Deferring(self)

    def drain(self) -> None:
        """Keep every hop recorded so far: redact it, add it to `hops`, write it to the file
        (flushed) and show it to ``on_hop``, in recording order.

        Raises:
            OSError: the trace file cannot be written (raised here, the barrier; the hops are in
                `hops` all the same).
        """
        self._drained(build=False)

    def _drained(self, *, build: bool) -> list[Hop]:
        """`drain`, returning the hops it built: none when the batch is clean, nothing listens
        and ``build`` is off (its lines are written from its JSON; `hops` builds them)."""
        with self._draining:
            with self._lock:
                batch, self._pending = self._pending, []
            if not batch:
                return []
            clean = self._clean(batch)
            if clean and not build and self._on_hop is None:
                self._keep_unbuilt(batch)
                return []
            read = self._read_clean if clean else self._read_redacted
            hops = [read(item) if isinstance(item, Pending) else item for item in batch]
            self._keep(hops)
            return hops

    def _clean(self, batch: list[Pending | Hop]) -> bool:
        """Whether one scan over the JSON of the batch's fixed hops finds nothing a secret
        could be in (the hops redacted when recorded are redacted already)."""
        if self._redactor is None:
            return True
        parts = (part for item in batch if isinstance(item, Pending) for part in item.json())
        return self._redactor.finds_nothing_in(b"\n".join(parts))

    def _keep_unbuilt(self, batch: list[Pending | Hop]) -> None:
        if self.keep:
            self._unbuilt.extend(batch)
        if self.path is not None and not self._closed:
            self._write_lines(b"".join(_line(item) for item in batch))

    def _build(self) -> None:
        """Move the hops kept unbuilt to `_hops`, built (call under `_draining`)."""
        unbuilt, self._unbuilt = self._unbuilt, []
        self._hops.extend(self._read_clean(i) if isinstance(i, Pending) else i for i in unbuilt)

    def _read_clean(self, item: Pending) -> Hop:
        verdict = orjson.loads(item.verdict) if item.verdict is not None else None
        return item.hop(orjson.loads(item.payload), verdict)

    def _read_redacted(self, item: Pending) -> Hop:
        verdict = orjson.loads(item.verdict) if item.verdict is not None else None
        payload = self._redacted(orjson.loads(item.payload))
        return item.hop(payload, self._redacted_verdict(verdict))

    def _keep(self, hops: list[Hop]) -> None:
        if self.keep:
            self._build()  # those kept before these come first
            self._hops.extend(hops)
        try:
            self._write(hops)
        finally:
            if self._on_hop is not None:
                for hop in hops:
                    self._on_hop(hop)

    def begin(self, run_id: str) -> None:
        """Record the hops that follow under ``run_id`` (a run resumed with this trace),
        numbered on from the last hop of that run this trace holds."""
        with self._lock:
            self.run_id = run_id

    def record(
        self,
        source: str,
        target: str,
        protocol: str,
        direction: str,
        payload: Any,
        *,
        verdict: dict[str, Any] | None = None,
        span: str | Current | None = CURRENT,
    ) -> Hop | None:
        """Keep one hop, every field of it redacted, and append it to the file, if any.

        The hop belongs to ``span``: by default the span open where it is recorded (`span`),
        else the id given (a response read on another task names its request's span), or none.

        Returns:
            the hop as kept; None when nothing keeps it (``keep=False``, no open file, no
            ``on_hop``), so it was neither redacted nor built, and None inside a
            `deferring` block, where it is kept at the block's end (read it from `hops`).

        Raises:
            OSError: the trace file cannot be written (a value never makes recording fail).
        """
        if not self.keeps_anything:
            with self._lock:
                self._next_seq()
            return None
        source, target = self._label(source), self._label(target)
        protocol, direction = self._label(protocol), self._label(direction)
        span_id = self._span.get() if isinstance(span, Current) else span
        fixed = self._fixed(payload, verdict)
        if fixed is None:  # redacted now: JSON cannot copy it exactly
            payload, verdict = self._redacted(payload), self._redacted_verdict(verdict)
        with self._lock:
            seq, now = self._next_seq(), self._clock()
            item: Pending | Hop
            if fixed is None:
                item = Hop(
                    self.run_id,
                    seq,
                    now,
                    source,
                    target,
                    protocol,
                    direction,
                    payload,
                    verdict,
                    span_id,
                )
            else:
                item = Pending(
                    seq, now, source, target, protocol, direction, *fixed, span_id, self.run_id
                )
            self._pending.append(item)
            deferred = (  # a listener sees each hop as it happens, as before
                self._on_hop is None
                and self._deferring.get()
                and len(self._pending) < _PENDING
                and (fixed is None or len(fixed[0]) < _DEFER_UP_TO)
            )
        if deferred:
            return None
        return self._kept(
            self._drained(build=True), seq, item.run_id if isinstance(item, Hop) else item[-1]
        )

    def span(
        self,
        kind: str,
        name: str,
        *,
        label: str = "host",
        parent: str | Current | None = CURRENT,
        **attributes: Any,
    ) -> Span:
        """A span of this trace, for ``with`` or ``async with``: its start hop on entry, every
        hop recorded inside (in this task, and the tasks and threads it starts) in it, its end
        hop on exit (status ``"error"`` when the block raised; set `Span.status` to say
        ``"refused"``). When the trace keeps nothing, a span records nothing and costs a check.
        ``parent``: the span open here by default, or the id of one opened elsewhere (a
        framework's run, opened by its callback), or None for a root.

        Examples:
            >>> trace = Trace(run_id="demo", clock=lambda: 1.0)
            >>> with trace.span("tool", "get_weather"):
            ...     _ = trace.record("host", "python:get_weather", "python", "send", {})
            >>> [(h.direction, h.span == trace.hops[0].span) for h in trace.hops]
            [('start', True), ('send', True), ('end', True)]
        """
        if not self.keeps_anything:  # a server without --trace: nothing built, nothing set
            return QUIET_SPAN
        return Span(self, self._span, kind, name, label=label, attributes=attributes, parent=parent)

    def listen(self, listener: Callable[[Hop], None]) -> None:
        """Call ``listener`` with each hop once it is kept, after the ``on_hop`` given (an
        exporter added to a trace that already shows its hops)."""
        before = self._on_hop
        if before is None:
            self._on_hop = listener
            return

        def both(hop: Hop) -> None:
            before(hop)
            listener(hop)

        self._on_hop = both

    @property
    def current_span(self) -> str | None:
        """The id of the span open here, if any."""
        return self._span.get()

    def open_span(
        self,
        kind: str,
        name: str,
        *,
        label: str = "host",
        parent: str | Current | None = CURRENT,
        **attributes: Any,
    ) -> str | None:
        """Record a span's start hop and return its id (None when the trace keeps nothing);
        the span is not made current: for a span that ends on another task (an MCP request,
        answered on the reader's), closed by `close_span`. ``parent``: the span open here by
        default."""
        if not self.keeps_anything:
            return None
        span_id = f"{random.getrandbits(64):016x}"
        parent_id = self._span.get() if isinstance(parent, Current) else parent
        remote = parse_traceparent(attributes.get("traceparent"))
        trace_id = remote[0] if remote else self._remote_trace.get(parent_id or "")
        if trace_id is not None:
            with self._lock:
                self._remote_trace[span_id] = trace_id
        start = span_start(kind, name, parent_id, attributes)
        self.record(label, label, "span", "start", start, span=span_id)
        return span_id

    def traceparent(self, span_id: str) -> str:
        """The W3C ``traceparent`` that makes a remote span a child of ``span_id``: the trace
        id of its remote parent, if it has one, else of this run (`trace_id_of`)."""
        trace_id = self._remote_trace.get(span_id) or trace_id_of(self.run_id)
        return f"00-{trace_id:032x}-{span_id}-01"

    def close_span(
        self,
        span_id: str | None,
        kind: str,
        status: str = "ok",
        error: dict[str, Any] | None = None,
        *,
        label: str = "host",
    ) -> None:
        """Record the end hop of the span ``span_id`` (nothing when it is None)."""
        if span_id is not None:
            self.record(label, label, "span", "end", span_end(kind, status, error), span=span_id)
            with self._lock:
                self._remote_trace.pop(span_id, None)

    @property
    def keeps_anything(self) -> bool:
        """Whether a hop recorded now is kept anywhere (in `hops`, a file, ``on_hop``): a caller
        that would build a large payload only to record it can skip building it when not."""
        writes = self.path is not None and not self._closed
        return self.keep or writes or self._on_hop is not None

    def _fixed(
        self, payload: Any, verdict: dict[str, Any] | None
    ) -> tuple[bytes, bytes | None] | None:
        """The payload and verdict as JSON bytes, to redact later (a copy: the caller may change
        what it passed); None when either must be redacted now: JSON cannot copy it exactly, or
        it is a verdict whose pointers are redacted token by token."""
        if self._redactor is None:
            return None  # nothing to defer: kept as given, as before
        fixed = frozen_json(payload)
        if fixed is None:
            return None
        if verdict is None:
            return fixed, None
        if not plain_verdict(verdict):
            return None
        judged = frozen_json(verdict)
        return (fixed, judged) if judged is not None else None

    def _kept(self, drained: list[Hop], seq: int, run_id: str) -> Hop | None:
        """The hop numbered ``seq`` of ``run_id``, just kept: in the batch this task drained,
        else (another thread drained it first) among the last hops kept, built if need be."""
        found = _numbered(drained, seq, run_id)
        return found if found is not None else _numbered(self.hops[-_PENDING:], seq, run_id)

    def _next_seq(self) -> int:
        seq = self._last_seq.get(self.run_id, 0) + 1
        self._last_seq[self.run_id] = seq
        return seq

    def _label(self, text: str) -> str:
        """``text`` redacted; a command line or URL that names a server may hold a password."""
        known = self._labels.get(text)
        if known is None:
            known = self._redactor.text(text)[0] if self._redactor is not None else text
            if len(self._labels) < _LABELS:
                self._labels[text] = known
        return known

    def _redacted(self, value: Any) -> Any:
        """``value`` with its secrets replaced; one that cannot be walked is not kept."""
        if self._redactor is None or value is None:
            return value
        try:
            return self._redactor.value(value)[0]
        except Exception as error:  # recording never fails the call it records
            return f"[NOT KEPT: it could not be redacted ({type(error).__name__})]"

    def _redacted_verdict(self, verdict: dict[str, Any] | None) -> Any:
        """A verdict's JSON redacted, its pointers token by token: the key a violation or a
        change points at may be a secret, which escaped into the pointer would hide from the
        detectors."""
        if self._redactor is None or verdict is None:
            return verdict
        try:
            return self._redacted(_pointers_redacted(self._redactor, verdict))
        except Exception as error:  # recording never fails the call it records
            return f"[NOT KEPT: it could not be redacted ({type(error).__name__})]"

    def _write(self, hops: list[Hop]) -> None:
        """Append ``hops`` to the file, one line each, in one write, then flush."""
        if self.path is None or self._closed:
            return
        self._write_lines(b"".join(hop_line(hop) + b"\n" for hop in hops))

    def _write_lines(self, lines: bytes) -> None:
        assert self.path is not None
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            pipe = self.path.exists() and not self.path.is_file()  # nothing to look back at
            self._file = self.path.open("ab" if pipe else "a+b")
        if _ends_cut(self._file):  # another process died mid-line: start a line of our own
            lines = b"\n" + lines
        self._file.write(lines)
        self._file.flush()
        self._holds_hops = True

    @property
    def written(self) -> bool:
        """Whether the trace has a file that holds hops (the path is worth showing)."""
        if self._pending:
            self.drain()
        return self._holds_hops

    def close(self) -> None:
        """Keep and write every hop recorded (`drain`), then close the file; later hops are kept
        in memory only (when the trace keeps hops).

        Raises:
            OSError: the last hops could not be written (the file is closed all the same).
        """
        with self._draining:  # no batch is being written while the file closes
            try:
                self.drain()
            finally:
                self._close_file()

    def _close_file(self) -> None:
        with self._lock:
            self._closed = True
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


_LABELS = 1024  # distinct labels remembered redacted; a run has a handful
_PENDING = 1024  # hops a deferring block holds before it keeps them (bounds memory and loss)
# A payload this long in JSON is kept at once, where it is recorded: its redaction takes long
# enough to matter, and a server records such hops on a worker thread (`mcp._offload`, whose
# threshold this is), which must not hand the work back to the event loop.
_DEFER_UP_TO = 16 * 1024


def _numbered(hops: list[Hop], seq: int, run_id: str) -> Hop | None:
    """The last of ``hops`` numbered ``seq`` in ``run_id``, if any."""
    return next((h for h in reversed(hops) if h.seq == seq and h.run_id == run_id), None)


def _line(item: Pending | Hop) -> bytes:
    """The line of a kept hop, with its newline: a fixed hop's from its JSON, as its `Hop`
    would be written (`hop_line`)."""
    if isinstance(item, Hop):
        return hop_line(item) + b"\n"
    return item.line() + b"\n"


class Deferring:
    """`Trace.deferring`: hops recorded inside are kept at its end, all at once."""

    def __init__(self, trace: Trace) -> None:
        self._trace = trace
        self._token: Token[bool] | None = None

    def __enter__(self) -> Deferring:
        self._token = self._trace._deferring.set(True)
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._token is not None
        self._trace._deferring.reset(self._token)
        self._trace.drain()


def record_verdicts(trace: Trace, label: str, *verdicts: Verdict | None) -> None:
    """Each gate's verdict on one call, as a ``gate`` hop of ``trace`` (None is skipped).

    It lives with the trace, not with MCP, because the host records Python tools' verdicts
    too, and a run of Python tools must not import the MCP SDK.
    """
    for verdict in verdicts:
        if verdict is not None:
            trace.record(
                label, label, "gate", "check", {"tool": verdict.tool}, verdict=verdict.to_json()
            )


def record_shortlist(trace: Trace, label: str, shortlist: Shortlist) -> None:
    """One shortlist decision (the query, k, the tools chosen with their scores and matched
    fields, the pins, how complete it is) as a ``shortlist`` hop of ``trace``."""
    trace.record(label, label, "shortlist", "check", shortlist.to_json())


def _pointers_redacted(redactor: Redactor, verdict: dict[str, Any]) -> dict[str, Any]:
    """``verdict`` (a `Verdict`'s JSON) with each violation as `Redactor.violation` shows it and
    each change's pointer redacted."""
    copy = dict(verdict)
    rejection = verdict.get("rejection")
    if isinstance(rejection, dict) and isinstance(rejection.get("violations"), list):
        violations = [_violation_redacted(redactor, v) for v in rejection["violations"]]
        copy["rejection"] = {**rejection, "violations": violations}
    if isinstance(verdict.get("changes"), list):
        copy["changes"] = [
            {**change, "pointer": redactor.pointer(change["pointer"])}
            for change in verdict["changes"]
        ]
    return copy


def _violation_redacted(redactor: Redactor, violation: dict[str, Any]) -> dict[str, Any]:
    shown = Violation(
        violation["pointer"],
        violation["keyword"],
        violation["message"],
        violation.get("expected"),
        violation.get("got"),
    )
    return redactor.violation(shown).to_json()


def _reopen(path: Path, last_seq: dict[str, int]) -> IO[bytes]:
    """Open an existing trace file to append to, noting each run's last seq.

    Raises:
        JSONError: a line is not a hop (and not one a crash cut short).
    """
    with path.open("rb") as file:
        for hop in hops_of(file, str(path)):
            last_seq[hop.run_id] = max(last_seq.get(hop.run_id, 0), hop.seq)
    return path.open("a+b")


def _ends_cut(file: IO[bytes]) -> bool:
    """Whether the regular file ends in the middle of a line (a writer died there)."""
    try:
        size = os.fstat(file.fileno()).st_size
        return size > 0 and os.pread(file.fileno(), 1, size - 1) != b"\n"
    except OSError:  # a pipe or a terminal: nothing to look back at
        return False


def read_trace(
    path: str | Path, *, on_cut: CutLine | None = None, whole: bool = True
) -> Iterator[Hop]:
    """The hops of a trace file, in order. A line a crash cut short is skipped (``on_cut``
    is told its line number), and reading goes on with the lines after it.

    Args:
        path: the trace file.
        on_cut: told the number of each line a crash cut short.
        whole: each request to a model as the whole body it was sent (`whole_body`: the loop
            writes what a request adds to the one before); False: the lines as written.

    Raises:
        JSONError: a line is not a hop (and not one a crash cut short).
    """
    with Path(path).open("rb") as file:
        hops = hops_of(file, str(path), on_cut)
        if not whole:
            yield from hops
            return
        wholes = Wholes()
        for hop in hops:
            yield wholes.whole(hop)

"""One trace file, indexed once for the Run page: where each hop's line starts and ends, and a
compact row per hop (what the waterfall shows), so a page of hops is read from the file by its
offsets and a search runs over the raw bytes, its hits mapped to hops by the same offsets.

A file that grows is indexed on from where the index stopped (only the new part is read); a
line not yet ended (a writer mid-line) waits for the next refresh. A file that shrank, or whose
first bytes changed, is indexed again from the start.

The tree (spans.md): span hops (protocol ``"span"``) open and close spans; a hop's ``span``
names its span; a JSON-RPC response with no ``span`` belongs to the span of its request (the
pairing rule). A trace without spans is grouped by its user-text hops: each opens a turn.

Memory: about 250 bytes per hop (`HopRow` with interned labels, two offsets); see
BENCHMARKS.md, "The local page".
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from schemawire.errors import SchemawireError
from schemawire.trace import whole_body

__all__ = ["HopRow", "NotATraceError", "Span", "TraceIndex"]

HOP_START = b'{"run":'
LONG_DIGITS = re.compile(rb"\d{19}")  # an integer this long may not fit in 64 bits
LABEL_CHARS = 160  # a row's one-line summary; the whole hop is one click away
SEARCH_CHUNK = 4 << 20  # bytes searched at a time
WHOLES_KEPT = 32  # whole request bodies rebuilt lately, kept: the next one starts there
SEARCH_HITS = 5_000  # hops a search returns at most (the page says when there were more)
READ_CHUNK = 8 << 20  # bytes indexed at a time (a longer line is read whole, in doublings)
READERS_FIRST_S = 1.0  # a refresh waits this long at most for the readers to be done
VIEWS_KEPT = 16  # filtered views kept (each up to a row number per hop): the latest ones


class NotATraceError(SchemawireError):
    """The file holds a line that is not a hop (and not one a crash cut short)."""


@dataclass(slots=True)
class Span:
    """One span: opened by its start hop, closed by its end hop (None while open)."""

    id: str
    kind: str
    name: str
    parent: str | None
    start: int  # the start hop's index
    start_time: float
    depth: int
    end: int | None = None
    end_time: float | None = None
    status: str | None = None


@dataclass(slots=True)
class HopRow:
    """What the waterfall shows of one hop, and what filters and counts read."""

    seq: int
    time: float
    run: str
    source: str
    target: str
    protocol: str
    direction: str
    span: str | None  # the span the hop belongs to (for a span hop: the span it opens/closes)
    depth: int
    label: str
    tool: str | None = None
    outcome: str | None = None  # a verdict's: accepted, repaired, rejected, truncated, redacted
    error: bool = False
    model: str | None = None
    redacted: bool = False  # a secret was replaced somewhere in the hop
    waited: float | None = None  # a response: seconds since its request (model or JSON-RPC)


@dataclass
class TraceIndex:
    """The index of one trace file. `refresh` brings it up to date; safe across threads when
    readers hold `reading()` (a refresh appends to and may reset what they read)."""

    path: Path
    starts: array[int] = field(default_factory=lambda: array("q"))
    ends: array[int] = field(default_factory=lambda: array("q"))
    rows: list[HopRow] = field(default_factory=list[HopRow])
    spans: dict[str, Span] = field(default_factory=dict[str, Span])
    cut_lines: int = 0
    indexed_to: int = 0  # bytes read (up to the end of the last whole line)
    head: bytes = b""  # the file's first bytes when indexed: a rewritten file starts again
    has_spans: bool = False
    turn_starts: list[int] = field(default_factory=list[int])  # old traces: user-text hops
    views: dict[Any, list[int]] = field(default_factory=dict)  # filtered rows, by filter
    _requests: dict[tuple[str, str, str, str], str | None] = field(default_factory=dict)
    _sent_at: dict[tuple[str, str, str, str, str], float] = field(default_factory=dict)
    _wholes: dict[int, dict[str, Any]] = field(default_factory=dict)  # rebuilt lately
    _turn: int | None = None  # old traces: the index of the user-text hop that opened the turn
    _strings: dict[str, str] = field(default_factory=dict[str, str])
    behind: bool = False  # the last refresh stopped at its budget, before the end of the file
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _readers: int = 0  # readers in or waiting: a refresh's next step lets them in first
    _readers_done: threading.Condition = field(default_factory=threading.Condition)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Read the index within it: no refresh meanwhile. A reader goes before the next step
        of a refresh going on (a lock alone is not fair: a loop of steps would keep it)."""
        with self._readers_done:
            self._readers += 1
        try:
            with self._lock:
                yield
        finally:
            with self._readers_done:
                self._readers -= 1
                self._readers_done.notify_all()

    def _let_readers_in(self) -> None:
        with self._readers_done:
            self._readers_done.wait_for(lambda: self._readers == 0, timeout=READERS_FIRST_S)

    def refresh(self, budget: int | None = None) -> int:
        """Index what the file gained since the last refresh (at most about ``budget`` bytes of
        it, whole lines: the rest on the next call); the number of new hops.

        Raises:
            NotATraceError: a line is not a hop.
            OSError: the file cannot be read.
        """
        self._let_readers_in()
        with self._lock, self.path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size < self.indexed_to or file.read(len(self.head)) != self.head:
                self._reset()
            before = len(self.rows)
            self._read(file, size, budget)
            if len(self.rows) != before:
                self.views.clear()  # filtered views of the rows before: recomputed on demand
            return len(self.rows) - before

    def _read(self, file: Any, size: int, budget: int | None) -> None:
        """Index from ``indexed_to`` chunk by chunk (memory: a chunk, or the longest line)."""
        step = min(READ_CHUNK, budget) if budget is not None else READ_CHUNK
        want, spent = step, 0
        self.behind = False
        while self.indexed_to < size:
            if budget is not None and spent >= budget:
                self.behind = True
                return
            at = self.indexed_to
            file.seek(at)
            data = file.read(min(want, size - at))
            if not self.head:
                self.head = data[:64]
            self._index(data, at)
            if self.indexed_to == at:  # no line ended in it
                if at + len(data) >= size:
                    return  # a line not ended yet: the next refresh reads it whole
                want *= 2
                continue
            spent += self.indexed_to - at
            want = step

    def _reset(self) -> None:
        self.starts, self.ends, self.rows, self.spans = array("q"), array("q"), [], {}
        self.cut_lines, self.indexed_to, self.head, self.has_spans = 0, 0, b"", False
        self._requests, self._turn, self.turn_starts, self.views = {}, None, [], {}
        self._sent_at, self._wholes = {}, {}

    def _index(self, data: bytes, base: int) -> None:
        at = 0
        long_digits = [m.start() for m in LONG_DIGITS.finditer(data)]  # once per chunk: cheap
        while True:
            newline = data.find(b"\n", at)
            if newline < 0:
                break  # a line not ended yet: the next refresh reads it whole
            line = data[at:newline]
            if line.strip():
                k = bisect_left(long_digits, at)
                exact = k < len(long_digits) and long_digits[k] < newline
                self._line(line, base + at, len(self.starts) + self.cut_lines + 1, exact=exact)
            at = newline + 1
        self.indexed_to = base + at

    def _line(self, line: bytes, offset: int, number: int, *, exact: bool) -> None:
        try:
            hop = _loads(line, exact=exact)
        except ValueError:
            if line.startswith(HOP_START):
                self.cut_lines += 1  # a crash cut it short; reading goes on, as read_trace does
                return
            raise NotATraceError(f"line {number} is not JSON: is this a trace file?") from None
        if not isinstance(hop, dict) or not {"run", "seq", "protocol"} <= hop.keys():
            raise NotATraceError(f"line {number} is not a hop (no run, seq and protocol members)")
        self.starts.append(offset)
        self.ends.append(offset + len(line))
        row = self._row(hop, len(self.rows))
        row.redacted = b"[REDACTED:" in line
        self.rows.append(row)

    def _intern(self, text: Any) -> str:
        text = str(text)
        return self._strings.setdefault(text, text) if len(text) < 80 else text

    def _row(self, hop: dict[str, Any], index: int) -> HopRow:
        payload = hop.get("payload")
        protocol = self._intern(hop.get("protocol", ""))
        direction = self._intern(hop.get("direction", ""))
        source, target = self._intern(hop.get("from", "")), self._intern(hop.get("to", ""))
        run = self._intern(hop.get("run", ""))
        span = hop.get("span") if isinstance(hop.get("span"), str) else None
        time_ = float(hop.get("time") or 0.0)
        if protocol == "span" and span is not None:
            return self._span_hop(hop, index, span, time_)
        if span is None:
            span = self._paired(
                run,
                source=source,
                target=target,
                protocol=protocol,
                direction=direction,
                payload=payload,
            )
        elif protocol == "mcp" and direction == "send" and isinstance(payload, dict):
            self._remember_request(run, source, target, payload, span)
        if span is None and not self.has_spans and protocol == "text":
            self._turn = index
            self.turn_starts.append(index)
        depth = self._depth(span)
        row = HopRow(
            int(hop.get("seq") or 0),
            time_,
            run,
            source,
            target,
            protocol,
            direction,
            span,
            depth,
            _label(protocol, direction, payload, hop.get("verdict")),
        )
        _facts(row, payload, hop.get("verdict"), self._intern)
        self._time_answer(row, payload)
        return row

    def _time_answer(self, row: HopRow, payload: Any) -> None:
        """Note when a request left; give a response the time it waited for: a model's by
        peer, a JSON-RPC response by its id."""
        request_id = ""
        if isinstance(payload, dict) and "id" in payload and row.protocol == "mcp":
            if "method" in payload and row.direction != "send":
                return  # a request the peer sent us: its answer goes the other way
            request_id = _dumps(payload["id"])
        elif row.protocol == "mcp":
            return  # a notification: nothing answers it
        if row.direction == "send":
            key = (row.run, row.source, row.target, row.protocol, request_id)
            self._sent_at[key] = row.time
        elif row.direction in {"receive", "error"}:
            sent = self._sent_at.pop(
                (row.run, row.target, row.source, row.protocol, request_id), None
            )
            if sent is not None:
                row.waited = row.time - sent

    def _depth(self, span: str | None) -> int:
        if span is not None and span in self.spans:
            return self.spans[span].depth + 1
        if self.has_spans or self._turn is None:
            return 0
        return 0 if self._turn == len(self.rows) else 1

    def _span_hop(self, hop: dict[str, Any], index: int, span_id: str, time_: float) -> HopRow:
        self.has_spans = True
        payload = hop.get("payload") if isinstance(hop.get("payload"), dict) else {}
        assert isinstance(payload, dict)
        kind = self._intern(payload.get("kind", ""))
        direction = self._intern(hop.get("direction", ""))
        span = self.spans.get(span_id)
        if direction == "start" or span is None:
            parent = payload.get("parent") if isinstance(payload.get("parent"), str) else None
            depth = self.spans[parent].depth + 1 if parent in self.spans else 0
            name = str(payload.get("name") or kind)
            span = Span(span_id, kind, name, parent, index, time_, depth)
            self.spans[span_id] = span
        else:
            span.end, span.end_time = index, time_
            span.status = str(payload.get("status") or "ok")
        row = HopRow(
            int(hop.get("seq") or 0),
            time_,
            self._intern(hop.get("run", "")),
            self._intern(hop.get("from", "")),
            self._intern(hop.get("to", "")),
            "span",
            direction,
            span_id,
            span.depth,
            f"{kind} {span.name}" if span.name != kind else kind,
        )
        row.error = direction == "end" and span.status == "error"
        return row

    def _remember_request(
        self, run: str, source: str, target: str, payload: dict[str, Any], span: str | None
    ) -> None:
        if "id" in payload and "method" in payload:
            key = (run, source, target, _dumps(payload["id"]))
            self._requests[key] = span

    def _paired(
        self, run: str, *, source: str, target: str, protocol: str, direction: str, payload: Any
    ) -> str | None:
        """The pairing rule: a JSON-RPC response goes to its request's span."""
        if protocol != "mcp" or not isinstance(payload, dict) or "id" not in payload:
            return None
        if "method" in payload:
            if direction == "send":
                self._remember_request(run, source, target, payload, None)
            return None
        key = (run, target, source, _dumps(payload["id"]))
        return self._requests.pop(key, None)

    # Reading ----------------------------------------------------------------------------

    def line(self, index: int) -> bytes:
        """Hop ``index``'s line, as written."""
        with self.path.open("rb") as file:
            file.seek(self.starts[index])
            return file.read(self.ends[index] - self.starts[index])

    def search(self, query: str, limit: int = SEARCH_HITS) -> tuple[list[int], bool]:
        """The hops whose line holds ``query`` (case-insensitive for ASCII letters, as written
        or JSON-escaped), in order; and whether there were more than ``limit``.

        The file is read in chunks, each lowered (bytes.lower: ASCII, fast) and searched with
        ``find``; a regular expression with IGNORECASE is several times slower."""
        needles = sorted({n.lower().encode() for n in (query, _dumps(query)[1:-1]) if n})
        hits: set[int] = set()
        if not self.starts or not needles:
            return [], False
        overlap = max(len(n) for n in needles) - 1
        with self.path.open("rb") as file:
            at = 0
            while at < self.indexed_to and len(hits) <= limit:
                file.seek(at)
                chunk = file.read(min(SEARCH_CHUNK, self.indexed_to - at) + overlap).lower()
                for needle in needles:
                    found = chunk.find(needle)
                    while found >= 0 and len(hits) <= limit:
                        index = bisect_right(self.starts, at + found) - 1
                        if index >= 0 and at + found < self.ends[index]:
                            hits.add(index)
                        found = chunk.find(needle, found + 1)
                at += SEARCH_CHUNK
        ordered = sorted(hits)
        return ordered[:limit], len(ordered) > limit

    def whole(self, index: int) -> dict[str, Any] | None:
        """Hop ``index``'s payload with its request delta filled in (None: not a delta).

        The chain of deltas back to a whole body (or to one rebuilt lately) is walked without
        recursion: a long run's last request stands on thousands before it."""
        payload = _loads(self.line(index)).get("payload")
        if not _is_delta(payload):
            return None
        chain = [(index, payload)]
        before: dict[str, Any] | None = None
        at = self._previous_send(index)
        while at is not None:
            if at in self._wholes:
                before = self._wholes[at]
                break
            earlier = _loads(self.line(at)).get("payload")
            if not _is_delta(earlier):
                before = earlier if isinstance(earlier, dict) else None
                break
            chain.append((at, earlier))
            at = self._previous_send(at)
        for at, delta in reversed(chain):
            before = whole_body(before, delta)
            self._wholes[at] = before
            while len(self._wholes) > WHOLES_KEPT:
                del self._wholes[next(iter(self._wholes))]
        return before

    def _previous_send(self, index: int) -> int | None:
        """The request before hop ``index`` to the same model in the same run (run id and
        ``run`` span: two runs that overlap in one file each have their own deltas), which
        the delta of hop ``index`` extends (docs/traces.md)."""
        row = self.rows[index]
        run_span = self._run_span(row.span)
        for at in range(index - 1, -1, -1):
            other = self.rows[at]
            if (
                other.direction == "send"
                and other.run == row.run
                and other.source == row.source
                and other.target == row.target
                and other.protocol == row.protocol
                and self._run_span(other.span) == run_span
            ):
                return at
        return None

    def _run_span(self, span_id: str | None) -> str | None:
        """The ``run`` span that span ``span_id`` is in, if any."""
        span = self.spans.get(span_id) if span_id is not None else None
        while span is not None and span.kind != "run":
            span = self.parent_of(span)
        return span.id if span is not None else None

    def parent_of(self, span: Span) -> Span | None:
        """The span ``span`` is in, when it is shallower: a trace that started a span id twice
        can name a cycle (A in B in A), and a walk up must end."""
        above = self.spans.get(span.parent or "")
        return above if above is not None and above.depth < span.depth else None

    def memory(self) -> int:
        """Bytes the index holds (rows, their labels, the offsets), roughly."""
        size = sys.getsizeof(self.rows) + self.starts.itemsize * len(self.starts) * 2
        for row in self.rows:
            size += sys.getsizeof(row) + sys.getsizeof(row.label)
        return size


def _loads(line: bytes, *, exact: bool | None = None) -> Any:
    """One line's JSON: orjson's, or the standard library's when the line may hold an integer
    beyond 64 bits (orjson reads one as a float, silently inexact; the trace writes it exact).
    ``exact``: whether it may (None: look)."""
    if exact is None:
        exact = LONG_DIGITS.search(line) is not None
    if not exact:
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass  # what orjson refuses and json may read: a reader's last word below
    return json.loads(line)


def _dumps(value: Any) -> str:
    """``value`` as compact JSON text: orjson's, or the standard library's for an integer
    beyond 64 bits (which orjson refuses and `_loads` reads exactly)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _is_delta(payload: Any) -> bool:
    return isinstance(payload, dict) and (
        isinstance(payload.get("history"), dict) or payload.get("tools") == "unchanged"
    )


# A hop's one-line summary and facts --------------------------------------------------------


def _label(protocol: str, direction: str, payload: Any, verdict: Any) -> str:
    """A hop's one-line summary: what a person scanning the waterfall needs to see."""
    if protocol == "gate" and isinstance(verdict, dict):
        return _verdict_label(verdict)
    if not isinstance(payload, dict):
        return _short(payload)
    return _payload_label(protocol, direction, payload)


def _verdict_label(verdict: dict[str, Any]) -> str:
    """The gate, the tool and the first violation (the row's badge says the outcome and its
    protocol badge says "gate": what is left must fit a narrow column)."""
    text = f"{verdict.get('gate')} · {verdict.get('tool')}"
    rejection = verdict.get("rejection")
    if isinstance(rejection, dict) and isinstance(rejection.get("violations"), list):
        violations = rejection["violations"]
        first = violations[0] if violations else {}
        if isinstance(first, dict):
            text += f" · {first.get('pointer') or '/'} {first.get('message', '')}"
        if len(violations) > 1:
            text += f" (+{len(violations) - 1} more)"
    return text[:LABEL_CHARS]


def _payload_label(protocol: str, direction: str, payload: dict[str, Any]) -> str:  # noqa: PLR0911 (one answer per protocol)
    if protocol == "text":
        return _short(payload.get("text"))
    if protocol == "mcp":
        return _mcp_label(payload)
    if protocol == "python":
        if direction == "send":
            return f"{payload.get('tool')} {_short(payload.get('arguments'))}"[:LABEL_CHARS]
        return ("error " if payload.get("isError") else "") + _short(payload.get("content"))
    if direction == "error":
        error = payload.get("error")
        return "error: " + _short(error.get("message") if isinstance(error, dict) else error)
    if "model" in payload and direction == "send":
        return _request_label(payload)
    return _response_label(payload)


def _mcp_label(payload: dict[str, Any]) -> str:
    method = payload.get("method")
    params = payload.get("params") if isinstance(payload.get("params"), dict) else {}
    assert isinstance(params, dict)
    if method == "tools/call":
        return f"tools/call {params.get('name')} {_short(params.get('arguments'))}"[:LABEL_CHARS]
    if method:
        return str(method)
    if "error" in payload:
        error = payload["error"]
        return "error: " + _short(error.get("message") if isinstance(error, dict) else error)
    result = payload.get("result")
    if isinstance(result, dict):
        if isinstance(result.get("tools"), list):
            return f"result: {len(result['tools'])} tools"
        content = result.get("content")
        if isinstance(content, list) and content and isinstance(content[0], dict):
            mark = "error " if result.get("isError") else ""
            return mark + "result " + _short(content[0].get("text", content[0]))
    return "result " + _short(result)


def _request_label(payload: dict[str, Any]) -> str:
    history = payload.get("history")
    key = history.get("key") if isinstance(history, dict) else None
    for name in (key, "messages", "input", "contents"):
        if isinstance(name, str) and isinstance(payload.get(name), list):
            kept = history.get("kept", 0) if isinstance(history, dict) else 0
            return f"{payload.get('model')} · {kept + len(payload[name])} {name}"
    return str(payload.get("model"))


def _response_label(payload: dict[str, Any]) -> str:
    choices = payload.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message") or {}
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if calls:
            names = [str((c.get("function") or {}).get("name")) for c in calls]
            return "calls " + ", ".join(names)
        if isinstance(message, dict):
            return "answer: " + _short(message.get("content"))
    for key in ("content", "output", "candidates"):
        if key in payload:
            return _short(payload[key])
    return _short(payload)


def _short(value: Any) -> str:
    """``value`` on one line, cut to LABEL_CHARS (cut first: a hop may hold megabytes)."""
    if isinstance(value, str):
        text = value[: LABEL_CHARS * 4]
    else:
        text = _dumps(_cut(value))[: LABEL_CHARS * 4]
    return " ".join(text.split())[:LABEL_CHARS]


def _cut(value: Any, depth: int = 0) -> Any:
    """Enough of ``value`` for a label: its first items and the start of its strings, a few
    levels deep (a label never dumps a hop's megabytes)."""
    if isinstance(value, str):
        return value[:LABEL_CHARS]
    if depth >= 4 and isinstance(value, dict | list):
        return "…"
    if isinstance(value, dict):
        return {k: _cut(v, depth + 1) for k, v in islice(value.items(), LABEL_CHARS)}
    if isinstance(value, list):
        return [_cut(v, depth + 1) for v in value[:LABEL_CHARS]]
    return value


def _facts(row: HopRow, payload: Any, verdict: Any, intern: Any) -> None:
    """The tool, the verdict's outcome, whether it is an error and the model, for filters and
    the Runs page's counts."""
    if isinstance(verdict, dict):
        row.outcome = intern(verdict.get("outcome") or "")
        if verdict.get("tool"):
            row.tool = intern(verdict["tool"])
    if not isinstance(payload, dict):
        return
    if row.protocol == "mcp":
        params = payload.get("params")
        if payload.get("method") == "tools/call" and isinstance(params, dict):
            row.tool = intern(params.get("name"))
        result = payload.get("result")
        failed = isinstance(result, dict) and result.get("isError") is True
        row.error = "error" in payload or failed
    elif row.protocol == "python":
        row.tool = intern(payload.get("tool")) if payload.get("tool") else row.tool
        row.error = payload.get("isError") is True
    elif row.direction == "error":
        row.error = True
    if row.direction == "send" and isinstance(payload.get("model"), str):
        row.model = intern(payload["model"])

"""The trace: every hop of a run, in order, kept in memory and (optionally) written as JSON Lines.

A trace file holds one `Hop` per line, written and flushed as the hop happens, so a run that
crashes leaves every hop up to the crash. Secrets are redacted before a hop is kept: nothing a
trace holds, in memory or on disk, can leak a key (DESIGN: local first).

One id per run: a run's id is its hops' ``run`` member and, by default, its trace file's name
(`trace_path`: ``.schemawire/traces/<run id>.jsonl``). A run resumed later appends to that file,
its hops numbered on from the last one there. The file is created with the first hop, so a run
that never starts leaves no empty trace behind.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from schemawire._json import Limits, loads
from schemawire.errors import ErrorCode, JSONError
from schemawire.gates.redact import Redactor, default_redactor
from schemawire.types import Hop

if TYPE_CHECKING:
    from schemawire.gates import Verdict

__all__ = ["TRACES", "Trace", "new_run_id", "read_trace", "record_verdicts", "trace_path"]

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
        redactor: Redactor | None = None,
        redact: bool = True,
        clock: Callable[[], float] = time.time,
        on_hop: Callable[[Hop], None] | None = None,
    ) -> None:
        """
        Args:
            run_id: the run's id; a new one (`new_run_id`) when not given.
            path: a JSON Lines file to append each hop to, as it happens (created with the
                first hop). A line a crash cut short at its end is dropped before appending.
            redactor: the secret detectors (default: `default_redactor`).
            redact: redact payloads before keeping them; turn off only for benchmarks.
            clock: the time source, seconds since the epoch.
            on_hop: called with each hop once it is kept (to show hops as they happen).

        Raises:
            JSONError: ``path`` holds a line, before its last, that is not a hop.
            OSError: ``path`` exists and cannot be read or written.
        """
        self.run_id = run_id or new_run_id()
        self.hops: list[Hop] = []
        self.path = Path(path) if path is not None else None
        self._redactor = (redactor or default_redactor()) if redact else None
        self._clock = clock
        self._on_hop = on_hop
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._closed = False
        self._last_seq: dict[str, int] = {}  # run id -> the last hop's seq, here or in the file
        if self.path is not None and self.path.is_file():  # not a pipe or a terminal
            self._file = _reopen(self.path, self._last_seq)
        self._holds_hops = bool(self._last_seq)

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
    ) -> Hop:
        """Keep one hop (its payload redacted) and append it to the file, if any."""
        if self._redactor is not None:
            payload, _ = self._redactor.value(payload)
        with self._lock:
            seq = self._last_seq.get(self.run_id, 0) + 1
            self._last_seq[self.run_id] = seq
            hop = Hop(
                self.run_id,
                seq,
                self._clock(),
                source,
                target,
                protocol,
                direction,
                payload,
                verdict,
            )
            self.hops.append(hop)
            self._write(hop)
        if self._on_hop is not None:
            self._on_hop(hop)
        return hop

    def _write(self, hop: Hop) -> None:
        if self.path is None or self._closed:
            return
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("ab")
        self._file.write(_line(hop) + b"\n")
        self._file.flush()
        self._holds_hops = True

    @property
    def written(self) -> bool:
        """Whether the trace has a file that holds hops (the path is worth showing)."""
        return self._holds_hops

    def close(self) -> None:
        """Close the file; the hops stay in memory, and later ones are kept there only."""
        with self._lock:
            self._closed = True
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


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


def _reopen(path: Path, last_seq: dict[str, int]) -> IO[bytes]:
    """Open an existing trace file to append to: a last line cut short by a crash is cut off
    (so the next hop starts a line of its own), and each run's last seq is noted.

    Raises:
        JSONError: a line before the last is not a hop.
    """
    file = path.open("r+b")
    try:
        text = file.read()
        whole = text.rfind(b"\n") + 1
        if whole < len(text):
            file.truncate(whole)
        for hop in _hops(text[:whole].split(b"\n"), str(path), cut_short=False):
            last_seq[hop.run_id] = max(last_seq.get(hop.run_id, 0), hop.seq)
        file.seek(0, 2)
    except BaseException:
        file.close()
        raise
    return file


def read_trace(path: str | Path) -> Iterator[Hop]:
    """The hops of a trace file, in order. A line cut short by a crash ends the reading.

    Raises:
        JSONError: a line before the last is not a hop.
    """
    with Path(path).open("rb") as file:
        lines = file.read().split(b"\n")
    yield from _hops(lines, str(path), cut_short=True)


def _hops(lines: list[bytes], source: str, *, cut_short: bool) -> Iterator[Hop]:
    """The hops of ``lines``; with ``cut_short``, a last line that is not one ends them."""
    last = len(lines) - 1
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield _hop(_parsed(line))
        except (orjson.JSONDecodeError, JSONError, KeyError, TypeError) as error:
            if cut_short and number >= last:  # the line a crash cut short
                return
            raise JSONError(
                ErrorCode.JSON_SYNTAX, f"not a hop: {error}", source=source, line=number, column=1
            ) from None


def _hop(record: dict[str, Any]) -> Hop:
    return Hop(
        record["run"],
        record["seq"],
        record["time"],
        record["from"],
        record["to"],
        record["protocol"],
        record["direction"],
        record["payload"],
        record.get("verdict"),
    )


# 20 digits in a row may be an integer beyond 64 bits, which orjson would turn into a float.
_LONG_DIGITS = re.compile(rb"[0-9]{20}")
_EXACT = Limits(max_bytes=2**31 - 1, max_depth=250, allow_duplicate_keys=True)


def _parsed(line: bytes) -> Any:
    """A line of a trace file: orjson's speed, the checked parser's exact integers where a
    number may need them."""
    return loads(line, limits=_EXACT) if _LONG_DIGITS.search(line) else orjson.loads(line)


def _line(hop: Hop) -> bytes:
    """One hop as a line of JSON; an integer beyond 64 bits (which orjson refuses) is written
    exactly by the standard library."""
    value = hop.to_json()
    try:
        return orjson.dumps(value, default=str)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode()

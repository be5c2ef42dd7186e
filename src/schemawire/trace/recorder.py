"""The trace: every hop of a run, in order, kept in memory and (optionally) written as JSON Lines.

A trace file holds one `Hop` per line, written and flushed as the hop happens, so a run that
crashes leaves every hop up to the crash. Secrets are redacted before a hop is kept: nothing a
trace holds, in memory or on disk, can leak a key (DESIGN: local first).
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from schemawire.errors import ErrorCode, JSONError
from schemawire.gates.redact import Redactor, default_redactor
from schemawire.types import Hop

__all__ = ["Trace", "read_trace"]


class Trace:
    """Records hops. Safe to share between tasks and threads of one run.

    Example:
        >>> trace = Trace(run_id="demo")
        >>> hop = trace.record("host", "mcp:echo", "mcp", "send", {"method": "ping"})
        >>> (hop.seq, trace.hops[0].payload)
        (1, {'method': 'ping'})
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
            run_id: the run's id; a random one when not given.
            path: a JSON Lines file to append each hop to, as it happens.
            redactor: the secret detectors (default: `default_redactor`).
            redact: redact payloads before keeping them; turn off only for benchmarks.
            clock: the time source, seconds since the epoch.
            on_hop: called with each hop once it is kept (to show hops as they happen).
        """
        self.run_id = run_id or uuid.uuid4().hex[:16]
        self.hops: list[Hop] = []
        self.path = Path(path) if path is not None else None
        self._redactor = (redactor or default_redactor()) if redact else None
        self._clock = clock
        self._on_hop = on_hop
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("ab")

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
            hop = Hop(self.run_id, next(self._seq), self._clock(), source, target, protocol,
                      direction, payload, verdict)  # fmt: skip
            self.hops.append(hop)
            if self._file is not None:
                self._file.write(orjson.dumps(hop.to_json(), default=str) + b"\n")
                self._file.flush()
        if self._on_hop is not None:
            self._on_hop(hop)
        return hop

    def close(self) -> None:
        """Close the file; the hops stay in memory."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def read_trace(path: str | Path) -> Iterator[Hop]:
    """The hops of a trace file, in order. A line cut short by a crash ends the reading.

    Raises:
        JSONError: a line before the last is not a hop.
    """
    with Path(path).open("rb") as file:
        lines = file.read().split(b"\n")
    last = len(lines) - 1
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield _hop(orjson.loads(line))
        except (orjson.JSONDecodeError, KeyError, TypeError) as error:
            if number >= last:  # the line a crash cut short
                return
            raise JSONError(ErrorCode.JSON_SYNTAX, f"not a hop: {error}", source=str(path),
                            line=number, column=1) from None  # fmt: skip


def _hop(record: dict[str, Any]) -> Hop:
    return Hop(record["run"], record["seq"], record["time"], record["from"], record["to"],
               record["protocol"], record["direction"], record["payload"],
               record.get("verdict"))  # fmt: skip

"""The traces under the page's traces folder: their files (newest first), each one's summary
(cached by size and mtime) and index (the runs opened lately kept), shared by the Runs page's
API (`schemawire.ui._runs`) and the Run page's (`schemawire.ui._run`)."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from starlette.responses import JSONResponse, Response

from schemawire.ui._trace_index import NotATraceError, TraceIndex

__all__ = ["TraceFolder", "error_response", "summarise"]

INDEXES_KEPT = 6  # whole indexes kept in memory (the runs open lately); summaries are kept all
HEAD_BYTES = 512 << 10  # a cold trace's bytes indexed before its first answer (1,500 hops)
STEP_BYTES = 1 << 20  # the rest is indexed off the request, this much per hold of its lock


class TraceFolder:
    """The traces under one folder: their files, summaries and indexes (thread-safe)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._indexes: OrderedDict[Path, TraceIndex] = OrderedDict()
        self._summaries: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}
        self._catching_up: dict[Path, threading.Thread] = {}  # indexes built off a request
        self._lock = threading.Lock()

    def files(self) -> list[tuple[Path, os.stat_result]]:
        """Every trace file with its stat, newest first: regular files under the folder (a
        symlink to a file outside it is left out, as `resolve` refuses it)."""
        root = self.root.resolve()
        found = []
        for path in self.root.rglob("*.jsonl"):
            try:
                stat = path.stat()
                inside = root in path.resolve().parents
            except (OSError, RuntimeError):
                continue  # gone since it was listed, or a symlink loop
            if inside and path.is_file():
                found.append((path, stat))
        found.sort(key=lambda item: (item[1].st_mtime_ns, str(item[0])), reverse=True)
        return found

    def signature(self, files: list[tuple[Path, os.stat_result]]) -> str:
        """What changes when a trace appears, grows or goes."""
        digest = hashlib.blake2b(digest_size=12)
        for path, stat in files:
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
        return digest.hexdigest()

    def relative(self, path: Path) -> str:
        """``path`` as the page names it: relative to the folder (as listed, or resolved)."""
        if path.is_relative_to(self.root):
            return path.relative_to(self.root).as_posix()
        return path.relative_to(self.root.resolve()).as_posix()

    def resolve(self, relative: str) -> Path | None:
        """The trace file ``relative`` names, when it is one under the folder."""
        try:
            path = (self.root / relative).resolve()
        except (OSError, RuntimeError, ValueError):  # a NUL byte, a symlink loop
            return None
        root = self.root.resolve()
        if root not in path.parents or path.suffix != ".jsonl" or not path.is_file():
            return None
        return path

    def find_run(self, run_id: str) -> Path | None:
        """The trace of run ``run_id``: the file named by it, else one whose hops are its."""
        for path, _ in self.files():
            if path.stem == run_id:
                return path
        for path, stat in self.files():
            summary = self.summary(path, stat)
            if run_id in summary.get("runs", []):
                return path
        return None

    def index(self, path: Path, *, head: bool = False) -> TraceIndex:
        """``path``'s index, brought up to date (built on first use). With ``head``, a trace
        not indexed yet is indexed as far as its first HEAD_BYTES only, and the rest in a
        thread of its own (`indexing` says until when): the first page of a 100,000-hop trace
        need not wait for its last hop (`index_rest` goes on).

        Raises:
            NotATraceError, OSError: as `TraceIndex.refresh`.
        """
        with self._lock:
            index = self._indexes.pop(path, None) or TraceIndex(path)
            self._indexes[path] = index
            while len(self._indexes) > INDEXES_KEPT:
                self._indexes.popitem(last=False)
            catching_up = path in self._catching_up
        if not head:  # a step at a time: a page of rows read meanwhile need not wait for all
            index.refresh(budget=STEP_BYTES)
            while index.behind:
                index.refresh(budget=STEP_BYTES)
        elif not catching_up:
            index.refresh(budget=HEAD_BYTES)  # the caller answers, then calls `index_rest`
        return index

    def index_rest(self, path: Path, index: TraceIndex) -> None:
        """Index the rest of a trace indexed as far as its head, in a thread of its own (after
        the first answer is sent: it would share the interpreter with it)."""
        if index.behind:
            self._catch_up(path, index)

    def indexing(self, path: Path) -> bool:
        """Whether ``path``'s index is still being built off the request (or is to be)."""
        with self._lock:
            index = self._indexes.get(path)
            return path in self._catching_up or (index is not None and index.behind)

    def wait_indexed(self, path: Path, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) for ``path``'s index to be built; whether it is."""
        with self._lock:
            thread = self._catching_up.get(path)
        if thread is not None:
            thread.join(timeout)
        return not self.indexing(path)

    def _catch_up(self, path: Path, index: TraceIndex) -> None:
        with self._lock:
            if path in self._catching_up:
                return
            thread = threading.Thread(
                target=self._index_rest, args=(path, index), name="trace-index", daemon=True
            )
            self._catching_up[path] = thread
        thread.start()

    def _index_rest(self, path: Path, index: TraceIndex) -> None:
        """Index the rest of ``path`` a step at a time (readers get the lock in between)."""
        try:
            index.refresh(budget=STEP_BYTES)
            while index.behind:
                index.refresh(budget=STEP_BYTES)
        except (NotATraceError, OSError):
            pass  # the next request's own refresh meets it and answers with it
        finally:
            with self._lock:
                self._catching_up.pop(path, None)

    def summary(self, path: Path, stat: os.stat_result) -> dict[str, Any]:
        """``path``'s summary, from the cache when its size and mtime are those cached."""
        key = (stat.st_size, stat.st_mtime_ns)
        cached = self._summaries.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            index = self.index(path)
            with index.reading():
                summary = summarise(index)
        except (NotATraceError, OSError, UnicodeDecodeError) as error:
            summary = {"status": "unreadable", "error": str(error), "hops": 0}
        summary = {"file": self.relative(path), "size": stat.st_size, **summary}
        self._summaries[path] = (key, summary)
        return summary


def summarise(index: TraceIndex) -> dict[str, Any]:
    """What the Runs page shows of one trace."""
    rows = index.rows
    runs = list(dict.fromkeys(row.run for row in rows))
    models = list(dict.fromkeys(row.model for row in rows if row.model))
    tools = list(dict.fromkeys(row.tool for row in rows if row.tool))
    start = rows[0].time if rows else None
    end = rows[-1].time if rows else None
    return {
        "runs": runs,
        "run": runs[-1] if runs else None,
        "start": start,
        "duration": (end - start) if start is not None and end is not None else None,
        "status": _status(index),
        "models": models,
        "tools": tools,
        "refusals": sum(row.outcome == "rejected" for row in rows),
        "repairs": sum(row.outcome == "repaired" for row in rows),
        "redactions": sum(row.redacted or row.outcome == "redacted" for row in rows),
        "errors": sum(row.error and row.protocol != "span" for row in rows),
        "hops": len(rows),
        "spans": index.has_spans,
    }


def _status(index: TraceIndex) -> str:
    """ok, error, refused or open: the run spans' own word; without spans, from the hops."""
    runs = [span for span in index.spans.values() if span.kind in {"run", "flow"}]
    if runs:
        if any(span.end is None for span in runs):
            return "open"
        for word in ("error", "refused"):
            if any(span.status == word for span in runs):
                return word
        return "ok"
    if not index.rows:
        return "open"
    return "error" if any(row.error for row in index.rows) else "ok"


def error_response(code: str, message: str, status: int = 400) -> Response:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)

"""The Diff page's API: two runs' hops aligned, and each aligned pair as an RFC 6902 patch.

Hops are aligned by their key: protocol, direction, and what the hop is about (a JSON-RPC
message's method and, for ``tools/call``, the tool; a gate verdict's gate and tool; a span's
kind and name; a model request by its API, which is its protocol). The alignment is a longest
common subsequence of the two key sequences (`schemawire.ui._diff_align`: Myers' O(ND) in
linear memory, after trimming the common prefix and suffix). A pair is equal when the two
hops are equal once what always differs is left out (`IGNORED`); its patch is computed only
when the page shows it.

Routes:
    GET /api/diff/runs: the runs under the traces folder, newest first.
    GET /api/diff?a=RUN&b=RUN[&offset&limit&only=changed]: the summary and a page of rows.
    GET /api/diff/pair?a=RUN&b=RUN&row=N: one row's two hops (JSON text), patch and edits.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from schemawire._json import JSONValue, dumps, json_in_text, loads, written_alike
from schemawire._patch import PatchEdit, diff_json, edit_line, summarise_patch
from schemawire.errors import JSONError, UsageError
from schemawire.trace import read_trace, trace_path
from schemawire.types import Hop
from schemawire.ui._diff_align import MAX_D, Step, align

if TYPE_CHECKING:
    from schemawire.ui._config import UiConfig

__all__ = ["IGNORED", "routes"]

IGNORED = (
    "the run id, seq and time of every hop",
    "span ids (a hop's span, a span's parent)",
    "JSON-RPC ids (payload.id of an MCP message)",
    "W3C trace context (params._meta.traceparent and tracestate of an MCP message)",
)
"""What always differs between two runs, so the patches leave it out (the page says so)."""

ALGORITHM = (
    "longest common subsequence of the hops' keys (protocol, direction, method, tool): "
    "Myers' O(ND) algorithm in linear space, after trimming the common prefix and suffix"
)
APPROXIMATE = (
    f"parts of the two runs differ by more than {2 * MAX_D:,} hops between two common ones: "
    "they are left unpaired, so this alignment may pair fewer hops than it could"
)
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_PAGE = 500
_MAX_PAGE = 5000
_HEAD_BYTES = 64 * 1024  # what the run list reads of each file, for its first question


class DiffRequestError(UsageError):
    """A request the diff cannot answer: 400 or 404 with what to do next."""

    def __init__(self, message: str, status: int = 400, code: str = "bad_request") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def routes(config: UiConfig) -> list[BaseRoute]:
    """The diff page's API routes, under ``/api/diff``."""
    runs = _Runs(config.traces)

    async def list_runs(request: Request) -> Response:
        return await _answer(runs.listing)

    async def compare(request: Request) -> Response:
        query = request.query_params
        return await _answer(
            lambda: runs.comparison(query.get("a", ""), query.get("b", "")).page(
                _int(query.get("offset"), 0),
                min(_int(query.get("limit"), _PAGE), _MAX_PAGE),
                changed_only=query.get("only") == "changed",
            )
        )

    async def pair(request: Request) -> Response:
        query = request.query_params
        return await _answer(
            lambda: runs.comparison(query.get("a", ""), query.get("b", "")).pair(
                _int(query.get("row"), -1)
            )
        )

    return [
        Route("/api/diff/runs", list_runs, methods=["GET"]),
        Route("/api/diff/pair", pair, methods=["GET"]),
        Route("/api/diff", compare, methods=["GET"]),
    ]


async def _answer(action: Any) -> Response:
    try:
        return JSONResponse(await run_in_threadpool(action))
    except DiffRequestError as error:
        body = {"error": {"code": error.code, "message": str(error)}}
        return JSONResponse(body, status_code=error.status)
    except JSONError as error:
        message = f"a trace cannot be read: {error}"
        return JSONResponse({"error": {"code": str(error.code), "message": message}}, 400)


def _int(text: str | None, default: int) -> int:
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise DiffRequestError(f"{dumps(text)} is not a number") from None


class _Runs:
    """The traces folder: its runs, and the comparisons asked for (the last few kept, each
    for as long as neither file changes)."""

    _KEPT = 4

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.lock = threading.Lock()
        self.kept: OrderedDict[tuple[Any, ...], Comparison] = OrderedDict()

    def listing(self) -> dict[str, Any]:
        files = [p for p in self.folder.rglob("*.jsonl") if p.is_file()] if self.folder else []
        files.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        return {"runs": [_run_entry(self.folder, path) for path in files]}

    def path_of(self, run_id: str) -> Path:
        if not _RUN_ID.fullmatch(run_id):
            raise DiffRequestError(f"{dumps(run_id)} is not a run id: choose a run in the list")
        path = trace_path(run_id, self.folder)
        if path.is_file():
            return path
        found = next((p for p in self.folder.rglob(f"{run_id}.jsonl") if p.is_file()), None)
        if found is None:
            raise DiffRequestError(
                f"no trace of run {run_id} under the traces folder", 404, "not_found"
            )
        return found

    def comparison(self, a: str, b: str) -> Comparison:
        if not a or not b:
            raise DiffRequestError("give two runs: ?a=RUN_ID&b=RUN_ID")
        paths = self.path_of(a), self.path_of(b)
        stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
        with self.lock:
            if stamp in self.kept:
                self.kept.move_to_end(stamp)
                return self.kept[stamp]
        made = Comparison.of(a, paths[0], b, paths[1])
        with self.lock:
            self.kept[stamp] = made
            while len(self.kept) > self._KEPT:
                self.kept.popitem(last=False)
        return made


def _run_entry(folder: Path, path: Path) -> dict[str, Any]:
    stat = path.stat()
    return {
        "run": path.stem,
        "file": path.relative_to(folder).as_posix(),
        "modified": stat.st_mtime,
        "bytes": stat.st_size,
        "question": _first_question(path),
    }


def _first_question(path: Path) -> str | None:
    """The first user text of a trace (read from its first lines only), to label the run."""
    with path.open("rb") as file:
        head = file.read(_HEAD_BYTES)
    for line in head.split(b"\n")[:200]:
        if b'"protocol":"text"' not in line.replace(b" ", b""):
            continue
        try:
            hop = loads(line)
        except JSONError:
            continue
        payload = hop.get("payload") if isinstance(hop, dict) else None
        if isinstance(payload, dict) and isinstance(payload.get("text"), str):
            return str(payload["text"])[:200]
    return None


# One comparison: two traces, their keys, the alignment and each pair's equality.


@dataclass(frozen=True, slots=True)
class Comparison:
    a_run: str
    b_run: str
    a: list[Hop]
    b: list[Hop]
    keys: tuple[list[tuple[str, ...]], list[tuple[str, ...]]]  # each hop's key, A's and B's
    steps: list[Step]
    equal: list[bool | None]  # per step: None for a hop in one run only
    exact: bool  # False: a part of the runs differed too much to search, and is unpaired

    @classmethod
    def of(cls, a_run: str, a_path: Path, b_run: str, b_path: Path) -> Comparison:
        a, b = list(read_trace(a_path)), list(read_trace(b_path))
        keys = hop_keys(a), hop_keys(b)
        alignment = align(*keys)
        steps = alignment.steps
        equal = [
            None if i is None or j is None else _same(compared(a[i]), compared(b[j]))
            for i, j in steps
        ]
        return cls(a_run, b_run, a, b, keys, steps, equal, alignment.exact)

    def summary(self) -> dict[str, Any]:
        pairs = [e for e in self.equal if e is not None]
        return {
            "hops": {"a": len(self.a), "b": len(self.b)},
            "pairs": len(pairs),
            "equal": sum(pairs),
            "changed": len(pairs) - sum(pairs),
            "only_a": sum(j is None for _, j in self.steps),
            "only_b": sum(i is None for i, _ in self.steps),
            "verdicts": self.verdict_changes(),
            "exact": self.exact,
        }

    def verdict_changes(self) -> list[dict[str, Any]]:
        """The pairs whose gate verdicts differ (accepted in A, refused in B, or the reverse)."""
        changes = []
        for row, (i, j) in enumerate(self.steps):
            if i is None or j is None:
                continue
            a, b = _outcome(self.a[i]), _outcome(self.b[j])
            if (a or b) and a != b:
                verdict = self.a[i].verdict or self.b[j].verdict or {}
                changes.append(
                    {
                        "row": row,
                        "gate": verdict.get("gate"),
                        "tool": verdict.get("tool"),
                        "a": a,
                        "b": b,
                    }
                )
        return changes

    def page(self, offset: int, limit: int, *, changed_only: bool) -> dict[str, Any]:
        rows = [
            row for row in range(len(self.steps)) if not changed_only or self.equal[row] is not True
        ]
        shown = rows[max(0, offset) : max(0, offset) + max(1, limit)]
        return {
            "a": {"run": self.a_run, "hops": len(self.a)},
            "b": {"run": self.b_run, "hops": len(self.b)},
            "summary": self.summary(),
            "ignored": list(IGNORED),
            "algorithm": ALGORITHM if self.exact else f"{ALGORITHM}; {APPROXIMATE}",
            "total": len(rows),
            "offset": offset,
            "rows": [self.row(row) for row in shown],
        }

    def row(self, row: int) -> dict[str, Any]:
        i, j = self.steps[row]
        key = self.keys[0][i] if i is not None else self.keys[1][j]  # type: ignore[index]
        kind = "pair" if i is not None and j is not None else ("a" if j is None else "b")
        return {
            "row": row,
            "kind": kind,
            "equal": self.equal[row],
            "label": " ".join(key),
            "a": None if i is None else {"seq": self.a[i].seq, "outcome": _outcome(self.a[i])},
            "b": None if j is None else {"seq": self.b[j].seq, "outcome": _outcome(self.b[j])},
        }

    def pair(self, row: int) -> dict[str, Any]:
        """Row ``row``: the two hops as JSON text (what is compared), the patch from A's to
        B's and each edit as ``schemawire diff`` words it, and the pointers each side changes."""
        if not 0 <= row < len(self.steps):
            raise DiffRequestError(f"no row {row}: the alignment has {len(self.steps)} rows", 404)
        i, j = self.steps[row]
        before = compared(self.a[i]) if i is not None else None
        after = compared(self.b[j]) if j is not None else None
        answer: dict[str, Any] = self.row(row) | {
            "a_text": None if before is None else dumps(before),
            "b_text": None if after is None else dumps(after),
        }
        if before is not None and after is not None:
            patch = diff_json(before, after)
            edits = summarise_patch(before, patch)
            answer |= {
                "patch": dumps(cast("JSONValue", patch)),
                "edits": [_edit(e) for e in edits],
                "highlight_a": sorted(
                    {e.source or e.path for e in edits if e.op in ("replace", "remove", "move")}
                ),
                "highlight_b": sorted({e.path for e in edits if e.op != "remove"}),
            }
        return answer


def _edit(edit: PatchEdit) -> dict[str, Any]:
    """An edit for the page; a string that held JSON and still does (a tool call's arguments,
    a tool result's text) gets the edits inside it too, in ``inner``."""
    shown: dict[str, Any] = {"op": edit.op, "path": edit.path, "line": edit_line(edit)}
    if edit.op == "replace" and isinstance(edit.old, str) and isinstance(edit.new, str):
        old, new = json_in_text(edit.old), json_in_text(edit.new)
        if old is not None and new is not None:
            inner = summarise_patch(old, diff_json(old, new))
            shown["inner"] = [edit_line(e) for e in inner]
    return shown


def hop_keys(hops: list[Hop]) -> list[tuple[str, ...]]:
    """Each hop's alignment key. A JSON-RPC response takes its request's method (and tool),
    found by id among the earlier sends of the same peers."""
    requests: dict[tuple[str, str, str], tuple[str, ...]] = {}
    keys: list[tuple[str, ...]] = []
    for hop in hops:
        key = _key(hop)
        payload = hop.payload if isinstance(hop.payload, dict) else {}
        if hop.protocol == "mcp" and "id" in payload:
            ident = dumps(payload["id"], indent=False)
            if "method" in payload:
                requests[(hop.source, hop.target, ident)] = key[2:]
            else:
                key = (*key[:2], *requests.get((hop.target, hop.source, ident), ("response",)))
        keys.append(key)
    return keys


def _key(hop: Hop) -> tuple[str, ...]:
    payload = hop.payload if isinstance(hop.payload, dict) else {}
    verdict = hop.verdict or {}
    if hop.protocol == "mcp":
        method = str(payload.get("method", "response"))
        params = payload.get("params")
        tool = params.get("name") if method == "tools/call" and isinstance(params, dict) else None
        return (hop.protocol, hop.direction, method, *([str(tool)] if tool else []))
    if hop.protocol == "gate":
        return (hop.protocol, hop.direction, str(verdict.get("gate")), str(verdict.get("tool")))
    if hop.protocol == "span":
        return (hop.protocol, hop.direction, str(payload.get("kind")), str(payload.get("name")))
    tool = payload.get("tool") or payload.get("name")
    return (hop.protocol, hop.direction, *([str(tool)] if isinstance(tool, str) else []))


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal as JSON: ``1`` and ``true`` (equal in Python) are not, nor ``1`` and ``1.0``."""
    return written_alike(a, b)


def compared(hop: Hop) -> dict[str, Any]:
    """What of ``hop`` is compared: everything but what always differs (`IGNORED`)."""
    document = hop.to_json()
    for key in ("run", "seq", "time", "span"):
        document.pop(key, None)
    payload = document.get("payload")
    if isinstance(payload, dict):
        if hop.protocol == "mcp" and "jsonrpc" in payload:
            payload = _without_trace_context({k: v for k, v in payload.items() if k != "id"})
        if hop.protocol == "span":
            payload = {k: v for k, v in payload.items() if k != "parent"}
        document["payload"] = payload
    return document


_TRACE_CONTEXT = ("traceparent", "tracestate")


def _without_trace_context(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` without the W3C trace context in ``params._meta``, which names this run's
    trace and span ids; an emptied ``_meta`` goes too, so a run with export off compares equal."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or not any(key in meta for key in _TRACE_CONTEXT):
        return message
    rest = {k: v for k, v in meta.items() if k not in _TRACE_CONTEXT}
    params = {k: v for k, v in cast(dict[str, Any], params).items() if k != "_meta"}
    if rest:
        params["_meta"] = rest
    return {**message, "params": params}


def _outcome(hop: Hop) -> str | None:
    """A gate verdict's outcome (``accepted``, ``rejected``...), None for any other hop."""
    verdict = hop.verdict
    if not isinstance(verdict, dict) or "accepted" not in verdict:
        return None
    outcome = verdict.get("outcome")
    return str(outcome) if outcome else ("accepted" if verdict["accepted"] else "refused")

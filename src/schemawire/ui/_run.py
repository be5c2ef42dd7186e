"""The Run page's API: one trace's rows (a page of them, filtered or searched, each with its
place in the waterfall), one hop's JSON as written (and its request body whole), what a gate
verdict judged, and an eval case made from the run.

Every answer reads the file by the index's offsets (`schemawire.ui._trace_index`): a page of
rows costs the rows asked for, whatever the trace's length.
"""

from __future__ import annotations

import json
import time
from bisect import bisect_left, bisect_right
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from schemawire._json import dumps
from schemawire.errors import SchemawireError, one_line
from schemawire.ui._run_folder import TraceFolder, error_response, summarise
from schemawire.ui._trace_index import (
    VIEWS_KEPT,
    HopRow,
    NotATraceError,
    Span,
    TraceIndex,
    _loads,
)

if TYPE_CHECKING:
    from schemawire.schema.repository import Repository
    from schemawire.ui._config import UiConfig

__all__ = ["routes"]

PAGE_ROWS = 500  # rows one answer holds at most
LOOK_BACK = 80  # hops a gate verdict's judged call is looked for before it
VERDICTS = {"accepted": {"accepted"}, "repaired": {"repaired"}, "refused": {"rejected"}}


class TraceNotFoundError(SchemawireError):
    """What the request names is not there (404)."""


class BadRequestError(SchemawireError):
    """A parameter or body the page would never send (400)."""


class NotWrittenError(SchemawireError):
    """An eval case that is not written where it would go (409)."""


# An error's code, status and message, the first that fits (a subclass before its base).
ERRORS: tuple[tuple[type[Exception], str, int], ...] = (
    (BadRequestError, "bad_request", 400),
    (TraceNotFoundError, "not_found", 404),
    (NotWrittenError, "exists", 409),
    (NotATraceError, "not_a_trace", 400),
    (FileExistsError, "exists", 409),  # an eval case created meanwhile: never written over
    (OSError, "unreadable", 404),  # gone or unreadable since it was listed
    (SchemawireError, "cannot", 400),
)


def _error_answer(error: Exception) -> Response:
    """The page's JSON error for ``error`` (its words, never a Python repr or a machine path)."""
    code, status = next((c, s) for kind, c, s in ERRORS if isinstance(error, kind))
    if isinstance(error, FileExistsError):
        message = f"{Path(str(error.filename)).name} exists already: it is left as it is"
    elif isinstance(error, OSError):
        message = f"the trace cannot be read: {error.strerror or type(error).__name__}"
    elif isinstance(error, BadRequestError | TraceNotFoundError | NotWrittenError | NotATraceError):
        message = str(error)
    else:
        message = one_line(error)
    return error_response(code, message, status)


def _int_param(params: Any, name: str, default: int) -> int:
    """Query parameter ``name`` as an integer (``default`` when absent or empty)."""
    text = params.get(name, "")
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise BadRequestError(f"{name} must be an integer, not {json.dumps(text)}") from None


async def _body(request: Request) -> Any:
    """A POST's JSON body (None for a GET)."""
    if request.method != "POST":
        return None
    raw = await request.body()
    try:
        return json.loads(raw) if raw.strip() else None
    except ValueError:
        raise BadRequestError("the body is not JSON: send a JSON object") from None


def routes(config: UiConfig, folder: TraceFolder) -> list[BaseRoute]:
    """The Run page's API routes."""

    def trace(request: Request, *, head: bool = False) -> tuple[Path, TraceIndex]:
        relative = request.query_params.get("file")
        path = folder.resolve(relative) if relative else None
        if path is None and not relative:
            run_id = request.query_params.get("run", "")
            path = folder.find_run(run_id) if run_id else None
        if path is None:
            raise TraceNotFoundError(
                "no such trace under the traces folder: open it from the Runs page"
            )
        return path, folder.index(path, head=head)

    def answering(work: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            try:
                body = await _body(request)
                answer = await run_in_threadpool(work, request, body)
            except (SchemawireError, OSError) as error:
                return _error_answer(error)
            return answer if isinstance(answer, Response) else JSONResponse(answer)

        return endpoint

    def meta(request: Request, _: Any) -> dict[str, Any]:
        path, index = trace(request, head=True)
        indexing = folder.indexing(path)
        with index.reading():
            answer = {"file": folder.relative(path), **summarise(index), **_choices(index)}
        if indexing:  # its status is its last hops' word: not read yet
            answer |= {"status": "indexing", "indexing": True}
        folder.index_rest(path, index)
        return answer

    def rows(request: Request, _: Any) -> dict[str, Any]:
        params = request.query_params
        path, index = trace(request, head=not _needs_every_hop(params))
        indexing = folder.indexing(path)
        start = max(0, _int_param(params, "start", 0))
        count = min(PAGE_ROWS, max(1, _int_param(params, "count", 100)))
        started = time.perf_counter()
        with index.reading():
            shown, more = _view(index, params)
            page = [_row_json(index, i) for i in shown[start : start + count]]
            hops = len(index.rows)
        folder.index_rest(path, index)
        return {
            "total": len(shown),
            "hops": hops,
            "start": start,
            "rows": page,
            "more": more,
            "indexing": indexing,
            "ms": round((time.perf_counter() - started) * 1000, 1),
        }

    def hop(request: Request, _: Any) -> dict[str, Any]:
        path, index = trace(request, head=True)
        at = _int_param(request.query_params, "index", -1)
        with index.reading():
            if not 0 <= at < len(index.rows):
                raise TraceNotFoundError(f"no hop {at} in this trace")
            answer = _hop_json(index, at, config.repo)
        folder.index_rest(path, index)
        return answer

    def eval_case(request: Request, body: Any) -> dict[str, Any]:
        path, _ = trace(request)
        write = isinstance(body, dict) and body.get("write") is True
        return _eval_case(path, config.repo, write=write)

    return [
        Route("/api/runs/run", answering(meta), methods=["GET"]),
        Route("/api/runs/rows", answering(rows), methods=["GET"]),
        Route("/api/runs/hop", answering(hop), methods=["GET"]),
        Route("/api/runs/eval", answering(eval_case), methods=["POST"]),
    ]


def _choices(index: TraceIndex) -> dict[str, Any]:
    """The filters' choices: the protocols and tools the trace holds."""
    protocols = sorted({row.protocol for row in index.rows if row.protocol != "span"})
    tools = sorted({row.tool for row in index.rows if row.tool})
    return {"protocols": protocols, "tool_names": tools}


def _needs_every_hop(params: Any) -> bool:
    """Whether these rows' filters or search read every hop (the first page of the whole trace
    does not: it is served while the rest is indexed)."""
    return any(params.get(name) for name in ("protocol", "tool", "verdict", "errors", "q"))


def _view(index: TraceIndex, params: Any) -> tuple[list[int], bool]:
    """The rows shown for these filters (cached per filter while the trace does not grow)."""
    protocols = frozenset(p for p in params.get("protocol", "").split(",") if p)
    tool = params.get("tool") or None
    verdict = VERDICTS.get(params.get("verdict", ""))
    errors = params.get("errors") in {"1", "true"}
    query = params.get("q", "").strip()
    collapsed = frozenset(c for c in params.get("collapsed", "").split(",") if c)
    key = (protocols, tool, params.get("verdict", ""), errors, query, collapsed, len(index.rows))
    if key in index.views:
        index.views[key] = shown = index.views.pop(key)  # the latest used, last
        return shown, False
    filtered = bool(protocols or tool or verdict or errors or query)
    more = False
    if query:
        hits, more = index.search(query)
        candidates: list[int] | range = list(dict.fromkeys(_shown_for(index, i) for i in hits))
    else:
        candidates = range(len(index.rows))
    rows = index.rows
    if filtered:
        shown = [
            i
            for i in candidates
            if _matches(rows[i], protocols, tool, verdict, errors, searched=bool(query))
        ]
    else:
        shown = [i for i in candidates if not _is_span_end(rows[i])]
    if collapsed and not filtered:
        shown = _folded(index, shown, collapsed)
    if not more:
        index.views[key] = shown
        while len(index.views) > VIEWS_KEPT:  # the oldest filter's rows go first
            del index.views[next(iter(index.views))]
    return shown, more


def _folded(index: TraceIndex, shown: list[int], collapsed: frozenset[str]) -> list[int]:
    """``shown`` less the rows inside a collapsed span (its own row stays). ``"turns"``
    collapses every turn but those named ``-<id>``; an old trace's turns are named
    ``t<index of its user text>``."""
    every_turn = "turns" in collapsed
    if not index.has_spans:
        starts = index.turn_starts
        folded = {
            k for k in starts if f"t{k}" in collapsed or (every_turn and f"-t{k}" not in collapsed)
        }
        kept = []
        for i in shown:
            k = bisect_right(starts, i) - 1
            if k < 0 or starts[k] == i or starts[k] not in folded:
                kept.append(i)
        return kept
    hidden: dict[str | None, bool] = {None: False}

    def folded_here(span: Span) -> bool:
        return span.id in collapsed or (
            every_turn and span.kind == "turn" and f"-{span.id}" not in collapsed
        )

    def inside(span_id: str | None) -> bool:
        """Whether a row in span ``span_id`` is hidden: the span or one above is collapsed
        (walked up without recursion; each answer kept for the spans below)."""
        chain: list[Span] = []
        at = span_id
        while at not in hidden:
            span = index.spans.get(at or "")
            if span is None:
                hidden[at] = False
                break
            chain.append(span)
            above = index.parent_of(span)
            at = above.id if above is not None else None
        answer = hidden[at]
        for span in reversed(chain):
            answer = answer or folded_here(span)
            hidden[span.id] = answer
        return hidden[span_id]

    rows = index.rows
    kept = []
    for i in shown:
        row = rows[i]
        if row.protocol == "span" and row.span in index.spans:
            above = index.parent_of(index.spans[row.span])
            if not inside(above.id if above is not None else None):
                kept.append(i)
        elif not inside(row.span):
            kept.append(i)
    return kept


def _is_span_end(row: HopRow) -> bool:
    return row.protocol == "span" and row.direction == "end"


def _shown_for(index: TraceIndex, at: int) -> int:
    """A hit in a span's end hop shows as the span's row."""
    row = index.rows[at]
    if _is_span_end(row) and row.span in index.spans:
        return index.spans[row.span].start
    return at


def _matches(  # noqa: PLR0917 (one predicate over the page's filters)
    row: HopRow,
    protocols: frozenset[str],
    tool: str | None,
    verdict: set[str] | None,
    errors: bool,
    searched: bool,
) -> bool:
    if row.protocol == "span":
        return searched and not (protocols or tool or verdict) and (row.error or not errors)
    return (
        (not protocols or row.protocol in protocols)
        and (tool is None or row.tool == tool)
        and (verdict is None or row.outcome in verdict)
        and (not errors or row.error or row.outcome == "rejected")
    )


# A row in the waterfall ----------------------------------------------------------------------


def _row_json(index: TraceIndex, at: int) -> dict[str, Any]:
    row = index.rows[at]
    begin, end = _scale(index, at)
    first = index.rows[0].time
    answer: dict[str, Any] = {
        "i": at,
        "seq": row.seq,
        "t": round(row.time - first, 6),
        "protocol": row.protocol,
        "direction": row.direction,
        "from": row.source,
        "to": row.target,
        "depth": row.depth,
        "label": row.label,
        "tool": row.tool,
        "outcome": row.outcome,
        "error": row.error,
        "redacted": row.redacted,
        "waited": row.waited,
    }
    stop = row.time
    if row.protocol == "span" and row.span in index.spans:
        span = index.spans[row.span]
        stop = span.end_time if span.end_time is not None else index.rows[-1].time
        answer |= {"kind": span.kind, "name": span.name, "status": span.status or "open"}
        answer["span"] = span.id
        if span.kind == "turn":
            answer["inside"] = _inside(index, span.start, span.end or len(index.rows) - 1)
        answer["duration"] = span.end_time - span.start_time if span.end_time is not None else None
        answer["error"] = span.status == "error"
    elif not index.has_spans and _is_turn_start(index, at):
        stop = _turn_end(index, at)
        answer |= {"kind": "turn", "duration": stop - row.time, "span": f"t{at}"}
        k = bisect_right(index.turn_starts, at)
        last = index.turn_starts[k] - 1 if k < len(index.turn_starts) else len(index.rows) - 1
        answer["inside"] = _inside(index, at, last)
    width = max(end - begin, 1e-9)
    answer["bar"] = [
        round(max(0.0, (row.time - begin) / width), 5),
        round(max(0.0, (stop - row.time) / width), 5),
    ]
    return answer


def _inside(index: TraceIndex, first: int, last: int) -> dict[str, Any]:
    """What a turn holds, for its row (read when the turn is collapsed): the tools it called
    and its refusals and errors."""
    rows = index.rows[first : last + 1]
    return {
        "tools": list(dict.fromkeys(row.tool for row in rows if row.tool)),
        "refusals": sum(row.outcome == "rejected" for row in rows),
        "errors": sum(row.error and row.protocol != "span" for row in rows),
    }


def _is_turn_start(index: TraceIndex, at: int) -> bool:
    """Whether hop ``at`` opens a turn of a trace without spans (a user-text hop)."""
    k = bisect_left(index.turn_starts, at)
    return k < len(index.turn_starts) and index.turn_starts[k] == at


def _turn_end(index: TraceIndex, at: int) -> float:
    k = bisect_right(index.turn_starts, at)
    last = index.turn_starts[k] - 1 if k < len(index.turn_starts) else len(index.rows) - 1
    return index.rows[last].time


def _scale(index: TraceIndex, at: int) -> tuple[float, float]:
    """The time range a row's bar is drawn in: its turn's (a turn's own: the run's)."""
    row = index.rows[at]
    whole = (index.rows[0].time, index.rows[-1].time)
    if index.has_spans:
        span = index.spans.get(row.span or "")
        if span is not None and row.protocol == "span" and span.kind == "turn":
            span = index.parent_of(span)
        while span is not None and span.kind not in {"turn", "run", "flow"}:
            span = index.parent_of(span)
        if span is None:
            return whole
        return span.start_time, span.end_time if span.end_time is not None else whole[1]
    k = bisect_right(index.turn_starts, at) - 1
    if k < 0 or index.turn_starts[k] == at:
        return whole
    return index.rows[index.turn_starts[k]].time, _turn_end(index, index.turn_starts[k])


# One hop, in full --------------------------------------------------------------------------


def _hop_json(index: TraceIndex, at: int, repo: Path | None) -> dict[str, Any]:
    line = index.line(at)
    whole = index.whole(at)
    hop = _loads(line)
    answer: dict[str, Any] = {
        "index": at,
        "line": line.decode("utf-8", errors="replace"),
        "whole": json.dumps({**hop, "payload": whole}, ensure_ascii=False) if whole else None,
    }
    verdict = hop.get("verdict")
    if isinstance(verdict, dict):
        answer["judged"] = _judged(index, at, hop, verdict)
        answer["schema"] = _schema(verdict, repo)
    return answer


def _judged(index: TraceIndex, at: int, hop: dict[str, Any], verdict: dict[str, Any]) -> Any:
    """The hop a verdict judged and where the judged value sits in it (a JSON Pointer into the
    hop's line), so a violation's pointer can be shown in place."""
    payload = hop.get("payload") if isinstance(hop.get("payload"), dict) else {}
    if hop.get("protocol") == "python":
        key = "arguments" if hop.get("direction") == "send" else "content"
        return {"index": at, "pointer": f"/payload/{key}"}
    tool = verdict.get("tool")
    if verdict.get("gate") == "results":
        return _judged_result(index, at)
    if verdict.get("gate") == "arguments":
        return _judged_arguments(index, at, tool)
    return {"index": at, "pointer": "/payload"} if payload else None


def _judged_arguments(index: TraceIndex, at: int, tool: Any) -> Any:
    same_tool_before = 0
    for i in range(at - 1, max(-1, at - LOOK_BACK), -1):
        row = index.rows[i]
        if row.protocol == "gate" and row.tool == tool:
            same_tool_before += 1
        if row.direction == "receive" and row.source.startswith("model:"):
            calls = _tool_calls(_loads(index.line(i)).get("payload"))
            named = [pointer for name, pointer in calls if name == tool]
            if named:
                return {"index": i, "pointer": named[min(same_tool_before, len(named) - 1)]}
    return None


def _tool_calls(payload: Any) -> list[tuple[str, str]]:
    """Each tool call of a model response, with the pointer of its arguments (OpenAI chat and
    responses, Anthropic, Gemini)."""
    found: list[tuple[str, str]] = []
    if not isinstance(payload, dict):
        return found
    for c, choice in enumerate(payload.get("choices") or []):
        message = choice.get("message") if isinstance(choice, dict) else None
        for k, call in enumerate((message or {}).get("tool_calls") or []):
            function = call.get("function") or {}
            where = f"/payload/choices/{c}/message/tool_calls/{k}/function/arguments"
            found.append((str(function.get("name")), where))
    for key, name_key, args in (("content", "name", "input"), ("output", "name", "arguments")):
        blocks: list[Any] = payload[key] if isinstance(payload.get(key), list) else []
        for k, block in enumerate(blocks):
            if isinstance(block, dict) and block.get("type") in {"tool_use", "function_call"}:
                found.append((str(block.get(name_key)), f"/payload/{key}/{k}/{args}"))
    return found


def _judged_result(index: TraceIndex, at: int) -> Any:
    for i in range(at - 1, max(-1, at - LOOK_BACK), -1):
        row = index.rows[i]
        if row.protocol == "mcp" and row.direction == "receive":
            payload = _loads(index.line(i)).get("payload") or {}
            result = payload.get("result") if isinstance(payload, dict) else None
            if not isinstance(result, dict):
                continue
            if "structuredContent" in result:
                return {"index": i, "pointer": "/payload/result/structuredContent"}
            return {"index": i, "pointer": "/payload/result/content/0/text"}
    return None


def _schema(verdict: dict[str, Any], repo: Path | None) -> dict[str, Any] | None:
    """What is known of the schema a verdict applied: its $id and version, from the verdict,
    and its file in the repository, when there is one."""
    rejection = verdict.get("rejection") if isinstance(verdict.get("rejection"), dict) else {}
    assert isinstance(rejection, dict)
    known: dict[str, Any] = {"id": rejection.get("schema"), "version": rejection.get("version")}
    tool = verdict.get("tool")
    repository = _repository(repo) if repo is not None else None
    if repository is not None:
        found = repository.find(known["id"] or "") if known["id"] else None
        found = found or (repository.find(str(tool)) if tool else None)
        if found is not None:
            known |= {"file": found.relpath, "id": found.schema_id, "version": found.version}
    return known if any(known.values()) else None


@cache
def _repository(repo: Path) -> Repository | None:
    from schemawire.schema.repository import Repository

    try:
        return Repository.load(repo)
    except Exception:  # a page without a usable repository still shows the verdict's own words
        return None


def _eval_case(trace: Path, repo: Path | None, *, write: bool) -> dict[str, Any]:
    """`schemawire eval --from-trace`'s case for ``trace``; written under the repository's
    evals/ when asked and there is a repository (never over a file)."""
    from schemawire.evals import case_from_trace, check_case

    case = case_from_trace(trace, repo=repo)
    check_case(case.document, case.path)  # as the command: only a case that can run is given
    text = dumps(case.document) + "\n"  # the bytes `eval --from-trace --out` writes
    answer: dict[str, Any] = {
        "case": text,
        "name": case.path.name,
        "notes": case.notes,
        "can_write": repo is not None,
        "written": None,
    }
    if repo is not None:
        evals = (repo / "evals").resolve()
        target = case.path.resolve()
        if not target.is_relative_to(repo.resolve()):  # evals/ a symlink out of the repository
            raise NotWrittenError(f"{case.path.name} would go outside the repository: not written")
        answer["path"] = target.relative_to(repo.resolve()).as_posix()
        if write:
            if evals not in target.parents:
                raise NotWrittenError(f"{answer['path']} is not under the repository's evals/")
            if target.exists():  # an answer, not an error: the page says so and goes on
                answer["not_written"] = f"{answer['path']} exists already: it is left as it is"
                return answer
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("x", encoding="utf-8") as file:
                file.write(text)
            answer["written"] = answer["path"]
    return answer

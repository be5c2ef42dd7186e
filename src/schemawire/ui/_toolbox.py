"""The Toolbox page's API: format, check, validate and diff JSON (and JSON Lines) with the
same functions as ``schemawire fmt``, ``validate`` and ``diff``, so the page and the command
never disagree.

Every action takes its document as ``{"text": ...}`` (pasted) or ``{"base64": ...}`` (a
dropped file's bytes, so bad UTF-8 reaches the parser as it is), with an optional ``"name"``
that errors name as their source. A document the parser refuses is an answer, not a failure:
``{"ok": false, "error": {code, message, line, column, excerpt, shown}}``, where ``shown`` is
the command's own words (``str(error)``). Work runs off the event loop.

Bounds, for a paste or a file of any size: a request over `_MAX_REQUEST_BYTES` is refused
before it is read whole; a JSON Lines answer counts every line but lists at most
`_MAX_LISTED_LINES` of them; a schema is a file of the repository, or a name the repository
knows, never a file of the folder the server runs in.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from schemawire._json import (
    DEFAULT_LIMITS,
    JSONLine,
    JSONValue,
    ParseLimits,
    dumps,
    loads,
    loads_lines,
)
from schemawire._jsonpos import nearest_offset, pointer_offsets
from schemawire._patch import diff_json, edit_line, summarise_patch
from schemawire.application.json_toolbox import (
    Indent,
    InstanceResult,
    format_json,
    format_json_lines,
    load_schema,
    repository_schema,
    schema_from_text,
    validate_text,
)
from schemawire.errors import InputError, JSONError, UsageError

if TYPE_CHECKING:
    from schemawire.ui._config import UiConfig

__all__ = ["routes"]

_INDENTS: dict[str, Indent] = {"2": 2, "4": 4, "tab": "\t", "minify": None}
_MAX_LISTED_FILES = 5000
_MAX_LISTED_LINES = 1000  # a JSON Lines answer lists this many lines at most (all are counted)
# A request carries one or two documents (a diff) as JSON strings or base64: a document at the
# parser's limit, escaped, fits several times over. A bigger request is refused before it is read.
_MAX_REQUEST_BYTES = 8 * DEFAULT_LIMITS.max_bytes
_REQUEST_LIMITS = replace(DEFAULT_LIMITS, max_bytes=_MAX_REQUEST_BYTES)
_SKIPPED_FOLDERS = frozenset({".git", ".venv", "node_modules", "__pycache__", ".schemawire"})


class ToolboxInputError(UsageError):
    """A request the toolbox cannot act on (the request itself, not a verdict on its
    document): answered 400 ``{"error": {"code": "bad_request", "message"}}``."""


def routes(config: UiConfig) -> list[BaseRoute]:
    """The toolbox page's API routes, under ``/api/toolbox/``."""
    api = _ToolboxApi(config)
    return [
        Route("/api/toolbox/format", api.format, methods=["POST"]),
        Route("/api/toolbox/check", api.check, methods=["POST"]),
        Route("/api/toolbox/validate", api.validate, methods=["POST"]),
        Route("/api/toolbox/diff", api.diff, methods=["POST"]),
        Route("/api/toolbox/schemas", api.schemas, methods=["GET"]),
        Route("/api/toolbox/files", api.files, methods=["GET"]),
        Route("/api/toolbox/file", api.file, methods=["GET"]),
    ]


class _ToolboxApi:
    def __init__(self, config: UiConfig) -> None:
        self.repo = config.repo.resolve() if config.repo is not None else None

    async def format(self, request: Request) -> Response:
        return await _answer(formatted, request)

    async def check(self, request: Request) -> Response:
        return await _answer(checked, request)

    async def validate(self, request: Request) -> Response:
        return await _answer(lambda body: validated(body, self.repo), request)

    async def diff(self, request: Request) -> Response:
        return await _answer(differences, request)

    async def schemas(self, request: Request) -> Response:
        return await _answer(lambda _: repository_schemas(self.repo), None)

    async def files(self, request: Request) -> Response:
        return await _answer(lambda _: repository_files(self.repo), None)

    async def file(self, request: Request) -> Response:
        path = request.query_params.get("path", "")
        return await _answer(lambda _: repository_file(self.repo, path), None)


async def _answer(
    action: Callable[[dict[str, Any]], dict[str, Any]], request: Request | None
) -> Response:
    """``action`` of the request's JSON body (none for a GET), off the event loop; a bad
    request, or a schema that cannot be used, is a 400 that says why (with the caret, for a
    schema's JSON)."""
    try:
        raw = await _read_body(request) if request is not None else None

        def run() -> dict[str, Any]:
            return action(_body(raw) if raw is not None else {})

        return JSONResponse(await run_in_threadpool(run))
    except ToolboxInputError as error:
        return JSONResponse({"error": {"code": "bad_request", "message": str(error)}}, 400)
    except InputError as error:
        return JSONResponse({"error": refusal(error)}, 400)


async def _read_body(request: Request) -> bytes:
    """The request's body, read no further than `_MAX_REQUEST_BYTES`."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > _MAX_REQUEST_BYTES:
            raise ToolboxInputError(
                f"the request is larger than {_MAX_REQUEST_BYTES // 2**20} MiB: check a "
                "document this big with the command line (schemawire validate --max-bytes)"
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _body(raw: bytes) -> dict[str, Any]:
    """The request's JSON object. Its limits are the request's own, not the document's: the
    document inside is parsed again, with the parser's limits, by the action."""
    try:
        body = loads(raw, limits=_REQUEST_LIMITS, source="<request>")
    except JSONError as error:
        raise ToolboxInputError(f"the request is not JSON: {error.message}") from None
    if not isinstance(body, dict):
        raise ToolboxInputError("the request must be a JSON object")
    return body


# The actions, plain functions of the request's JSON (the tests call them too).


def formatted(body: dict[str, Any]) -> dict[str, Any]:
    """``{"ok": true, "text"}``: the document formatted as ``style`` says (``"2"``, ``"4"``,
    ``"tab"``, ``"minify"``, or ``"lines"`` for JSON Lines, one compact value per line), keys
    sorted when ``sort_keys``; or the parser's refusal."""
    raw, name = _document(body.get("input", body))
    style = str(body.get("style", "2"))
    sort_keys = bool(body.get("sort_keys", False))
    limits = _limits(body)
    try:
        if style == "lines":
            text = format_json_lines(raw, limits=limits, source=name, sort_keys=sort_keys)
        elif style in _INDENTS:
            text = format_json(
                raw, limits=limits, source=name, indent=_INDENTS[style], sort_keys=sort_keys
            )
        else:
            raise ToolboxInputError(f"style {dumps(style)} is not one of 2, 4, tab, minify, lines")
    except JSONError as error:
        return {"ok": False, "error": refusal(error)}
    return {"ok": True, "text": text}


def checked(body: dict[str, Any]) -> dict[str, Any]:
    """The syntax check: ``{"ok": true}``, or the parser's refusal; with ``"lines": true``,
    one verdict per line of a JSON Lines text (``{"line", "ok", "error"?}``)."""
    raw, name = _document(body.get("input", body))
    limits = _limits(body)
    if body.get("lines"):
        return _line_verdicts(loads_lines(raw, limits=limits, source=name))
    try:
        loads(raw, limits=limits, source=name)
    except JSONError as error:
        return {"ok": False, "error": refusal(error)}
    return {"ok": True}


def _line_verdicts(lines: Iterator[JSONLine]) -> dict[str, Any]:
    """The check of each line, counted: ``{"ok", "total", "refused", "lines", "listed"}``.
    ``lines`` holds every line's verdict (``{"line", "ok", "error"?}``) when there are at most
    `_MAX_LISTED_LINES`, else only the refused lines' (``listed: "refused"``), the first
    `_MAX_LISTED_LINES` of them, so a huge text is not a huge answer."""
    every: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    total = refused_count = 0
    for line in lines:
        total += 1
        verdict: dict[str, Any] = {"line": line.number, "ok": line.error is None}
        if line.error is not None:
            refused_count += 1
            verdict["error"] = refusal(line.error)
            if len(refused) < _MAX_LISTED_LINES:
                refused.append(verdict)
        if total <= _MAX_LISTED_LINES:
            every.append(verdict)
    listed = "all" if total <= _MAX_LISTED_LINES else "refused"
    return {
        "ok": refused_count == 0,
        "total": total,
        "refused": refused_count,
        "listed": listed,
        "lines": every if listed == "all" else refused,
    }


def validated(body: dict[str, Any], repo: Path | None) -> dict[str, Any]:
    """Every instance's verdict, as ``schemawire validate --json`` prints it (one result per
    instance, or per line with ``"lines": true``), each violation with ``offset``: where its
    pointer is in the input (UTF-16 units, as the page's text area counts), to jump to."""
    raw, name = _document(body.get("input", body))
    schema, label = _schema(body, repo)
    lines = bool(body.get("lines"))
    results = validate_text(schema, raw, source=name, lines=lines, limits=_limits(body))
    summary, listed, kept = _counted(results)
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    starts = _line_starts(text) if lines else None
    utf16 = _Utf16(text)
    shown = [_shown_result(result, text, starts, utf16) for result in kept]
    return {"schema": label, "results": shown, "summary": summary, "listed": listed}


def _counted(
    results: Iterator[InstanceResult],
) -> tuple[dict[str, int], str, list[InstanceResult]]:
    """The verdicts counted as they come (a JSON Lines text of millions of lines is never
    held whole), and those to list: all, when there are at most `_MAX_LISTED_LINES`; else
    (``"failed"``) the first `_MAX_LISTED_LINES` that are not valid."""
    summary = {"valid": 0, "invalid": 0, "unreadable": 0}
    first: list[InstanceResult] = []
    failed: list[InstanceResult] = []
    for result in results:
        kind = "valid" if result.valid else "unreadable" if result.error else "invalid"
        summary[kind] += 1
        if len(first) <= _MAX_LISTED_LINES:  # one more than listed: there are too many
            first.append(result)
        if not result.valid and len(failed) < _MAX_LISTED_LINES:
            failed.append(result)
    if len(first) <= _MAX_LISTED_LINES:
        return summary, "all", first
    return summary, "failed", failed


def differences(body: dict[str, Any]) -> dict[str, Any]:
    """The RFC 6902 patch from ``a`` to ``b`` (as JSON text, exact), and each edit as
    ``schemawire diff`` prints it; or the refusal of the document that is not JSON."""
    values: list[JSONValue] = []
    for side in ("a", "b"):
        raw, name = _document(body.get(side) or {}, default_name=f"<{side}>")
        try:
            values.append(loads(raw, limits=_limits(body), source=name))
        except JSONError as error:
            return {"ok": False, "side": side, "error": refusal(error)}
    before, after = values
    patch = diff_json(before, after)
    edits = [
        {"op": edit.op, "path": edit.path, "line": edit_line(edit)}
        for edit in summarise_patch(before, patch)
    ]
    return {
        "ok": True,
        "equal": not patch,
        "patch": dumps(cast("JSONValue", patch)),
        "edits": edits,
    }


def refusal(error: InputError) -> dict[str, Any]:
    """A parser's refusal for the page: its JSON, its caret excerpt, and the command's words."""
    return error.to_json() | {"excerpt": error.excerpt, "shown": str(error)}


def _document(value: Any, default_name: str = "<input>") -> tuple[bytes | str, str]:
    """The document a request carries (text or base64 bytes) and the name errors give it."""
    if not isinstance(value, dict):
        raise ToolboxInputError('give the document as {"text": ...} or {"base64": ...}')
    name = str(value.get("name") or default_name)
    if isinstance(value.get("base64"), str):
        try:
            return base64.b64decode(value["base64"], validate=True), name
        except (binascii.Error, ValueError):
            raise ToolboxInputError("the document's base64 cannot be decoded") from None
    if isinstance(value.get("text"), str):
        return value["text"], name
    raise ToolboxInputError('give the document as {"text": ...} or {"base64": ...}')


def _limits(body: dict[str, Any]) -> ParseLimits:
    """The parser's limits, with ``max_bytes`` and ``max_depth`` as the request sets them (as
    ``schemawire validate --max-bytes`` does)."""
    given = {key: body.get(key) for key in ("max_bytes", "max_depth")}
    for key, value in given.items():
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise ToolboxInputError(f"{key} must be an integer")
    try:
        return replace(
            DEFAULT_LIMITS,
            max_bytes=_or(given["max_bytes"], DEFAULT_LIMITS.max_bytes),
            max_depth=_or(given["max_depth"], DEFAULT_LIMITS.max_depth),
        )
    except UsageError as error:
        raise ToolboxInputError(str(error)) from None


def _or(value: Any, default: int) -> int:
    return default if value is None else int(value)


def _schema(body: dict[str, Any], repo: Path | None) -> tuple[Any, str]:
    """The schema the request names (``"schema"``: a repository schema's path or ``$id``) or
    carries (``"schema_text"``: a pasted schema)."""
    if isinstance(body.get("schema_text"), str):
        source = "<pasted schema>"
        return schema_from_text(body["schema_text"], repository_dir=repo, source=source), source
    reference = body.get("schema")
    if not isinstance(reference, str) or not reference:
        raise ToolboxInputError("choose a schema of the repository, or paste one")
    if repo is None:
        raise ToolboxInputError("no repository: start the page with --repo DIR, or paste a schema")
    path = _resolved(repo, reference)
    if path.is_file():  # a path in the repository (never one outside it)
        if not path.is_relative_to(repo):
            raise ToolboxInputError(f"{reference} is outside the repository")
        return load_schema(str(path), repository_dir=repo)
    # an $id or a tool name: looked up in the repository only, never read as a file (of the
    # folder the server was started in, say)
    return repository_schema(reference, repository_dir=repo)


def _resolved(repo: Path, relative: str) -> Path:
    """``relative`` (from a request) under ``repo``, resolved; a NUL byte, which no path
    holds, is a bad request rather than the operating system's ValueError."""
    if "\0" in relative:
        raise ToolboxInputError(f"{dumps(relative)} is not a path: it holds a NUL character")
    return (repo / relative).resolve()


def _shown_result(
    result: InstanceResult, text: str, line_starts: list[int] | None, utf16: _Utf16
) -> dict[str, Any]:
    """``result`` as the command prints it, with each violation's offset in ``text`` (a
    JSON Lines text when ``line_starts`` are given: where each of its lines starts)."""
    shown = result.to_json()
    if result.error is not None:
        shown["error"] = refusal(result.error)
        return shown
    where = _instance_text(text, result.source, line_starts) if line_starts else (0, text)
    offsets = pointer_offsets(where[1]) if result.violations else {}
    for violation in shown["violations"]:
        offset = nearest_offset(offsets, violation["pointer"])
        violation["offset"] = utf16.offset(where[0] + offset)
    return shown


def _line_starts(text: str) -> list[int]:
    """Where each line of ``text`` starts (lines end at ``\\n``, as `loads_lines` splits)."""
    starts = [0]
    at = text.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def _instance_text(text: str, source: str, line_starts: list[int]) -> tuple[int, str]:
    """Where line ``source``'s number (``name:N``) starts in ``text``, and that line."""
    start = line_starts[int(source.rsplit(":", 1)[1]) - 1]
    end = text.find("\n", start)
    return start, text[start : len(text) if end == -1 else end]


class _Utf16:
    """Offsets in ``text`` (code points) in the UTF-16 units a browser's string counts: one
    more for each character beyond the BMP before it. Found once, so each offset costs a
    bisection, not a copy of the text before it (a document may have a million violations)."""

    _ASTRAL = re.compile("[\U00010000-\U0010ffff]")

    def __init__(self, text: str) -> None:
        self.astral = [m.start() for m in self._ASTRAL.finditer(text)]

    def offset(self, offset: int) -> int:
        return offset + bisect.bisect_left(self.astral, offset)


def repository_schemas(repo: Path | None) -> dict[str, Any]:
    """The repository's schemas, for the searchable list: path, ``$id``, kind, name, title."""
    if repo is None:
        return {"repo": None, "schemas": []}
    from schemawire.schema.repository import Repository

    repository = Repository.load(repo)
    schemas = [
        {
            "path": file.relpath,
            "id": _member(file.document, "$id"),
            "kind": file.kind,
            "name": file.name,
            "title": _member(file.document, "title"),
        }
        for file in repository.files
    ]
    return {"repo": repo.name, "schemas": schemas}


def _member(document: Any, key: str) -> str | None:
    value = document.get(key) if isinstance(document, dict) else None
    return value if isinstance(value, str) else None


def repository_files(repo: Path | None) -> dict[str, Any]:
    """The repository's JSON and JSON Lines files (relative paths, sorted), to pick one."""
    if repo is None:
        return {"repo": None, "files": [], "truncated": False}
    files = sorted(_json_files(repo, repo))
    return {
        "repo": repo.name,
        "files": files[:_MAX_LISTED_FILES],
        "truncated": len(files) > _MAX_LISTED_FILES,
    }


def _json_files(root: Path, folder: Path) -> Iterator[str]:
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink():
            continue
        if entry.is_dir() and entry.name not in _SKIPPED_FOLDERS:
            yield from _json_files(root, entry)
        elif entry.is_file() and entry.suffix in (".json", ".jsonl"):
            yield entry.relative_to(root).as_posix()


def repository_file(repo: Path | None, relative: str) -> dict[str, Any]:
    """One JSON file of the repository: its text, or its bytes as base64 when they are not
    UTF-8 (so the check sees them as they are)."""
    if repo is None:
        raise ToolboxInputError("no repository: start the page with --repo DIR")
    path = _resolved(repo, relative)
    if not path.is_relative_to(repo) or path.suffix not in (".json", ".jsonl"):
        raise ToolboxInputError(f"{relative} is not a JSON file of the repository")
    if not path.is_file():
        raise ToolboxInputError(f"{relative}: no such file in the repository")
    size = path.stat().st_size
    if size > DEFAULT_LIMITS.max_bytes:  # measured before it is read
        raise ToolboxInputError(
            f"{relative} is {size:,} bytes, more than the parser's {DEFAULT_LIMITS.max_bytes:,}:"
            f" check it with the command line (schemawire validate --max-bytes N {relative})"
        )
    raw = path.read_bytes()
    try:
        return {"path": relative, "text": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"path": relative, "base64": base64.b64encode(raw).decode("ascii")}

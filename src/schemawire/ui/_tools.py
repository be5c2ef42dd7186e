"""The Tools page's API: the repository's tools, each with its canonical schema, what every
projection sends and loses, and a gated call from a form.

- ``GET /api/tools``: the tools (name, title, description, version, file), whether each has a
  Python implementation, and the MCP server the page may call on, if it was given one.
- ``GET /api/tools/tool/{name}``: one tool: its schemas (as JSON text, exact), the schema the
  form is built from (references inlined, `schemawire.ui._tools_form`), and each projection as
  `schemawire export` computes it (`schemawire.project.export.export`, the same call): the
  payload the target is sent and its losses.
- ``POST /api/tools/call`` ``{"tool", "arguments": TEXT, "where": "local" | "mcp"}``: the call
  through the gates, streamed as JSON Lines (`schemawire.ui._tools_call.CallStream`): the run,
  each hop as it is recorded, the outcome. What is wrong before anything runs (no such tool, no
  implementation, no server) is a 400 with what to do next.

With an MCP server (``schemawire ui -- CMD`` or ``--mcp-url``), the list has the server's tools
too (`schemawire.ui._tools_server`), each projected from the server's schema: all of them
without a repository; with one, those it lacks, marked ``server_only``. The launch keeps one
session with the server (`schemawire.ui._tools_session`), held by the page's lifespan
(`ToolsApi.lifespan`), which also runs the calls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import anyio.abc
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from schemawire._json import dumps, quoted
from schemawire.project.export import export
from schemawire.schema.repository import Repository
from schemawire.schema.schema_file import SchemaFile
from schemawire.types import Projection
from schemawire.ui._config import UiConfig
from schemawire.ui._tools_call import CallAsked, CallStream
from schemawire.ui._tools_form import form_schema
from schemawire.ui._tools_server import server_tool, server_tools
from schemawire.ui._tools_session import ServerSession, mcp_address, server_label

__all__ = ["PROJECTIONS", "ToolsApi", "View"]

_NO_REPO = (
    "No schema repository was given: start the page with `schemawire ui --repo DIR` "
    "(a folder with a schemawire.toml), or from inside one."
)
_NO_SERVER = (
    "No MCP server was given: start the page with `schemawire ui --mcp-url URL` or "
    "`schemawire ui -- CMD ...` (a stdio server)."
)
_T = TypeVar("_T")
_MAX_ARGUMENTS = 1 << 20  # bytes of arguments text one call takes (the gate has its own limits)


@dataclass(frozen=True, slots=True)
class View:
    """One projection the page shows: a target with options, as `schemawire export` takes
    them."""

    label: str
    target: str
    options: dict[str, Any]


PROJECTIONS: tuple[View, ...] = (
    View("OpenAI Chat (strict)", "openai.chat", {"strict": True}),
    View("OpenAI Chat", "openai.chat", {"strict": False}),
    View("OpenAI Responses (strict)", "openai.responses", {"strict": True}),
    View("OpenAI Responses", "openai.responses", {"strict": False}),
    View("Anthropic", "anthropic", {}),
    View("Anthropic (strict)", "anthropic", {"strict": True}),
    View("Gemini", "gemini", {}),
    View("Gemini (OpenAPI)", "gemini", {"openapi": True}),
    View("MCP 2026-07-28", "mcp", {"version": "2026-07-28"}),
    View("MCP 2025-06-18", "mcp", {"version": "2025-06-18"}),
    View("A2A skill", "a2a", {}),
)
"""Every target `schemawire export` knows for tools, strict and not where it has both."""


class ToolsApi:
    """The tools page's API routes, and the lifespan that holds what outlives a request: the
    session with the MCP server, and the calls (a page closed mid-call leaves a whole trace)."""

    def __init__(self, config: UiConfig) -> None:
        self.config = config
        self.session = ServerSession(config) if mcp_address(config) is not None else None
        self._group: anyio.abc.TaskGroup | None = None

    def routes(self) -> list[BaseRoute]:
        """The routes under ``/api/tools``."""
        return [
            Route("/api/tools", self.tools, methods=["GET"]),
            Route("/api/tools/tool/{name}", self.tool, methods=["GET"]),
            Route("/api/tools/call", self.call, methods=["POST"]),
        ]

    @asynccontextmanager
    async def lifespan(self, app: object = None) -> AsyncIterator[None]:
        """While the page's server runs (Starlette's ``lifespan``): the task group of the
        calls and the session; on the way out, the session closed, the calls still running
        cancelled."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                if self.session is None:
                    yield
                else:
                    async with self.session.lifespan(group):
                        yield
            finally:
                self._group = None
                group.cancel_scope.cancel()

    async def tools(self, request: Request) -> Response:
        label = server_label(self.config)
        mcp = {"label": label} if label is not None else None
        repo = str(self.config.repo) if self.config.repo is not None else None
        if self.config.repo is None and self.session is None:
            return JSONResponse({"repo": None, "hint": _NO_REPO, "mcp": None, "tools": []})
        if self.config.repo is None:
            assert self.session is not None
            listed = await _on_server(server_tools(self.session))
            if isinstance(listed, Response):
                return listed
            return JSONResponse({"repo": None, "mcp": mcp, "tools": listed})
        own = await run_in_threadpool(_tool_list, self.config)
        answer: dict[str, Any] = {"repo": repo, "mcp": mcp, "tools": own}
        if self.session is not None:
            found = await _on_server(server_tools(self.session, server_only=True))
            if isinstance(found, Response):  # the repository's tools are still worth a look
                answer["mcp_problem"] = _error_message(found)
            else:
                names = {tool["name"] for tool in own}
                extra = [tool for tool in found if tool["name"] not in names]
                answer["tools"] = sorted([*own, *extra], key=lambda tool: tool["name"])
        return JSONResponse(answer)

    async def tool(self, request: Request) -> Response:
        name = request.path_params["name"]
        found: dict[str, Any] | Response | None = None
        if self.config.repo is None and self.session is None:
            return _refused("no_repository", _NO_REPO, 404)
        if self.config.repo is not None:
            found = await run_in_threadpool(_tool_detail, self.config, name)
        if found is None and self.session is not None:
            server_only = self.config.repo is not None
            found = await _on_server(
                server_tool(self.session, name, PROJECTIONS, server_only=server_only)
            )
        if isinstance(found, Response):
            return found
        if found is None:
            where = "the repository" if self.config.repo is not None else "the MCP server"
            extra = " or the MCP server" if self.config.repo is not None and self.session else ""
            return _refused("tool_unknown", f"{where}{extra} has no tool {quoted(name)}", 404)
        return JSONResponse(found)

    async def call(self, request: Request) -> Response:
        body = await _bounded_body(request, _MAX_ARGUMENTS)
        if body is None:
            return _refused("too_large", f"a call takes at most {_MAX_ARGUMENTS} bytes", 413)
        try:
            asked = CallAsked.read(_json_body(body))
        except ValueError as error:
            return _refused("bad_request", str(error))
        if self._group is None:
            message = "the page's server runs without its lifespan: start it with LocalServer"
            return _refused("not_running", message, 503)
        prepared = await run_in_threadpool(self._prepare, asked)
        if isinstance(prepared, Response):
            return prepared
        prepared.start(self._group)
        return StreamingResponse(
            prepared.lines(),
            media_type="application/x-ndjson",
            headers={"cache-control": "no-store"},
        )

    def _prepare(self, asked: CallAsked) -> CallStream | Response:
        """The call, ready to start; or why it cannot be made (nothing has run)."""
        if asked.where == "mcp":  # the session reads the repository's schemas itself
            if self.session is None:
                return _refused("no_server", _NO_SERVER)
            return CallStream(self.config, None, asked, session=self.session)
        if self.config.repo is None:
            return _refused("no_repository", _NO_REPO)
        repository = Repository.load(self.config.repo)
        function = _implementation(repository, asked.tool)
        if isinstance(function, Response):
            return function
        return CallStream(self.config, repository, asked, function=function)


def _implementation(repository: Repository, tool: str) -> Callable[..., Any] | Response:
    """``tool``'s Python function, as `schemawire serve` finds it; or why there is none."""
    from schemawire.errors import SchemawireError
    from schemawire.schema.implementations import load_implementations

    if not any(spec.name == tool for spec in repository.tools()):
        return _refused("tool_unknown", f"the repository has no tool {quoted(tool)}")
    try:
        functions = load_implementations(repository)
    except SchemawireError as error:
        return _refused("implementation_unusable", str(error))
    function = functions.get(tool)
    if function is None:
        return _refused(
            "no_implementation",
            f"{tool} has no Python implementation: name it under [serve.tools] in "
            f'schemawire.toml ({tool} = "module:function"), or call it on an MCP server.',
        )
    return function


async def _on_server(asked: Awaitable[_T]) -> _T | Response:
    """What the MCP server answers; or, when it cannot be reached, a 502 saying so."""
    from schemawire.errors import ServerError

    try:
        return await asked
    except ServerError as error:
        message = f"MCP server {error.server}: {error.reason}"
        return _refused("server_unavailable", message, 502)


def _tool_list(config: UiConfig) -> list[dict[str, Any]]:
    assert config.repo is not None
    repository = Repository.load(config.repo)
    implemented = set(repository.config.serve.tools)
    return [
        {**_summary(file), "implemented": file.name in implemented}
        for file in _tool_files(repository)
    ]


def _tool_files(repository: Repository) -> list[SchemaFile]:
    names = {spec.name for spec in repository.tools()}
    files = [f for f in repository.files if f.is_tool_input and f.name in names]
    return sorted(files, key=lambda f: f.name)


def _summary(file: SchemaFile) -> dict[str, Any]:
    document = file.document if isinstance(file.document, dict) else {}
    return {
        "name": file.name,
        "title": document.get("title") if isinstance(document.get("title"), str) else None,
        "description": str(document.get("description") or ""),
        "version": file.version,
        "file": file.relpath,
        "id": file.schema_id,
    }


def _tool_detail(config: UiConfig, name: str) -> dict[str, Any] | None:
    assert config.repo is not None
    repository = Repository.load(config.repo)
    spec = next((s for s in repository.tools() if s.name == name), None)
    file = next((f for f in _tool_files(repository) if f.name == name), None)
    if spec is None or file is None:
        return None
    output = repository.find(f"tools/{name}.output")
    return {
        **_summary(file),
        "implemented": name in repository.config.serve.tools,
        "schema": dumps(spec.input_schema),
        "output_schema": dumps(spec.output_schema) if spec.output_schema is not None else None,
        "output_file": output.relpath if output is not None else None,
        "form_schema": dumps(form_schema(spec.input_schema, repository.documents)),
        "projections": [_projection(repository, view, name) for view in PROJECTIONS],
    }


def _projection(repository: Repository, view: View, name: str) -> dict[str, Any]:
    """``name``'s projection for ``view``, from the same export `schemawire export` writes."""
    made = export(repository, view.target, **view.options)
    found: Projection | None = next((p for p in made.catalogue.projections if p.name == name), None)
    shown = {
        "label": view.label,
        "target": view.target,
        "options": view.options,
        "command": made.command,
        "file": made.file_name,
    }
    if found is None:
        return {**shown, "payload": None, "losses": [], "lossless": True, "blocked": False}
    return {
        **shown,
        "projected_name": found.projected_name,
        "payload": dumps(found.payload),
        "losses": [loss.to_json() for loss in found.losses],
        "lossless": found.lossless,
        "blocked": found.blocked,
    }


async def _bounded_body(request: Request, limit: int) -> bytes | None:
    """The request's body; None as soon as it is longer than ``limit`` bytes (the rest is
    never read, so a body without end costs ``limit`` bytes, not all of memory)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _json_body(body: bytes) -> Any:
    """The request's JSON, read as the library reads JSON (duplicate keys, NaN and depth are
    errors, not silently taken).

    Raises:
        ValueError: the body is not JSON.
    """
    from schemawire._json import loads
    from schemawire.errors import JSONError, one_line

    try:
        return loads(body, source="<request>")
    except JSONError as error:
        raise ValueError(f"the request is not JSON: {one_line(error)}") from None


def _error_message(answer: Response) -> str:
    import json

    return str(json.loads(bytes(answer.body))["error"]["message"])


def _refused(code: str, message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)

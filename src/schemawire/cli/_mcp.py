"""``schemawire tools``, ``call`` and ``serve``: talk to any MCP server, or be one."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer
import typer.core
from rich.markup import escape
from rich.table import Table

from schemawire._json import quoted
from schemawire.cli._output import (
    EXIT_FINDINGS,
    MachineJson,
    fail,
    guarded,
    print_json,
    stderr,
    stdout,
)
from schemawire.cli._server_options import Headers, Timeout, Token, Url
from schemawire.errors import UsageError

if TYPE_CHECKING:
    from schemawire.gates import Embedder

__all__ = ["COMMAND_CLASSES", "ServeCommand", "call_command", "serve_command", "tools_command"]

Command = Annotated[
    list[str] | None,
    typer.Argument(
        help="The server's command line, after `--` (a stdio server).", show_default=False
    ),
]
Repo = Annotated[
    Path | None,
    typer.Option("--repo", help="A schema repository whose canonical schemas gate the calls."),
]
Trace = Annotated[
    Path | None, typer.Option("--trace", help="Append every hop to this JSON Lines file.")
]
Otlp = Annotated[
    str | None,
    typer.Option(
        "--otlp",
        metavar="URL",
        help="Export spans live to this OTLP/HTTP collector (default: "
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, when set).",
    ),
]


@guarded
def tools_command(
    command: Command = None,
    url: Url = None,
    header: Headers = None,
    token: Token = None,
    target: Annotated[
        str | None, typer.Option("--target", "-t", help="Project the tools to this target.")
    ] = None,
    strict: Annotated[
        bool | None, typer.Option("--strict/--no-strict", help="Strict mode (openai.*, anthropic).")
    ] = None,
    timeout: Timeout = 30.0,
    trace: Trace = None,
    json: MachineJson = False,
) -> None:
    """List an MCP server's tools: as the server gives them, or projected to a target.

    The server is started from the command after `--` (stdio), or reached with --url.
    """
    from schemawire.project import project_catalogue

    address = _address(command, url, header, token)
    with _server_errors():
        tools, info = anyio.run(_list, address, timeout, trace)
    if target is not None:
        specs = [t.spec for t in tools if t.spec is not None]
        options: dict[str, Any] = {} if strict is None else {"strict": strict}
        catalogue = project_catalogue(specs, target, **options)
        print_json(catalogue.payload)
        for loss in (loss for p in catalogue.projections for loss in p.losses):
            stderr.print(f"[yellow]loss[/] {escape(loss.code)} {escape(loss.detail)}")
        return
    if json:
        print_json({"server": info, "tools": [t.listed for t in tools]})
        return
    _print_tools(tools, info)


@guarded
def call_command(
    tool: Annotated[str, typer.Argument(help="The tool's name.")],
    arguments: Annotated[str, typer.Argument(help="The arguments as JSON text (- for stdin).")],
    command: Command = None,
    url: Url = None,
    header: Headers = None,
    token: Token = None,
    repo: Repo = None,
    tolerant: Annotated[
        bool, typer.Option("--tolerant", help="Repair malformed JSON arguments, and say how.")
    ] = False,
    timeout: Timeout = 30.0,
    trace: Trace = None,
    json: MachineJson = False,
) -> None:
    """Make one gated call: the arguments are checked before anything is sent, the result
    before it is shown. Exit 1 when a gate refuses (or the tool fails), 2 on unusable input.
    """
    import sys

    from schemawire.gates import ArgumentOptions

    text = sys.stdin.read() if arguments == "-" else arguments
    options = ArgumentOptions(tolerant=tolerant)
    address = _address(command, url, header, token)
    with _server_errors():
        call, info = anyio.run(_call, address, tool, text, options, repo, timeout, trace)
    if json:
        print_json(call.to_json())
    else:
        _print_call(call, info)
    if not call.accepted:
        raise typer.Exit(EXIT_FINDINGS)


# The options of ``serve``.
ServeArguments = Annotated[
    list[str] | None,
    typer.Argument(
        help="The repository to serve (default: .); with --upstream, the "
        "upstream server's command, after `--`.",
        show_default=False,
    ),
]
Upstream = Annotated[
    bool,
    typer.Option(
        "--upstream",
        help="`--upstream -- CMD`: be a gating proxy for the command after `--`. "
        "`--upstream NAME -- CMD`, repeated: be a gateway over several, tools named NAME_tool.",
    ),
]
UpstreamUrl = Annotated[
    list[str] | None,
    typer.Option(
        "--upstream-url",
        help="An HTTP upstream: `URL` (a proxy), or `NAME=URL` (a gateway; repeatable).",
    ),
]
Shortlist = Annotated[
    bool,
    typer.Option(
        "--shortlist",
        help="As a gateway, list only search_tools and call_tool; a search finds the tools.",
    ),
]
Top = Annotated[
    int | None,
    typer.Option(
        "--top",
        min=1,
        max=50,
        help="Tools one search returns (--shortlist; default: \\[gateway] shortlist, else 5).",
        show_default=False,
    ),
]
Semantic = Annotated[
    bool,
    typer.Option(
        "--semantic",
        help="With --shortlist: searches rank by meaning too (BM25 fused with the "
        "schemawire\\[semantic] extra's embedder).",
    ),
]
ProxyRepo = Annotated[
    Path | None,
    typer.Option("--repo", help="The repository whose schemas gate a proxy's calls."),
]
Http = Annotated[bool, typer.Option("--http", help="Serve Streamable HTTP instead of stdio.")]
Host = Annotated[str, typer.Option("--host", help="Address to bind (--http).")]
Port = Annotated[int, typer.Option("--port", help="Port to bind (--http; 0: any).")]
AllowRemote = Annotated[
    bool, typer.Option("--allow-remote", help="Allow binding an address other than loopback.")
]
ServeToken = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="SCHEMAWIRE_SERVE_TOKEN",
        help="Require `Authorization: Bearer <token>` (--http).",
    ),
]
AllowedOrigins = Annotated[
    list[str] | None,
    typer.Option("--allow-origin", help="An Origin browsers may call from (repeatable)."),
]
CallTimeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        help="Seconds a call may take (default: 30 for an upstream; \\[serve] timeout, 60, "
        "for the repository's tools).",
        show_default=False,
    ),
]
HeaderTimeout = Annotated[
    float,
    typer.Option("--header-timeout", help="Seconds a request's headers may take (--http)."),
]
BodyTimeout = Annotated[
    float, typer.Option("--body-timeout", help="Seconds a request's body may take (--http).")
]
SessionIdle = Annotated[
    float,
    typer.Option("--session-idle", help="Seconds an idle session lives (--http)."),
]
MaxSessions = Annotated[
    int,
    typer.Option(
        "--max-sessions", help="Sessions kept in all; past it the longest idle ends (--http)."
    ),
]
ClientSessions = Annotated[
    int,
    typer.Option(
        "--client-sessions",
        help="Sessions one client address keeps; past it its longest idle ends (--http).",
    ),
]


@guarded
def serve_command(
    ctx: typer.Context,
    arguments: ServeArguments = None,
    upstream: Upstream = False,
    upstream_url: UpstreamUrl = None,
    shortlist: Shortlist = False,
    top: Top = None,
    semantic: Semantic = False,
    repo: ProxyRepo = None,
    http: Http = False,
    host: Host = "127.0.0.1",
    port: Port = 8000,
    allow_remote: AllowRemote = False,
    token: ServeToken = None,
    allowed_origin: AllowedOrigins = None,
    timeout: CallTimeout = None,
    header_timeout: HeaderTimeout = 10.0,
    body_timeout: BodyTimeout = 30.0,
    session_idle: SessionIdle = 300.0,
    max_sessions: MaxSessions = 1000,
    client_sessions: ClientSessions = 100,
    trace: Trace = None,
    otlp: Otlp = None,
) -> None:
    """Serve the repository's tools over MCP, every call gated both ways; or, with --upstream,
    stand in front of another MCP server and gate every call to it; or, with named upstreams
    (or a \\[gateway] table in schemawire.toml), serve several MCP servers as one.

    A gateway lists each upstream's tools under the upstream's name (fs_read_file), gates every
    call, restarts an upstream that died on its own, and passes tools/list_changed on. With
    --shortlist it lists only search_tools and call_tool.
    """
    from schemawire.cli._trace import live_export
    from schemawire.mcp.launch import HttpOptions, ServeOptions, SessionBounds, serve

    if _MISTAKE in ctx.meta:
        raise ctx.meta[_MISTAKE]
    if top is not None and not shortlist:
        raise UsageError("--top is the size of a --shortlist search: add --shortlist")
    if semantic and not shortlist:
        raise UsageError("--semantic ranks a --shortlist search: add --shortlist")
    groups = ctx.meta.get(_GROUPS)
    if groups is None:  # the command was built without ServeCommand (serve's own parsing)
        groups = [(None, list(arguments or []))] if upstream else []
        arguments = [] if upstream else arguments
    target = _serve_target(arguments or [], groups, upstream_url or [], repo)
    sessions = SessionBounds(idle=session_idle, per_client=client_sessions, total=max_sessions)
    listen = HttpOptions(
        host=host,
        port=port,
        allow_remote=allow_remote,
        token=token,
        allowed_origins=tuple(allowed_origin or ()),
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        sessions=sessions,
    )
    options = ServeOptions(
        upstream=target.upstream,
        upstreams=target.upstreams,
        shortlist=top,
        shortlisted=shortlist,
        embedder=_semantic_embedder() if semantic else None,
        http=listen if http else None,
        timeout=timeout,
        trace=trace,
        on_ready=functools.partial(_announce, host),
    )
    export = live_export(otlp)
    if export is not None:
        options = dataclasses.replace(options, on_hop=export.hop)
    try:
        with _server_errors(own_hints=target.upstream is None):  # a gateway's say what to check
            serve(target.directory, options)
    finally:
        if export is not None:
            export.close()  # flush the spans still batched


# --- serve's upstreams on the command line ---------------------------------------------------

_GROUPS = "schemawire.serve.upstreams"  # where ServeCommand leaves the upstreams it read
_MISTAKE = "schemawire.serve.mistake"  # and the mistake it found in them, if any

Group = tuple[str | None, list[str]]
"""One ``--upstream [NAME] -- CMD ...``: the upstream's name (None: unnamed), its command."""


class ServeCommand(typer.core.TyperCommand):
    """``serve``, which reads its upstreams before Click sees the arguments.

    Click keeps only what follows the first ``--`` and loses where each later ``--upstream NAME
    --`` was; this reads them off the arguments as given (`split_upstreams`).
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            head, groups = split_upstreams(args)
        except UsageError as error:  # said by the command itself, as its other mistakes are
            ctx.meta[_MISTAKE] = error
            head, groups = [a for a in args if a in ("--help", "-h")], None
        if groups is not None:
            ctx.meta[_GROUPS] = groups
        return super().parse_args(ctx, head)


COMMAND_CLASSES = {"serve_command": ServeCommand}
"""The commands of this module built with a class of their own (`schemawire.cli._app`)."""


def split_upstreams(args: list[str]) -> tuple[list[str], list[Group] | None]:
    """``serve``'s own options, and the upstreams given as ``--upstream [NAME] -- CMD``.

    ``--upstream fs -- npx server-filesystem . --upstream mem -- npx server-memory`` is two
    groups: after the first ``--``, each ``--upstream NAME --`` starts the next, and each
    ``--upstream-url NAME=URL`` (an ``http://`` or ``https://`` URL) is one of serve's own
    options, wherever it is. Without an ``--upstream`` before the first ``--``, there are none
    (None) and ``args`` go on as they are.

    Raises:
        UsageError: ``--upstream`` without a command after ``--``; two names before the first
            ``--``; an ``--upstream NAME`` in a gateway's command, not followed by ``--``.
    """
    if "--" not in args:
        if "--upstream" in args:
            raise UsageError(
                f"{_upstream_flag(args)} needs the upstream server's command after `--`"
            )
        return args, None
    at = args.index("--")
    head, tail = args[:at], args[at + 1 :]
    if "--upstream" not in head:
        return args, None
    if head.count("--upstream") > 1:
        raise UsageError(
            "each upstream's command follows its own name: "
            "--upstream fs -- CMD ... --upstream mem -- CMD ..."
        )
    flag = head.index("--upstream")
    named = flag + 1 < len(head) and not head[flag + 1].startswith("-")
    first = head[flag + 1] if named else None
    head = head[:flag] + head[flag + (2 if named else 1) :]
    groups: list[Group] = [(first, [])]
    index = 0
    while index < len(tail):
        starts = _group_start(tail, index)
        if starts is not None:
            name, index = starts
            groups.append((name, []))
        elif first is not None and _named_url_at(tail, index):
            head += tail[index : index + 2]
            index += 2
        else:
            if first is not None:
                _check_not_a_group(tail, index, groups[-1][0])
            groups[-1][1].append(tail[index])
            index += 1
    return head, groups


def _upstream_flag(args: list[str]) -> str:
    """``--upstream`` as given, with the name after it (if any)."""
    at = args.index("--upstream")
    name = args[at + 1 : at + 2]
    return f"--upstream {name[0]}" if name and not name[0].startswith("-") else "--upstream"


_URL_UPSTREAM = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,23}=https?://\S+", re.ASCII)


def _named_url_at(tail: list[str], index: int) -> bool:
    """Whether ``--upstream-url NAME=URL`` is at ``index`` of a gateway's commands."""
    value = tail[index + 1 : index + 2]
    return (
        tail[index] == "--upstream-url" and bool(value) and bool(_URL_UPSTREAM.fullmatch(value[0]))
    )


def _check_not_a_group(tail: list[str], index: int, upstream: str | None) -> None:
    """Refuse ``--upstream NAME`` in a gateway's command when no ``--`` follows the name: the
    next upstream, its ``--`` forgotten (a command that takes ``--upstream`` itself goes in
    the ``[gateway]`` table).

    Raises:
        UsageError: that is what is at ``index``.
    """
    name = tail[index + 1 : index + 2]
    if tail[index] != "--upstream" or not name or name[0].startswith("-"):
        return
    rest = " ".join(tail[index + 2 : index + 4])
    raise UsageError(
        f"--upstream {name[0]} is inside the command of upstream {upstream}: did you mean "
        f"`--upstream {name[0]} -- {rest}{' ...' if len(tail) > index + 4 else ''}`? (A command "
        "that takes --upstream itself goes in the [gateway] table of schemawire.toml.)"
    )


def _group_start(tail: list[str], index: int) -> tuple[str | None, int] | None:
    """The next group's name and where its command starts, when ``--upstream [NAME] --``
    starts at ``index``; else None."""
    if tail[index] != "--upstream":
        return None
    if tail[index + 1 : index + 2] == ["--"]:
        return None, index + 2
    name = tail[index + 1 : index + 2]
    if name and not name[0].startswith("-") and tail[index + 2 : index + 3] == ["--"]:
        return name[0], index + 3
    return None


@dataclasses.dataclass(frozen=True)
class _ServeTarget:
    """What ``serve`` serves: the repository, and an upstream (a proxy) or several (a gateway)."""

    directory: Path
    upstream: Any = None
    upstreams: tuple[Any, ...] = ()


def _semantic_embedder() -> Embedder:
    from schemawire.gates import semantic_embedder

    return semantic_embedder()


def _serve_target(
    arguments: list[str], groups: list[Group], urls: list[str], repo: Path | None
) -> _ServeTarget:
    """The repository, and the upstream server(s) when proxying. As a proxy or a gateway, what
    follows `--` is the upstreams' command lines, so the repository can only be --repo."""
    named_urls = [_named_url(url) for url in urls]
    if groups or named_urls:
        if arguments:
            raise UsageError(
                "a proxy's repository is --repo (what follows `--` is the upstream's command)"
            )
        return _proxy_target(repo or Path("."), groups, named_urls)
    if len(arguments) > 1:
        raise UsageError(
            f"one repository to serve, not {len(arguments)} (a command after `--` "
            "is an upstream server: add --upstream)"
        )
    if arguments and repo:
        raise UsageError("give the repository as an argument or as --repo, not both")
    return _ServeTarget(Path(arguments[0]) if arguments else repo or Path("."))


def _proxy_target(
    directory: Path, groups: list[Group], urls: list[tuple[str | None, str]]
) -> _ServeTarget:
    for name, command in groups:
        if not command:
            what = f"--upstream {name}" if name else "--upstream"
            raise UsageError(f"{what} needs the upstream server's command after `--`")
    given: list[tuple[str | None, list[str] | str]] = [*groups, *urls]
    if len(given) == 1 and given[0][0] is None:  # one unnamed upstream: the gating proxy
        _, where = given[0]
        if isinstance(where, str):
            return _ServeTarget(directory, upstream=_address(None, where, None, None))
        return _ServeTarget(directory, upstream=_address(where, None, None, None))
    if any(name is None for name, _ in given):
        raise UsageError(
            "name every upstream of a gateway: --upstream NAME -- CMD, --upstream-url NAME=URL"
        )
    return _ServeTarget(directory, upstreams=tuple(_gateway_upstream(*g) for g in given))


def _named_url(text: str) -> tuple[str | None, str]:
    """``NAME=URL`` as (NAME, URL); a bare URL (whose text before any ``=`` has a ``:``)
    as (None, URL)."""
    name, equals, url = text.partition("=")
    if equals and ":" not in name:
        if not url.startswith(("http://", "https://")):
            raise UsageError(
                f"--upstream-url {quoted(text)}: the URL starts with http:// or https:// "
                "(a stdio server is --upstream NAME -- CMD)"
            )
        return name, url
    return None, text


def _gateway_upstream(name: Any, where: list[str] | str) -> Any:
    from schemawire.mcp import Upstream

    if isinstance(where, str):
        return Upstream(
            name, _address(None, where, None, None), origin=f"URL of --upstream-url {name}=URL"
        )
    return Upstream(
        name, _address(where, None, None, None), origin=f"command of --upstream {name} -- CMD"
    )


def _announce(host: str, port: int | None) -> None:
    """Say where the server listens, on stderr (stdout is the stdio transport's)."""
    if port is None:
        stderr.print("schemawire: serving MCP on stdio")
    else:
        address = f"[{host}]" if ":" in host else host
        stderr.print(f"schemawire: serving MCP at http://{address}:{port}/mcp")


# --- the work --------------------------------------------------------------------------------

# What to do about each `ServerError.code`, in the command line's words.
_SERVER_HINTS = {
    "unauthorized": "pass --token TOKEN (or set SCHEMAWIRE_MCP_TOKEN), or the header it wants "
    "with --header 'Authorization: ...'",
    "forbidden": "check --token, and any --header the server wants (Origin, Authorization)",
    "not_found": "check the path in --url (schemawire serve --http listens at /mcp)",
    "unreachable": "check that the server is running and that --url is right",
    "http_error": "check --url, and what the server's own log says",
    "not_started": "check the command after `--`",
    "exited": "fix what it says, or run the command after `--` alone to see all it writes",
    "timeout": "check that the server answers, or give it longer with --timeout",
}


@contextlib.contextmanager
def _server_errors(*, own_hints: bool = False) -> Iterator[None]:
    """A server that cannot be used, met in the block, is one line saying what happened and
    what to pass; and exit code 2. ``own_hints``: the errors' own hints say what to pass (a
    gateway's name the upstream's option or table key)."""
    from schemawire.mcp import ServerError

    try:
        yield
    except ServerError as error:
        hint = error.hint if own_hints and error.hint else _SERVER_HINTS.get(error.code, error.hint)
        fail(f"MCP server {error.server}: {error.reason}" + (f"; {hint}" if hint else ""))


def _address(
    command: list[str] | None, url: str | None, header: list[str] | None, token: str | None
) -> Any:
    from schemawire.mcp import HttpServer, StdioServer

    _quiet_sdk()
    if bool(command) == bool(url):
        raise UsageError("give the server's command after `--`, or --url (one of them)")
    if url:
        return HttpServer(url, dict(_header(h) for h in header or ()), token)
    assert command
    return StdioServer.from_argv(command)


def _header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    if not colon or not name.strip():
        raise UsageError(f"--header {quoted(text)}: write it as `Name: value`")
    return name.strip(), value.strip()


async def _list(address: Any, timeout: float, trace: Path | None) -> tuple[Any, Any]:
    from schemawire.mcp import McpClient
    from schemawire.trace import Trace as Recorder

    with Recorder(path=trace) as recorder:
        async with McpClient(address, trace=recorder, timeout=timeout) as client:
            return await client.list_tools(), _info(client)


async def _call(
    address: Any,
    tool: str,
    text: str,
    options: Any,
    repo: Path | None,
    timeout: float,
    trace: Path | None,
) -> tuple[Any, Any]:
    from schemawire.mcp import McpClient
    from schemawire.schema.repository import Repository
    from schemawire.trace import Trace as Recorder

    repository = Repository.load(repo) if repo is not None else None
    with Recorder(path=trace) as recorder:
        async with McpClient(
            address,
            repository=repository,
            trace=recorder,
            timeout=timeout,
            argument_options=options,
        ) as client:
            return await client.call(tool, text), _info(client)


def _info(client: Any) -> dict[str, Any]:
    return {
        "label": client.server.label,
        "protocolVersion": client.protocol_version,
        "serverInfo": client.server_info,
    }


def _print_tools(tools: Any, info: dict[str, Any]) -> None:
    name = (info["serverInfo"] or {}).get("name", info["label"])
    table = Table(title=f"{name} (MCP {info['protocolVersion']}): {len(tools)} tools")
    for column in ("tool", "checked against", "description"):
        table.add_column(column)
    for tool in tools:
        source = "repository" if tool.canonical else "server schema"
        if tool.spec is None:
            source = f"[red]unusable: {escape(tool.problem or '')}[/]"
        description = (tool.spec.description if tool.spec else "").split("\n")[0][:80]
        table.add_row(escape(tool.name), source, escape(description))
    stdout.print(table)


def _print_call(call: Any, info: dict[str, Any]) -> None:
    for verdict in (call.argument_verdict, call.result):
        if verdict is None:
            stdout.print("[dim]results: not checked: the call was not sent[/]")
            continue
        style = "green" if verdict.accepted else "bold red"
        stdout.print(f"[{style}]{verdict.gate}: {verdict.outcome}[/]")
        for change in verdict.changes:
            stdout.print(
                f"  {escape(change.kind)} {escape(change.pointer or '/')}: {escape(change.detail)}"
            )
    output = call.output
    print_json(
        {
            "content": output.content,
            "isError": output.is_error,
            "structuredContent": output.structured,
        }
    )
    if not call.sent:
        stderr.print(f"[yellow]nothing was sent to {escape(info['label'])}[/]")


def _quiet_sdk() -> None:
    """The SDK logs a traceback for each line a server writes that is not JSON-RPC; the
    command says so in one line instead."""
    logging.getLogger("mcp").addHandler(logging.NullHandler())

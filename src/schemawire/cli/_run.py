"""``schemawire run`` and ``schemawire demo``: the agent loop on the command line."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer
from rich.markup import escape

from schemawire._json import quoted
from schemawire.cli._hops import HopPrinter, fold
from schemawire.cli._output import (
    EXIT_FINDINGS,
    guarded,
    print_json,
    print_stopped,
    stderr,
    stdout,
)
from schemawire.errors import SchemawireError, UsageError

if TYPE_CHECKING:
    from schemawire.cli._live import LivePrinter

__all__ = ["demo_command", "run_command"]

Model = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="openai:NAME, openai-responses:NAME, anthropic:NAME, "
        "gemini:NAME, openai-compatible:URL:NAME or script:FILE.",
    ),
]
TracePath = Annotated[
    Path | None,
    typer.Option(
        "--trace", help="The JSON Lines trace (default: .schemawire/traces/RUN_ID.jsonl)."
    ),
]
DEMO_QUESTIONS = ("上海今天多少度？", "上海現在幾度？請用開爾文（kelvin）回答。")
RunArguments = Annotated[
    list[str] | None,
    typer.Argument(
        help="The user's input; after it, `--` and an MCP server's command.", show_default=False
    ),
]
Mcp = Annotated[bool, typer.Option("--mcp", help="Offer the tools of the MCP server after `--`.")]
McpUrl = Annotated[
    str | None, typer.Option("--mcp-url", help="Offer the tools of this HTTP MCP server.")
]
ToolsRepo = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        help="A repository: its \\[serve.tools] functions, and canonical "
        "schemas for the MCP tools.",
    ),
]
Strict = Annotated[bool, typer.Option("--strict/--no-strict", help="Project tools in strict mode.")]
MaxTurns = Annotated[int, typer.Option("--max-turns", help="Model requests per run.")]
Json = Annotated[bool, typer.Option("--json", help="Print the run as JSON at the end.")]
Stream = Annotated[
    bool,
    typer.Option(
        "--stream/--no-stream",
        help="Stream the model's answers (HTTP models): on a terminal, its text and its "
        "calls' arguments print as they arrive.",
    ),
]
ShortlistK = Annotated[
    int | None,
    typer.Option(
        "--shortlist",
        metavar="K",
        help="Send the model only the K tools that best match the input (plus --pin, the "
        "tools already called, and what its search_tools finds).",
        show_default=False,
    ),
]
Pin = Annotated[
    list[str] | None,
    typer.Option("--pin", metavar="TOOL", help="With --shortlist: a tool every request carries."),
]
SearchTools = Annotated[
    bool | None,
    typer.Option(
        "--search-tools/--no-search-tools",
        help="Offer the model search_tools, to find the tools it was not sent (default: with "
        "--shortlist). Alone, the model starts with the --pin tools and search_tools.",
        show_default=False,
    ),
]
SearchForm = Annotated[
    str,
    typer.Option(
        "--search-form",
        metavar="FORM",
        help="How search_tools and what it finds are sent: function (every API and "
        "OpenAI-compatible server) or native (Anthropic's tool_reference results, OpenAI "
        "Responses' client tool_search; only some models take them).",
    ),
]
Semantic = Annotated[
    bool,
    typer.Option(
        "--semantic",
        help="With --shortlist or --search-tools: rank tools by meaning too (BM25 fused with "
        "the schemawire\\[semantic] extra's embedder).",
    ),
]
FlowFile = Annotated[
    Path | None,
    typer.Option("--flow", help="Run a flow (agents, handoffs, routes, checkpoints)."),
]
StoreUrl = Annotated[
    str,
    typer.Option(
        "--store",
        envvar="SCHEMAWIRE_STORE",
        help="With --flow: sqlite:PATH or postgresql://...",
    ),
]


@guarded
def run_command(
    arguments: RunArguments = None,
    model: Model = None,
    mcp: Mcp = False,
    mcp_url: McpUrl = None,
    repo: ToolsRepo = None,
    strict: Strict = True,
    max_turns: MaxTurns = 10,
    trace: TracePath = None,
    json: Json = False,
    stream: Stream = True,
    shortlist: ShortlistK = None,
    pin: Pin = None,
    search_tools: SearchTools = None,
    search_form: SearchForm = "function",
    semantic: Semantic = False,
    flow: FlowFile = None,
    store: StoreUrl = "sqlite:.schemawire/runs.db",
) -> None:
    """Run the agent loop once: the model, your tools, both gates, every hop traced.

    Exit 0 when the model answers, 1 when it does not (turn limit, or an answer that breaks
    the output schema), 2 on unusable input or a model or server that cannot be reached.
    """
    from schemawire.host import HostOptions, model_from_spec

    words = _user_input(arguments)
    shortlisting = _shortlisting(shortlist, pin, search_tools, search_form, semantic=semantic)
    if flow is not None:
        from schemawire.cli._flows import run_flow

        if shortlisting:
            raise UsageError(
                "--shortlist, --pin, --search-tools, --search-form and --semantic are for one "
                "agent's run: "
                "leave them out with --flow"
            )

        run_flow(
            flow,
            words[0],
            store=store,
            model=model,
            repo=repo,
            trace=trace,
            json=json,
            max_turns=max_turns,
            stream=stream,
        )
        return
    spec = _model_spec(model)
    question, command = _question_and_server(words, mcp=mcp)
    options = HostOptions(strict=strict, max_turns=max_turns, **shortlisting)
    chosen = model_from_spec(spec, stream=stream)
    live = _live_printer(json)
    recorded = _run_trace(trace, quiet=json, live=live)
    try:
        result = anyio.run(_run, chosen, question, command, mcp_url, repo, options, recorded, live)
    except SchemawireError as error:
        print_stopped(recorded, str(error), json=json)
    _report_run(result, recorded, json=json)


def _shortlisting(
    k: int | None, pins: list[str] | None, search: bool | None, form: str, *, semantic: bool
) -> dict[str, Any]:
    """The shortlist's `HostOptions`, checked as the options were given (empty: none given).

    Raises:
        UsageError: K is below 1, a pin or --semantic without a shortlist, an unknown search
            form, or --semantic without the semantic extra.
    """
    if k is not None and k < 1:
        raise UsageError(f"--shortlist K needs K >= 1, not {k}: the model is sent the K best tools")
    if pins and k is None and not search:
        raise UsageError(
            "--pin needs --shortlist K or --search-tools: without either, every tool is sent"
        )
    if semantic and k is None and not search:
        raise UsageError(
            "--semantic ranks a shortlist: give --shortlist K or --search-tools with it"
        )
    if form not in ("function", "native"):
        raise UsageError(f"--search-form is function or native, not {quoted(form)}")
    options: dict[str, Any] = {}
    if k is not None:
        options["shortlist"] = k
    if pins:
        options["pinned"] = tuple(pins)
    if search is not None:
        options["search_tools"] = search
    if form != "function":
        options["search_form"] = form
    if semantic:
        from schemawire.gates import semantic_embedder

        options["embedder"] = semantic_embedder()
    return options


def _user_input(arguments: list[str] | None) -> list[str]:
    """The words after ``run``: the user's input first.

    Raises:
        UsageError: there are none.
    """
    words = list(arguments or [])
    if not words:
        raise UsageError(
            'give the user\'s input, such as: schemawire run -m MODEL "上海今天多少度？"'
        )
    return words


def _model_spec(model: str | None) -> str:
    """The ``--model`` given.

    Raises:
        UsageError: none was given.
    """
    if model is None:
        raise UsageError("give --model, such as openai:gpt-4.1-mini or script:demo.json")
    return model


def _question_and_server(words: list[str], *, mcp: bool) -> tuple[str, list[str]]:
    """The user's input and the MCP server's command line (empty without ``--mcp``).

    Raises:
        UsageError: a server command without ``--mcp``, or ``--mcp`` without one.
    """
    question, command = words[0], words[1:]
    if command and not mcp:
        raise UsageError("a command after the input is an MCP server: add --mcp")
    if mcp and not command:
        raise UsageError("--mcp needs the server's command after `--`")
    return question, command


def _report_run(result: Any, recorded: Any, *, json: bool) -> None:
    """Show the run's end; exit 1 when the model did not answer."""
    if json:
        print_json(_result_json(result, recorded))
    else:
        _print_answer(result, recorded)
    if result.stopped != "answer":
        raise typer.Exit(EXIT_FINDINGS)


@guarded
def demo_command(model: Model = None, trace: TracePath = None) -> None:
    """The articles' walkthrough, offline: an MCP server's tools projected to OpenAI strict,
    a (scripted) model's call checked, run and answered; then a bad argument refused and
    corrected. With --model, the same against a real model.
    """
    from schemawire.host import ScriptedModel, model_from_spec

    if model is None:
        with resources.as_file(resources.files("schemawire.host") / "demo.json") as script:
            chosen: Any = ScriptedModel.from_file(script)
    else:
        chosen = model_from_spec(model)
    path = anyio.run(_demo, chosen, trace)
    stdout.print(
        f"\n[bold]trace:[/] {escape(str(path))}  ({len(path.read_text().splitlines())} hops)"
    )
    stdout.print(
        "[bold]see every hop:[/] "
        f"{escape(_this_command())} ui --traces {escape(str(path.parent))} --open",
        soft_wrap=True,
    )


def _this_command() -> str:
    """How this command was typed (``.venv/bin/schemawire`` under ``make demo``), so that the
    next command it suggests runs as typed."""
    typed = sys.argv[0] if sys.argv else ""
    return typed if Path(typed).name == "schemawire" else "schemawire"


# --- run ----------------------------------------------------------------------------------------


def _run_trace(given: Path | None, *, quiet: bool, live: LivePrinter | None) -> Any:
    """A new run's trace: its hops printed as they happen (unless ``quiet``; around a streamed
    answer's live lines) and written to ``given``, or to the file named by the run's id
    (``.schemawire/traces/<run id>.jsonl``).

    Raises:
        JSONError: ``given`` exists and is not a trace file.
    """
    from schemawire.trace import Trace, new_run_id, trace_path

    run_id = new_run_id()
    printer = None if quiet else HopPrinter(stdout)
    on_hop = live.around(printer) if live is not None and printer is not None else printer
    return Trace(run_id, path=given or trace_path(run_id), on_hop=on_hop)


async def _run(
    model: Any,
    question: str,
    command: list[str],
    url: str | None,
    repo: Path | None,
    options: Any,
    trace: Any,
    live: LivePrinter | None,
) -> Any:
    from schemawire.host import Host

    async with AsyncExitStack() as stack:
        repository = _repository(repo)
        stack.enter_context(trace)
        runners = await _tools(stack, repository, command, url, trace)
        host = Host(
            model, runners, repository=repository, trace=trace, options=options, on_delta=live
        )
        try:
            return await host.run(question)
        finally:
            if live is not None:
                live.end_line()
    raise AssertionError("unreachable")  # pragma: no cover


async def _tools(
    stack: AsyncExitStack, repository: Any, command: list[str], url: str | None, trace: Any
) -> list[Any]:
    from schemawire.host import mcp_tools, python_tools
    from schemawire.mcp import HttpServer, McpClient, StdioServer
    from schemawire.schema.implementations import load_implementations

    runners: list[Any] = []
    if repository is not None and repository.config.serve.tools:
        runners += python_tools(repository, load_implementations(repository))
    if command or url:
        server = StdioServer.from_argv(command) if command else HttpServer(url or "")
        client = await stack.enter_async_context(
            McpClient(server, repository=repository, trace=trace)
        )
        runners += await mcp_tools(client)
    if not runners:
        raise UsageError(
            "no tools: give --repo (with [serve.tools]), --mcp -- COMMAND or --mcp-url"
        )
    return runners


def _live_printer(quiet: bool) -> LivePrinter | None:
    """The printer of streamed answers: on a terminal, unless the run prints only JSON."""
    from schemawire.cli._live import LivePrinter

    return None if quiet or not stdout.is_terminal else LivePrinter(stdout)


def _repository(repo: Path | None) -> Any:
    from schemawire.schema.repository import Repository

    return Repository.load(repo) if repo is not None else None


def _print_answer(result: Any, trace: Any) -> None:
    if result.stopped == "answer":
        stdout.print(f"\n[bold green]answer:[/] {escape(result.answer or '')}")
    else:
        stdout.print(
            f"\n[bold red]no answer:[/] {escape(result.stopped)} after {result.turns} turns"
        )
    stdout.print(f"[bold]trace:[/] {escape(str(trace.path))}")


def _result_json(result: Any, trace: Any) -> dict[str, Any]:
    return {
        "run_id": trace.run_id,
        "answer": result.answer,
        "output": result.output,
        "stopped": result.stopped,
        "turns": result.turns,
        "calls": [
            {
                "id": r.call.call_id,
                "tool": r.call.name,
                "arguments": r.call.arguments,
                "gates": [v.to_json() for v in (r.argument_verdict, r.result) if v is not None],
            }
            for r in result.calls
        ],
        "trace": str(trace.path),
    }


# --- demo ---------------------------------------------------------------------------------------


@asynccontextmanager
async def _example_server() -> AsyncIterator[Path]:
    """The example repository that ships with schemawire (what ``init`` writes)."""
    with resources.as_file(resources.files("schemawire") / "scaffold") as root:
        yield root


async def _demo(model: Any, trace_path: Path | None) -> Path:
    from schemawire.host import Host, HostOptions, mcp_tools
    from schemawire.mcp import McpClient, StdioServer
    from schemawire.schema.repository import Repository
    from schemawire.trace import Trace, new_run_id
    from schemawire.trace import trace_path as default_path

    run_id = new_run_id()
    path = trace_path or default_path(run_id)
    printer = HopPrinter(stdout)
    async with _example_server() as root:
        repository = Repository.load(root)
        server = StdioServer(
            sys.executable, ("-m", "schemawire", "serve", str(root)), name="schemawire serve"
        )
        with Trace(run_id, path=path, on_hop=printer) as trace:
            _step(1, "Start the example MCP server (the support desk's tools) over stdio")
            async with McpClient(server, repository=repository, trace=trace) as client:
                info = client.server_info or {}
                about = f"{info.get('name')} {info.get('version')}, MCP {client.protocol_version}"
                stdout.print(f"   {escape(about)}")
                runners = await mcp_tools(client)
                _step(2, "tools/list: the server's tools, checked against the repository's schemas")
                _print_tools(runners)
                options = HostOptions(strict=True)
                host = Host(model, runners, repository=repository, trace=trace, options=options)
                _step(
                    3,
                    f"Project them to {host.wire.target}, strict: what the model is sent, "
                    "and what it cannot say",
                )
                _print_projection(host)
                for number, question in enumerate(DEMO_QUESTIONS, 4):
                    _step(number, f"Ask: {question}")
                    result = await host.run(question)
                    _print_answer_only(result)
    return path


def _step(number: int, title: str) -> None:
    stdout.print(f"\n[bold]{number}. {escape(title)}[/]")


def _print_tools(runners: Sequence[Any]) -> None:
    for runner in runners:
        spec = runner.spec
        identity = " ".join(part for part in (spec.schema_id, spec.version) if part)
        stdout.print(f"   [cyan]{escape(spec.name)}[/] {escape(identity or '(no $id)')}")


def _print_projection(host: Any) -> None:
    for projection in host.catalogue.projections:
        stdout.print(
            f"   [cyan]{escape(projection.projected_name)}[/] "
            f"{escape(fold(projection.payload, 100))}"
        )
        for loss in projection.losses:
            where = (loss.pointer or "/") + (f" {loss.keyword}" if loss.keyword else "")
            stdout.print(
                f"     [yellow]{escape(loss.code)}[/] {escape(where)}: {escape(loss.detail)}"
            )
        if not projection.losses:
            stdout.print("     [green]lossless[/]")


def _print_answer_only(result: Any) -> None:
    if result.stopped == "answer":
        stdout.print(f"   [bold green]answer:[/] {escape(result.answer or '')}")
    else:
        stderr.print(f"   [bold red]no answer:[/] {escape(result.stopped)}")

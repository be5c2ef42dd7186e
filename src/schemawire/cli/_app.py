"""The ``schemawire`` command: one Typer app whose commands load when they run.

`COMMANDS` names each command, its one-line summary, its examples and where its function is.
A command's module (and what it imports: the checker, the host, the MCP SDK) is imported only
when that command runs or shows its own help, so ``schemawire check`` never pays for ``serve``.
``schemawire --help`` lists the summaries from the table without importing any command.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Annotated, Any, cast

import typer
import typer.core
import typer.main
import typer.models

from schemawire._version import __version__

__all__ = ["COMMANDS", "Command", "app"]


@dataclass(frozen=True, slots=True)
class Command:
    """One command of the table: how ``schemawire --help`` lists it and where it is.

    Attributes:
        name: the command's name on the command line.
        target: ``module:attribute``, a command function or a Typer app of subcommands.
        summary: the one line ``schemawire --help`` shows for it.
        examples: shown under ``schemawire NAME --help`` (a Typer app has its own).
    """

    name: str
    target: str
    summary: str
    examples: tuple[str, ...] = ()


COMMANDS = (
    Command(
        "init",
        "schemawire.cli._repository:init",
        "Create a schema repository: a working example, or a blank one.",
        (
            "schemawire init example   # the support desk: tools, fixtures, handoff, state",
            "schemawire init --blank my-agent && cd my-agent",
        ),
    ),
    Command(
        "check",
        "schemawire.cli._repository:check",
        "Check schemas, lint, fixtures, adapters and flows: the CI gate.",
        (
            "schemawire check",
            "schemawire check examples/support-desk --json",
            "schemawire check --format sarif > schemawire.sarif   # for code scanning",
            "schemawire check --format github   # annotations in GitHub Actions",
            "schemawire check --fail-on warning",
            "schemawire check --since origin/main   # a breaking change needs a major x-version",
            "schemawire check --allow-empty          # a repository that holds no schema yet",
        ),
    ),
    Command(
        "lint",
        "schemawire.cli._repository:lint",
        "Check the schemas and their lint rules, without running fixtures.",
        ("schemawire lint", "schemawire lint --format sarif > lint.sarif"),
    ),
    Command(
        "fmt",
        "schemawire.cli._toolbox:fmt",
        "Format JSON stably: two-space indentation, key order kept.",
        (
            "schemawire fmt schemas/tools/*.json",
            "schemawire fmt --check schemas/**/*.json   # in CI",
            'echo \'{"b":1,"a":[1,2]}\' | schemawire fmt -',
        ),
    ),
    Command(
        "diff",
        "schemawire.cli._toolbox:diff",
        "Show what changed between two JSON documents or schema versions.",
        (
            "schemawire diff before.json after.json",
            "schemawire diff --json before.json after.json > patch.json",
            "schemawire diff --schema old/create_refund.json schemas/tools/create_refund.json",
            "schemawire diff --since origin/main --json",
        ),
    ),
    Command(
        "bump",
        "schemawire.cli._bump:bump_command",
        "Set the x-versions check --since asks for: major, minor or patch.",
        (
            "schemawire bump --since origin/main",
            "schemawire bump --since origin/main --dry-run --json",
        ),
    ),
    Command(
        "validate",
        "schemawire.cli._toolbox:validate",
        "Validate instances against a schema: every violation and where.",
        (
            "schemawire validate schemas/tools/create_refund.json call.json",
            "schemawire validate create_refund calls.jsonl --json",
            "schemawire validate https://example.com/schemas/tools/get_weather.json args.json",
            "schemawire validate create_refund calls.jsonl --quiet   # only what fails",
            "schemawire validate create_refund big.jsonl --max-bytes 200000000",
        ),
    ),
    Command(
        "export",
        "schemawire.cli._projections:export_command",
        "Project every schema to provider formats, MCP and A2A.",
        (
            "schemawire export                        # every target into adapters/",
            "schemawire export --target openai.chat --strict",
            "schemawire export --check                # in CI: adapters match the schemas",
            "schemawire export --losses               # what each tool loses, per target",
            "schemawire export --verify --target anthropic --strict",
            "schemawire export --refresh              # rewrite the adapters that exist",
        ),
    ),
    Command(
        "import",
        "schemawire.cli._projections:import_command",
        "Import tools from MCP tools/list, OpenAI or Anthropic tools.",
        (
            "schemawire import --from mcp tools.json",
            "schemawire import --from openai tools.json --out schemas/tools --id-base "
            "https://acme.dev/",
        ),
    ),
    Command(
        "tools",
        "schemawire.cli._mcp:tools_command",
        "List an MCP server's tools, as given or projected to a target.",
        (
            "schemawire tools -- npx -y @modelcontextprotocol/server-everything stdio",
            "schemawire tools --json -- python -m my_server",
            "schemawire tools --target openai.chat --strict -- python -m my_server",
            "schemawire tools --url http://127.0.0.1:8000/mcp --token $TOKEN",
        ),
    ),
    Command(
        "shortlist",
        "schemawire.cli._shortlist:shortlist_command",
        "Rank the tools a query needs, or measure the ranking on a set.",
        (
            'schemawire shortlist "refund a duplicate charge"   # this repository\'s tools',
            'schemawire shortlist "add two numbers" --top 3 --json -- npx -y '
            "@modelcontextprotocol/server-everything",
            'schemawire shortlist "read a file" --pin echo --tools tools.json   # tools/list JSON',
            "schemawire shortlist --eval evals/shortlist.jsonl --junit shortlist.xml",
            "schemawire shortlist --eval bfcl.jsonl --tools bfcl_tools.jsonl --min-recall 0.9",
        ),
    ),
    Command(
        "call",
        "schemawire.cli._mcp:call_command",
        "Make one gated MCP call: arguments checked, then the result.",
        (
            'schemawire call echo \'{"message": "hi"}\' -- mcp-server-everything stdio',
            "schemawire call create_refund - --repo . --json -- python -m my_server < args.json",
            "schemawire call echo '{message: hi,}' --tolerant --url http://127.0.0.1:8000/mcp",
        ),
    ),
    Command(
        "serve",
        "schemawire.cli._mcp:serve_command",
        "Serve the tools over MCP, or gate another MCP server: every call.",
        (
            "schemawire serve                              # this repository's tools, over stdio",
            "schemawire serve --http --port 8000 --token $TOKEN",
            "schemawire serve --upstream -- npx -y @modelcontextprotocol/server-memory",
            "schemawire serve --repo . --upstream -- python -m my_server   # canonical schemas",
            "schemawire serve --http --upstream-url http://127.0.0.1:3001/mcp",
            "schemawire serve --upstream fs -- npx -y @modelcontextprotocol/server-filesystem . "
            "--upstream mem -- npx -y @modelcontextprotocol/server-memory   # a gateway",
            "schemawire serve --upstream-url search=http://127.0.0.1:3001/mcp "
            "--upstream mem -- npx -y @modelcontextprotocol/server-memory",
            "schemawire serve --shortlist --top 5   # the \\[gateway] table's upstreams, searched",
        ),
    ),
    Command(
        "run",
        "schemawire.cli._run:run_command",
        "Run the agent loop once: model, tools, gates, every hop traced.",
        (
            'schemawire run -m openai:gpt-4.1-mini --repo . "上海今天多少度？"',
            'schemawire run -m anthropic:claude-sonnet-4-5 "Refund A-1042" --mcp -- python -m srv',
            'schemawire run -m openai-compatible:http://127.0.0.1:11434/v1:qwen3 --repo . "hi"',
            'schemawire run -m script:conversation.json --repo . "上海今天多少度？" --json',
            'schemawire run --flow flows/refund.json "Refund 20 on order A-1042, charged twice"',
        ),
    ),
    Command(
        "demo",
        "schemawire.cli._run:demo_command",
        "The articles' walkthrough, offline; with --model, a real model.",
        (
            "schemawire demo                          # offline: a scripted model",
            "schemawire demo --model openai:gpt-4.1-mini",
        ),
    ),
    Command(
        "runs",
        "schemawire.cli._flows:runs_app",
        "The runs of your flows: list them, show one, resume one.",
    ),
    Command(
        "eval",
        "schemawire.cli._evals:eval_command",
        "Run eval cases, or write one from a recorded run.",
        (
            "schemawire eval                       # evals/*.json of this repository",
            "schemawire eval examples/refund/evals --junit evals.xml",
            "schemawire eval evals/happy_path.json --json",
            "schemawire eval --from-trace .schemawire/traces/RUN_ID.jsonl --out "
            "evals/recorded.json",
        ),
    ),
    Command("trace", "schemawire.cli._trace:trace_app", "Send a trace's spans to OpenTelemetry."),
    Command(
        "ui",
        "schemawire.cli._ui:ui_command",
        "Open the local page: runs, hops, diffs, JSON toolbox, tools.",
        (
            "schemawire ui                      # the runs in .schemawire/traces",
            "schemawire ui --repo examples/support-desk --open",
            "schemawire ui --traces ci-traces --port 8737",
            "schemawire ui --repo . -- python -m my_server   # Tools page calls go there",
        ),
    ),
)

_BY_NAME = {command.name: command for command in COMMANDS}


def _examples_epilog(*lines: str) -> str:
    """The ``Examples`` section of a command's help, one example a line."""
    return "[bold]Examples[/]\n\n" + "\n\n".join(f"  {line}" for line in lines)


class _LazyGroup(typer.core.TyperGroup):
    """The root group: it knows its commands from `COMMANDS` and builds one only when asked
    for it (to run it, or to show its help), importing its module then."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        self._listing = False
        self._loaded: dict[str, typer.core.TyperCommand | typer.core.TyperGroup] = {}
        # What click's "No such command" suggestions read: every name, nothing imported.
        self.commands = {command.name: _summary_of(command) for command in COMMANDS}

    def list_commands(self, ctx: Any) -> list[str]:
        return [command.name for command in COMMANDS]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = _BY_NAME.get(cmd_name)
        if command is None:
            return None
        if self._listing:
            return self.commands[cmd_name]
        if cmd_name not in self._loaded:
            self._loaded[cmd_name] = _load(command, self.rich_markup_mode)
        return self._loaded[cmd_name]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # The list of commands needs only their summaries: no command module is imported.
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def _reflowed(docstring: str) -> str:
    """A command's docstring as help: each paragraph one line, for rich to wrap to the terminal.
    (In rich markup, Typer keeps the line breaks of every paragraph but the first, so text
    wrapped at 100 columns in the source broke mid-sentence at 80.)"""
    paragraphs = inspect.cleandoc(docstring).split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


def _summary_of(command: Command) -> typer.core.TyperCommand:
    """A command that only lists: its name and summary (it never runs)."""
    return typer.core.TyperCommand(name=command.name, short_help=command.summary)


def _load(command: Command, markup_mode: Any) -> typer.core.TyperCommand | typer.core.TyperGroup:
    """The command ``command`` names, imported and built as Typer builds it."""
    module_name, _, attribute = command.target.partition(":")
    module = importlib.import_module(module_name)
    target = getattr(module, attribute)
    if isinstance(target, typer.Typer):
        group = typer.main.get_group(target)
        group.short_help = command.summary
        return group
    info = typer.models.CommandInfo(
        name=command.name,
        callback=target,
        help=_reflowed(target.__doc__ or ""),
        short_help=command.summary,
        epilog=_examples_epilog(*command.examples) if command.examples else None,
        # A command that reads its own arguments first (serve's `--upstream NAME -- CMD`).
        cls=getattr(module, "COMMAND_CLASSES", {}).get(attribute),
    )
    built = typer.main.get_command_from_info(
        info, pretty_exceptions_short=True, rich_markup_mode=markup_mode
    )
    return cast(typer.core.TyperCommand, built)


app = typer.Typer(
    name="schemawire",
    cls=_LazyGroup,
    rich_markup_mode="rich",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _show_version(value: bool) -> None:
    if value:
        print(f"schemawire {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """One JSON Schema per tool, handoff and state: checked in CI, enforced at every hop."""

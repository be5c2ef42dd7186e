"""The ``schemawire`` command: one Typer app, a module per command group, thin over the library."""

from __future__ import annotations

from typing import Annotated

import typer

from schemawire._version import __version__
from schemawire.cli import evals, flows, mcp, projections, repository, run, toolbox
from schemawire.cli.output import stdout

__all__ = ["app"]

app = typer.Typer(
    name="schemawire",
    help="One JSON Schema per tool, handoff and state: checked in CI, enforced at every hop.",
    rich_markup_mode="rich",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _examples(*lines: str) -> str:
    return "[bold]Examples[/]\n\n" + "\n\n".join(f"  {line}" for line in lines)


def _show_version(value: bool) -> None:
    if value:
        stdout.print(f"schemawire {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """One JSON Schema per tool, handoff and state: checked in CI, enforced at every hop."""


app.command(
    epilog=_examples(
        "schemawire init example   # the support desk: tools, fixtures, handoff, state",
        "schemawire init --blank my-agent && cd my-agent",
    )
)(repository.init)
app.command(
    epilog=_examples(
        "schemawire check",
        "schemawire check examples/support-desk --json",
        "schemawire check --format sarif > schemawire.sarif   # for code scanning",
        "schemawire check --fail-on warning",
        "schemawire check --since origin/main   # a breaking change needs a major x-version",
    )
)(repository.check)
app.command(epilog=_examples("schemawire lint", "schemawire lint --format sarif > lint.sarif"))(
    repository.lint
)
app.command(
    epilog=_examples(
        "schemawire fmt schemas/tools/*.json",
        "schemawire fmt --check schemas/**/*.json   # in CI",
        'echo \'{"b":1,"a":[1,2]}\' | schemawire fmt -',
    )
)(toolbox.fmt)
app.command(
    epilog=_examples(
        "schemawire diff before.json after.json",
        "schemawire diff --json before.json after.json > patch.json",
        "schemawire diff --schema old/create_refund.json schemas/tools/create_refund.json",
        "schemawire diff --since origin/main --json",
    )
)(toolbox.diff)
app.command(
    epilog=_examples(
        "schemawire validate schemas/tools/create_refund.json call.json",
        "schemawire validate create_refund calls.jsonl --json",
        "schemawire validate https://example.com/schemas/tools/get_weather.json args.json",
    )
)(toolbox.validate)
app.command(
    "export",
    epilog=_examples(
        "schemawire export                        # every target into adapters/",
        "schemawire export --target openai.chat --strict",
        "schemawire export --check                # in CI: adapters match the schemas",
        "schemawire export --losses               # what each tool loses, per target",
        "schemawire export --verify --target anthropic --strict",
    ),
)(projections.export_command)
app.command(
    "import",
    epilog=_examples(
        "schemawire import --from mcp tools.json",
        "schemawire import --from openai tools.json --out schemas/tools --id-base https://acme.dev/",
    ),
)(projections.import_command)
app.command(
    "tools",
    epilog=_examples(
        "schemawire tools -- npx -y @modelcontextprotocol/server-everything stdio",
        "schemawire tools --json -- python -m my_server",
        "schemawire tools --target openai.chat --strict -- python -m my_server",
        "schemawire tools --url http://127.0.0.1:8000/mcp --token $TOKEN",
    ),
)(mcp.tools_command)
app.command(
    "call",
    epilog=_examples(
        'schemawire call echo \'{"message": "hi"}\' -- mcp-server-everything stdio',
        "schemawire call create_refund - --repo . --json -- python -m my_server < args.json",
        "schemawire call echo '{message: hi,}' --tolerant --url http://127.0.0.1:8000/mcp",
    ),
)(mcp.call_command)
app.command(
    "serve",
    epilog=_examples(
        "schemawire serve                              # this repository's tools, over stdio",
        "schemawire serve --http --port 8000 --token $TOKEN",
        "schemawire serve --upstream -- npx -y @modelcontextprotocol/server-memory",
        "schemawire serve --repo . --upstream -- python -m my_server   # canonical schemas",
        "schemawire serve --http --upstream-url http://127.0.0.1:3001/mcp",
    ),
)(mcp.serve_command)
app.command(
    "run",
    epilog=_examples(
        'schemawire run -m openai:gpt-4.1-mini --repo . "上海今天多少度？"',
        'schemawire run -m anthropic:claude-sonnet-4-5 "Refund A-1042" --mcp -- python -m srv',
        'schemawire run -m openai-compatible:http://127.0.0.1:11434/v1:qwen3 --repo . "hi"',
        'schemawire run -m script:conversation.json --repo . "上海今天多少度？" --json',
        'schemawire run --flow flows/refund.json "Refund 20 on order A-1042, charged twice"',
    ),
)(run.run_command)
app.command(
    "demo",
    epilog=_examples(
        "schemawire demo                          # offline: a scripted model",
        "schemawire demo --model openai:gpt-4.1-mini",
    ),
)(run.demo_command)
app.add_typer(flows.runs_app)
app.command("eval", epilog=_examples(*evals.EXAMPLES))(evals.eval_command)

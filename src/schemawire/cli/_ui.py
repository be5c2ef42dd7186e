"""``schemawire ui``: the local page, on 127.0.0.1 only, until Ctrl-C."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from schemawire.cli._output import guarded, stdout

__all__ = ["ui_command"]


@guarded
def ui_command(
    repo: Annotated[
        Path | None,
        typer.Option(
            "--repo",
            help="The schema repository the Toolbox and Tools pages use "
            "(default: this folder, when it holds a schemawire.toml).",
        ),
    ] = None,
    traces: Annotated[
        Path | None,
        typer.Option(
            "--traces",
            help="The folder of trace files to list (default: .schemawire/traces).",
        ),
    ] = None,
    port: Annotated[
        int, typer.Option("--port", help="The port on 127.0.0.1; 0 picks a free one.")
    ] = 0,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default browser.")
    ] = False,
    mcp_url: Annotated[
        str | None,
        typer.Option(
            "--mcp-url", help="A Streamable HTTP MCP server the Tools page may call tools on."
        ),
    ] = None,
    command: Annotated[
        list[str] | None,
        typer.Argument(
            help="A stdio MCP server's command line, after `--`, that the Tools page may call "
            "tools on.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve the local page on 127.0.0.1: every run under the traces folder, newest first;
    one run's hops as a waterfall; two runs side by side; the JSON toolbox; the repository's
    tools. The URL it prints carries this launch's token; nothing is uploaded.
    """
    import webbrowser

    from schemawire.errors import UsageError
    from schemawire.trace import TRACES
    from schemawire.ui import UiConfig
    from schemawire.ui.server import LocalServer

    if mcp_url and command:
        raise UsageError("give the MCP server's command after `--`, or --mcp-url (one of them)")
    if repo is not None and not repo.is_dir():
        raise UsageError(
            f"--repo {repo}: no such folder; give a schema repository's folder "
            "(`schemawire init --blank DIR` makes one)"
        )
    chosen_repo = repo if repo is not None else _this_folder_if_repository()
    config = UiConfig(
        traces=traces or TRACES,
        repo=chosen_repo,
        token="",
        mcp_url=mcp_url,
        mcp_command=tuple(command or ()),
    )
    server = LocalServer(config, port)
    stdout.print(f"[bold]schemawire ui[/] at {server.url}", soft_wrap=True, highlight=False)
    stdout.print(f"traces: {config.traces}   repository: {chosen_repo or '(none)'}", markup=False)
    server_shown = _redacted(mcp_url or " ".join(config.mcp_command))
    if server_shown:
        stdout.print(f"MCP server (Tools page): {server_shown}", markup=False)
    stdout.print("Ctrl-C stops it.", style="dim")
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn stops gracefully, then lets the Ctrl-C through
        stdout.print("stopped.", style="dim")


def _this_folder_if_repository() -> Path | None:
    here = Path.cwd()
    return here if (here / "schemawire.toml").is_file() else None


def _redacted(text: str) -> str:
    """``text`` as a trace would hold it: a command line can carry a key, a URL a password."""
    from schemawire.gates.redact import default_redactor

    return default_redactor().text(text)[0] if text else text

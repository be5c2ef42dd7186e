"""The options that reach an MCP server, the same in every command that takes them
(``tools``, ``call``, ``shortlist``): kept apart so that a command's help loads no other
command's module."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["Headers", "Timeout", "Token", "Url"]

Url = Annotated[
    str | None, typer.Option("--url", help="A Streamable HTTP server instead of a command.")
]
Headers = Annotated[
    list[str] | None,
    typer.Option("--header", "-H", help="An HTTP header, `Name: value` (repeatable)."),
]
Token = Annotated[
    str | None,
    typer.Option("--token", envvar="SCHEMAWIRE_MCP_TOKEN", help="Bearer token for --url."),
]
Timeout = Annotated[float, typer.Option("--timeout", help="Seconds any request may take.")]

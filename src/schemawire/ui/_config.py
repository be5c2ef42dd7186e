"""What one launch of the page shows (every page's module reads it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["UiConfig"]


@dataclass(frozen=True, slots=True)
class UiConfig:
    """What one launch of the page shows.

    Attributes:
        traces: the folder whose ``*.jsonl`` trace files the Runs page lists (and its
            subfolders).
        repo: the schema repository the Toolbox and Tools pages use, if any.
        token: this launch's token (`schemawire.ui._security.new_token`).
        mcp_url: a Streamable HTTP MCP server the Tools page calls tools on, if any.
        mcp_command: a stdio MCP server's command line the Tools page calls tools on (empty:
            none); at most one of ``mcp_url`` and ``mcp_command``.
        call_timeout: seconds one call from the Tools page may take.
    """

    traces: Path
    repo: Path | None
    token: str
    mcp_url: str | None = None
    mcp_command: tuple[str, ...] = ()
    call_timeout: float = 30.0

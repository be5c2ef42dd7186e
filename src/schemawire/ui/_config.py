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
    """

    traces: Path
    repo: Path | None
    token: str

"""``schemawire --version`` and ``schemawire --help`` without importing Typer.

Typer and rich take several times as long to import as the interpreter takes to start, and these
two answers need neither: the version is a constant, and the top-level help is the text Typer
renders for the app, stored beside this module at `WIDTH` columns, plain (`PLAIN_HELP`) and
with a terminal's colours (`COLOUR_HELP`). A test renders both with Typer and compares them with
the stored files, so they cannot drift from the app.

The stored text is shown only where Typer would render the same: UTF-8 output that is a pipe or
a file, or a colour terminal at least `WIDTH` columns wide, and none of the variables that
change how rich renders (`RENDERING_VARIABLES`) set. Anywhere else the caller lets Typer render.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from schemawire._version import __version__

__all__ = ["COLOUR_HELP", "PLAIN_HELP", "RENDERING_VARIABLES", "WIDTH", "answer", "stored_help"]

WIDTH = 80
"""The width the help is stored at: rich's width for output that is not a terminal."""

PLAIN_HELP = "toplevel_help.txt"
COLOUR_HELP = "toplevel_help.ansi"

RENDERING_VARIABLES = (
    "COLUMNS",
    "FORCE_COLOR",
    "GITHUB_ACTIONS",
    "JUPYTER_COLUMNS",
    "NO_COLOR",
    "PY_COLORS",
    "TERMINAL_WIDTH",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "_TYPER_FORCE_DISABLE_TERMINAL",
)
"""Environment variables that change the width, colours or terminal rich and Typer assume."""

_EXIT_OK, _EXIT_USAGE = 0, 2


def answer(args: Sequence[str], out: TextIO) -> int | None:
    """Answer ``schemawire --version``, ``--help`` or no arguments on ``out``, and return the
    exit status; None when ``args`` are anything else, or the help must be rendered here."""
    if list(args) == ["--version"]:
        out.write(f"schemawire {__version__}\n")
        return _EXIT_OK
    if list(args) in ([], ["--help"]):
        text = stored_help(out)
        if text is not None:
            out.write(text)
            # No arguments is a usage error that shows the help, as Typer exits for it.
            return _EXIT_OK if args else _EXIT_USAGE
    return None


def stored_help(out: TextIO) -> str | None:
    """The stored top-level help that Typer would render on ``out``; None when Typer would
    render it differently there."""
    if any(name in os.environ for name in RENDERING_VARIABLES):
        return None
    if (getattr(out, "encoding", None) or "").lower().replace("-", "") != "utf8":
        return None  # rich draws its boxes in ASCII
    if not _isatty(out):
        return _read(PLAIN_HELP)
    if _colour_terminal(out):
        return _read(COLOUR_HELP)
    return None


def _isatty(out: TextIO) -> bool:
    try:
        return out.isatty()
    except ValueError:  # closed
        return False


def _colour_terminal(out: TextIO) -> bool:
    """Whether ``out`` is a terminal where rich would use colours and at least `WIDTH` columns
    (on a wider one the stored help is `WIDTH` columns wide, where Typer would fill the line)."""
    if sys.platform == "win32" or os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return False
    try:
        return os.get_terminal_size(out.fileno()).columns >= WIDTH
    except (OSError, ValueError):
        return False


def _read(name: str) -> str:
    with open(os.path.join(os.path.dirname(__file__), name), encoding="utf-8") as file:
        return file.read()

"""The ``schemawire`` command line; `main` is the console script's entry point."""

from __future__ import annotations

__all__ = ["main"]


def main() -> None:
    """Run the ``schemawire`` command; the process exits with its status."""
    from schemawire.cli.app import app

    app(prog_name="schemawire")

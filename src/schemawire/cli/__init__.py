"""The ``schemawire`` command line; `main` is the console script's entry point.

``schemawire --version`` and ``schemawire --help`` answer before Typer is imported: the version
is a constant, and the top-level help is the text Typer renders for the app, stored beside this
module (`schemawire.cli._toplevel`). Everything else goes to the Typer app, which imports only
the command that runs.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Run the ``schemawire`` command; the process exits with its status."""
    from schemawire.cli._toplevel import answer

    answered = answer(sys.argv[1:], sys.stdout)
    if answered is not None:
        sys.exit(answered)
    from schemawire.cli._app import app

    app(prog_name="schemawire")

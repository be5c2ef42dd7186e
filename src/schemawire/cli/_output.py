"""How the command line speaks: rich text for people, JSON for machines, exit codes.

Exit codes: 0 all good, 1 findings (a check failed, an instance is invalid, files differ),
2 usage or input that cannot be read. Every command imports this module, so it imports nothing
a command may not need (how a check report is shown is `schemawire.cli._findings`).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from schemawire._json import dumps
from schemawire.errors import InputError, SchemawireError, UsageError

__all__ = [
    "EXIT_FINDINGS",
    "EXIT_INPUT",
    "EXIT_OK",
    "MachineJson",
    "fail",
    "guarded",
    "print_json",
    "print_stopped",
    "stderr",
    "stdout",
]

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2

# The --json option of every command whose JSON output says no more than that.
MachineJson = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]

# soft_wrap: a finding stays on one line however narrow the terminal, for grep and editors.
stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def guarded(command: Callable[_P, _R]) -> Callable[_P, _R]:
    """Turn input, usage, file-system and server errors into a message on stderr and exit
    code 2."""

    @functools.wraps(command)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return command(*args, **kwargs)
        except (InputError, UsageError) as error:
            fail(str(error))
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            fail(f"{where}{error.strerror or error}")
        except SchemawireError as error:  # a server that cannot be reached, for one
            fail(str(error))

    return wrapper


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    """Print ``message`` as an error on stderr and exit with ``code``."""
    stderr.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def print_json(value: Any, *, indent: bool = True) -> None:
    """Write ``value`` as JSON on stdout, without any markup."""
    sys.stdout.write(dumps(value, indent=indent) + "\n")


def print_stopped(trace: Any, error: str, *, json: bool, resume: str | None = None) -> NoReturn:
    """A run stopped by what could not be used (a model, a server, a store): the error and,
    once the run has begun, its trace (and, for a flow, the command that goes on); exit 2.

    Raises:
        typer.Exit: always, with exit status 2.
    """
    where = str(trace.path) if trace.written else None
    if json:
        print_json({"run_id": trace.run_id, "status": "failed", "error": error, "trace": where})
    stderr.print(f"[bold red]error:[/] {escape(error)}")
    if where is not None and not json:
        if resume is not None:
            stderr.print(f"run {escape(trace.run_id)} stopped; go on with: {escape(resume)}")
        stderr.print(f"[bold]trace:[/] {escape(where)}")
    raise typer.Exit(EXIT_INPUT)

"""``schemawire fmt``, ``diff`` and ``validate``: the local JSON toolbox on the command line."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from schemawire._json import JSONValue, dumps, load_file, loads
from schemawire.cli.output import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    guarded,
    print_json,
    stderr,
    stdout,
)
from schemawire.errors import InputError
from schemawire.schema.validator import CompiledSchema
from schemawire.toolbox import (
    Change,
    InstanceResult,
    diff_json,
    format_json,
    format_json_lines,
    load_schema,
    summarise_patch,
    validate_file,
    validate_text,
)

__all__ = ["diff", "fmt", "validate"]

_STDIN = "-"


@guarded
def fmt(
    files: Annotated[list[str], typer.Argument(help="JSON or JSON Lines files; - for stdin.")],
    check: Annotated[
        bool, typer.Option("--check", help="Change nothing; exit 1 if a file would change.")
    ] = False,
    to_stdout: Annotated[
        bool, typer.Option("--stdout", help="Print the result instead of rewriting the file.")
    ] = False,
) -> None:
    """Format JSON stably: two-space indentation, key order kept, non-ASCII left readable.

    Files are rewritten in place (only when they change). JSON Lines (.jsonl) get one compact
    value per line.
    """
    changed = unreadable = 0
    for name in files:
        try:
            original, formatted = _format(name)
        except (InputError, OSError) as error:
            stderr.print(f"[bold red]error:[/] {escape(_describe(error, name))}")
            unreadable += 1
            continue
        if check:
            if original != formatted.encode("utf-8"):
                stdout.print(f"would reformat {escape(name)}")
                changed += 1
        elif to_stdout or name == _STDIN:
            sys.stdout.write(formatted)
        elif original != formatted.encode("utf-8"):
            Path(name).write_text(formatted, encoding="utf-8")
            stderr.print(f"reformatted {escape(name)}")
    if unreadable:
        raise typer.Exit(EXIT_INPUT)
    if changed:
        raise typer.Exit(EXIT_FINDINGS)


def _format(name: str) -> tuple[bytes, str]:
    raw = sys.stdin.buffer.read() if name == _STDIN else Path(name).read_bytes()
    source = "<stdin>" if name == _STDIN else name
    if name.endswith(".jsonl"):
        return raw, format_json_lines(raw, source=source)
    return raw, format_json(raw, source=source)


def _describe(error: InputError | OSError, name: str) -> str:
    if isinstance(error, OSError):
        return f"{name}: cannot read: {error.strerror}"
    return str(error)


@guarded
def diff(
    old: Annotated[str, typer.Argument(help="The JSON file before; - for stdin.")],
    new: Annotated[str, typer.Argument(help="The JSON file after; - for stdin.")],
    json: Annotated[bool, typer.Option("--json", help="Print an RFC 6902 JSON Patch.")] = False,
) -> None:
    """Show what changed between two JSON documents: whitespace and key order do not count.

    Exit 0 when they are equal, 1 when they differ, 2 when one cannot be read.
    """
    if old == new == _STDIN:
        raise typer.BadParameter("only one of OLD and NEW can be - (stdin)")
    before, after = _read_json(old), _read_json(new)
    operations = diff_json(before, after)
    if json:
        print_json(operations)
    elif not operations:
        stdout.print("[green]no differences[/]")
    else:
        for change in summarise_patch(before, operations):
            stdout.print(_render_change(change))
    if operations:
        raise typer.Exit(EXIT_FINDINGS)


def _read_json(name: str) -> JSONValue:
    if name == _STDIN:
        return loads(sys.stdin.buffer.read(), source="<stdin>")
    try:
        return load_file(name)
    except OSError as error:
        raise typer.BadParameter(f"{name}: cannot read: {error.strerror}") from None


def _render_change(change: Change) -> str:
    where = escape(change.path or "/")
    old, new = escape(_short(change.old)), escape(_short(change.new))
    if change.op == "add":
        return f"[green]+ {where}: {new}[/]"
    if change.op == "remove":
        return f"[red]- {where}: {old}[/]"
    if change.op == "replace":
        return f"[yellow]~ {where}: {old} → {new}[/]"
    return f"[cyan]{change.op} {escape(change.source or '')} → {where}[/]"  # move, copy


def _short(value: Any, width: int = 100) -> str:
    text = dumps(value, indent=False)
    return text if len(text) <= width else text[: width - 1] + "…"


@guarded
def validate(
    schema: Annotated[
        str, typer.Argument(help="A schema file, or the $id, path or tool name of a schema.")
    ],
    instances: Annotated[
        list[Path], typer.Argument(help="JSON files (.jsonl: one per line); - for stdin.")
    ],
    json: Annotated[
        bool, typer.Option("--json", help="One JSON line per instance: source, valid, violations.")
    ] = False,
    repo: Annotated[
        Path | None,
        typer.Option(
            "--repo",
            help="The repository that resolves $id and $ref.",
            exists=True,
            file_okay=False,
        ),
    ] = None,
) -> None:
    """Validate instances against a schema, with every violation and where it is.

    Exit 0 when every instance is valid, 1 when one is not, 2 when one cannot be read.
    """
    compiled, _ = load_schema(schema, repository_dir=repo)
    invalid = unreadable = 0
    for path in instances:
        results = 0
        for result in _validate(compiled, path):
            results += 1
            invalid += not result.valid
            unreadable += result.error is not None
            if json:
                print_json(result.to_json(), indent=False)
            else:
                _render_result(result)
        if not results:
            stderr.print(f"[yellow]warning:[/] {escape(str(path))} holds no instance")
    if unreadable:
        raise typer.Exit(EXIT_INPUT)
    if invalid:
        raise typer.Exit(EXIT_FINDINGS)


def _validate(compiled: CompiledSchema, path: Path) -> Iterator[InstanceResult]:
    if str(path) == _STDIN:
        return validate_text(compiled, sys.stdin.buffer.read(), source="<stdin>")
    return validate_file(compiled, path)


def _render_result(result: InstanceResult) -> None:
    source = escape(result.source)
    if result.error is not None:
        stdout.print(f"[bold]{source}[/]: [bold red]unreadable[/] {escape(str(result.error))}")
    elif result.valid:
        stdout.print(f"[bold]{source}[/]: [green]valid[/]")
    else:
        stdout.print(f"[bold]{source}[/]: [bold red]invalid[/]")
        for violation in result.violations:
            pointer = escape(violation.pointer or "/")
            stdout.print(f"  {pointer} [dim]{violation.keyword}[/] {escape(violation.message)}")

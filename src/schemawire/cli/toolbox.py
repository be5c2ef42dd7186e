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
    fail,
    guarded,
    print_json,
    stderr,
    stdout,
)
from schemawire.errors import InputError
from schemawire.schema.diff import (
    ABSENT,
    ChangeSeverity,
    FileStatus,
    RepositoryDiff,
    Role,
    SchemaChange,
    SchemaDiff,
    Side,
    diff_files,
    diff_since,
)
from schemawire.schema.repository import Repository
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
    old: Annotated[
        str | None,
        typer.Argument(help="The JSON file before (- for stdin); with --since, the repository."),
    ] = None,
    new: Annotated[str | None, typer.Argument(help="The JSON file after; - for stdin.")] = None,
    json: Annotated[
        bool,
        typer.Option("--json", help="Print an RFC 6902 JSON Patch, or the classified changes."),
    ] = False,
    schema: Annotated[
        bool,
        typer.Option("--schema", help="Compare two schemas: classify every change."),
    ] = False,
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="REV", help="Compare every schema with git revision REV."),
    ] = None,
    role: Annotated[
        Role | None,
        typer.Option("--role", help="With --schema: what NEW describes (default: from its path)."),
    ] = None,
) -> None:
    """Show what changed between two JSON documents: whitespace and key order do not count.

    With --schema OLD NEW, or --since REV [DIR] for every schema of a repository against git
    revision REV, each change is classified: which side it breaks (the producers that send
    instances, the consumers that read them) and whether that is breaking for the file's role.

    Exit 0 when they are equal (no breaking change), 1 when they differ (a breaking change), 2
    when one cannot be read.
    """
    if since is not None:
        if schema or new is not None or role is not None:
            raise typer.BadParameter("--since takes one directory, without --schema or --role")
        _report_schema_changes(_changes_since(Path(old or "."), since), json=json)
    elif old is None or new is None:
        raise typer.BadParameter("give OLD and NEW, or --since REV")
    elif schema:
        if _STDIN in (old, new):
            raise typer.BadParameter("--schema reads files, not stdin")
        _report_schema_changes(diff_files(old, new, role=role), json=json)
    elif role is not None:
        raise typer.BadParameter("--role needs --schema")
    else:
        _report_json_changes(old, new, json=json)


def _report_json_changes(old: str, new: str, *, json: bool) -> None:
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


def _changes_since(directory: Path, rev: str) -> RepositoryDiff:
    if not directory.is_dir():
        fail(f"{directory} is not a directory")
    return diff_since(Repository.load(directory), rev)


def _report_schema_changes(changes: RepositoryDiff, *, json: bool) -> None:
    if json:
        print_json(changes.to_json())
    else:
        _render_schema_changes(changes)
    if changes.breaking:
        raise typer.Exit(EXIT_FINDINGS)


_ROLE_NAMES = {Role.INPUT: "tool input", Role.OUTPUT: "tool output", Role.HANDOFF: "handoff",
               Role.STATE: "state", Role.SHARED: "shared definitions"}  # fmt: skip
_SEVERITY_STYLE = {ChangeSeverity.BREAKING: "bold red", ChangeSeverity.COMPATIBLE: "yellow",
                   ChangeSeverity.ANNOTATION: "dim"}  # fmt: skip


def _render_schema_changes(changes: RepositoryDiff) -> None:
    """Each changed file, then one aligned row per change: severity, who it breaks, code,
    pointer, and the values before and after."""
    for file in changes.changed:
        stdout.print(_file_heading(file))
        rows = [_change_row(file.role, change) for change in file.changes]
        widths = [max(len(row[column]) for row in rows) for column in range(4)] if rows else []
        for change, row in zip(file.changes, rows, strict=True):
            cells = [escape(cell.ljust(width)) for cell, width in zip(row, widths, strict=False)]
            style = _SEVERITY_STYLE[change.severity]
            stdout.print(f"  [{style}]{cells[0]}[/]  {cells[1]}  [bold]{cells[2]}[/]  "
                         f"{cells[3]}  {escape(row[4])}".rstrip())  # fmt: skip
        _render_version(file)
    stdout.print(_schema_summary(changes))


def _file_heading(file: SchemaDiff) -> str:
    versions = f"x-version {file.old_version or '-'} → {file.new_version or '-'}"
    if file.status is FileStatus.ADDED:
        versions = f"added, x-version {file.new_version or '-'}"
    elif file.status is FileStatus.REMOVED:
        versions = "removed"
    elif file.status is FileStatus.UNREADABLE:
        versions = "not compared: one side is not a usable schema"
    return f"[bold]{escape(file.file)}[/] [dim]({_ROLE_NAMES[file.role]}; {versions})[/]"


def _change_row(role: Role, change: SchemaChange) -> tuple[str, str, str, str, str]:
    who = role.parties(change.breaks) if change.breaks is not Side.NONE else ""
    return (str(change.severity), who, change.code, change.pointer or "/", _values(change))


def _values(change: SchemaChange) -> str:
    if change.old is ABSENT and change.new is ABSENT:
        return ""
    if change.old is ABSENT:
        return f"+ {_short(change.new, 60)}"
    if change.new is ABSENT:
        return f"- {_short(change.old, 60)}"
    return f"{_short(change.old, 40)} → {_short(change.new, 40)}"


def _render_version(file: SchemaDiff) -> None:
    problem = file.version_problem
    if problem is None:
        return
    rule_id, wanted = problem
    if rule_id == "SW401":
        stdout.print(f'  [bold red]a breaking change needs a major bump:[/] set "x-version": '
                     f'"{wanted}"')  # fmt: skip
    else:
        stdout.print(f'  [yellow]changed without a version bump:[/] set "x-version": "{wanted}"')


def _schema_summary(changes: RepositoryDiff) -> str:
    counts = {severity: changes.count(severity) for severity in ChangeSeverity}
    if not changes.changed:
        return f"[green]no schema changes[/] in {_files(len(changes.files))}"
    breaking = counts[ChangeSeverity.BREAKING]
    shown = f"[bold red]{breaking} breaking[/]" if breaking else "[green]0 breaking[/]"
    return (f"{shown}, {counts[ChangeSeverity.COMPATIBLE]} compatible, "
            f"{counts[ChangeSeverity.ANNOTATION]} annotation-only changes in "
            f"{len(changes.changed)} of {_files(len(changes.files))}")  # fmt: skip


def _files(count: int) -> str:
    return f"{count} schema file" + ("" if count == 1 else "s")


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

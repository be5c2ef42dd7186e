"""``schemawire fmt``, ``diff`` and ``validate``: the local JSON toolbox on the command line."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from schemawire._json import DEFAULT_LIMITS, JSONValue, ParseLimits, dumps, load_file, loads
from schemawire._patch import PatchEdit, diff_json, edit_line, summarise_patch
from schemawire.application.json_toolbox import (
    Indent,
    InstanceResult,
    format_json,
    format_json_lines,
    load_schema,
    validate_file,
    validate_text,
)
from schemawire.cli._output import (
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
    indent: Annotated[
        str,
        typer.Option(
            "--indent", metavar="2|4|tab|0", help="Spaces per level, tab, or 0 for one line."
        ),
    ] = "2",
    sort_keys: Annotated[
        bool, typer.Option("--sort-keys", help="Sort every object's keys.")
    ] = False,
) -> None:
    """Format JSON stably: two-space indentation, key order kept, non-ASCII left readable.

    Files are rewritten in place (only when they change). JSON Lines (.jsonl) get one compact
    value per line. (The local page's Toolbox formats with the same options.)
    """
    if indent not in _INDENTS:
        raise typer.BadParameter(f"--indent is 2, 4, tab or 0, not {dumps(indent)}")
    changed = unreadable = 0
    for name in files:
        try:
            original, formatted = _format(name, _INDENTS[indent], sort_keys=sort_keys)
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


_INDENTS: dict[str, Indent] = {"2": 2, "4": 4, "tab": "\t", "0": None}


def _format(name: str, indent: Indent, *, sort_keys: bool) -> tuple[bytes, str]:
    raw = sys.stdin.buffer.read() if name == _STDIN else Path(name).read_bytes()
    source = "<stdin>" if name == _STDIN else name
    if name.endswith(".jsonl"):
        return raw, format_json_lines(raw, source=source, sort_keys=sort_keys)
    return raw, format_json(raw, source=source, indent=indent, sort_keys=sort_keys)


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
        for edit in summarise_patch(before, operations):
            stdout.print(_render_edit(edit))
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


_ROLE_NAMES = {
    Role.INPUT: "tool input",
    Role.OUTPUT: "tool output",
    Role.HANDOFF: "handoff",
    Role.STATE: "state",
    Role.SHARED: "shared definitions",
}
_SEVERITY_STYLE = {
    ChangeSeverity.BREAKING: "bold red",
    ChangeSeverity.COMPATIBLE: "yellow",
    ChangeSeverity.ANNOTATION: "dim",
}


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
            stdout.print(
                f"  [{style}]{cells[0]}[/]  {cells[1]}  [bold]{cells[2]}[/]  "
                f"{cells[3]}  {escape(row[4])}".rstrip()
            )
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
        stdout.print(
            f'  [bold red]a breaking change needs a major bump:[/] set "x-version": "{wanted}"'
        )
    else:
        stdout.print(f'  [yellow]changed without a version bump:[/] set "x-version": "{wanted}"')


def _schema_summary(changes: RepositoryDiff) -> str:
    counts = {severity: changes.count(severity) for severity in ChangeSeverity}
    if not changes.changed:
        return f"[green]no schema changes[/] in {_files(len(changes.files))}"
    breaking = counts[ChangeSeverity.BREAKING]
    shown = f"[bold red]{breaking} breaking[/]" if breaking else "[green]0 breaking[/]"
    return (
        f"{shown}, {counts[ChangeSeverity.COMPATIBLE]} compatible, "
        f"{counts[ChangeSeverity.ANNOTATION]} annotation-only changes in "
        f"{len(changes.changed)} of {_files(len(changes.files))}"
    )


def _files(count: int) -> str:
    return f"{count} schema file" + ("" if count == 1 else "s")


def _read_json(name: str) -> JSONValue:
    if name == _STDIN:
        return loads(sys.stdin.buffer.read(), source="<stdin>")
    try:
        return load_file(name)
    except OSError as error:
        raise typer.BadParameter(f"{name}: cannot read: {error.strerror}") from None


_EDIT_STYLES = {"add": "green", "remove": "red", "replace": "yellow"}


def _render_edit(edit: PatchEdit) -> str:
    """``edit`` as `edit_line` words it (the page shows the same line), in its colour."""
    style = _EDIT_STYLES.get(edit.op, "cyan")  # move, copy: cyan
    return f"[{style}]{escape(edit_line(edit))}[/]"


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
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", help="Print only the instances that fail, and the summary."),
    ] = False,
    max_bytes: Annotated[
        int | None,
        typer.Option(
            "--max-bytes",
            min=1,
            metavar="N",
            help="Accept JSON texts (a file, stdin, or a JSON Lines line) of up to N bytes, "
            "instead of 16 MiB, for this run.",
        ),
    ] = None,
) -> None:
    """Validate instances against a schema, with every violation and where it is.

    Text output ends with a summary: how many instances were valid, invalid and unreadable.

    Exit 0 when every instance is valid, 1 when one is not, 2 when one cannot be read.
    """
    compiled, _ = load_schema(schema, repository_dir=repo)
    limits = DEFAULT_LIMITS if max_bytes is None else replace(DEFAULT_LIMITS, max_bytes=max_bytes)
    printer = _JsonResults() if json else _TextResults(quiet=quiet)
    for path in instances:
        before = printer.tally.total
        for result in _validate(compiled, path, limits):
            printer.add(result)
        if printer.tally.total == before:
            printer.flush()
            stderr.print(f"[yellow]warning:[/] {escape(str(path))} holds no instance")
    printer.finish()
    if printer.tally.unreadable:
        raise typer.Exit(EXIT_INPUT)
    if printer.tally.invalid:
        raise typer.Exit(EXIT_FINDINGS)


def _validate(
    compiled: CompiledSchema, path: Path, limits: ParseLimits
) -> Iterator[InstanceResult]:
    if str(path) == _STDIN:
        raw = sys.stdin.buffer.read()
        return validate_text(compiled, raw, source="<stdin>", limits=limits)
    return validate_file(compiled, path, limits=limits)


@dataclass(slots=True)
class _Tally:
    """How many instances were valid, invalid (a schema violation) and unreadable."""

    valid: int = 0
    invalid: int = 0
    unreadable: int = 0

    @property
    def total(self) -> int:
        return self.valid + self.invalid + self.unreadable

    def count(self, result: InstanceResult) -> None:
        if result.error is not None:
            self.unreadable += 1
        elif result.valid:
            self.valid += 1
        else:
            self.invalid += 1


class _JsonResults:
    """One JSON line per instance, written as it comes."""

    def __init__(self) -> None:
        self.tally = _Tally()

    def add(self, result: InstanceResult) -> None:
        self.tally.count(result)
        sys.stdout.write(dumps(result.to_json(), indent=False) + "\n")

    def flush(self) -> None:
        sys.stdout.flush()

    def finish(self) -> None:
        self.flush()


class _TextResults:
    """Each instance's verdict for people, written in batches of plain strings: rich renders
    each style once (`_Styles`), since its cost is per call and a JSON Lines file can hold
    millions of instances. ``quiet`` leaves out the valid ones."""

    _BATCH = 2000

    def __init__(self, *, quiet: bool) -> None:
        self.tally = _Tally()
        self.quiet = quiet
        self.style = _Styles()
        self.lines: list[str] = []

    def add(self, result: InstanceResult) -> None:
        self.tally.count(result)
        if not (self.quiet and result.valid):
            self.lines.extend(_result_lines(result, self.style))
        if len(self.lines) >= self._BATCH:
            self.flush()

    def flush(self) -> None:
        if self.lines:
            sys.stdout.write("".join(line + "\n" for line in self.lines))
            sys.stdout.flush()
            self.lines.clear()

    def finish(self) -> None:
        self.flush()
        stdout.print(_validation_summary(self.tally))


class _Styles:
    """The escape codes rich writes on stdout around a text of each style: none off a terminal
    or with NO_COLOR, so the words are the same everywhere."""

    def __init__(self) -> None:
        self.codes = {
            style: self._rendered(style) for style in ("bold", "bold red", "green", "dim")
        }

    def __call__(self, text: str, style: str | None = None) -> str:
        if style is None:
            return text
        start, end = self.codes[style]
        return f"{start}{text}{end}"

    @staticmethod
    def _rendered(style: str) -> tuple[str, str]:
        with stdout.capture() as captured:
            stdout.print(f"[{style}]\x00[/]", end="")
        start, _, end = captured.get().partition("\x00")
        return start, end


def _result_lines(result: InstanceResult, style: _Styles) -> Iterator[str]:
    """The lines that show ``result``."""
    source = style(result.source, "bold")
    if result.error is not None:
        yield f"{source}: {style('unreadable', 'bold red')} {result.error}"
    elif result.valid:
        yield f"{source}: {style('valid', 'green')}"
    else:
        yield f"{source}: {style('invalid', 'bold red')}"
        for violation in result.violations:
            keyword = style(violation.keyword, "dim")
            yield f"  {violation.pointer or '/'} {keyword} {violation.message}"


def _validation_summary(tally: _Tally) -> str:
    instances = f"{tally.total} instance" + ("" if tally.total == 1 else "s")
    invalid = f"[bold red]{tally.invalid} invalid[/]" if tally.invalid else "0 invalid"
    text = f"{instances}: [green]{tally.valid} valid[/], {invalid}"
    if tally.unreadable:
        text += f", [bold red]{tally.unreadable} unreadable[/]"
    return text

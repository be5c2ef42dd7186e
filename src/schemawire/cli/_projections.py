"""``schemawire export`` and ``import``: projections out of the repository, tools into it."""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape
from rich.table import Table

from schemawire._json import dumps, load_file, loads, quoted
from schemawire.cli._output import (
    EXIT_FINDINGS,
    MachineJson,
    fail,
    guarded,
    print_json,
    stderr,
    stdout,
)
from schemawire.project import TARGETS
from schemawire.project.checkers import Problem, check_payload, check_request
from schemawire.project.export import (
    DEFAULT_OPTIONS,
    AdapterStatus,
    Export,
    adapter_status,
    export,
    exports_to_refresh,
    write,
    write_adapter,
)
from schemawire.project.importers import ImportedTool, import_tools
from schemawire.schema._breakage import unusable_files
from schemawire.schema.config import Config, load_config
from schemawire.schema.repository import Repository
from schemawire.types import Projection

__all__ = ["export_command", "import_command"]

_SOURCES: dict[str, Literal["mcp", "openai", "anthropic"]] = {
    "mcp": "mcp",
    "openai": "openai",
    "anthropic": "anthropic",
}
Directory = Annotated[
    Path, typer.Argument(help="A directory in the repository (its root is found upwards).")
]


# The options of ``export``.
TargetName = Annotated[
    str, typer.Option("--target", "-t", help=f"all, or one of: {', '.join(TARGETS)}.")
]
Strict = Annotated[
    bool | None,
    typer.Option("--strict/--no-strict", help="Strict mode (openai.*, anthropic)."),
]
OpenApi = Annotated[
    bool, typer.Option("--openapi", help="Gemini: the OpenAPI-subset parameters form.")
]
McpVersion = Annotated[
    str | None, typer.Option("--mcp-version", help="MCP protocol version of the tools.")
]
Out = Annotated[
    Path | None, typer.Option("--out", help="Where adapters go (default: \\[export] adapters).")
]
Check = Annotated[
    bool,
    typer.Option(
        "--check",
        help=(
            "Write nothing; exit 1 if a committed adapter differs from a fresh export, "
            "cannot be compared, or there is none."
        ),
    ),
]
Losses = Annotated[bool, typer.Option("--losses", help="Print what each tool loses per target.")]
Verify = Annotated[
    bool, typer.Option("--verify", help="Check each payload against the target's rules.")
]
Refresh = Annotated[
    bool,
    typer.Option(
        "--refresh",
        help="Write every adapter that exists again, each with the target and options it "
        "was written with.",
    ),
]


@guarded
def export_command(
    directory: Directory = Path("."),
    target: TargetName = "all",
    strict: Strict = None,
    openapi: OpenApi = False,
    version: McpVersion = None,
    out: Out = None,
    check: Check = False,
    losses: Losses = False,
    verify: Verify = False,
    refresh: Refresh = False,
    json: MachineJson = False,
) -> None:
    """Project every schema to provider formats, MCP and A2A, and write the adapters.

    Each target gets one file, marked as generated, under adapters/ (or --out). --check
    compares the committed files with a fresh export, as `schemawire check` does; --refresh
    writes the files that exist again, whatever options made them.

    A schema that cannot be used (it cannot be read or compiled) would be left out of every
    adapter: nothing is written then (exit 2), and schemawire check says what to fix.
    """
    repository = Repository.load(directory)
    folder = out or repository.root / repository.config.adapters
    if check:
        _check(repository, folder, json)
        return
    if refresh:
        exports = _refresh(repository, folder, json)
    else:
        exports = [export(repository, t, **o) for t, o in _plan(target, strict, openapi, version)]
        _show_or_write(repository, exports, folder, losses=losses, verify=verify, json=json)
    _refuse_blocked(exports)


def _show_or_write(
    repository: Repository,
    exports: list[Export],
    folder: Path,
    *,
    losses: bool,
    verify: bool,
    json: bool,
) -> None:
    """What ``--losses`` or ``--verify`` asks to see; without them, the adapters written."""
    if losses:
        _show_losses(exports, json)
    elif verify:
        _verify(exports, json)
    else:
        _refuse_unusable(repository, exports)
        _write(exports, folder, repository.root, json)


def _refuse_blocked(exports: list[Export]) -> None:
    """Exit 1 when a target would refuse a payload (a per-request limit is exceeded)."""
    if any(item.catalogue.blocked for item in exports):
        stderr.print(
            "[bold red]error:[/] a target would refuse a payload (LIMIT_EXCEEDED); see --losses"
        )
        raise typer.Exit(EXIT_FINDINGS)


def _plan(
    target: str, strict: bool | None, openapi: bool, version: str | None
) -> list[tuple[str, dict[str, Any]]]:
    targets = list(DEFAULT_OPTIONS) if target == "all" else [target]
    plan = []
    for name in targets:
        if name not in TARGETS:
            fail(f"unknown target {quoted(name)}; targets: all, {', '.join(TARGETS)}")
        options = dict(DEFAULT_OPTIONS[name]) if target == "all" else {}
        takes = TARGETS[name].options
        if strict is not None and "strict" in takes:
            options["strict"] = strict
        if openapi and "openapi" in takes:
            options["openapi"] = True
        if version and "version" in takes:
            options["version"] = version
        plan.append((name, options))
    return plan


def _refuse_unusable(repository: Repository, exports: list[Export]) -> None:
    """Exit 2 before anything is written when a schema an export needs cannot be used."""
    kinds = {kind for item in exports for kind in TARGETS[item.target].kinds}
    unusable = [v for v in unusable_files(repository).values() if v.file.kind in kinds]
    if unusable:
        first = unusable[0]
        more = f" (and {len(unusable) - 1} more)" if len(unusable) > 1 else ""
        fail(
            f"{first.file.relpath}{more} cannot be used ({first.cause.rule.id} in "
            f"{first.cause.file}), so every adapter would leave it out: nothing was written; "
            "run schemawire check to see what to fix"
        )


def _refresh(repository: Repository, folder: Path, json: bool) -> list[Export]:
    pairs = exports_to_refresh(repository, folder) if folder.is_dir() else []
    if not pairs:
        fail(f"no adapter to refresh in {folder}; run schemawire export to write them")
    exports = [item for _, item in pairs]
    _refuse_unusable(repository, exports)
    for path, item in pairs:
        write_adapter(path, item)
    _report_written(exports, [path for path, _ in pairs], repository.root, json)
    return exports


def _write(exports: list[Export], folder: Path, root: Path, json: bool) -> None:
    _report_written(exports, write(exports, folder), root, json)


def _report_written(exports: list[Export], written: list[Path], root: Path, json: bool) -> None:
    if json:
        print_json(
            [
                {
                    "target": e.target,
                    "options": e.options,
                    "file": str(p),
                    "tools": len(e.catalogue.projections),
                    "losses": sum(len(x.losses) for x in e.catalogue.projections),
                }
                for e, p in zip(exports, written, strict=True)
            ]
        )
        return
    table = Table("adapter", "tools", "losses", "lossless tools", box=None)
    for item, path in zip(exports, written, strict=True):
        projections = item.catalogue.projections
        table.add_row(
            escape(_shown(path, root)),
            str(len(projections)),
            str(sum(len(p.losses) for p in projections)),
            str(sum(p.lossless for p in projections)),
        )
    stdout.print(table)


def _check(repository: Repository, folder: Path, json: bool) -> None:
    """Exit 1 when a committed adapter is not what a fresh export writes, when one could not be
    compared (a schema it is made from cannot be used), or when there is none to compare: a
    check that compared nothing is never green."""
    unusable = unusable_files(repository)
    statuses = (
        list(adapter_status(repository, folder, unusable=unusable)) if folder.is_dir() else []
    )
    failing = [status for status in statuses if status.stale or status.not_compared]
    if json:
        print_json([_status_json(status) for status in failing])
    else:
        _print_statuses(failing)
    if not statuses:
        shown = _shown(folder, repository.root)
        fail(
            f"no adapter in {shown}/ to compare with a fresh export; "
            "run schemawire export to write them",
            EXIT_FINDINGS,
        )
    if failing:
        raise typer.Exit(EXIT_FINDINGS)
    if not json:
        stdout.print(f"[green]adapters are current[/] ({len(statuses)} files)")


def _status_json(status: AdapterStatus) -> dict[str, Any]:
    document: dict[str, Any] = {
        "file": status.file,
        "detail": status.detail,
        "patch": list(status.patch),
    }
    if status.not_compared:
        document["not_compared"] = status.not_compared
    return document


def _print_statuses(statuses: list[AdapterStatus]) -> None:
    """The stale adapters with their patches, then those not compared, grouped by why."""
    blocked: dict[str, list[str]] = {}
    for status in statuses:
        if status.not_compared:
            blocked.setdefault(status.not_compared, []).append(status.file)
            continue
        stdout.print(f"[bold]{escape(status.file)}[/]: [red]{escape(status.detail)}[/]")
        for operation in status.patch[:20]:
            stdout.print(f"  {escape(dumps(operation, indent=False))}")
    for why, files in blocked.items():
        count = f"{len(files)} adapters" if len(files) > 1 else "1 adapter"
        stdout.print(
            f"[bold]{count} not compared[/]: [red]{escape(why)}[/]; "
            "run schemawire check to see what to fix"
        )
        for file in files:
            stdout.print(f"  {escape(file)}")


def _show_losses(exports: list[Export], json: bool) -> None:
    if json:
        print_json(
            [
                {
                    "target": e.target,
                    "options": e.options,
                    "tool": p.name,
                    "losses": [loss.to_json() for loss in p.losses],
                }
                for e in exports
                for p in e.catalogue.projections
            ]
        )
        return
    table = Table("tool", "adapter", "losses", box=None)
    for item in exports:
        for projection in item.catalogue.projections:
            table.add_row(
                escape(projection.name),
                escape(item.file_name.removesuffix(".json")),
                _loss_summary(projection),
            )
    stdout.print(table)


def _loss_summary(projection: Projection) -> str:
    if projection.lossless:
        return "[green]lossless[/]"
    codes = Counter(loss.code for loss in projection.losses)
    text = ", ".join(f"{code} x{n}" if n > 1 else code for code, n in codes.items())
    return f"[red]{escape(text)}[/]" if projection.blocked else escape(text)


def _verify(exports: list[Export], json: bool) -> None:
    problems = [problem for item in exports for problem in _problems(item)]
    if json:
        print_json(
            [
                {"target": t, "tool": n, "pointer": p.pointer, "rule": p.rule, "message": p.message}
                for t, n, p in problems
            ]
        )
    for target, name, problem in [] if json else problems:
        stdout.print(
            f"[bold]{escape(target)}[/] {escape(name)}#{escape(problem.pointer)}: "
            f"[red]{escape(problem.rule)}[/] {escape(problem.message)}"
        )
    if not problems and not json:
        stdout.print(f"[green]every payload follows its target's rules[/] ({len(exports)} targets)")
    if problems:
        raise typer.Exit(EXIT_FINDINGS)


def _problems(item: Export) -> list[tuple[str, str, Problem]]:
    """What the target's checker finds in each payload and in the request as a whole."""
    options = {"version": item.options["version"]} if "version" in item.options else {}
    catalogue = item.catalogue
    if item.target == "a2a":  # one Agent Card holds every skill
        return [(item.target, "(card)", p) for p in check_payload("a2a", catalogue.payload)]
    found = [
        (item.target, projection.name, problem)
        for projection in catalogue.projections
        for problem in check_payload(item.target, projection.payload, **options)
    ]
    if "tools" in TARGETS[item.target].kinds:  # a format goes alone into its request
        payloads = [p.payload for p in catalogue.projections]
        found += [
            (item.target, "(request)", p) for p in check_request(item.target, payloads, **options)
        ]
    return found


@guarded
def import_command(
    source: Annotated[str, typer.Option("--from", help="mcp, openai or anthropic.")],
    file: Annotated[Path, typer.Argument(help="A JSON file of tools (- for stdin).")],
    out: Annotated[Path, typer.Option("--out", help="Where the schema files go.")] = Path(
        "schemas/tools"
    ),
    id_base: Annotated[
        str, typer.Option("--id-base", help="$id prefix (a URI ending in /).")
    ] = "https://example.com/",
    version: Annotated[str, typer.Option("--version", help="x-version of every schema.")] = "1.0.0",
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")] = False,
    json: MachineJson = False,
) -> None:
    """Import tools from an MCP tools/list result, an OpenAI tools array or Anthropic tools.

    Each tool becomes <name>.json (and <name>.output.json) under --out, with $id and
    x-version; every change the import made is listed.
    """
    if source not in _SOURCES:
        fail(f"--from must be one of {', '.join(_SOURCES)}, not {quoted(source)}")
    tools = load_file(file) if str(file) != "-" else loads(sys.stdin.buffer.read(), source="-")
    imported = import_tools(_SOURCES[source], tools, id_base=id_base, version=version)
    files = [(out / f"{t.file_name}.json", t.schema) for t in imported]
    files += [
        (out / f"{t.file_name}.output.json", t.output_schema)
        for t in imported
        if t.output_schema is not None
    ]
    clashes = [path for path, _ in files if path.exists()]
    if clashes and not force:
        fail(f"{clashes[0]} exists (and {len(clashes) - 1} more); use --force to overwrite")
    out.mkdir(parents=True, exist_ok=True)
    for path, schema in files:
        path.write_text(dumps(schema) + "\n", encoding="utf-8")
    _report_import(imported, out, json)


def _report_import(imported: tuple[ImportedTool, ...], out: Path, json: bool) -> None:
    if json:
        print_json(
            [
                {
                    "name": t.name,
                    "file": f"{t.file_name}.json",
                    "notes": [
                        {
                            "pointer": n.pointer,
                            "code": str(n.code),
                            "detail": n.detail,
                            "document": n.document,
                        }
                        for n in t.notes
                    ],
                }
                for t in imported
            ]
        )
        return
    for tool in imported:
        stdout.print(f"[bold]{escape(tool.name)}[/] -> {escape(str(out / tool.file_name))}.json")
        for note in tool.notes:
            stdout.print(
                f"  [dim]{escape(note.document)}#{escape(note.pointer)}[/] "
                f"{escape(str(note.code))}: {escape(note.detail)}"
            )
    stdout.print(f"imported {len(imported)} tools; next: {escape(_next_step(out))}")


def _next_step(out: Path) -> str:
    """The command that checks what was just written to ``out``, or what to do first when no
    repository would find the files there."""
    root = _repository_of(out)
    if root is None:
        return (
            f"{out} is no repository's tools folder, so schemawire check would not find them: "
            f"import into <repository>/schemas/tools, or set tools = "
            f"{dumps(str(out), indent=False)} under [repository] in schemawire.toml"
        )
    shown = os.path.relpath(root, Path.cwd())
    return "schemawire check" if shown == "." else f"schemawire check {shown}"


def _repository_of(out: Path) -> Path | None:
    """The root of the repository whose tools folder is ``out``: by its settings, or by the
    default layout (``<root>/schemas/tools``) when there are none."""
    config = load_config(out)
    folder = out.resolve()
    if (config.root / config.tools).resolve() == folder:
        return config.root
    default = Path(Config(root=folder).tools)
    if config.source is None and folder.parts[-len(default.parts) :] == default.parts:
        return folder.parents[len(default.parts) - 1]
    return None


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)

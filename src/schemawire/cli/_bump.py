"""``schemawire bump``: set the ``x-version``s that ``schemawire check --since REV`` asks for."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from schemawire.cli._output import MachineJson, fail, guarded, print_json, stdout

__all__ = ["bump_command"]


@guarded
def bump_command(
    directory: Annotated[
        Path, typer.Argument(help="A directory in the repository (its root is found upwards).")
    ] = Path("."),
    since: Annotated[
        str,
        typer.Option(
            "--since", metavar="REV", help="The git revision to compare with, as check --since."
        ),
    ] = "HEAD",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would change; write nothing.")
    ] = False,
    json: MachineJson = False,
) -> None:
    """Bump each schema's x-version as check --since REV asks: major for a breaking change,
    minor for an additive one, patch for annotations only.

    A shared definition's change shows in every schema that references it, so each of them is
    bumped. Only the x-version string is rewritten; every other byte of a file stays. Afterwards
    schemawire check --since REV passes the version rules (SW401, SW402).

    Exit 0 when done (or nothing needed a bump), 2 when REV or the repository cannot be read.
    """
    from schemawire.application._bump import bump_versions

    if not directory.is_dir():
        fail(f"{directory} is not a directory")
    report = bump_versions(directory, since, dry_run=dry_run)
    if json:
        print_json(report.to_json())
        return
    if not report.bumps:
        stdout.print(f"every x-version is already what check --since {escape(since)} asks for")
        return
    verb = "would set" if dry_run else "set"
    for bump in report.bumps:
        why = f"{bump.breaking} breaking" if bump.rule == "SW401" else "changed"
        stdout.print(
            f"[bold]{escape(bump.file)}[/]: {verb} x-version {escape(bump.current)} → "
            f"[green]{escape(bump.new)}[/] [dim]({bump.rule}: {why} since {escape(since)}, "
            f"was {escape(bump.old)} there)[/]"
        )
    if dry_run:
        stdout.print(f"{len(report.bumps)} to bump; run without --dry-run to write them")
    else:
        stdout.print(f"bumped {len(report.bumps)}; next: schemawire check --since {escape(since)}")

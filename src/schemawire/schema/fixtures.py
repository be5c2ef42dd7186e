"""Fixtures: stored examples that must pass or fail their schema, checked in CI.

    fixtures/<kind>/<name>/valid/*.json       each must satisfy the schema
    fixtures/<kind>/<name>/invalid/*.json     each must break it
    fixtures/<kind>/<name>/invalid/x.expect.json
        [{"pointer": "/amount", "keyword": "exclusiveMinimum"}]
        x.json must break the schema for exactly these reasons: each listed violation occurs,
        and no other does.

``<kind>`` is ``tools``, ``handoffs``, ``state`` or ``common``; ``<name>`` is the schema's file stem
(``create_refund.output`` for a tool's output schema). A ``.jsonl`` file holds one fixture per line;
its ``.expect.json`` applies to every line.

A file anywhere else under the fixtures folder would never run, so it is a finding (SW207), with
the folder it was probably meant for. The fixtures of a schema that cannot be used (it cannot be
read or compiled) are not run: they are counted and listed as such, never dropped from the count.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemawire._json import JSONValue, load_file, loads_lines
from schemawire._jsonpos import nearest_offset, pointer_offsets, position
from schemawire.errors import JSONError, SchemaError
from schemawire.schema._files import json_files, linked_outside, relpath
from schemawire.schema._repository_checks import unreadable
from schemawire.schema.repository import Repository
from schemawire.schema.rules import Finding, rule
from schemawire.schema.schema_file import KINDS, SchemaFile
from schemawire.schema.validator import CompiledSchema
from schemawire.types import Violation

__all__ = ["FixtureReport", "NotRun", "check_fixtures"]

_EXPECT_SUFFIX = ".expect.json"
_OUTCOMES = ("valid", "invalid")


@dataclass(frozen=True, slots=True)
class NotRun:
    """A fixture file that was not run, because its schema cannot be used.

    Attributes:
        file: the fixture file, relative to the repository root.
        schema: the schema file it belongs to.
        instances: how many instances it holds (one, or a JSON Lines file's lines).
    """

    file: str
    schema: str
    instances: int

    def to_json(self) -> dict[str, Any]:
        """``{"file", "schema", "instances"}``."""
        return {"file": self.file, "schema": self.schema, "instances": self.instances}


@dataclass(frozen=True, slots=True)
class FixtureReport:
    """What the fixtures showed: how many ran and passed, which were not run, and every
    finding."""

    checked: int
    passed: int
    findings: tuple[Finding, ...]
    not_run: tuple[NotRun, ...] = ()

    @property
    def not_run_instances(self) -> int:
        """How many instances were not run."""
        return sum(item.instances for item in self.not_run)


@dataclass(frozen=True, slots=True)
class _Instance:
    relpath: str
    line: int | None
    value: JSONValue
    text: str | None  # the line's own text, for JSON Lines, to place findings on it


@dataclass(frozen=True, slots=True)
class _Fixture:
    kind: str
    name: str
    outcome: str
    path: Path
    may_read: bool


def check_fixtures(repository: Repository, *, unusable: Collection[str] = ()) -> FixtureReport:
    """Run every fixture of ``repository`` against its schema.

    The fixtures of a schema that does not compile, or whose path is in ``unusable``, are not
    run: the report lists them in ``not_run``.
    """
    run = _Run(repository, unusable)
    fixtures, misplaced = _walk(repository)
    folders: dict[tuple[str, str], list[_Fixture]] = {}
    for fixture in fixtures:
        folders.setdefault((fixture.kind, fixture.name), []).append(fixture)
    for (kind, name), in_folder in folders.items():
        run.check_folder(kind, name, in_folder)
    run.findings.extend(_misplaced(repository, misplaced))
    run.findings.extend(_missing_fixtures(repository, run.covered))
    return FixtureReport(run.checked, run.passed, tuple(run.findings), tuple(run.not_run))


class _Run:
    """Counts and findings while fixtures are checked."""

    def __init__(self, repository: Repository, unusable: Collection[str]) -> None:
        self.repository = repository
        self.unusable = unusable
        self.checked = 0
        self.passed = 0
        self.findings: list[Finding] = []
        self.not_run: list[NotRun] = []
        self.covered: set[tuple[str, str, str]] = set()
        self.schemas = {(f.kind, f.name): f for f in reversed(repository.files)}

    def check_folder(self, kind: str, name: str, fixtures: list[_Fixture]) -> None:
        schema = self.schemas.get((kind, name))
        if schema is None:
            self.findings.append(_without_schema(self.repository, kind, name))
            return
        validator = None if schema.relpath in self.unusable else _validator(self.repository, schema)
        for fixture in fixtures:
            self.covered.add((kind, name, fixture.outcome))
            relative = relpath(self.repository.root, fixture.path)
            if not fixture.may_read:
                self.findings.append(unreadable(relative, linked_outside()))
            elif validator is None:  # the schema cannot be used, and its findings say why
                self.not_run.append(NotRun(relative, schema.relpath, _count(fixture.path)))
            else:
                self.check_file(schema, validator, fixture.path, fixture.outcome)

    def check_file(
        self, schema: SchemaFile, validator: CompiledSchema, path: Path, outcome: str
    ) -> None:
        expected = _expectations(self.repository, path) if outcome == "invalid" else None
        if isinstance(expected, Finding):
            self.findings.append(expected)
            expected = None
        against = f"(against {schema.relpath})"
        for instance in _instances(self.repository, path):
            if isinstance(instance, Finding):
                self.findings.append(instance)
                continue
            violations = validator.violations(instance.value)
            found = list(_judge(violations, instance, outcome, expected, against))
            self.checked += 1
            self.passed += not found
            self.findings.extend(found)


def _walk(repository: Repository) -> tuple[list[_Fixture], list[list[str]]]:
    """Every fixture file, and the parts (relative to the fixtures folder) of every JSON file
    that is not where a fixture must be, from one walk (linked folders not followed)."""
    base = repository.root / repository.config.fixtures
    fixtures: list[_Fixture] = []
    misplaced: list[list[str]] = []
    for path, may_read in json_files(repository.root, base, suffixes=(".json", ".jsonl")):
        parts = relpath(base, path).split("/")
        if len(parts) != 4 or parts[0] not in KINDS or parts[2] not in _OUTCOMES:
            misplaced.append(parts)  # not in a fixtures/<kind>/<name>/<valid|invalid>/ folder
        elif not parts[3].endswith(_EXPECT_SUFFIX):
            fixtures.append(_Fixture(parts[0], parts[1], parts[2], path, may_read))
    return fixtures, misplaced


def _count(path: Path) -> int:
    """How many instances a fixture file holds, without reading them as JSON."""
    if path.suffix != ".jsonl":
        return 1
    try:
        return sum(1 for line in path.read_bytes().split(b"\n") if line.strip(b" \t\r"))
    except OSError:
        return 0


def _validator(repository: Repository, schema: SchemaFile) -> CompiledSchema | None:
    try:
        return repository.validator(schema)
    except SchemaError:
        return None


def _relpath(repository: Repository, path: Path) -> str:
    return relpath(repository.root, path)


def _instances(repository: Repository, path: Path) -> Iterator[_Instance | Finding]:
    relative = _relpath(repository, path)
    try:
        if path.suffix == ".jsonl":
            yield from _lines(path, relative)
        else:
            yield _Instance(relative, None, load_file(path, source=relative), None)
    except (JSONError, OSError) as error:
        yield unreadable(relative, error)


def _lines(path: Path, relative: str) -> Iterator[_Instance | Finding]:
    raw = path.read_bytes().removeprefix(b"\xef\xbb\xbf")  # a byte order mark is not on the line
    texts = raw.split(b"\n")
    for line in loads_lines(raw, source=relative):
        if line.error is not None:
            yield unreadable(relative, line.error)
        else:
            text = texts[line.number - 1].decode("utf-8")
            yield _Instance(relative, line.number, line.value, text)


def _judge(
    violations: tuple[Violation, ...],
    instance: _Instance,
    outcome: str,
    expected: set[tuple[str, str]] | None,
    against: str,
) -> Iterator[Finding]:
    if outcome == "valid":
        for violation in violations:
            yield _at(instance, "SW201", violation.pointer, f"{violation.message} {against}")
    elif not violations:
        yield _at(instance, "SW202", "", f"satisfies the schema it should break {against}")
    elif expected is not None:
        yield from _compare(instance, violations, expected, against)


def _compare(
    instance: _Instance,
    violations: tuple[Violation, ...],
    expected: set[tuple[str, str]],
    against: str,
) -> Iterator[Finding]:
    actual = {(v.pointer, v.keyword): v for v in violations}
    for (pointer, keyword), violation in actual.items():
        if (pointer, keyword) not in expected:
            message = f"also fails {keyword}: {violation.message} {against}"
            yield _at(instance, "SW203", pointer, message)
    for pointer, keyword in sorted(expected - actual.keys()):
        yield _at(instance, "SW203", pointer, f"expected a {keyword} violation here {against}")


def _expectations(repository: Repository, fixture: Path) -> set[tuple[str, str]] | Finding | None:
    path = fixture.with_name(fixture.name.removesuffix(fixture.suffix) + _EXPECT_SUFFIX)
    if not path.is_file():
        return None
    relative = _relpath(repository, path)
    try:
        document = load_file(path, source=relative)
    except JSONError as error:
        return unreadable(relative, error)
    entries = document if isinstance(document, list) else [document]
    if not all(_is_expectation(entry) for entry in entries):
        message = "each entry needs a string pointer and keyword"
        hint = '[{"pointer": "/amount", "keyword": "minimum"}]'
        return Finding(rule("SW206"), relative, "", message, hint)
    return {
        (str(entry["pointer"]), str(entry["keyword"]))
        for entry in entries
        if isinstance(entry, dict)
    }


def _is_expectation(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("pointer"), str)
        and isinstance(entry.get("keyword"), str)
        and set(entry) <= {"pointer", "keyword", "message"}
    )


def _at(instance: _Instance, rule_id: str, pointer: str, message: str) -> Finding:
    finding = Finding(rule(rule_id), instance.relpath, pointer, message)
    if instance.line is None or instance.text is None:
        return finding
    offset = nearest_offset(pointer_offsets(instance.text), pointer)
    return finding.at(instance.line, position(instance.text, offset)[1])


def _without_schema(repository: Repository, kind: str, name: str) -> Finding:
    folder = repository.config.fixtures
    meant = _folder_meant(repository, kind, name)
    hint = "rename the folder after the schema's file stem"
    if (meant.kind, meant.name) != (kind, name):
        hint = f"did you mean {folder}/{meant.kind}/{meant.name}/?"
    message = f"no {kind} schema is named {name}, so these fixtures are never run"
    return Finding(rule("SW204"), f"{folder}/{kind}/{name}", "", message, hint)


@dataclass(frozen=True, slots=True)
class _Folder:
    """Where a fixture was probably meant to be: a kind, a schema name, an outcome."""

    kind: str
    name: str
    outcome: str = "valid"


def _closest(word: str, choices: Collection[str]) -> str | None:
    """The choice ``word`` most probably meant: the same but for case, else the nearest."""
    same = [choice for choice in choices if choice.lower() == word.lower()]
    close = same or difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def _folder_meant(repository: Repository, kind: str, name: str, outcome: str = "valid") -> _Folder:
    """The folder a fixture under ``kind``/``name``/``outcome`` was probably meant for."""
    kind = _closest(kind, KINDS) or kind
    names = {f.name for f in repository.files if f.kind == kind}
    if name not in names:
        other = next((f.kind for f in repository.files if f.name == name), None)
        kind, name = (other, name) if other else (kind, _closest(name, names) or name)
    return _Folder(kind, name, _closest(outcome, _OUTCOMES) or outcome)


def _misplaced(repository: Repository, misplaced: list[list[str]]) -> Iterator[Finding]:
    """SW207 once for each folder whose name is wrong (with how many files it holds), and once
    for each file that sits at the wrong depth."""
    grouped: dict[str, tuple[str, str | None, int]] = {}
    for parts in misplaced:
        where, message, hint = _misplacement(repository, parts)
        _, _, count = grouped.get(where, (message, hint, 0))
        grouped[where] = (message, hint, count + 1)
    for where, (message, hint, count) in grouped.items():
        files = f"{count} file{'s' if count > 1 else ''}"
        text = message.format(files=files, are="are" if count > 1 else "is")
        yield Finding(rule("SW207"), where, "", text, hint)


def _misplacement(repository: Repository, parts: list[str]) -> tuple[str, str, str | None]:
    """``(the folder or file at fault, message, hint)`` for a file at ``parts`` under the
    fixtures folder; ``{files}`` and ``{are}`` in the message stand for the files there."""
    folders = parts[:-1]
    if folders and folders[0] not in KINDS:
        return _wrong_kind(repository, folders[0])
    if len(folders) < 3:
        return _too_shallow(repository, parts)
    if folders[2] not in _OUTCOMES:
        return _wrong_outcome(repository, *folders[:3])
    folder = "/".join([repository.config.fixtures, *folders[:3]])
    nested = f"{folder}/{folders[3]}"
    message = "subfolders of valid/ and invalid/ are not read: {files} in it {are} never run"
    return nested, message, f"move them up into {folder}/"


def _wrong_kind(repository: Repository, kind: str) -> tuple[str, str, str | None]:
    base, kinds = repository.config.fixtures, ", ".join(KINDS)
    meant = _closest(kind, KINDS)
    hint = f"did you mean {base}/{meant}/?" if meant else f"use one of {kinds}"
    message = f"{kind}/ is not a kind of schema ({kinds}): {{files}} in it {{are}} never run"
    return f"{base}/{kind}", message, hint


def _too_shallow(repository: Repository, parts: list[str]) -> tuple[str, str, str | None]:
    base = repository.config.fixtures
    folder = "/".join([base, *parts[:-1]])
    target = f"{base}/<kind>/<name>/valid/ or invalid/"
    if len(parts) > 1:
        stem = parts[-1].removesuffix(".jsonl").removesuffix(".json")
        name = parts[1] if len(parts) == 3 else stem
        meant = _folder_meant(repository, parts[0], name)
        names = {f.name for f in repository.files if f.kind == meant.kind}
        shown = meant.name if len(parts) == 3 or meant.name in names else "<name>"
        target = f"{base}/{meant.kind}/{shown}/valid/ or invalid/"
    message = f"a fixture directly in {folder}/ is never run"
    return "/".join([base, *parts]), message, f"move it to {target}"


def _wrong_outcome(
    repository: Repository, kind: str, name: str, outcome: str
) -> tuple[str, str, str | None]:
    base = repository.config.fixtures
    meant = _folder_meant(repository, kind, name, outcome)
    hint = f"move them to {base}/{meant.kind}/{meant.name}/valid/ or invalid/"
    if meant.outcome in _OUTCOMES:
        hint = f"did you mean {base}/{meant.kind}/{meant.name}/{meant.outcome}/?"
    message = f"{outcome}/ is neither valid/ nor invalid/: {{files}} in it {{are}} never run"
    return f"{base}/{kind}/{name}/{outcome}", message, hint


def _missing_fixtures(
    repository: Repository, covered: set[tuple[str, str, str]]
) -> Iterator[Finding]:
    folder = repository.config.fixtures
    for file in repository.files:
        if file.kind == "common" or not file.usable:
            continue
        absent = [o for o in _OUTCOMES if (file.kind, file.name, o) not in covered]
        if absent:
            where = " and ".join(f"{folder}/{file.kind}/{file.name}/{o}/" for o in absent)
            hint = "store 2-3 examples that must pass and fail"
            yield Finding(rule("SW205"), file.relpath, "", f"no fixtures in {where}", hint)

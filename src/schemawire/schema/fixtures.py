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
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemawire._json import JSONValue, load_file, loads_lines
from schemawire._jsonpos import nearest_offset, pointer_offsets, position
from schemawire.errors import JSONError, SchemaError
from schemawire.schema.files import json_files, linked_outside, relpath
from schemawire.schema.repository import KINDS, Repository, SchemaFile, unreadable
from schemawire.schema.rules import Finding, rule
from schemawire.schema.validator import CompiledSchema
from schemawire.types import Violation

__all__ = ["FixtureReport", "check_fixtures"]

_EXPECT_SUFFIX = ".expect.json"
_OUTCOMES = ("valid", "invalid")


@dataclass(frozen=True, slots=True)
class FixtureReport:
    """What the fixtures showed: how many ran and passed, and every finding."""

    checked: int
    passed: int
    findings: tuple[Finding, ...]


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


def check_fixtures(repository: Repository) -> FixtureReport:
    """Run every fixture of ``repository`` against its schema."""
    run = _Run(repository)
    folders: dict[tuple[str, str], list[_Fixture]] = {}
    for fixture in _fixtures(repository):
        folders.setdefault((fixture.kind, fixture.name), []).append(fixture)
    for (kind, name), fixtures in folders.items():
        run.check_folder(kind, name, fixtures)
    run.findings.extend(_missing_fixtures(repository, run.covered))
    return FixtureReport(run.checked, run.passed, tuple(run.findings))


class _Run:
    """Counts and findings while fixtures are checked."""

    def __init__(self, repository: Repository) -> None:
        self.repository = repository
        self.checked = 0
        self.passed = 0
        self.findings: list[Finding] = []
        self.covered: set[tuple[str, str, str]] = set()
        self.schemas = {(f.kind, f.name): f for f in reversed(repository.files)}

    def check_folder(self, kind: str, name: str, fixtures: list[_Fixture]) -> None:
        schema = self.schemas.get((kind, name))
        if schema is None:
            self.findings.append(_without_schema(self.repository, kind, name))
            return
        validator = _validator(self.repository, schema)
        for fixture in fixtures:
            self.covered.add((kind, name, fixture.outcome))
            if not fixture.may_read:
                relative = relpath(self.repository.root, fixture.path)
                self.findings.append(unreadable(relative, linked_outside()))
            elif validator is not None:  # else the schema is broken, and findings say how
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
            found = list(_judge(validator.violations(instance.value), instance, outcome,
                                expected, against))  # fmt: skip
            self.checked += 1
            self.passed += not found
            self.findings.extend(found)


def _fixtures(repository: Repository) -> Iterator[_Fixture]:
    """Every fixture file, from one walk of the fixtures folder (linked folders not followed)."""
    base = repository.root / repository.config.fixtures
    for path, may_read in json_files(repository.root, base, suffixes=(".json", ".jsonl")):
        parts = relpath(base, path).split("/")
        if len(parts) != 4 or parts[0] not in KINDS or parts[2] not in _OUTCOMES:
            continue  # not in a fixtures/<kind>/<name>/<valid|invalid>/ folder
        if not parts[3].endswith(_EXPECT_SUFFIX):
            yield _Fixture(parts[0], parts[1], parts[2], path, may_read)


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
        return Finding(rule("SW206"), relative, "", "each entry needs a string pointer and keyword",
                       hint='[{"pointer": "/amount", "keyword": "minimum"}]')  # fmt: skip
    return {(str(entry["pointer"]), str(entry["keyword"])) for entry in entries
            if isinstance(entry, dict)}  # fmt: skip


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
    relative = f"{repository.config.fixtures}/{kind}/{name}"
    return Finding(rule("SW204"), relative, "", f"no {kind} schema is named {name!r}",
                   hint="rename the folder after the schema's file stem")  # fmt: skip


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
            yield Finding(rule("SW205"), file.relpath, "", f"no fixtures in {where}",
                          hint="store 2-3 examples that must pass and fail")  # fmt: skip

"""The catalogue of checks, and the `Finding` each one reports.

Every check that `schemawire check` runs has a stable id and name here: repository rules (SW0xx),
lint rules (SW1xx) and fixture rules (SW2xx). The catalogue is data: the docs page, ``--json``
output and SARIF rule metadata are all drawn from it, and tests make sure every rule fires.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

__all__ = ["RULES", "Finding", "Rule", "Severity", "rule", "rules_markdown"]


class Severity(StrEnum):
    """How much a finding matters: errors fail `schemawire check`, warnings do not by default."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Rule:
    """One check.

    Attributes:
        id: stable identifier, such as ``"SW101"``; use it in configuration.
        name: stable readable name, such as ``"open-object"``.
        severity: the default severity of its findings.
        summary: what it finds and why that matters, in one line.
    """

    id: str
    name: str
    severity: Severity
    summary: str

    @property
    def category(self) -> str:
        """``repository``, ``lint``, ``fixtures``, ``flows``, ``compatibility`` or
        ``implementations``, from the id's range."""
        ranges = {
            "0": "repository",
            "1": "lint",
            "2": "fixtures",
            "3": "flows",
            "4": "compatibility",
            "5": "implementations",
        }
        return ranges[self.id[2]]


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem, at one place in one file.

    Attributes:
        rule: the check that found it.
        file: path relative to the repository root, with ``/`` separators.
        pointer: RFC 6901 pointer into the file's JSON ("" for the whole file).
        message: what is wrong, in one sentence.
        hint: what to do about it, when there is something specific to say.
        line: 1-based line of the pointer in the file, once located.
        column: 1-based column, once located.
    """

    rule: Rule
    file: str
    pointer: str
    message: str
    hint: str | None = None
    line: int | None = None
    column: int | None = None

    @property
    def severity(self) -> Severity:
        """The rule's severity."""
        return self.rule.severity

    def at(self, line: int, column: int) -> Finding:
        """This finding, located at ``line`` and ``column``."""
        return replace(self, line=line, column=column)

    def to_json(self) -> dict[str, Any]:
        """The finding as a JSON object (the ``--json`` shape)."""
        fields: dict[str, Any] = {
            "rule": self.rule.id,
            "name": self.rule.name,
            "severity": str(self.severity),
            "file": self.file,
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "hint": self.hint,
        }
        return {key: value for key, value in fields.items() if value is not None}


_E, _W = Severity.ERROR, Severity.WARNING

RULES: dict[str, Rule] = {
    item.id: item
    for item in (
        # Repository: every file must be a usable, identifiable, versioned schema.
        Rule(
            "SW001",
            "invalid-json",
            _E,
            "The file cannot be read as JSON; nothing else in it can be checked.",
        ),
        Rule("SW002", "not-a-schema", _E, "A schema file must hold a JSON object."),
        Rule(
            "SW003",
            "unsupported-dialect",
            _E,
            "$schema must name draft 2020-12 (the default) "
            "or draft-07; other dialects are validated differently by each tool.",
        ),
        Rule(
            "SW004",
            "metaschema",
            _E,
            "The schema breaks its dialect's metaschema, so "
            "validators reject it or read it differently.",
        ),
        Rule(
            "SW005",
            "missing-id",
            _E,
            "Every schema needs a stable $id so that references, "
            "projections and traces can name it.",
        ),
        Rule("SW006", "invalid-id", _E, "$id must be an absolute URI without a fragment."),
        Rule(
            "SW007",
            "id-path-mismatch",
            _E,
            "With id-base set, $id must be id-base plus the "
            "file's path, so that relative $refs resolve as the files sit.",
        ),
        Rule(
            "SW008",
            "duplicate-id",
            _E,
            "Two files claim the same $id; references to it would be ambiguous.",
        ),
        Rule(
            "SW009",
            "missing-version",
            _E,
            "Every schema needs an x-version so that callers can tell breaking changes apart.",
        ),
        Rule("SW010", "invalid-version", _E, "x-version must be a semantic version such as 1.2.0."),
        Rule(
            "SW011",
            "unresolved-ref",
            _E,
            "A $ref names nothing in this repository; "
            "schemawire never fetches schemas from a network.",
        ),
        Rule(
            "SW012",
            "orphan-output",
            _E,
            "An output schema <name>.output.json needs its tool's "
            "input schema <name>.json beside it.",
        ),
        Rule(
            "SW013",
            "duplicate-name",
            _E,
            "Two files of one kind share a name; a tool's name "
            "is its file stem and must be unique.",
        ),
        Rule(
            "SW014",
            "uncompilable",
            _E,
            "The validator cannot compile the schema (for "
            "example a pattern that is not a valid regular expression).",
        ),
        Rule(
            "SW015",
            "stale-adapter",
            _E,
            "A generated adapter differs from a fresh export: "
            "it was edited by hand, or a schema changed without schemawire export.",
        ),
        Rule(
            "SW016",
            "refused-by-target",
            _E,
            "An exported payload is over a limit of its "
            "target (size, nesting, enum values, tools per request): the provider refuses it.",
        ),
        Rule(
            "SW017",
            "broken-dependency",
            _E,
            "A schema $refs a file (or a part of one) that "
            "cannot be read or compiled, so it cannot be used either; fix that file first.",
        ),
        # Lint: schemas that validate, but let bad data through or confuse a model or provider.
        Rule(
            "SW101",
            "open-object",
            _E,
            "An object without additionalProperties: false accepts "
            "any extra key, including injected ones; open a named metadata object instead.",
        ),
        Rule(
            "SW102",
            "untyped-property",
            _W,
            "A property without a type (or enum, const, $ref, combinator) accepts any value.",
        ),
        Rule(
            "SW103",
            "undescribed-property",
            _W,
            "Models choose and fill arguments from descriptions; a tool-input property needs one.",
        ),
        Rule(
            "SW104",
            "required-not-defined",
            _E,
            "required names a property that properties "
            "does not define: no value can ever be valid for it.",
        ),
        Rule(
            "SW105",
            "unknown-keyword",
            _E,
            "Validators silently ignore unknown keywords, so a "
            "typo (item, require) turns a constraint off.",
        ),
        Rule(
            "SW106",
            "invalid-type-name",
            _E,
            "dict, float, int, tuple, any, String and the like are not JSON Schema types.",
        ),
        Rule(
            "SW107",
            "value-type-mismatch",
            _E,
            "A default, enum or const value does not have the type the schema declares.",
        ),
        Rule("SW108", "duplicate-enum-value", _W, "An enum lists the same value twice."),
        Rule(
            "SW109",
            "unused-definition",
            _W,
            "A $defs entry that nothing references is dead weight in every projection.",
        ),
        Rule(
            "SW110",
            "unknown-format",
            _W,
            "Validators ignore formats they do not know, so the constraint is silently off.",
        ),
        Rule(
            "SW111",
            "non-portable-tool-name",
            _E,
            "OpenAI, Anthropic and Gemini accept tool "
            "names matching ^[A-Za-z_][A-Za-z0-9_-]{0,63}$; others get a 400.",
        ),
        Rule(
            "SW112",
            "non-portable-property-key",
            _W,
            "Gemini and Anthropic accept property "
            "keys matching ^[A-Za-z_][A-Za-z0-9_]{0,63}$ only.",
        ),
        Rule(
            "SW113",
            "tool-input-not-object",
            _E,
            "A tool's input schema must be type: object "
            "at the root, without a root combinator, for every provider.",
        ),
        Rule(
            "SW114",
            "shapeless-object",
            _W,
            "type: object with neither properties nor a schema "
            "for its values tells a model nothing about what to send.",
        ),
        Rule(
            "SW115",
            "undescribed-tool",
            _W,
            "A tool without a description gives the model nothing to choose it by.",
        ),
        Rule(
            "SW116",
            "invalid-keywords",
            _E,
            "x-keywords, the words a shortlist finds a tool by beyond its description, must be "
            "an array of distinct non-empty strings at the root of a tool input; anything else "
            "is ignored.",
        ),
        # Fixtures: the examples stored beside each schema must behave.
        Rule("SW201", "valid-fixture-fails", _E, "A fixture under valid/ breaks its schema."),
        Rule(
            "SW202",
            "invalid-fixture-passes",
            _E,
            "A fixture under invalid/ satisfies its "
            "schema, so the schema does not forbid what the fixture shows.",
        ),
        Rule(
            "SW203",
            "unexpected-violation",
            _E,
            "An invalid fixture fails, but not (only) for the reason its .expect.json names.",
        ),
        Rule(
            "SW204", "fixture-without-schema", _E, "A fixture folder names no schema of its kind."
        ),
        Rule(
            "SW205",
            "missing-fixtures",
            _W,
            "A schema without both valid and invalid fixtures is untested in CI.",
        ),
        Rule(
            "SW206",
            "invalid-expectation",
            _E,
            'An .expect.json must be a list of {"pointer", "keyword"} objects.',
        ),
        Rule(
            "SW207",
            "misplaced-fixture",
            _E,
            "A file under fixtures/ that is not in a "
            "`fixtures/<kind>/<name>/valid/` or `invalid/` folder is never run.",
        ),
        # Flows: agents, handoffs and routes that can run.
        Rule(
            "SW301",
            "broken-flow",
            _E,
            "A flow file breaks the flow schema, names a schema, "
            "tool or agent that is not there, or a handoff fixture misses the route it "
            "declares.",
        ),
        # Compatibility (check --since REV): a change that breaks callers or readers is versioned.
        Rule(
            "SW401",
            "breaking-change-without-major-bump",
            _E,
            "A change that breaks the side "
            "the schema's role protects (callers of a tool, readers of its output, either side "
            "of a handoff or state; see docs/diff.md) needs a major x-version bump.",
        ),
        Rule(
            "SW402",
            "change-without-version-bump",
            _W,
            "A schema changed compatibly but kept "
            "its x-version: bump the minor version (the patch version for annotations).",
        ),
        # Implementations (a repository that serves tools): [serve.tools] can serve each tool.
        Rule(
            "SW501",
            "implementation-not-importable",
            _E,
            "A module [serve.tools] names "
            "cannot be imported (or fails while it is imported): schemawire serve cannot "
            "start.",
        ),
        Rule(
            "SW502",
            "implementation-missing",
            _E,
            "The module has no such function, or what it names is not callable.",
        ),
        Rule(
            "SW503",
            "tool-not-implemented",
            _E,
            "A repository that serves tools has a tool "
            "that [serve.tools] does not name: schemawire serve leaves it out without a word.",
        ),
        Rule(
            "SW504",
            "implementation-signature-mismatch",
            _E,
            "The function's parameters do "
            "not match the tool's input schema: calls the gate accepts fail with a TypeError, "
            "or the function and the schema disagree on what is required.",
        ),
        Rule(
            "SW505",
            "implementation-without-tool",
            _E,
            "[serve.tools] names a tool that has "
            "no input schema: schemawire serve refuses to start.",
        ),
    )
}


def rule(rule_id: str) -> Rule:
    """The rule with ``rule_id``.

    Raises:
        KeyError: no such rule.
    """
    return RULES[rule_id]


_CATEGORY_TITLES = {
    "repository": "Repository rules: every file is a usable, identifiable, versioned schema",
    "lint": "Lint rules: valid schemas that let bad data through or trip a model or provider",
    "fixtures": "Fixture rules: the stored examples behave",
    "flows": "Flow rules: agents, handoffs and routes that can run",
    "compatibility": "Compatibility rules (`schemawire check --since REV`): changes are versioned",
    "implementations": "Implementation rules (a repository with `[serve]`): every tool can be "
    "served",
}


def _markdown_text(text: str) -> str:
    """``text`` as Markdown shows it: a summary's brackets (a pattern's ``[A-Z]``) escaped, so no
    renderer reads them as a link reference."""
    return text.replace("[", "\\[")


def rules_markdown() -> str:
    """The rules page of the docs (docs/rules.md), drawn from the catalogue."""
    lines = [
        "# Rules",
        "",
        "Every check of `schemawire check` has a stable id and name. Errors fail the check;",
        "warnings fail it only with `--fail-on warning`. Switch a rule off everywhere or for some",
        "files in `schemawire.toml` (any rule, not only lint rules):",
        "",
        "```toml",
        "[lint]",
        'ignore = ["SW205"]',
        "",
        "[lint.per-file-ignores]",
        '"schemas/tools/legacy_*.json" = ["SW101", "SW103"]',
        '"schemas/tools/web_search.json" = ["SW503"]  # served by an upstream, not [serve.tools]',
        "```",
        "",
        "This page is generated from the catalogue in `src/schemawire/schema/rules.py` by",
        "`rules_markdown()`; a test fails when the two differ.",
    ]
    for category, title in _CATEGORY_TITLES.items():
        lines += ["", f"## {title}", "", "| id | name | severity | why |", "|---|---|---|---|"]
        lines += [
            f"| {item.id} | `{item.name}` | {item.severity} | {_markdown_text(item.summary)} |"
            for item in RULES.values()
            if item.category == category
        ]
    return "\n".join(lines) + "\n"

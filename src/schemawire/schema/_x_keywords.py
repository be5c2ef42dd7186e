"""Lint rule SW116: ``x-keywords``, the words a shortlist finds a tool by, are usable.

A tool input's root may hold ``x-keywords``: words a user says for the tool that its description
does not use (``schemawire.gates.shortlist`` indexes them above the description). The index reads
only an array of strings at the root of a tool input; this rule says when one is written anywhere
else or in another shape, or an entry holds no word the index keeps (only stop words, single
letters or punctuation), since the index would drop it without a word.

The index's words come from `schemawire._words`, the same function the rule asks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from schemawire._json import quoted
from schemawire._pointer import join
from schemawire._words import tokens
from schemawire.schema._walk import Site
from schemawire.schema.rules import Finding
from schemawire.schema.schema_file import SchemaFile

__all__ = ["KEYWORDS", "check_keywords"]

KEYWORDS = "x-keywords"


class _Context(Protocol):
    """What the rule needs of `schemawire.schema.lint.LintContext`."""

    @property
    def file(self) -> SchemaFile: ...

    def finding(
        self, rule_id: str, pointer: str, message: str, hint: str | None = None
    ) -> Finding: ...


def check_keywords(context: _Context, site: Site) -> Iterator[Finding]:
    """SW116 at one subschema: ``x-keywords`` where the index reads it, in the shape it reads."""
    if not isinstance(site.schema, dict) or KEYWORDS not in site.schema:
        return
    pointer = join(site.pointer, KEYWORDS)
    if site.parent is not None or not context.file.is_tool_input:
        yield context.finding(
            "SW116",
            pointer,
            "x-keywords is read only at the root of a tool's input schema; here it is ignored",
            hint="move the words to x-keywords at the root of the tool's input schema, "
            "or into this property's description",
        )
        return
    yield from _shape_findings(context, pointer, site.schema[KEYWORDS])


def _shape_findings(context: _Context, pointer: str, value: Any) -> Iterator[Finding]:
    if not isinstance(value, list):
        yield context.finding(
            "SW116",
            pointer,
            f"x-keywords must be an array of strings, not {quoted(value)}",
            hint='write the words as a list, e.g. "x-keywords": ["reimburse", "chargeback"]',
        )
        return
    seen: dict[str, int] = {}
    for index, word in enumerate(value):
        at = join(pointer, index)
        if not isinstance(word, str):
            yield context.finding(
                "SW116",
                at,
                f"an x-keywords entry must be a string, not {quoted(word)}",
                hint="write the word as a string, or remove it",
            )
        elif not word.strip():
            yield context.finding(
                "SW116", at, "an x-keywords entry is empty", hint="remove it, or write the word"
            )
        elif _no_word(word):
            yield context.finding(
                "SW116",
                at,
                f"{quoted(word)} holds no word the index keeps (only stop words, single letters "
                "or punctuation): it finds no tool",
                hint='write the word a user would say for the tool, e.g. "refund", or remove it',
            )
        elif (key := " ".join(word.lower().split())) in seen:
            yield context.finding(
                "SW116",
                at,
                f"{quoted(word)} is listed twice in x-keywords (first at {seen[key]}; case "
                "does not count)",
                hint="remove one",
            )
        else:
            seen[key] = index


def _no_word(text: str) -> bool:
    """Whether the shortlist index reads no word in ``text``."""
    return not tokens(text)

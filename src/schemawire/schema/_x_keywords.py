"""Lint rule SW116: ``x-keywords``, the words a shortlist finds a tool by, are usable.

A tool input's root may hold ``x-keywords``: words a user says for the tool that its description
does not use (``schemawire.gates.shortlist`` indexes them above the description). The index reads
only an array of strings at the root of a tool input; this rule says when one is written anywhere
else or in another shape, or an entry holds no word the index keeps (only stop words, single
letters or punctuation), since the index would drop it without a word.

The index's words come from ``schemawire.gates._tokens``, a layer above this one: `_no_word`
mirrors its rule for what it drops, and a test holds the two equal (and the stop words).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Protocol

from schemawire._json import quoted
from schemawire._pointer import join
from schemawire.schema._walk import Site
from schemawire.schema.rules import Finding
from schemawire.schema.schema_file import SchemaFile

__all__ = ["KEYWORDS", "check_keywords"]

KEYWORDS = "x-keywords"

# As in ``schemawire.gates._tokens``: runs of letters and digits, their camelCase parts, the
# scripts written without spaces, and the function words the index leaves out.
_RUNS = re.compile(r"[^\W_]+")
_PARTS = re.compile(r"[A-Z]+[a-z]{1,2}(?=[0-9])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_SCRIPTS = re.compile(f"[{_CJK}]+|[^{_CJK}]+")
_STOP_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just let lets more most of on or other our ours ourselves out over own please same she
    should so some such than that the their theirs them themselves then there these they this
    those through to too under until up us very was we were what when where which while who whom
    why will with would you your yours yourself yourselves
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())


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
    """Whether the shortlist index reads no word in ``text`` (``tokens(text) == []``)."""
    return not any(_run_has_word(run) for run in _RUNS.findall(text))


def _run_has_word(run: str) -> bool:
    for segment in _SCRIPTS.findall(run) if not run.isascii() else [run]:
        if not segment.isascii():  # CJK as character pairs, any other script whole
            if re.fullmatch(f"[{_CJK}]+", segment) or len(segment) > 1:
                return True
            continue
        for part in _PARTS.findall(segment):
            word = part.lower()
            if word not in _STOP_WORDS and not (len(word) == 1 and not word.isdigit()):
                return True
    return False

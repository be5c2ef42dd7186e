"""Tolerant reading of the JSON mistakes models make, with json-repair, saying what changed.

Off by default: a repaired call is a guess at what the model meant. When it is on, the verdict
records the text as it came, the JSON the gate read from it, the mistakes we recognised (code
fences, trailing commas, single quotes, Python literals, comments, a cut-off end) and json-repair's
own log of its fixes, so the trace shows exactly what the tool was called with and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import json_repair

from schemawire._json import dumps
from schemawire.gates.verdict import Change

__all__ = ["Repaired", "repair"]

_SHOWN = 2000  # characters of the original text kept in the change record

# (what a model got wrong, how to recognise it in the text)
_MISTAKES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a Markdown code fence around the JSON", re.compile(r"^\s*```")),
    ("a trailing comma", re.compile(r",\s*[}\]]")),
    ("single quotes for strings", re.compile(r"(?:^|[{\[,:]\s*)'")),
    ("a Python literal (True, False or None)", re.compile(r"[:\[,]\s*(?:True|False|None)\b")),
    ("a comment", re.compile(r"(?:^|\s)(?://|/\*|#)")),
    ("a key without quotes", re.compile(r"[{,]\s*[A-Za-z_][A-Za-z0-9_]*\s*:")),
)


@dataclass(frozen=True, slots=True)
class Repaired:
    """What json-repair read in a text, and what it noticed on the way."""

    text: str
    value: Any
    mistakes: tuple[str, ...]  # the mistakes we recognised in the text
    fixes: tuple[str, ...]  # json-repair's own log of what it fixed

    def change(self, value: Any) -> Change:
        """The record of the repair, once ``value`` (what was read, checked) is known good."""
        detail = "repaired malformed JSON: " + ("; ".join(self.mistakes) or "see after")
        after = {"json": dumps(value, indent=False), "fixes": list(self.fixes)}
        return Change("json_repaired", "", detail, before=self.text[:_SHOWN], after=after)


def repair(text: str) -> Repaired | None:
    """What json-repair reads ``text`` as; None when it finds no object or array in it (then
    the text stays malformed)."""
    try:
        value, log = json_repair.repair_json(text, return_objects=True, logging=True)
    except (ValueError, RecursionError):  # json-repair's own limits; the text stays refused
        return None
    if not isinstance(value, dict | list):
        return None
    mistakes = [mistake for mistake, pattern in _MISTAKES if pattern.search(text)]
    if _unclosed(text):
        mistakes.append("a cut-off end (unclosed brackets or string)")
    fixes = [entry["text"] for entry in log if isinstance(entry, dict) and "text" in entry]
    return Repaired(text, _joined_surrogates(value), tuple(mistakes), tuple(fixes))


def _joined_surrogates(value: Any) -> Any:
    """``value`` with each escaped surrogate pair ("\\ud83d\\ude00", as json.dumps writes an
    emoji) made the one character it stands for: json-repair reads the halves apart."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
    if isinstance(value, list):
        return [_joined_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_joined_surrogates(k): _joined_surrogates(v) for k, v in value.items()}
    return value


def _unclosed(text: str) -> bool:
    """Whether ``text`` ends inside a string or with brackets still open."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
    return in_string or depth > 0

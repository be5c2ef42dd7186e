"""Tolerant reading of the JSON mistakes models make, with json-repair, saying what changed.

Off by default: a repaired call is a guess at what the model meant. When it is on, the verdict
records the text as it came, the JSON the gate read from it, the mistakes we recognised (code
fences, trailing commas, single quotes, Python literals, comments, a cut-off end) and json-repair's
own log of its fixes, so the trace shows exactly what the tool was called with and why.
"""

from __future__ import annotations

import re
from typing import Any

import json_repair

from schemawire._json import dumps
from schemawire.gates.verdict import Change

__all__ = ["repair"]

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


def repair(text: str) -> tuple[Any, Change] | None:
    """What json-repair reads ``text`` as, and the change record; None when it finds no object
    or array in it (then the text stays malformed)."""
    try:
        value, log = json_repair.repair_json(text, return_objects=True, logging=True)
    except (ValueError, RecursionError):  # json-repair's own limits; the text stays refused
        return None
    if not isinstance(value, dict | list):
        return None
    noticed = [mistake for mistake, pattern in _MISTAKES if pattern.search(text)]
    if _unclosed(text):
        noticed.append("a cut-off end (unclosed brackets or string)")
    fixes = [entry["text"] for entry in log if isinstance(entry, dict) and "text" in entry]
    detail = "repaired malformed JSON: " + ("; ".join(noticed) or "see after")
    change = Change("json_repaired", "", detail, before=text[:_SHOWN],
                    after={"json": dumps(value, indent=False), "fixes": fixes})  # fmt: skip
    return value, change


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

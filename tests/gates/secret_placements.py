"""The redaction corpus's secrets, placed in every channel a value reaches a reader through.

`corpus_cases` yields each secret of ``tests/data/secrets.json`` with the text that holds it;
`PLACEMENTS` puts such a text into a result at one place; `leaked` says whether a secret is
still anywhere in what came out (keys, strings, JSON inside strings, decoded blobs). The trace
tests reuse `corpus_cases` and `leaked` for the fields of a hop.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from schemawire._json import load_file
from schemawire.gates import McpResult

CORPUS_PATH = Path(__file__).parents[1] / "data" / "secrets.json"


class Case(NamedTuple):
    kind: str
    text: str  # the secret in its context (a sentence, a config line)
    secret: str  # the part that must not come out


def corpus_cases() -> Iterator[Case]:
    """Every secret of the corpus, with its kind and the text that holds it."""
    corpus: Any = load_file(CORPUS_PATH)
    for case in corpus["secrets"]:
        yield Case(case["kind"], case["text"], case["secret"])


def look_alikes() -> list[str]:
    """The corpus's look-alikes: texts that must come out as they went in."""
    corpus: Any = load_file(CORPUS_PATH)
    return [case["text"] for case in corpus["look_alikes"]]


def _text_block(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": text, **extra}


# How each placement puts a text into what the result gate checks: (result, output schema).
PLACEMENTS: dict[str, Callable[[str], tuple[Any, dict[str, Any] | None]]] = {
    "value": lambda text: ({"note": text}, None),
    "key": lambda text: ({text: 1}, None),
    "nested key": lambda text: ({"a": {"b": [{text: "x"}]}}, None),
    "deep array": lambda text: ({"a": [[[[[[text]]]]]]}, None),
    "JSON in text": lambda text: (McpResult([_text_block(json.dumps({"log": [text]}))]), None),
    "_meta": lambda text: (McpResult([_text_block("ok", _meta={"note": text})]), None),
    "resource": lambda text: (
        McpResult([{"type": "resource", "resource": {"uri": "file:///notes.txt", "text": text}}]),
        None,
    ),
    "resource blob": lambda text: (
        McpResult(
            [
                {
                    "type": "resource",
                    "resource": {
                        "uri": "file:///notes.txt",
                        "blob": base64.b64encode(text.encode()).decode(),
                    },
                }
            ]
        ),
        None,
    ),
    "resource link": lambda text: (
        McpResult(
            [
                {
                    "type": "resource_link",
                    "uri": "file:///notes.txt",
                    "name": "notes",
                    "description": text,
                }
            ]
        ),
        None,
    ),
    "rejection quote": lambda text: (
        {"count": text},
        {"type": "object", "properties": {"count": {"type": "integer"}}},
    ),
    # A member the output schema does not allow: its key is in the violation's pointer
    # (escaped: "/" as "~1") and quoted in its message.
    "rejected key": lambda text: ({text: 1}, {"type": "object", "additionalProperties": False}),
}


def strings(value: Any) -> Iterator[str]:
    """Every key and string in ``value``, and in JSON text and base64 blobs inside it."""
    if isinstance(value, str):
        yield value
        if value.lstrip().startswith(("{", "[")):
            with contextlib.suppress(ValueError):
                yield from strings(json.loads(value))
        with contextlib.suppress(binascii.Error, ValueError):
            yield base64.b64decode(value, validate=True).decode("utf-8")
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for key, member in value.items():
            yield key
            yield from strings(member)


def leaked(secret: str, value: Any) -> bool:
    """Whether ``secret`` is still anywhere in ``value``."""
    return any(secret in text for text in strings(value))

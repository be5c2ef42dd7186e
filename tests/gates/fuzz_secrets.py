"""Secrets planted in tool results, for `tests.gates.fuzz` and `tests.gates.test_fuzz_seeded`:
none may reach what the model (or a proxy's client) reads.

Each secret of the redaction corpus (``tests/data/secrets.json``) is planted, in the sentence
it comes in (some kinds are secrets only in context: a URL's password, the token after
``Bearer``), in one of `PLACEMENTS`, and the result goes through the result gate. It
escapes when the secret, as it is or JSON-escaped, is in any string (key or value) of the
``CallToolResult`` the gate's verdict becomes (`verdict_result`) or of the verdict's value.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from schemawire.gates import McpResult, ResultGate, Verdict
from schemawire.mcp.server import verdict_result
from schemawire.types import ToolSpec

__all__ = ["PLACEMENTS", "SECRETS", "Planted", "escaped", "every_planting", "plant", "planted"]

CORPUS = Path(__file__).parents[1] / "data" / "secrets.json"


class Secret(NamedTuple):
    """A secret of the corpus: its kind, the sentence it comes in, and the secret itself."""

    kind: str
    text: str
    secret: str


def _corpus() -> tuple[Secret, ...]:
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    return tuple(Secret(c["kind"], c["text"], c["secret"]) for c in data["secrets"])


SECRETS = _corpus()

_ANY = ResultGate(ToolSpec("report", {"type": "object"}))
_COUNTED = ResultGate(
    ToolSpec(
        "count",
        {"type": "object"},
        {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "pin": {"type": "string", "x-redact": True}},
            "required": ["n"],
            "additionalProperties": False,
        },
    )
)


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _deep(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


def _rejection_quote(text: str) -> Any:
    """A structured result the output schema refuses, the refusal quoting the secret: as a
    value of the wrong type, an unexpected member, or a marked member that breaks its type."""
    choice = sum(map(ord, text)) % 3
    if choice == 0:
        return McpResult([_text_block("{}")], structured={"n": text})
    if choice == 1:
        return McpResult([_text_block("{}")], structured={"n": 1, "password": text})
    return McpResult([_text_block("{}")], structured={"n": 1, "pin": [text]})


# Each placement: the gate, and the result holding the text.
PLACEMENTS: dict[str, tuple[ResultGate, Callable[[str], Any]]] = {
    "value": (_ANY, lambda text: {"note": text}),
    "key": (_ANY, lambda text: {text: "x"}),
    "nested key": (_ANY, lambda text: {"a": {"b": [{"c": {text: 1}}]}}),
    "deep array": (_ANY, lambda text: {"a": _deep(text, 12)}),
    "JSON in text": (
        _ANY,
        lambda text: McpResult([_text_block(orjson.dumps({"n": text}).decode())]),
    ),
    "_meta": (_ANY, lambda text: McpResult([_text_block("ok")], meta={"note": text})),
    "resource": (
        _ANY,
        lambda text: McpResult(
            [{"type": "resource", "resource": {"uri": "file:///r.txt", "text": text}}]
        ),
    ),
    "resource link": (
        _ANY,
        lambda text: McpResult([{"type": "resource_link", "name": "r", "uri": text}]),
    ),
    "rejection quote": (_COUNTED, _rejection_quote),
}


class Planted(NamedTuple):
    """One secret (in its sentence) in one placement."""

    secret: Secret
    placement: str

    @property
    def text(self) -> str:
        return self.secret.text


def plant(rng: random.Random) -> Planted:
    """A random secret in a random placement."""
    return Planted(rng.choice(SECRETS), rng.choice(list(PLACEMENTS)))


def every_planting() -> Iterator[Planted]:
    """Every secret of the corpus in every placement."""
    for placement in PLACEMENTS:
        for secret in SECRETS:
            yield Planted(secret, placement)


def planted(case: Planted) -> Verdict:
    """The result gate's verdict on the result ``case`` describes."""
    gate, build = PLACEMENTS[case.placement]
    return gate.check(build(case.text))


def escaped(case: Planted, verdict: Verdict) -> bool:
    """Whether the secret is in anything the model or a proxy's client reads."""
    forms = {case.secret.secret, json.dumps(case.secret.secret)[1:-1]}
    shown = [verdict_result(verdict), verdict.value]
    if verdict.rejection is not None:
        shown.append(verdict.rejection.to_json())
    return any(form in text for text in _strings(shown) for form in forms)


def _strings(value: Any) -> Iterator[str]:
    """Every string in ``value``: keys, values, and the fields of dataclasses and tuples."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            for key, item in node.items():
                stack.append(key)
                stack.append(item)
        elif isinstance(node, list | tuple | set | frozenset):
            stack.extend(node)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            stack.extend(getattr(node, f.name) for f in dataclasses.fields(node))

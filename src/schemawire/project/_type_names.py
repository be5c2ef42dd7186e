"""Type names and type expressions of public function-calling collections, in JSON Schema.

The Berkeley Function Calling Leaderboard, xLAM and similar collections write types as Python or
Java names (``dict``, ``float``, ``HashMap``), as expressions (``List[str]``, ``Optional[int]``,
``"str, optional"``) or leave them out (``any``). `parse_type` reads each as the JSON Schema
that means the same, and says whether the expression marked the value optional; the names
themselves are `schemawire.schema._type_names`, which the linter reads too.
"""

from __future__ import annotations

import re
from typing import Any

from schemawire.schema._type_names import ANY_TYPES, ARRAY_TYPES, OBJECT_TYPES, json_type_for

__all__ = [
    "FALSY",
    "TRUTHY",
    "UnknownTypeError",
    "parse_type",
    "parse_type_text",
]

# --- words that say yes or no ------------------------------------------------------------

TRUTHY = frozenset({"true", "yes"})
FALSY = frozenset({"false", "no"})


# --- type expressions: "dict", "String", "str, optional", "List[int] | None" ------------------

_TYPE_TOKEN = re.compile(r"\s*(\.\.\.|[A-Za-z_][A-Za-z0-9_.]*|[\[\],|])")


class UnknownTypeError(Exception):
    """A type expression that means nothing JSON Schema can say.

    Private: `parse_type` catches it and returns None; it never crosses the public API, so it
    is not a `SchemawireError`."""


def parse_type(value: str | list[Any]) -> tuple[dict[str, Any], bool] | None:
    """The JSON Schema keywords for a dialect ``type`` and whether it said ", optional"; None if
    the expression means nothing known."""
    try:
        if isinstance(value, list):
            return union([parse_type_text(name)[0] for name in value]), False
        return parse_type_text(value)
    except UnknownTypeError:
        return None


def parse_type_text(text: Any) -> tuple[dict[str, Any], bool]:
    if not isinstance(text, str):
        raise UnknownTypeError
    tokens = split_tokens(text)
    optional = [token.lower() for token in tokens[-2:]] == [",", "optional"]
    if optional:
        tokens = tokens[:-2]
    if not tokens:
        return {}, optional
    parser = TypeParser(tokens)
    fragment = parser.union()
    if parser.position != len(tokens):
        raise UnknownTypeError
    return fragment, optional


def split_tokens(text: str) -> list[str]:
    tokens: list[str] = []
    position, text = 0, text.strip()
    while position < len(text):
        match = _TYPE_TOKEN.match(text, position)
        if match is None:
            raise UnknownTypeError
        tokens.append(match.group(1))
        position = match.end()
    return tokens


class TypeParser:
    """Recursive descent over ``union := term ("|" term)*``, ``term := NAME ["[" args "]"]``."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.position = 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise UnknownTypeError
        self.position += 1
        return token

    def union(self) -> dict[str, Any]:
        members = [self.term()]
        while self.peek() == "|":
            self.take()
            members.append(self.term())
        return union(members)

    def term(self) -> dict[str, Any]:
        name = self.take().lower()
        arguments: list[dict[str, Any] | None] = []
        if self.peek() == "[":
            self.take()
            arguments.append(self.argument())
            while self.peek() == ",":
                self.take()
                arguments.append(self.argument())
            if self.take() != "]":
                raise UnknownTypeError
        return named_type(name, arguments)

    def argument(self) -> dict[str, Any] | None:
        if self.peek() == "...":
            self.take()
            return None  # Tuple[int, ...]: any number of ints
        return self.union()


def named_type(name: str, arguments: list[dict[str, Any] | None]) -> dict[str, Any]:
    if not arguments:
        return bare_type(name)
    members = [argument for argument in arguments if argument is not None]
    if name in ("optional", "union") and members:
        return union([*members, {"type": "null"}] if name == "optional" else members)
    if name in ARRAY_TYPES:
        one_kind = len(members) == 1 and (len(arguments) == 1 or name == "tuple")
        return (
            {"type": "array", "items": members[0]} if one_kind and members[0] else {"type": "array"}
        )
    if name in OBJECT_TYPES and len(members) == 2 and members[1]:
        return {"type": "object", "additionalProperties": members[1]}
    if name in OBJECT_TYPES:
        return {"type": "object"}
    raise UnknownTypeError


def bare_type(name: str) -> dict[str, Any]:
    json_type = json_type_for(name)
    if json_type is not None:
        return {"type": json_type}
    if name in ANY_TYPES:
        return {}
    raise UnknownTypeError


def union(members: list[dict[str, Any]]) -> dict[str, Any]:
    """One schema that accepts what any of ``members`` accepts."""
    if len(members) == 1 or any(not member for member in members):
        return members[0] if all(members) else {}
    if all(set(member) == {"type"} for member in members):
        names: list[str] = []
        for member in members:
            types = member["type"] if isinstance(member["type"], list) else [member["type"]]
            names.extend(name for name in types if name not in names)
        return {"type": names[0] if len(names) == 1 else names}
    return {"anyOf": members}

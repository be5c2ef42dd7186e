"""Checks of JSON values the gates (and the trace) share: limits on a parsed value, values that
are not JSON, the bytes a value writes, lone surrogates, and replacing one value inside another
without changing the caller's copy."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from schemawire._json import dumps, quoted
from schemawire._pointer import escape, split, to_pointer
from schemawire.errors import ErrorCode, UsageError

__all__ = [
    "ValueLimits",
    "ValueProblem",
    "bytes_problem",
    "first_problem",
    "is_unicode",
    "plain_json",
    "replaced",
    "size_of",
    "without_lone_surrogates",
]

_INT64 = (-(2**63), 2**64 - 1)  # what orjson and most JSON parsers keep exact
_JSON_TYPE = str(ErrorCode.JSON_TYPE)  # a plain str: it is a violation's keyword


@dataclass(frozen=True, slots=True)
class ValueLimits:
    """How large a JSON value a gate checks may be, as text or parsed (a text is parsed within
    these: `schemawire.ParseLimits` is the parser's own).

    Attributes:
        max_bytes: the value's JSON text, in bytes of UTF-8.
        max_depth: arrays and objects a value may sit inside.
        max_string: characters of one string (keys included).
        max_items: items of one array, or members of one object.
    """

    max_bytes: int = 1024 * 1024
    max_depth: int = 32
    max_string: int = 100_000
    max_items: int = 10_000

    def __post_init__(self) -> None:
        if not 1 <= self.max_depth <= 250:
            raise UsageError("max_depth must be between 1 and 250")
        if min(self.max_bytes, self.max_string, self.max_items) < 1:
            raise UsageError("limits must be positive")


@dataclass(frozen=True, slots=True)
class ValueProblem:
    """What is wrong with a value, and where: ``too_large`` for limits, else ``malformed``."""

    kind: str  # "too_large" or "malformed"
    pointer: str
    keyword: str
    message: str


def first_problem(
    value: Any, limits: ValueLimits, *, at: str = "", depth: int = 0
) -> ValueProblem | None:
    """The first part of ``value``, in document order, that JSON text could not have held (a
    non-string key, NaN, a tuple...) or that is over ``limits``; else None.

    One walk checks everything and stops at the first problem, so a value far over a limit
    costs no more than the limit: an array of 10**7 items is refused at its length, and a value
    that shares references (``x = [x, x]`` twenty times) is refused once the JSON it would write
    passes ``limits.max_bytes``, however many leaves its tree has. The bytes counted are a
    lower bound of the compact JSON text (escapes are not counted): `plain_json` measures the
    exact text before it accepts a value.

    Args:
        value: the value, as it arrived.
        limits: the limits to hold it to.
        at: where ``value`` sits in a larger document (pointers start there).
        depth: how many arrays and objects ``value`` sits inside.
    """
    return _Walk(limits, at).run(value, depth)


class _Walk:
    """One depth-first walk in document order; the path to the current node is kept as a list
    of tokens, so a pointer is only built for the node a problem is found at."""

    def __init__(self, limits: ValueLimits, at: str) -> None:
        self.limits = limits
        self.at = at
        self.path: list[str | int] = []
        self.written = 0  # bytes of compact JSON the nodes seen so far write, at least

    def run(self, value: Any, depth: int) -> ValueProblem | None:
        pending: list[Iterator[tuple[str | int, Any]]] = []
        node = value
        while True:
            problem = self._visit(node, depth + len(pending), pending)
            if problem is not None:
                return problem
            if self.written > self.limits.max_bytes:
                return _too_many_bytes(self.limits, None, self.at)
            while pending:
                entry = next(pending[-1], None)
                if entry is not None:
                    self.path[-1], node = entry
                    break
                pending.pop()
                self.path.pop()
            else:
                return None

    def _visit(
        self, node: Any, depth: int, pending: list[Iterator[tuple[str | int, Any]]]
    ) -> ValueProblem | None:
        """Check one node, count what it writes, and queue its entries."""
        if depth > self.limits.max_depth:
            message = f"nested deeper than {self.limits.max_depth} levels"
            return ValueProblem("too_large", self.pointer(), "maxDepth", message)
        if isinstance(node, str):
            return self._string(node, "string")
        if isinstance(node, dict):
            problem = self._members(node)
            entries: Iterator[tuple[str | int, Any]] = iter(node.items())
        elif isinstance(node, list):
            problem = self._items(node, "array")
            entries = enumerate(node)
        else:
            self.written += 1  # a number, true, false or null: one byte at least
            if _plain_scalar(node):
                return None  # the usual case, decided before a pointer is built
            return _not_json(node, self.pointer())
        if problem is None and node:
            pending.append(entries)
            self.path.append("")
        return problem

    def _string(self, text: str, what: str) -> ValueProblem | None:
        if len(text) > self.limits.max_string:
            return _too_long(self.pointer(), what, len(text), self.limits.max_string)
        if text.isascii():  # known to CPython without a look at the characters
            self.written += len(text) + 2
            return None
        try:
            self.written += len(text.encode("utf-8")) + 2
        except UnicodeEncodeError:
            return _lone_surrogate(self.pointer())
        return None

    def _items(self, node: dict[Any, Any] | list[Any], what: str) -> ValueProblem | None:
        if len(node) > self.limits.max_items:
            return _too_long(self.pointer(), what, len(node), self.limits.max_items)
        self.written += 2 + max(len(node) - 1, 0)  # brackets and commas
        return None

    def _members(self, node: dict[Any, Any]) -> ValueProblem | None:
        problem = self._items(node, "object")
        for key in node if problem is None else ():
            if not isinstance(key, str):
                message = f"object key {quoted(key)} is not a string"
                return ValueProblem("malformed", self.pointer(), _JSON_TYPE, message)
            problem = self._key(key)
            if problem is not None:
                return problem
        return problem

    def _key(self, key: str) -> ValueProblem | None:
        self.path.append(key)
        problem = self._string(key, "key")
        self.path.pop()
        self.written += 1  # the colon
        if problem is not None and problem.kind == "malformed":
            return _lone_surrogate(self.pointer())  # reported at the object: it cannot be written
        return problem

    def pointer(self) -> str:
        return self.at + to_pointer(self.path)


def plain_json(value: Any, limits: ValueLimits) -> tuple[Any, ValueProblem | None]:
    """For a value that arrived already parsed: the same value made of plain JSON types only
    (subclasses of str, int, float, dict and list, such as enums, become the base type), or
    what keeps it from being JSON or within ``limits`` (its compact JSON text measured exactly
    against ``limits.max_bytes``).

    A value made of the plain types alone, within the limits, is written and read back by orjson
    at once (`_written_at_once`); only any other value is walked node by node."""
    plain = _written_at_once(value, limits)
    if plain is not _UNSURE:
        return plain, None
    problem = first_problem(value, limits)
    if problem is not None:
        return None, problem
    try:
        # (Keys that are str subclasses need the option; `first_problem` refused other keys.)
        text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        # Not reached: `first_problem` refuses what orjson cannot write.
        return None, ValueProblem("malformed", "", _JSON_TYPE, "the value cannot be written")
    if len(text) > limits.max_bytes:
        return None, _too_many_bytes(limits, len(text))
    return orjson.loads(text), None


_UNSURE = object()  # `_written_at_once` cannot tell: the walk decides


def _written_at_once(value: Any, limits: ValueLimits) -> Any:
    """``value`` as `plain_json` makes it, when `_room_left` vouches for it and orjson writes
    it within ``limits.max_bytes``; else `_UNSURE`. What the vouching leaves to orjson, orjson
    refuses: an integer beyond 64 bits, a lone surrogate. The text then is the one `plain_json`
    measures and reads back."""
    if type(value) is dict or type(value) is list:
        if value and _room_left(value, 0, limits.max_bytes, limits) < 0:
            return _UNSURE
    elif not _plain_scalar(value) and not (type(value) is str and len(value) <= limits.max_string):
        return _UNSURE
    try:
        text = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return _UNSURE
    if len(text) > limits.max_bytes:
        return _UNSURE
    return orjson.loads(text)


def _room_left(node: dict[Any, Any] | list[Any], depth: int, room: int, limits: ValueLimits) -> int:
    """What is left of ``room`` bytes once the non-empty container ``node`` is written, at least;
    negative when ``node`` holds anything but exactly str keys, str, int, bool, None, finite
    floats, dicts and lists, or is over ``limits`` of depth, items or string length. Every node
    is counted where it occurs, so shared references cannot make orjson write more than about
    ``room``. A tight recursion (depth is at most `ValueLimits.max_depth`), a quarter of what
    `first_problem`'s walk costs: it builds no pointer, and a problem sends the value there."""
    if len(node) > limits.max_items or depth >= limits.max_depth:
        return -1
    room -= 2 * len(node)  # each entry writes a byte and a comma or bracket, at least
    if type(node) is dict:
        room = _room_after_keys(node, room, limits)
        return _room_left_members(node.values(), depth, room, limits) if room >= 0 else -1
    if isinstance(node, list) and _are_rows(node):
        return _room_left_rows(node, depth + 1, room, limits)
    return _room_left_members(node, depth, room, limits)


def _room_left_members(members: Iterable[Any], depth: int, room: int, limits: ValueLimits) -> int:
    """`_room_left` of the members of a container at ``depth``, the container's own bytes
    counted already."""
    for member in members:
        kind = type(member)
        if kind is str:
            if len(member) > limits.max_string:
                return -1
            room -= len(member)
        elif kind is dict or kind is list:
            if member:
                room = _room_left(member, depth + 1, room, limits)
        elif not _plain_scalar(member):
            return -1
        if room < 0:
            return -1
    return room


_ROWS_FROM = 8  # objects of one shape in a list from which they are measured column by column
_FLATTEN_UP_TO = 1 << 16  # items of a column of arrays measured as one column, at most
_NUMBERS = frozenset((int, bool, type(None)))


def _are_rows(items: Sequence[Any]) -> bool:
    """Whether ``items`` are enough objects, exactly dicts, of one shape (records)."""
    return (
        len(items) >= _ROWS_FROM
        and set(map(type, items)) == {dict}
        and len(set(map(tuple, items))) == 1
    )


def _room_left_rows(
    rows: Sequence[dict[str, Any]], depth: int, room: int, limits: ValueLimits
) -> int:
    """`_room_left` of each of ``rows`` (exactly dicts of one shape, at ``depth``), summed, a
    column of members at a time: the keys are checked once, and a column of strings, numbers
    or arrays of them is checked in a few passes in C, not value by value."""
    if depth >= limits.max_depth or not rows[0]:
        return -1 if depth >= limits.max_depth else room
    keys = rows[0]
    if len(keys) > limits.max_items or _room_after_keys(keys, limits.max_bytes, limits) < 0:
        return -1
    room -= len(rows) * (2 * len(keys) + sum(map(len, keys)))
    for column in zip(*map(dict.values, rows), strict=True):
        room = _room_left_column(column, depth + 1, room, limits)
        if room < 0:
            return -1
    return room


def _room_left_column(column: tuple[Any, ...], depth: int, room: int, limits: ValueLimits) -> int:
    """What is left of ``room`` once the values of ``column``, each at ``depth``, are written,
    at least; negative as for `_room_left`."""
    kinds = set(map(type, column))
    left = _room_left_leaves(column, kinds, room, limits)
    if left is not None:
        return left
    if kinds == {list} and sum(map(len, column)) <= _FLATTEN_UP_TO:
        return _room_left_arrays(column, depth, room, limits)
    if kinds == {dict} and _are_rows(column):
        return _room_left_rows(column, depth, room, limits)
    return _room_left_members(column, depth - 1, room, limits)  # as an array's one level up


def _room_left_leaves(
    column: tuple[Any, ...], kinds: set[type], room: int, limits: ValueLimits
) -> int | None:
    """`_room_left_column` of a column of strings, of numbers, or of ints, bools and nulls;
    None for any other column."""
    if kinds == {str}:
        return room - sum(map(len, column)) if max(map(len, column)) <= limits.max_string else -1
    if kinds <= _NUMBERS:
        return room if _plain_integers(column, kinds) else -1
    if kinds == {float}:
        return room if all(map(math.isfinite, column)) else -1
    return None


def _plain_integers(column: tuple[Any, ...], kinds: set[type]) -> bool:
    """Whether a column of ints, bools and None holds only ints within 64 bits."""
    if int not in kinds:
        return True
    numbers = column if kinds == {int} else [value for value in column if type(value) is int]
    return bool(_INT64[0] <= min(numbers) and max(numbers) <= _INT64[1])


def _room_left_arrays(
    column: tuple[list[Any], ...], depth: int, room: int, limits: ValueLimits
) -> int:
    """A column of arrays at ``depth``: their items measured as one column."""
    lengths = list(map(len, column))
    if max(lengths) > limits.max_items or (depth >= limits.max_depth and any(lengths)):
        return -1
    room -= 2 * sum(lengths)
    items = tuple(itertools.chain.from_iterable(column))
    return _room_left_column(items, depth + 1, room, limits) if items and room >= 0 else room


def _room_after_keys(node: dict[Any, Any], room: int, limits: ValueLimits) -> int:
    """What is left of ``room`` once the keys of ``node`` are written, at least; negative when
    one is not exactly a str, or is over ``limits.max_string``."""
    for key in node:
        if type(key) is not str or len(key) > limits.max_string:
            return -1
        room -= len(key)
    return room


def size_of(value: Any) -> int:
    """The bytes of ``value`` (plain JSON) as compact JSON."""
    try:
        return len(orjson.dumps(value))
    except orjson.JSONEncodeError:  # integers beyond 64 bits; the slower writer keeps them
        return len(dumps(value, indent=False).encode("utf-8"))


def bytes_problem(value: Any, limits: ValueLimits) -> ValueProblem | None:
    """Whether ``value`` (plain JSON) writes more than ``limits.max_bytes`` of compact JSON."""
    size = size_of(value)
    return _too_many_bytes(limits, size) if size > limits.max_bytes else None


def _too_many_bytes(limits: ValueLimits, size: int | None, at: str = "") -> ValueProblem:
    """The value (at ``at`` in its document) writes ``size`` bytes of compact JSON (None: more
    than the limit, measured no further)."""
    if size is None:
        message = f"more than the limit of {limits.max_bytes:,} bytes as JSON"
    else:
        message = f"{size:,} bytes as JSON, over the limit of {limits.max_bytes:,} bytes"
    return ValueProblem("too_large", at, "maxBytes", message)


def _plain_scalar(node: Any) -> bool:
    """Whether ``node`` is exactly an int within 64 bits, a finite float, a bool or None."""
    kind = type(node)
    if kind is int:
        return bool(_INT64[0] <= node <= _INT64[1])
    if kind is float:
        return math.isfinite(node)
    return node is None or kind is bool


_SURROGATE = re.compile("[\ud800-\udfff]")


def is_unicode(text: str) -> bool:
    """Whether ``text`` holds no lone surrogate (which no JSON text can hold)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def without_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD."""
    return text if is_unicode(text) else _SURROGATE.sub("\ufffd", text)


def _lone_surrogate(pointer: str) -> ValueProblem:
    message = "lone surrogate in a string: JSON text must be valid Unicode"
    return ValueProblem("malformed", pointer, "json_lone_surrogate", message)


def _not_json(node: Any, pointer: str) -> ValueProblem | None:
    if isinstance(node, str):
        return None if is_unicode(node) else _lone_surrogate(pointer)
    if node is None or isinstance(node, bool | dict | list):
        return None
    if isinstance(node, int):
        fits = _INT64[0] <= node <= _INT64[1]
        message = "integer beyond 64 bits: it cannot be kept exact; send a string"
        return None if fits else ValueProblem("malformed", pointer, "json_big_integer", message)
    if isinstance(node, float):
        message = "NaN and Infinity are not JSON numbers; use null or a string"
        finite = math.isfinite(node)
        return None if finite else ValueProblem("malformed", pointer, "json_non_finite", message)
    message = f"a {type(node).__name__} is not a JSON value"
    return ValueProblem("malformed", pointer, _JSON_TYPE, message)


def _too_long(pointer: str, what: str, size: int, limit: int) -> ValueProblem:
    unit = "characters" if what in ("string", "key") else "items" if what == "array" else "members"
    keyword = "maxLength" if unit == "characters" else "maxItems"
    return ValueProblem(
        "too_large", pointer, keyword, f"{what} of {size} {unit}, over the limit of {limit}"
    )


def replaced(document: Any, pointer: str, value: Any) -> Any:
    """``document`` with the value at ``pointer`` replaced by ``value``: the containers on the
    way are copied, so ``document`` itself is left as it was."""
    tokens = split(pointer)
    if not tokens:
        return value
    head, rest = tokens[0], "".join("/" + escape(t) for t in tokens[1:])
    if isinstance(document, list):
        index = int(head)
        copy = list(document)
        copy[index] = replaced(document[index], rest, value)
        return copy
    copy_of = dict(document)
    copy_of[head] = replaced(document[head], rest, value)
    return copy_of

"""A trace file's lines: one hop as one line of JSON, and the hops read back from lines.

Writing never fails on a value: what orjson cannot write (an integer beyond 64 bits, a lone
surrogate, nesting past its limit, a value that is not JSON) is written by the standard library,
exactly where it can be; where it cannot, the line says so in a ``note`` member beside the hop
(a lone surrogate becomes U+FFFD, NaN and infinities null, nesting past `MAX_DEPTH` levels is
cut, any other object becomes its text).

Reading goes on after a line that a crash cut short (one that starts like a hop and does not
end as one): it is skipped and reported, and a hop that a later process appended on the same
line is read, in time linear in the line.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from schemawire._json import ParseLimits, loads
from schemawire.errors import ErrorCode, JSONError
from schemawire.gates._values import is_unicode, without_lone_surrogates
from schemawire.types import Hop

__all__ = ["MAX_DEPTH", "hop_line", "hops_of"]

MAX_DEPTH = 200
"""Levels of nesting a hop's payload or verdict keeps in a trace file (a gate refuses far less)."""

HOP_START = b'{"run":'
"""How every line a trace writes begins."""

CutLine = Callable[[int], None]  # told the number of each line a crash cut short


def hop_line(hop: Hop) -> bytes:
    """``hop`` as one line of JSON (without its newline)."""
    value = hop.to_json()
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return _careful_line(value)


def _careful_line(value: dict[str, Any]) -> bytes:
    """The line the standard library writes: integers beyond 64 bits exact; whatever cannot be
    written exactly is replaced, and named in ``note``."""
    notes: set[str] = set()
    kept = {key: _writable(member, notes, MAX_DEPTH) for key, member in value.items()}
    if notes:
        kept["note"] = "not kept exactly: " + "; ".join(sorted(notes))
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _writable(value: Any, notes: set[str], depth: int) -> Any:
    """``value`` as the standard library can write it to UTF-8: replaced where it cannot be."""
    if isinstance(value, dict | list | tuple):
        return _container(value, notes, depth)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _text(value, notes)
    if isinstance(value, int):
        return int(value)  # exact, however long
    if isinstance(value, float):
        return _number(value, notes)
    notes.add(f"a {type(value).__name__} as its text")
    return _text(str(value), notes)


def _container(
    value: dict[Any, Any] | list[Any] | tuple[Any, ...], notes: set[str], depth: int
) -> Any:
    if depth == 0:
        notes.add(f"nesting deeper than {MAX_DEPTH} levels cut")
        return "[cut]"
    if isinstance(value, dict):
        return {_key(k, notes): _writable(v, notes, depth - 1) for k, v in value.items()}
    return [_writable(item, notes, depth - 1) for item in value]


def _text(text: str, notes: set[str]) -> str:
    if is_unicode(text):
        return text
    notes.add("lone surrogates as U+FFFD")
    return without_lone_surrogates(text)


def _key(key: object, notes: set[str]) -> str:
    if not isinstance(key, str):
        notes.add("a key that is not a string as its text")
    return _text(key if isinstance(key, str) else str(key), notes)


def _number(number: float, notes: set[str]) -> float | None:
    if math.isfinite(number):
        return number
    notes.add("NaN and infinities as null")
    return None


def hops_of(lines: Iterable[bytes], source: str, on_cut: CutLine | None = None) -> Iterator[Hop]:
    """The hops of a trace file's ``lines``, in order; each line a crash cut short is skipped
    (``on_cut`` is told its number), and a hop appended after it on the same line is read.

    Raises:
        JSONError: a line is not a hop, and does not start like one.
    """
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        hop = _hop_or_none(line)
        if hop is None:
            hop = _after_cut(line, source, number)
            if on_cut is not None:
                on_cut(number)
        if hop is not None:
            yield hop


def _after_cut(line: bytes, source: str, number: int) -> Hop | None:
    """The hop a later writer appended to a line cut short, if any.

    Raises:
        JSONError: the line does not start like a hop: the file is not a trace.
    """
    if not (line.startswith(HOP_START) or HOP_START.startswith(line.rstrip())):
        raise JSONError(
            ErrorCode.JSON_SYNTAX,
            "not a hop: a trace's lines are hops",
            source=source,
            line=number,
            column=1,
        )
    return _joined_hop(line)


_DECODER = json.JSONDecoder()
_HOP_HEAD = HOP_START.decode()


def _joined_hop(line: bytes) -> Hop | None:
    """The hop that starts at some ``{"run":`` after the first and ends the line, if any.

    Each candidate is parsed in place (no copy of the rest of the line) by a decoder that stops
    where its value ends, so one that ends before the line does costs only its own length; only
    a candidate that reaches the end of the line is read again, strictly, as a hop. (Objects
    nest no deeper than a trace writes, so the candidates a parse runs through are few.)
    """
    text = line.decode("utf-8", "surrogateescape")  # offsets as characters; bytes kept as is
    end = len(text.rstrip())
    start = text.find(_HOP_HEAD, 1)
    while start != -1:
        try:
            _, stop = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            stop = -1
        if stop == end:
            hop = _hop_or_none(text[start:].encode("utf-8", "surrogateescape"))
            if hop is not None:
                return hop
        start = text.find(_HOP_HEAD, start + 1)
    return None


def _hop_or_none(line: bytes) -> Hop | None:
    try:
        record = _parsed(line)
        return Hop(
            record["run"],
            record["seq"],
            record["time"],
            record["from"],
            record["to"],
            record["protocol"],
            record["direction"],
            record["payload"],
            record.get("verdict"),
            record.get("span"),
        )
    except (orjson.JSONDecodeError, JSONError, KeyError, TypeError):
        return None


# 19 digits in a row may be an integer beyond 64 bits, which orjson would turn into a float
# (-9223372036854775809, one below the least signed 64-bit integer, has 19).
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
_EXACT = ParseLimits(max_bytes=2**31 - 1, max_depth=250, allow_duplicate_keys=True)


def _parsed(line: bytes) -> Any:
    """A line of a trace file: orjson's speed, the checked parser's exact integers where a
    number may need them (a line nested deeper than it reads is read by orjson: a hop with an
    inexact integer is better than none)."""
    if _LONG_DIGITS.search(line):
        try:
            return loads(line, limits=_EXACT)
        except JSONError as error:
            if error.code != ErrorCode.JSON_TOO_DEEP:
                raise
    return orjson.loads(line)

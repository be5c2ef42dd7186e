"""The one entry point for JSON: parsing with limits and positions, and stable dumping.

Every JSON text schemawire reads (schema files, fixtures, tool arguments, results, traces) goes
through `loads`, `load_file` or `loads_lines`. Each refuses, with a `JSONError` that carries a
stable code, line, column and a caret excerpt:

- texts larger than ``ParseLimits.max_bytes`` (a file is measured before it is read) or nested
  deeper than ``ParseLimits.max_depth``;
- ``NaN``, ``Infinity`` and numbers that overflow to infinity, which are not JSON;
- invalid UTF-8 and lone surrogates, raw or escaped;
- duplicate keys, which every parser silently resolves to the last value (option, on by default);
- integers beyond 64 bits are kept exact (default) or refused, never silently turned into floats.

The fast path is orjson plus its own compact writing of the value: a text equal to that writing
(the usual tool call) has lost no member and no integer's exactness; any other is checked by
counting members and searching for long integers, in passes over bytes, as is its depth. The
position-tracking scanner in `_jsonpos` only runs once a problem is known, to say where it is.
(jiter, which finds duplicate keys itself, parsed the gate bench's 20-item order about 1.4x
slower than this whole path, with its duplicate-key check on; on the small refund it tied.)
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import orjson

from schemawire._jsonpos import ScanError, excerpt, iter_nodes, position
from schemawire._pointer import split
from schemawire.errors import ErrorCode, JSONError, UsageError

__all__ = [
    "DEFAULT_LIMITS",
    "JSONLine",
    "JSONValue",
    "ParseLimits",
    "canonical",
    "dumps",
    "json_in_text",
    "load_file",
    "loads",
    "loads_lines",
    "loads_written",
    "nests_within",
    "quoted",
    "reads_plainly",
    "written_alike",
]

JSONValue: TypeAlias = dict[str, "JSONValue"] | list["JSONValue"] | str | int | float | bool | None

_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_OR_32_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
_BOM_LEADS = frozenset(bom[0] for bom in (_UTF8_BOM, *_UTF16_OR_32_BOMS))
# A \u003a escape: a backslash that is not itself escaped (an even run of backslashes before it).
_ESCAPED_COLON = re.compile(rb"(?<!\\)(?:\\\\)*\\u003[aA]")
_DIGITS_AS_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGIT_RUN = b"0" * 19
_INTEGER_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?![.eE0-9])")
# A string literal (kept as it is) or an integer literal of 19 digits or more (group 1).
_STRING_OR_LONG_INTEGER = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"|(?<![0-9.eE+-])(-?[1-9][0-9]{18,})(?![.eE0-9])'
)
_NON_FINITE_LITERAL = re.compile(r"-?(?:NaN|Infinity)")
# A text's outline: its brackets (each read as a brace: depth counts either kind) and quotes.
_BRACKETS_AS_BRACES = bytes.maketrans(b"[]", b"{}")
_NOT_IN_OUTLINE = bytes(byte for byte in range(256) if byte not in b'{}[]"')


@dataclass(frozen=True, slots=True)
class ParseLimits:
    """What a JSON text may be, and how it is read: the parser's limits and policies.

    (`schemawire.gates.ValueLimits` is the gates' own: how large a value may be, text or
    parsed; the argument gate parses within it.)

    Attributes:
        max_bytes: largest accepted text, in bytes of UTF-8.
        max_depth: most arrays and objects a value may sit inside (at most 250).
        allow_duplicate_keys: accept an object that repeats a key (the last value wins).
        big_integers: ``"exact"`` keeps integers beyond 64 bits as exact Python ints;
            ``"reject"`` refuses them.
    """

    max_bytes: int = 16 * 1024 * 1024
    max_depth: int = 128
    allow_duplicate_keys: bool = False
    big_integers: Literal["exact", "reject"] = "exact"

    def __post_init__(self) -> None:
        if not 1 <= self.max_depth <= 250:
            raise UsageError("max_depth must be between 1 and 250")
        if self.max_bytes < 1:
            raise UsageError("max_bytes must be positive")


DEFAULT_LIMITS = ParseLimits()


@dataclass(frozen=True, slots=True)
class JSONLine:
    """One line of a JSON Lines text: its 1-based number and its value, or why it was refused."""

    number: int
    value: JSONValue = None
    error: JSONError | None = None


def loads(
    data: bytes | bytearray | memoryview | str,
    *,
    limits: ParseLimits = DEFAULT_LIMITS,
    source: str = "<input>",
) -> JSONValue:
    """Parse one JSON text.

    Args:
        data: the text, as UTF-8 bytes or a str.
        limits: what the text may be.
        source: a file name or label used in error messages.

    Raises:
        JSONError: the text is not acceptable; ``code`` says why and the error says where.
    """
    raw = _to_bytes(data, limits, source)
    return _parse_bytes(raw, limits, source)[0]


def loads_written(
    data: bytes | bytearray | memoryview | str,
    *,
    limits: ParseLimits = DEFAULT_LIMITS,
    source: str = "<input>",
    depth_vouched: bool = False,
) -> tuple[JSONValue, bytes | None]:
    """`loads`, and orjson's compact text of the value, which its checks wrote on the way: a
    caller with more to ask of the value than the parser does may search that text instead of
    walking the value. None when the value was read otherwise (integers beyond 64 bits).

    ``depth_vouched`` skips the depth limit, for a caller that holds the value to a schema that
    accepts nothing deeper and reads it again, with the limit, when the schema refuses it.

    Raises:
        JSONError: the text is not acceptable (as `loads`).
    """
    raw = _to_bytes(data, limits, source)
    return _parse_bytes(raw, limits, source, depth_vouched)


def load_file(
    path: str | os.PathLike[str],
    *,
    limits: ParseLimits = DEFAULT_LIMITS,
    source: str | None = None,
) -> JSONValue:
    """Parse the JSON file at ``path``; a file over the size limit is refused before it is read.

    Raises:
        JSONError: the file is not acceptable JSON.
        OSError: the file cannot be read.
    """
    label = source if source is not None else os.fspath(path)
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size > limits.max_bytes:
            raise _too_large(size, limits, label)
        raw = file.read(limits.max_bytes + 1)
    if len(raw) > limits.max_bytes:
        raise _too_large(len(raw), limits, label)
    return _parse_bytes(raw, limits, label)[0]


def loads_lines(
    data: bytes | bytearray | memoryview | str,
    *,
    limits: ParseLimits = DEFAULT_LIMITS,
    source: str = "<input>",
) -> Iterator[JSONLine]:
    """Parse JSON Lines: one result per non-blank line, so one bad line hides none of the others.

    ``limits`` apply to each line. Errors carry the line number of the whole text.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if raw.startswith(_UTF8_BOM):
        raw = raw[len(_UTF8_BOM) :]
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip(b" \t\r"):
            continue
        try:
            yield JSONLine(number, loads(line, limits=limits, source=source))
        except JSONError as error:
            yield JSONLine(number, error=_on_line(error, number))


def dumps(value: JSONValue, *, indent: bool = True, sort_keys: bool = False) -> str:
    """Serialise ``value`` stably: key order kept (unless sorted), non-ASCII left readable.

    ``indent`` gives two-space indentation; otherwise the text is compact. Integers beyond 64 bits
    are written exactly.
    """
    option = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        return orjson.dumps(value, option=option).decode("utf-8")
    except orjson.JSONEncodeError:
        # orjson refuses integers beyond 64 bits; the standard library writes them exactly.
        separators = (",", ": ") if indent else (",", ":")
        return json.dumps(
            value,
            ensure_ascii=False,
            allow_nan=False,
            indent=2 if indent else None,
            separators=separators,
            sort_keys=sort_keys,
        )


def written_alike(a: JSONValue, b: JSONValue) -> bool:
    """Whether ``a`` and ``b`` are written as the same JSON text: equal, and alike in every type
    and key order (Python's ``1 == True == 1.0`` are three texts)."""
    return a == b and dumps(a, indent=False) == dumps(b, indent=False)


def json_in_text(
    text: str, limits: ParseLimits = DEFAULT_LIMITS
) -> dict[str, Any] | list[Any] | None:
    """The object or array ``text`` holds, if it is one and within ``limits`` (a tool's text
    content that is JSON); None for anything else. Most text is prose: it is not parsed, since a
    failed parse builds a whole error with a caret."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        value = loads(text, limits=limits, source="<text content>")
    except JSONError:
        return None
    return value if isinstance(value, dict | list) else None


def canonical(value: Any, *, whole_floats_up_to: float = math.inf) -> str:
    """One text for JSON values that are equal, to compare or key them by: a whole float is its
    integer (JSON Schema holds ``20`` and ``20.0`` equal), object keys are sorted, ``true`` and
    ``1`` stay apart. Compact, and exact for integers of any size. A whole float larger in
    magnitude than ``whole_floats_up_to`` stays a float (the idempotency key's rule)."""
    return dumps(_whole_floats_as_ints(value, whole_floats_up_to), indent=False, sort_keys=True)


def _whole_floats_as_ints(value: Any, bound: float) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) <= bound:
        return int(value)
    if isinstance(value, list | tuple):
        return [_whole_floats_as_ints(item, bound) for item in value]
    if isinstance(value, dict):
        return {key: _whole_floats_as_ints(item, bound) for key, item in value.items()}
    return value


def quoted(value: Any) -> str:
    """``value`` as compact JSON (``"int"``, ``1``, ``null``): how a message quotes a value, never
    a Python repr. A value JSON cannot hold (a set, bytes...) falls back to its repr."""
    try:
        return dumps(value, indent=False)
    except (TypeError, ValueError):
        return repr(value)


def reads_plainly(data: bytes) -> bool:
    """Whether orjson reads the JSON text ``data`` and keeps every member of it: False for a
    text with a duplicate key, ``NaN`` or ``Infinity``, an integer beyond 64 bits, nesting past
    orjson's limit, or anything else orjson refuses.

    What `loads` decides first, at orjson's speed; it says nothing of where a problem is, which
    `loads` then finds (a slower scan).
    """
    try:
        written = orjson.dumps(orjson.loads(data))
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # orjson writes 254 levels at most
        return False
    return not _lost_members(data, written)


def _to_bytes(
    data: bytes | bytearray | memoryview | str, limits: ParseLimits, source: str
) -> bytes:
    if not isinstance(data, str):
        size = data.nbytes if isinstance(data, memoryview) else len(data)
        if size > limits.max_bytes:  # measured before a copy is made
            raise _too_large(size, limits, source)
        raw = bytes(data)
    elif len(data) > limits.max_bytes:
        raise _too_large(len(data), limits, source)
    else:
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _error(
                ErrorCode.JSON_LONE_SURROGATE,
                "lone surrogate in text; JSON text must be valid Unicode",
                data,
                exc.start,
                source,
            ) from None
    if len(raw) > limits.max_bytes:
        raise _too_large(len(raw), limits, source)
    return raw


def _parse_bytes(
    raw: bytes, limits: ParseLimits, source: str, depth_vouched: bool = False
) -> tuple[JSONValue, bytes | None]:
    if raw and raw[0] in _BOM_LEADS:  # decided on one byte: most texts have no mark
        raw = _strip_bom(raw, source)
    value, written, exactness_in_doubt = _parse_fast(raw, limits, source, depth_vouched)
    if exactness_in_doubt:
        text = raw.decode("utf-8")
        masked, big = _mask_big_integers(text)
        if big:
            return _parse_big_integers(text, masked, big, limits, source), None
    return value, written


def _parse_fast(
    raw: bytes, limits: ParseLimits, source: str, depth_vouched: bool = False
) -> tuple[JSONValue, bytes, bool]:
    """orjson plus byte-level checks: the value, orjson's compact text of it, and whether a big
    integer may have lost exactness.

    One re-serialisation serves every check. A text that is orjson's own compact writing of
    the value (the usual tool call) cannot have lost a member or an integer's exactness: no
    further pass over it is needed.
    """
    try:
        value: JSONValue = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if _overflowing_integer(raw, exc):
            return None, b"", True
        raise _decode_error(raw, exc, limits, source) from None
    if (
        not depth_vouched
        and len(raw) > limits.max_depth
        and not _surely_shallow(raw, limits.max_depth)
    ):
        _refuse_too_deep(value, raw, limits, source)
    written = orjson.dumps(value)
    if written == raw:
        return value, written, False
    if not limits.allow_duplicate_keys and _lost_members(raw, written):
        _refuse_duplicate_keys(raw.decode("utf-8"), source)
    # orjson turns integers beyond 64 bits into floats: a long run of digits needs a closer look.
    return value, written, _LONG_DIGIT_RUN in raw.translate(_DIGITS_AS_ZEROS)


def _surely_shallow(raw: bytes, max_depth: int) -> bool:
    """Whether the JSON text ``raw`` surely nests no deeper than ``max_depth``; False when not
    sure (the indented writing then measures it).

    Its outline (the brackets and quotes, every bracket read as a brace) decides, in passes over
    bytes: no more brackets than the limit is shallow. Otherwise, in a text without a backslash
    each string is a pair of quotes; when no string holds a bracket, every string is an
    adjacent pair, and what remains is the nesting alone, which loses one level per removal of
    its adjacent ``{}`` pairs: gone within ``max_depth`` removals, no value sits deeper.
    """
    outline = raw.translate(_BRACKETS_AS_BRACES, _NOT_IN_OUTLINE)
    if len(outline) - outline.count(b'"') <= max_depth:
        return True
    if 92 in raw:  # a backslash: an escaped quote would hide where a string ends
        return False
    nesting = outline.replace(b'""', b"")
    if 34 in nesting:  # a string holds a bracket
        return False
    for _ in range(max_depth):
        nesting = nesting.replace(b"{}", b"")
        if not nesting:
            return True
    return False


def nests_within(value: JSONValue, written: bytes, max_depth: int) -> bool:
    """Whether ``value`` sits inside no more than ``max_depth`` arrays and objects, as the
    parser's depth limit counts; ``written`` is its compact text (`loads_written`)."""
    if len(written) <= max_depth or _surely_shallow(written, max_depth):
        return True
    return _indented_within(value, max_depth)


def _refuse_too_deep(value: JSONValue, raw: bytes, limits: ParseLimits, source: str) -> None:
    """Raise when ``value`` nests deeper than ``limits`` allow."""
    if not _indented_within(value, limits.max_depth):
        raise _too_deep(raw.decode("utf-8"), limits, source)


def _indented_within(value: JSONValue, max_depth: int) -> bool:
    """Whether ``value`` nests no deeper than ``max_depth``, measured on its indented writing.

    Strings never hold a raw newline in JSON, so in the value written with two-space
    indentation, a value nested inside N arrays and objects starts a line indented by exactly 2N
    spaces: the text measures depth at the speed of bytes.
    """
    try:
        indented = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:
        return False  # orjson writes at most 254 levels, more than ParseLimits.max_depth allows
    return b"\n" + b"  " * (max_depth + 1) not in indented


def _strip_bom(raw: bytes, source: str) -> bytes:
    # RFC 8259 lets a parser ignore a UTF-8 byte order mark; editors on Windows still write one.
    if raw.startswith(_UTF8_BOM):
        return raw[len(_UTF8_BOM) :]
    if raw.startswith(_UTF16_OR_32_BOMS):
        raise JSONError(
            ErrorCode.JSON_UNSUPPORTED_ENCODING,
            "text starts with a UTF-16 or UTF-32 byte order mark; JSON must be UTF-8 "
            "(save the file as UTF-8)",
            source=source,
            line=1,
            column=1,
        )
    return raw


def _lost_members(raw: bytes, written: bytes) -> bool:
    """Whether parsing dropped object members, which only duplicate keys make it do.

    Outside strings each ':' separates one member, and orjson writes ':' inside strings as it is
    (including those the text wrote as \\u003a): so the text, with its escaped colons counted,
    and its re-serialisation have as many colons unless a member was dropped.
    """
    colons = raw.count(b":")
    if b"\\" in raw and b"\\u003" in raw:  # most texts have no escape at all
        colons += len(_ESCAPED_COLON.findall(raw))
    return colons != written.count(b":")


def _refuse_duplicate_keys(text: str, source: str) -> None:
    for node in iter_nodes(text):
        if node.duplicate:
            offset = node.key_offset if node.key_offset is not None else node.offset
            key = split(node.pointer)[-1]
            raise _error(
                ErrorCode.JSON_DUPLICATE_KEY,
                f"duplicate key {json.dumps(key, ensure_ascii=False)}: JSON parsers keep "
                "only one of the values; remove one",
                text,
                offset,
                source,
                pointer=node.pointer,
            )


def _overflowing_integer(raw: bytes, exc: orjson.JSONDecodeError) -> bool:
    # orjson refuses an integer literal too large even for a double as "infinity".
    if "infinity" not in exc.msg:
        return False
    text = raw.decode("utf-8", "replace")
    return _INTEGER_LITERAL.match(text, exc.pos) is not None


def _parse_big_integers(
    text: str, masked: str, big: list[tuple[int, str]], limits: ParseLimits, source: str
) -> JSONValue:
    """Keep integers beyond 64 bits exact, which orjson turns into floats or refuses.

    orjson vets the text with those integers masked (same length, so positions hold); the
    standard library, which keeps integers exact, then parses the vetted text.
    """
    try:
        _parse_fast(masked.encode("utf-8"), limits, source)
    except JSONError as error:
        raise _shown_in(text, error) from None
    if limits.big_integers == "reject":
        for offset, literal in big:
            if _beyond_64_bits(literal):
                raise _big_integer(text, masked, offset, source, "integer beyond 64 bits")
    try:
        value: JSONValue = json.loads(text)
    except ValueError:
        # More digits than sys.get_int_max_str_digits() allows: no exact value to keep.
        offset = next(offset for offset, literal in big if _beyond_int_digits(literal))
        raise _big_integer(text, masked, offset, source, "integer with too many digits") from None
    return value


def _mask_big_integers(text: str) -> tuple[str, list[tuple[int, str]]]:
    big: list[tuple[int, str]] = []

    def mask(match: re.Match[str]) -> str:
        literal = match.group(1)
        if literal is None:
            return match.group()
        big.append((match.start(), literal))
        return "0".ljust(len(literal))

    return _STRING_OR_LONG_INTEGER.sub(mask, text), big


def _beyond_64_bits(literal: str) -> bool:
    return len(literal) > 21 or not _INT64_MIN <= int(literal) <= _UINT64_MAX


def _beyond_int_digits(literal: str) -> bool:
    limit = sys.get_int_max_str_digits()
    return limit > 0 and len(literal.lstrip("-")) > limit


def _big_integer(text: str, masked: str, offset: int, source: str, what: str) -> JSONError:
    pointer = next((node.pointer for node in iter_nodes(masked) if node.offset == offset), None)
    return _error(
        ErrorCode.JSON_BIG_INTEGER,
        f"{what}: it cannot be kept exact; send it as a string",
        text,
        offset,
        source,
        pointer=pointer,
    )


def _decode_error(
    raw: bytes, exc: orjson.JSONDecodeError, limits: ParseLimits, source: str
) -> JSONError:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        prefix = raw[: bad.start].decode("utf-8")
        shown = prefix + raw[bad.start :].decode("utf-8", "replace")
        return _error(
            ErrorCode.JSON_INVALID_UTF8,
            f"invalid UTF-8 (byte 0x{raw[bad.start]:02x}); JSON text must be UTF-8",
            shown,
            len(prefix),
            source,
        )
    message = exc.msg
    if "depth limit" in message:
        return _too_deep(text, limits, source)
    if "surrogate" in message:
        return _error(
            ErrorCode.JSON_LONE_SURROGATE,
            f"{message}; a \\uD800-\\uDFFF escape must be part of a surrogate pair",
            text,
            exc.pos,
            source,
        )
    if "infinity" in message or _NON_FINITE_LITERAL.match(text, exc.pos):
        start = exc.pos - 1 if text[exc.pos - 1 : exc.pos] == "-" else exc.pos
        return _error(
            ErrorCode.JSON_NON_FINITE,
            "NaN and Infinity are not JSON numbers; use null or a string",
            text,
            start,
            source,
        )
    return _error(ErrorCode.JSON_SYNTAX, message, text, exc.pos, source)


def _too_deep(text: str, limits: ParseLimits, source: str) -> JSONError:
    offset = 0
    try:
        for node in iter_nodes(text):
            if node.depth > limits.max_depth:
                offset = node.offset
                break
    except ScanError as stop:
        offset = stop.offset
    return _error(
        ErrorCode.JSON_TOO_DEEP,
        f"nested deeper than {limits.max_depth} levels",
        text,
        offset,
        source,
    )


def _too_large(size: int, limits: ParseLimits, source: str) -> JSONError:
    return JSONError(
        ErrorCode.JSON_TOO_LARGE,
        f"{size:,} bytes is over the limit of {limits.max_bytes:,} bytes",
        source=source,
    )


def _error(
    code: ErrorCode,
    message: str,
    text: str,
    offset: int,
    source: str,
    *,
    pointer: str | None = None,
) -> JSONError:
    line, column = position(text, offset)
    return JSONError(
        code,
        message,
        source=source,
        pointer=pointer,
        line=line,
        column=column,
        excerpt=excerpt(text, offset),
    )


def _shown_in(text: str, error: JSONError) -> JSONError:
    """``error`` with its excerpt taken from ``text`` (same length as the text it was found in)."""
    if error.line is None or error.column is None:
        return error
    line_start = 0
    for _ in range(error.line - 1):
        line_start = text.index("\n", line_start) + 1
    offset = line_start + error.column - 1
    return _error(error.code, error.message, text, offset, error.source, pointer=error.pointer)


def _on_line(error: JSONError, number: int) -> JSONError:
    """An error from one line of JSON Lines, moved to that line of the whole text."""
    return JSONError(
        error.code,
        error.message,
        source=error.source,
        pointer=error.pointer,
        line=number if error.line is not None else None,
        column=error.column,
        excerpt=error.excerpt,
    )

"""`schemawire._json`: hostile input is refused with a code, a line, a column and a caret."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemawire._json import ParseLimits, dumps, load_file, loads, loads_lines, loads_written
from schemawire.errors import ErrorCode, JSONError, UsageError
from tests.helpers import same_json
from tests.strategies import json_values


def refusal(data: bytes | str, **limits: Any) -> JSONError:
    with pytest.raises(JSONError) as caught:
        loads(data, limits=ParseLimits(**limits))
    return caught.value


HOSTILE = [
    # (label, input, code, line, column)
    ("truncated", b'{"city": "\xe4\xb8\x8a', ErrorCode.JSON_SYNTAX, 1, 12),
    ("truncated object", b'{"city": "x",\n "unit": ', ErrorCode.JSON_SYNTAX, 2, 10),
    ("trailing comma", b'{"a": 1,}', ErrorCode.JSON_SYNTAX, 1, 8),
    ("trailing comma in array", b"[1, 2,\n]", ErrorCode.JSON_SYNTAX, 1, 6),
    ("single quotes", b"{'a': 1}", ErrorCode.JSON_SYNTAX, 1, 2),
    ("empty", b"", ErrorCode.JSON_SYNTAX, 1, 1),
    ("two documents", b"{} {}", ErrorCode.JSON_SYNTAX, 1, 4),
    ("duplicate key", b'{"a": 1,\n "a": 2}', ErrorCode.JSON_DUPLICATE_KEY, 2, 2),
    ("nested duplicate key", b'[{"b": {"x": 1, "x": 1}}]', ErrorCode.JSON_DUPLICATE_KEY, 1, 17),
    ("NaN", b'{"amount": NaN}', ErrorCode.JSON_NON_FINITE, 1, 12),
    ("Infinity", b"[1, Infinity]", ErrorCode.JSON_NON_FINITE, 1, 5),
    ("-Infinity", b"[-Infinity]", ErrorCode.JSON_NON_FINITE, 1, 2),
    ("overflow to infinity", b"[1e400]", ErrorCode.JSON_NON_FINITE, 1, 2),
    ("invalid UTF-8", b'{"city": "\xff"}', ErrorCode.JSON_INVALID_UTF8, 1, 11),
    (
        "invalid UTF-8 after text",
        '{"城": 1,\n "x": "'.encode() + b'\xc3\x28"}',
        ErrorCode.JSON_INVALID_UTF8,
        2,
        8,
    ),
    ("UTF-8 encoded surrogate", b'["\xed\xa0\x80"]', ErrorCode.JSON_INVALID_UTF8, 1, 3),
    ("escaped lone high surrogate", b'["\\ud800"]', ErrorCode.JSON_LONE_SURROGATE, 1, 3),
    ("escaped lone low surrogate", b'["\\udc00x"]', ErrorCode.JSON_LONE_SURROGATE, 1, 3),
    ("UTF-16 byte order mark", b"\xff\xfe{\x00}\x00", ErrorCode.JSON_UNSUPPORTED_ENCODING, 1, 1),
    ("deep nesting", b"[" * 100_000 + b"]" * 100_000, ErrorCode.JSON_TOO_DEEP, 1, 130),
]


@pytest.mark.parametrize(
    ("data", "code", "line", "column"),
    [
        pytest.param(data, code, line, column, id=label)
        for label, data, code, line, column in HOSTILE
    ],
)
def test_refuses_hostile_input_with_code_and_position(
    data: bytes, code: ErrorCode, line: int, column: int
) -> None:
    error = refusal(data)
    assert (error.code, error.line, error.column) == (code, line, column)
    if code != ErrorCode.JSON_UNSUPPORTED_ENCODING:  # no text to show: it is not UTF-8
        assert error.excerpt is not None
        assert error.excerpt.splitlines()[1].strip() == "^"


def test_caret_sits_under_the_offending_character() -> None:
    error = refusal('{"城市": "上海",\n  "unit": kelvin}')
    source_line, caret_line = error.excerpt.splitlines()  # type: ignore[union-attr]
    assert source_line[caret_line.index("^")] == "k"


def test_excerpt_of_a_long_line_is_a_window_around_the_column() -> None:
    error = refusal('["' + "x" * 5000 + '", nope]')
    source_line, caret_line = error.excerpt.splitlines()  # type: ignore[union-attr]
    assert len(source_line) < 100
    assert source_line[caret_line.index("^")] == "n"


def test_duplicate_key_error_names_the_key_and_its_pointer() -> None:
    error = refusal(b'{"args": {"city": "a", "city": "b"}}')
    assert error.pointer == "/args/city"
    assert '"city"' in error.message


def test_duplicate_keys_are_accepted_when_allowed_and_the_last_wins() -> None:
    assert loads(b'{"a": 1, "a": 2}', limits=ParseLimits(allow_duplicate_keys=True)) == {"a": 2}


def test_escaped_colons_neither_hide_nor_invent_duplicate_keys() -> None:
    assert loads(b'{"a\\u003a": 1, "a:": 2}', limits=ParseLimits(allow_duplicate_keys=True))
    assert loads(b'{"k\\u003a": "\\u003A", "b": 2}') == {"k:": ":", "b": 2}
    assert refusal(b'{"k\\u003a": 1, "k:": 2}').code == ErrorCode.JSON_DUPLICATE_KEY


def test_strips_a_utf8_byte_order_mark() -> None:
    assert loads(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}


def test_lone_surrogate_in_a_python_string_is_refused() -> None:
    error = refusal('{"a": "\ud800"}')
    assert (error.code, error.column) == (ErrorCode.JSON_LONE_SURROGATE, 8)


def test_integers_beyond_64_bits_are_kept_exact() -> None:
    assert loads(b'{"n": 1180591620717411303424}') == {"n": 2**70}
    assert loads(b"[-99999999999999999999999, 1.5, 1e30]") == [-99999999999999999999999, 1.5, 1e30]
    assert loads(b"[" + b"9" * 400 + b"]") == [int("9" * 400)]


def test_integers_at_the_64_bit_edges_stay_integers() -> None:
    assert loads(b"[18446744073709551615, -9223372036854775808]") == [2**64 - 1, -(2**63)]


def test_integers_beyond_64_bits_are_refused_when_asked() -> None:
    error = refusal(b'{"amount": 1180591620717411303424}', big_integers="reject")
    assert (error.code, error.pointer, error.column) == (ErrorCode.JSON_BIG_INTEGER, "/amount", 12)


def test_integer_too_long_to_hold_is_refused_with_its_position() -> None:
    error = refusal(b'{"n": ' + b"1" * 5000 + b"}")
    assert (error.code, error.pointer, error.column) == (ErrorCode.JSON_BIG_INTEGER, "/n", 7)


def test_long_fraction_digits_are_not_mistaken_for_integers() -> None:
    assert loads(b"[0.12345678901234567890123, 1.5e-25]") == [0.12345678901234568, 1.5e-25]


def test_nesting_up_to_the_limit_is_accepted() -> None:
    assert loads(b"[[[[]]]]", limits=ParseLimits(max_depth=3)) == [[[[]]]]
    assert refusal(b"[[[[[]]]]]", max_depth=3).code == ErrorCode.JSON_TOO_DEEP


def test_deep_nesting_of_objects_is_refused() -> None:
    text = '{"a": ' * 200 + "1" + "}" * 200
    error = refusal(text)
    assert error.code == ErrorCode.JSON_TOO_DEEP


def test_text_over_the_size_limit_is_refused() -> None:
    assert refusal(b"[" + b"1," * 100 + b"1]", max_bytes=64).code == ErrorCode.JSON_TOO_LARGE
    assert refusal("[" + "1," * 100 + "1]", max_bytes=64).code == ErrorCode.JSON_TOO_LARGE


@pytest.mark.parametrize("item_format", ["B", "Q"])
def test_a_large_memoryview_is_refused_by_its_bytes_before_it_is_copied(item_format: str) -> None:
    view = memoryview(bytearray(32 * 1024 * 1024)).cast(item_format)
    tracemalloc.start()
    try:
        with pytest.raises(JSONError) as caught:
            loads(view, limits=ParseLimits(max_bytes=1024))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.code == ErrorCode.JSON_TOO_LARGE
    assert f"{32 * 1024 * 1024:,} bytes" in caught.value.message
    assert peak < 1024 * 1024  # the old code copied all 32 MiB first


def test_a_100_mb_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as file:
        file.truncate(100 * 1024 * 1024)  # sparse: 100 MB on paper, nothing to write
    tracemalloc.start()
    try:
        with pytest.raises(JSONError) as caught:
            load_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.code == ErrorCode.JSON_TOO_LARGE
    assert peak < 1024 * 1024


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "args.json"
    path.write_bytes(b'{"a": 1,}')
    with pytest.raises(JSONError) as caught:
        load_file(path, source="args.json")
    assert str(caught.value).startswith("args.json:1:8: trailing comma")


def test_limits_are_checked_when_created() -> None:
    with pytest.raises(UsageError, match="max_depth"):
        ParseLimits(max_depth=1000)


def test_json_lines_report_each_bad_line_and_keep_the_good_ones() -> None:
    lines = list(loads_lines(b'{"a": 1}\n\n{"a": 2,}\n  \n[NaN]\n{"a": 3}'))
    assert [(line.number, line.value) for line in lines if line.error is None] == [
        (1, {"a": 1}),
        (6, {"a": 3}),
    ]
    errors = [line.error for line in lines if line.error is not None]
    assert [(e.code, e.line, e.column) for e in errors] == [
        (ErrorCode.JSON_SYNTAX, 3, 8),
        (ErrorCode.JSON_NON_FINITE, 5, 2),
    ]


def test_json_lines_accept_crlf_line_ends() -> None:
    assert [line.value for line in loads_lines(b"[1]\r\n[2]\r\n")] == [[1], [2]]


def test_dumps_keeps_key_order_and_readable_text() -> None:
    assert dumps({"b": 1, "a": "上海"}) == '{\n  "b": 1,\n  "a": "上海"\n}'
    assert dumps({"b": 1, "a": [1]}, indent=False) == '{"b":1,"a":[1]}'


def test_dumps_writes_big_integers_exactly() -> None:
    assert dumps({"n": 2**70}, indent=False) == '{"n":1180591620717411303424}'


@pytest.mark.slow
@given(json_values)
@settings(max_examples=300)
def test_loads_agrees_with_the_standard_library(value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert same_json(loads(text), json.loads(text))


@pytest.mark.slow
@given(json_values)
@settings(max_examples=300)
def test_dumps_round_trips_and_is_stable(value: Any) -> None:
    text = dumps(value)
    assert same_json(loads(text), value)
    assert dumps(loads(text)) == text


@given(st.binary(max_size=64))
@settings(max_examples=500)
def test_arbitrary_bytes_either_parse_or_raise_a_located_json_error(data: bytes) -> None:
    error: JSONError | None = None
    try:
        loads(data)
    except JSONError as refused:
        error = refused
    assert error is None or error.line is not None


@given(json_values)
@settings(max_examples=300)
def test_a_text_in_orjsons_own_compact_writing_parses_as_any_other(value: Any) -> None:
    # Such a text skips the member count and the search for long integers: nothing was lost.
    text = dumps(value, indent=False)
    assert same_json(loads(text), json.loads(text))
    assert same_json(loads(text, limits=ParseLimits(big_integers="exact")), json.loads(text))


@pytest.mark.parametrize(
    ("text", "column"),
    [('{"a":1,"a":1}', 8), ('{"a":{"b":[],"b":[]}}', 14), ('[{"k":"v","k":"v"}]', 11)],
)
def test_a_duplicate_key_in_a_compact_text_is_refused_where_it_is(text: str, column: int) -> None:
    error = refusal(text)
    assert (error.code, error.line, error.column) == (ErrorCode.JSON_DUPLICATE_KEY, 1, column)


def test_a_compact_text_with_an_integer_beyond_64_bits_keeps_it_exact_or_refuses_it() -> None:
    text = '{"n":18446744073709551616,"m":-9223372036854775809}'
    assert loads(text) == {"n": 2**64, "m": -(2**63) - 1}
    assert refusal(text, big_integers="reject").code == ErrorCode.JSON_BIG_INTEGER


def test_loads_written_gives_the_value_and_orjsons_writing_of_it() -> None:
    assert loads_written('{"a": [1, 2.0]}') == ({"a": [1, 2.0]}, b'{"a":[1,2.0]}')
    value, written = loads_written('[[1], {"k": []}]', limits=ParseLimits(max_depth=2))
    assert (value, written) == ([[1], {"k": []}], b'[[1],{"k":[]}]')
    assert loads_written('{"n": 18446744073709551616}') == ({"n": 2**64}, None)


def _depth(value: Any) -> int:
    """The most arrays and objects any value of ``value`` sits inside."""
    if isinstance(value, dict | list):
        items = list(value.values()) if isinstance(value, dict) else value
        return max((1 + _depth(item) for item in items), default=0)
    return 0


_bracket_strings = st.text(alphabet='[]{}"\\ab', max_size=4)
_nested = st.recursive(
    st.none() | st.integers(0, 9) | _bracket_strings,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(_bracket_strings, inner, max_size=3)
    ),
    max_leaves=40,
)


@given(_nested, st.integers(1, 6), st.booleans())
@settings(max_examples=500)
def test_depth_is_refused_exactly_past_the_limit_whatever_the_strings_hold(
    value: Any, max_depth: int, indent: bool
) -> None:
    # Strings with brackets, quotes and backslashes beside the brackets that nest.
    text = json.dumps(value, indent=1 if indent else None)
    limits = ParseLimits(max_depth=max_depth)
    if _depth(value) <= max_depth:
        assert loads(text, limits=limits) == value
    else:
        assert refusal(text, max_depth=max_depth).code == ErrorCode.JSON_TOO_DEEP


def test_an_escaped_backslash_before_u003a_is_not_an_escaped_colon() -> None:
    assert loads(b'{"a": "\\\\u003a", "b": 1}') == {"a": "\\u003a", "b": 1}
    assert refusal(b'{"k": "\\\\u003a", "k": 1}').code == ErrorCode.JSON_DUPLICATE_KEY

"""Server-sent events: the standard's parsing rules, any split of the bytes, and httpx2's reader
of the same bytes as a second opinion."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemawire.errors import ErrorCode, InputError
from schemawire.wire.sse import Event, EventParser


def parse(*chunks: bytes) -> list[Event]:
    parser = EventParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    parser.close()
    return events


def test_fields_comments_and_multi_line_data() -> None:
    stream = (
        b": keep-alive\n"
        b"event: content_block_delta\n"
        b'data: {"a":\n'
        b"data:1}\n"
        b"id: 7\n"
        b"retry: 3000\n"
        b"\n"
        b"data\n"
        b"\n"
    )
    assert parse(stream) == [
        Event('{"a":\n1}', "content_block_delta", "7"),
        Event("", "message", "7"),  # a field with no colon has an empty value
    ]


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(end: bytes) -> None:
    stream = end.join([b"event: e", b"data: x", b"", b"data:  two spaces", b"", b""])
    assert parse(stream) == [Event("x", "e"), Event(" two spaces")]


def test_a_crlf_split_between_chunks_is_one_line_end() -> None:
    assert parse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n") == [Event("a\nb")]


def test_an_empty_chunk_between_a_cr_and_its_lf_changes_nothing() -> None:
    assert parse(b"data: a\r", b"", b"\ndata: b\r\n\r\n") == [Event("a\nb")]


def test_a_character_split_between_chunks_is_read_whole() -> None:
    encoded = "data: 上海\n\n".encode()
    assert parse(encoded[:7], encoded[7:]) == [Event("上海")]


def test_a_byte_order_mark_at_the_start_is_skipped() -> None:
    assert parse(b"\xef\xbb", b"\xbfdata: x\n\n") == [Event("x")]


def test_an_event_without_data_is_not_dispatched() -> None:
    assert parse(b"event: ping\n\n: comment\n\nid: 3\n\n") == []


def test_an_event_the_stream_cut_short_is_pending_not_dispatched() -> None:
    parser = EventParser()
    assert parser.feed(b'data: {"complete": true}\n\ndata: {"cut') == [Event('{"complete": true}')]
    assert parser.pending
    parser.close()
    assert not EventParser().pending


def test_an_event_that_outgrows_the_limit_is_refused() -> None:
    parser = EventParser(max_event_size=10)
    parser.feed(b"data: 1234")
    with pytest.raises(InputError) as caught:
        parser.feed(b"5678\n")
    assert caught.value.code == ErrorCode.JSON_TOO_LARGE


def test_bytes_that_are_not_utf8_are_refused() -> None:
    with pytest.raises(InputError) as caught:
        EventParser().feed(b"data: \xff\n\n")
    assert caught.value.code == ErrorCode.JSON_INVALID_UTF8


def test_a_stream_that_ends_inside_a_character_is_refused() -> None:
    parser = EventParser()
    parser.feed("data: 世".encode()[:-1])
    with pytest.raises(InputError) as caught:
        parser.close()
    assert caught.value.code == ErrorCode.JSON_INVALID_UTF8


# --- any stream, split anywhere ------------------------------------------------------------------

LINE_TEXT = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]))
EVENTS = st.lists(
    st.tuples(
        st.one_of(st.none(), LINE_TEXT.filter(lambda name: name != "")),
        st.lists(LINE_TEXT, min_size=1, max_size=3),
        st.one_of(st.none(), LINE_TEXT.filter(lambda value: "\0" not in value)),
        st.booleans(),
    ),
    max_size=6,
)
ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


def written(events: list[Any], ending: str) -> tuple[bytes, list[Event]]:
    """Events as a server writes them (a comment before some), and as a reader must see them."""
    lines: list[str] = []
    expected: list[Event] = []
    last_id: str | None = None
    for name, data, event_id, comment in events:
        if comment:
            lines.append(": keep-alive")
        if name is not None:
            lines.append(f"event: {name}")
        lines.extend(f"data: {line}" for line in data)
        if event_id is not None:
            lines.append(f"id: {event_id}")
            last_id = event_id or None
        lines.append("")
        expected.append(Event("\n".join(data), name or "message", last_id))
    text = "".join(line + ending for line in lines)
    return text.encode(), expected


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` in pieces cut at ``cuts``; a cut made twice gives an empty piece (a network
    read may return nothing)."""
    points = sorted(min(cut, len(data)) for cut in cuts)
    starts, ends = [0, *points], [*points, len(data)]
    return [data[start:end] for start, end in zip(starts, ends, strict=True)]


@settings(max_examples=200)
@given(EVENTS, ENDINGS, st.lists(st.integers(0, 2000), max_size=40))
def test_any_split_of_any_stream_gives_the_events_written(
    events: list[Any], ending: str, cuts: list[int]
) -> None:
    data, expected = written(events, ending)
    assert parse(*split(data, cuts)) == expected


async def httpx2_events(data: bytes, cuts: list[int]) -> list[Event]:
    """The events httpx2's own reader finds in the same bytes, served in the same pieces."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=_Body(split(data, cuts))
        )

    async with (
        httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as client,
        client.sse("http://provider.test/stream") as source,
    ):
        return [Event(e.data, e.event, e.id or None) async for e in source]


class _Body(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> Any:
        for chunk in self.chunks:
            yield chunk


@settings(max_examples=50, deadline=None)
@given(EVENTS, ENDINGS, st.lists(st.integers(0, 2000), max_size=40))
def test_httpx2_reads_the_same_events_from_the_same_bytes(
    events: list[Any], ending: str, cuts: list[int]
) -> None:
    data, expected = written(events, ending)
    assert anyio.run(httpx2_events, data, cuts) == expected == parse(*split(data, cuts))

"""The Run page's trace index without a browser: growing files, cut lines, the pairing rule,
search over the raw bytes, whole request bodies from deltas, and the Runs page's summary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bench.ui import generate

from schemawire.ui._run_folder import TraceFolder, summarise
from schemawire.ui._trace_index import NotATraceError, TraceIndex, whole_body


def _hop(seq: int, protocol: str, direction: str, payload: Any, **more: Any) -> str:
    hop = {"run": "r1", "seq": seq, "time": 100.0 + seq, "from": "host", "to": "mcp:x"}
    hop |= {"protocol": protocol, "direction": direction, "payload": payload, "verdict": None}
    return json.dumps(hop | more) + "\n"


def test_a_growing_file_is_indexed_on_from_where_it_stopped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_hop(1, "text", "receive", {"text": "hi"}), encoding="utf-8")
    index = TraceIndex(path)
    assert index.refresh() == 1
    first = index.indexed_to
    line = _hop(2, "mcp", "send", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    with path.open("a", encoding="utf-8") as file:
        file.write(line[:20])  # a writer mid-line: not a hop yet
    assert index.refresh() == 0
    assert index.indexed_to == first
    with path.open("a", encoding="utf-8") as file:
        file.write(line[20:])
    assert index.refresh() == 1
    assert index.indexed_to == path.stat().st_size
    assert json.loads(index.line(1))["seq"] == 2  # read back by its offsets


def test_a_rewritten_file_is_indexed_again_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_hop(1, "text", "receive", {"text": "a"}) * 3, encoding="utf-8")
    index = TraceIndex(path)
    index.refresh()
    path.write_text(_hop(7, "text", "receive", {"text": "b"}), encoding="utf-8")
    index.refresh()
    assert [row.seq for row in index.rows] == [7]


def test_a_cut_line_is_skipped_and_a_file_that_is_no_trace_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        _hop(1, "text", "receive", {"text": "a"})
        + '{"run":"r1","seq":2,"ti\n'
        + _hop(3, "x", "y", 1),
        encoding="utf-8",
    )
    index = TraceIndex(path)
    index.refresh()
    assert ([row.seq for row in index.rows], index.cut_lines) == ([1, 3], 1)
    other = tmp_path / "o.jsonl"
    other.write_text('{"name": "not a hop"}\n', encoding="utf-8")
    with pytest.raises(NotATraceError, match="line 1 is not a hop"):
        TraceIndex(other).refresh()


def test_an_integer_beyond_64_bits_is_read_as_the_trace_wrote_it(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_hop(1, "mcp", "receive", {"id": 2**70, "result": {}}), encoding="utf-8")
    index = TraceIndex(path)
    index.refresh()
    assert str(2**70) in index.line(0).decode()
    assert len(index.rows) == 1


def test_a_response_without_a_span_belongs_to_its_requests_span(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    start = {"kind": "mcp", "name": "tools/call", "parent": None}
    request = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "t"}}
    response = {"jsonrpc": "2.0", "id": 9, "result": {"content": []}}
    back = {"from": "mcp:x", "to": "host"}
    path.write_text(
        _hop(1, "span", "start", start, span="a" * 16)
        + _hop(2, "mcp", "send", request, span="a" * 16)
        + _hop(3, "mcp", "receive", {**response, "id": 8}, **back)  # another id: no span
        + _hop(4, "mcp", "receive", response, **back)
        + _hop(5, "span", "end", {"kind": "mcp", "status": "ok"}, span="a" * 16),
        encoding="utf-8",
    )
    index = TraceIndex(path)
    index.refresh()
    assert [row.span for row in index.rows[1:4]] == ["a" * 16, None, "a" * 16]
    assert index.rows[3].depth == 1
    assert (index.rows[2].waited, index.rows[3].waited) == (None, 2.0)  # 102 s to 104 s
    assert index.spans["a" * 16].end_time == 105.0


def test_search_maps_raw_byte_hits_to_hops_case_insensitively(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        _hop(1, "text", "receive", {"text": "Refund order B-7781"})
        + _hop(2, "text", "receive", {"text": 'she said "yes"'})
        + _hop(3, "text", "receive", {"text": "nothing"}),
        encoding="utf-8",
    )
    index = TraceIndex(path)
    index.refresh()
    assert index.search("refund ORDER") == ([0], False)
    assert index.search('said "yes"') == ([1], False)  # as JSON escapes it in the line
    assert index.search("absent") == ([], False)
    assert index.search("text", limit=2) == ([0, 1], True)


def test_a_100k_trace_indexes_and_searches_within_bounds(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    generate(path, hops=100_000)
    index = TraceIndex(path)
    index.refresh()
    assert len(index.rows) >= 100_000
    assert index.memory() / len(index.rows) < 400  # bytes per hop (BENCHMARKS.md says 264)
    hits, _ = index.search("B-7781")
    assert hits
    assert all(b"B-7781" in index.line(i) for i in hits[:50])
    last = max(
        i
        for i, row in enumerate(index.rows)
        if row.protocol == "openai.chat" and row.direction == "send"
    )
    whole = index.whole(last)  # thousands of deltas back to the first request: no recursion
    assert whole is not None
    delta = json.loads(index.line(last))["payload"]
    assert len(whole["messages"]) == len(delta["messages"]) + delta["history"]["kept"]
    assert whole["messages"][0]["role"] == "system"  # from the first request, thousands back
    assert isinstance(whole["tools"], list)


def test_whole_bodies_are_rebuilt_from_a_real_runs_deltas(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "schemawire", "demo", "--trace", "demo.jsonl"]
    subprocess.run(command, cwd=tmp_path, check=True, capture_output=True, timeout=120)
    index = TraceIndex(tmp_path / "demo.jsonl")
    index.refresh()
    sends = [
        i
        for i, row in enumerate(index.rows)
        if row.protocol == "openai.chat" and row.direction == "send"
    ]
    deltas = [i for i in sends if index.whole(i) is not None]
    assert deltas  # the loop writes later requests as deltas
    for at in deltas:
        delta = json.loads(index.line(at))["payload"]
        whole = index.whole(at)
        assert whole is not None
        assert "history" not in whole
        kept = delta["history"]["kept"]
        assert len(whole["messages"]) == kept + len(delta["messages"])
        assert isinstance(whole["tools"], list)  # "unchanged" filled in
    assert whole_body(None, {"model": "m", "messages": []}) == {"model": "m", "messages": []}


def test_the_summary_counts_refusals_and_the_folder_caches_it(tmp_path: Path) -> None:
    generate(tmp_path / "a.jsonl", hops=1500)
    folder = TraceFolder(tmp_path)
    [(path, stat)] = folder.files()
    summary = folder.summary(path, stat)
    assert summary["status"] == "ok"
    assert summary["refusals"] > 0
    assert summary["tools"]
    assert folder.summary(path, stat) is summary  # same size and mtime: from the cache
    assert summarise(folder.index(path))["hops"] == summary["hops"]

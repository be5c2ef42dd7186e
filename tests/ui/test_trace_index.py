"""The Run page's trace index without a browser: growing files, cut lines, the pairing rule,
search over the raw bytes, whole request bodies from deltas, and the Runs page's summary."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from bench.ui import generate

from schemawire.trace import read_trace
from schemawire.ui import _run, _run_folder, _trace_index
from schemawire.ui._run_folder import TraceFolder, summarise
from schemawire.ui._security import TOKEN_HEADER
from schemawire.ui._trace_index import NotATraceError, TraceIndex
from tests.ui.conftest import WAIT_MS


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


def test_a_whole_body_keeps_an_integer_beyond_64_bits_exact(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first = {"model": "m", "messages": [{"n": 2**70 + 1}], "tools": []}
    delta = {"model": "m", "history": {"key": "messages", "kept": 1}, "messages": []}
    path.write_text(
        _hop(1, "openai.chat", "send", first) + _hop(2, "openai.chat", "send", delta | {"n": 1})
    )
    index = TraceIndex(path)
    index.refresh()
    whole = index.whole(1)
    assert whole is not None
    assert whole["messages"] == [{"n": 2**70 + 1}]  # not 1.1805916207174113e+21
    assert str(2**70 + 1) in _run._hop_json(index, 1, None)["whole"]


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
    # The page seeks back from one hop; read_trace rebuilds in order: the same bodies.
    read_whole = {hop.seq: hop.payload for hop in read_trace(tmp_path / "demo.jsonl")}
    for at in deltas:
        assert index.whole(at) == read_whole[index.rows[at].seq]


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


# The API, without a browser: over HTTP to the real server ------------------------------------


def _api(server: Any, path: str, body: bytes | None = None) -> tuple[int, Any]:
    """``path``'s status and JSON answer (a POST when ``body`` is given)."""
    headers = {TOKEN_HEADER: server.config.token, "content-type": "application/json"}
    request = urllib.request.Request(server.base + path, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=WAIT_MS / 1000) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        status, kind, text = error.code, error.headers.get_content_type(), error.read()
    assert kind == "application/json", text  # an error the page can show, not a 500's text
    return status, json.loads(text)


def test_a_symlink_out_of_the_traces_folder_is_neither_listed_nor_read(
    tmp_path: Path, ui_server: Any
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_text(_hop(1, "text", "receive", {"text": "s3cr3t"}))
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "secret.jsonl").symlink_to(outside / "secret.jsonl")
    (traces / "mine.jsonl").write_text(_hop(1, "text", "receive", {"text": "mine"}))
    server = ui_server(traces=traces)
    status, listing = _api(server, "/api/runs/list")
    assert status == 200
    assert [run["file"] for run in listing["runs"]] == ["mine.jsonl"]
    for query in ("run=secret", "file=secret.jsonl", "file=../outside/secret.jsonl"):
        status, answer = _api(server, f"/api/runs/rows?{query}")
        assert status == 404, query
        assert answer["error"]["code"] == "not_found"
    assert _api(server, "/api/runs/rows?run=mine")[0] == 200


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/runs/rows?run=t&start=x", None),
        ("/api/runs/rows?run=t&count=1.5", None),
        ("/api/runs/hop?run=t&index=first", None),
        ("/api/runs/rows?file=t%00.jsonl", None),
        ("/api/runs/eval?run=t", b"{not json"),
    ],
)
def test_a_request_the_page_never_sends_is_answered_with_a_json_error(
    tmp_path: Path, ui_server: Any, path: str, body: bytes | None
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "t.jsonl").write_text(_hop(1, "text", "receive", {"text": "a"}))
    status, answer = _api(ui_server(traces=traces), path, body)
    assert 400 <= status < 500
    assert answer["error"]["code"] in {"bad_request", "not_found"}
    assert "Error" not in answer["error"]["message"]  # words, not a Python repr


def _span(seq: int, span: str, parent: str | None, kind: str = "tool") -> str:
    payload = {"kind": kind, "name": span, "parent": parent}
    return _hop(seq, "span", "start", payload, span=span)


def test_a_span_id_started_twice_cannot_loop_the_waterfall(tmp_path: Path) -> None:
    """A started again inside B (its own child): walking up from either must end."""
    traces = tmp_path / "traces"
    traces.mkdir()
    deep = "".join(_span(3 + k, f"d{k}", f"d{k - 1}" if k else "b") for k in range(3000))
    (traces / "t.jsonl").write_text(
        _span(1, "a", None) + _span(2, "b", "a") + _span(3, "a", "b") + deep
    )
    folder = TraceFolder(traces)
    index = folder.index(traces / "t.jsonl")
    params = {"collapsed": "a"}
    shown, _ = _run._view(index, params)
    assert shown[:2] == [0, 1]  # the first a's row and b's (inside a: the row of a's restart)
    rows = [_run._row_json(index, i) for i in range(len(index.rows))]
    assert rows[-1]["depth"] > 1000  # 3000 spans deep, walked without recursion


def test_filtered_views_kept_are_bounded(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(_hop(k, "text", "receive", {"text": f"w{k}"}) for k in range(50)))
    index = TraceIndex(path)
    index.refresh()
    for k in range(50):
        _run._view(index, {"q": f"w{k}"})
    assert len(index.views) <= _trace_index.VIEWS_KEPT
    assert any(key[4] == "w49" for key in index.views)  # the latest stays


def test_a_refresh_waits_for_a_reader(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_hop(1, "text", "receive", {"text": "a"}))
    index = TraceIndex(path)
    index.refresh()
    with path.open("a", encoding="utf-8") as file:
        file.write(_hop(2, "text", "receive", {"text": "b"}))
    refresher = threading.Thread(target=index.refresh)
    with index.reading():
        refresher.start()
        refresher.join(0.2)
        assert refresher.is_alive()  # a search or a page of rows reads a steady index
        assert len(index.rows) == 1
    refresher.join(WAIT_MS / 1000)
    assert len(index.rows) == 2


def test_a_file_is_indexed_a_chunk_at_a_time_and_a_long_line_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_trace_index, "READ_CHUNK", 64)
    path = tmp_path / "t.jsonl"
    lines = [_hop(k, "text", "receive", {"text": "x" * (10 if k % 3 else 500)}) for k in range(9)]
    path.write_text("".join(lines) + lines[0][:30])  # and a line not ended yet
    index = TraceIndex(path)
    assert index.refresh() == 9
    assert [json.loads(index.line(i))["seq"] for i in range(9)] == list(range(9))
    assert index.indexed_to == len("".join(lines).encode())
    assert index.refresh(budget=1) == 0
    assert not index.behind


def test_a_cold_trace_answers_from_its_head_and_is_indexed_on_off_the_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_run_folder, "HEAD_BYTES", 4096)
    monkeypatch.setattr(_run_folder, "STEP_BYTES", 64 << 10)
    path = tmp_path / "big.jsonl"
    generate(path, hops=20_000)
    folder = TraceFolder(tmp_path)
    index = folder.index(path, head=True)
    assert 0 < len(index.rows) < 1000  # the head only: the first page needs no more
    assert index.indexed_to <= 4096 + (16 << 10)
    assert folder.indexing(path)  # the rest is to be indexed: after the first answer
    folder.index_rest(path, index)
    assert folder.wait_indexed(path, WAIT_MS / 1000)
    assert not folder.indexing(path)
    assert len(index.rows) >= 20_000
    assert index.indexed_to == path.stat().st_size


def test_a_label_never_dumps_a_big_hop(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    big = {"result": {"rows": [{"n": 1}] * 200_000}, "id": 2**70}
    path.write_text(
        _hop(1, "openai.chat", "receive", big)
        + _hop(2, "mcp", "receive", {"jsonrpc": "2.0", "id": 2**70, "result": {"n": 1}})
    )
    index = TraceIndex(path)
    index.refresh()
    assert len(index.rows[0].label) <= _trace_index.LABEL_CHARS
    assert index.rows[1].label.startswith("result")
    assert index.search(str(2**70)) == ([0, 1], False)

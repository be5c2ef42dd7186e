"""The Diff page's server side, without a browser: the alignment is a longest common
subsequence in linear memory, hops are keyed by protocol, method and tool (a JSON-RPC response
by its request), what always differs is left out, and the routes answer as documented."""

from __future__ import annotations

import itertools
import json
import random
import time
import tracemalloc
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from schemawire.types import Hop
from schemawire.ui import UiConfig, create_app
from schemawire.ui._diff import compared, hop_keys
from schemawire.ui._diff_align import align, common_pairs


def lcs_length(a: list[str], b: list[str]) -> int:
    """The textbook O(NM) table: the length the alignment must reach."""
    row = [0] * (len(b) + 1)
    for x in a:
        previous_diagonal = 0
        for j, y in enumerate(b, start=1):
            above = row[j]
            row[j] = previous_diagonal + 1 if x == y else max(row[j], row[j - 1])
            previous_diagonal = above
    return row[-1]


def test_the_alignment_is_a_longest_common_subsequence_on_random_sequences() -> None:
    chooser = random.Random(15)
    for _ in range(2000):
        a = [chooser.choice("abc") for _ in range(chooser.randint(0, 16))]
        b = [chooser.choice("abcd") for _ in range(chooser.randint(0, 16))]
        pairs, exact = common_pairs(a, b)
        assert exact
        assert len(pairs) == lcs_length(a, b), (a, b)
        assert all(a[i] == b[j] for i, j in pairs)
        assert all(p[0] < q[0] and p[1] < q[1] for p, q in itertools.pairwise(pairs))
        steps = align(a, b).steps
        assert [i for i, _ in steps if i is not None] == list(range(len(a)))
        assert [j for _, j in steps if j is not None] == list(range(len(b)))


def test_two_100000_hop_runs_align_in_linear_memory() -> None:
    chooser = random.Random(7)
    a = [f"k{chooser.randrange(30)}" for _ in range(100_000)]
    b = list(a)
    for _ in range(300):  # scattered edits: replaced, dropped and inserted hops
        at = chooser.randrange(len(b))
        b[at : at + 1] = chooser.choice([["x"], [], ["y", b[at]]])
    tracemalloc.start()
    pairs, exact = common_pairs(a, b)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert exact
    assert len(pairs) >= len(a) - 300
    assert peak < 40 * 1024 * 1024  # a table would be 10^10 cells


def test_two_runs_with_nothing_in_common_are_bounded_and_say_so() -> None:
    a = [f"a{i}" for i in range(50_000)]
    b = [f"b{i}" for i in range(50_000)]
    started = time.perf_counter()
    alignment = align(a, b, max_d=200)
    assert time.perf_counter() - started < 30
    assert not alignment.exact
    assert len(alignment.steps) == 100_000


def hop(seq: int, protocol: str, direction: str, payload: object, **more: object) -> Hop:
    return Hop(
        "run1",
        seq,
        1.0 + seq,
        more.pop("source", "host"),
        more.pop("target", "mcp:x"),
        protocol,
        direction,
        payload,
        **more,  # type: ignore[arg-type]
    )


def test_a_json_rpc_response_is_keyed_by_its_request_method_and_tool() -> None:
    hops = [
        hop(
            1,
            "mcp",
            "send",
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "get_weather", "arguments": {}},
            },
        ),
        hop(2, "mcp", "send", {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}),
        hop(
            3,
            "mcp",
            "receive",
            {"jsonrpc": "2.0", "id": 5, "result": {}},
            source="mcp:x",
            target="host",
        ),
        hop(
            4,
            "mcp",
            "receive",
            {"jsonrpc": "2.0", "id": 4, "result": {}},
            source="mcp:x",
            target="host",
        ),
        hop(
            5,
            "gate",
            "check",
            {"tool": "get_weather"},
            verdict={"gate": "arguments", "tool": "get_weather", "accepted": True},
        ),
        hop(6, "openai.chat", "send", {"model": "m"}, target="model:openai.chat"),
    ]
    assert hop_keys(hops) == [
        ("mcp", "send", "tools/call", "get_weather"),
        ("mcp", "send", "tools/list"),
        ("mcp", "receive", "tools/list"),
        ("mcp", "receive", "tools/call", "get_weather"),
        ("gate", "check", "arguments", "get_weather"),
        ("openai.chat", "send"),
    ]


def test_what_always_differs_is_left_out_of_the_comparison() -> None:
    one = hop(1, "mcp", "send", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    other = Hop(
        "run2",
        9,
        99.0,
        "host",
        "mcp:x",
        "mcp",
        "send",
        {"jsonrpc": "2.0", "id": 7, "method": "ping"},
    )
    assert compared(one) == compared(other)
    assert "id" not in compared(one)["payload"]


def test_the_trace_context_an_mcp_request_carries_is_left_out_and_the_rest_of_meta_kept() -> None:
    def call(meta: dict[str, str]) -> Hop:
        params = {"name": "get_weather", "arguments": {"city": "paris"}, "_meta": meta}
        return hop(
            1, "mcp", "send", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        )

    one = call({"traceparent": "00-071e9053bac9b8d2735f0e675d4bd15f-88db7cf67ea9d4ac-01"})
    other = call({"traceparent": "00-f7e7eb527bf537e3ebffe65ffc9324ef-f6b92bc7bd24a50e-01"})
    assert compared(one) == compared(other)
    assert "_meta" not in compared(one)["payload"]["params"]
    kept = call(
        {"traceparent": "00-071e9053bac9b8d2735f0e675d4bd15f-88db7cf67ea9d4ac-01", "k": "v"}
    )
    assert compared(kept)["payload"]["params"]["_meta"] == {"k": "v"}


def write_trace(path: Path, hops: list[Hop]) -> None:
    path.write_text("".join(json.dumps(h.to_json()) + "\n" for h in hops), encoding="utf-8")


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    traces = tmp_path / "traces"
    traces.mkdir()
    calls = [hop(i, "text", "receive", {"text": f"q{i}"}) for i in range(1, 4)]
    write_trace(traces / "aaaa.jsonl", calls)
    write_trace(traces / "bbbb.jsonl", [*calls[:2], hop(3, "text", "receive", {"text": "other"})])
    app = create_app(UiConfig(traces=traces, repo=None, token="t"))
    test_client = TestClient(app, base_url="http://127.0.0.1:8000")
    test_client.get("/?token=t")
    return test_client


def test_the_routes_answer_the_summary_a_pair_and_errors(client: TestClient) -> None:
    runs = client.get("/api/diff/runs").json()["runs"]
    assert {run["run"] for run in runs} == {"aaaa", "bbbb"}
    answer = client.get("/api/diff?a=aaaa&b=bbbb").json()
    assert answer["summary"] | {"verdicts": []} == {
        "hops": {"a": 3, "b": 3},
        "pairs": 3,
        "equal": 2,
        "changed": 1,
        "only_a": 0,
        "only_b": 0,
        "verdicts": [],
        "exact": True,
    }
    pair = client.get("/api/diff/pair?a=aaaa&b=bbbb&row=2").json()
    assert pair["edits"] == [
        {"op": "replace", "path": "/payload/text", "line": '~ /payload/text: "q3" → "other"'}
    ]
    assert pair["highlight_a"] == pair["highlight_b"] == ["/payload/text"]
    assert json.loads(pair["a_text"])["payload"] == {"text": "q3"}
    missing = client.get("/api/diff?a=aaaa&b=ffff")
    assert missing.status_code == 404
    assert "no trace of run ffff" in missing.json()["error"]["message"]
    assert client.get("/api/diff?a=../x&b=aaaa").status_code == 400
    assert client.get("/api/diff/pair?a=aaaa&b=bbbb&row=9").status_code == 404


def test_a_bad_request_is_worded_in_json_never_a_python_repr(client: TestClient) -> None:
    refused = client.get("/api/diff?a=aaaa&b=bbbb&offset=ten")
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == '"ten" is not a number'
    bad_id = client.get("/api/diff", params={"a": "it's", "b": "aaaa"}).json()
    assert bad_id["error"]["message"].startswith('"it\'s" is not a run id')

"""examples/shortlist: a host over a 1,000-tool catalogue sends the model 5 tools; the model
searches for one more and calls it, and the call is gated against its full schema. The example
runs as its own process, as a reader would run it; the assertions read its report and the
trace file it wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from schemawire.trace import read_trace
from tests.helpers import EXAMPLES
from tests.host.shortlist_catalogue import SHORTLIST_SCHEMA

pytestmark = pytest.mark.slow

AGENT = EXAMPLES / "shortlist" / "agent.py"
FOUND = "accuweather_get_forecast"
API = "openai.chat"


def run_example(trace: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(AGENT), "--json", "--trace", str(trace)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=trace.parent,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_the_model_sees_k_tools_searches_for_one_more_and_calls_it(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    report = run_example(trace)
    assert (report["catalogue"], report["k"]) == (1000, 5)
    first, second, third, fourth = report["requests"]
    assert len(first["tools"]) == 1 + 5  # search_tools and the k best
    assert first["tools"][0] == "search_tools"
    assert FOUND not in first["tools"]
    assert second["tools"] == [*first["tools"], FOUND]  # + the one found (+ called: all shown)
    assert (second["unchanged"], third["unchanged"], fourth["unchanged"]) == (False, True, True)
    assert [(c["tool"], c["accepted"], c["code"]) for c in report["calls"]] == [
        ("opentable_book_table", True, None),
        ("search_tools", True, None),
        (FOUND, False, "arguments_invalid"),
        (FOUND, True, None),
    ]
    assert report["ran"] == ["opentable_book_table", FOUND]


def test_the_trace_shows_each_shortlist_and_the_gate_on_the_found_tool(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    run_example(trace)
    hops = list(read_trace(trace))
    shortlists = [hop for hop in hops if hop.protocol == "shortlist"]
    assert [hop.source for hop in shortlists] == ["host:preselection", "host:search_tools"]
    assert all(SHORTLIST_SCHEMA.is_valid(hop.payload) for hop in shortlists)
    preselection, search = (hop.payload for hop in shortlists)
    assert preselection["query"].startswith("Book a table for two")
    assert (preselection["k"], preselection["catalogue"]["size"]) == (5, 1000)
    assert preselection["truncated"]  # far more than 5 tools share a word with the request
    assert (search["query"], [t["name"] for t in search["tools"]]) == (
        "get the AccuWeather forecast",
        [FOUND],
    )
    gates = [hop.verdict for hop in hops if hop.protocol == "gate" and hop.payload["tool"] == FOUND]
    refused = next(v for v in gates if v is not None and v["outcome"] == "rejected")
    assert [v["pointer"] for v in refused["rejection"]["violations"]] == ["/days"]
    # the request after the search carries the found tool's whole schema
    sends = [hop.payload for hop in hops if (hop.protocol, hop.direction) == (API, "send")]
    (found,) = [t for t in sends[1]["tools"] if t["function"]["name"] == FOUND]
    assert found["function"]["parameters"]["properties"]["days"]["maximum"] == 14

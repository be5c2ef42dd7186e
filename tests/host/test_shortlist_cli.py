"""``schemawire run --shortlist K``: the host's shortlist from the command line, over the
support desk example's tools and a scripted model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schemawire.trace import read_trace
from tests.cli.test_cli import SUPPORT_DESK, invoke
from tests.host.chat_script import calls, says
from tests.host.shortlist_catalogue import SHORTLIST_SCHEMA


def script_file(tmp_path: Path, responses: list[dict[str, Any]]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"api": "openai.chat", "responses": responses}), encoding="utf-8")
    return path


def run(tmp_path: Path, responses: list[dict[str, Any]], *options: str) -> tuple[Any, Path]:
    trace = tmp_path / "run.jsonl"
    script = script_file(tmp_path, responses)
    question = "What is the weather in Shanghai today?"
    arguments = ["run", "-m", f"script:{script}", "--repo", str(SUPPORT_DESK), question]
    result = invoke(*arguments, "--json", "--trace", str(trace), *options)
    return result, trace


def sent_tools(trace: Path) -> list[list[str]]:
    """The tools of each request whose tools differ from the request before."""
    hops = read_trace(trace)
    bodies = [h.payload for h in hops if (h.protocol, h.direction) == ("openai.chat", "send")]
    changed = [body["tools"] for body in bodies if body["tools"] != "unchanged"]
    return [[tool["function"]["name"] for tool in tools] for tools in changed]


def test_run_with_a_shortlist_sends_the_best_k_and_search_tools(tmp_path: Path) -> None:
    result, trace = run(tmp_path, [says("18°C")], "--shortlist", "1")
    assert result.exit_code == 0, result.output
    assert sent_tools(trace) == [["search_tools", "get_weather"]]
    (hop,) = [h for h in read_trace(trace) if h.protocol == "shortlist"]
    assert SHORTLIST_SCHEMA.is_valid(hop.payload)
    assert hop.payload["tools"][0]["name"] == "get_weather"


def test_run_pins_a_tool_and_leaves_search_out(tmp_path: Path) -> None:
    options = ("--shortlist", "1", "--pin", "create_refund", "--no-search-tools")
    result, trace = run(tmp_path, [says("18°C")], *options)
    assert result.exit_code == 0, result.output
    assert sorted(sent_tools(trace)[0]) == ["create_refund", "get_weather"]


def test_run_with_search_tools_alone_starts_with_only_the_search(tmp_path: Path) -> None:
    script = [calls(("s1", "search_tools", {"query": "weather"})), says("18°C")]
    result, trace = run(tmp_path, script, "--search-tools")
    assert result.exit_code == 0, result.output
    assert sent_tools(trace) == [["search_tools"], ["search_tools", "get_weather"]]


def test_a_shortlist_of_zero_is_a_usage_error(tmp_path: Path) -> None:
    result, _ = run(tmp_path, [says("18°C")], "--shortlist", "0")
    assert result.exit_code == 2
    assert "--shortlist K needs K >= 1, not 0" in result.output
    assert "HostOptions" not in result.output


def test_a_pin_without_a_shortlist_says_which_option_it_needs(tmp_path: Path) -> None:
    result, _ = run(tmp_path, [says("18°C")], "--pin", "create_refund")
    assert result.exit_code == 2
    assert "--pin needs --shortlist K or --search-tools" in result.output
    assert "HostOptions" not in result.output


def test_a_pin_the_tools_do_not_have_says_where_to_find_them(tmp_path: Path) -> None:
    result, _ = run(tmp_path, [says("18°C")], "--shortlist", "1", "--pin", "nope")
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert 'the pinned tools "nope" are not in the catalogue' in output
    assert "schemawire tools lists them" in output
    assert "'nope'" not in output  # no Python repr


def test_an_unknown_search_form_is_a_usage_error(tmp_path: Path) -> None:
    result, _ = run(tmp_path, [says("18°C")], "--shortlist", "1", "--search-form", "hosted")
    assert result.exit_code == 2
    assert '--search-form is function or native, not "hosted"' in result.output


def test_run_with_the_native_search_form(tmp_path: Path) -> None:
    """Chat Completions has no native tool search: the function form, as without the flag."""
    script = [calls(("s1", "search_tools", {"query": "refund"})), says("Done.")]
    result, trace = run(tmp_path, script, "--shortlist", "1", "--search-form", "native")
    assert result.exit_code == 0, result.output
    assert sent_tools(trace) == [
        ["search_tools", "get_weather"],
        ["search_tools", "get_weather", "create_refund"],
    ]


def test_shortlist_options_are_refused_with_a_flow(tmp_path: Path) -> None:
    flow = tmp_path / "flow.toml"
    flow.write_text("", encoding="utf-8")
    for options in (("--shortlist", "2"), ("--pin", "x", "--search-tools"), ("--search-tools",)):
        result = invoke("run", "--flow", str(flow), "Hello.", *options)
        assert result.exit_code == 2, options
        assert "leave them out with --flow" in " ".join(result.output.split())


def test_a_shortlist_hop_prints_where_it_was_decided_once() -> None:
    from io import StringIO

    from rich.console import Console

    from schemawire.cli._hops import HopPrinter
    from schemawire.types import Hop

    payload = {
        "query": "weather",
        "k": 1,
        "tools": [{"name": "get_weather", "score": 1.0, "matched": ["name"], "pinned": False}],
        "total_matches": 1,
    }
    hop = Hop("r", 2, 0.0, "host:preselection", "host:preselection", "shortlist", "check", payload)
    out = StringIO()
    HopPrinter(Console(file=out, width=200, highlight=False, soft_wrap=True))(hop)
    assert out.getvalue().splitlines() == [
        "  2 host:preselection  shortlist weather -> get_weather (1 matched)"
    ]


def test_run_with_semantic_ranks_the_shortlist_by_meaning_too(tmp_path: Path) -> None:
    result, trace = run(tmp_path, [says("18°C")], "--shortlist", "1", "--semantic")
    assert result.exit_code == 0, result.output
    (hop,) = [h for h in read_trace(trace) if h.protocol == "shortlist"]
    assert SHORTLIST_SCHEMA.is_valid(hop.payload)
    assert hop.payload["ranker"] == "bm25+dense"


def test_semantic_without_a_shortlist_says_which_option_it_needs(tmp_path: Path) -> None:
    result, _ = run(tmp_path, [says("18°C")], "--semantic")
    assert result.exit_code == 2
    assert "--semantic ranks a shortlist: give --shortlist K or --search-tools" in result.output

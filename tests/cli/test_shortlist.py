"""``schemawire shortlist``: one query over a catalogue, and ``--eval`` over a cases file."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from schemawire.application._shortlist_eval import (
    CaseOutcome,
    EvalReport,
    ShortlistCase,
    all_gold_at,
    read_catalogue,
    recall_at,
    reciprocal_rank,
)
from schemawire.gates.shortlist import ToolIndex
from schemawire.schema.repository import Repository
from tests.cli.test_cli import SUPPORT_DESK, invoke
from tests.helpers import WriteRepo

SCHEMA = json.loads(
    (Path(__file__).parents[2] / "src/schemawire/gates/shortlist.schema.json").read_text("utf-8")
)
CASES = SUPPORT_DESK / "shortlist-cases.jsonl"
DATA = Path(__file__).parents[1] / "data"


def mcp_tool(name: str, description: str, **params: str) -> dict[str, Any]:
    properties = {key: {"type": "string", "description": text} for key, text in params.items()}
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties},
    }


TOOLS = [
    mcp_tool("get_weather", "The current weather and temperature in a city.", city="City name."),
    mcp_tool("send_email", "Send an email message to a recipient.", to="Address.", body="Text."),
    mcp_tool("send_sms", "Send a text message to a phone.", to="Phone number.", body="Text."),
    mcp_tool("create_issue", "Open a GitHub issue in a repository.", repo="owner/name."),
    mcp_tool("list_files", "List the files in a directory.", path="A folder."),
]


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": TOOLS}), encoding="utf-8")
    return path


def write_cases(tmp_path: Path, *lines: Any) -> Path:
    path = tmp_path / "cases.jsonl"
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


# --- one query -----------------------------------------------------------------------------------


def test_a_query_over_a_repository_is_a_ranked_table() -> None:
    result = invoke("shortlist", "refund a duplicate charge", "--repo", str(SUPPORT_DESK))
    assert result.exit_code == 0, result.output
    assert "create_refund" in result.output
    assert "rank" in result.output
    assert "matched" in result.output
    assert "returned 1 of 1 matching tools (catalogue: 2 tools); complete" in result.output


def test_json_is_the_shortlist_exactly_and_valid_against_its_schema() -> None:
    result = invoke("shortlist", "order refund", "--repo", str(SUPPORT_DESK), "--json", "-k", "1")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    jsonschema.validate(shown, SCHEMA)
    expected = ToolIndex(
        Repository.load(SUPPORT_DESK).tools(),
        sources={"create_refund": "support-desk", "get_weather": "support-desk"},
    ).search("order refund", k=1)
    assert shown == expected.to_json()


def test_nothing_matched_exits_1_and_says_what_to_try(tools_file: Path) -> None:
    result = invoke("shortlist", "zebra xylophone", "--tools", str(tools_file))
    assert result.exit_code == 1
    assert "no tool matched (catalogue: 5 tools)" in result.output
    assert "hint:" in result.output
    assert "synonyms" in result.output
    as_json = invoke("shortlist", "zebra xylophone", "--tools", str(tools_file), "--json")
    assert as_json.exit_code == 1
    body = json.loads(as_json.stdout)
    jsonschema.validate(body, SCHEMA)
    assert (body["tools"], body["returned"], body["total_matches"]) == ([], 0, 0)
    assert "synonyms" in body["hint"]


def test_a_short_list_says_it_is_truncated(tools_file: Path) -> None:
    result = invoke("shortlist", "send a message", "--tools", str(tools_file), "--top", "1")
    assert result.exit_code == 0, result.output
    assert "returned 1 of 2 matching tools" in result.output
    assert "truncated: 1 more matched, raise --top to see them" in result.output
    args = ["shortlist", "send a message", "--tools", str(tools_file), "-k", "1", "--json"]
    body = json.loads(invoke(*args).stdout)
    assert (body["returned"], body["total_matches"], body["truncated"]) == (1, 2, True)


def test_pinned_tools_are_listed_whatever_the_query(tools_file: Path) -> None:
    args = ["shortlist", "weather", "--tools", str(tools_file), "--pin", "list_files"]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "pinned" in result.output.split("list_files")[1].splitlines()[0]
    body = json.loads(invoke(*args, "--json").stdout)
    assert [(t["name"], t["pinned"]) for t in body["tools"]] == [
        ("get_weather", False),
        ("list_files", True),
    ]
    only_pinned = invoke("shortlist", "zebra", "--tools", str(tools_file), "--pin", "list_files")
    assert only_pinned.exit_code == 1  # a pinned tool is not a match


def test_a_pin_the_catalogue_lacks_is_a_usage_error(tools_file: Path) -> None:
    result = invoke("shortlist", "weather", "--tools", str(tools_file), "--pin", "nope")
    assert result.exit_code == 2
    assert "--pin names tools the catalogue does not have" in result.output


def test_a_mistyped_pin_suggests_the_close_names(tools_file: Path) -> None:
    result = invoke("shortlist", "weather", "--tools", str(tools_file), "--pin", "send_emial")
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert '"send_emial" (did you mean "send_email"' in output
    assert "schemawire tools lists a server's names" in output


def test_a_directory_as_tools_says_it_needs_a_file(tmp_path: Path) -> None:
    result = invoke("shortlist", "weather", "--tools", str(tmp_path))
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert "is a directory: it needs a file of tool definitions" in output
    assert "Is a directory" not in output


def test_the_same_tools_file_twice_is_refused(tools_file: Path) -> None:
    again = tools_file.parent / "." / tools_file.name
    result = invoke("shortlist", "weather", "--tools", str(tools_file), "--tools", str(again))
    assert result.exit_code == 2
    assert "is given twice" in " ".join(result.output.split())


def test_two_tools_files_of_one_name_are_two_sources(tmp_path: Path) -> None:
    paths = []
    for folder, tools in (("a", TOOLS[:2]), ("b", TOOLS[2:])):
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "tools.json")
        paths[-1].write_text(json.dumps({"tools": tools}), encoding="utf-8")
    args = ["shortlist", "send", "--json", *(f"--tools={path}" for path in paths)]
    sources = json.loads(invoke(*args).stdout)["catalogue"]["sources"]
    assert sources == {str(tmp_path / "a" / "tools"): 2, str(tmp_path / "b" / "tools"): 3}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["refund", "order", "--repo", "."],
            '"order" was read as an MCP server\'s command (every word after the query is one), '
            'beside --repo: quote the whole query, e.g. schemawire shortlist "refund order"',
        ),
        (
            ["--eval", "c.jsonl", "refund", "--tools", "t.json"],
            'with --eval no query is taken: "refund" was read as an MCP server\'s command',
        ),
    ],
)
def test_unquoted_query_words_are_said_to_be_read_as_a_command(args: list[str], says: str) -> None:
    result = invoke("shortlist", *args)
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert says in output
    assert "one catalogue at a time" not in output


def test_a_directory_that_is_no_repository_says_what_to_give(tmp_path: Path) -> None:
    for repo, says in (
        (tmp_path, "is not in a schemawire repository (no schemawire.toml"),
        (tmp_path / "missing", "is not a directory"),
    ):
        result = invoke("shortlist", "weather", "--repo", str(repo))
        assert result.exit_code == 2
        output = " ".join(result.output.split())
        assert says in output
        assert "--tools FILE" in output
        assert "holds no tool" not in output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "give the query"),
        (["q", "--junit", "x.xml"], "--junit: only with --eval"),
        (["q", "--min-recall", "0.5"], "--min-recall: only with --eval"),
        (["q", "--repo", ".", "--tools", "t.json"], "one catalogue at a time, not --repo and"),
        (["--eval", "c.jsonl", "--pin", "a"], "--pin with --eval"),
    ],
)
def test_usage_errors_exit_2_and_say_what_to_do(args: list[str], says: str) -> None:
    result = invoke("shortlist", *args)
    assert result.exit_code == 2
    assert says in " ".join(result.output.split())


def test_an_empty_repository_has_nothing_to_shortlist(write_repo: WriteRepo) -> None:
    root = write_repo({"schemawire.toml": ""})
    result = invoke("shortlist", "anything", "--repo", str(root))
    assert result.exit_code == 2
    assert "holds no tool to shortlist" in result.output


# --- a catalogue as a file -----------------------------------------------------------------------


def test_a_catalogue_file_may_be_tools_list_a_bare_list_or_json_lines(tmp_path: Path) -> None:
    listing = json.dumps({"tools": TOOLS}).encode()
    bare = json.dumps(TOOLS, indent=2).encode()
    lines = "".join(json.dumps(tool) + "\n" for tool in TOOLS).encode()
    names = [tool["name"] for tool in TOOLS]
    for data in (listing, bare, lines):
        assert [spec.name for spec in read_catalogue(data, "tools")] == names
    one = read_catalogue(json.dumps(TOOLS[0]).encode(), "tools")
    assert [spec.name for spec in one] == ["get_weather"]


def test_a_catalogue_file_keeps_every_definition_of_a_name(tmp_path: Path) -> None:
    again = mcp_tool("get_weather", "Forecast for the coming days.", days="How many days.")
    path = tmp_path / "tools.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in [*TOOLS, again]), encoding="utf-8")
    assert len(read_catalogue(path.read_bytes(), str(path))) == 6
    body = json.loads(invoke("shortlist", "forecast", "--tools", str(path), "--json").stdout)
    assert body["catalogue"] == {"size": 5, "sources": {"tools": 5}}  # both count names
    assert [t["name"] for t in body["tools"]] == ["get_weather"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"tools": {"a": 1}}', 'tools.json#/tools: a catalogue file holds {"tools": [...]}'),
        ('{"tools": [{"name": "a", "inputSchema": 3}]}', "tools.json#/tools/0"),
        ('{"tools": [1, 2', "tools.json:1:"),
        (
            '{"name": "a", "inputSchema": {"type": "object"}}\n{"name": 3}\n',
            "tools.json:2 #/name: name must be a non-empty string",
        ),
        (
            '{"query": "weather", "answer": ["get_weather"]}\n{"query": "q", "answer": ["a"]}\n',
            "tools.json:1: a tool definition is {name, description, inputSchema}; this looks "
            "like a cases file ({query, answer} lines): pass it to --eval",
        ),
    ],
)
def test_an_unusable_catalogue_file_says_where(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "tools.json"
    path.write_text(text, encoding="utf-8")
    result = invoke("shortlist", "q", "--tools", str(path))
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert says in output
    assert ":None" not in output


# --- --eval --------------------------------------------------------------------------------------


def test_eval_prints_the_figures_and_the_worst_misses(tmp_path: Path, tools_file: Path) -> None:
    cases = write_cases(
        tmp_path,
        {"query": "weather in Paris", "answer": ["get_weather"]},
        {"query": "text my phone", "answer": ["send_sms"]},
        {"query": "zebra", "answer": ["list_files"]},
        {"query": "send a message and open an issue", "answer": ["send_sms", "create_issue"]},
    )
    result = invoke("shortlist", "--eval", str(cases), "--tools", str(tools_file), "-k", "1")
    assert result.exit_code == 1, result.output  # some query misses at k = 1
    assert "4 cases over 5 tool definitions, k = 1" in result.output
    assert "recall" in result.output
    assert "all gold" in result.output
    assert "MRR@10" in result.output
    assert "missed a tool in the top 1" in result.output
    worst = result.output.split("missed a tool in the top 1")[1]
    assert worst.index('"zebra"') < worst.index('"send a message and open an issue"')
    assert "nothing matched" in worst


def test_eval_json_holds_the_figures(tmp_path: Path, tools_file: Path) -> None:
    cases = write_cases(
        tmp_path,
        {"query": "weather in Paris", "answer": ["get_weather"]},
        {"query": "zebra", "answer": ["list_files"]},
    )
    result = invoke("shortlist", "--eval", str(cases), "--tools", str(tools_file), "--json")
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert (body["cases"], body["k"], body["catalogue"]) == (2, 10, {"size": 5})
    assert body["recall"] == {"1": 0.5, "3": 0.5, "5": 0.5, "10": 0.5}
    assert body["all_gold"]["10"] == 0.5
    assert body["mrr_at_10"] == 0.5
    assert body["missed"] == 1
    (miss,) = body["worst"]
    assert miss == {
        "line": 2,
        "query": "zebra",
        "answer": ["list_files"],
        "ranked": [],
        "missing": ["list_files"],
        "first_gold": None,
    }
    assert set(body["query_ms"]) == {"p50", "p95"}


def test_eval_exits_0_when_every_query_finds_its_tools(tmp_path: Path, tools_file: Path) -> None:
    cases = write_cases(tmp_path, {"query": "weather in Paris", "answer": ["get_weather"]})
    result = invoke("shortlist", "--eval", str(cases), "--tools", str(tools_file))
    assert result.exit_code == 0, result.output
    assert "0 of 1 missed" in result.output


def test_min_recall_is_the_bar_ci_holds(tmp_path: Path, tools_file: Path) -> None:
    cases = write_cases(
        tmp_path,
        {"query": "weather in Paris", "answer": ["get_weather"]},
        {"query": "zebra", "answer": ["list_files"]},
    )
    base = ["shortlist", "--eval", str(cases), "--tools", str(tools_file)]
    assert invoke(*base, "--min-recall", "0.5").exit_code == 0
    below = invoke(*base, "--min-recall", "0.6")
    assert below.exit_code == 1
    assert "recall@10 0.500 < --min-recall 0.6" in below.output


@pytest.mark.parametrize(("bar", "exit_code", "failures"), [("0.5", 0, "0"), ("0.6", 1, "1")])
def test_under_min_recall_junit_fails_exactly_when_the_exit_code_does(
    tmp_path: Path, tools_file: Path, bar: str, exit_code: int, failures: str
) -> None:
    cases = write_cases(
        tmp_path,
        {"query": "weather in Paris", "answer": ["get_weather"]},
        {"query": "zebra", "answer": ["list_files"]},
    )
    report = tmp_path / "shortlist.xml"
    args = ["--eval", str(cases), "--tools", str(tools_file), "--junit", str(report)]
    assert invoke("shortlist", *args, "--min-recall", bar).exit_code == exit_code
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", failures, "1")
    first, miss, the_bar = suite.findall("testcase")
    assert first.find("skipped") is None
    assert miss.find("failure") is None
    assert miss.find("skipped") is not None
    assert "list_files not in the top 10" in (miss.findtext("system-out") or "")
    assert the_bar.get("name") == f"recall@10 >= {bar}"
    assert (the_bar.find("failure") is not None) == (exit_code == 1)


def test_junit_has_a_testcase_per_query_and_a_miss_names_the_ranking(
    tmp_path: Path, tools_file: Path
) -> None:
    cases = write_cases(
        tmp_path,
        {"query": "weather in Paris", "answer": ["get_weather"]},
        {"query": "send a message", "answer": ["send_sms"]},
    )
    report = tmp_path / "out" / "shortlist.xml"
    args = ["--eval", str(cases), "--tools", str(tools_file), "-k", "1", "--junit", str(report)]
    assert invoke("shortlist", *args).exit_code == 1
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    testcases = suite.findall("testcase")
    assert [case.get("name") for case in testcases] == [
        "line 1: weather in Paris",
        "line 2: send a message",
    ]
    assert testcases[0].find("failure") is None
    failure = testcases[1].find("failure")
    assert failure is not None
    assert failure.get("message") == (
        '/answer: send_sms not in the top 1; ranked: send_email (the query: "send a message")'
    )
    assert failure.text is not None
    assert f"{cases}:2:1 #/answer" in failure.text


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"query": "weather", "answer": ["get_weather"]', "cases.jsonl:2:"),
        ({"answer": ["get_weather"]}, 'cases.jsonl:2 #/query: a case needs "query"'),
        ({"query": " ", "answer": ["get_weather"]}, 'cases.jsonl:2 #/query: a case needs "query"'),
        ({"query": "weather"}, 'cases.jsonl:2 #/answer: a case needs "answer"'),
        ({"query": "weather", "answer": "get_weather"}, "cases.jsonl:2 #/answer: a case needs"),
        ({"query": "weather", "answer": []}, "cases.jsonl:2 #/answer: a case needs"),
        ({"query": "weather", "answer": ["get_weather", 7]}, "#/answer/1: a tool name is a string"),
        (
            {"query": "weather", "answer": ["get_wether"]},
            'cases.jsonl:2 #/answer/0: the catalogue has no tool "get_wether"',
        ),
        ({"query": "w", "answer": ["get_weather"], "k": 3}, "cases.jsonl:2 #/k: a case holds only"),
        (["weather"], "cases.jsonl:2: a case is an object"),
    ],
)
def test_an_unusable_case_is_an_error_with_its_line_and_pointer(
    tmp_path: Path, tools_file: Path, line: Any, says: str
) -> None:
    good = {"query": "weather in Paris", "answer": ["get_weather"]}
    cases = write_cases(tmp_path, good, line, good)
    result = invoke("shortlist", "--eval", str(cases), "--tools", str(tools_file))
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert says in output
    assert "nothing was evaluated" in output


def test_every_unusable_line_is_reported_at_once(tmp_path: Path, tools_file: Path) -> None:
    cases = write_cases(
        tmp_path,
        {"query": "weather", "answer": ["nope"]},
        "not json",
        {"query": "weather", "answer": ["get_weather"]},
        {"answer": ["get_weather"]},
    )
    result = invoke("shortlist", "--eval", str(cases), "--tools", str(tools_file), "--json")
    assert result.exit_code == 2
    errors = json.loads(result.stdout)["errors"]
    assert [(e["line"], e.get("pointer")) for e in errors] == [
        (1, "/answer/0"),
        (2, None),
        (4, "/query"),
    ]
    assert [e["code"] for e in errors] == ["config_invalid", "json_syntax", "config_invalid"]


def test_unusable_lines_are_counted_as_lines_and_each_extra_key_is_named(
    tmp_path: Path, tools_file: Path
) -> None:
    cases = write_cases(
        tmp_path,
        {"query": "weather", "answer": ["get_weather"], "k": 3, "note": "x"},
        {"answer": ["nope"]},
    )
    result = invoke("shortlist", "--eval", str(cases), "--tools", str(tools_file))
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert "cases.jsonl:1 #/k: a case holds only" in output
    assert "cases.jsonl:1 #/note: a case holds only" in output
    assert "4 problems on 2 unusable lines" in output


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_an_empty_cases_file_is_never_green(tmp_path: Path, tools_file: Path, text: str) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(text, encoding="utf-8")
    result = invoke("shortlist", "--eval", str(cases), "--tools", str(tools_file))
    assert result.exit_code == 2
    assert "no case to evaluate" in result.output


def test_the_support_desk_cases_run_over_its_repository() -> None:
    result = invoke("shortlist", "--eval", str(CASES), "--repo", str(SUPPORT_DESK), "--json")
    body = json.loads(result.stdout)
    assert body["cases"] == 12
    assert body["catalogue"] == {"size": 2}
    # User-style words the schemas never use (umbrella, hot, reimbursement) miss: the gap
    # x-keywords is for. The figure is what BM25 does here; a regression moves it.
    assert 0.5 <= body["recall"]["10"] < 1.0
    assert result.exit_code == 1


# --- the metrics ---------------------------------------------------------------------------------


def test_the_metrics_on_a_known_ranking() -> None:
    ranking = ["a", "b", "c", "d"]
    assert recall_at(ranking, ["b", "d"], 1) == 0.0
    assert recall_at(ranking, ["b", "d"], 2) == 0.5
    assert recall_at(ranking, ["b", "d"], 4) == 1.0
    assert not all_gold_at(ranking, ["b", "d"], 3)
    assert all_gold_at(ranking, ["b", "d"], 4)
    assert reciprocal_rank(ranking, ["c", "d"]) == pytest.approx(1 / 3)
    assert reciprocal_rank(ranking, ["z"]) == 0.0
    assert reciprocal_rank(["x"] * 10 + ["a"], ["a"]) == 0.5  # a name counts once


def test_the_worst_misses_come_first() -> None:
    def outcome(line: int, ranking: list[str], answer: list[str]) -> CaseOutcome:
        return CaseOutcome(ShortlistCase(f"q{line}", tuple(answer), line), tuple(ranking))

    found_late = outcome(1, ["x", "y", "a"], ["a"])
    half = outcome(2, ["a"], ["a", "b"])
    unranked_long = outcome(3, ["x", "y", "z"], ["a"])
    unranked_empty = outcome(4, [], ["a"])
    passed = outcome(5, ["a"], ["a"])
    report = EvalReport(2, 9, (found_late, half, unranked_long, unranked_empty, passed))
    assert [o.case.line for o in report.misses()] == [3, 4, 1, 2]


def reference_servers() -> list[Path]:
    """The real tools/list results of the three npm reference servers."""
    return [DATA / "mcp-tools" / f"{name}.json" for name in ("everything", "filesystem", "memory")]


def test_user_style_queries_over_the_three_reference_servers() -> None:
    listings = reference_servers()
    args = ["--eval", str(DATA / "shortlist" / "reference-servers.jsonl"), "--top", "5", "--json"]
    result = invoke("shortlist", *args, *(f"--tools={path}" for path in listings))
    body = json.loads(result.stdout)
    assert (body["cases"], body["catalogue"]) == (24, {"size": 36})
    # BM25 alone (with its related words) on paraphrases, as measured: a change of the
    # ranking shows here.
    assert body["recall"] == {"1": 0.625, "3": 0.7917, "5": 0.9583, "10": 1.0}
    assert (body["mrr_at_10"], body["missed"]) == (0.7243, 1)
    # Exit 1 because one of 24 misses a tool in the top 5.
    assert result.exit_code == 1
    assert all(miss["missing"] for miss in body["worst"])


def test_several_tools_files_are_one_catalogue_with_a_source_each() -> None:
    listings = reference_servers()
    result = invoke("shortlist", "read a file", "--json", *(f"--tools={path}" for path in listings))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["catalogue"] == {
        "size": 36,
        "sources": {"everything": 13, "filesystem": 14, "memory": 9},
    }


# --- by meaning ----------------------------------------------------------------------------------


def test_semantic_ranks_by_meaning_a_query_that_shares_no_word(tools_file: Path) -> None:
    query = "is it snowing in Oslo"
    assert invoke("shortlist", query, "--tools", str(tools_file)).exit_code == 1
    result = invoke("shortlist", query, "--tools", str(tools_file), "--semantic", "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    jsonschema.validate(body, SCHEMA)
    assert body["ranker"] == "bm25+dense"
    assert body["tools"][0]["name"] == "get_weather"
    assert body["tools"][0]["matched"] == []
    # no tool shares a word: nothing is counted as matching, five are listed by meaning
    assert (body["returned"], body["total_matches"], body["by_meaning"]) == (0, 0, 5)
    assert "ranked by meaning alone" in body["hint"]
    table = invoke("shortlist", query, "--tools", str(tools_file), "--semantic").stdout
    assert "by meaning" in table
    assert "no tool shares a word with the query; 5 listed by meaning alone" in table
    assert "hint:" in table


def test_semantic_counts_what_shares_a_word_apart_from_what_is_found_by_meaning(
    tools_file: Path,
) -> None:
    args = ["shortlist", "send a message", "--tools", str(tools_file), "--semantic", "-k", "3"]
    body = json.loads(invoke(*args, "--json").stdout)
    assert (body["total_matches"], body["returned"], body["by_meaning"]) == (2, 2, 1)
    assert "hint" not in body
    table = " ".join(invoke(*args).stdout.split())
    assert "returned 2 of 2 matching tools, and 1 more by meaning alone" in table


def test_semantic_evaluation_lifts_the_support_desk_cases() -> None:
    plain = invoke("shortlist", "--eval", str(CASES), "--repo", str(SUPPORT_DESK), "--json")
    fused = invoke(
        "shortlist", "--eval", str(CASES), "--repo", str(SUPPORT_DESK), "--json", "--semantic"
    )
    assert json.loads(fused.stdout)["recall"]["1"] > json.loads(plain.stdout)["recall"]["1"]

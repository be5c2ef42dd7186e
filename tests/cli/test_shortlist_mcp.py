"""``schemawire shortlist`` over a real MCP server's listing (server-everything over stdio)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.helpers import peer

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCHEMAWIRE, *args], capture_output=True, text=True, timeout=120, check=False
    )


def everything() -> list[str]:
    server = peer("everything")
    return ["--", server.command, *server.args]


@pytest.mark.slow
def test_a_query_over_a_servers_tools() -> None:
    ran = run("shortlist", "add two numbers", "--top", "3", "--json", *everything())
    assert ran.returncode == 0, ran.stderr
    body = json.loads(ran.stdout)
    assert body["tools"][0]["name"] == "get-sum"
    assert body["catalogue"]["size"] == 13
    assert list(body["catalogue"]["sources"].values()) == [13]


@pytest.mark.slow
def test_an_evaluation_over_a_servers_tools(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    lines = [
        {"query": "repeat my message back to me", "answer": ["echo"]},
        {"query": "how much do 3 and 4 come to", "answer": ["get-sum"]},
        {"query": "send me the wee emblem", "answer": ["get-tiny-image"]},
        {"query": "compress a file with gzip", "answer": ["gzip-file-as-resource"]},
    ]
    cases.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    junit = tmp_path / "shortlist.xml"
    args = ["shortlist", "--eval", str(cases), "--json", "--junit", str(junit)]
    ran = run(*args, *everything())
    assert ran.returncode == 1, ran.stderr  # two queries miss
    body = json.loads(ran.stdout)
    assert (body["cases"], body["catalogue"]) == (4, {"size": 13})
    # Paraphrases that share no word with the tool, nor a related word (come to/sum, wee
    # emblem/tiny image), are not found by words alone: what the semantic ranker and x-keywords
    # are for.
    assert [miss["line"] for miss in body["worst"]] == [2, 3]
    assert body["recall"]["1"] == 0.5
    assert junit.read_text(encoding="utf-8").count("<testcase") == 4


@pytest.mark.slow
def test_an_answer_the_server_lacks_is_an_error(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"query": "add", "answer": ["add"]}\n', encoding="utf-8")
    ran = run("shortlist", "--eval", str(cases), *everything())
    assert ran.returncode == 2
    assert 'the catalogue has no tool "add"' in ran.stderr


@pytest.mark.slow
def test_a_server_that_cannot_start_is_exit_2() -> None:
    ran = run("shortlist", "anything", "--", str(Path(sys.executable).parent / "no-such-server"))
    assert ran.returncode == 2
    assert "MCP server" in ran.stderr


@pytest.mark.slow
def test_an_unquoted_query_is_told_to_be_quoted() -> None:
    ran = run("shortlist", "refund", "no-such-word-as-a-server")
    assert ran.returncode == 2
    assert '(if "no-such-word-as-a-server" is a word of the query, quote the whole query)' in (
        " ".join(ran.stderr.split())
    )

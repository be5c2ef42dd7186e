"""SW116: ``x-keywords`` is linted where and in the shape the shortlist index reads it."""

from __future__ import annotations

from typing import Any

import pytest

from schemawire.gates.shortlist import ToolIndex
from schemawire.schema.lint import lint_repository
from schemawire.schema.repository import Repository
from tests.helpers import WriteRepo, tool_schema


def keyword_findings(write_repo: WriteRepo, files: dict[str, Any]) -> list[tuple[str, str]]:
    repository = Repository.load(write_repo(files))
    return [(f.pointer, f.message) for f in lint_repository(repository) if f.rule.id == "SW116"]


def tool_with(keywords: Any, name: str = "lookup") -> dict[str, Any]:
    return {f"schemas/tools/{name}.json": tool_schema(name, **{"x-keywords": keywords})}


@pytest.mark.parametrize(
    ("keywords", "pointer", "says"),
    [
        ("town", "/x-keywords", 'not "town"'),
        ({"town": 1}, "/x-keywords", "an array of strings"),
        (["town", 3], "/x-keywords/1", "not 3"),
        (["town", None], "/x-keywords/1", "not null"),
        (["town", "  "], "/x-keywords/1", "empty"),
        (["", "town"], "/x-keywords/0", "empty"),
        (["post code", "town", "Post  Code"], "/x-keywords/2", "(first at 0; case"),
    ],
)
def test_a_keyword_list_the_index_cannot_read_is_a_finding(
    write_repo: WriteRepo, keywords: Any, pointer: str, says: str
) -> None:
    findings = keyword_findings(write_repo, tool_with(keywords))
    assert [found for found, _ in findings] == [pointer]
    assert says in findings[0][1]


def test_distinct_words_are_quiet(write_repo: WriteRepo) -> None:
    assert keyword_findings(write_repo, tool_with(["town", "municipality", "post code"])) == []


def test_every_bad_entry_is_its_own_finding(write_repo: WriteRepo) -> None:
    findings = keyword_findings(write_repo, tool_with(["town", 1, "", "Town"]))
    assert [pointer for pointer, _ in findings] == [
        "/x-keywords/1",
        "/x-keywords/2",
        "/x-keywords/3",
    ]


def test_keywords_outside_a_tool_inputs_root_are_ignored_and_said_so(
    write_repo: WriteRepo,
) -> None:
    nested = tool_schema(
        "lookup",
        properties={"city": {"type": "string", "description": "A city.", "x-keywords": ["town"]}},
    )
    handoff = tool_schema(
        "h", **{"$id": "https://example.com/schemas/handoffs/h.json", "x-keywords": ["town"]}
    )
    files = {"schemas/tools/lookup.json": nested, "schemas/handoffs/h.json": handoff}
    findings = keyword_findings(write_repo, files)
    assert sorted(pointer for pointer, _ in findings) == [
        "/properties/city/x-keywords",
        "/x-keywords",
    ]
    assert all("read only at the root of a tool's input schema" in m for _, m in findings)


def test_the_keywords_the_rule_accepts_are_the_ones_the_index_finds(
    write_repo: WriteRepo,
) -> None:
    root = write_repo(tool_with(["municipality"]))
    index = ToolIndex(Repository.load(root).tools())
    (found,) = index.search("which municipality").tools
    assert (found.name, found.matched) == ("lookup", ("keywords",))


@pytest.mark.parametrize("entry", ["the", "to a", "x", "--", "of the!", "I"])
def test_an_entry_the_index_drops_is_a_finding(write_repo: WriteRepo, entry: str) -> None:
    findings = keyword_findings(write_repo, tool_with(["town", entry]))
    assert [pointer for pointer, _ in findings] == ["/x-keywords/1"]
    assert "holds no word the index keeps" in findings[0][1]

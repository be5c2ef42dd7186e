"""The shortlist bench's evaluation sets, built from the installed ``bfcl-eval`` data.

The BFCL retrieval set: the catalogue is every distinct function definition of the leaderboard's
single-turn Python categories that have gold answers (2,405 definitions, 1,287 names: the same
name is defined differently in several records), and the queries are the questions of its
multi-function categories with the gold function names from ``possible_answer/`` (1,453).
Left out of the catalogue: the Java and JavaScript categories (their own type names), the
relevance and irrelevance categories (no gold answer) and the multi-turn APIs (their questions
need the conversation). ``live_parallel_multiple`` (24 more queries) is a choice of
``categories``, not in the default set, so the figures compare with shortlist.md §A3.

    python -m bench.shortlist_sets bfcl.jsonl     # one {"query", "answer"} line per query
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.project.corpus import bfcl_data

from bench.corpus import _spec
from schemawire._json import dumps, loads_lines
from schemawire.project.importers import import_openai
from schemawire.types import ToolSpec

CATALOGUE_CATEGORIES = (
    "simple_python",
    "parallel",
    "multiple",
    "parallel_multiple",
    "live_simple",
    "live_parallel",
    "live_multiple",
    "live_parallel_multiple",
)
QUERY_CATEGORIES = ("multiple", "parallel_multiple", "live_multiple")


@dataclass(frozen=True)
class Case:
    """One query and the names of the tools that answer it (all of them are needed)."""

    query: str
    answer: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The case as a line of an evaluation file."""
        return {"query": self.query, "answer": list(self.answer)}


def catalogue(categories: Sequence[str] = CATALOGUE_CATEGORIES) -> list[ToolSpec]:
    """Each distinct definition of the categories, once, in file order, as a tool spec."""
    distinct: dict[str, Any] = {}
    for category in categories:
        for record in _records(bfcl_data() / f"BFCL_v4_{category}.json"):
            for tool in record["function"]:
                distinct.setdefault(dumps(tool, indent=False, sort_keys=True), tool)
    # One at a time: the importer refuses two tools of one name in a list, and here the same
    # name defined differently is the point.
    return [_spec(imported) for tool in distinct.values() for imported in import_openai([tool])]


def cases(categories: Sequence[str] = QUERY_CATEGORIES) -> list[Case]:
    """The questions of the categories, each with its gold function names."""
    found: list[Case] = []
    for category in categories:
        answers = {
            record["id"]: _gold_names(record["ground_truth"])
            for record in _records(bfcl_data() / "possible_answer" / f"BFCL_v4_{category}.json")
        }
        for record in _records(bfcl_data() / f"BFCL_v4_{category}.json"):
            found.append(Case(_question(record["question"]), answers[record["id"]]))
    return found


def write_jsonl(found: Iterable[Case], path: Path) -> int:
    """Write the cases as JSON Lines; returns how many were written."""
    lines = [dumps(case.to_json(), indent=False) for case in found]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def _records(path: Path) -> Iterator[dict[str, Any]]:
    for line in loads_lines(path.read_bytes(), source=str(path)):
        if line.error is not None:
            raise ValueError(f"{path.name}:{line.number}: {line.error}")
        assert isinstance(line.value, dict)
        yield line.value


def _gold_names(ground_truth: list[dict[str, Any]]) -> tuple[str, ...]:
    # A parallel answer calls the same function several times: each name counts once.
    return tuple(dict.fromkeys(name for call in ground_truth for name in call))


def _question(turns: list[list[dict[str, Any]]]) -> str:
    # The user's words of the (only) turn; live records may put a system message first.
    return " ".join(m["content"] for turn in turns for m in turn if m["role"] == "user")


def main(argv: Sequence[str]) -> None:
    """Write the default BFCL set to the path given."""
    if len(argv) != 1:
        sys.exit("usage: python -m bench.shortlist_sets OUT.jsonl")
    count = write_jsonl(cases(), Path(argv[0]))
    print(f"{count} queries over {len(catalogue())} definitions -> {argv[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])

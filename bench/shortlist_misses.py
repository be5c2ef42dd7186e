"""Why ``ToolIndex`` misses: each gold name of the BFCL set not in the top k, sorted by cause.

    python -m bench.shortlist_misses [--top K] [--examples N]

Causes, the first that fits:

- ``not English``: the query has a run of letters outside ASCII (Korean, Chinese) and the stemmer
  and stop words are English.
- ``no shared word``: the gold tool has no word of the query in any field (a synonym, "taxi"
  for a ride-sharing tool): only a semantic ranker finds it.
- ``near-duplicate above``: a tool ranked above the gold one has almost its words (Jaccard of
  their name + description words >= 0.5): BFCL defines the same function under many names
  (``calculate_circumference`` beside ``geometry.circumference``), and the query cannot say which.
- ``another request``: the query asks for several tools and the gold one is outranked by tools
  for its other requests.
- ``outranked``: the rest.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from bench.shortlist_sets import Case, cases, catalogue
from schemawire.gates._tool_text import field_tokens
from schemawire.gates.shortlist import ToolIndex
from schemawire.types import ToolSpec

NEAR = 0.5  # Jaccard of two tools' name + description words above which they are near-duplicates
_NOT_ASCII = re.compile(r"[^\x00-\x7f]{2,}")  # a run: `2x²` is English


@dataclass(frozen=True)
class Miss:
    """One gold name not in the top k of its query."""

    query: str
    gold: str
    place: int | None  # 1-based, among the top 40; None past it
    cause: str


def misses(specs: Sequence[ToolSpec], found: Sequence[Case], top: int = 5) -> list[Miss]:
    """Every gold name of ``found`` that ``ToolIndex`` does not rank in the first ``top``."""
    index = ToolIndex(specs)
    words = _words_by_name(specs)
    missed: list[Miss] = []
    for case in found:
        shortlist = index.search(case.query, k=40)
        ranked = [tool.name for tool in shortlist.tools]
        for gold in case.answer:
            if gold in ranked[:top]:
                continue
            place = ranked.index(gold) + 1 if gold in ranked else None
            above = ranked if place is None else ranked[: place - 1]
            shares = place is not None or _shares(index, case, gold)
            missed.append(Miss(case.query, gold, place, _cause(case, gold, above, words, shares)))
    return missed


def _cause(
    case: Case,
    gold: str,
    above: Sequence[str],
    words: dict[str, frozenset[str]],
    shares: bool,
) -> str:
    if _NOT_ASCII.search(case.query):
        return "not English"
    if not shares:
        return "no shared word"
    if any(_jaccard(words[gold], words[name]) >= NEAR for name in above):
        return "near-duplicate above"
    if len(case.answer) > 1:
        return "another request"
    return "outranked"


def _shares(index: ToolIndex, case: Case, gold: str) -> bool:
    """Whether ``gold`` matches the query at all (it may rank past the 40 looked at)."""
    shortlist = index.search(case.query, k=index.size)
    return any(tool.name == gold for tool in shortlist.tools)


def _words_by_name(specs: Sequence[ToolSpec]) -> dict[str, frozenset[str]]:
    words: dict[str, set[str]] = defaultdict(set)
    for spec in specs:
        fields = field_tokens(spec)
        words[spec.name].update(fields["name"], fields["description"])
    return {name: frozenset(found) for name, found in words.items()}


def _jaccard(first: frozenset[str], second: frozenset[str]) -> float:
    union = first | second
    return len(first & second) / len(union) if union else 0.0


def report(missed: Sequence[Miss], examples: int) -> None:
    """Counts by cause, then a few examples of each."""
    by_cause: dict[str, list[Miss]] = defaultdict(list)
    for miss in missed:
        by_cause[miss.cause].append(miss)
    print(f"{len(missed)} gold names missed")
    print()
    print("| cause | gold names |")
    print("|---|---:|")
    for cause, found in sorted(by_cause.items(), key=lambda item: -len(item[1])):
        print(f"| {cause} | {len(found)} |")
    for cause, found in sorted(by_cause.items()) if examples > 0 else ():
        print()
        print(f"{cause}:")
        for miss in found[:examples]:
            place = "past 40" if miss.place is None else f"#{miss.place}"
            print(f"  {miss.gold} ({place}): {miss.query[:120]}")


def main(argv: Sequence[str] | None = None) -> None:
    """Print the misses of the default BFCL set."""
    parser = argparse.ArgumentParser(prog="python -m bench.shortlist_misses")
    parser.add_argument("--top", type=int, default=5, help="a gold name past this place is missed")
    parser.add_argument("--examples", type=int, default=3, help="examples printed per cause")
    options = parser.parse_args(argv)
    report(misses(catalogue(), cases(), options.top), options.examples)


if __name__ == "__main__":
    main()

"""How well a shortlist finds the tools a query needs: the cases, the catalogue, the figures.

An evaluation file holds JSON Lines ``{"query": ..., "answer": [tool names]}``: each query and
every tool it needs. `read_cases` reads one and says what is wrong with each line it cannot use
(malformed JSON, no ``query``, an ``answer`` that is not a list of names, a name the catalogue
lacks), so a bad line is never counted silently as a miss or a hit. `read_catalogue` reads a
catalogue given as a file of tool definitions (an MCP ``tools/list`` result, or JSON Lines of
``{name, description, inputSchema}``), keeping every definition of a name (BFCL defines some
names several times). `evaluate` runs each query once and scores the rankings:

- R@k: the share of a query's gold names among its first k ranked names, averaged over queries;
- all@k: the share of queries whose gold names are all among the first k;
- MRR@10: the mean of 1 / the place of the first gold name among the first 10 (0 past it).

A ranking counts each name once, at its best place (`schemawire.gates.shortlist` already lists a
name once). The metric functions are pure, for any ranker (``bench/shortlist.py`` scores its
anchors with them too).
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from schemawire._json import loads, loads_lines, quoted
from schemawire._pointer import join
from schemawire.errors import ErrorCode, InputError
from schemawire.gates.shortlist import ToolIndex
from schemawire.project.importers import import_mcp
from schemawire.types import ToolSpec

__all__ = [
    "KS",
    "MRR_DEPTH",
    "CaseOutcome",
    "EvalReport",
    "ShortlistCase",
    "all_gold_at",
    "evaluate",
    "read_cases",
    "read_catalogue",
    "recall_at",
    "reciprocal_rank",
]

KS = (1, 3, 5, 10)
MRR_DEPTH = 10


# --- metrics: pure functions of one ranking and its gold names -------------------------------


def _distinct(ranking: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ranking))


def recall_at(ranking: Sequence[str], gold: Collection[str], k: int) -> float:
    """The share of the gold names among the first ``k`` distinct names of ``ranking``."""
    wanted = set(gold)
    top = set(_distinct(ranking)[:k])
    return len(wanted & top) / len(wanted) if wanted else 0.0


def all_gold_at(ranking: Sequence[str], gold: Collection[str], k: int) -> bool:
    """Whether every gold name is among the first ``k`` distinct names of ``ranking``."""
    return bool(gold) and set(gold) <= set(_distinct(ranking)[:k])


def reciprocal_rank(ranking: Sequence[str], gold: Collection[str], k: int = MRR_DEPTH) -> float:
    """1 / the place of the first gold name among the first ``k`` distinct names, else 0."""
    wanted = set(gold)
    for place, name in enumerate(_distinct(ranking)[:k], start=1):
        if name in wanted:
            return 1.0 / place
    return 0.0


# --- the cases -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShortlistCase:
    """One query and every tool it needs.

    Attributes:
        query: the user's words.
        answer: the gold tool names, each once, in the order given.
        line: the line of the evaluation file it was read from.
    """

    query: str
    answer: tuple[str, ...]
    line: int


def read_cases(
    data: bytes, source: str, known: Collection[str]
) -> tuple[list[ShortlistCase], list[InputError]]:
    """The cases of an evaluation file, and what is wrong with each line that cannot be used.

    Args:
        data: the file's bytes, JSON Lines.
        source: the file's name, for the errors.
        known: the catalogue's tool names: an answer naming another tool is an error.
    """
    cases: list[ShortlistCase] = []
    problems: list[InputError] = []
    names = set(known)
    for line in loads_lines(data, source=source):
        if line.error is not None:
            problems.append(line.error)
            continue
        found = list(_case_problems(line.value, names))
        if found:
            problems += [_problem(source, line.number, pointer, text) for pointer, text in found]
            continue
        assert isinstance(line.value, dict)  # _case_problems said so
        answer = tuple(dict.fromkeys(cast(list[str], line.value["answer"])))
        cases.append(ShortlistCase(cast(str, line.value["query"]), answer, line.number))
    return cases, problems


_NAME_HINT = (
    "fix the name, or give the catalogue that has it (--repo, --tools, or the server after --)"
)


def _case_problems(value: Any, known: set[str]) -> Iterator[tuple[str, str]]:
    """Each problem of one line's value, as a pointer and a message."""
    if not isinstance(value, dict):
        yield "", 'a case is an object {"query": "...", "answer": ["tool", ...]}'
        return
    query = value.get("query")
    if not isinstance(query, str) or not query.strip():
        yield "/query", 'a case needs "query": the user\'s words, a non-empty string'
    answer = value.get("answer")
    if not isinstance(answer, list) or not answer:
        yield "/answer", 'a case needs "answer": a non-empty list of the tool names it needs'
        return
    for number, name in enumerate(answer):
        pointer = join("/answer", number)
        if not isinstance(name, str):
            yield pointer, f"a tool name is a string, not {quoted(name)}"
        elif name not in known:
            yield pointer, f"the catalogue has no tool {quoted(name)}: {_NAME_HINT}"
    for extra in sorted(set(value) - {"query", "answer"}):
        yield join("", extra), f"a case holds only query and answer, not {quoted(extra)}"


def _problem(source: str, line: int, pointer: str, message: str) -> InputError:
    return InputError(ErrorCode.CONFIG_INVALID, message, source=source, pointer=pointer, line=line)


# --- a catalogue as a file -------------------------------------------------------------------


def read_catalogue(data: bytes, source: str) -> list[ToolSpec]:
    """The tools of a file of tool definitions: an MCP ``tools/list`` result (``{"tools":
    [...]}``, as ``schemawire tools --json`` writes it, or the bare list), or JSON Lines of MCP
    tools ``{name, description, inputSchema}``. Every definition is kept, even of a name
    defined twice.

    Raises:
        InputError: the file is neither form, or a definition cannot be read as an MCP tool.
    """
    if _is_json_lines(data):
        specs = []
        for line in loads_lines(data, source=source):
            if line.error is not None:
                raise line.error
            specs.append(_tool(line.value, source, "", line.number))
        return specs
    document = loads(data, source=source)
    if isinstance(document, dict) and "name" in document and "tools" not in document:
        return [_tool(document, source, "", None)]  # JSON Lines of one tool
    listed = document.get("tools") if isinstance(document, dict) else document
    where = "/tools" if isinstance(document, dict) else ""
    if not isinstance(listed, list):
        raise InputError(
            ErrorCode.CONFIG_INVALID,
            'a catalogue file holds {"tools": [...]} (MCP tools/list), a list of tools, or '
            "JSON Lines of {name, description, inputSchema}",
            source=source,
            pointer=where or None,
        )
    return [_tool(entry, source, join(where, n), None) for n, entry in enumerate(listed)]


def _is_json_lines(data: bytes) -> bool:
    """Whether ``data`` is JSON Lines: more than one line, the first a whole JSON object."""
    lines = [line for line in data.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    try:
        return isinstance(loads(lines[0]), dict)
    except InputError:
        return False


def _tool(entry: Any, source: str, pointer: str, line: int | None) -> ToolSpec:
    """One MCP tool definition as a spec, as a client reads a server's listing.

    Raises:
        InputError: ``entry`` is not an MCP tool (a line of a cases file is told so).
    """
    if isinstance(entry, dict) and {"query", "answer"} <= set(entry) and "name" not in entry:
        raise InputError(
            ErrorCode.CONFIG_INVALID,
            "a tool definition is {name, description, inputSchema}; this looks like a cases "
            "file ({query, answer} lines): pass it to --eval, and the tools to --tools",
            source=source,
            pointer=pointer or None,
            line=line,
        )
    try:
        (imported,) = import_mcp([entry])
    except InputError as error:
        inner = (error.pointer or "").removeprefix("/0")
        raise InputError(
            error.code,
            f"{error.message}: each tool is an MCP tool {{name, description, inputSchema}}",
            source=source,
            pointer=pointer + inner,
            line=line,
        ) from error
    return ToolSpec(imported.name, imported.schema, imported.output_schema)


# --- the run ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseOutcome:
    """One query's ranking, scored.

    Attributes:
        case: the query and its gold names.
        ranking: the names the shortlist ranked, best first (pinned tools left out).
        seconds: how long the search took.
    """

    case: ShortlistCase
    ranking: tuple[str, ...]
    seconds: float = 0.0

    def missing_at(self, k: int) -> tuple[str, ...]:
        """The gold names not among the first ``k`` ranked."""
        top = set(self.ranking[:k])
        return tuple(name for name in self.case.answer if name not in top)

    def first_gold(self) -> int | None:
        """The place (from 1) of the first gold name in the ranking, if it is there."""
        gold = set(self.case.answer)
        return next((n for n, name in enumerate(self.ranking, start=1) if name in gold), None)

    def to_json(self, k: int) -> dict[str, Any]:
        """This outcome as JSON: the query, the gold names, the top ``k`` and what it missed."""
        return {
            "line": self.case.line,
            "query": self.case.query,
            "answer": list(self.case.answer),
            "ranked": list(self.ranking[:k]),
            "missing": list(self.missing_at(k)),
            "first_gold": self.first_gold(),
        }


@dataclass(frozen=True)
class EvalReport:
    """Every query's outcome over one catalogue, and the figures.

    Attributes:
        k: the shortlist size the cases pass or fail at (all gold names in the top k).
        catalogue_size: how many tool definitions the catalogue holds.
        outcomes: each case's ranking, in the file's order.
    """

    k: int
    catalogue_size: int
    outcomes: tuple[CaseOutcome, ...]

    @property
    def ks(self) -> tuple[int, ...]:
        """The depths the figures are given at: 1, 3, 5, 10 and ``k``."""
        return tuple(sorted({*KS, self.k}))

    def recall(self, k: int) -> float:
        """Mean R@k over the cases."""
        return _mean(recall_at(o.ranking, o.case.answer, k) for o in self.outcomes)

    def all_gold(self, k: int) -> float:
        """The share of cases with every gold name in the top k."""
        return _mean(float(all_gold_at(o.ranking, o.case.answer, k)) for o in self.outcomes)

    def mrr(self) -> float:
        """Mean reciprocal rank of the first gold name within the top 10."""
        return _mean(reciprocal_rank(o.ranking, o.case.answer) for o in self.outcomes)

    def query_ms(self, share: float) -> float:
        """The nearest-rank percentile (``share`` in 0..1) of the search times, in ms."""
        ordered = sorted(o.seconds for o in self.outcomes)
        if not ordered:
            return 0.0
        return 1000 * ordered[max(0, math.ceil(share * len(ordered)) - 1)]

    def misses(self) -> list[CaseOutcome]:
        """The cases missing a gold name at ``k``, worst first: least recall at ``k``, then no
        gold name ranked at all, then the first gold name furthest down, then file order."""
        missed = [o for o in self.outcomes if o.missing_at(self.k)]
        return sorted(missed, key=self._badness)

    def _badness(self, outcome: CaseOutcome) -> tuple[float, bool, int, int]:
        first = outcome.first_gold()
        recall = recall_at(outcome.ranking, outcome.case.answer, self.k)
        return (recall, first is not None, -(first or 0), outcome.case.line)

    def to_json(self, worst: int) -> dict[str, Any]:
        """The figures as JSON, with the ``worst`` worst misses."""
        misses = self.misses()
        return {
            "cases": len(self.outcomes),
            "catalogue": {"size": self.catalogue_size},
            "k": self.k,
            "recall": {str(k): round(self.recall(k), 4) for k in self.ks},
            "all_gold": {str(k): round(self.all_gold(k), 4) for k in self.ks},
            "mrr_at_10": round(self.mrr(), 4),
            "query_ms": {"p50": round(self.query_ms(0.5), 3), "p95": round(self.query_ms(0.95), 3)},
            "missed": len(misses),
            "worst": [o.to_json(self.k) for o in misses[:worst]],
        }


def evaluate(index: ToolIndex, cases: Sequence[ShortlistCase], k: int = 10) -> EvalReport:
    """Run each case's query once over ``index`` and score the rankings.

    Args:
        index: the catalogue's index (its pinned tools are left out of every ranking).
        cases: the cases, from `read_cases`.
        k: the shortlist size a case passes at.
    """
    depth = max(k, *KS)
    outcomes = []
    for case in cases:
        started = time.perf_counter()
        shortlist = index.search(case.query, k=depth)
        seconds = time.perf_counter() - started
        ranking = tuple(tool.name for tool in shortlist.tools if not tool.pinned)
        outcomes.append(CaseOutcome(case, ranking, seconds))
    return EvalReport(k, index.definitions, tuple(outcomes))


def _mean(values: Iterator[float] | Any) -> float:
    found = list(values)
    return sum(found) / len(found) if found else 0.0

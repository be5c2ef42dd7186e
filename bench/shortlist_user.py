"""The shortlist bench on user-style queries, and the semantic ranker on both sets.

The user-style set (``bench/data/shortlist-user.jsonl``, see ``bench/data/README.md``): 329
queries written the way users talk, over the real ``tools/list`` of ten MCP servers
(``tests/data/mcp-tools/`` and its ``more/``, 159 tools), each tool named ``<server>_<tool>``
as a gateway namespaces it. Rankers, each on the same catalogue in one run:

- the anchors of ``bench/shortlist.py`` (Pydantic-style keyword overlap, FastMCP-style BM25);
- ``ToolIndex`` with BM25 alone;
- the semantic extra's embedder alone (cosine over `semantic_embedder`'s vectors);
- ``ToolIndex`` with that embedder: BM25 fused with it.

Then the semantic rows on the BFCL set of ``bench/shortlist.py`` (2,405 definitions), where the
extra's goal is recall@10 >= 0.96 and a query p95 <= 30 ms.

    python -m bench.shortlist_user          # both tables

It also writes the catalogue as a tools file, so the set runs through the command line too::

    schemawire shortlist --eval bench/data/shortlist-user.jsonl \
        --tools bench/.work/shortlist-user-tools.jsonl
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.shortlist import (
    TOP,
    Ranker,
    Row,
    fastmcp_bm25,
    keyword_overlap,
    measure,
    print_rows,
)
from bench.shortlist_sets import Case
from bench.shortlist_sets import cases as bfcl_cases
from bench.shortlist_sets import catalogue as bfcl_catalogue
from schemawire._json import dumps
from schemawire.gates import ToolIndex, semantic_embedder
from schemawire.gates._semantic import DenseIndex
from schemawire.project.importers import import_mcp
from schemawire.types import ToolSpec

ROOT = Path(__file__).resolve().parents[1]
TOOLS_FILE = ROOT / "bench" / ".work" / "shortlist-user-tools.jsonl"
QUERIES = ROOT / "bench" / "data" / "shortlist-user.jsonl"
SERVERS = ROOT / "tests" / "data" / "mcp-tools"
# The captures of tests/data/mcp-tools (capture.py) and of its more/ (capture_more.py).
SERVER_NAMES = (
    "everything",
    "filesystem",
    "memory",
    "more/sequential-thinking",
    "more/github",
    "more/slack",
    "more/google-maps",
    "more/playwright",
    "more/chrome-devtools",
    "more/notion",
)
SEPARATOR = "_"


def catalogue() -> list[ToolSpec]:
    """Every captured server's tools, named ``<server>_<tool>``."""
    specs: list[ToolSpec] = []
    for server in SERVER_NAMES:
        listed = json.loads((SERVERS / f"{server}.json").read_text(encoding="utf-8"))
        for tool in import_mcp(listed):
            name = f"{server.removeprefix('more/')}{SEPARATOR}{tool.name}"
            specs.append(ToolSpec(name, tool.schema, tool.output_schema))
    return specs


def write_tools(specs: Sequence[ToolSpec], path: Path) -> None:
    """The catalogue as JSON Lines of ``{name, description, inputSchema}``, which
    ``schemawire shortlist --tools`` reads."""
    lines = [
        dumps(
            {"name": s.name, "description": s.description, "inputSchema": s.input_schema},
            indent=False,
        )
        for s in specs
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def sources(specs: Sequence[ToolSpec]) -> dict[str, str]:
    """Each tool's server, by name."""
    return {spec.name: spec.name.split(SEPARATOR, 1)[0] for spec in specs}


def cases() -> list[Case]:
    """The user-style queries, each with its gold tool names."""
    lines = QUERIES.read_text(encoding="utf-8").splitlines()
    return [Case(line["query"], tuple(line["answer"])) for line in map(json.loads, lines)]


def bm25(specs: Sequence[ToolSpec]) -> Ranker:
    """``ToolIndex`` with BM25 alone."""
    index = ToolIndex(specs)
    return lambda query: [tool.name for tool in index.search(query, k=TOP).tools]


def dense(specs: Sequence[ToolSpec]) -> Ranker:
    """The semantic extra's embedder alone: tools by cosine similarity."""
    index = DenseIndex(specs, semantic_embedder())
    return lambda query: index.ranking(query)[:TOP]


def fused(specs: Sequence[ToolSpec]) -> Ranker:
    """``ToolIndex`` with the semantic extra's embedder: BM25 fused with it."""
    index = ToolIndex(specs, embedder=semantic_embedder())
    return lambda query: [tool.name for tool in index.search(query, k=TOP).tools]


ANCHORS: tuple[tuple[str, Callable[[Sequence[ToolSpec]], Ranker]], ...] = (
    ("Pydantic-style keyword overlap (name + description)", keyword_overlap),
    ("FastMCP-style BM25 (its text and tokenizer)", fastmcp_bm25),
)
SEMANTIC: tuple[tuple[str, Callable[[Sequence[ToolSpec]], Ranker]], ...] = (
    ("semantic alone (wordllama 256-d, `semantic_embedder`)", dense),
    ("schemawire ToolIndex + semantic (BM25 fused by RRF)", fused),
)


def run_user() -> tuple[list[Row], int, int]:
    """Every ranker on the user-style set: the rows, then queries and tools."""
    specs, found = catalogue(), cases()
    builders = (*ANCHORS, ("schemawire ToolIndex (BM25 default)", bm25), *SEMANTIC)
    return _measured(builders, specs, found), len(found), len(specs)


def run_bfcl() -> tuple[list[Row], int, int]:
    """BM25 and the semantic rows on the BFCL set: the rows, then queries and definitions."""
    specs, found = bfcl_catalogue(), bfcl_cases()
    builders = (("schemawire ToolIndex (BM25 default)", bm25), *SEMANTIC)
    return _measured(builders, specs, found), len(found), len(specs)


def _measured(
    builders: Sequence[tuple[str, Callable[[Sequence[ToolSpec]], Ranker]]],
    specs: Sequence[ToolSpec],
    found: Sequence[Case],
) -> list[Row]:
    rows = [measure(label, lambda b=b: b(specs), found) for label, b in builders]  # type: ignore[misc]
    return [row for row in rows if row is not None]


def print_table(title: str, rows: Sequence[Row], goals: str) -> None:
    """One table in the form of ``bench/shortlist.py``'s."""
    print(title)
    print()
    print_rows(rows)
    print()
    print(goals)
    print()


def main() -> None:
    """Both tables: the user-style set, then the semantic rows on BFCL."""
    write_tools(catalogue(), TOOLS_FILE)
    rows, queries, tools = run_user()
    print_table(
        f"shortlist: user-style set, {queries} queries over {tools} tools of "
        f"{len(SERVER_NAMES)} MCP servers",
        rows,
        "goals (issue 14): with the semantic extra R@5 >= 0.85, BM25 alone R@5 >= 0.70",
    )
    rows, queries, tools = run_bfcl()
    print_table(
        f"shortlist: the semantic extra on the BFCL set, {queries:,} queries over "
        f"{tools:,} definitions",
        rows,
        "goals (issue 14): with the semantic extra R@10 >= 0.96, query p95 <= 30 ms",
    )


if __name__ == "__main__":
    main()
    sys.exit(0)

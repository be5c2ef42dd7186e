"""The shortlist's dense ranking: any embedder fused with BM25, and the semantic extra's own."""

from __future__ import annotations

import builtins
import hashlib
import json
import logging
import math
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from bench import shortlist_user
from schemawire import ToolIndex, ToolSpec, UsageError
from schemawire.gates import Embedder, Shortlist, _semantic, semantic_embedder
from schemawire.gates._semantic import DenseIndex, fuse
from schemawire.schema.validator import compile_schema

SCHEMA = compile_schema(
    json.loads(resources.files("schemawire.gates").joinpath("shortlist.schema.json").read_text()),
    source="shortlist.schema.json",
)
DIMENSIONS = 64
# What the test embedder knows that BM25 cannot: made-up words no table of related words has,
# which the embedder reads as "image" and "capture".
SYNONYMS = {"zorp": "image", "blick": "capture"}


class HashingEmbedder:
    """A deterministic bag-of-words embedder: each word (after `SYNONYMS`) adds 1 to a
    dimension chosen by its SHA-256, so texts that share words, or synonyms, point alike."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self._vector(text) for text in texts]

    @staticmethod
    def _vector(text: str) -> list[float]:
        vector = [0.0] * DIMENSIONS
        for written in text.lower().replace(".", " ").replace(",", " ").split():
            word = SYNONYMS.get(written, written)
            digest = hashlib.sha256(word.encode()).digest()
            vector[int.from_bytes(digest[:4], "big") % DIMENSIONS] += 1.0
        return vector


def _tool(name: str, description: str = "", **schema: Any) -> ToolSpec:
    return ToolSpec(name, {"type": "object", "description": description, **schema})


CATALOGUE = [
    _tool("take_screenshot", "Capture an image of the page."),
    _tool("navigate_page", "Go to a URL.", properties={"url": {"type": "string"}}),
    _tool("list_issues", "Issues of a repository."),
    _tool("send_message", "Post text to a channel."),
    _tool("get_weather", "Tomorrow's forecast for a city."),
]


def _names(shortlist: Shortlist) -> list[str]:
    return [tool.name for tool in shortlist.tools]


def _assert_valid(shown: dict[str, Any]) -> None:
    assert SCHEMA.violations(shown) == ()


# --- any embedder, fused with BM25 ----------------------------------------------------------


def test_an_embedder_finds_a_tool_that_shares_no_word_with_the_query() -> None:
    query = "blick a zorp"
    assert ToolIndex(CATALOGUE).search(query, k=2).tools == ()  # BM25 alone: nothing

    shortlist = ToolIndex(CATALOGUE, embedder=HashingEmbedder()).search(query, k=2)

    assert _names(shortlist)[0] == "take_screenshot"
    assert shortlist.tools[0].matched == ()  # found by meaning, not by a word
    shown = shortlist.to_json()
    assert shown["ranker"] == "bm25+dense"
    # every tool is ranked by meaning: it is listed and counted, and the rest are left out
    names = len({spec.name for spec in CATALOGUE})
    assert (shown["total_matches"], shown["returned"], shown["truncated"]) == (names, 2, True)
    assert "hint" not in shown
    _assert_valid(shown)


def test_the_fused_ranking_keeps_what_bm25_found_and_reports_its_fields() -> None:
    shortlist = ToolIndex(CATALOGUE, embedder=HashingEmbedder()).search("repository issues", k=3)
    first = shortlist.tools[0]
    assert first.name == "list_issues"
    assert set(first.matched) >= {"name", "description"}
    assert first.score > 0
    _assert_valid(shortlist.to_json())


def test_bm25_alone_keeps_the_json_it_always_had() -> None:
    shown = ToolIndex(CATALOGUE).search("repository issues", k=3).to_json()
    assert "ranker" not in shown
    assert ToolIndex(CATALOGUE).search("x", k=1).ranker == "bm25"


def test_the_embedder_reads_each_tool_once_at_build_and_each_query_once() -> None:
    embedder = HashingEmbedder()
    index = ToolIndex(CATALOGUE, embedder=embedder)
    assert len(embedder.calls) == 1
    assert len(embedder.calls[0]) == len(CATALOGUE)
    index.search("grab a picture", k=2)
    index.search("weather in paris", k=2)
    assert embedder.calls[1:] == [["grab a picture"], ["weather in paris"]]


def test_the_tool_text_an_embedder_reads_is_prose() -> None:
    spec = _tool("getFileInfo", "Size and dates.", properties={"max_depth": {}, "path": {}})
    expected = "get File Info. Size and dates. Parameters: max depth, path."
    assert _semantic.dense_text(spec) == expected


def test_the_same_catalogue_in_any_order_gives_the_same_json_with_an_embedder() -> None:
    expected = ToolIndex(CATALOGUE, embedder=HashingEmbedder()).search("snap a photo", k=3)
    for seed in range(5):
        shuffled = random.Random(seed).sample(CATALOGUE, len(CATALOGUE))
        index = ToolIndex(shuffled, pinned=["send_message"], embedder=HashingEmbedder())
        found = ToolIndex(shuffled, embedder=HashingEmbedder()).search("snap a photo", k=3)
        assert json.dumps(found.to_json()) == json.dumps(expected.to_json())
        assert index.search("snap a photo", k=3).tools[-1].pinned


def test_refreshed_keeps_the_embedder() -> None:
    embedder = HashingEmbedder()
    index = ToolIndex(CATALOGUE, embedder=embedder)
    assert index.refreshed(list(reversed(CATALOGUE))) is index

    grown = index.refreshed([*CATALOGUE, _tool("upload_file", "Send a file through a form.")])

    assert grown is not index
    assert len(embedder.calls) == 2  # the new catalogue was embedded by the same embedder
    shortlist = grown.search("grab a picture", k=1)
    assert (shortlist.ranker, _names(shortlist)) == ("bm25+dense", ["take_screenshot"])


def test_an_empty_catalogue_with_an_embedder_lists_nothing_and_says_what_to_try() -> None:
    embedder = HashingEmbedder()
    shortlist = ToolIndex([], embedder=embedder).search("grab a picture", k=3)
    assert (shortlist.tools, shortlist.catalogue_size) == ((), 0)
    assert shortlist.hint is not None
    assert embedder.calls == [["grab a picture"]]  # no tools to embed at build
    _assert_valid(shortlist.to_json())


def test_the_ranking_is_the_same_without_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    with_numpy = DenseIndex(CATALOGUE, HashingEmbedder()).ranking("grab a picture of the page")
    _block_imports(monkeypatch, "numpy")
    without = DenseIndex(CATALOGUE, HashingEmbedder())
    assert without._matrix._numpy is None
    assert without.ranking("grab a picture of the page") == with_numpy


@pytest.mark.parametrize(
    "embedder",
    [
        pytest.param(lambda texts: [[1.0, 0.0]] * (len(texts) - 1), id="one-vector-too-few"),
        pytest.param(lambda texts: [[1.0] * (1 + n % 2) for n in range(len(texts))], id="ragged"),
        pytest.param(lambda texts: [[math.nan, 1.0] for _ in texts], id="nan"),
        pytest.param(lambda texts: [[] for _ in texts], id="empty-vectors"),
    ],
)
def test_an_embedder_that_breaks_its_contract_is_a_usage_error(embedder: Embedder) -> None:
    with pytest.raises(UsageError):
        ToolIndex(CATALOGUE, embedder=embedder)


def test_a_query_vector_of_another_size_is_a_usage_error() -> None:
    def embedder(texts: Sequence[str]) -> list[list[float]]:
        size = 3 if len(texts) == len(CATALOGUE) else 2  # the query gets a shorter vector
        return [[1.0] * size for _ in texts]

    index = ToolIndex(CATALOGUE, embedder=embedder)
    with pytest.raises(UsageError):
        index.search("anything", k=1)


def test_the_dense_side_weighs_more_when_bm25_is_unsure() -> None:
    dense = ["b", "a"]
    sure = fuse({"a": _semantic.CONFIDENT, "b": 1.0}, dense)
    unsure = fuse({"a": _semantic.CONFIDENT / 2, "b": 1.0}, dense)
    assert sure["a"] > sure["b"]  # BM25's confident first place holds
    assert unsure["b"] > unsure["a"]  # the embedder's first place wins
    assert fuse({}, dense)["b"] == _semantic.DENSE_WEIGHT_UNSURE / (_semantic.RRF_K + 1)


# --- the semantic extra's embedder ----------------------------------------------------------


def test_the_ready_made_embedder_gives_unit_vectors_of_256_dimensions() -> None:
    vectors = semantic_embedder()(["open the door", "close the window"])
    assert len(vectors) == 2
    for vector in vectors:
        assert len(vector) == 256
        assert math.isclose(math.fsum(float(x) ** 2 for x in vector), 1.0, rel_tol=1e-4)


def test_loading_the_ready_made_embedder_leaves_the_root_logger_alone() -> None:
    _semantic._wordllama.cache_clear()
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    semantic_embedder()
    assert (list(root.handlers), root.level) == before


@pytest.mark.parametrize(
    ("query", "tool"),
    [
        ("show me what's inside notes.txt", "filesystem_read_text_file"),
        ("Alice doesn't manage Bob anymore, remove that link", "memory_delete_relations"),
        ("show me the README from the octocat/hello-world repo", "github_get_file_contents"),
        ("work in the other chrome page from now on", "chrome-devtools_select_page"),
    ],
)
def test_the_ready_made_embedder_finds_requests_bm25_alone_misses(query: str, tool: str) -> None:
    specs = shortlist_user.catalogue()
    assert tool not in _names(ToolIndex(specs).search(query, k=5))
    assert tool in _names(_mcp_index().search(query, k=3))


def test_the_ready_made_embedder_lifts_recall_on_the_user_style_set() -> None:
    specs, cases = shortlist_user.catalogue(), shortlist_user.cases()
    bm25, fused = ToolIndex(specs), _mcp_index()

    def found(index: ToolIndex, k: int) -> int:
        return sum(set(case.answer) <= set(_names(index.search(case.query, k=k))) for case in cases)

    # measured: at 1, 0.47 of the queries against 0.42 with BM25 and its related words alone
    assert found(fused, 1) > found(bm25, 1) * 1.05
    assert found(fused, 5) >= found(bm25, 5)


def test_the_ready_made_embedder_gives_the_same_json_whatever_the_catalogue_order() -> None:
    specs, cases = shortlist_user.catalogue(), shortlist_user.cases()[::10]
    expected = [_mcp_index().search(case.query, k=5).to_json() for case in cases]
    shuffled = random.Random(7).sample(specs, len(specs))
    index = ToolIndex(shuffled, sources=shortlist_user.sources(specs), embedder=semantic_embedder())
    assert [index.search(case.query, k=5).to_json() for case in cases] == expected


# Every user-style query's fused shortlist, as one JSON document on stdout.
_SHORTLISTS = """
import json
from bench import shortlist_user
from schemawire import ToolIndex
from schemawire.gates import semantic_embedder
index = ToolIndex(shortlist_user.catalogue(), embedder=semantic_embedder())
print(json.dumps([index.search(c.query, k=5).to_json() for c in shortlist_user.cases()]))
"""


@pytest.mark.slow
def test_two_hash_seeds_give_the_same_fused_shortlists_byte_for_byte() -> None:
    root = Path(__file__).resolve().parents[2]

    def shortlists(seed: str) -> str:
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _SHORTLISTS],
            cwd=root,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout

    first = shortlists("1")
    assert len(json.loads(first)) == len(shortlist_user.cases())
    assert shortlists("2") == first


def test_without_the_extra_the_embedder_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _semantic._wordllama.cache_clear()
    _block_imports(monkeypatch, "wordllama")
    with pytest.raises(UsageError, match=r"pip install 'schemawire\[semantic\]'"):
        semantic_embedder()
    _semantic._wordllama.cache_clear()  # the next test loads the real one again


# --- the user-style set ---------------------------------------------------------------------


def test_the_user_style_set_names_only_tools_of_its_catalogue() -> None:
    specs, cases = shortlist_user.catalogue(), shortlist_user.cases()
    names = {spec.name for spec in specs}
    assert len(names) == len(specs) >= 150
    assert len(cases) >= 300
    assert len({case.query for case in cases}) == len(cases)
    assert {name for case in cases for name in case.answer} <= names


_MCP_INDEX: list[ToolIndex] = []


def _mcp_index() -> ToolIndex:
    """The ten MCP servers' tools with the ready-made embedder, built once for these tests."""
    if not _MCP_INDEX:
        specs = shortlist_user.catalogue()
        sources = shortlist_user.sources(specs)
        _MCP_INDEX.append(ToolIndex(specs, sources=sources, embedder=semantic_embedder()))
    return _MCP_INDEX[0]


def _block_imports(monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    """Make ``import package`` (and its submodules) fail, as when it is not installed."""
    real = builtins.__import__

    def blocked(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == package or name.startswith(package + "."):
            raise ModuleNotFoundError(f"No module named {package!r}", name=package)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", blocked)

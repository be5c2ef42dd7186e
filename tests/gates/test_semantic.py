"""The shortlist's dense ranking: any embedder fused with BM25, and the semantic extra's own."""

from __future__ import annotations

import builtins
import hashlib
import json
import logging
import math
import random
import threading
from collections.abc import Sequence
from importlib import resources
from typing import Any

import pytest

from bench import shortlist_user
from schemawire import ToolIndex, ToolSpec, UsageError
from schemawire.gates import Embedder, Shortlist, _semantic, semantic_embedder
from schemawire.gates._semantic import DenseIndex, fuse
from schemawire.schema.validator import compile_schema
from tests.helpers import printed_under_hash_seed

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
    # the completeness figures stay lexical: no tool shares a word, two are listed by meaning
    assert (shown["total_matches"], shown["returned"], shown["truncated"]) == (0, 0, False)
    assert shown["by_meaning"] == 2
    assert "ranked by meaning alone" in shown["hint"]
    _assert_valid(shown)


def test_with_an_embedder_the_figures_count_the_tools_that_share_a_word() -> None:
    # "page" is in two tools' text; the embedder lists three more that share no word.
    shortlist = ToolIndex(CATALOGUE, embedder=HashingEmbedder()).search("the page", k=5)
    lexical = {tool.name for tool in ToolIndex(CATALOGUE).search("the page", k=5).tools}
    shown = shortlist.to_json()
    listed = {tool.name for tool in shortlist.tools if tool.matched}
    assert listed == lexical
    assert (shown["total_matches"], shown["returned"]) == (len(lexical), len(lexical))
    assert (shown["truncated"], shown["by_meaning"]) == (False, 5 - len(lexical))
    assert "hint" not in shown
    _assert_valid(shown)


def test_a_pinned_tool_that_shares_no_word_is_listed_and_not_counted() -> None:
    index = ToolIndex(CATALOGUE, pinned=["get_weather"], embedder=HashingEmbedder())
    shown = index.search("repository issues", k=2).to_json()
    assert [tool["name"] for tool in shown["tools"]][-1] == "get_weather"
    assert (shown["total_matches"], shown["returned"], shown["by_meaning"]) == (1, 1, 1)
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


class BatchCentredEmbedder(HashingEmbedder):
    """A `HashingEmbedder` whose vectors depend on the whole batch (each minus the batch's
    mean), as a model that normalises per batch would: the same text gets another vector in
    another batch or order of batch."""

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = super().__call__(texts)
        mean = [math.fsum(column) / len(vectors) for column in zip(*vectors, strict=True)]
        return [
            [x - m + 0.01 * n for n, (x, m) in enumerate(zip(v, mean, strict=True))]
            for v in vectors
        ]


@pytest.mark.parametrize("embedder", [HashingEmbedder, BatchCentredEmbedder])
def test_the_same_catalogue_in_any_order_gives_the_same_json_with_an_embedder(
    embedder: type[HashingEmbedder],
) -> None:
    catalogue = [*CATALOGUE, _tool("take_screenshot", "Capture the page as a picture.")]
    queries = ("snap a photo", "the page", "")

    def shown(specs: Sequence[ToolSpec]) -> list[str]:
        index = ToolIndex(specs, pinned=["send_message"], embedder=embedder())
        return [
            json.dumps(index.search(query, k=k).to_json()) for query in queries for k in (1, 3, 9)
        ]

    expected = shown(catalogue)
    assert '"pinned": true' in expected[0]
    for seed in range(5):
        assert shown(random.Random(seed).sample(catalogue, len(catalogue))) == expected


def test_refreshed_keeps_the_embedder() -> None:
    embedder = HashingEmbedder()
    index = ToolIndex(CATALOGUE, embedder=embedder)
    assert index.refreshed(list(reversed(CATALOGUE))) is index

    grown = index.refreshed([*CATALOGUE, _tool("upload_file", "Send a file through a form.")])

    assert grown is not index
    assert len(embedder.calls) == 2  # the new catalogue was embedded by the same embedder
    shortlist = grown.search("grab a picture", k=1)
    assert (shortlist.ranker, _names(shortlist)) == ("bm25+dense", ["take_screenshot"])


def test_new_pins_and_a_new_catalogue_are_embedded_once() -> None:
    embedder = HashingEmbedder()
    index = ToolIndex(CATALOGUE, pinned=["send_message"], embedder=embedder)
    grown = [*CATALOGUE, _tool("upload_file", "Send a file through a form.")]
    # what a host does when a server's list changed and a pin came back with it
    again = index.refreshed(grown, pinned=["send_message", "upload_file"])
    assert again.pinned == ("send_message", "upload_file")
    assert len(embedder.calls) == 2  # the first build, then one build of the new catalogue
    assert again.refreshed(list(reversed(grown)), pinned=["upload_file", "send_message"]) is again
    assert len(embedder.calls) == 2


def test_an_empty_catalogue_with_an_embedder_lists_nothing_and_says_what_to_try() -> None:
    embedder = HashingEmbedder()
    shortlist = ToolIndex([], embedder=embedder).search("grab a picture", k=3)
    assert (shortlist.tools, shortlist.catalogue_size) == ((), 0)
    assert shortlist.hint is not None
    assert embedder.calls == []  # no tools to embed at build, and no query to rank them by
    _assert_valid(shortlist.to_json())


@pytest.mark.parametrize("query", ["", "   ", "the of a", "?!"])
def test_a_query_without_words_with_an_embedder_lists_nothing_and_says_what_to_try(
    query: str,
) -> None:
    shortlist = ToolIndex(CATALOGUE, embedder=HashingEmbedder()).search(query, k=3)
    shown = shortlist.to_json()
    assert (shown["tools"], shown["total_matches"], shown["by_meaning"]) == ([], 0, 0)
    assert "no words to look for" in shown["hint"]
    _assert_valid(shown)


def test_a_query_the_embedder_maps_to_zeros_ranks_nothing() -> None:
    def zeros_for_queries(texts: Sequence[str]) -> list[list[float]]:
        return [[0.0, 0.0] if text == "grab it" else [1.0, 0.5] for text in texts]

    shortlist = ToolIndex(CATALOGUE, embedder=zeros_for_queries).search("grab it", k=3)
    assert (shortlist.tools, shortlist.by_meaning) == ((), 0)
    assert shortlist.hint is not None


def test_the_ready_made_embedder_with_an_empty_query_is_not_blamed() -> None:
    index = ToolIndex(CATALOGUE, embedder=semantic_embedder())
    for query in ("", "the", "?"):
        shortlist = index.search(query, k=3)
        assert shortlist.tools == ()
        assert "no words to look for" in (shortlist.hint or "")
    # a blank text embeds to zeros (it was NaN: norm=True divided by zero)
    (vector,) = semantic_embedder()([""])
    assert not any(float(x) for x in vector)


def test_the_ranking_is_the_same_without_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    with_numpy = DenseIndex(CATALOGUE, HashingEmbedder()).ranking("grab a picture of the page")
    _block_imports(monkeypatch, "numpy")
    without = DenseIndex(CATALOGUE, HashingEmbedder())
    assert without._matrix._numpy is None
    assert without.ranking("grab a picture of the page") == with_numpy


@pytest.mark.parametrize("cosine", [0.4468285, 0.5325585, 0.3633935, 0.25, -0.1234565])
def test_cosines_round_the_same_with_numpy_and_without(cosine: float) -> None:
    import numpy

    assert _semantic._rounded(cosine) == float(numpy.round(cosine, _semantic._DIGITS))


def test_a_tie_at_a_half_ranks_the_same_with_numpy_and_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Cosines 0.4468285 and 0.446828: round() puts the first above, numpy.round makes a tie.
    catalogue = [_tool("b_tool", "first"), _tool("a_tool", "second")]

    def embedder(texts: Sequence[str]) -> list[list[float]]:
        table = {"query": [1.0, 0.0]}
        cosines = {"b tool. first": 0.4468285, "a tool. second": 0.446828}
        return [table.get(t) or [cosines[t], math.sqrt(1 - cosines[t] ** 2)] for t in texts]

    with_numpy = DenseIndex(catalogue, embedder).ranking("query")
    _block_imports(monkeypatch, "numpy")
    without = DenseIndex(catalogue, embedder)
    assert without._matrix._numpy is None
    assert without.ranking("query") == with_numpy == ["a_tool", "b_tool"]


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


def test_the_ready_made_embedder_gives_vectors_of_256_dimensions() -> None:
    vectors = semantic_embedder()(["open the door", "close the window"])
    assert len(vectors) == 2
    for vector in vectors:
        assert len(vector) == 256
        assert math.fsum(float(x) ** 2 for x in vector) > 0  # DenseIndex scales them to 1


def test_the_ready_made_embedder_reads_a_bounded_prefix_of_a_huge_text() -> None:
    # Each batch is padded to its longest text: 20,000 words in a batch of 64 took 2.8 GB.
    # With truncation, what lies past the limit changes nothing.
    head = "weather forecast for the city " * 200  # past 512 tokens
    embed = semantic_embedder()
    short, huge = embed([head, head + "refund the order " * 20_000])
    assert [float(x) for x in short] == [float(x) for x in huge]
    assert _semantic._MAX_TOKENS == 512


def test_two_threads_load_the_ready_made_embedder_once(monkeypatch: pytest.MonkeyPatch) -> None:
    semantic_embedder()  # the package imported (it reads its own files then), so only loads count
    _semantic._loaded_wordllama.cache_clear()
    loads: list[int] = []
    real = _semantic.resources.files

    def counted(package: Any) -> Any:
        loads.append(1)
        return real(package)

    monkeypatch.setattr(_semantic.resources, "files", counted)
    barrier = threading.Barrier(4)
    found: list[Embedder] = []

    def load() -> None:
        barrier.wait(timeout=10)
        found.append(semantic_embedder())

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(found) == 4
    assert all(embedder is found[0] for embedder in found)
    assert loads == [1]


def test_loading_the_ready_made_embedder_leaves_the_root_logger_alone() -> None:
    _semantic._loaded_wordllama.cache_clear()
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
    first = printed_under_hash_seed(_SHORTLISTS, "1")
    assert len(json.loads(first)) == len(shortlist_user.cases())
    assert printed_under_hash_seed(_SHORTLISTS, "2") == first


def test_without_the_extra_the_embedder_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _semantic._loaded_wordllama.cache_clear()
    _block_imports(monkeypatch, "wordllama")
    with pytest.raises(UsageError, match=r"pip install 'schemawire\[semantic\]'"):
        semantic_embedder()
    _semantic._loaded_wordllama.cache_clear()  # the next test loads the real one again


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

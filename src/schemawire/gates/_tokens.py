"""Words for the shortlist index: split, lowercased, stop words out, stemmed (Snowball English).

The same function reads a tool's text and a user's query, so both sides agree on what a word
is. Tokens are whole words only: ``me`` never matches inside ``comment``.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

__all__ = ["STOP_WORDS", "stem", "tokens"]

# Runs of letters and digits; everything else (`._-/ `, punctuation) separates words.
_RUNS = re.compile(r"[A-Za-z0-9]+")
# Inside a run: camelCase and acronyms (`getHTTPServer` -> get, HTTP, Server) and digits.
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# A Snowball stemmer keeps the word it works on in itself: one caller at a time.
_ENGLISH_LOCK = threading.Lock()

# Common English function words. Deliberately absent: `me` and `my`, which name things in
# tool catalogues (GitHub's `get_me`), and negations, which change what a user asks for.
_STOP_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just let lets more most of on or other our ours ourselves out over own please same she
    should so some such than that the their theirs them themselves then there these they this
    those through to too under until up us very was we were what when where which while who whom
    why will with would you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


def tokens(text: str) -> list[str]:
    """The words of ``text``, in order: split on separators and camelCase, lowercased, stop
    words and single letters dropped, each stemmed with `stem`."""
    words: list[str] = []
    for run in _RUNS.findall(text):
        for part in _PARTS.findall(run):
            word = part.lower()
            if word in STOP_WORDS or (len(word) == 1 and not word.isdigit()):
                continue
            words.append(stem(word))
    return words


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """``word`` reduced to its Snowball (Porter2) English stem, so that ``create``, ``creates``,
    ``created`` and ``creating`` are one word, and so are ``calculate`` and ``calculation``.
    Whole words only: a stem never matches inside another word."""
    with _ENGLISH_LOCK:
        stemmed: str = _english().stemWord(word)
    return stemmed


@functools.cache
def _english() -> Any:
    # Pure Python, no dependencies of its own. Porter2 joins more forms of a word than a few
    # suffix rules (`calculation`/`calculate`, `translation`/`translate`): on the BFCL set it
    # lifts recall@5 by about 0.01 over the light stemmer this module had (BENCHMARKS.md,
    # gate 1). Imported on first use: the package loads all its 36 stemmers (10 ms), and most
    # commands never shortlist.
    import snowballstemmer  # type: ignore[import-untyped]

    return snowballstemmer.stemmer("english")

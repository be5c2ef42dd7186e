"""Words for the shortlist index: split, lowercased, stop words out, stemmed (Snowball English).

The same function reads a tool's text and a user's query, so both sides agree on what a word
is. Tokens are whole words only: ``me`` never matches inside ``comment``. A name like ``s3``,
``ec2`` or ``IPv4`` is one word as well as its parts. Text in other scripts is kept: a word with
accents or in Cyrillic whole, Chinese, Japanese and Korean (written without spaces) as pairs of
characters, the usual unit for matching them without a dictionary.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

__all__ = ["STOP_WORDS", "stem", "tokens"]

# Runs of letters and digits in any script; everything else (`._-/ `, punctuation) separates.
_RUNS = re.compile(r"[^\W_]+")
# Inside an ASCII run: camelCase and acronyms (`getHTTPServer` -> get, HTTP, Server), digits,
# and an acronym that ends in lowercase before its number (`IPv4` -> IPv, 4).
_PARTS = re.compile(r"[A-Z]+[a-z]{1,2}(?=[0-9])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Letters before a number are a name of their own when short: s3, ec2, ipv4, oauth2, sha256.
_JOINED_LETTERS = 6
# Han, kana and Hangul, which are written without spaces between words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_SCRIPTS = re.compile(f"[{_CJK}]+|[^{_CJK}]+")
_CJK_RUN = re.compile(f"[{_CJK}]+")
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
    words and single letters dropped, each English word stemmed with `stem`."""
    words: list[str] = []
    for run in _RUNS.findall(text):
        if run.isascii():
            _ascii_words(run, words)
        else:
            for segment in _SCRIPTS.findall(run):
                _script_words(segment, words)
    return words


def _ascii_words(run: str, words: list[str]) -> None:
    parts = _PARTS.findall(run)
    for number, part in enumerate(parts):
        word = part.lower()
        if not (word in STOP_WORDS or (len(word) == 1 and not word.isdigit())):
            words.append(stem(word))
        following = parts[number + 1] if number + 1 < len(parts) else ""
        if following.isdigit() and part.isalpha() and len(part) <= _JOINED_LETTERS:
            words.append(word + following)


def _script_words(segment: str, words: list[str]) -> None:
    """A segment of a run that is not all ASCII: a CJK one as its pairs of characters (a lone
    character as itself), any other as one lowercased word (ASCII in it read as usual)."""
    if _CJK_RUN.fullmatch(segment):
        pairs = [segment[i : i + 2] for i in range(len(segment) - 1)]
        words.extend(pairs or [segment])
    elif segment.isascii():
        _ascii_words(segment, words)
    elif len(segment) > 1:
        words.append(segment.lower())


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

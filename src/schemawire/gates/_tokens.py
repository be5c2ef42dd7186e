"""Words for the shortlist index: split, lowercased, stop words out, lightly stemmed.

The same function reads a tool's text and a user's query, so both sides agree on what a word
is. Tokens are whole words only: ``me`` never matches inside ``comment``.
"""

from __future__ import annotations

import functools
import re

__all__ = ["STOP_WORDS", "stem", "tokens"]

# Runs of letters and digits; everything else (`._-/ `, punctuation) separates words.
_RUNS = re.compile(r"[A-Za-z0-9]+")
# Inside a run: camelCase and acronyms (`getHTTPServer` -> get, HTTP, Server) and digits.
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_VOWELS = frozenset("aeiouy")
# Not stripped from a stem's end when undoubling (`getting` -> get, but `calling` -> call).
_KEEP_DOUBLED = frozenset("lsz")

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
    """``word`` with a plural, ``-ing``/``-ed`` and a final ``e`` taken off, so that ``create``,
    ``creates``, ``created`` and ``creating`` are one word. Light on purpose: a stem is kept only
    when a vowel is left, so ``string`` and ``bring`` stay whole."""
    word = _singular(word)
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            word = _undouble(word[: -len(suffix)])
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith(("ies", "ied")):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _has_vowel(stem_: str) -> bool:
    return len(stem_) >= 2 and any(letter in _VOWELS for letter in stem_)


def _undouble(stem_: str) -> str:
    # `running` -> runn -> run; `calling` keeps its `ll`.
    last = stem_[-1]
    if len(stem_) > 2 and last == stem_[-2] and last not in _VOWELS | _KEEP_DOUBLED:
        return stem_[:-1]
    return stem_

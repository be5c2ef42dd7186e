"""Redaction: secrets in a tool's result never reach the model or the trace.

Three ways a value is found secret:

- the output schema marks it: ``"x-redact": true`` or ``"writeOnly": true`` on its subschema;
- its key says so: a member whose key holds a word such as ``password``, ``secret`` or ``token``
  (``client_secret``, ``apiKey``, ``X-Auth-Token``; not ``max_tokens`` or ``token_type``);
- a detector matches it: keys of the model providers, AWS, GitHub, Slack and other services,
  JWTs, PEM private keys, bearer and basic credentials, passwords inside URLs.

A secret becomes ``"[REDACTED:<kind>]"``; where a detector knows which part of the match is the
secret (the password of a URL, the token after ``Bearer``), only that part is replaced. The
detectors are data (``secrets.json`` beside this module), each tested with strings it must catch
and look-alikes it must leave.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import orjson

from schemawire._json import loads
from schemawire._pointer import join
from schemawire.gates.verdict import Change

__all__ = ["Detector", "Redactor", "default_redactor"]

Marked = Callable[[str], str | None]  # pointer -> the schema keyword that marks it secret


@dataclass(frozen=True, slots=True)
class Detector:
    """One kind of secret: a pattern, optionally with a group ``secret`` (the part to hide),
    and its triggers: lower-case literals one of which every text it matches holds."""

    kind: str
    pattern: str
    triggers: tuple[str, ...]


class Redactor:
    """Finds and replaces secrets in JSON values. Safe to share between threads."""

    def __init__(
        self, detectors: Iterable[Detector], keys: Iterable[str], key_exceptions: Iterable[str]
    ) -> None:
        self.detectors = tuple(detectors)
        self._kinds = [detector.kind for detector in self.detectors]
        self._combined = re.compile(
            "|".join(_alternative(i, d) for i, d in enumerate(self.detectors))
        )
        # Most strings hold no trigger at all: one pass of cheap substring tests over the
        # lower-cased string spares them the patterns (the combined pattern costs about 100x).
        self._triggers = tuple(sorted({t for d in self.detectors for t in d.triggers}))
        self._shortest = min((len(t) for t in self._triggers), default=0)
        self._keys = frozenset(keys)
        self._key_exceptions = frozenset(key_exceptions)
        # A key naming a secret holds one of the words, or two adjacent words that join into
        # one ("X-Api-Key"): either way its first three letters are in the lower-cased text.
        self._key_words = tuple(sorted({word[:3] for word in self._keys}))
        self._key_kinds: dict[str, str | None] = {}  # keys repeat: each is split once

    def text(self, text: str, triggers: Sequence[str] | None = None) -> tuple[str, list[str]]:
        """``text`` with every detected secret replaced, and the kinds found, in order.

        ``triggers`` narrows the triggers looked for (those known to occur nearby)."""
        if len(text) < self._shortest or not self._triggered(text, triggers or self._triggers):
            return text, []
        found: list[str] = []

        def replace(match: re.Match[str]) -> str:
            index = int((match.lastgroup or "d0")[1:])
            kind = self._kinds[index]
            secret = f"s{index}"
            if match.groupdict().get(secret) is None:
                found.append(kind)
                return f"[REDACTED:{kind}]"
            # The hidden part may itself be a known secret (OPENAI_API_KEY=sk-..., a token as
            # the password of a URL): its own kind says more than the context's.
            inner = self._combined.fullmatch(match.group(secret))
            if inner is not None:
                kind = self._kinds[int((inner.lastgroup or "d0")[1:])]
            found.append(kind)
            start, end = match.span(secret)
            whole = match.group(0)
            offset = match.start()
            return whole[: start - offset] + f"[REDACTED:{kind}]" + whole[end - offset :]

        redacted = self._combined.sub(replace, text)
        return redacted, found

    @staticmethod
    def _triggered(text: str, triggers: Sequence[str]) -> bool:
        lowered = text.lower()
        return any(trigger in lowered for trigger in triggers)

    def _scan(self, value: Any) -> tuple[tuple[str, ...], bool]:
        """The triggers that occur anywhere in ``value``, and whether a key word does: one pass
        over its JSON text, so that each string is then tested for those few triggers only, and
        a value with neither is not walked at all."""
        try:
            text = orjson.dumps(value).decode("utf-8").lower()
        except orjson.JSONEncodeError:
            return self._triggers, True  # integers beyond 64 bits: look everywhere
        triggers = tuple(trigger for trigger in self._triggers if trigger in text)
        return triggers, any(word in text for word in self._key_words)

    def key_kind(self, key: str) -> str | None:
        """The word that makes a member with this key secret, else None."""
        if key in self._key_kinds:
            return self._key_kinds[key]
        kind = self._key_kind(key)
        if len(self._key_kinds) < _KEY_CACHE:
            self._key_kinds[key] = kind
        return kind

    def _key_kind(self, key: str) -> str | None:
        words = [word.lower() for word in _WORDS.findall(key)]
        if not words or self._key_exceptions.intersection(words):
            return None
        candidates = words + [a + b for a, b in itertools.pairwise(words)]
        return next((word for word in candidates if word in self._keys), None)

    def value(
        self, value: Any, marked: Marked | None = None, pointer: str = ""
    ) -> tuple[Any, list[Change]]:
        """``value`` with its secrets replaced (a copy where anything changed), and one change
        per secret, at its pointer. ``marked`` says which pointers the schema marks secret."""
        triggers, key_words = self._scan(value)
        if not triggers and not key_words and marked is None:
            return value, []  # nothing here can be a secret: most large results
        walk = _Walk(self, triggers, marked)
        return walk.value(value, pointer), walk.changes


class _Walk:
    """One redaction of one value."""

    def __init__(self, redactor: Redactor, triggers: tuple[str, ...], marked: Marked | None):
        self.redactor = redactor
        self.triggers = triggers
        self.marked = marked
        self.changes: list[Change] = []

    def value(self, value: Any, pointer: str) -> Any:
        mark = self.marked(pointer) if self.marked is not None and pointer else None
        if mark is not None:
            self.changes.append(Change("redacted", pointer, f"marked {mark} in the output schema"))
            return f"[REDACTED:{mark}]"
        if isinstance(value, str):
            return self._string(value, pointer) if self.triggers else value
        if isinstance(value, list):
            items = [self.value(v, join(pointer, i)) for i, v in enumerate(value)]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        if isinstance(value, dict):
            return self._object(value, pointer)
        return value

    def _object(self, value: dict[str, Any], pointer: str) -> dict[str, Any]:
        copy: dict[str, Any] = {}
        for key, member in value.items():
            at = join(pointer, key)
            kind = self.redactor.key_kind(key) if isinstance(member, str) and member else None
            if kind is not None and not member.startswith("[REDACTED:"):
                self.changes.append(Change("redacted", at, f"the key names a {kind}"))
                copy[key] = f"[REDACTED:{kind}]"
            else:
                copy[key] = self.value(member, at)
        return copy if any(copy[k] is not value[k] for k in value) else value

    def _string(self, text: str, pointer: str) -> str:
        redacted, kinds = self.redactor.text(text, self.triggers)
        self.changes.extend(Change("redacted", pointer, f"a {kind} was found") for kind in kinds)
        return redacted if kinds else text


def _alternative(index: int, detector: Detector) -> str:
    """The detector's pattern as one named alternative of the combined expression: global flags
    become scoped ones, and its ``secret`` group is renamed to stay unique."""
    pattern = detector.pattern.replace("(?P<secret>", f"(?P<s{index}>")
    if pattern.startswith("(?i)"):
        pattern = f"(?i:{pattern[4:]})"
    return f"(?P<d{index}>{pattern})"


_KEY_CACHE = 4096  # distinct keys remembered; results can have many, tools few

# Words of a key: "clientSecret", "X-Api-Key", "db_password2" -> client, secret / x, api, key...
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


@functools.cache
def default_redactor() -> Redactor:
    """The redactor of ``secrets.json``."""
    data: Any = loads(resources.files("schemawire.gates").joinpath("secrets.json").read_bytes())
    detectors = [Detector(d["kind"], d["pattern"], tuple(d["triggers"])) for d in data["detectors"]]
    return Redactor(detectors, data["keys"], data["key_exceptions"])

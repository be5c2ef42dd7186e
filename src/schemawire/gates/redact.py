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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from schemawire._json import loads
from schemawire._pointer import join
from schemawire.gates.verdict import Change

__all__ = ["Detector", "Redactor", "default_redactor"]

Marked = Callable[[str], str | None]  # pointer -> the schema keyword that marks it secret


@dataclass(frozen=True, slots=True)
class Detector:
    """One kind of secret: a pattern, and optionally its group ``secret`` (the part to hide)."""

    kind: str
    pattern: str


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
        self._keys = frozenset(keys)
        self._key_exceptions = frozenset(key_exceptions)

    def text(self, text: str) -> tuple[str, list[str]]:
        """``text`` with every detected secret replaced, and the kinds found, in order."""
        found: list[str] = []

        def replace(match: re.Match[str]) -> str:
            index = int((match.lastgroup or "d0")[1:])
            kind = self._kinds[index]
            found.append(kind)
            secret = f"s{index}"
            if match.groupdict().get(secret) is None:
                return f"[REDACTED:{kind}]"
            start, end = match.span(secret)
            whole = match.group(0)
            offset = match.start()
            return whole[: start - offset] + f"[REDACTED:{kind}]" + whole[end - offset :]

        redacted = self._combined.sub(replace, text)
        return redacted, found

    def key_kind(self, key: str) -> str | None:
        """The word that makes a member with this key secret, else None."""
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
        changes: list[Change] = []
        return self._walk(value, pointer, marked, changes), changes

    def _walk(self, value: Any, pointer: str, marked: Marked | None, changes: list[Change]) -> Any:
        mark = marked(pointer) if marked is not None and pointer else None
        if mark is not None:
            changes.append(Change("redacted", pointer, f"marked {mark} in the output schema"))
            return f"[REDACTED:{mark}]"
        if isinstance(value, str):
            return self._string(value, pointer, changes)
        if isinstance(value, list):
            items = [self._walk(v, join(pointer, i), marked, changes) for i, v in enumerate(value)]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        if isinstance(value, dict):
            return self._object(value, pointer, marked, changes)
        return value

    def _object(
        self, value: dict[str, Any], pointer: str, marked: Marked | None, changes: list[Change]
    ) -> dict[str, Any]:
        copy: dict[str, Any] = {}
        for key, member in value.items():
            at = join(pointer, key)
            kind = self.key_kind(key) if isinstance(member, str) and member else None
            if kind is not None and not member.startswith("[REDACTED:"):
                changes.append(Change("redacted", at, f"the key names a {kind}"))
                copy[key] = f"[REDACTED:{kind}]"
            else:
                copy[key] = self._walk(member, at, marked, changes)
        return copy if any(copy[k] is not value[k] for k in value) else value

    def _string(self, text: str, pointer: str, changes: list[Change]) -> str:
        redacted, kinds = self.text(text)
        changes.extend(Change("redacted", pointer, f"a {kind} was found") for kind in kinds)
        return redacted if kinds else text


def _alternative(index: int, detector: Detector) -> str:
    """The detector's pattern as one named alternative of the combined expression: global flags
    become scoped ones, and its ``secret`` group is renamed to stay unique."""
    pattern = detector.pattern.replace("(?P<secret>", f"(?P<s{index}>")
    if pattern.startswith("(?i)"):
        pattern = f"(?i:{pattern[4:]})"
    return f"(?P<d{index}>{pattern})"


# Words of a key: "clientSecret", "X-Api-Key", "db_password2" -> client, secret / x, api, key...
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


@functools.cache
def default_redactor() -> Redactor:
    """The redactor of ``secrets.json``."""
    data: Any = loads(resources.files("schemawire.gates").joinpath("secrets.json").read_bytes())
    detectors = [Detector(d["kind"], d["pattern"]) for d in data["detectors"]]
    return Redactor(detectors, data["keys"], data["key_exceptions"])

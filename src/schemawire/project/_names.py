"""Names a target accepts: tool names and property keys, changed as little as possible.

A name that breaks a target's rule is rewritten deterministically: each refused character
becomes ``_``, a refused first character gets a ``_`` in front, and a name over the length limit
is cut and given a short hash of the original, so that two long names never collide.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container
from dataclasses import dataclass, field

__all__ = ["NameRule", "unique_name"]


@dataclass(frozen=True, slots=True)
class NameRule:
    """What a target accepts as a name.

    Attributes:
        allowed: one allowed character, as a regular expression character class.
        first: an allowed first character, as a character class (None: any allowed one).
        max_length: the longest name the target takes.
    """

    allowed: str
    first: str | None
    max_length: int
    # The rule's expressions, compiled once: every tool name and property key goes through them.
    _whole: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _refused: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _first: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        whole = f"{self.first or self.allowed}{self.allowed}{{0,{self.max_length - 1}}}"
        refused = f"(?!{self.allowed})."
        first = re.compile(self.first, re.ASCII) if self.first else None
        object.__setattr__(self, "_whole", re.compile(whole, re.ASCII))
        object.__setattr__(self, "_refused", re.compile(refused, re.ASCII | re.DOTALL))
        object.__setattr__(self, "_first", first)

    def accepts(self, name: str) -> bool:
        """Whether the target takes ``name`` as it is."""
        return self._whole.fullmatch(name) is not None

    def fix(self, name: str) -> str:
        """``name`` if the target takes it, else the closest name it takes."""
        if self.accepts(name):
            return name
        fixed = self._refused.sub("_", name) or "_"
        if self._first is not None and not self._first.match(fixed):
            fixed = "_" + fixed
        if len(fixed) > self.max_length:
            digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
            fixed = f"{fixed[: self.max_length - 9]}_{digest}"
        return fixed


def unique_name(name: str, taken: Container[str], max_length: int) -> str:
    """``name``, else ``name_2``, ``name_3``...: the first not in ``taken``, within the limit."""
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        suffix = f"_{number}"
        candidate = name[: max_length - len(suffix)] + suffix
    return candidate

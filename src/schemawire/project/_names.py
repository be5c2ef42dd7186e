"""Names a target accepts: tool names and property keys, changed as little as possible.

A name that breaks a target's rule is rewritten deterministically: each refused character
becomes ``_``, a refused first character gets a ``_`` in front, and a name over the length limit
is cut and given a short hash of the original, so that two long names never collide.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

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

    def accepts(self, name: str) -> bool:
        """Whether the target takes ``name`` as it is."""
        first = f"{self.first}" if self.first else self.allowed
        pattern = f"{first}{self.allowed}{{0,{self.max_length - 1}}}"
        return re.fullmatch(pattern, name, re.ASCII) is not None

    def fix(self, name: str) -> str:
        """``name`` if the target takes it, else the closest name it takes."""
        if self.accepts(name):
            return name
        fixed = re.sub(f"(?!{self.allowed}).", "_", name, flags=re.ASCII | re.DOTALL) or "_"
        if self.first and not re.match(self.first, fixed, re.ASCII):
            fixed = "_" + fixed
        if len(fixed) > self.max_length:
            digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
            fixed = f"{fixed[: self.max_length - 9]}_{digest}"
        return fixed


def unique_name(name: str, taken: set[str], max_length: int) -> str:
    """``name``, else ``name_2``, ``name_3``...: the first not in ``taken``, within the limit."""
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        suffix = f"_{number}"
        candidate = name[: max_length - len(suffix)] + suffix
    return candidate

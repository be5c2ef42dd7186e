"""The gateway's tool names: each upstream's tools under the upstream's name, within every
provider's name limits.

A tool ``read_file`` of the upstream ``fs`` is ``fs_read_file``: the upstream's name, the
separator ``_``, the tool's name. Upstream names take no ``_`` (`UPSTREAM_NAME`), so everything
before the first ``_`` of a gateway name is always its upstream.

Every name must work for every provider a client may hand it to: OpenAI and Anthropic take
``[a-zA-Z0-9_-]``, 1 to 64 characters; Gemini takes ``.`` too but wants a letter or ``_`` first;
MCP takes 128. `PORTABLE` is what all of them take. A joined name they all take, and that is not
one the gateway keeps for itself (``search_tools``, ``call_tool``), is kept as it is. Any other
is fixed, deterministically, from that tool's joined name alone:

1. each character outside ``[a-zA-Z0-9_-]`` becomes ``_``;
2. the result is cut to 55 characters and given ``_`` and the first 8 hex digits of the SHA-256
   of the joined name (``db_a.b`` -> ``db_a_b_`` and its digest; ``db_a_b`` stays as it is).

So a fixed name never depends on which other tools there are: when an upstream's list changes,
every name that stays means the same tool. Only if a fixed name would still be another's (a
tool that happens to be named like a fixed name, digest included) does it take a longer digest
(16, then 32, then 48 hex digits, the name cut to fit 64 characters).

The result never depends on the order tools are listed in; and since every name starts with its
upstream's name and ``_``, two upstreams' names never meet: each upstream's are made alone.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping

from schemawire._json import quoted
from schemawire.errors import UsageError
from schemawire.project._names import NameRule

__all__ = [
    "PORTABLE",
    "RESERVED",
    "SEPARATOR",
    "UPSTREAM_NAME",
    "check_upstream_name",
    "namespaced",
]

PORTABLE = NameRule("[a-zA-Z0-9_-]", "[A-Za-z_]", 64)
"""The names every provider takes: OpenAI's and Anthropic's characters, Gemini's first one."""

SEPARATOR = "_"
RESERVED = frozenset({"search_tools", "call_tool"})
"""The gateway's own tools (``--shortlist``): no upstream's tool is listed under these names."""

UPSTREAM_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,23}", re.ASCII)
"""An upstream's name: a letter, then letters, digits or ``-``; at most 24 characters (so that
40 are left for the tool's own name)."""


def check_upstream_name(name: str) -> str:
    """``name``, if it can name an upstream.

    Raises:
        UsageError: it cannot: it says what a name may hold.
    """
    if UPSTREAM_NAME.fullmatch(name) is None:
        raise UsageError(
            f"upstream name {quoted(name)}: use a letter, then letters, digits or '-' "
            "(no '_': it separates the upstream's name from the tool's), at most 24 characters"
        )
    return name


def namespaced(catalogue: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, str]]:
    """Each tool's gateway name -> (its upstream, its name there).

    Args:
        catalogue: upstream name -> the names of its tools.
    """
    joined = {
        f"{upstream}{SEPARATOR}{tool}": (upstream, tool)
        for upstream, tools in catalogue.items()
        for tool in tools
    }
    kept = {name for name in joined if PORTABLE.accepts(name) and name not in RESERVED}
    digests = dict.fromkeys((name for name in joined if name not in kept), 0)  # -> _DIGESTS index
    while True:
        made = {name: _hashed(name, _DIGESTS[step]) for name, step in digests.items()}
        counts = Counter(made.values())
        clashing = [n for n, m in made.items() if counts[m] > 1 or m in kept or m in RESERVED]
        if not clashing or all(digests[name] == len(_DIGESTS) - 1 for name in clashing):
            break
        for name in clashing:
            digests[name] = min(digests[name] + 1, len(_DIGESTS) - 1)
    return {name: joined[name] for name in kept} | {made[name]: joined[name] for name in made}


_DIGESTS = (8, 16, 32, 48)  # hex digits a fixed name takes: more only when fewer would clash
_REFUSED = re.compile(r"[^a-zA-Z0-9_-]")


def _hashed(joined: str, digits: int) -> str:
    """``joined`` made portable: its refused characters ``_``, cut, and given its digest."""
    digest = hashlib.sha256(joined.encode("utf-8")).hexdigest()[:digits]
    portable = _REFUSED.sub("_", joined)
    return f"{portable[: PORTABLE.max_length - digits - 1]}_{digest}"

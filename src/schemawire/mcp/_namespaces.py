"""The gateway's tool names: each upstream's tools under the upstream's name, within every
provider's name limits.

A tool ``read_file`` of the upstream ``fs`` is ``fs_read_file``: the upstream's name, the
separator ``_``, the tool's name. Upstream names take no ``_`` (`UPSTREAM_NAME`), so everything
before the first ``_`` of a gateway name is always its upstream.

Every name must work for every provider a client may hand it to: OpenAI and Anthropic take
``[a-zA-Z0-9_-]``, 1 to 64 characters; Gemini takes ``.`` too but wants a letter or ``_`` first;
MCP takes 128. `PORTABLE` is what all of them take. A joined name they do not all take is made
portable deterministically:

1. each character outside ``[a-zA-Z0-9_-]`` becomes ``_``;
2. a name still over 64 characters is cut to 55 and given ``_`` and the first 8 hex digits of
   the SHA-256 of the joined name (`NameRule.fix`);
3. a name made in steps 1-2 that is another tool's name, or that two tools both come to, or a
   name the gateway keeps for itself (``search_tools``, ``call_tool``), is cut to 55 and given
   ``_`` and those 8 hex digits, for every tool it is.

A name that all providers already take is never changed. The result depends only on which tools
there are, never on the order they are listed in; and since every name starts with its upstream's
name and ``_``, two upstreams' names never meet: each upstream's are made alone.
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

_DIGEST = 8


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
    fixed = {name: PORTABLE.fix(name) for name in joined if name not in kept}
    counts = Counter(fixed.values())
    names: dict[str, tuple[str, str]] = {name: joined[name] for name in kept}
    for name, made in sorted(fixed.items()):
        clash = counts[made] > 1 or made in kept or made in RESERVED
        names[_hashed(name, made) if clash else made] = joined[name]
    return names


def _hashed(joined: str, made: str) -> str:
    digest = hashlib.sha256(joined.encode("utf-8")).hexdigest()[:_DIGEST]
    return f"{made[: PORTABLE.max_length - _DIGEST - 1]}_{digest}"

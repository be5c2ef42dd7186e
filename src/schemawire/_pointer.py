"""JSON Pointers (RFC 6901): building, splitting and following them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = ["escape", "join", "parent", "resolve", "split", "to_pointer"]


def escape(token: str | int) -> str:
    """One reference token, escaped: ``~`` becomes ``~0`` and ``/`` becomes ``~1``."""
    text = str(token)
    if "~" in text or "/" in text:
        return text.replace("~", "~0").replace("/", "~1")
    return text


def to_pointer(tokens: Iterable[str | int]) -> str:
    """The pointer for a path of keys and indexes; the empty path is the root, ``""``."""
    return "".join("/" + escape(token) for token in tokens)


def join(pointer: str, *tokens: str | int) -> str:
    """``pointer`` extended by ``tokens``."""
    for token in tokens:
        pointer = pointer + "/" + escape(token)
    return pointer


def split(pointer: str) -> list[str]:
    """The unescaped reference tokens of ``pointer``.

    Raises:
        ValueError: when ``pointer`` is neither empty nor starts with ``/``.
    """
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        shown = json.dumps(pointer, ensure_ascii=False)
        raise ValueError(f"JSON Pointer must be empty or start with '/': {shown}")
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]


def parent(pointer: str) -> str:
    """The pointer one level up; the root is its own parent."""
    return pointer[: pointer.rfind("/")] if pointer else ""


def resolve(document: Any, pointer: str) -> Any:
    """The value ``pointer`` names in ``document``.

    Raises:
        KeyError: when a token names no member or index.
    """
    node = document
    for token in split(pointer):
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and _is_index(token) and int(token) < len(node):
            node = node[int(token)]
        else:
            raise KeyError(pointer)
    return node


def _is_index(token: str) -> bool:
    # RFC 6901: array indexes are "0" or digits without a leading zero.
    return token.isdigit() and token.isascii() and (token == "0" or not token.startswith("0"))

"""MCP content blocks cut to a byte budget, still content blocks.

The result gate cuts a result too large for its budget; a list of MCP content blocks is cut
here, block by block (`cut_blocks`): blocks that cannot fit are left out from the end and
a text block says how many; each block kept gets a share of the budget, loses the members it
need not hold, and keeps the beginning of its text (text that is JSON is cut as JSON, by
`schemawire.gates._truncate`). A block that cannot be cut (an image, a blob) is replaced by
a note of what was left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from schemawire._json import ParseLimits, dumps, json_in_text, quoted
from schemawire._pointer import to_pointer
from schemawire.gates._truncate import shares, size_of, truncate
from schemawire.gates.verdict import Change

__all__ = ["TEXT_LIMITS", "cut_blocks"]

# What a content block of each type holds to stay one (MCP's required members; a resource's
# text or blob and mime type): every other member (``_meta``, annotations, a link's title or
# description, members MCP does not name) may be left out to fit the budget.
_NEEDED = {
    "text": frozenset({"type", "text"}),
    "image": frozenset({"type", "data", "mimeType"}),
    "audio": frozenset({"type", "data", "mimeType"}),
    "resource": frozenset({"type", "resource"}),
    "resource_link": frozenset({"type", "uri", "name"}),
}
_NEEDED_OF_RESOURCE = frozenset({"uri", "mimeType", "text", "blob"})
_LEAST_BLOCK = len(b'{"type":"text","text":""}')  # the fewest bytes a content block takes
_NAMED = 100  # characters of a mime type or URI a note on a left-out block quotes
# How text content that is JSON is parsed: large, and big integers kept exact.
TEXT_LIMITS = ParseLimits(max_bytes=64 * 1024 * 1024, big_integers="exact")


def _cut_text(text: str, budget: int, required: Any) -> tuple[str, list[Change]]:
    """A block's text cut to ``budget`` bytes; text that is JSON is cut as JSON and written
    back. (Whether the block is still over its room is the content's to say, as a whole.)"""
    value = json_in_text(text, TEXT_LIMITS)
    if value is not None:
        cut, changes = truncate(value, budget, required, say_if_over=False)
        return dumps(cut, indent=False), changes
    cut_string, changes = truncate(text, budget, say_if_over=False)
    return cut_string, changes


def cut_blocks(
    blocks: list[dict[str, Any]], budget: int, required: Any
) -> tuple[list[dict[str, Any]], list[Change]]:
    """MCP content blocks cut to ``budget`` bytes of JSON as a whole, still content blocks.

    Blocks that could not fit even cut to the least a block can be (`_blocks_that_may_fit`)
    are left out from the end before any is cut, so many tiny blocks cost no cut attempts.
    Each block kept gets a share of the budget (small blocks whole, the larger ones split what
    is left, as `shares` says) and a block over its share is cut (`_cut_block`). When the blocks
    still do not fit (each cut keeps a marker), more are left out from the end and a text block
    says how many. Whatever is still over the budget is recorded too.
    """
    sizes = [size_of(block) for block in blocks]
    candidates = _blocks_that_may_fit(sizes, budget)
    marker = size_of(_more_blocks(len(blocks) - candidates)) + 1 if candidates < len(blocks) else 0
    room = shares(dict(enumerate(sizes[:candidates])), budget - 1 - candidates - marker)
    kept, changes = [], []
    for index, block in enumerate(blocks[:candidates]):
        if sizes[index] <= room[index]:
            kept.append(block)
            continue
        cut, found = _cut_block(block, room[index], sizes[index], required)
        kept.append(cut)
        changes += [replace(c, pointer=f"/{index}{c.pointer}") for c in found]
    count = _blocks_that_fit(kept, len(blocks), budget)
    if count < len(blocks):
        # A block left out was maybe cut first: only its leaving is worth a record.
        changes = [c for c in changes if int(c.pointer.split("/")[1]) < count]
        detail = f"content cut: kept {count} of {len(blocks)} blocks"
        changes.append(Change("truncated", "", detail, len(blocks), count))
        kept = [*kept[:count], _more_blocks(len(blocks) - count)]
    final = size_of(kept)
    if final > budget:
        detail = f"still {final} bytes, over the budget of {budget}: the blocks cannot be cut more"
        changes.append(Change("truncated", "", detail))
    return kept, changes


def _blocks_that_may_fit(sizes: list[int], budget: int) -> int:
    """How many of the first blocks (of ``sizes`` bytes) ``budget`` may hold, each as it is or
    cut to the least any block takes, whichever is smaller, with a block saying how many more
    were left out; one at least (a budget too small for any says so after the cut)."""
    used = 1  # the opening bracket
    for index, size in enumerate(sizes):
        used += min(size, _LEAST_BLOCK) + 1  # and its comma, or the closing bracket
        more = len(sizes) - index - 1
        if used + (size_of(_more_blocks(more)) + 1 if more else 0) > budget:
            return max(index, 1)
    return len(sizes)


def _cut_block(
    block: dict[str, Any], room: int, size: int, required: Any
) -> tuple[dict[str, Any], list[Change]]:
    """One content block cut to ``room`` bytes, still a block of its type where it can be.

    The members a block need not hold (``_meta``, annotations, a link's description, members
    MCP does not name: `_EXTRAS`) are kept where they fit their share of the room and left out
    where they do not. Then the text of a text block or of a text resource keeps its beginning
    (text that is JSON is cut as JSON). An image, audio, a blob resource, a link or any other
    block still over its room cannot be cut and is replaced by a text block saying what was
    left out and its size (unless that says more than the block)."""
    needed = _NEEDED.get(str(block.get("type")))
    if needed is None:
        return _noted(block, size)
    slim, changes = _without_extras(block, room, needed)
    holder, at = _text_holder(slim)
    if holder is not None:
        text_room = room - (size_of(slim) - size_of(holder["text"]))
        cut, cuts = _cut_block_text(holder, text_room, required, at)
        return ({**slim, "resource": cut} if at == "/resource/text" else cut), changes + cuts
    if size_of(slim) <= room:
        return slim, changes
    return _noted(block, size)


def _text_holder(block: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """What holds the text a block's cut may shorten (the block, or its resource), and where
    the text is in the block; None when the block has no such text."""
    resource = block.get("resource")
    if block.get("type") == "text" and isinstance(block.get("text"), str):
        return block, "/text"
    in_resource = isinstance(resource, dict) and isinstance(resource.get("text"), str)
    if block.get("type") == "resource" and in_resource:
        return resource, "/resource/text"
    return None, ""


def _without_extras(
    block: dict[str, Any], room: int, needed: frozenset[str]
) -> tuple[dict[str, Any], list[Change]]:
    """``block`` without the members it need not hold that are over their share of ``room``
    (shared with its text, as `shares` says: small members stay whole), and a record of each."""
    extras = _extras(block, needed)
    if not extras:
        return block, []
    slim = _leaving(block, extras)
    holder, _ = _text_holder(slim)
    sizes = dict(extras)
    base = size_of(slim)
    if holder is not None:
        sizes[()] = size_of(holder["text"]) - 2  # beyond the quotes of an empty text
        base -= sizes[()]
    share = shares(sizes, room - base)
    over = [path for path in extras if extras[path] > share[path]]
    changes = [
        Change(
            "truncated",
            to_pointer(path),
            f"left out to fit the budget: {extras[path]:,} bytes, over the room the block had",
            before=extras[path],
        )
        for path in over
    ]
    return (_leaving(block, over) if over else block), changes


def _extras(block: dict[str, Any], needed: frozenset[str]) -> dict[tuple[str, ...], int]:
    """The members ``block`` (and its resource) may do without, by path, and the bytes each
    takes in its object (key, colon, value and a comma)."""
    found: dict[tuple[str, ...], int]
    found = {(key,): _member_size(key, value) for key, value in block.items() if key not in needed}
    resource = block.get("resource")
    if block.get("type") == "resource" and isinstance(resource, dict):
        found |= {
            ("resource", key): _member_size(key, value)
            for key, value in resource.items()
            if key not in _NEEDED_OF_RESOURCE
        }
    return found


def _member_size(key: str, value: Any) -> int:
    return size_of(key) + size_of(value) + 2  # its colon and a comma


def _leaving(block: dict[str, Any], paths: Iterable[tuple[str, ...]]) -> dict[str, Any]:
    """``block`` without the members at ``paths`` (one or two keys deep); ``block`` is not
    changed."""
    gone = set(paths)
    slim = {key: value for key, value in block.items() if (key,) not in gone}
    inner = {path[1] for path in gone if len(path) == 2}
    if inner and isinstance(slim.get("resource"), dict):
        slim["resource"] = {k: v for k, v in slim["resource"].items() if k not in inner}
    return slim


def _cut_block_text(
    holder: dict[str, Any], text_room: int, required: Any, at: str
) -> tuple[dict[str, Any], list[Change]]:
    """``holder`` (a block or its resource) with its ``text`` cut to ``text_room`` bytes (what
    the rest of the block leaves of its room); ``at``, where the text is in the block."""
    cut, changes = _cut_text(holder["text"], max(text_room, 0), required)
    return {**holder, "text": cut}, [replace(c, pointer=at + c.pointer) for c in changes]


def _noted(block: dict[str, Any], size: int) -> tuple[dict[str, Any], list[Change]]:
    """A block that cannot be cut, replaced by a note of what was left out (unless the note says
    more than the block)."""
    note = _left_out_note(block, size)
    if size_of(note) >= size:
        return block, []
    detail = f"{_what(block)} left out: {size:,} bytes is over the room it had; it cannot be cut"
    return note, [Change("truncated", "", detail, before=size, after=size_of(note))]


def _what(block: dict[str, Any]) -> str:
    """What a block is, for a note: ``an image (image/png)``, ``a resource (file:///a.bin)``;
    a long mime type, URI or type is cut short, so the note stays small."""
    kind = block.get("type")
    resource = block.get("resource")
    detail = block.get("mimeType")
    if isinstance(resource, dict):
        detail = resource.get("uri")
    elif kind == "resource_link":
        detail = block.get("uri")
    name = {
        "image": "an image",
        "audio": "audio",
        "resource": "a resource",
        "resource_link": "a resource link",
    }.get(str(kind), f"a {_short(quoted(kind))} block")
    return f"{name} ({_short(detail)})" if isinstance(detail, str) else name


def _short(text: str) -> str:
    return text if len(text) <= _NAMED else f"{text[:_NAMED]}…"


def _left_out_note(block: dict[str, Any], size: int) -> dict[str, Any]:
    text = f"[{_what(block)} left out: {size:,} bytes of JSON, over the result's byte budget]"
    return {"type": "text", "text": text}


def _more_blocks(count: int) -> dict[str, Any]:
    return {"type": "text", "text": f"…[truncated: {count} more content blocks]"}


def _blocks_that_fit(blocks: list[dict[str, Any]], total: int, budget: int) -> int:
    """How many of the first ``blocks`` (of ``total``, the rest already left out) fit
    ``budget`` with a block saying how many more were left out: all of them when they fit, and
    when leaving more out does not help, too."""
    if len(blocks) == total and size_of(blocks) <= budget:
        return total
    used = 2  # brackets
    fit = 0
    for index, block in enumerate(blocks[: total - 1]):
        used += size_of(block) + 1  # and its comma
        if used + size_of(_more_blocks(total - index - 1)) > budget:
            break
        fit = index + 1
    return fit if fit else len(blocks)

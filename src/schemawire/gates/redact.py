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

import dataclasses
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from typing import Any

import orjson

from schemawire._json import loads, quoted
from schemawire._pointer import escape, join, split
from schemawire.gates._detect import Detector, DetectorSet, Found, TriggerSet
from schemawire.gates.verdict import Change
from schemawire.types import Violation

__all__ = ["Detector", "Redactor", "default_redactor"]

Marked = Callable[[str], str | None]  # pointer -> the schema keyword that marks it secret


class Redactor:
    """Finds and replaces secrets in JSON values. Safe to share between threads."""

    def __init__(
        self, detectors: Iterable[Detector], keys: Iterable[str], key_exceptions: Iterable[str]
    ) -> None:
        """
        Raises:
            re2.error: a detector's pattern is not RE2 syntax.
        """
        self._set = DetectorSet(detectors)
        self.detectors = self._set.detectors
        self._kinds = [detector.kind for detector in self.detectors]
        self._markers = {kind: f"[REDACTED:{kind}]".encode() for kind in self._kinds}
        # Most strings hold no trigger at all: one pass of cheap substring tests over the
        # lower-cased string spares them the patterns.
        self._triggers = tuple(sorted({t for d in self.detectors for t in d.triggers}))
        self._by_trigger = {
            trigger: tuple(i for i, d in enumerate(self.detectors) if trigger in d.triggers)
            for trigger in self._triggers
        }
        self._shortest = min((len(t) for t in self._triggers), default=0)
        self._keys = frozenset(keys)
        self._key_exceptions = frozenset(key_exceptions)
        # A key naming a secret holds one of the words, or two adjacent words that join into
        # one ("X-Api-Key"): either way its first three letters are in the lower-cased text.
        self._key_words = tuple(sorted({word[:3] for word in self._keys}))
        self._key_kinds: dict[str, str | None] = {}  # keys repeat: each is split once
        self._words = TriggerSet(self._triggers + self._key_words)

    def text(self, text: str, triggers: Sequence[str] | None = None) -> tuple[str, list[str]]:
        """``text`` with every detected secret replaced, and the kinds found, in order.

        ``triggers`` narrows the triggers looked for (those known to occur nearby). Time is
        linear in the length of ``text``, whatever it holds."""
        if len(text) < self._shortest:
            return text, []
        data = text.encode("utf-8", "surrogatepass") if len(text) > _SHORT else None
        indices = self._detectors_triggered(text, data, triggers or self._triggers)
        if not indices:
            return text, []
        data = data if data is not None else text.encode("utf-8", "surrogatepass")
        found = self._set.find(data, indices)
        if not found:
            return text, []
        pieces: list[bytes] = []
        kinds: list[str] = []
        done = 0
        markers = self._markers
        for secret in found:
            whole = secret.secret_start == secret.start and secret.secret_end == secret.end
            kind = self._kinds[secret.detector] if whole else self._kind(data, secret)
            kinds.append(kind)
            pieces += [data[done : secret.secret_start], markers[kind]]
            done = secret.secret_end
        pieces.append(data[done:])
        return b"".join(pieces).decode("utf-8", "surrogatepass"), kinds

    def _detectors_triggered(
        self, text: str, data: bytes | None, triggers: Sequence[str]
    ) -> list[int]:
        """The detectors (indices, in order) whose triggers ``text`` holds: substring tests
        on a short text, one pass of the trigger set over a long one (``data``)."""
        if data is None:
            lowered = text.lower()
            held: Iterable[str] = [t for t in triggers if t in lowered]
        else:
            held = set(self._words.present(data)).intersection(triggers)
        return sorted({index for trigger in held for index in self._by_trigger.get(trigger, ())})

    def triggers_in(self, data: bytes) -> set[str]:
        """The triggers and key words (`_key_words`) ``data`` holds, in any case."""
        return set(self._words.present(data))

    def _kind(self, data: bytes, found: Found) -> str:
        """The kind of a secret of which a detector hides a part. That part may itself be a
        known secret (OPENAI_API_KEY=sk-..., a token as the password of a URL): its own kind
        says more than the context's."""
        inner = self._set.kind_of_whole(data[found.secret_start : found.secret_end])
        return self._kinds[inner if inner is not None else found.detector]

    def _scan(self, value: Any) -> tuple[tuple[str, ...], bool]:
        """The triggers that occur anywhere in ``value``, and whether a key word does: one pass
        over its JSON text, so that each string is then tested for those few triggers only, and
        a value with neither is not walked at all."""
        try:
            text = orjson.dumps(value)
        except orjson.JSONEncodeError:
            return self._triggers, True  # integers beyond 64 bits: look everywhere
        held = set(self._words.present(text))
        triggers = tuple(trigger for trigger in self._triggers if trigger in held)
        return triggers, any(word in held for word in self._key_words)

    def finds_nothing_in(self, data: bytes) -> bool:
        """Whether JSON text ``data`` holds no trigger and no key word, so that `value` (with no
        schema marks) leaves unchanged every value whose JSON is a part of ``data``: the test
        `value` itself starts with, run once over the JSON of many values."""
        return not self._words.present(data)

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
        self, value: Any, marked: Marked | None = None, pointer: str = "", *, under: str = ""
    ) -> tuple[Any, list[Change]]:
        """``value`` with its secrets replaced (a copy where anything changed), and one change
        per secret, at its pointer. ``marked`` says which pointers the schema marks secret;
        ``pointer`` is where ``value`` is (pointers given to ``marked`` start there);
        ``under``, put before the changes' pointers only, where that is in a larger whole
        (``/structured``), so that each change is made once, where it ends up."""
        triggers, key_words = self._scan(value)
        if not triggers and not key_words and marked is None:
            return value, []  # nothing here can be a secret: most large results
        walk = _Walk(self, triggers, marked)
        if marked is None:
            return walk.unmarked(value, under + pointer), walk.changes
        redacted = walk.value(value, pointer)
        return redacted, [
            _moved(change, under) for change in walk.changes
        ] if under else walk.changes

    def pointer(self, pointer: str) -> str:
        """``pointer`` with each of its tokens redacted: a key may itself be a secret, and
        escaped into a pointer (``/`` as ``~1``) it would hide from the detectors."""
        tokens = split(pointer)
        redacted = [self.text(token)[0] for token in tokens]
        if redacted == tokens:
            return pointer
        return "".join(join("", token) for token in redacted)

    def violation(self, violation: Violation, marked: Marked | None = None) -> Violation:
        """``violation`` as a rejection may show it: its pointer's tokens redacted, and its
        message redacted where it quotes them (``unexpected property "..."``) or holds a
        secret of its own; the value it quotes redacted as `quoted` does."""
        got, _ = self.quoted(violation.got, violation.pointer, marked)
        pointer = self.pointer(violation.pointer)
        message = violation.message
        if pointer != violation.pointer:
            for token, redacted in zip(split(violation.pointer), split(pointer), strict=True):
                message = message.replace(quoted(token)[1:-1], quoted(redacted)[1:-1])
        message = self.text(message)[0]
        if (got, pointer, message) == (violation.got, violation.pointer, violation.message):
            return violation
        return dataclasses.replace(violation, pointer=pointer, message=message, got=got)

    def quoted(
        self, value: Any, pointer: str, marked: Marked | None = None
    ) -> tuple[Any, list[Change]]:
        """``value`` as a rejection quotes it from ``pointer`` of a result: redacted as it
        would be where it sits, whether or not it is valid there. Redaction of a whole member
        covers all below it, so a member above ``pointer`` that the schema marks or whose key
        names a secret redacts ``value`` whole (``{"password": ["...", 5]}`` quoted from
        ``/password/0``); else the detectors and what lies below decide. The changes'
        pointers are ``pointer``'s."""
        tokens = split(pointer)
        at = ""
        for depth, token in enumerate(tokens, 1):
            at = join(at, token)
            mark = marked(at) if marked is not None else None
            if mark is not None:
                return f"[REDACTED:{mark}]", [_marked(pointer, mark)]
            kind = self.key_kind(token)
            # A member above holds what is quoted, so it holds a secret; the member quoted
            # itself is redacted as the walk redacts it (not when null, a boolean or empty).
            if kind is not None and (depth < len(tokens) or _holds_secret(value)):
                return f"[REDACTED:{kind}]", [_named(pointer, kind)]
        return self.value(value, marked, pointer)


class _Walk:
    """One redaction of one value."""

    def __init__(self, redactor: Redactor, triggers: tuple[str, ...], marked: Marked | None):
        self.redactor = redactor
        self.triggers = triggers
        self.marked = marked
        self.changes: list[Change] = []
        # An ASCII string holds one of the triggers exactly when this finds one in it: one
        # search in C, where `Redactor.text` would lower-case it and test each trigger.
        self.held = _any_of(triggers)
        # Keys and values repeat (the same keys in every record, a status, a boilerplate
        # text): each is redacted once a walk.
        self.texts: dict[str, tuple[str, list[str]]] = {}
        self.shapes: dict[tuple[str, ...], tuple[str | None, ...] | None] = {}

    def value(self, value: Any, pointer: str) -> Any:
        mark = self._mark(pointer)
        if mark is not None:
            self.changes.append(_marked(pointer, mark))
            return f"[REDACTED:{mark}]"
        if isinstance(value, str):
            return self._string(value, pointer) if self.triggers else value
        if isinstance(value, list):
            items = [self._member(v, pointer, i) for i, v in enumerate(value)]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        if isinstance(value, dict):
            return self._object(value, pointer)
        return value

    def unmarked(self, value: Any, pointer: str) -> Any:
        """`value` where the schema marks nothing (most results): the same redaction in a
        tighter loop, where each node's path is kept as a `_Path` and a pointer is built only
        for a secret found. No mark needs the pointers, so they may start with a prefix."""
        if isinstance(value, str):
            return self._string(value, pointer) if self.triggers else value
        if isinstance(value, list):
            return self._unmarked_items(value, pointer)
        if isinstance(value, dict):
            return self._unmarked_members(value, pointer)
        return value

    def _unmarked_items(self, items: list[Any], path: _Path) -> list[Any]:
        if len(items) >= _ROWS_FROM:
            rows = self._rows(items, path)
            if rows is not None:
                return rows
        copy: list[Any] | None = None
        triggers, texts = self.triggers, self.texts
        for index, item in enumerate(items):
            if isinstance(item, str):
                # The redaction of most strings is known: looked up here, not in a call.
                if not triggers or not (texts.get(item) or self._text(item))[1]:
                    continue
                shown: Any = self._found_in_text(item, (path, index))
            elif isinstance(item, dict):
                shown = self._unmarked_members(item, (path, index))
            elif isinstance(item, list):
                shown = self._unmarked_items(item, (path, index))
            else:
                continue
            if shown is not item:
                copy = list(items) if copy is None else copy
                copy[index] = shown
        return items if copy is None else copy

    def _unmarked_members(self, value: dict[str, Any], path: _Path) -> dict[str, Any]:
        kinds = self._key_kinds(value)
        if kinds is None:
            return self._object_with_shown_keys(value, _pointer(path))
        copy: dict[str, Any] | None = None
        triggers, texts = self.triggers, self.texts
        for key, kind, member in zip(value, kinds, value.values(), strict=True):
            if kind is not None and _holds_secret(member):
                self.changes.append(_named(_pointer((path, key)), kind))
                shown: Any = f"[REDACTED:{kind}]"
            elif isinstance(member, str):
                if not triggers or not (texts.get(member) or self._text(member))[1]:
                    continue
                shown = self._found_in_text(member, (path, key))
            elif isinstance(member, dict):
                shown = self._unmarked_members(member, (path, key))
            elif isinstance(member, list):
                shown = self._unmarked_items(member, (path, key))
            else:
                continue
            if shown is not member:
                copy = dict(value) if copy is None else copy
                copy[key] = shown
        return value if copy is None else copy

    # --- records: a list of objects of one shape, column by column --------------------------

    def _rows(self, items: list[Any], path: _Path) -> list[Any] | None:
        """``items`` redacted column by column, when they are objects of one shape whose keys
        hold no secret (records); else None. The changes come in document order."""
        kinds = self._shape_kinds(items)
        if kinds is None:
            return None
        shown, found = self._columns(items, kinds, (_pointer(path), ""))
        for index in sorted(found):
            self.changes.extend(found[index])
        return shown

    def _shape_kinds(self, rows: Sequence[Any]) -> tuple[str | None, ...] | None:
        """The kinds of the keys (`_key_kinds`) of ``rows``, when all are objects of one shape
        and no key holds a secret of its own; else None."""
        if not all(map(_is_dict, rows)) or len(set(map(tuple, rows))) != 1:
            return None
        return self._key_kinds(rows[0])

    def _columns(
        self, rows: Sequence[dict[str, Any]], kinds: tuple[str | None, ...], place: _Place
    ) -> tuple[list[Any], dict[int, list[Change]]]:
        """``rows`` (objects of one shape) redacted, and the changes of each row that has any,
        in order: a column's cells are redacted together, so most are never visited."""
        updates: dict[int, dict[str, Any]] = {}
        found: dict[int, list[Change]] = {}
        for key, kind, column in zip(
            rows[0], kinds, zip(*map(dict.values, rows), strict=True), strict=True
        ):
            for index, shown, changes in self._column(key, kind, column, place):
                updates.setdefault(index, {})[key] = shown
                found.setdefault(index, []).extend(changes)
        shown_rows = list(rows)
        for index, members in updates.items():
            shown_rows[index] = {**rows[index], **members}
        return shown_rows, found

    def _column(
        self, key: str, kind: str | None, column: tuple[Any, ...], place: _Place
    ) -> Iterable[tuple[int, Any, list[Change]]]:
        """The cells of one column (member ``key`` of each row) that redaction changes: their
        row, what they become, and the changes."""
        if kind is not None:
            return self._named_column(key, kind, column, place)
        kinds = set(map(type, column))
        if not any(issubclass(cell_kind, str | list | dict) for cell_kind in kinds):
            return ()  # numbers, booleans and nulls: never changed
        if all(map(_is_str, column)):
            return self._text_column(key, column, column, place)
        if all(map(_is_list, column)):
            strings = tuple(itertools.chain.from_iterable(column))
            if all(map(_is_str, strings)):
                return self._text_column(key, strings, column, place)
        shape = self._shape_kinds(column)
        if shape is not None:
            shown, found = self._columns(column, shape, (place[0], place[1] + "/" + escape(key)))
            return [(index, shown[index], changes) for index, changes in found.items()]
        return self._cells(key, column, place)

    def _named_column(
        self, key: str, kind: str, column: tuple[Any, ...], place: _Place
    ) -> Iterable[tuple[int, Any, list[Change]]]:
        shown = f"[REDACTED:{kind}]"
        base, below = place[0], place[1] + "/" + escape(key)
        for index, cell in enumerate(column):
            if _holds_secret(cell):
                yield index, shown, [_named(f"{base}/{index}{below}", kind)]
            else:
                yield from self._cells(key, (cell,), place, index)

    def _text_column(
        self, key: str, strings: Iterable[str], column: tuple[Any, ...], place: _Place
    ) -> Iterable[tuple[int, Any, list[Change]]]:
        """A column of strings, or of arrays of strings (``strings``, all of them): each
        distinct string is looked at once, and only the cells holding a secret are walked."""
        distinct = set(strings)
        if not self._any_triggered(distinct):
            return ()
        texts = self.texts
        hot = {text for text in distinct if (texts.get(text) or self._text(text))[1]}
        if not hot:
            return ()
        if strings is column:  # a column of strings
            held = [index for index, cell in enumerate(column) if cell in hot]
        else:
            held = [index for index, cell in enumerate(column) if not hot.isdisjoint(cell)]
        return itertools.chain.from_iterable(
            self._cells(key, column[index : index + 1], place, index) for index in held
        )

    def _any_triggered(self, texts: set[str]) -> bool:
        """Whether any of ``texts`` may hold a secret: false when, all ASCII, they hold none of
        the triggers looked for (one pass of the trigger set over them all, as `_text` makes
        for each: an ASCII text with no trigger needs no detector)."""
        if not self.triggers:
            return False
        joined = "\0".join(texts)  # no trigger holds a NUL: no match spans two texts
        if not joined.isascii():
            return True  # `Redactor.text` decides, text by text
        return not self.redactor.triggers_in(joined.encode("ascii")).isdisjoint(self.triggers)

    def _cells(
        self, key: str, column: tuple[Any, ...], place: _Place, first: int = 0
    ) -> Iterable[tuple[int, Any, list[Change]]]:
        """Each cell of ``column`` (rows from ``first`` on) walked on its own."""
        base, below = place[0], place[1] + "/" + escape(key)
        for index, cell in enumerate(column, first):
            saved, self.changes = self.changes, []
            shown = self._unmarked_member(cell, f"{base}/{index}{below}")
            changes, self.changes = self.changes, saved
            if shown is not cell or changes:
                yield index, shown, changes

    def _unmarked_member(self, member: Any, path: _Path) -> Any:
        if isinstance(member, str):
            if not self.triggers or not self._text(member)[1]:
                return member
            return self._found_in_text(member, path)
        if isinstance(member, dict):
            return self._unmarked_members(member, path)
        if isinstance(member, list):
            return self._unmarked_items(member, path)
        return member

    def _found_in_text(self, text: str, path: _Path) -> str:
        """A string found to hold secrets: redacted, a change for each."""
        redacted, kinds = self._text(text)
        pointer = _pointer(path)
        self.changes.extend(_found_in(pointer, kind) for kind in kinds)
        return redacted

    def _member(self, member: Any, parent: str, token: str | int) -> Any:
        """`value` of ``member`` at ``parent`` joined with ``token``. Where the schema marks
        nothing, a leaf's pointer is built only if it holds a secret: most never do."""
        if self.marked is None:
            if isinstance(member, str):
                if not self.triggers:
                    return member
                redacted, kinds = self._text(member)
                if not kinds:
                    return member
                pointer = join(parent, token)
                self.changes.extend(_found_in(pointer, kind) for kind in kinds)
                return redacted
            if not isinstance(member, list | dict):
                return member
        return self.value(member, join(parent, token))

    def _mark(self, pointer: str) -> str | None:
        return self.marked(pointer) if self.marked is not None and pointer else None

    def _object(self, value: dict[str, Any], pointer: str) -> dict[str, Any]:
        kinds = self._key_kinds(value)
        if kinds is None:
            return self._object_with_shown_keys(value, pointer)
        copy: dict[str, Any] = {}
        changed = False
        marked = self.marked
        for key, kind, member in zip(value, kinds, value.values(), strict=True):
            if (
                kind is not None
                and _holds_secret(member)
                and (marked is None or self._mark(join(pointer, key)) is None)
            ):
                self.changes.append(_named(join(pointer, key), kind))
                copy[key] = f"[REDACTED:{kind}]"
            else:
                copy[key] = self._member(member, pointer, key)
            changed = changed or copy[key] is not member
        return copy if changed else value

    def _key_kinds(self, value: dict[str, Any]) -> tuple[str | None, ...] | None:
        """What each key of ``value`` names (`Redactor.key_kind`), when no key holds a secret
        of its own; else None. Objects of one shape (the records of a list) are read once."""
        shape = tuple(value)
        if shape in self.shapes:
            return self.shapes[shape]
        kinds: tuple[str | None, ...] | None = None
        if not self.triggers or not any(self._text(key)[1] for key in shape):
            kinds = tuple(self.redactor.key_kind(key) for key in shape)
        if len(self.shapes) < _TEXT_CACHE:
            self.shapes[shape] = kinds
        return kinds

    def _object_with_shown_keys(self, value: dict[str, Any], pointer: str) -> dict[str, Any]:
        """An object a key of which holds a secret: shown redacted, and unique."""
        copy: dict[str, Any] = {}
        keys = _ShownKeys(value, copy)
        changed = False
        key_kind, marked = self.redactor.key_kind, self.marked
        for key, member in value.items():
            shown = self._key(key, pointer, keys)
            kind = key_kind(key)
            # Marks and key words are the schema's: the key as sent.
            if (
                kind is not None
                and _holds_secret(member)
                and (marked is None or self._mark(join(pointer, key)) is None)
            ):
                self.changes.append(_named(join(pointer, shown), kind))
                copy[shown] = f"[REDACTED:{kind}]"
            else:
                copy[shown] = self._member(member, pointer, key)
            changed = changed or shown is not key or copy[shown] is not member
        return copy if changed else value

    def _key(self, key: str, pointer: str, keys: _ShownKeys) -> str:
        """The key as shown: with its secrets replaced, and unique among the object's keys."""
        if not self.triggers:
            return key
        redacted, kinds = self._text(key)
        if not kinds:
            return key
        shown = keys.unique(redacted)
        at = join(pointer, shown)
        self.changes.extend(_in_key(at, kind) for kind in kinds)
        return shown

    def _string(self, text: str, pointer: str) -> str:
        redacted, kinds = self._text(text)
        self.changes.extend(_found_in(pointer, kind) for kind in kinds)
        return redacted if kinds else text

    def _text(self, text: str) -> tuple[str, list[str]]:
        """`Redactor.text` of ``text``, remembered; an ASCII text holding none of the triggers
        is spared it (what lower-casing does to other characters is left to it)."""
        known = self.texts.get(text)
        if known is not None:
            return known
        if text.isascii() and self.held(text) is None:
            known = text, []
        else:
            known = self.redactor.text(text, self.triggers)
        if len(self.texts) < _TEXT_CACHE:
            self.texts[text] = known
        return known


# Where a node sits: the pointer of the value walked, or the path of the node's container and
# the node's key or index. A pair costs less to make than a pointer, which most nodes never need.
_Path = str | tuple["_Path", str | int]


# Where the rows of a column are: the pointer of their list, and the pointer below a row's
# (``/reporter`` for a column of the rows' reporters): row ``i`` is at ``list/i/below``.
_Place = tuple[str, str]


def _pointer(path: _Path) -> str:
    """The pointer of ``path``, as `join` would have built it token by token."""
    tokens: list[str] = []
    while isinstance(path, tuple):
        path, token = path
        tokens.append(escape(token))
    tokens.append(path)
    return "/".join(reversed(tokens))


class _ShownKeys:
    """The keys of one object as shown, a redacted key made unique beside the keys shown
    already and all the object's own keys: two keys may redact to the same text, and a key
    may be the very text another redacts to (``"[REDACTED:openai_key]"`` beside an OpenAI key).
    A key kept as it is never collides, as a redacted one is never one of the object's keys."""

    def __init__(self, keys: dict[str, Any], shown: dict[str, Any]) -> None:
        self.keys = keys
        self.shown = shown
        # The next number to try for each redacted text: thousands of keys that redact alike
        # are numbered in one pass, not each from 1.
        self.counts: dict[str, int] = {}

    def unique(self, redacted: str) -> str:
        """``redacted``, or ``"<redacted> (<n>)"`` with the first free ``n`` from 2."""
        count = self.counts.get(redacted, 1)
        shown = redacted if count == 1 else f"{redacted} ({count})"
        while shown in self.shown or shown in self.keys:
            count += 1
            shown = f"{redacted} ({count})"
        self.counts[redacted] = count + 1
        return shown


@functools.lru_cache(maxsize=256)
def _any_of(triggers: tuple[str, ...]) -> Callable[[str], re.Match[str] | None]:
    """A search for any of ``triggers`` (lower-case ASCII) in an ASCII text, in any case."""
    pattern = "|".join(re.escape(trigger) for trigger in triggers) or "(?!)"
    return re.compile(pattern, re.IGNORECASE | re.ASCII).search


# `isinstance(value, dict)` and the like, as functions in C: `map` calls them by the thousand.
_is_dict: Callable[[Any], bool] = dict.__instancecheck__
_is_list: Callable[[Any], bool] = list.__instancecheck__
_is_str: Callable[[Any], bool] = str.__instancecheck__


def _holds_secret(value: Any) -> bool:
    """Whether a member whose key names a secret holds one: anything but null, a boolean, an
    empty value, or a value already redacted."""
    if value is None or isinstance(value, bool) or value in ("", [], {}):
        return False
    return not (isinstance(value, str) and value.startswith("[REDACTED:"))


def _moved(change: Change, under: str) -> Change:
    """``change`` with ``under`` before its pointer."""
    # Built directly: `dataclasses.replace` costs a few µs a change.
    return Change(change.kind, under + change.pointer, change.detail, change.before, change.after)


def _marked(pointer: str, mark: str) -> Change:
    return Change("redacted", pointer, f"marked {mark} in the output schema")


def _named(pointer: str, kind: str) -> Change:
    return Change("redacted", pointer, f"the key names a {kind}")


def _found_in(pointer: str, kind: str) -> Change:
    return Change("redacted", pointer, f"a {kind} was found")


def _in_key(pointer: str, kind: str) -> Change:
    return Change("redacted", pointer, f"a {kind} was found in the key")


_ROWS_FROM = 8  # objects of one shape in a list from which they are redacted column by column
_SHORT = 512  # characters up to which substring tests find triggers faster than one pass
_KEY_CACHE = 4096  # distinct keys remembered; results can have many, tools few
_TEXT_CACHE = 4096  # distinct texts one walk remembers the redaction of

# Words of a key: "clientSecret", "X-Api-Key", "db_password2" -> client, secret / x, api, key...
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


@functools.cache
def default_redactor() -> Redactor:
    """The redactor of ``secrets.json``."""
    data: Any = loads(resources.files("schemawire.gates").joinpath("secrets.json").read_bytes())
    detectors = [Detector.from_json(detector) for detector in data["detectors"]]
    return Redactor(detectors, data["keys"], data["key_exceptions"])

"""Finding secrets in a text in time linear in its length, whatever the text.

Every detector's pattern runs on RE2 (``google-re2``), an automaton with no backtracking: one
search costs time linear in what it reads. What RE2 cannot say (it has no lookaround) a detector
says in fields that each look at a bounded place beside a match, checked in Python:

- ``not_secret``: matched at the start of the secret, says it is a placeholder or code
  (``${PASSWORD}``, ``os.environ[...]``), not a secret;
- ``needs``: matched at the start of the secret, what every secret of the kind holds;
- ``not_after`` / ``not_before``: characters that must not come just before or just after the
  match (where a ``\\b`` is not the right boundary);
- ``run``: characters the secret goes on over after the match, so that the pattern itself
  matches a short head and a search never reads on to the end of every nested candidate;
- ``ends_with``: the secret goes on to the first end marker after the match (a PEM block's
  ``-----END ...-----``), or, where ``open_if`` is found within `_OPEN_WITHIN` bytes after
  the match and no end marker follows, to the end of the text (a key cut off before its end).

Each detector scans on its own, from where its last match or rejected candidate left off: a
rejected candidate is skipped up to its secret, so no span is read more than a bounded number
of times. The matches are then taken as one combined pattern would take
them: leftmost first, and at one position the detector listed first.

Texts are scanned as UTF-8 bytes, each byte one character to RE2 (its Latin-1 mode): every
pattern is ASCII, so a non-ASCII character is never part of a prefix or a class of ASCII
characters, and offsets are byte offsets, never splitting a character.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

__all__ = ["Detector", "DetectorSet", "Found", "TriggerSet"]

_OPEN_WITHIN = 340  # bytes after a PEM header in which a cut-off key's body starts
_UNANCHORED = re2._Anchor.UNANCHORED


@dataclass(frozen=True, slots=True)
class Detector:
    """One kind of secret: an RE2 pattern, optionally with a group ``secret`` (the part to
    hide); its triggers, lower-case literals one of which every text it matches holds; and the
    checks RE2 cannot make (see the module docstring), each a Python pattern."""

    kind: str
    pattern: str
    triggers: tuple[str, ...]
    not_secret: str | None = None
    needs: str | None = None
    not_after: str | None = None
    not_before: str | None = None
    run: str | None = None
    ends_with: str | None = None
    open_if: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Detector:
        """A detector as ``secrets.json`` writes one."""
        optional = ("not_secret", "needs", "not_after", "not_before", "run", "ends_with", "open_if")
        return cls(
            data["kind"],
            data["pattern"],
            tuple(data["triggers"]),
            **{name: data[name] for name in optional if name in data},
        )


class Found(NamedTuple):
    """One secret found: the byte span of the match, that of the part to hide, and the index
    of its detector."""

    start: int
    end: int
    secret_start: int
    secret_end: int
    detector: int


# A `Found` made from a tuple in one call: NamedTuple's own constructor is a Python function,
# a fifth of what a text with a match every few bytes costs to scan.
_found = tuple.__new__


def _options() -> Any:
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    return options


def _byte_set(pattern: str | None) -> frozenset[int]:
    """The bytes a one-character class matches."""
    if pattern is None:
        return frozenset()
    compiled = re.compile(pattern.encode("ascii"))
    return frozenset(b for b in range(256) if compiled.fullmatch(bytes([b])))


def _python(pattern: str | None) -> re.Pattern[bytes] | None:
    return re.compile(pattern.encode("ascii")) if pattern is not None else None


class _Re2:
    """An RE2 pattern over bytes, searched through the compiled object itself: the package's
    wrapper builds a generator and a match object on every call, ten times the cost of the
    search itself for the short searches a scan makes by the thousand."""

    def __init__(self, pattern: str) -> None:
        compiled = re2.compile(pattern.encode("ascii"), _options())
        self.groups: dict[bytes, int] = compiled.groupindex
        self._match = compiled._regexp.Match

    def search(self, data: bytes, start: int, end: int) -> list[tuple[int, int]] | None:
        """The spans of the match and of each group (``(-1, -1)`` if unset), or None."""
        spans: list[tuple[int, int]] = self._match(_UNANCHORED, data, start, end)
        return spans if spans[0][0] >= 0 else None


def _re2(pattern: str | None) -> _Re2 | None:
    return _Re2(pattern) if pattern is not None else None


class TriggerSet:
    """Which of many lower-case literals a text holds, in one pass over it however many."""

    def __init__(self, triggers: Sequence[str]) -> None:
        self.triggers = tuple(triggers)
        self._set = re2.Set.SearchSet(_options())
        for trigger in self.triggers:
            self._set.Add(b"(?i)" + re.escape(trigger.encode("ascii")))
        self._set.Compile()

    def present(self, data: bytes) -> list[str]:
        """The triggers ``data`` holds, in any case."""
        return [self.triggers[index] for index in self._set.Match(data) or ()]


class _Compiled:
    """A detector ready to scan."""

    def __init__(self, detector: Detector) -> None:
        self.pattern = _Re2(detector.pattern)
        self.secret = self.pattern.groups.get(b"secret", 0)
        self.triggers = tuple(trigger.encode("ascii") for trigger in detector.triggers)
        self.not_secret = _python(detector.not_secret)
        self.needs = _python(detector.needs)
        self.not_after = _byte_set(detector.not_after)
        self.not_before = _byte_set(detector.not_before)
        self.run = _python(f"(?:{detector.run})*" if detector.run is not None else None)
        self.ends_with = _re2(detector.ends_with)
        self.open_if = _re2(detector.open_if)


class _Ends:
    """The first end marker at or after a position, remembered: candidates come in order, so
    one search serves every header before the marker it found."""

    def __init__(self, pattern: _Re2, data: bytes) -> None:
        self.pattern = pattern
        self.data = data
        self.searched_from = len(data) + 1
        self.found: tuple[int, int] | None = None

    def after(self, position: int) -> tuple[int, int] | None:
        known = self.searched_from <= position and (self.found is None or self.found[0] >= position)
        if not known:
            spans = self.pattern.search(self.data, position, len(self.data))
            self.searched_from = position
            self.found = spans[0] if spans is not None else None
        return self.found


class DetectorSet:
    """Detectors compiled to scan texts. Safe to share between threads."""

    def __init__(self, detectors: Iterable[Detector]) -> None:
        """
        Raises:
            re2.error: a pattern is not RE2 syntax (lookaround, backreferences).
        """
        self.detectors = tuple(detectors)
        self._compiled = [_Compiled(detector) for detector in self.detectors]
        self._whole_match = _whole_set(self.detectors)._set.Match  # the wrapper: +20%

    def find(self, data: bytes, indices: Sequence[int]) -> list[Found]:
        """The secrets in ``data`` that the detectors at ``indices`` find, in order, taken as
        one combined pattern takes them: leftmost first, then the detector listed first."""
        scan = _Scan(self._compiled, data)
        if len(indices) == 1:
            return scan.all(indices[0])
        pending: list[tuple[int, int, Found]] = []
        for index in indices:
            _push(pending, scan.next(index, 0))
        taken: list[Found] = []
        cursor = 0
        while pending:
            _, _, found = heapq.heappop(pending)
            if found.start >= cursor:
                taken.append(found)
                cursor = found.end
            _push(pending, scan.next(found.detector, cursor))
        return taken

    def kind_of_whole(self, piece: bytes) -> int | None:
        """The first detector that finds all of ``piece``, read on its own, as one secret (with
        the checks RE2 cannot make), if any. One pass of a set of every detector's pattern
        rules out all of them at once: a text holds thousands of matches whose hidden part is
        a word or two, and a test per detector for each would cost more than the scan itself."""
        candidates: list[int] = self._whole_match(piece)
        if not candidates:
            return None
        scan = _Scan(self._compiled, piece)
        for index in sorted(candidates):
            found = scan.next(index, 0)
            if found is not None and (found.start, found.end) == (0, len(piece)):
                return index
        return None


def _whole_set(detectors: Sequence[Detector]) -> Any:
    """A set of the detectors' patterns, each as what all of a secret of its kind matches (the
    head, and what ``run`` or ``ends_with`` adds after it), to match a text whole. The checks
    RE2 cannot make only take matches away, so a text no pattern of the set matches is no
    secret of any kind."""
    whole = re2.Set.FullMatchSet(_options())
    for detector in detectors:
        pattern = f"(?:{detector.pattern})"
        if detector.run is not None:
            pattern += f"(?:{detector.run})*"
        if detector.ends_with is not None:
            pattern += "(?s:.*)"
        whole.Add(pattern.encode("ascii"))
    whole.Compile()
    return whole


def _push(pending: list[tuple[int, int, Found]], found: Found | None) -> None:
    """Queue ``found``: the leftmost first, and at one position the detector listed first."""
    if found is not None:
        heapq.heappush(pending, (found.start, found.detector, found))


class _Scan:
    """One text being scanned: each detector's next secret from a position."""

    def __init__(self, compiled: list[_Compiled], data: bytes) -> None:
        self.compiled = compiled
        self.data = data
        self.ends: dict[int, _Ends] = {}

    def all(self, index: int) -> list[Found]:
        """Every secret detector ``index`` finds, in order: what `DetectorSet.find` takes when
        no other detector is looked for (most texts with many matches), without its queue."""
        taken: list[Found] = []
        found = self.next(index, 0)
        while found is not None:
            taken.append(found)
            found = self.next(index, found.end)
        return taken

    def next(self, index: int, position: int) -> Found | None:
        """Detector ``index``'s first secret at or after ``position``. A rejected candidate
        is skipped up to its secret: a candidate of the same detector starting before that
        would hide the same secret, and is rejected alike."""
        compiled = self.compiled[index]
        search, secret = compiled.pattern.search, compiled.secret
        data, size = self.data, len(self.data)
        while position <= size:
            spans = search(data, position, size)
            if spans is None:
                return None
            found = self._checked(index, compiled, spans[0], spans[secret])
            if found is not None:
                return found
            position = max(spans[secret][0], spans[0][0] + 1)
        return None

    def _checked(
        self, index: int, compiled: _Compiled, match: tuple[int, int], secret: tuple[int, int]
    ) -> Found | None:
        """The secret a match is, once the checks RE2 cannot make agree; else None."""
        data = self.data
        (start, end), (secret_start, secret_end) = match, secret
        if start > 0 and data[start - 1] in compiled.not_after:
            return None
        if end < len(data) and data[end] in compiled.not_before:
            return None
        if compiled.not_secret is not None and compiled.not_secret.match(data, secret_start):
            return None
        if compiled.needs is not None and not compiled.needs.match(data, secret_start):
            return None
        if compiled.run is not None and secret_end == end:
            run = compiled.run.match(data, end)
            end = secret_end = run.end() if run is not None else end
        if compiled.ends_with is not None:
            closed = self._closed(index, compiled, end)
            if closed is None:
                return None
            end = secret_end = closed
        return _found(Found, (start, end, secret_start, secret_end, index))

    def _closed(self, index: int, compiled: _Compiled, end: int) -> int | None:
        """Where a block opened at ``end`` ends: after its end marker, or at the end of the
        text when none follows but a key's body does; None when it is no block."""
        assert compiled.ends_with is not None
        ends = self.ends.setdefault(index, _Ends(compiled.ends_with, self.data))
        marker = ends.after(end)
        if marker is not None:
            return marker[1]
        if compiled.open_if is None:
            return None
        body = compiled.open_if.search(self.data, end, min(end + _OPEN_WITHIN, len(self.data)))
        return len(self.data) if body is not None else None

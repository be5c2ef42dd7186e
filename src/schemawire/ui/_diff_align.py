"""The alignment of two key sequences: a longest common subsequence, in linear memory.

The Diff page aligns the hops of two runs by their keys (protocol, direction, method, tool).
Two traces of 100,000 hops each must not cost 10^10 cells of a table, so this is Myers' O(ND)
difference algorithm ("An O(ND) Difference Algorithm and Its Variations", 1986) in its
linear-space form: find the middle snake of the edit graph from both ends, then solve the two
halves, until each part differs by at most one insertion or deletion. The common prefix and
suffix are trimmed first (two runs of one agent mostly agree at both ends). Time is
O((N + M) · D) for D differences; memory O(N + M).

Two runs that share almost nothing would cost (N + M)^2 steps, so the search for one middle
snake gives up after ``max_d`` rounds: that part of the two runs is left unpaired, and the
alignment says it is not exact (the page says so too).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

__all__ = ["MAX_D", "Alignment", "align", "common_pairs"]

MAX_D = 2000
"""Rounds of one middle-snake search (each round reaches one more difference from each end)
before the part of the two runs it searches is left unpaired."""

Step = tuple[int | None, int | None]
"""One row of an alignment: ``(i, j)`` a pair, ``(i, None)`` only in A, ``(None, j)`` only in B."""


@dataclass(frozen=True, slots=True)
class Alignment:
    """The rows of an alignment, and whether it is a longest common subsequence (False when
    a part of the runs differed too much to search, and was left unpaired)."""

    steps: list[Step]
    exact: bool


def align(a: Sequence[Hashable], b: Sequence[Hashable], *, max_d: int = MAX_D) -> Alignment:
    """Every index of ``a`` and ``b`` in order, paired where a longest common subsequence of
    the two pairs them; between two pairs, A's unpaired indices come before B's."""
    pairs, exact = common_pairs(a, b, max_d=max_d)
    steps: list[Step] = []
    i = j = 0
    for pi, pj in [*pairs, (len(a), len(b))]:
        steps.extend((x, None) for x in range(i, pi))
        steps.extend((None, y) for y in range(j, pj))
        if pi < len(a) and pj < len(b):
            steps.append((pi, pj))
        i, j = pi + 1, pj + 1
    return Alignment(steps, exact)


def common_pairs(
    a: Sequence[Hashable], b: Sequence[Hashable], *, max_d: int = MAX_D
) -> tuple[list[tuple[int, int]], bool]:
    """The index pairs ``(i, j)`` of a longest common subsequence of ``a`` and ``b``,
    increasing, and whether it is one (False when a search gave up after ``max_d`` rounds)."""
    exact = True
    codes: dict[Hashable, int] = {}
    xs = [codes.setdefault(key, len(codes)) for key in a]
    ys = [codes.setdefault(key, len(codes)) for key in b]
    pairs: list[tuple[int, int]] = []
    stack = [(0, len(xs), 0, len(ys))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        while alo < ahi and blo < bhi and xs[alo] == ys[blo]:  # the common prefix
            pairs.append((alo, blo))
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and xs[ahi - 1] == ys[bhi - 1]:  # the common suffix
            ahi, bhi = ahi - 1, bhi - 1
            pairs.append((ahi, bhi))
        if alo == ahi or blo == bhi:
            continue
        box = (alo, ahi, blo, bhi)
        found = _middle_snake(xs, ys, box, max_d)
        if found is None:
            exact = False  # too different to search: this part stays unpaired
            continue
        d, (x0, y0, x1, y1) = found
        if d <= 1:
            pairs.extend(_one_apart(xs, ys, box))
            continue
        pairs.extend((alo + k, blo + (y0 - x0) + k) for k in range(x0, x1))
        stack.append((alo, alo + x0, blo, blo + y0))
        stack.append((alo + x1, ahi, blo + y1, bhi))
    pairs.sort()
    return pairs, exact


def _middle_snake(
    xs: list[int], ys: list[int], box: tuple[int, int, int, int], max_d: int
) -> tuple[int, tuple[int, int, int, int]] | None:
    """The edit distance D of ``xs[alo:ahi]`` and ``ys[blo:bhi]`` (``box``) and the snake
    (x0, y0) → (x1, y1) (relative to ``alo``, ``blo``) that an optimal path takes through the
    middle of the edit graph."""
    alo, ahi, blo, bhi = box
    n, m = ahi - alo, bhi - blo
    delta = n - m
    odd = delta % 2 == 1
    limit = (n + m + 1) // 2 + 1
    offset = limit + 1
    forward = [0] * (2 * offset + 1)  # furthest x on each diagonal k = x - y, from the start
    backward = [0] * (2 * offset + 1)  # furthest x' on each diagonal of the reversed ranges
    for d in range(min(limit, max_d + 1)):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and forward[offset + k - 1] < forward[offset + k + 1]):
                x = forward[offset + k + 1]
            else:
                x = forward[offset + k - 1] + 1
            y = x - k
            sx, sy = x, y
            while x < n and y < m and xs[alo + x] == ys[blo + y]:
                x, y = x + 1, y + 1
            forward[offset + k] = x
            c = delta - k
            if odd and -(d - 1) <= c <= d - 1 and x + backward[offset + c] >= n:
                return 2 * d - 1, (sx, sy, x, y)
        for c in range(-d, d + 1, 2):
            if c == -d or (c != d and backward[offset + c - 1] < backward[offset + c + 1]):
                x = backward[offset + c + 1]
            else:
                x = backward[offset + c - 1] + 1
            y = x - c
            sx, sy = x, y
            while x < n and y < m and xs[ahi - 1 - x] == ys[bhi - 1 - y]:
                x, y = x + 1, y + 1
            backward[offset + c] = x
            k = delta - c
            if not odd and -d <= k <= d and x + forward[offset + k] >= n:
                return 2 * d, (n - x, m - y, n - sx, m - sy)
    return None  # max_d rounds were not enough (within ``limit`` rounds the snake is found)


def _one_apart(
    xs: list[int], ys: list[int], box: tuple[int, int, int, int]
) -> list[tuple[int, int]]:
    """The pairs of two ranges (``box``) one insertion or deletion apart (or equal): the
    shorter is a subsequence of the longer, which a greedy walk finds."""
    alo, ahi, blo, bhi = box
    pairs: list[tuple[int, int]] = []
    i, j = alo, blo
    a_longer = (ahi - alo) > (bhi - blo)
    while i < ahi and j < bhi:
        if xs[i] == ys[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif a_longer:
            i += 1
        else:
            j += 1
    return pairs

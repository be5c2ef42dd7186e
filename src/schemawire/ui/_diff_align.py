"""The alignment of two key sequences: a longest common subsequence, in linear memory.

The Diff page aligns the hops of two runs by their keys (protocol, direction, method, tool).
Two traces of 100,000 hops each must not cost 10^10 cells of a table, so this is Myers' O(ND)
difference algorithm ("An O(ND) Difference Algorithm and Its Variations", 1986) in its
linear-space form: find the middle snake of the edit graph from both ends, then solve the two
halves, until each part differs by at most one insertion or deletion. The common prefix and
suffix are trimmed first (two runs of one agent mostly agree at both ends). Time is
O((N + M) · D) for D differences; memory O(N + M).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

__all__ = ["align", "common_pairs"]

Step = tuple[int | None, int | None]
"""One row of an alignment: ``(i, j)`` a pair, ``(i, None)`` only in A, ``(None, j)`` only in B."""


def align(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Step]:
    """Every index of ``a`` and ``b`` in order, paired where a longest common subsequence of
    the two pairs them; between two pairs, A's unpaired indices come before B's."""
    steps: list[Step] = []
    i = j = 0
    for pi, pj in [*common_pairs(a, b), (len(a), len(b))]:
        steps.extend((x, None) for x in range(i, pi))
        steps.extend((None, y) for y in range(j, pj))
        if pi < len(a) and pj < len(b):
            steps.append((pi, pj))
        i, j = pi + 1, pj + 1
    return steps


def common_pairs(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[tuple[int, int]]:
    """The index pairs ``(i, j)`` of a longest common subsequence of ``a`` and ``b``, increasing."""
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
        d, (x0, y0, x1, y1) = _middle_snake(xs, ys, box)
        if d <= 1:
            pairs.extend(_one_apart(xs, ys, box))
            continue
        pairs.extend((alo + k, blo + (y0 - x0) + k) for k in range(x0, x1))
        stack.append((alo, alo + x0, blo, blo + y0))
        stack.append((alo + x1, ahi, blo + y1, bhi))
    pairs.sort()
    return pairs


def _middle_snake(
    xs: list[int], ys: list[int], box: tuple[int, int, int, int]
) -> tuple[int, tuple[int, int, int, int]]:
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
    for d in range(limit):
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
    raise AssertionError("the middle snake is always found")  # pragma: no cover


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

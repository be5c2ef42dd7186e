"""Hypothesis strategies for streamed fragments."""

from __future__ import annotations

from hypothesis import strategies as st


def fragments(text: str) -> st.SearchStrategy[list[str]]:
    """Any split of ``text`` into consecutive pieces, empty ones included (APIs send those)."""
    cuts = st.lists(st.integers(0, len(text)), max_size=len(text) + 3).map(sorted)
    return cuts.map(lambda points: _pieces(text, points))


def _pieces(text: str, points: list[int]) -> list[str]:
    starts, ends = [0, *points], [*points, len(text)]
    return [text[start:end] for start, end in zip(starts, ends, strict=True)]

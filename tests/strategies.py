"""Hypothesis strategies that more than one test module draws from."""

from __future__ import annotations

from hypothesis import strategies as st

# JSON values as the standard library produces them: no NaN, any integer size, any text.
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)

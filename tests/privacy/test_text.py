"""Free text among the released columns (``veil.privacy._text``): which columns are prose."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.privacy import _text


@settings(max_examples=300, deadline=None)
@given(
    gap=st.integers(0, 40),
    cells=st.lists(
        st.one_of(st.none(), st.sampled_from(["yes", "a note of four words", "two words", ""])),
        max_size=70,
    ),
    dtype=st.sampled_from(["str", "object"]),
)
def test_a_column_is_prose_by_its_first_cells_not_missing(
    gap: int, cells: list[str | None], dtype: str
) -> None:
    """Its first ``PROSE_SAMPLE`` cells that are not missing decide, wherever they lie: read
    from the column's first rows when those hold them, from every row otherwise (``gap``:
    missing cells first)."""
    cells = [None] * gap + cells
    series = pd.Series(cells, dtype=dtype)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_text, "PROSE_SAMPLE", 10)
        got = _text._is_prose(series)
    first = [str(c) for c in cells if c is not None][:10]
    expected = bool(first) and sum(len(c.split()) >= 3 for c in first) / len(first) >= 0.2
    assert got == expected

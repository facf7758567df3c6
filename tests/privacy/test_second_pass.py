"""The second pass finds each row's entry of the first pass's table by integer keys, and falls
back to pandas' MultiIndex where the keys would overflow: both give pandas' own answer."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.frequency import Frequencies
from veil.hierarchy import Hierarchy
from veil.io._pieces import with_texts
from veil.privacy._passes import _Generalize


def hierarchy(name: str, size: int) -> Hierarchy:
    return Hierarchy(name, [[str(i), "*"] for i in range(size)])


@pytest.mark.parametrize("size", [7, 100_000])  # 7**4 keys, and 10**20: past 2**62
def test_entries_are_found_as_pandas_finds_them(size: int) -> None:
    rng = np.random.default_rng(size)
    quasi = ["a", "b", "c", "d"]
    leaves = np.unique(rng.integers(0, size, (500, 4)), axis=0)
    step = _Generalize(
        quasi,
        [hierarchy(q, size) for q in quasi],
        (0, 0, 0, 0),
        leaves,
        np.zeros(len(leaves), bool),
    )
    rows = np.vstack([leaves[rng.integers(0, len(leaves), 2_000)], rng.integers(0, size, (50, 4))])
    oracle = pd.MultiIndex.from_arrays(list(leaves.T)).get_indexer(
        pd.MultiIndex.from_arrays(list(rows.T))
    )
    found = step._entry(list(rows.T))
    assert found.tolist() == oracle.tolist()
    assert (found[:2_000] >= 0).all()


def test_a_batch_is_released_with_the_labels_and_dtype_pandas_gives() -> None:
    quasi = ["a"]
    h = Hierarchy("a", [["x", "A"], ["y", "A"], ["z", "B"]])
    leaves = np.array([[0], [1], [2]])
    step = _Generalize(quasi, [h], (1,), leaves, np.array([False, True, False]))
    batch = pd.DataFrame({"a": ["z", "y", "x", "z"], "n": range(4)}, index=[10, 11, 12, 13])
    out = step(batch)
    assert out["a"].tolist() == ["B", "A", "B"]  # y's class fails: its row is out
    assert out.index.tolist() == [10, 12, 13]
    assert out["a"].dtype == pd.Series(["B"]).dtype
    empty = step(batch.iloc[:0])
    assert len(empty) == 0


@pytest.mark.parametrize("failing", [[False] * 6, [False, True, False, False, True, False]])
def test_rows_released_in_an_order_are_the_kept_rows_taken_in_it(failing: list[bool]) -> None:
    """In memory the rows are shuffled as they are made (each quasi-identifier's codes taken in
    the order): the same frame as the rows released and then taken in that order."""
    from veil.io._pieces import take_rows
    from veil.privacy._plan import shuffle_order

    h = Hierarchy("a", [[v, "A" if v < "d" else "B"] for v in "abcdef"])
    step = _Generalize(["a"], [h], (1,), np.arange(6)[:, None], np.array(failing))
    rng = np.random.default_rng(3)
    batch = pd.DataFrame(
        {
            "note": pd.Series([f"note {i}" for i in range(300)], dtype="string[pyarrow]"),
            "a": pd.Series(rng.choice(list("abcdef"), 300), dtype="string[pyarrow]"),
            "n": rng.integers(0, 9, 300),
        }
    ).set_axis(np.arange(300) * 2 + 5)  # labels that are not positions
    plain = step(batch)
    for seed in (0, 1):
        order = shuffle_order(len(plain), seed)
        ordered = step(batch, lambda n, seed=seed: shuffle_order(n, seed))
        pd.testing.assert_frame_equal(ordered, take_rows(plain, order))
    assert len(plain) < 300 if any(failing) else len(plain) == 300
    # left as its codes for a shuffle's spill: an Arrow dictionary of the level's labels,
    # whose texts are the very column made as texts
    for order in (None, lambda n: shuffle_order(n, 4)):
        made, codes = step.coded(batch, order)
        coded, same = step.coded(batch, order, texts=False)
        assert isinstance(coded["a"].dtype, pd.ArrowDtype)
        assert coded["a"].array.__arrow_array__().type.value_type == pa.large_string()
        pd.testing.assert_frame_equal(with_texts(coded), made, check_exact=True)
        assert with_texts(made) is made
        assert {n: c.tolist() for n, (c, _) in same.items()} == {
            n: c.tolist() for n, (c, _) in codes.items()
        }


def _towns_and_notes() -> tuple[Any, pd.DataFrame]:
    """A release generalizing towns to "Kenya", and a batch whose notes name each town."""
    from veil.privacy._passes import Steps, _Produce

    towns = ["Nairobi", "Kisumu", "Nyeri", "Mombasa"]
    h = Hierarchy("town", [[t, "Kenya"] for t in towns])
    step = _Generalize(["town"], [h], (1,), np.arange(4)[:, None], np.zeros(4, dtype=bool))
    batch = pd.DataFrame(
        {
            "town": pd.Series(towns * 10, dtype="str"),
            "notes": pd.Series([f"seen at the {t} clinic today" for t in towns * 10], dtype="str"),
        }
    )
    return _Produce(Steps([], ["town"], [], set()), step, ["town"]), batch


def test_a_release_left_as_codes_makes_its_texts_when_free_text_is_searched() -> None:
    """A release whose rows a spill takes as codes still scrubs its free text: the released
    texts are made for it, and the scrubbed rows are those a release made as texts gives."""
    produce, batch = _towns_and_notes()
    made, tallies, _ = produce.coded(batch)
    coded, coded_tallies, _ = produce.coded(batch, texts=False)
    pd.testing.assert_frame_equal(coded, made, check_exact=True)  # no column left as codes
    assert tallies == coded_tallies
    assert tallies[-1][0] == {"town": 40}
    # with no free text, the generalized column is left as its codes
    plain, _, _ = produce.coded(batch[["town"]], texts=False)
    assert isinstance(plain["town"].dtype, pd.ArrowDtype)


@pytest.mark.parametrize("level", [0, 1])
def test_the_codes_a_release_is_made_from_count_as_its_texts(level: int) -> None:
    """A release in memory is counted for its certificate from the codes its texts were made
    from (the verification counts the texts apart): the same classes, in the same order, as
    the texts give, in any order of the rows, with rows of failing classes out."""
    from veil.frequency import Frequencies
    from veil.privacy._plan import shuffle_order

    rng = np.random.default_rng(level)
    ages = Hierarchy("age", [[str(a), f"{a // 10 * 10}s"] for a in range(20, 60)])
    towns = Hierarchy("town", [[t, "*"] for t in ("Nairobi", "Kisumu", "Nyeri")])
    leaves = np.array([[a, t] for a in range(40) for t in range(3)])
    failing = rng.random(len(leaves)) < 0.2
    step = _Generalize(["age", "town"], [ages, towns], (level, 1), leaves, failing)
    batch = pd.DataFrame(
        {
            "age": pd.Series(rng.integers(20, 60, 2_000).astype(str), dtype="str"),
            "town": pd.Series(rng.choice(["Nairobi", "Kisumu", "Nyeri"], 2_000), dtype="str"),
        }
    )
    for order in (None, lambda n: shuffle_order(n, 5)):
        out, codes = step.coded(batch, order)
        assert set(codes) == {"age", "town"}
        pd.testing.assert_frame_equal(
            Frequencies.of(out, ["age", "town"], codes=codes).counts,
            Frequencies.of(out, ["age", "town"]).counts,
        )
    assert len(out) < len(batch)  # rows of failing classes withheld


_CELL = st.one_of(st.none(), st.text(alphabet="ab,é\n\x00 ", max_size=3))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(_CELL, _CELL, st.integers(-3, 3)), max_size=30),
    st.integers(0, 30),
    st.booleans(),
)
def test_a_batch_coded_once_hashes_and_counts_as_pandas_does(
    rows: list[tuple[str | None, str | None, int]], cut: int, chunked: bool
) -> None:
    """The first pass codes a batch's text columns once (``text_codes``) for its row hashes
    and its counts: the hashes are pandas' ``hash_pandas_object`` of the batch, and the counts
    the group-by's, on texts with gaps, commas, line breaks, NUL and accents, a column of
    numbers beside them, a column in Arrow chunks, and an empty batch."""
    import pyarrow as pa

    from veil.io._content import text_codes
    from veil.privacy._passes import row_hashes

    first = [r[0] for r in rows]
    frame = pd.DataFrame(
        {
            "a": pd.array(first, dtype="str"),
            "b": pd.array([r[1] for r in rows], dtype="str"),
            "n": np.array([r[2] for r in rows], dtype=np.int64),
        }
    )
    if chunked:  # the same texts held in two Arrow chunks
        parts = [pa.array(first[:cut], pa.large_string()), pa.array(first[cut:], pa.large_string())]
        held = pd.array(pa.chunked_array(parts), dtype=frame["a"].dtype)
        frame["a"] = pd.Series(held, index=frame.index)
    texts = text_codes(frame)
    assert set(texts) == {"a", "b"}
    want = pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
    assert row_hashes(frame, texts) == want
    codes = {n: (np.where(c < 0, len(u), c), len(u) + 1) for n, (c, u) in texts.items()}
    for columns in (["a"], ["a", "b"], ["b", "n", "a"]):
        by_group = Frequencies.of(frame, columns).counts
        pd.testing.assert_frame_equal(Frequencies.of(frame, columns, codes=codes).counts, by_group)


def test_free_text_the_scrub_left_as_it_was_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The free text the release told before its scrub is searched again for what the scrub
    missed: a scrub that replaced nothing leaves the original towns, and the release stops."""
    from veil.exceptions import CheckFailedError
    from veil.privacy import _passes

    monkeypatch.setattr(_passes, "scrub_quasi", lambda before, after, quasi, **_: (after, {}))
    produce, batch = _towns_and_notes()
    for texts in (True, False):
        with pytest.raises(CheckFailedError, match="still holds town"):
            produce.coded(batch, texts=texts)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 3),  # columns
    st.sampled_from([2, 5, 40, 3000]),  # values a column holds: a dense space, and one not
    st.integers(0, 400),  # rows
    st.integers(0, 2**32 - 1),
)
def test_counts_are_pandas_group_by_in_the_order_rows_first_hold_them(
    columns: int, values: int, rows: int, seed: int
) -> None:
    """``Frequencies.of`` against pandas' group-by (``sort=False``: the combinations in the
    order of their first rows, the oracle), from the columns' texts and from their codes: the
    same combinations, counts and order, whether the combinations are counted in a table of
    every key (few values) or by pandas' hash table (many)."""
    from veil.frequency import COUNT, first_seen_groups

    rng = np.random.default_rng(seed)
    names = [f"q{j}" for j in range(columns)]
    frame = pd.DataFrame(
        {n: pd.array(rng.integers(0, values, rows).astype(str), dtype="str") for n in names}
    )
    want = frame.groupby(names, sort=False).size().reset_index(name=COUNT)
    codes = {}
    for n in names:
        coded, uniques = pd.factorize(frame[n])
        codes[n] = (coded, len(uniques))
    for given_codes in (None, codes):
        got = Frequencies.of(frame, names, codes=given_codes).counts
        assert list(got.columns) == [*names, COUNT]
        assert (
            got[names].astype(object).values.tolist() == want[names].astype(object).values.tolist()
        )
        assert got[COUNT].tolist() == want[COUNT].tolist()
    key = rng.integers(0, values, rows)
    dense, hashed = first_seen_groups(key, values), first_seen_groups(key)
    assert np.array_equal(dense[0], hashed[0])
    assert np.array_equal(dense[1], hashed[1])

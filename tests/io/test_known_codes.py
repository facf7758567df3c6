"""Text columns coded once: a Parquet file's text columns read with the file's own dictionaries
(``TableStream``'s batches) must be the very frames a plain reading gives, and the codes kept
with them (``veil.io._content``: only while a release runs, only while the array lives) must
code those texts as hashing them would, for the passes and ``Hierarchy.encode`` alike."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.exceptions import InputError
from veil.hierarchy import Hierarchy
from veil.io._batches import TableStream, undictionaried
from veil.io._content import (
    _KNOWN,
    arrow_text,
    codes_kept,
    dictionary_codes,
    known_codes,
    remember_codes,
)

DATA = Path(__file__).parents[1] / "data"


def _plain_batches(path: Path, rows: int) -> list[pd.DataFrame]:
    """The oracle: Arrow's plain reading of each batch, as pandas makes it."""
    handle = pq.ParquetFile(path)
    return [pa.Table.from_batches([b]).to_pandas() for b in handle.iter_batches(batch_size=rows)]


def _hostile(path: Path, stored: bool) -> None:
    """Texts that change dictionary from row group to row group, a column of distinct names
    whose dictionary outgrows its page (the writer falls back to plain pages), gaps and empty
    texts, text as ``string`` and as ``large_string``, and numbers; with ``stored``, a column
    already a dictionary in Arrow's schema too (pandas' categories)."""
    rows = 30_000
    rng = np.random.default_rng(3)
    names = [None if i % 11 == 0 else f"name-{i:06d}-{rng.integers(10**9)}" for i in range(rows)]
    kinds = ["a", "b", "", None, "ü ß", "a,b\n"]
    table = pa.table(
        {
            "name": pa.array(names, type=pa.large_string()),
            "kind": pa.array([kinds[(i // 4000 + i) % len(kinds)] for i in range(rows)]),
            "late": pa.array([None] * 20_000 + ["x", "y"] * 5_000, type=pa.string()),
            "number": pa.array(np.arange(rows, dtype=np.int64)),
        }
    )
    if stored:
        column = pa.array([["p", "q"][i % 2] for i in range(rows)]).dictionary_encode()
        table = table.append_column("stored", column)
    pq.write_table(table, path, row_group_size=7_000, dictionary_pagesize_limit=20_000)


def _real(path: Path, name: str) -> None:
    """A real table of ``tests/data`` (see its README) as pandas writes Parquet, in row groups
    of 500."""
    pd.read_csv(DATA / name).to_parquet(path, index=False, row_group_size=500)


@pytest.mark.parametrize(
    "source", ["hostile", "hostile, a category", "ke_claims.csv", "ibm_hr_attrition.csv"]
)
@pytest.mark.parametrize("rows", [999, 4_000])
def test_parquet_batches_read_with_dictionaries_are_a_plain_readings(
    tmp_path: Path, source: str, rows: int
) -> None:
    path = tmp_path / "t.parquet"
    if source.startswith("hostile"):
        _hostile(path, stored="category" in source)
    else:
        _real(path, source)
    expected = _plain_batches(path, rows)
    with codes_kept():
        got = list(TableStream(path).batches(rows))
        assert len(got) == len(expected)
        coded = 0
        for frame, plain in zip(got, expected, strict=True):
            pd.testing.assert_frame_equal(frame, plain, check_exact=True)
            for name in frame.columns:
                kept = known_codes(frame[name])
                if arrow_text(frame[name]) is None or "category" in source:
                    # a category column: Arrow ends each batch at a row group when one is read
                    # as a dictionary, so the file is read plainly, as it always was
                    assert kept is None
                    continue
                assert kept is not None, name
                codes, listed = kept
                assert len(set(listed.tolist())) == len(listed)  # each text once
                values = frame[name].to_numpy(dtype=object, na_value=None)
                decoded = np.array([None if c < 0 else listed[c] for c in codes], dtype=object)
                assert decoded.tolist() == values.tolist()
                coded += 1
        assert coded >= (0 if "category" in source else len(got))
    assert not _KNOWN.entries  # forgotten when the release ends


def test_codes_are_kept_only_while_a_release_runs_and_only_with_their_array() -> None:
    frame = pd.DataFrame({"t": pd.array(["a", "b", None, "a"], dtype="str")})
    coded = (np.array([0, 1, -1, 0], dtype=np.int32), np.array(["a", "b"], dtype=object))
    remember_codes(frame["t"], coded)
    assert known_codes(frame["t"]) is None  # no release runs: nothing kept
    with codes_kept():
        remember_codes(frame["t"], coded)
        assert known_codes(frame["t"]) is coded
        copy = pd.DataFrame({"t": pd.array(["a", "b", None, "a"], dtype="str")})
        assert known_codes(copy["t"]) is None  # another array, however equal
        with codes_kept():  # a release inside another keeps the outer's codes
            pass
        assert known_codes(frame["t"]) is coded
        del frame
        gc.collect()
        assert not _KNOWN.entries  # gone with its array
        remember_codes(copy["t"], coded)
    assert not _KNOWN.entries


def test_a_dictionary_listing_a_text_twice_is_not_taken_as_codes() -> None:
    twice = pa.DictionaryArray.from_arrays(
        pa.array([0, 1, 2, None, 1], type=pa.int32()), pa.array(["a", "b", "a"])
    )
    assert dictionary_codes(twice) is None
    once = pa.DictionaryArray.from_arrays(
        pa.array([0, 1, None, 1], type=pa.int32()), pa.array(["a", "b", "c"])
    )
    coded = dictionary_codes(once)
    assert coded is not None
    assert coded[0].tolist() == [0, 1, -1, 1]
    assert coded[1].tolist() == ["a", "b", "c"]
    batch = pa.record_batch({"t": twice})
    with codes_kept():
        frame = undictionaried([batch], {"t": pa.string()})
        assert frame["t"].tolist()[:3] == ["a", "b", "a"]
        assert frame["t"].isna().tolist()[3]
        assert known_codes(frame["t"]) is None


_LEAVES = ["a", "b", "c", "d", "NULL"]
_HIERARCHY = Hierarchy("t", [[v, "ab" if v in "ab" else "*"] for v in _LEAVES])


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.sampled_from(["a", "b", "c", "d", None, "zz"]), min_size=0, max_size=40),
    unused=st.lists(st.sampled_from(["a", "c", "zz", "yy"]), unique=True),
)
def test_a_hierarchy_encodes_kept_codes_as_it_encodes_the_texts(
    rows: list[str | None], unused: list[str]
) -> None:
    values = pd.Series(pd.array(rows, dtype="str"))
    # codes as a Parquet dictionary gives them: texts no row holds listed too, in any order
    listed = list(dict.fromkeys([*unused, *(v for v in rows if v is not None)]))
    codes = np.array([-1 if v is None else listed.index(v) for v in rows], dtype=np.int32)
    try:
        expected: np.ndarray | str = _HIERARCHY.encode(values.copy(deep=True))
    except InputError as err:
        expected = str(err)
    with codes_kept():
        remember_codes(values, (codes, np.array(listed, dtype=object)))
        assert known_codes(values) is not None
        try:
            got: np.ndarray | str = _HIERARCHY.encode(values)
        except InputError as err:
            got = str(err)
        assert known_codes(values) is None  # its last use: a table in memory keeps no codes
    if isinstance(expected, str):
        assert got == expected  # a value the hierarchy misses: the same words
    else:
        assert isinstance(got, np.ndarray)
        assert got.tolist() == expected.tolist()


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="ab,é\n\x00", max_size=6), min_size=1, max_size=5, unique=True),
    long=st.booleans(),
    rows=st.lists(st.one_of(st.none(), st.integers(0, 4)), max_size=60),
    start=st.integers(0, 5),
    large=st.booleans(),
)
def test_a_dictionary_s_texts_are_arrows_take_of_them(
    texts: list[str], long: bool, rows: list[int | None], start: int, large: bool
) -> None:
    """``decoded`` gives Arrow's own take of a dictionary's texts, also where it gathers the
    bytes itself (forced here: no spare bytes allowed), from a slice of the array, with gaps."""
    from veil.io import _pieces as pieces

    listed = texts + (["x" * 5_000] if long else [])
    indices = pa.array([None if r is None else r % len(listed) for r in rows], pa.int32())
    array = pa.DictionaryArray.from_arrays(indices, pa.array(listed)).slice(start)
    kind = pa.large_string() if large else pa.string()
    expected = array.dictionary.cast(kind).take(array.indices)
    for spare in (pieces._SPARE_BYTES, -1):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(pieces, "_SPARE_BYTES", spare)
            got = pieces.decoded(array, kind)
        got.validate(full=True)
        assert got.type == kind
        assert got.equals(expected)


def test_a_ten_megabyte_cell_among_few_values_is_read_and_spilled(tmp_path: Path) -> None:
    """One cell of 10 MB in a column of two short values: Arrow's take reserves the
    dictionary's average length for every row (233 GB for a batch of 70,000 rows) and failed,
    reading the Parquet file, decoding the shuffle's coded pieces and taking a release's rows
    in memory alike, through the C library's allocator that veil's commands give Arrow
    (``veil.memory``)."""
    from veil.io import _pieces as pieces

    pool = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        _read_and_spill_a_hostile_cell(tmp_path, pieces)
    finally:
        pa.set_memory_pool(pool)


def _read_and_spill_a_hostile_cell(tmp_path: Path, pieces: Any) -> None:

    rows = 70_000
    values = ["<=50K", ">50K"] * (rows // 2)
    values[40_000] = "x" * 10_000_000
    path = tmp_path / "hostile.parquet"
    pq.write_table(pa.table({"salary": pa.array(values, pa.large_string())}), path)
    with codes_kept():
        (batch,) = TableStream(path).batches(rows)
        assert batch["salary"].str.len().max() == 10_000_000
        assert batch["salary"].tolist() == values
    table = pieces.coded(pa.table({"salary": pa.array(values, pa.large_string())}))
    assert pa.types.is_dictionary(table.column(0).type)  # few values: coded for the spill
    assert pieces.plain(table).column(0).to_pylist() == values
    # a release in memory takes such a column in its random order through its codes too
    frame = pd.DataFrame({"salary": pd.Series(values, dtype="str")})
    order = np.random.default_rng(2).permutation(rows)
    taken = pieces.take_rows(frame, order)
    assert taken["salary"].tolist() == [values[i] for i in order]

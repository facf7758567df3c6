"""The shuffle's pieces on disk: what goes through Arrow comes back as it was, coded or not;
what would not (objects, categories) is refused, so it stays a DataFrame."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.io import _pieces as pieces


def _frame(rows: int, few: bool) -> pd.DataFrame:
    rng = np.random.default_rng(rows)
    text = rng.choice(["a", "b"], rows) if few else [f"t{i}" for i in range(rows)]
    return pd.DataFrame(
        {
            "text": pd.array(text, dtype="str"),
            "gaps": np.where(rng.random(rows) < 0.2, np.nan, rng.random(rows)),
            "n": rng.integers(0, 9, rows),
            "nullable": pd.array(np.where(rng.random(rows) < 0.2, None, 1), dtype="Int64"),
            "when": pd.Timestamp("2024-01-01", tz="Africa/Nairobi")
            + pd.to_timedelta(rng.integers(0, 5, rows), "h"),
        }
    )


def test_a_frame_comes_back_from_its_pieces_as_it_was(tmp_path: Path) -> None:
    few, many = _frame(40, few=True), _frame(30, few=False)
    tables = []
    for frame in (few, many):
        table = pieces.as_arrow(frame)
        assert table is not None
        tables.append(pieces.coded(table))
    assert pa.types.is_dictionary(tables[0].schema.field("text").type)  # 2 values in 40 rows
    assert not pa.types.is_dictionary(tables[1].schema.field("text").type)  # 30 in 30
    path = tmp_path / "partition.arrow"
    pieces.write_buckets(tables[0], [15, 15, 40], path)  # 3 buckets: the second one empty
    assert sorted(p.name for p in tmp_path.iterdir()) == ["partition.arrow"]  # no temporary
    sent = [pieces.read_bucket(path, b) for b in range(3)]
    assert sent[1] is None
    assert [t.num_rows for t in sent if t is not None] == [15, 25]
    back = [*(t for t in sent if t is not None)]
    sink = pa.BufferOutputStream()  # a piece as a stream's bucket holds it: an IPC stream
    with pa.ipc.new_stream(sink, tables[1].schema) as writer:
        writer.write_table(tables[1].slice(5, 20))
    back.append(pa.ipc.open_stream(sink.getvalue()).read_all())
    joined = pieces.joined(back)  # coded in two, not in the other: joined as text
    assert joined is not None
    want = pd.concat([few, many.iloc[5:25]], ignore_index=True)
    pd.testing.assert_frame_equal(pieces.plain(joined).to_pandas(), want, check_exact=True)


def test_what_arrow_would_change_stays_a_dataframe() -> None:
    base = _frame(10, few=True)
    for column in (
        base["n"].astype(object).where(base["n"] > 3, "none"),  # mixed objects
        base["text"].astype("category"),
        pd.Series(pd.to_timedelta(base["n"], "s")),
    ):
        assert pieces.as_arrow(base.assign(other=column)) is None
    assert pieces.as_arrow(base.rename(columns={"n": "text"})) is None  # a name twice


def test_pieces_of_other_columns_are_not_joined() -> None:
    one = pieces.as_arrow(_frame(5, few=True))
    other = pieces.as_arrow(_frame(5, few=True).drop(columns="gaps"))
    assert one is not None
    assert other is not None
    assert pieces.joined([one, other]) is None


_TEXTS = st.one_of(st.none(), st.sampled_from(["", "a", "Nairobi", "ñ", " b ", "0"]), st.text())


@st.composite
def _frames(draw: st.DrawFn) -> tuple[pd.DataFrame, np.ndarray]:
    """A frame of pandas' usual kinds (Arrow text of few or many values, with gaps; numbers,
    nullable integers, booleans, dates, objects, categories), a non-default index with
    repeated labels, and a random order of its rows."""
    rows = draw(st.integers(0, 60))
    few = st.lists(st.sampled_from(["x", "y", None, ""]), min_size=rows, max_size=rows)
    many = st.lists(_TEXTS, min_size=rows, max_size=rows)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    columns = {
        "few": pd.array(draw(few), dtype="str"),
        "many": pd.array(draw(many), dtype="str"),
        "na_text": pd.array(draw(few), dtype="string[pyarrow]"),  # pd.NA for missing
        "n": rng.integers(-5, 5, rows),
        "gaps": np.where(rng.random(rows) < 0.3, np.nan, rng.random(rows)),
        "nullable": pd.array(np.where(rng.random(rows) < 0.3, None, 1), dtype="Int64"),
        "flag": rng.random(rows) < 0.5,
        "when": pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 9, rows), "D"),
    }
    if draw(st.booleans()):
        columns["cat"] = pd.Categorical(draw(few))
    # Arrow text in several chunks (a Parquet file's row groups): coded chunk by chunk
    split = sorted(draw(st.lists(st.integers(0, rows), max_size=3)))
    for name, values in (("chunked", draw(few)), ("na_chunked", draw(few))):
        dtype = pd.StringDtype("pyarrow", **({"na_value": np.nan} if name == "chunked" else {}))
        cuts = [0, *split, rows]
        pieces_of = [values[a:b] for a, b in pairwise(cuts)]
        columns[name] = dtype.__from_arrow__(pa.chunked_array(pieces_of, pa.string()))
    frame = pd.DataFrame(columns, index=rng.integers(0, 5, rows))
    if draw(st.booleans()):  # text kept as objects (a transform's output), not inferred as str
        frame["obj"] = pd.Series(draw(many), dtype=object, index=frame.index)
        mixed = [1, "a"] * (rows // 2) + [None] * (rows % 2)
        frame["mixed"] = pd.Series(mixed, dtype=object, index=frame.index)
    frame.attrs["source"] = "drawn"
    return frame, rng.permutation(rows)


@settings(max_examples=80, deadline=None)
@given(_frames())
def test_rows_taken_are_iloc_s_rows(drawn: tuple[pd.DataFrame, np.ndarray]) -> None:
    frame, order = drawn
    expected = frame.iloc[order]
    taken = pieces.take_rows(frame, order)
    pd.testing.assert_frame_equal(taken, expected, check_exact=True, check_flags=True)
    assert taken.attrs == expected.attrs
    assert list(frame.index) == list(pd.DataFrame(frame).index)  # the input is left as it was


def test_a_frame_iloc_alone_can_take_is_taken_by_iloc() -> None:
    frame = pd.DataFrame([[1, "a"], [2, "b"]], columns=["x", "x"])  # repeated names
    pd.testing.assert_frame_equal(pieces.take_rows(frame, [1, 0]), frame.iloc[[1, 0]])
    ends = pd.DataFrame({"t": pd.array(["a", "b", "a"], dtype="str")})
    pd.testing.assert_frame_equal(pieces.take_rows(ends, [-1, 0]), ends.iloc[[-1, 0]])
    assert pieces.take_rows(pd.DataFrame(index=[3, 4]), [1, 0]).index.tolist() == [4, 3]


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(st.sampled_from([65_536, 65_537, 100_000]), st.integers(1, 70_000)),
    st.integers(0, 3_000),
    st.integers(0, 2**32 - 1),
)
def test_rows_sorted_by_bucket_are_numpys_stable_sort(buckets: int, rows: int, seed: int) -> None:
    """``bucket_order`` gives the order a stable sort of the 64-bit buckets gives, past the
    16-bit keys too (more than 65,536 buckets)."""
    chosen = np.random.default_rng(seed).integers(0, buckets, rows)
    want = np.argsort(chosen, kind="stable")
    assert np.array_equal(pieces.bucket_order(chosen, buckets), want)


def _real_tables() -> list[pd.DataFrame]:
    """Real tables of tests/data (see its README) as a stream's batch holds them."""
    from veil.io import read

    data = Path(__file__).resolve().parents[1] / "data"
    names = ["arx_adult/adult.csv.gz", "ke_claims.csv", "ibm_hr_attrition.csv", "organs_vitals.csv"]
    return [read(data / name) for name in names]


def test_a_parquet_file_written_from_codes_reads_back_as_pyarrows_own(tmp_path: Path) -> None:
    """``CodedParquet`` against ``pq.write_table`` of the plain rows, the oracle: the same
    values, types and key-value metadata, read by Arrow and by pandas; on four real tables and
    one of every type, written in three tables: one coded, one plain, one whose codes have
    another index type. The codes go in as they are: a label no row holds is in the file's
    dictionary (a writer that codes the texts again would not have it)."""
    import pyarrow.parquet as pq

    frames = [*_real_tables(), _frame(600, few=True)]
    for n, frame in enumerate(frames):
        plain = pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False)
        parts = [plain.slice(0, len(frame) // 3), plain.slice(len(frame) // 3, 5)]
        parts.append(plain.slice(len(frame) // 3 + 5))
        first = pieces.coded(parts[0])
        texts = [i for i, t in enumerate(first.schema.types) if pa.types.is_dictionary(t)]
        assert texts, f"table {n}: no text column of few values to write from codes"
        name = first.column_names[texts[0]]
        column = first.column(texts[0]).combine_chunks()
        unused = pa.array(["no row holds this label"], column.type.value_type)
        with_unused = pa.DictionaryArray.from_arrays(
            column.indices, pa.concat_arrays([column.dictionary, unused])
        )
        first = first.set_column(texts[0], name, with_unused)
        last = pieces.coded(parts[2])
        last = last.cast(
            pa.schema(
                [
                    f.with_type(pa.dictionary(pa.int16(), f.type.value_type))
                    if pa.types.is_dictionary(f.type)
                    else f
                    for f in last.schema
                ],
                metadata=last.schema.metadata,
            )
        )
        oracle, made = tmp_path / f"oracle{n}.parquet", tmp_path / f"made{n}.parquet"
        pq.write_table(plain, oracle)
        writer = pieces.CodedParquet(made, plain.schema, first)
        for part, coded in zip(parts, (first, None, last), strict=True):
            writer.write(part, coded)
        writer.close()
        want, got = pq.read_table(oracle), pq.read_table(made)
        assert got.schema.equals(want.schema, check_metadata=True), n
        assert got.equals(want), n
        assert pq.read_metadata(made).metadata == pq.read_metadata(oracle).metadata
        pd.testing.assert_frame_equal(pd.read_parquet(made), pd.read_parquet(oracle))
        held = pq.ParquetFile(made, read_dictionary=[name]).read_row_group(0, columns=[name])
        assert "no row holds this label" in held.column(0).chunk(0).dictionary.to_pylist(), n


def test_a_coded_column_takes_the_narrowest_codes_that_hold_it() -> None:
    """A piece's codes are one byte a row where the texts (and a missing value's code after
    them, ``codes_of``) fit in one, two where they fit in two: on each side of each edge, the
    rows come back as they were and count as their texts do."""
    from veil.frequency import Frequencies

    for texts, kind in (
        (127, pa.int8()),
        (128, pa.int16()),
        (32767, pa.int16()),
        (32768, pa.int32()),
    ):
        rows = texts * 4
        values = np.array([f"v{i}" for i in range(texts)], dtype=object)[np.arange(rows) % texts]
        values[::7] = None  # missing values: one code more
        frame = pd.DataFrame({"t": pd.array(values, dtype="str")})
        table = pieces.coded(pieces.as_arrow(frame))
        column = table.column("t")
        assert pa.types.is_dictionary(column.type), texts
        assert column.type.index_type.equals(kind), (texts, column.type)
        pd.testing.assert_frame_equal(pieces.plain(table).to_pandas(), frame, check_exact=True)
        codes = pieces.codes_of(table)
        by_text = Frequencies.of(frame, ["t"]).counts
        pd.testing.assert_frame_equal(Frequencies.of(frame, ["t"], codes=codes).counts, by_text)

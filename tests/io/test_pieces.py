"""The shuffle's pieces on disk: what goes through Arrow comes back as it was, coded or not;
what would not (objects, categories) is refused, so it stays a DataFrame."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

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
    path = tmp_path / "piece.arrow"
    pieces.write_piece(tables[0], path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["piece.arrow"]  # no temporary left
    back = [pieces.read_piece(path), pieces.from_bytes(pieces.to_bytes(tables[1].slice(5, 20)))]
    joined = pieces.joined(back)  # coded in one, not in the other: joined as text
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

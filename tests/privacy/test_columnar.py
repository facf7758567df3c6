"""A streamed check of Parquet files counts its classes with DuckDB reading the files: it must
measure what veil's own batches measure (k, l, t, risk, population estimates), on a real table
and on a hostile one (missing values of every kind, spellings, a column name made of SQL), and
leave nothing behind."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.io import TableStream, fold_batches
from veil.privacy._check import check_folded, check_stream
from veil.progress import as_progress

ADULT = Path(__file__).parents[1] / "data" / "arx_adult" / "adult.csv.gz"


def _both(source: TableStream, quasi: list[str], sensitive: str | None, **goals: Any) -> None:
    steps: list[str] = []
    by_duckdb = check_stream(
        source, quasi, sensitive=sensitive, progress=steps.append, batch_rows=997, **goals
    )
    assert any("DuckDB" in s for s in steps)  # the columnar engine counted
    wanted = [*quasi, *([sensitive] if sensitive else [])]
    report = as_progress(None)

    def fold(label: str, fn: Any, merge: Any, start: Any) -> Any:
        return fold_batches(source, 997, report, label, fn, merge, start, wanted)

    by_batches = check_folded(fold, source.columns, quasi, sensitive=sensitive, **goals)
    assert by_duckdb.to_dict() == by_batches.to_dict()


@pytest.mark.parametrize("sensitive", ["occupation", "age"])
def test_duckdb_counts_adult_as_veils_batches_do(tmp_path: Path, sensitive: str) -> None:
    frame = pd.read_csv(ADULT, sep=";")
    path = tmp_path / "adult.parquet"
    frame.to_parquet(path, row_group_size=4_000)
    quasi = ["sex", "race", "marital-status", "education", "native-country", "workclass"]
    _both(TableStream(str(path)), quasi, sensitive, k=3, l=2, t=0.4, population=3e7)


def test_duckdb_counts_a_hostile_table_as_veils_batches_do(tmp_path: Path) -> None:
    """Three files of one table: floats with NaN and nulls, integers and booleans with gaps,
    text that differs only by its Unicode form or case or spaces, empty text, dates with a time
    zone, a category, and a column whose name is SQL."""
    rng = np.random.default_rng(11)
    hostile = 'x"; DROP TABLE t; --'
    n = 3_000
    frame = pd.DataFrame(
        {
            "score": rng.choice([0.5, -0.0, 0.0, np.nan, 2.0], n),
            "visits": pd.array(rng.choice([1, 2, None], n), dtype="Int64"),
            "member": pd.array(rng.choice([True, False, None], n), dtype="boolean"),
            "city": rng.choice(
                ["Mombasa", "Nairobi", "Nai\u0301robi", "nairobi", " ", "", None], n
            ),
            "seen": pd.Timestamp("2024-03-01", tz="Africa/Nairobi")
            + pd.to_timedelta(rng.integers(0, 3, n), "D"),
            "band": pd.Categorical(rng.choice(["low", "high"], n)),
            hostile: rng.choice(["a", "b'", None], n),
            "diagnosis": rng.choice(["flu", "Flu", "HIV", "hiv ", "malaria"], n),
        }
    )
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(n), 3)):
        piece = frame.iloc[part].copy()
        if i == 1:
            piece.loc[piece.index[:50], "score"] = None  # a Parquet null beside NaN
        piece.to_parquet(folder / f"part-{i}.parquet", row_group_size=500)
    quasi = ["score", "visits", "member", "city", "seen", "band", hostile]
    before = set(Path(tempfile.gettempdir()).glob("veil-duckdb-*"))
    _both(TableStream(str(folder)), quasi, "diagnosis", k=2, l=2, t=0.5)
    assert set(Path(tempfile.gettempdir()).glob("veil-duckdb-*")) == before  # spill removed


def test_a_check_of_parquet_counts_with_duckdb_unless_told_to_read_it(tmp_path: Path) -> None:
    """``veil.check`` of Parquet files (the engine left to veil) counts by DuckDB and measures
    what reading the table into memory does; ``engine="memory"`` reads it into memory."""
    import veil

    path = tmp_path / "adult.parquet"
    pd.read_csv(ADULT, sep=";").to_parquet(path)
    quasi = ["sex", "race", "education"]
    steps: list[str] = []
    auto = veil.check(str(path), quasi, sensitive="occupation", k=5, l=2, progress=steps.append)
    assert any("DuckDB" in s for s in steps)
    steps.clear()
    memory = veil.check(
        str(path), quasi, sensitive="occupation", k=5, l=2, engine="memory", progress=steps.append
    )
    assert not any("DuckDB" in s for s in steps)
    assert auto.to_dict() == memory.to_dict()


def test_files_duckdb_cannot_read_are_counted_by_veils_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where DuckDB refuses the files, veil's own batches count them: the same result."""
    import duckdb

    import veil.io._columnar as columnar

    path = tmp_path / "adult.parquet"
    pd.read_csv(ADULT, sep=";").to_parquet(path)
    source = TableStream(str(path))
    quasi = ["sex", "race", "education"]
    counted = check_stream(source, quasi, sensitive="occupation", k=5, l=2)

    def refused(*_: Any, **__: Any) -> pd.DataFrame:
        raise duckdb.IOException("cannot read")

    monkeypatch.setattr(columnar, "parquet_counts", refused)
    steps: list[str] = []
    fallen = check_stream(source, quasi, sensitive="occupation", k=5, l=2, progress=steps.append)
    assert steps[-1] == "counting the classes of sex, race, education"  # veil's batches
    assert fallen.to_dict() == counted.to_dict()

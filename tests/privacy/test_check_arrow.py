"""``veil.check`` of a CSV file counts the classes in Arrow, without pandas: it must measure
exactly what the DataFrame ``veil.read`` makes of the same file measures, on real tables it
was not written for (tests/data, provenance in tests/data/README.md) and on hostile cells
(numbers written two ways, signed zeros, the many spellings of missing, ISO dates written
three ways, dates that are no dates, leading zeros, spaces)."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import veil
from veil.privacy import check as check_frame

DATA = Path(__file__).resolve().parents[1] / "data"
TABLES = [
    "ke_claims.csv",
    "heart.csv",
    "ibm_hr_attrition.csv",
    "organs_vitals.csv",
    "surveys/CPS1985.csv.gz",
    "surveys/HealthInsurance.csv.gz",
    "surveys/Wage.csv.gz",
    "surveys/acs12.csv.gz",
    "surveys/DoctorVisits.csv.gz",
    "arx_fars/fars_int.csv.gz",
]


def _plain(name: str, folder: Path) -> Path:
    """The table as a plain CSV file (the .gz ones unpacked)."""
    source = DATA / name
    if source.suffix != ".gz":
        return source
    target = folder / source.stem
    target.write_bytes(gzip.decompress(source.read_bytes()))
    return target


def _same(by_arrow: Any, by_frame: Any) -> None:
    """The two results are one: every figure equal (averages up to the order of a sum)."""
    _equal(by_arrow.to_dict(), by_frame.to_dict(), "result")


def _equal(ours: Any, theirs: Any, where: str) -> None:
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), where
        assert ours.keys() == theirs.keys(), where
        for key, value in theirs.items():
            _equal(ours[key], value, f"{where}.{key}")
    elif isinstance(theirs, float) and not isinstance(ours, bool):
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15, nan_ok=True), where
    else:
        assert ours == theirs, where


@pytest.mark.parametrize("name", TABLES)
def test_real_tables_measure_as_their_dataframes(name: str, tmp_path: Path) -> None:
    path = _plain(name, tmp_path)
    frame = veil.read(path)
    columns = list(frame.columns)
    rng = np.random.default_rng(len(name))
    chosen = [columns[:3], columns[-2:]]
    chosen += [list(rng.choice(columns, size=min(4, len(columns)), replace=False))]
    for qis in chosen:
        _same(veil.check(path, qis, k=3), check_frame(frame, qis, k=3))
        others = [c for c in columns if c not in qis]
        sensitive = str(rng.choice(others))
        _same(
            veil.check(path, qis, sensitive=sensitive, l=2, t=0.3),
            check_frame(frame, qis, sensitive=sensitive, l=2, t=0.3),
        )
    # a sample of a population: its estimates too
    _same(
        veil.check(path, columns[:2], sampling_fraction=0.1),
        check_frame(frame, columns[:2], sampling_fraction=0.1),
    )


def test_a_small_file_of_many_values_is_counted_in_memory_of_its_size(tmp_path: Path) -> None:
    """Three columns of 300 values over 360 rows: a key space of 27M combinations, which a
    bincount over the whole space counted in 216 MB (the count ``veil.frequency`` makes of a
    DataFrame had the same fault). It measures as its DataFrame, in a few MB."""
    import tracemalloc

    rng = np.random.default_rng(3)
    frame = veil.read(_written(tmp_path, rng))
    tracemalloc.start()
    try:
        measured = veil.check(tmp_path / "many.csv", ["a", "b", "c"], k=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    _same(measured, check_frame(frame, ["a", "b", "c"], k=2))
    assert measured.k == 1
    assert peak < 8 * 2**20, peak


def _written(folder: Path, rng: np.random.Generator) -> Path:
    rows = [rng.permutation(300) for _ in "abc"]
    lines = ["a,b,c", *(f"{a},{b},{c}" for a, b, c in zip(*rows, strict=True))]
    lines += lines[1:61]  # 60 rows twice: classes of two
    path = folder / "many.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


_CELLS = st.sampled_from(
    [
        "1",
        "1.0",
        "1.5",
        "1.50",
        "-0.0",
        "0.0",
        "0",
        "",
        "NA",
        "nan",
        "NaN",
        "null",
        "N/A",
        "007",
        "+254",
        " 7",
        "7",
        "2020-01-01",
        "2020-01-01 00:00",
        "2020-01-01T00:00:00",
        "2020-01-01 00:00:00.000",
        "2021-02-30",
        "Nairobi",
        "nairobi",
        "Kisumu ",
        "Ünïcödé",
        "1e3",
        "1000",
        "inf",
    ]
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.data(),
    rows=st.integers(min_value=1, max_value=40),
    width=st.integers(min_value=1, max_value=4),
)
def test_hostile_cells_measure_as_their_dataframes(
    data: st.DataObject, rows: int, width: int, tmp_path: Path
) -> None:
    # each column draws from a few of the cells, so columns are of one kind or of several
    pools = [data.draw(st.lists(_CELLS, min_size=1, max_size=4, unique=True)) for _ in range(width)]
    lines = [",".join(f"c{j}" for j in range(width))]
    for _ in range(rows):
        lines.append(",".join(data.draw(st.sampled_from(pool)) for pool in pools))
    path = tmp_path / "hostile.csv"
    path.write_text("\n".join(lines) + "\n")
    qis = [f"c{j}" for j in range(width)]
    if not any(lines[1:]):  # blank rows only: the same refusal
        with pytest.raises(veil.InputError, match="no data rows"):
            veil.read(path)
        with pytest.raises(veil.InputError, match="no data rows"):
            veil.check(path, qis, k=2)
        return
    frame = veil.read(path)
    _same(veil.check(path, qis, k=2), check_frame(frame, qis, k=2))
    if width > 1:
        _same(
            veil.check(path, qis[:-1], sensitive=qis[-1], l=2),
            check_frame(frame, qis[:-1], sensitive=qis[-1], l=2),
        )


def test_errors_are_the_dataframes_errors(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("age,county\n34,Nairobi\n")
    with pytest.raises(veil.UnknownColumnError, match="'agee'"):
        veil.check(path, ["agee"])
    with pytest.raises(veil.ParameterError, match="risk_threshold"):
        veil.check(path, ["age"], risk_threshold=2)
    with pytest.raises(veil.ParameterError, match="sensitive column"):
        veil.check(path, ["age"], l=2)
    (tmp_path / "empty.csv").write_text("age,county\n")
    with pytest.raises(veil.InputError, match="no data rows"):
        veil.check(tmp_path / "empty.csv", ["age"])


def test_the_command_measures_a_csv_without_loading_pandas(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("age,county,when\n34,Nairobi,2020-01-01\n34,Nairobi,2020-01-01 00:00\n")
    program = (
        "import sys\n"
        "from veil.cli import main\n"
        f"code = main(['check', {str(path)!r}, '-q', 'age,county,when', '-k', '2'])\n"
        "print('pandas loaded' if 'pandas' in sys.modules else 'no pandas', code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    assert "k = 2" in done.stdout  # the two dates are one instant, as pandas reads them
    assert done.stdout.strip().endswith("no pandas 0"), done.stdout + done.stderr


def test_a_missing_sensitive_value_is_a_value_of_its_own() -> None:
    """Under pandas 3 a missing value's text stays missing; factorized, it was code -1, and
    counted as the last value found: a class of one known value and one missing had l = 1.
    Found by the hostile cells above."""
    import pandas as pd

    from veil.frequency import Frequencies, sensitive_codes

    codes, values = sensitive_codes(pd.Series(["flu", None, "Flu ", None, "HIV"], dtype="str"))
    assert codes.tolist() == [0, 1, 0, 1, 2]
    assert values == ["flu", "nan", "HIV"]
    frame = pd.DataFrame({"age": ["30"] * 3, "diagnosis": pd.Series(["HIV", None, "HIV"])})
    assert check_frame(frame, ["age"], sensitive="diagnosis").l_distinct == 2
    table = Frequencies.of(frame, ["age"], sensitive="diagnosis")
    hist, found = table.histograms()
    assert hist.min() >= 0
    assert sorted(hist.sum(axis=1).tolist()) == [3]
    assert len(found) == 2
    # and the stream of batches, which counts such a table (it stopped on the missing value)
    streamed = veil.check(frame, ["age"], sensitive="diagnosis", engine="dask")
    assert streamed.l_distinct == 2


def test_negative_zero_is_not_a_second_sensitive_value(tmp_path: Path) -> None:
    """-0.0 and 0.0 are one number: a class holding both is not 2-diverse, read either way
    (the DataFrame path once told them apart by their text)."""
    path = tmp_path / "zeros.csv"
    path.write_text("c0,c1\n1,-0.0\n1,0.0\n")
    by_arrow = veil.check(path, ["c0"], sensitive="c1", l=2)
    by_frame = check_frame(veil.read(path), ["c0"], sensitive="c1", l=2)
    assert by_arrow.l_distinct == by_frame.l_distinct == 1
    _same(by_arrow, by_frame)


def test_negative_zero_is_one_sensitive_value_in_batched_frequencies() -> None:
    """The frequency table a stream or a cluster builds batch by batch tells sensitive values
    apart as the DataFrame path does: -0.0 and 0.0 are one (they were two rows of it)."""
    import pandas as pd

    from veil.frequency import Frequencies

    batches = [pd.DataFrame({"c0": [1], "c1": [-0.0]}), pd.DataFrame({"c0": [1], "c1": [0.0]})]
    merged = Frequencies.of_batches(batches, ["c0"], "c1")
    assert len(merged.counts) == 1
    assert merged.counts["__veil_count__"].tolist() == [2]


def test_bytes_that_are_no_utf8_measure_or_fail_as_the_dataframe(tmp_path: Path) -> None:
    """A file whose first MB is ASCII and whose later rows are cp1252 (its head alone says
    UTF-8) is measured as the DataFrame reads it, and said to be UTF-8 it fails as the
    DataFrame fails."""
    rows = [b"county,age"] + [b"Nairobi,%d" % (i % 90) for i in range(150_000)]
    rows += [b"Murang\xe9a,34", b"Murang\xe9a,35", b"Nyeri,34"]
    path = tmp_path / "late_cp1252.csv"
    path.write_bytes(b"\n".join(rows) + b"\n")
    assert path.stat().st_size > 1 << 20  # its head alone decides nothing
    frame = veil.read(path)
    assert "Murangéa" in set(frame["county"])
    _same(veil.check(path, ["county", "age"], k=2), check_frame(frame, ["county", "age"], k=2))
    with pytest.raises(veil.InputError) as by_frame:
        veil.read(path, encoding="utf-8")
    with pytest.raises(veil.InputError) as by_check:
        veil.check(path, ["county", "age"], k=2, encoding="utf-8")
    assert str(by_check.value) == str(by_frame.value)

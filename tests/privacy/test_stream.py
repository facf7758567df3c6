"""Releases of tables read in batches (``veil anonymize --streaming``): the same release as the
table in memory, row for row, on data many times the batch size; the shuffle; what cannot run
a batch at a time refused in one line; the CSV typed over every row; and fail closed when a
column turns personal after the rows the roles were decided on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from veil.cli import main
from veil.exceptions import PolicyError
from veil.frequency import COUNT, Frequencies
from veil.hierarchy import load_hierarchies
from veil.io import _pieces as pieces
from veil.io import read, write
from veil.io._batches import TableStream
from veil.privacy import _passes as passes_module
from veil.privacy import anonymize, verify
from veil.privacy._stream import anonymize_stream

DATA = Path(__file__).parents[1] / "data"
ADULT = DATA / "arx_adult"


def _policy(**privacy: Any) -> dict[str, Any]:
    goals = {"models": [{"model": "k_anonymity", "k": 5}], "max_suppression": 0.04, **privacy}
    return {
        "privacy": goals,
        "keep_order": True,
        "columns": {"salary-class": {"role": "insensitive"}},
    }


def _same_certificate(memory: dict[str, Any], streamed: dict[str, Any]) -> None:
    for body in (memory, streamed):
        body.pop("created")
        if body.get("search"):
            body["search"].pop("seconds")
    assert streamed == memory


@pytest.mark.parametrize("batch_rows", [997, 5_000])
def test_a_streamed_release_is_the_in_memory_release_row_for_row(
    adult: Path, tmp_path: Path, batch_rows: int
) -> None:
    hierarchies = load_hierarchies(adult, "adult")
    memory = anonymize(read(adult / "adult.csv"), _policy(), hierarchies=hierarchies)
    out = tmp_path / "release.csv"
    streamed = anonymize_stream(
        TableStream(str(adult / "adult.csv")),
        _policy(),
        out,
        "csv",
        hierarchies=hierarchies,
        batch_rows=batch_rows,
    )
    assert streamed.rows == 30_162 > 6 * batch_rows
    pd.testing.assert_frame_equal(read(out), memory.data.reset_index(drop=True))
    _same_certificate(memory.certificate.to_dict(), streamed.certificate.to_dict())
    assert streamed.certificate.checks == {"suppressed by the search <= 4.0%": True, "k >= 5": True}


def test_parquet_files_stream_as_one_table_with_l_and_t(adult: Path, tmp_path: Path) -> None:
    """Three Parquet files (a glob) in batches of 4,000; distinct l and t on a sensitive column
    measured from the histograms the passes count."""
    table = read(adult / "adult.csv")
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(table)), 3)):
        table.iloc[part].to_parquet(folder / f"part-{i}.parquet", index=False)
    hierarchies = load_hierarchies(adult, "adult")
    hierarchies.pop("occupation")
    policy = _policy(
        models=[
            {"model": "k_anonymity", "k": 3},
            {"model": "distinct_l_diversity", "l": 2},
            {"model": "t_closeness", "t": 0.5},
        ],
        sensitive=["occupation"],
    )
    memory = anonymize(table, policy, hierarchies=hierarchies)
    out = tmp_path / "release.parquet"
    streamed = anonymize_stream(
        TableStream(str(folder / "*.parquet")),
        policy,
        out,
        "parquet",
        hierarchies=hierarchies,
        batch_rows=4_000,
    )
    pd.testing.assert_frame_equal(pd.read_parquet(out), memory.data.reset_index(drop=True))
    _same_certificate(memory.certificate.to_dict(), streamed.certificate.to_dict())
    assert set(streamed.certificate.checks) == {
        "suppressed by the search <= 4.0%",
        "k >= 3",
        "l >= 2 (distinct)",
        "t <= 0.5 (equal distance)",
    }
    assert all(streamed.certificate.checks.values())


def test_the_shuffle_reorders_every_row_and_the_release_verifies(
    adult: Path, tmp_path: Path
) -> None:
    hierarchies = load_hierarchies(adult, "adult")
    policy = {**_policy(), "keep_order": False, "random_state": 7}
    memory = anonymize(read(adult / "adult.csv"), policy, hierarchies=hierarchies)
    runs = []
    for name in ("a.csv", "b.csv"):
        streamed = anonymize_stream(
            TableStream(str(adult / "adult.csv")),
            policy,
            tmp_path / name,
            "csv",
            hierarchies=hierarchies,
            batch_rows=3_000,
        )
        runs.append(streamed.certificate)
    released = read(tmp_path / "a.csv")
    columns = list(released.columns)
    ordered = memory.data.sort_values(columns).reset_index(drop=True)
    pd.testing.assert_frame_equal(released.sort_values(columns).reset_index(drop=True), ordered)
    kept_order = anonymize(read(adult / "adult.csv"), _policy(), hierarchies=hierarchies).data
    moved = (released.to_numpy() != kept_order.reset_index(drop=True).to_numpy()).any(axis=1)
    assert moved.mean() > 0.9  # rows leave their input position: the order says nothing
    assert runs[0].release_sha256 == runs[1].release_sha256  # seeded: the same file again
    assert verify(released, runs[0].to_dict()).ok
    assert not list(tmp_path.glob(".*veil-shuffle*"))  # the buckets are gone


@pytest.mark.usefixtures("key_env")
def test_the_demo_policy_streams_with_every_step(tmp_path: Path) -> None:
    """Pseudonyms, redaction, the search's generalization with l-diversity and suppression,
    batches of 64 rows: the in-memory release exactly."""
    from veil.data import sample
    from veil.privacy.suggest import suggest_policy_yaml
    from veil.scan import scan

    source = tmp_path / "insurance.csv"
    write(sample(), source)
    data = read(source)
    text = suggest_policy_yaml(scan(data), data, source=source.name)
    policy_path = tmp_path / "policy.yaml"
    policy_path.write_text(text + "\nkeep_order: true\n", encoding="utf-8")
    assert "l: 2" in text
    assert "redact:" in text
    assert "pseudonymize:" in text
    memory = anonymize(data, str(policy_path))
    out = tmp_path / "release.csv"
    streamed = anonymize_stream(
        TableStream(str(source)), str(policy_path), out, "csv", batch_rows=64, escape_formulas=False
    )
    pd.testing.assert_frame_equal(read(out), memory.data.reset_index(drop=True))
    _same_certificate(memory.certificate.to_dict(), streamed.certificate.to_dict())
    redacted = [s for s in streamed.certificate.steps if s.name == "redact"]
    assert redacted
    assert sum((redacted[0].counts or {}).values()) > 100


@pytest.mark.parametrize(
    ("step", "named"),
    [
        ({"microaggregate": {"columns": ["age"], "k": 3}}, "groups rows of the whole table"),
        ({"noise": {"columns": ["age"], "scale": 1.0}}, "draws are made for the whole table"),
        ({"generalize": {"columns": ["age"], "bins": 5}}, "give the edges as a list"),
    ],
)
def test_a_step_that_needs_every_row_is_refused_in_one_line(
    adult: Path, tmp_path: Path, step: dict[str, Any], named: str
) -> None:
    policy = {**_policy(), "steps": [step]}
    with pytest.raises(PolicyError, match=named) as info:
        anonymize_stream(
            TableStream(str(adult / "adult.csv")),
            policy,
            tmp_path / "r.csv",
            "csv",
            hierarchies=load_hierarchies(adult, "adult"),
        )
    assert "--in-memory" in str(info.value)
    assert "\n" not in str(info.value)


def test_mondrian_and_people_are_refused_with_the_alternative(adult: Path, tmp_path: Path) -> None:
    hierarchies = load_hierarchies(adult, "adult")
    for extra, named in (
        ({"method": "mondrian"}, "method optimal or heuristic"),
        ({"person_id": "age"}, "person_id"),
    ):
        with pytest.raises(PolicyError, match=named):
            anonymize_stream(
                TableStream(str(adult / "adult.csv")),
                _policy(**extra),
                tmp_path / "r.csv",
                "csv",
                hierarchies=hierarchies,
            )


def texts_of_every_kind(rows: int) -> pd.DataFrame:
    """``rows`` rows of texts that read as whole numbers, decimals, dates and times, and
    words; a column empty throughout."""
    return pd.DataFrame(
        {
            "count": [str(i) for i in range(rows)],
            "code": [f"{i + 100}" for i in range(rows)],
            "price": [f"{i}.50" for i in range(rows)],
            "cost": [f"{i}.25" for i in range(rows)],
            "day": [f"2024-01-{i % 28 + 1:02d}" for i in range(rows)],
            "seen": [f"2024-01-{i % 28 + 1:02d}" for i in range(rows)],
            "at": [f"2024-01-{i % 28 + 1:02d} 10:{i % 60:02d}" for i in range(rows)],
            "text": ["a"] * rows,
            "empty": [""] * rows,
        }
    )


@pytest.mark.parametrize(("rows", "batch"), [(50, 10), (6000, 1200)])
def test_csv_columns_are_typed_over_every_row(tmp_path: Path, rows: int, batch: int) -> None:
    """What only later rows show decides a column's type, as when the whole file is read: a
    gap makes whole numbers float, a leading zero keeps a code text, decimals keep their form,
    one text among dates keeps them text, one date of another form drops theirs. With batches
    of 1,200 rows, the value that decides lies past the first rows of its batch (which a
    batch's column is tried on first)."""
    frame = texts_of_every_kind(rows)
    frame.loc[rows - 9, "count"] = ""  # a gap in the fifth batch only
    frame.loc[rows - 5, "code"] = "0712"  # a leading zero in the fifth batch only
    frame.loc[rows - 3, "cost"] = "2.5"  # the decimals' form broken in the fifth batch only
    frame.loc[rows - 2, "seen"] = "soon"  # a text among dates
    frame.loc[rows - 1, "at"] = "2024-01-02"  # a date of another form
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    whole = read(path)
    source = TableStream(str(path))
    batches = list(source.batches(batch))
    assert len(batches) == 5
    for each in batches:
        assert dict(each.dtypes) == dict(whole.dtypes)
    pd.testing.assert_frame_equal(pd.concat(batches, ignore_index=True), whole)
    assert source.formats == whole.attrs["veil.text_formats"]
    assert whole["count"].dtype == float
    assert not pd.api.types.is_numeric_dtype(whole["code"])
    assert pd.api.types.is_datetime64_any_dtype(whole["day"])
    assert not pd.api.types.is_datetime64_any_dtype(whole["seen"])
    assert "price" in source.formats
    assert "cost" not in source.formats


#: A value that types its column otherwise than the rows before it: (column, row, value).
#: Past the first batch of 1,200 rows (and past the first rows of its own batch), but for
#: ``early``: inside the first batch, after the first 100 rows.
LATE = {
    "none": None,
    "count": ("count", 5997, ""),  # a gap: whole numbers become floats
    "code": ("code", 5997, "0712"),  # a leading zero: the codes stay text
    "cost": ("cost", 5997, "2.5"),  # the decimals' form broken
    "seen": ("seen", 5997, "soon"),  # a text among dates
    "at": ("at", 5997, "2024-01-02"),  # a date of another form
    "empty": ("empty", 5997, "x"),  # a value in a column empty until then
    "float": ("count", 5997, "1e3"),  # a float among whole numbers
    "early": ("count", 500, ""),  # a gap the first batch holds
}


@pytest.mark.parametrize("change", list(LATE))
def test_types_presumed_on_the_first_batch_are_confirmed_or_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """A CSV file streamed is typed on its first batch, and the first reading of every row
    confirms the types as it goes: without a change, the file is read whole once (after its
    first batch and a sample of 100 rows), not twice. A value past the first
    batch (and past the first rows of its own) that types its column otherwise stops that
    reading; the file is typed over every row and the readings made again. A reading shorter
    than the first batch (the sample) is typed as presumed, whatever its own rows would say.
    Either way the batches are the table ``read`` reads, typed as it types it."""
    from veil.io import typed_as_read
    from veil.progress import Progress

    rows, batch = 6000, 1200
    frame = texts_of_every_kind(rows)
    late = LATE[change]
    if late is not None:
        frame.loc[late[1], late[0]] = late[2]
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    whole = read(path)
    readings: list[int] = []
    real = TableStream._csv_tables

    def counted(self: TableStream, batch_rows: int) -> Any:
        readings.append(batch_rows)
        return real(self, batch_rows)

    monkeypatch.setattr(TableStream, "_csv_tables", counted)
    steps: list[str] = []

    class Steps(Progress):
        def step(self, description: str) -> None:
            steps.append(description)

    source = TableStream(str(path))
    sampled: list[pd.DataFrame] = []

    def run() -> list[pd.DataFrame]:
        sampled.append(source.head(100))
        return list(source.batches(batch))

    got = typed_as_read(source, batch, Steps(), run)
    pd.testing.assert_frame_equal(sampled[-1], whole.head(100))
    assert len(got) == 5
    for each in got:
        assert dict(each.dtypes) == dict(whole.dtypes)
    pd.testing.assert_frame_equal(pd.concat(got, ignore_index=True), whole)
    assert source.formats == whole.attrs["veil.text_formats"]
    assert source.rows == rows
    again = [s for s in steps if "typing every row first" in s]
    if late is None or late[1] < batch:
        assert (again, len(readings)) == ([], 3)
    else:
        assert len(again) == 1
        assert repr(late[0]) in again[0]
        # the first batch, the sample, the reading stopped; every row, the sample, the reading
        assert len(readings) == 6


def test_a_late_type_change_gives_the_release_typing_first_gives(
    adult: Path, tmp_path: Path
) -> None:
    """adult with a count of visits, whole numbers but for a gap far past the first batch: the
    streamed release, whose first pass stops there and starts again once every row is typed,
    is the one made from the file typed first, byte for byte, certificate and all."""
    table = read(adult / "adult.csv")
    table["visits"] = [str(i % 7) for i in range(len(table))]
    table.loc[len(table) - 10, "visits"] = ""
    path = tmp_path / "adult.csv"
    write(table, path)
    for tree in adult.glob("adult_hierarchy_*.csv"):
        shutil.copy(tree, tmp_path / tree.name)
    hierarchies = load_hierarchies(tmp_path, "adult")
    policy = _policy()
    policy["columns"]["visits"] = {"role": "insensitive"}
    typed_first = TableStream(str(path)).prepare(batch_rows=997)
    bodies, steps = [], []
    for source, out in ((TableStream(str(path)), "a.csv"), (typed_first, "b.csv")):
        release = anonymize_stream(
            source,
            policy,
            tmp_path / out,
            "csv",
            hierarchies=hierarchies,
            batch_rows=997,
            progress=steps.append,
        )
        assert set(release.seconds) >= {"typing", "first pass", "second pass"}
        bodies.append(release.certificate.to_dict())
    assert read(path)["visits"].dtype == float
    assert sum("'visits' hold texts of another type" in step for step in steps) == 1
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    _same_certificate(*bodies)


def with_remark(adult: Path, tmp_path: Path, first: int, after: str | None = None) -> Path:
    """adult with a ``remark`` column, ``none`` up to row ``first`` and an e-mail address in
    each row after (or ``after`` in 20 rows, then ``see file``), written to ``tmp_path`` beside
    adult's hierarchies."""
    table = read(adult / "adult.csv")
    table["remark"] = "none"
    table.loc[first:, "remark"] = [f"user{i}@example.com" for i in range(len(table) - first)]
    if after is not None:
        table.loc[first:, "remark"] = "see file"
        table.loc[first : first + 19, "remark"] = after
    path = tmp_path / "adult.csv"
    write(table, path)
    for tree in adult.glob("adult_hierarchy_*.csv"):
        shutil.copy(tree, tmp_path / tree.name)
    return path


def with_addresses(adult: Path, tmp_path: Path, at: dict[int, str]) -> Path:
    """adult with a ``remark`` column of ``none`` but for the addresses ``at`` its rows."""
    path = with_remark(adult, tmp_path, len(read(adult / "adult.csv")))
    table = read(path)
    table.loc[list(at), "remark"] = list(at.values())
    path.unlink()
    write(table, path)
    return path


def released(
    path: Path, policy: str, how: str, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> tuple[int, Path]:
    """``veil anonymize`` of ``path`` under ``policy`` (YAML after ``version: 1``), the roles
    decided on its first 5,000 rows, streamed in batches of 5,000 or in memory (``how``): the
    exit code and the output's path."""
    folder = path.parent
    (folder / "policy.yaml").write_text(f"version: 1\n{policy}")
    monkeypatch.setattr(passes_module, "SAMPLE_ROWS", 5_000)
    out = folder / "out.csv"
    args = ["anonymize", str(path), "-p", str(folder / "policy.yaml"), "-o", str(out), *extra]
    return main([*args, how, "--batch-rows", "5000"]), out


def test_a_column_that_turns_personal_further_down_stops_the_release(
    adult: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The roles are decided on the first rows; each batch of the columns the scan let through
    is scanned again, and e-mail addresses from row 20,001 on stop the release: no file."""
    path = with_remark(adult, tmp_path, 20_000)
    monkeypatch.setattr(passes_module, "SAMPLE_ROWS", 5_000)
    code = main(
        [
            "anonymize",
            str(path),
            "-k",
            "5",
            "--max-suppression",
            "0.04",
            "--hierarchies",
            str(tmp_path),
            "-o",
            str(tmp_path / "out.csv"),
            "--streaming",
            "--batch-rows",
            "5000",
        ]
    )
    assert code != 0
    said = capsys.readouterr().err
    assert "column 'remark': rows 20,001 to 25,000 hold an e-mail address" in said, said
    assert not (tmp_path / "out.csv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


@pytest.mark.parametrize("kept", [False, True])
def test_a_column_the_policy_releases_as_it_is_is_confirmed_on_every_batch(
    adult: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    kept: bool,
) -> None:
    """A column the policy calls insensitive, e-mail addresses from row 10,001 on (69% of
    rows): in memory the scan of the whole column refuses it, and so does the stream, batch by
    batch, though its first rows hold none; unless the policy keeps it as it is, with a reason
    (the user's choice)."""
    path = with_remark(adult, tmp_path, 10_000)
    keep = ", keep: true, reason: the addresses are the insurer's own" if kept else ""
    (tmp_path / "policy.yaml").write_text(
        "version: 1\nunlisted: scan\n"
        f"columns:\n  remark: {{role: insensitive{keep}}}\n"
        "privacy: {k: 5, max_suppression: 0.04}\n"
    )
    monkeypatch.setattr(passes_module, "SAMPLE_ROWS", 5_000)
    args = ["anonymize", str(path), "-p", str(tmp_path / "policy.yaml")]
    args += ["--hierarchies", str(tmp_path), "-o", str(tmp_path / "out.csv")]
    code = main([*args, "--streaming", "--batch-rows", "5000"])
    said = capsys.readouterr().err
    if kept:
        assert code == 0, said
        assert read(tmp_path / "out.csv")["remark"].str.contains("@").any()
        return
    assert code != 0
    assert "column 'remark': rows 10,001 to 15,000 hold an e-mail address" in said, said
    assert "keep: true with a reason" in said
    assert not (tmp_path / "out.csv").exists()
    assert main([*args, "--in-memory"]) != 0  # the same verdict on the whole table
    assert "the policy says insensitive" in capsys.readouterr().err


@pytest.mark.parametrize("how", ["--in-memory", "--streaming"])
def test_one_address_the_scan_sample_misses_stops_the_release(
    adult: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    how: str,
) -> None:
    """One e-mail address in adult's 30,162 rows, in a column the policy calls insensitive:
    the scan's sample of 1,000 values does not hold it, and the release put it out. Every
    value a release puts out as it is is now searched, in memory and batch by batch: no file,
    and the row named."""
    path = with_addresses(adult, tmp_path, {12_345: "write to jane.doe@example.org"})
    policy = "unlisted: scan\ncolumns:\n  remark: {role: insensitive}\n"
    policy += "privacy: {k: 5, max_suppression: 0.04}\n"
    code, _ = released(path, policy, how, monkeypatch, "--hierarchies", str(tmp_path))
    said = capsys.readouterr().err
    assert code == 2, said
    assert "remark" in said, said
    assert "row 12,346 holds an e-mail address" in said, said
    if how == "--streaming":  # found in the batch of rows 10,001 to 15,000
        assert "which the first 5,000 rows did not show" in said, said
    assert "keep: true with a reason" in said
    assert not (tmp_path / "out.csv").exists()


def test_the_command_streams_by_size_or_when_asked(
    adult: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from veil.io import _source

    args = [
        "anonymize",
        str(adult / "adult.csv"),
        "-k",
        "5",
        "--max-suppression",
        "0.04",
        "--hierarchies",
        str(adult),
        "--format",
        "json",
    ]
    assert main([*args, "-o", str(tmp_path / "m.csv"), "--in-memory"]) == 0
    in_memory = json.loads(capsys.readouterr().out)
    monkeypatch.setattr(_source, "STREAMING_SHARE", 0.0)  # any file is large now
    assert (
        main([*args, "-o", str(tmp_path / "s.parquet"), "--certificate", str(tmp_path / "c.json")])
        == 0
    )
    streamed = json.loads(capsys.readouterr().out)
    assert streamed["rows_out"] == in_memory["rows_out"]
    assert streamed["search"]["levels"] == in_memory["search"]["levels"]
    assert (
        main(["verify", str(tmp_path / "s.parquet"), "--certificate", str(tmp_path / "c.json")])
        == 0
    )
    capsys.readouterr()
    for extra, said in (
        (["-o", str(tmp_path / "r.xlsx")], ".csv or .parquet"),
        (["-o", str(tmp_path / "r.csv"), "--report", str(tmp_path / "r.html")], "--report"),
    ):
        assert main([*args, *extra, "--streaming"]) == 2
        assert said in capsys.readouterr().err


@pytest.mark.parametrize("sensitive", ["salary-class", "age"])
def test_a_streamed_check_measures_what_the_table_in_memory_does(
    adult: Path, sensitive: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """k, l (distinct, entropy, recursive c), t (equal for text, ordered for numbers), risk and
    the population estimates, counted over batches of 2,500 rows."""
    quasi = "sex,race,marital-status,education,native-country,workclass"
    args = [
        "check",
        str(adult / "adult.csv"),
        "-q",
        quasi,
        "--sensitive",
        sensitive,
        "-k",
        "3",
        "--l",
        "2",
        "--t",
        "0.4",
        "--population",
        "3e7",
        "--format",
        "json",
    ]
    results = []
    for how in (["--in-memory"], ["--streaming", "--batch-rows", "2500"]):
        main([*args, *how])
        results.append(json.loads(capsys.readouterr().out))
    assert results[1] == results[0]
    assert results[0]["t_distance"] == ("ordered" if sensitive == "age" else "equal")
    assert results[0]["risk"]["sample_unique_records"] > 0  # the estimates were made


def test_a_streamed_check_refuses_what_it_cannot_count(
    adult: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["check", str(adult / "adult.csv"), "-q", "sex", "--person-id", "age", "--streaming"]
    )
    assert code == 2
    assert "--person-id is not supported on a table read in batches" in capsys.readouterr().err


def test_a_policy_withholding_every_record_stops_in_one_line_as_in_memory(
    tmp_path: Path,
) -> None:
    """Every combination rarer than ``rare`` over the whole table: the streamed release stops
    with the in-memory release's line (naming the step), not deep in the search."""
    rows = 400
    table = pd.DataFrame(
        {
            "age": np.arange(rows) % 97,
            "county": np.arange(rows) % 89,
            "diagnosis": ["flu", "hiv"] * (rows // 2),
        }
    )
    path = tmp_path / "t.csv"
    table.to_csv(path, index=False)
    policy = {
        "columns": {
            "age": {"role": "quasi_identifier"},
            "county": {"role": "quasi_identifier"},
            "diagnosis": {"role": "sensitive"},
        },
        "steps": [{"suppress_rows": {"rare": 5, "columns": ["age", "county"]}}],
        "privacy": {"k": 2},
    }
    with pytest.raises(PolicyError) as memory:
        anonymize(read(path), policy)
    with pytest.raises(PolicyError) as streamed:
        anonymize_stream(TableStream(path), policy, tmp_path / "out.csv", "csv", batch_rows=64)
    assert str(streamed.value) == str(memory.value)
    assert "steps[0] leaves none" in str(streamed.value)
    assert not (tmp_path / "out.csv").exists()


def test_the_certificate_says_what_batchwise_pseudonym_checks_leave_open(
    tmp_path: Path, key_env: str
) -> None:
    """Each batch's pseudonyms are checked for collisions exactly; across batches only the
    chance is known (n^2 / 2^(4 length + 1)): said when it matters (8 hex characters, 3,000
    rows: 1e-3), not for the default 16, and never in memory, where the check is exact."""
    rows = 3000
    table = pd.DataFrame(
        {"member_id": [f"M{i:06d}" for i in range(rows)], "plan": np.arange(rows) % 3}
    )
    path = tmp_path / "members.csv"
    table.to_csv(path, index=False)

    def policy(length: int) -> dict[str, Any]:
        return {
            "columns": {
                "member_id": {
                    "role": "identifier",
                    "steps": [{"pseudonymize": {"length": length}}],
                },
                "plan": {"role": "insensitive"},
            }
        }

    short = anonymize_stream(
        TableStream(path), policy(8), tmp_path / "a.csv", "csv", batch_rows=500
    ).certificate
    (note,) = [w for w in short.warnings if "member_id" in w]
    assert "1.0e-03" in note  # 3000^2 / 2^33
    assert "length: 11" in note
    default = anonymize_stream(
        TableStream(path), policy(16), tmp_path / "b.csv", "csv", batch_rows=500
    ).certificate
    assert not [w for w in default.warnings if "member_id" in w]
    memory = anonymize(read(path), policy(8)).certificate
    assert not [w for w in memory.warnings if "member_id" in w]


@pytest.mark.parametrize(
    "command", [["check", "-q", "age,county"], ["scan"], ["anonymize", "-k", "2", "-o", "out.csv"]]
)
def test_batch_rows_under_one_is_refused_in_one_line_by_every_command(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check --streaming --batch-rows 0`` once stopped with an internal error from Arrow."""
    path = tmp_path / "t.csv"
    pd.DataFrame({"age": [30, 40] * 5, "county": ["Kisumu", "Nyeri"] * 5}).to_csv(path, index=False)
    args = [command[0], str(path), *command[1:], "--streaming", "--batch-rows", "0"]
    assert main([a.replace("out.csv", str(tmp_path / "out.csv")) for a in args]) == 2
    assert capsys.readouterr().err.strip() == "veil: error: --batch-rows must be at least 1, got 0"
    assert not (tmp_path / "out.csv").exists()


def _spilled_batches(rng: np.random.Generator, objects: bool) -> list[pd.DataFrame]:
    """Batches of every kind of column a release holds: text of few values (a generalized
    quasi-identifier) and of many, numbers with gaps, booleans, dates, and columns Arrow cannot
    give back as they were (mixed objects, categories); one batch where the few-valued text
    has many values, and one that holds mixed objects (kept as DataFrames)."""
    batches = []
    for i, rows in enumerate([700, 1, 0, 650, 900]):
        few = rng.choice(np.array(["[30-39]", "[40-49]", "*", None], dtype=object), rows)
        batch = pd.DataFrame(
            {
                "age": pd.array(few if i != 3 else [f"v{j}" for j in range(rows)], dtype="str"),
                "note": pd.array([f"note {j} {i}" for j in range(rows)], dtype="str"),
                "grade": pd.array(rng.choice(np.array(["a", "b", None]), rows), dtype="str"),
                "salary": np.where(rng.random(rows) < 0.1, np.nan, rng.normal(size=rows)),
                "count": rng.integers(0, 5, rows),
                "flag": rng.random(rows) < 0.5,
                "day": pd.to_datetime("2024-01-01")
                + pd.to_timedelta(rng.integers(0, 9, rows), "D"),
            }
        )
        if i == 4 and objects:
            batch["count"] = batch["count"].astype(object).where(batch["count"] > 0, "none")
        batches.append(batch)
    return batches


@pytest.mark.parametrize("left_coded", [False, True])
@pytest.mark.parametrize("objects", [False, True])
def test_the_shuffle_gives_the_rows_the_pandas_shuffle_gives(
    tmp_path: Path, objects: bool, left_coded: bool
) -> None:
    """The shuffle's buckets on disk (Arrow pieces, text of few values coded, DataFrames where
    Arrow would change a column) give, bucket by bucket, the rows and dtypes of the plain
    DataFrame shuffle: each batch's rows sorted into buckets, each bucket's pieces joined in
    batch order and permuted. ``left_coded``: the generalized column comes as its codes (an
    Arrow dictionary of its labels, ``_Generalize.coded`` without texts), and its texts come
    back."""
    from veil.privacy._stream import _Spill

    buckets = 4
    batches = _spilled_batches(np.random.default_rng(1), objects)
    rng, oracle, bands = (np.random.default_rng(seed) for seed in (5, 5, 6))
    # a generalized quasi-identifier's texts with their codes (one label never used): the
    # spill takes the codes as they are
    labels = ["[20-29]", "[30-39]", "*", "[90-99]"]
    spill = _Spill(tmp_path, buckets, {"band": pa.array(labels)})
    expected: list[list[pd.DataFrame]] = [[] for _ in range(buckets)]
    coded, as_labels = set(), 0
    for batch in batches:
        band = bands.integers(0, 3, len(batch))
        batch["band"] = pd.array(np.array(labels, dtype=object)[band], dtype="str")
        chosen = rng.integers(0, buckets, len(batch))
        assert (oracle.integers(0, buckets, len(batch)) == chosen).all()
        sent = batch
        if left_coded:
            codes = pa.DictionaryArray.from_arrays(
                pa.array(band.astype(np.int32)), pa.array(labels, pa.large_string())
            )
            column = pd.Series(pd.arrays.ArrowExtensionArray(codes), index=batch.index)
            sent = batch.assign(band=column)
        spill.add((sent, np.argsort(chosen, kind="stable"), chosen, {"band": (band, 4)}))
        for b in range(buckets):
            expected[b].append(batch[chosen == b])
    spill.close()
    # a bucket's pieces of one schema share a file; a piece of another schema (a batch too
    # short to code the band, one where "age" has many values) or a pickled one starts the
    # next file, and the files are read back in turn
    files = [p.name for p in tmp_path.iterdir()]
    assert any(name.startswith("0.2.") for name in files), files
    assert any(name.endswith(".pickles") for name in files) is objects
    for b in range(buckets):
        bucket = spill.bucket(b)
        assert bucket is not None
        permutation = rng.permutation(bucket.rows)
        want = pd.concat(expected[b]).iloc[oracle.permutation(bucket.rows)]
        assert bucket.arrow is not objects  # Arrow unless a piece had to stay a DataFrame
        if bucket.table is not None and pa.types.is_dictionary(bucket.table["band"].type):
            # the labels as given, the unused one too: not coded again (a bucket holding the
            # batch of one row, too few rows to code, holds the band as text)
            assert bucket.table["band"].chunk(0).dictionary.to_pylist() == labels
            as_labels += 1
        got, codes, taken = bucket.permuted(permutation)
        pd.testing.assert_frame_equal(
            got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True
        )
        # the same rows as Arrow, coded, for a Parquet file to take (Arrow buckets only)
        assert (taken is None) == objects
        if taken is not None:
            assert set(codes) <= {
                n
                for n, t in zip(taken.column_names, taken.schema.types, strict=True)
                if pa.types.is_dictionary(t)
            }
            pd.testing.assert_frame_equal(pieces.plain(taken).to_pandas(), got, check_exact=True)
        # the coded columns' codes count as their texts do (equal texts, one code)
        coded |= set(codes)
        for name in codes:
            by_text = Frequencies.of(got, [name]).counts
            pd.testing.assert_frame_equal(Frequencies.of(got, [name], codes=codes).counts, by_text)
    assert not list(tmp_path.iterdir())  # each bucket's file removed once read
    assert coded == (set() if objects else {"grade", "band"})  # "age": many values in a batch
    # a one-row batch's band is too short to code, unless it came coded
    assert as_labels == (0 if objects else buckets if left_coded else buckets - 1)


@pytest.mark.parametrize("how", ["--in-memory", "--streaming"])
def test_a_quasi_identifier_the_policy_declares_is_searched_on_every_batch(
    adult: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    how: str,
) -> None:
    """A column the policy calls a quasi-identifier is the search's to generalize, but a class
    large enough keeps its values as they are: the same address in 20 rows from row 25,001
    went out. Every value of such a column is searched, in memory and in every batch: no
    file, and the rows named."""
    path = with_remark(adult, tmp_path, 25_000, "write to claims.desk@example.co.ke")
    policy = "unlisted: scan\ncolumns:\n  remark: {role: quasi_identifier}\n"
    policy += "  sex: {role: quasi_identifier}\nprivacy: {k: 5, max_suppression: 0.04}\n"
    code, _ = released(path, policy, how, monkeypatch, "--hierarchies", str(tmp_path))
    said = capsys.readouterr().err
    assert code != 0
    assert "column 'remark': row 25,001 holds an e-mail address" in said, said
    assert not (tmp_path / "out.csv").exists()


def test_a_text_a_parquet_dictionary_lists_but_no_row_holds_is_not_refused(
    adult: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A declared quasi-identifier's values are searched, batch by batch, as the column's codes
    name them: a Parquet file's dictionary may list a text no row holds (a release veil wrote
    from its buckets' codes keeps a level's every label), and such a text is not released, so
    it does not stop the release."""
    import pyarrow.parquet as pq

    path = with_remark(adult, tmp_path, 40_000, "x")  # one text in every row: "none"
    table = pa.Table.from_pandas(read(path), preserve_index=False)
    plain = table.schema.remove_metadata()
    listed = pa.array(["none", "claims.desk@example.co.ke"], pa.large_string())
    codes = pa.array(np.zeros(table.num_rows, np.int8))
    coded = pa.table({"remark": pa.DictionaryArray.from_arrays(codes, listed)})
    parquet = tmp_path / "adult.parquet"
    writer = pieces.CodedParquet(parquet, plain, coded)
    writer.write(table.cast(plain), coded)
    writer.close()
    assert pq.read_schema(parquet).field("remark").type == pa.large_string()  # read as text
    dictionary = pq.read_table(parquet, read_dictionary=["remark"]).column("remark").chunk(0)
    assert "claims.desk@example.co.ke" in dictionary.dictionary.to_pylist()  # listed, unheld
    policy = "unlisted: scan\ncolumns:\n  remark: {role: quasi_identifier}\n"
    policy += "  sex: {role: quasi_identifier}\nprivacy: {k: 5, max_suppression: 0.04}\n"
    code, out = released(
        parquet, policy, "--streaming", monkeypatch, "--hierarchies", str(tmp_path)
    )
    said = capsys.readouterr().err
    assert code == 0, said
    assert set(read(out)["remark"]) <= {"none", "*"}


@pytest.mark.parametrize("how", ["--in-memory", "--streaming"])
def test_identifiers_a_scanned_column_held_are_redacted_in_every_batch(
    adult: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    how: str,
) -> None:
    """A policy that leaves ``remark`` (``none``) to the scan: it reads as a quasi-identifier
    or sensitive, and the address in its first rows gets it a redact step. The stream then
    refused the batch holding a second address, though the step redacts it: a column the scan
    gave a step is not judged again. Neither address goes out, in memory or streamed (as
    ``<EMAIL>``, or in a class the search suppressed)."""
    at = {1_234: "jane.wanjiku@example.co.ke", 25_000: "otieno.k@example.co.ke"}
    path = with_addresses(adult, tmp_path, at)
    policy = "unlisted: scan\ncolumns:\n  salary-class: {role: insensitive}\n"
    code, out = released(
        path, policy + "privacy: {k: 5, max_suppression: 0.05}\n", how, monkeypatch
    )
    said = capsys.readouterr()
    assert code == 0, said.err
    remarks = read(out)["remark"]
    assert not remarks.str.contains("@").any()
    assert set(remarks) <= {"none", "<EMAIL>", "*"}
    assert "none" in set(remarks)


def test_a_batch_escaped_for_a_csv_is_counted_from_what_is_written(tmp_path: Path) -> None:
    """The shuffled release is counted from its buckets' codes only where the file gets the
    texts the codes stand for: a CSV writes ``'=A1`` for ``=A1`` (and ``''=A1`` for ``'=A1``),
    and its classes are counted as written, under those texts (a sensitive value's hierarchy,
    a class's values in the certificate); Parquet writes the texts as they are."""
    from veil.io import BatchWriter
    from veil.io import _pieces as pieces
    from veil.privacy._stream import _Writer

    batch = pd.DataFrame({"unit": pd.array(["=A1", "'=A1", "ward", "ward"] * 3, dtype="str")})
    codes = pieces.codes_of(pieces.coded(pa.Table.from_pandas(batch, preserve_index=False)))
    assert codes["unit"][1] == 4  # three texts (and a code for a missing one)
    for fmt, classes in (
        ("csv", {"'=A1": 3, "''=A1": 3, "ward": 6}),
        ("parquet", {"=A1": 3, "'=A1": 3, "ward": 6}),
    ):
        writer = _Writer(BatchWriter(tmp_path / f"r.{fmt}", fmt), ["unit"])
        writer.counted(batch, codes)
        total = writer.counts.total()
        assert total is not None
        assert dict(zip(total.counts["unit"], total.counts[COUNT], strict=True)) == classes
        writer.writer.close(["unit"])


def test_a_release_counted_by_its_labels_codes_is_the_table_its_texts_give(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The third pass counts a shuffled release by its generalized columns' codes of their
    level's labels (``_LabelCounts``), merged by key: the table must be the one ``FrequencySum``
    makes of each batch's ``Frequencies.of`` its texts, row for row (values, order, dtypes),
    over batches that merge several times, with missing values, from the codes a bucket holds
    (and its rows as Arrow) and from those a batch generalized in order holds."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from veil import frequency
    from veil.io._pieces import TEXT
    from veil.privacy import _stream

    monkeypatch.setattr(_stream, "SUM_ROWS", 7)  # merged every few batches
    labels = {
        "age": pa.array(["[20-30)", "[30-40)", "*"]),
        "county": pa.array(["Nairobi", "Kisumu", "Mombasa", "Nyeri"]),
        "sex": pa.array(["F", "M"]),
    }
    measured = ["county", "age", "sex"]

    @settings(max_examples=60, deadline=None)
    @given(
        st.lists(
            st.lists(
                st.tuples(*(st.integers(0, len(labels[n])) for n in measured)),
                min_size=1,
                max_size=12,
            ),
            min_size=1,
            max_size=6,
        ),
        st.booleans(),
    )
    def same(batches: list[list[tuple[int, ...]]], bucketed: bool) -> None:
        counts = _stream._LabelCounts(measured, labels)
        oracle = frequency.FrequencySum()
        for rows in batches:
            codes, texts, arrow = {}, {}, {}
            for j, name in enumerate(measured):
                code = np.array([r[j] for r in rows], dtype=np.int64)
                missing = code == len(labels[name])
                indices = pa.array(np.where(missing, 0, code).astype(np.int8), mask=missing)
                arrow[name] = pa.DictionaryArray.from_arrays(indices, labels[name])
                texts[name] = pd.Series(arrow[name].cast(pa.string()), dtype=TEXT)
                # a bucket's codes give a missing value the last code; a generalized batch's
                # columns hold none
                codes[name] = (code, len(labels[name]) + 1)
            coded = pa.table(arrow) if bucketed else None
            assert counts.takes(codes, coded)
            counts.add(codes)
            oracle.add(Frequencies.of(pd.DataFrame(texts), measured))
        got, want = counts.total(), oracle.total()
        assert got is not None
        assert want is not None
        pd.testing.assert_frame_equal(got.counts, want.counts)

    same()
    # a bucket whose column is coded by another dictionary is not taken
    other = pa.table(
        {
            n: pa.DictionaryArray.from_arrays(pa.array([0], pa.int8()), labels[n][::-1])
            for n in measured
        }
    )
    codes = {n: (np.zeros(1, np.int64), len(labels[n]) + 1) for n in measured}
    assert not _stream._LabelCounts(measured, labels).takes(codes, other)

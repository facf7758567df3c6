"""Every promise kept under bad input, faults and concurrency (issue 13): an input is never
changed, every failure is one line with the right exit code, hostile input costs bounded
work, nothing is left half-written, and progress is visible.

Faults are real where they can be: disk full through ``ulimit -f`` and a folder the user
cannot write (as an unprivileged user when the tests run as root) in subprocesses, races
between parallel processes, SIGTERM and kill -9 sent to a running ``veil``.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from tests.conftest import PROGRESS_LINE, TEST_KEY, error_lines, stopped_at
from veil import io
from veil.cli import main
from veil.exceptions import CleanupNotice, InputError, OutputError, ParameterError, PolicyError
from veil.policy import Policy

POLICY = """
version: 1
columns:
  Age: {role: quasi_identifier, steps: [{generalize: {bins: [0, 30, 45, 60, 120]}}]}
  County: {role: quasi_identifier}
  Score: {role: insensitive}
  Note: {role: insensitive}
privacy: {k: 2}
"""


def table(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "Age": rng.integers(18, 90, rows),
            "County": rng.choice(["Nairobi", "Kisumu", "Mombasa", "Nakuru"], rows),
            "Score": rng.normal(50, 10, rows).round(3),
            "Note": rng.choice(['=HYPERLINK("http://x.test","click")', "plain"], rows),
        }
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder anyone may read (subprocesses may run as nobody) with data and a policy."""
    folder = tmp_path / "work"
    folder.mkdir()
    # every folder from pytest's own per-user one down (one more under xdist: popen-gwN)
    top = next(p for p in folder.parents if p.name.startswith("pytest-of-"))
    for part in [folder, *folder.parents[: folder.parents.index(top) + 1]]:
        part.chmod(part.stat().st_mode | 0o755)
    table(3000).to_csv(folder / "data.csv", index=False)
    (folder / "policy.yaml").write_text(POLICY)
    return folder


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "VEIL_KEY": TEST_KEY, "PYTHONDONTWRITEBYTECODE": "1", **extra}


def veil(
    *args: object,
    shell_prefix: str = "",
    cwd: Path | None = None,
    timeout: float = 300,
    **kwargs: object,
) -> subprocess.CompletedProcess[str]:
    """``veil ARGS`` in a new process (through bash when a prefix such as ``ulimit`` is given)."""
    command = [sys.executable, "-m", "veil", *map(str, args)]
    if shell_prefix:
        quoted = " ".join(f"'{part}'" for part in command)
        command = ["bash", "-c", f"{shell_prefix} {quoted}"]
    return subprocess.run(
        command, capture_output=True, text=True, env=env(), cwd=cwd, timeout=timeout, **kwargs
    )  # type: ignore[call-overload]


#: Imports veil while root (the clone may sit in root's own home, which nobody cannot enter),
#: then becomes nobody and runs the command.
_AS_NOBODY = """
import importlib, os, pkgutil, sys
import veil.cli
veil.cli.GROUPS  # the command groups, which veil.cli imports on first use
# every module a release may load, imported while the clone can still be read (veil loads its
# engines on first use; nobody may not be able to reach a clone in a root-only folder)
for package in ("veil.io", "veil.privacy", "veil.rights", "veil.risk", "veil.scan",
                "veil.transforms", "veil.report"):
    module = importlib.import_module(package)
    for found in pkgutil.walk_packages(module.__path__, package + "."):
        importlib.import_module(found.name)
import veil.api, veil.policy, veil.frequency, veil.hierarchy
os.setgroups([])
os.setgid(65534)
os.setuid(65534)
sys.exit(veil.cli.main(sys.argv[1:]))
"""


def as_nobody(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``veil ARGS`` run by the user nobody, in a new process."""
    return subprocess.run(
        [sys.executable, "-c", _AS_NOBODY, *map(str, args)],
        capture_output=True,
        text=True,
        env=env(),
        cwd=cwd,
        timeout=300,
    )


def one_error(result: subprocess.CompletedProcess[str], code: int = 2) -> str:
    """The run failed with ``code`` and one error line (progress lines aside); that line."""
    lines = error_lines(result.stderr)
    assert result.returncode == code, result.stderr
    errors = [line for line in lines if line.startswith("veil: error: ")]
    assert len(errors) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "please report" not in result.stderr
    return errors[0]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# -- never change an input --------------------------------------------------------------------


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Path:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE y (Age INTEGER, County TEXT)")
        db.executemany("INSERT INTO y VALUES (?, ?)", [(30, "Nairobi"), (40, "Kisumu")] * 5)
    return path


def tables_in(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]


@pytest.mark.parametrize(
    "query",
    [
        "DROP TABLE y",
        "SELECT * FROM y; DROP TABLE y",
        "SELECT * INTO z FROM y",
        "DELETE FROM y",
        "INSERT INTO y VALUES (1, 'x')",
        "WITH gone AS (DELETE FROM y RETURNING *) SELECT * FROM gone",
        "ATTACH DATABASE 'other.db' AS o",
        "PRAGMA writable_schema = 1",
    ],
)
def test_a_sql_query_that_writes_is_refused_and_the_database_is_unchanged(
    sqlite_db: Path, query: str, capsys
) -> None:
    before = sqlite_db.read_bytes()
    code = main(["scan", f"sqlite:///{sqlite_db}", "--query", query])
    assert code == 2
    assert "single SELECT" in capsys.readouterr().err
    assert tables_in(sqlite_db) == ["y"]
    assert sqlite_db.read_bytes() == before


def test_sqlite_is_opened_read_only_even_past_the_select_check(sqlite_db: Path) -> None:
    engine = io._sql._read_only_engine(sa.engine.make_url(f"sqlite:///{sqlite_db}"))
    with engine.connect() as conn, pytest.raises(sa.exc.OperationalError, match="readonly"):
        conn.exec_driver_sql("DELETE FROM y")
    assert len(io.read(f"sqlite:///{sqlite_db}", query="SELECT * FROM y")) == 10
    missing = sqlite_db.parent / "missing.sqlite"
    with pytest.raises(InputError, match="no such SQLite database"):
        io.read(f"sqlite:///{missing}", table="y")
    assert not missing.exists()  # a read never creates a database either


def test_postgresql_is_read_in_a_read_only_session(postgres_url: str) -> None:
    engine = sa.create_engine(postgres_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE clients (age INTEGER, county TEXT)")
        conn.exec_driver_sql("INSERT INTO clients VALUES (30, 'Nairobi'), (41, 'Kisumu')")
    assert io.read(postgres_url, table="clients")["age"].tolist() == [30, 41]
    assert len(io.read(postgres_url, query="SELECT * FROM clients WHERE age > 35")) == 1
    with pytest.raises(ParameterError, match="single SELECT"):
        io.read(postgres_url, query="WITH d AS (DELETE FROM clients RETURNING *) SELECT * FROM d")
    # past the SELECT check, the session itself refuses to write (a function that writes)
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE FUNCTION wipe() RETURNS int LANGUAGE sql AS 'DELETE FROM clients RETURNING 1'"
        )
    with pytest.raises(InputError, match="read-only transaction"):
        io.read(postgres_url, query="SELECT wipe()")
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM clients").scalar() == 2


def test_the_demo_refuses_an_existing_folder_and_never_resets_a_spent_ledger(
    tmp_path: Path, demo_run, capsys
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "release.csv").write_text("my own release\n")
    assert main(["demo", "-o", str(mine)]) == 2
    assert "already holds release.csv" in capsys.readouterr().err
    assert (mine / "release.csv").read_text() == "my own release\n"

    (tmp_path / "afile").write_text("x")
    assert main(["demo", "--output", str(tmp_path / "afile")]) == 2
    assert "is a file" in capsys.readouterr().err

    # an earlier demo's ledger, spent: --force replaces the files but keeps every entry
    ledger = mine / "budget.db"
    ledger.write_bytes(demo_run.files["budget"].read_bytes())
    spent = sqlite3.connect(ledger).execute("SELECT id, what, epsilon FROM ledger").fetchall()
    assert len(spent) == 3
    assert main(["demo", "--out", str(mine), "--force"]) == 0
    printed = capsys.readouterr().out
    assert (
        sqlite3.connect(ledger).execute("SELECT id, what, epsilon FROM ledger").fetchall() == spent
    )
    assert "no DP answers this time" in printed
    assert "never reset" in printed
    assert (mine / "release.csv").read_text() != "my own release\n"


def test_two_runs_writing_the_same_output_cannot_both_succeed(work: Path) -> None:
    out = work / "r.csv"
    command = [
        sys.executable,
        "-m",
        "veil",
        "anonymize",
        work / "data.csv",
        "-p",
        work / "policy.yaml",
        "-o",
        out,
    ]
    runs = [
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env()
        )
        for _ in range(4)
    ]
    results = [(run.wait(timeout=300), run.stderr.read()) for run in runs]  # type: ignore[union-attr]
    assert sorted(code for code, _ in results) == [0, 2, 2, 2], results
    for code, stderr in results:
        if code == 2:
            assert "already exists" in stderr
    assert len(pd.read_csv(out)) > 0
    assert leftovers(work) == []


def test_two_budget_inits_cannot_both_succeed(work: Path) -> None:
    ledger = work / "budget.db"
    command = [
        sys.executable,
        "-m",
        "veil",
        "budget",
        "init",
        work / "data.csv",
        "--epsilon",
        "1",
        "--ledger",
        ledger,
    ]
    runs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
        for _ in range(6)
    ]
    codes = sorted(run.wait(timeout=120) for run in runs)
    assert codes == [0, 2, 2, 2, 2, 2]
    assert sqlite3.connect(ledger).execute("SELECT COUNT(*) FROM budget").fetchone() == (1,)


# -- one clear line, the right exit code ----------------------------------------------------


def test_a_folder_that_cannot_be_written_is_exit_2_with_where(work: Path) -> None:
    locked = work / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    args = ["anonymize", work / "data.csv", "-p", work / "policy.yaml", "-o", locked / "r.csv"]
    # root writes anywhere: the command runs as nobody
    result = as_nobody(*args, cwd=work) if os.geteuid() == 0 else veil(*args, cwd=work)
    line = one_error(result)
    assert str(locked) in line
    assert "not writable" in line
    assert list(locked.iterdir()) == []


@pytest.mark.parametrize("with_report", [False, True])
def test_a_full_disk_is_exit_2_and_leaves_no_file_of_the_run(work: Path, with_report) -> None:
    # the sizes of this run's files, measured: the file-size limit is set so that the release
    # does not fit (alone), or, with a report, the release and the certificate fit and the
    # report does not: no file of the run may remain either way
    sizes = work / "sizes"
    sizes.mkdir()
    (sizes / "data.csv").write_bytes((work / "data.csv").read_bytes())
    (sizes / "policy.yaml").write_text(POLICY)
    extra = ["--report", "report.html", "--certificate", "c.json", "--target", "County"]
    extra = extra if with_report else []
    measured = veil(
        "--quiet", "anonymize", "data.csv", "-p", "policy.yaml", "-o", "r.csv", *extra, cwd=sizes
    )
    assert measured.returncode == 0, measured.stderr
    kb = {p.name: p.stat().st_size / 1024 for p in sizes.iterdir()}
    if with_report:
        assert kb["report.html"] > max(kb["r.csv"], kb["c.json"]) + 8
        limit = int(max(kb["r.csv"], kb["c.json"])) + 1
    else:
        limit = int(kb["r.csv"] / 2)
    result = veil(
        "anonymize",
        "data.csv",
        "-p",
        "policy.yaml",
        "-o",
        "r.csv",
        *extra,
        shell_prefix=f"ulimit -f {limit};",
        cwd=work,
    )
    line = one_error(result)
    assert "File too large" in line
    assert "cannot write" in line
    assert sorted(p.name for p in work.iterdir()) == ["data.csv", "policy.yaml", "sizes"]


def test_a_ledger_locked_too_long_is_exit_2(work: Path, monkeypatch, capsys) -> None:
    from veil.dp import budget

    ledger = work / "b.db"
    assert (
        main(["budget", "init", str(work / "data.csv"), "--epsilon", "1", "--ledger", str(ledger)])
        == 0
    )
    monkeypatch.setattr(budget, "LOCK_TIMEOUT", 0.2)
    holder = sqlite3.connect(ledger, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        code = main(
            ["dp", str(work / "data.csv"), "count()", "--epsilon", "0.1", "--ledger", str(ledger)]
        )
    finally:
        holder.execute("ROLLBACK")
    assert code == 2
    assert f"ledger {ledger} is locked" in capsys.readouterr().err


def test_hostile_or_odd_inputs_are_read_or_refused_in_one_line(tmp_path: Path, capsys) -> None:
    # a cell of 200 KB (over Python's csv field limit) in a file with a ragged row
    big = tmp_path / "big.csv"
    big.write_text("a,b\n" + "1," + "x" * 200_000 + "\n2,y,extra\n")
    assert main(["scan", str(big)]) == 2
    assert "line 3 has 3 fields" in capsys.readouterr().err
    # a cell of 3 MB with line breaks, across Arrow's blocks: read
    huge = tmp_path / "huge.csv"
    pd.DataFrame({"a": range(100), "b": ["v"] * 99 + [("z" * 999 + "\n") * 3000]}).to_csv(
        huge, index=False
    )
    assert len(io.read(huge)["b"].iloc[-1]) == 3_000_000
    # Excel's "Unicode text": UTF-16 with a BOM
    text = tmp_path / "unicode.csv"
    text.write_bytes("name\tcounty\nWanjirũ\tNyeri\n".encode("utf-16"))
    assert io.read(text)["name"].tolist() == ["Wanjirũ"]
    # nested Parquet columns
    nested = tmp_path / "nested.parquet"
    pd.DataFrame({"a": [{"k": 1}, {"k": 2}], "b": [[1], [2]]}).to_parquet(nested)
    assert main(["scan", str(nested)]) == 2
    assert "nested column(s) a (struct" in capsys.readouterr().err
    with pytest.raises(InputError, match="holds nested values"):  # a JSON column, from SQL
        io.read(pd.DataFrame({"j": [{"x": 1}, None]}))
    # a repeated header in a workbook (pandas would call the second one "age.1")
    sheet = tmp_path / "dup.xlsx"
    pd.DataFrame([[1, 2]], columns=["age", "age"]).to_excel(sheet, index=False)
    with pytest.raises(InputError, match=r"row 1: duplicate column name\(s\) \['age'\]"):
        io.read(sheet)
    # corrupt Parquet: Arrow's message, on one line
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1" + os.urandom(4000))
    assert main(["scan", str(broken)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "not a readable Parquet file" in err


def test_dp_and_check_arguments_are_usage_errors(work: Path, capsys) -> None:
    data = str(work / "data.csv")
    ledger = str(work / "b.db")
    assert main(["budget", "init", data, "--epsilon", "1", "--ledger", ledger]) == 0
    for args in (
        ["quantile(Age, abc)", "--epsilon", "0.1", "--bounds", "Age=0:100"],
        ["mean(Age)", "--epsilon", "1e-300", "--bounds", "Age=0:100"],
    ):
        capsys.readouterr()
        assert main(["dp", data, *args, "--ledger", ledger]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert sqlite3.connect(ledger).execute("SELECT COUNT(*) FROM ledger").fetchone() == (0,)
    for args in (["--t", "-5", "--sensitive", "Note"], ["--l", "2"], ["--k", "0"]):
        assert main(["check", data, "-q", "Age", *args]) == 2
    assert main(["check", data, "-q", "Age", "--k", "100000"]) == 1  # a missed goal: still 1


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_a_sensitive_column_of_too_many_values_is_one_line_naming_it(
    tmp_path: Path, engine: str, capsys
) -> None:
    """12,000 people each their own class and their own diagnosis code: l-diversity's
    histograms would hold 144M cells (1.2 GB; 96 GB for 200,000 classes of 60,000 codes, which
    raised numpy's MemoryError and named nothing). One line names the column and the fix, in
    memory, streamed and through the library."""
    from veil import check
    from veil.exceptions import InputError

    frame = pd.DataFrame({"Member": np.arange(12_000), "Code": [f"D{i}" for i in range(12_000)]})
    frame.to_csv(tmp_path / "claims.csv", index=False)
    args = ["check", str(tmp_path / "claims.csv"), "-q", "Member", "--sensitive", "Code"]
    assert main([*args, "--l", "2", "--engine", engine]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [line for line in err if "Code" in line] == err[-1:]
    assert "sensitive column 'Code' has 12,000 distinct values over 12,000" in err[-1]
    assert "generalize" in err[-1]
    with pytest.raises(InputError, match="'Code' has 12,000 distinct values"):
        check(frame, quasi_identifiers=["Member"], sensitive="Code", t=0.2)


def test_brackets_and_colons_in_names_are_printed_as_they_are(tmp_path: Path, capsys) -> None:
    data = tmp_path / "[red]x.csv"
    frame = table(300)
    frame.columns = ["[/bold]", "County", ":bomb:", "Note"]
    frame.to_csv(data, index=False)
    assert main(["scan", str(data)]) == 0
    printed = capsys.readouterr().out
    assert "[/bold]" in printed
    assert ":bomb:" in printed
    out = tmp_path / "[bold]out.csv"
    code = main(["anonymize", str(data), "-k", "2", "--max-suppression", "0.5", "-o", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err  # before: exit 3 (MarkupError) after writing the files
    assert f"wrote {out}" in printed.out  # the name as given, not read as markup
    assert out.exists()


def test_errors_of_every_kind_are_one_line(tmp_path: Path, capsys, monkeypatch) -> None:
    import veil.io._read

    def fail(*_a: object, **_k: object) -> None:
        raise InputError("Arrow says:\n  line two\n  line three")

    monkeypatch.setattr(veil.io._read, "read", fail)
    assert main(["--quiet", "scan", str(tmp_path / "x.csv")]) == 2
    assert capsys.readouterr().err == "veil: error: Arrow says: line two line three\n"


def test_a_key_given_where_a_variable_name_belongs_is_never_echoed(
    tmp_path: Path, people: pd.DataFrame, capsys
) -> None:
    people.to_csv(tmp_path / "p.csv", index=False)
    for field in ("key_env", "key_file"):
        (tmp_path / "p.yaml").write_text(
            "version: 1\ncolumns:\n  name: {role: identifier, steps: [drop]}\n"
            f"  kra_pin: {{role: identifier, steps: [{{pseudonymize: {{{field}: {TEST_KEY}}}}}]}}\n"
        )
        code = main(
            [
                "anonymize",
                str(tmp_path / "p.csv"),
                "-p",
                str(tmp_path / "p.yaml"),
                "-o",
                str(tmp_path / "r.csv"),
            ]
        )
        captured = capsys.readouterr()
        assert code == 2
        assert TEST_KEY not in captured.err + captured.out
        assert "not shown" in captured.err


def test_a_billion_laughs_policy_is_refused_at_once(work: Path) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    bomb = work / "bomb.yaml"
    bomb.write_text("\n".join([*lines, "version: *i"]) + "\n")
    assert bomb.stat().st_size < 1024
    result = veil("anonymize", "data.csv", "-p", bomb, "-o", "r.csv", cwd=work, timeout=60)
    assert "aliases" in one_error(result)
    assert len(result.stderr) < 1000
    deep = "version: " + "[" * 50_000 + "]" * 50_000
    with pytest.raises(PolicyError, match="nested too deeply"):
        Policy.from_yaml(deep)


def test_a_long_value_is_cut_in_a_message() -> None:
    with pytest.raises(PolicyError) as caught:
        Policy.from_dict({"version": 1, "random_state": "x" * 100_000})
    assert len(str(caught.value)) < 600


# -- nothing half-written ---------------------------------------------------------------------


def test_an_output_set_appears_whole_or_not_at_all(tmp_path: Path) -> None:
    def report_fails() -> None:
        with io.OutputSet() as outputs:
            outputs.stage(tmp_path / "a.csv").write_text("a")
            outputs.stage(tmp_path / "b.json").write_text("b")
            raise RuntimeError("the report failed")

    with pytest.raises(RuntimeError):
        report_fails()
    assert list(tmp_path.iterdir()) == []

    outputs = io.OutputSet()
    outputs.stage(tmp_path / "a.csv").write_text("a")
    outputs.stage(tmp_path / "b.json").write_text("b")
    (tmp_path / "b.json").write_text("someone else's")  # made meanwhile by another process
    with pytest.raises(OutputError, match="already exists"):
        outputs.commit()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"]  # a.csv rolled back
    assert (tmp_path / "b.json").read_text() == "someone else's"


def stopped_before_placing(work: Path) -> tuple[subprocess.Popen[str], Path]:
    """``veil anonymize`` stopped at its ``outputs written`` point (the release written in full
    to its temporary file, not yet moved into place), and that file."""
    run = subprocess.Popen(
        [sys.executable, "-m", "veil", "anonymize", "data.csv", "-p", "policy.yaml", "-o", "r.csv"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=work,
        env=env(VEIL_PAUSE_AT="outputs written"),
    )
    assert stopped_at(run), run.stderr.read()  # type: ignore[union-attr]
    staged = [p for p in work.iterdir() if p.name.startswith(".r.csv.veil-")]
    assert len(staged) == 1
    assert staged[0].stat().st_size > 0
    return run, staged[0]


@pytest.fixture
def large(work: Path) -> Path:
    table(400_000, seed=1).to_csv(work / "large.csv", index=False)
    return work / "large.csv"


def test_sigterm_removes_the_partial_release(work: Path) -> None:
    run, _ = stopped_before_placing(work)
    run.send_signal(signal.SIGTERM)
    run.send_signal(signal.SIGCONT)  # a stopped process handles it once it runs again
    assert run.wait(timeout=60) == 128 + signal.SIGTERM
    assert "terminated" in run.stderr.read()  # type: ignore[union-attr]
    assert not (work / "r.csv").exists()
    assert leftovers(work) == []


def test_after_kill_9_the_next_run_removes_the_stale_temp_and_says_so(work: Path) -> None:
    run, stale = stopped_before_placing(work)
    run.kill()
    run.wait(timeout=60)
    assert stale.exists()
    assert not (work / "r.csv").exists()
    # a temp file of a run still going is not touched
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    running = work / f".r.csv.veil-{alive.pid}.beef.tmp"
    running.write_text("in progress")
    try:
        result = veil("anonymize", "data.csv", "-p", "policy.yaml", "-o", "r.csv", cwd=work)
        assert result.returncode == 0, result.stderr
        assert f"removed {stale.name}" in result.stderr
        assert "killed" in result.stderr
        assert not stale.exists()
        assert running.exists()
    finally:
        alive.kill()
        alive.wait()
    with pytest.warns(CleanupNotice):
        assert io.remove_stale_temps(work / "r.csv") == [running]


def test_xlsx_cells_are_values_never_formulas(tmp_path: Path) -> None:
    frame = table(50)
    frame["When"] = pd.date_range("2024-01-01", periods=50, freq="h", tz="Africa/Nairobi")
    # even unescaped, a text that reads as a formula is stored as text, not as a formula
    out = io.write(frame, tmp_path / "r.xlsx", escape_formulas=False)
    with zipfile.ZipFile(out) as book:
        sheet = book.read("xl/worksheets/sheet1.xml").decode()
        strings = book.read("xl/sharedStrings.xml").decode()
    assert "<f>" not in sheet
    assert "HYPERLINK" in strings
    back = io.read(out)
    assert back["Note"].str.startswith("=").any()
    assert back["When"].iloc[0] == "2024-01-01T00:00:00+03:00"  # the zone kept, as text
    # by default it is also escaped, so that a copy pasted or saved as CSV stays text
    escaped = io.read(io.write(frame, tmp_path / "e.xlsx"))
    assert not escaped["Note"].str.startswith("=").any()
    assert escaped["Note"].str.startswith("'=").any()


def test_too_many_rows_for_excel_are_refused_before_the_work(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    import veil.privacy

    data = tmp_path / "many.parquet"
    pd.DataFrame({"Age": np.arange(io.EXCEL_ROWS + 1) % 90}).to_parquet(data)

    def never(*_a: object, **_k: object) -> None:
        raise AssertionError("the run started")

    monkeypatch.setattr(veil.privacy, "anonymize", never)
    code = main(
        [
            "anonymize",
            str(data),
            "-k",
            "2",
            "--max-suppression",
            "0",
            "-o",
            str(tmp_path / "r.xlsx"),
        ]
    )
    assert code == 2
    assert "at most 1,048,575 rows" in capsys.readouterr().err


# -- progress people can see ----------------------------------------------------------------


def test_progress_is_one_line_per_step_in_a_log(work: Path) -> None:
    result = veil("anonymize", "data.csv", "-p", "policy.yaml", "-o", "r.csv", cwd=work)
    assert result.returncode == 0
    steps = result.stderr.strip().splitlines()
    assert len(steps) >= 3
    assert all(PROGRESS_LINE.match(line) for line in steps)
    assert any("3,000 rows" in line and "rows/s" in line for line in steps)
    assert "\x1b" not in result.stderr  # no control characters in a log
    quiet = veil("--quiet", "anonymize", "data.csv", "-p", "policy.yaml", "-o", "q.csv", cwd=work)
    assert quiet.returncode == 0
    assert quiet.stderr == ""


def test_progress_on_a_terminal_shows_rows_rate_and_eta(work: Path, large: Path) -> None:
    import pty

    leader, follower = pty.openpty()
    run = subprocess.Popen(
        [sys.executable, "-m", "veil", "anonymize", large, "-p", "policy.yaml", "-o", "r.csv"],
        stdout=subprocess.PIPE,
        stderr=follower,
        env=env(COLUMNS="200"),
        cwd=work,
    )
    os.close(follower)
    screen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    assert run.wait(timeout=300) == 0
    text = screen.decode(errors="replace")
    assert "rows" in text
    assert "ETA" in text
    assert "/s" in text
    assert "400,000" in text or "800,000" in text


def test_json_stays_clean_on_stdout(work: Path) -> None:
    result = veil(
        "anonymize", "data.csv", "-p", "policy.yaml", "-o", "r.csv", "--format", "json", cwd=work
    )
    assert json.loads(result.stdout)["rows_out"] > 0


def test_what_a_shell_passes_is_understood_and_devices_are_never_replaced(
    tmp_path: Path, capsys
) -> None:
    tabbed = tmp_path / "t.csv"
    tabbed.write_text("a\tb\n1\t2\n")
    assert io.read(tabbed, sep="\\t")["b"].tolist() == [2]  # --sep '\t' in bash
    assert io.read(tabbed, sep="tab")["b"].tolist() == [2]
    with pytest.raises(OutputError, match="not a regular file"):
        io.check_output("/dev/null", force=True)
    assert Path("/dev/null").is_char_device()
    assert main(["check", str(tabbed), "-q", " , ", "--sep", "tab"]) == 2
    assert "must name a column at least" in capsys.readouterr().err

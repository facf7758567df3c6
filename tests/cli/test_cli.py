"""The veil command: exit codes, one-line errors, no partial output, the demo."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import TEST_KEY
from veil.cli import main
from veil.demo import DEMO_DATA, demo_data

POLICY = """
version: 1
columns:
  name: {role: identifier, steps: [drop]}
  kra_pin: {role: identifier, steps: [{pseudonymize: {format: preserve}}]}
  age: {role: quasi_identifier, steps: [{generalize: {bins: [0, 40, 60, .inf]}}]}
  gender: {role: quasi_identifier}
  diagnosis: {role: sensitive}
"""


@pytest.fixture
def workspace(tmp_path: Path, people: pd.DataFrame, key_env: str) -> Path:
    people.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "policy.yaml").write_text(POLICY)
    return tmp_path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_anonymize_writes_release_and_prints_certificate(workspace: Path, capsys) -> None:
    out = workspace / "release.csv"
    code, stdout, _ = run(
        [
            "anonymize",
            workspace / "people.csv",
            "--policy",
            workspace / "policy.yaml",
            "-o",
            out,
            "--format",
            "json",
            "--certificate",
            workspace / "cert.json",
            "--report",
            workspace / "report.html",
        ],
        capsys,
    )
    assert code == 0
    cert = json.loads(stdout)
    release = pd.read_csv(out)
    assert cert["rows_out"] == len(release) == 60
    assert "name" not in release.columns
    assert "phone" not in release.columns  # not in the policy: the scan found phone numbers
    assert "county" in cert["quasi_identifiers"]  # not in the policy: the scan found places
    assert cert["k"] == release.groupby(cert["quasi_identifiers"], dropna=False).size().min()
    assert json.loads((workspace / "cert.json").read_text()) == cert
    assert "<html" in (workspace / "report.html").read_text()
    assert TEST_KEY not in stdout
    for path in (out, workspace / "cert.json", workspace / "report.html"):
        assert TEST_KEY not in path.read_text()


def test_text_output_speaks_plainly(workspace: Path, capsys) -> None:
    code, stdout, _ = run(
        [
            "anonymize",
            workspace / "people.csv",
            "-p",
            workspace / "policy.yaml",
            "-o",
            workspace / "r.parquet",
        ],
        capsys,
    )
    assert code == 0
    assert "wrote" in stdout
    assert "60 rows" in stdout
    assert pd.read_parquet(workspace / "r.parquet").shape[0] == 60


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (lambda w: None, ["nope.csv"], "nope.csv: no such file"),
        (lambda w: (w / "empty.csv").write_text(""), ["empty.csv"], "the file is empty"),
        (
            lambda w: (w / "ragged.csv").write_text("name,age\nA,3\nB,4,5\n"),
            ["ragged.csv"],
            "line 3 has 3 fields but the header has 2",
        ),
        (
            lambda w: (w / "bytes.csv").write_bytes("name,age\nRen\xe9e,3\n".encode("cp1252")),
            ["bytes.csv", "--encoding", "utf-8"],
            "line 2: byte 0xe9 is not valid utf-8",
        ),
        (
            lambda w: (w / "cols.csv").write_text("nam,age\nA,3\n"),
            ["cols.csv"],
            "column 'name' (policy columns) is not in the table",
        ),
        (lambda w: None, ["people.csv", "--dates", "when"], "column 'when' (dates)"),
        (
            lambda w: (w / "policy.yaml").write_text("columns: {age: {role: old}}"),
            ["people.csv"],
            "columns.age.role: Input should be",
        ),
        (lambda w: None, ["people.csv", "--format", "xml"], "--format must be text or json"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_output(
    workspace: Path, capsys, setup, args: list[str], message: str
) -> None:
    setup(workspace)
    out = workspace / "release.csv"
    data, *rest = args
    code, _stdout, stderr = run(
        ["anonymize", workspace / data, "--policy", workspace / "policy.yaml", "-o", out, *rest],
        capsys,
    )
    assert code == 2
    assert message in stderr
    assert stderr.startswith("veil: error: ")
    assert stderr.strip().count("\n") == 0  # one line (the console may wrap long ones: soft_wrap)
    assert "Traceback" not in stderr
    assert not out.exists()
    assert not [p for p in workspace.iterdir() if p.name.startswith(".release")]  # no temp file


def test_existing_output_needs_force_and_input_is_never_overwritten(
    workspace: Path, capsys
) -> None:
    out = workspace / "release.csv"
    out.write_text("precious")
    base = ["anonymize", workspace / "people.csv", "--policy", workspace / "policy.yaml"]
    code, _, stderr = run([*base, "-o", out], capsys)
    assert code == 2
    assert "--force" in stderr
    assert out.read_text() == "precious"
    assert run([*base, "-o", out, "--force"], capsys)[0] == 0
    assert out.read_text() != "precious"
    original = (workspace / "people.csv").read_bytes()
    code, _, stderr = run([*base, "-o", workspace / "people.csv", "--force"], capsys)
    assert code == 2
    assert "never overwrites its input" in stderr
    assert (workspace / "people.csv").read_bytes() == original


def test_failed_privacy_goal_exits_1_and_writes_nothing(workspace: Path, capsys) -> None:
    (workspace / "policy.yaml").write_text(POLICY + "privacy: {k: 1000}\n")  # > rows: impossible
    out = workspace / "release.csv"
    code, _, stderr = run(
        ["anonymize", workspace / "people.csv", "-p", workspace / "policy.yaml", "-o", out], capsys
    )
    assert code == 1
    assert "k = 1000 exceeds the number of records (60)" in stderr
    assert not out.exists()


def test_missing_key_is_exit_2_and_never_echoes(workspace: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("VEIL_KEY", "short-secret")
    code, stdout, stderr = run(
        [
            "anonymize",
            workspace / "people.csv",
            "-p",
            workspace / "policy.yaml",
            "-o",
            workspace / "r.csv",
        ],
        capsys,
    )
    assert code == 2
    assert "at least 16 characters" in stderr
    assert "short-secret" not in stdout + stderr


def test_usage_errors_exit_2(capsys) -> None:
    code, _, stderr = run(["anonymize", "x.csv"], capsys)
    assert code == 2
    assert "Missing option '--output'" in stderr


def test_debug_shows_the_traceback_and_keeps_the_exit_code(workspace: Path, capsys) -> None:
    args = [
        "anonymize",
        workspace / "nope.csv",
        "-p",
        workspace / "policy.yaml",
        "-o",
        workspace / "r.csv",
    ]
    code, _, stderr = run(["--debug", *args], capsys)
    assert code == 2  # an input error, not 1 ("privacy goal missed")
    assert "Traceback" in stderr
    assert stderr.strip().splitlines()[-1].startswith("veil: error: ")
    assert "no such file" in stderr
    code, _, stderr = run(
        ["--debug", "check", workspace / "people.csv", "-q", "age", "-k", "1000"], capsys
    )
    assert code == 1  # a missed goal stays 1


def test_real_process_exit_codes(workspace: Path) -> None:
    """Through the installed entry point: exit status and stderr as a shell sees them."""
    env = {**os.environ, "VEIL_KEY": TEST_KEY}
    ok = subprocess.run(
        [
            sys.executable,
            "-m",
            "veil",
            "anonymize",
            "people.csv",
            "-p",
            "policy.yaml",
            "-o",
            "out.csv",
        ],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "veil",
            "anonymize",
            "missing.csv",
            "-p",
            "policy.yaml",
            "-o",
            "out2.csv",
        ],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("veil: error: missing.csv: no such file")
    assert "Traceback" not in bad.stderr


def test_keygen_writes_a_private_key(tmp_path: Path, capsys) -> None:
    key = tmp_path / "k.key"
    code, stdout, _ = run(["keygen", "-o", key], capsys)
    assert code == 0
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert len(key.read_text().strip()) == 64
    assert key.read_text().strip() not in stdout
    assert run(["keygen", "-o", key], capsys)[0] == 2  # never clobbers a key silently


def test_transforms_lists_every_policy_name(capsys) -> None:
    from veil.transforms import TRANSFORMS

    code, stdout, _ = run(["transforms"], capsys)
    assert code == 0
    for name in TRANSFORMS:
        assert name in stdout


def test_each_command_is_built_from_the_group_that_registers_it(capsys) -> None:
    """``veil CMD`` builds CMD's group alone: the table naming each command's group is what
    the groups register, and the whole app lists every command in it."""
    import typer
    from typer.main import get_command_name

    import veil.cli as cli

    registered = {}
    for name, module in zip(cli.GROUP_NAMES, cli.GROUPS, strict=True):
        app = typer.Typer()
        module.register(app)
        for info in app.registered_commands:
            registered[info.name or get_command_name(info.callback.__name__)] = name
        for group in app.registered_groups:
            registered[group.name or group.typer_instance.info.name] = name
    assert registered == cli.COMMANDS
    assert main(["--help"]) == 0
    listing = capsys.readouterr().out
    assert all(f" {command} " in listing for command in cli.COMMANDS)
    assert main(["--debug", "keygen", "--help"]) == 0  # a root option before the command
    assert "Usage: veil keygen" in capsys.readouterr().out


def test_version(capsys) -> None:
    from veil import __version__

    assert run(["--version"], capsys) == (0, f"veil {__version__}\n", "")


# -- demo --------------------------------------------------------------------------------------
def test_demo_runs_the_flow(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("VEIL_KEY", raising=False)
    out = tmp_path / "demo"
    code, stdout, said = run(["demo", "--out", out], capsys)  # the previous spelling
    assert code == 0
    assert "veil: --out is deprecated; use --output" in said
    names = {p.name for p in out.iterdir()}
    assert {
        "scan.json",
        "release.csv",
        "policy.yaml",
        "certificate.json",
        "report.html",
        DEMO_DATA,
        "demo.key",
    } <= names
    # the scan comes first and finds the national IDs and KRA PINs
    found = {c["name"]: c for c in json.loads((out / "scan.json").read_text())["columns"]}
    assert found["ID_number"]["entity"] == "KE_NATIONAL_ID"
    assert found["Tax_id"]["entity"] == "KE_KRA_PIN"
    assert "KE_KRA_PIN" in stdout
    original = demo_data()
    release = pd.read_csv(out / "release.csv")
    # identifiers are pseudonymized in their own shape: none of the originals survive
    assert release["Tax_id"].str.fullmatch(r"[A-Z]\d{9}[A-Z]").all()
    assert not set(release["Tax_id"]) & set(original["Tax_id"])
    # a national ID's pseudonym is another 7- or 8-digit number: under the demo's fresh key
    # one of the 1,001 may by chance be some other member's ID (about one run in 80: 754^2
    # / 10^8 + 247^2 / 10^7), never most of them
    shared = set(release["ID_number"]) & set(original["ID_number"])
    assert len(shared) <= 3, sorted(shared)[:5]
    cert = json.loads((out / "certificate.json").read_text())
    qis = cert["quasi_identifiers"]
    assert cert["k"] >= 5
    assert {"model": "k_anonymity", "k": 5} in cert["privacy"]["models"]
    assert release.groupby(qis).size().min() == cert["k"]
    assert stat.S_IMODE((out / "demo.key").stat().st_mode) == 0o600
    key = (out / "demo.key").read_text().strip()
    for name in names - {"demo.key"}:
        assert key not in (out / name).read_text(errors="replace")
    assert key not in stdout
    # the policy written beside the outputs reproduces the released records (in another
    # order: without a random_state the rows are shuffled afresh)
    code, _, _ = run(
        ["anonymize", out / DEMO_DATA, "-p", out / "policy.yaml", "-o", out / "again.csv"], capsys
    )
    assert code == 0
    again = pd.read_csv(out / "again.csv")
    assert not again["id"].equals(release["id"])
    by_id = again.set_index("id").sort_index()
    pd.testing.assert_frame_equal(by_id, release.set_index("id").sort_index())


def test_scan_table_and_json(tmp_path: Path, capsys) -> None:
    data = tmp_path / "clients.csv"
    demo_data().to_csv(data, index=False)
    code, stdout, _ = run(["scan", data], capsys)
    assert code == 0
    assert "KE_KRA_PIN" in stdout
    assert "quasi-identifiers:" in stdout
    code, stdout, _ = run(["scan", data, "--format", "json"], capsys)
    assert code == 0
    result = json.loads(stdout)
    assert {c["name"]: c["role"] for c in result["columns"]}["Tax_id"] == "identifier"
    assert result["risk"]["quasi_identifiers"] == result["quasi_identifiers"]


def test_scan_suggests_a_policy_that_anonymize_accepts(tmp_path: Path, capsys, key_env) -> None:
    data = tmp_path / "clients.csv"
    demo_data().to_csv(data, index=False)
    policy = tmp_path / "policy.yaml"
    code, stdout, _ = run(["scan", data, "--suggest-policy", policy], capsys)
    assert code == 0
    assert f"veil anonymize {data} --policy {policy}" in stdout
    text = policy.read_text()
    assert "# KE_KRA_PIN" in text  # the evidence travels with the policy as comments
    code, _, stderr = run(["scan", data, "--suggest-policy", policy], capsys)
    assert code == 2
    assert "--force" in stderr
    code, _, _ = run(["anonymize", data, "-p", policy, "-o", tmp_path / "r.csv"], capsys)
    assert code == 0


def test_scan_bad_input_exit_2(tmp_path: Path, capsys) -> None:
    code, _, stderr = run(["scan", tmp_path / "nope.csv"], capsys)
    assert code == 2
    assert "no such file" in stderr
    code, _, stderr = run(["scan", tmp_path / "nope.csv", "--format", "xml"], capsys)
    assert code == 2


# -- report ------------------------------------------------------------------------------------
def test_report_from_files_matches_the_release(workspace: Path, capsys) -> None:
    release, cert = workspace / "release.csv", workspace / "cert.json"
    args = ["anonymize", workspace / "people.csv", "-p", workspace / "policy.yaml", "-k", "3"]
    assert run([*args, "-o", release, "--certificate", cert], capsys)[0] == 0
    ledger = workspace / "budget.db"
    assert (
        run(
            ["budget", "init", workspace / "people.csv", "--epsilon", "1", "--ledger", ledger],
            capsys,
        )[0]
        == 0
    )
    code, stdout, _ = run(
        [
            "report",
            release,
            "-c",
            cert,
            "--original",
            workspace / "people.csv",
            "--target",
            "diagnosis",
            "--budget",
            ledger,
            "-o",
            workspace / "report.json",
        ],
        capsys,
    )
    assert code == 0, stdout
    data = json.loads((workspace / "report.json").read_text())
    assert [s["id"] for s in data["sections"]] == [
        "scan",
        "policy",
        "privacy",
        "utility",
        "columns",
        "dp",
    ]
    assert data["headline"][0] in stdout
    sizes = next(f for s in data["sections"] for f in s["figures"] if f["id"] == "class-sizes")
    assert sum(sizes["data"]["release"]) == len(pd.read_csv(release))
    # read back from a file, released rows can't be linked to the original's: no 'changed'
    kept = next(f for s in data["sections"] for f in s["figures"] if f["id"] == "information-kept")
    assert set(kept["data"]["changed"]) == {None}
    code, _, said = run(["report", release, "-c", cert, "-o", workspace / "report.html"], capsys)
    assert "veil: -c is deprecated; use --certificate" in said  # the previous spelling
    assert code == 0
    html = (workspace / "report.html").read_text()
    assert '<h2 id="privacy">' in html
    assert '<h2 id="utility">' not in html  # no original: no utility section
    assert TEST_KEY not in html


def test_report_refuses_mismatched_inputs(workspace: Path, capsys) -> None:
    release, cert = workspace / "release.csv", workspace / "cert.json"
    args = ["anonymize", workspace / "people.csv", "-p", workspace / "policy.yaml"]
    assert run([*args, "-o", release, "--certificate", cert], capsys)[0] == 0
    out = workspace / "r.html"
    code, _, stderr = run(["report", workspace / "people.csv", "-c", cert, "-o", out], capsys)
    assert code == 2
    assert "give the certificate written with this release" in stderr
    code, _, stderr = run(["report", release, "-c", cert, "--target", "age", "-o", out], capsys)
    assert (code, "give --original too" in stderr) == (2, True)
    code, _, stderr = run(["report", release, "-c", release, "-o", out], capsys)
    assert (code, "is not JSON" in stderr) == (2, True)
    code, _, stderr = run(["report", release, "-c", cert, "-o", release, "--force"], capsys)
    assert (code, "is the input file" in stderr) == (2, True)
    assert not out.exists()
    assert sorted(p.name for p in workspace.iterdir() if p.name.startswith(".")) == []


def test_anonymize_report_with_a_target(workspace: Path, capsys) -> None:
    args = [
        "anonymize",
        workspace / "people.csv",
        "-p",
        workspace / "policy.yaml",
        "-o",
        workspace / "r.csv",
    ]
    code, _, stderr = run([*args, "--target", "diagnosis"], capsys)
    assert (code, "give --report too" in stderr) == (2, True)
    assert not (workspace / "r.csv").exists()
    code, _, _ = run([*args, "--report", workspace / "r.json", "--target", "diagnosis"], capsys)
    assert code == 0
    data = json.loads((workspace / "r.json").read_text())
    utility = next(s for s in data["sections"] if s["id"] == "utility")
    model = next(t for t in utility["tables"] if t["title"] == "Model predicting diagnosis")
    assert [row[0] for row in model["rows"]] == ["original", "release", "baseline"]


def test_help_describes_arguments(capsys) -> None:
    """typer 0.20 under click 8.5 printed arguments without their help; click is pinned."""
    code, stdout, _ = run(["report", "--help"], capsys)
    assert code == 0
    assert "The released table (as veil anonymize wrote it)." in stdout


def test_report_warns_of_a_ledger_made_for_other_data(workspace: Path, capsys) -> None:
    release, cert = workspace / "release.csv", workspace / "cert.json"
    args = ["anonymize", workspace / "people.csv", "-p", workspace / "policy.yaml"]
    assert run([*args, "-o", release, "--certificate", cert], capsys)[0] == 0
    ledger = workspace / "budget.db"  # a budget for the release, not for the original
    assert run(["budget", "init", release, "--epsilon", "1", "--ledger", ledger], capsys)[0] == 0
    out = workspace / "r.json"
    args = ["report", release, "-c", cert, "--original", workspace / "people.csv"]
    assert run([*args, "--budget", ledger, "-o", out], capsys)[0] == 0
    dp = next(s for s in json.loads(out.read_text())["sections"] if s["id"] == "dp")
    assert dp["text"][0].startswith("Careful: this ledger was made for dataset")


def test_date_options_reach_the_reader(tmp_path: Path, capsys) -> None:
    data = Path(__file__).resolve().parents[1] / "data" / "organs_vitals.csv"
    code, _, err = run(["scan", data, "--dates", "Date"], capsys)
    assert code != 0
    assert "--coerce-dates" in err
    code, stdout, err = run(["scan", data, "--dates", "Date", "--coerce-dates"], capsys)
    assert code == 0
    assert "3 values of 'Date' are no dates and were read as missing" in err
    assert "EVENT_DATE" in stdout
    ambiguous = tmp_path / "a.csv"
    ambiguous.write_text("d,n\n01/02/2021,1\n03/04/2021,2\n")
    code, _, err = run(["scan", ambiguous, "--dates", "d"], capsys)
    assert "--dayfirst or --monthfirst" in err
    code, _, _ = run(["scan", ambiguous, "--dates", "d", "--monthfirst"], capsys)
    assert code == 0


def test_the_previous_spellings_are_read_as_the_new_ones_and_said(capsys) -> None:
    from veil.cli._common import renamed

    assert renamed(["fl", "simulate", "d.csv", "--dp-epsilon", "1", "--dp-clip=2"]) == [
        "fl",
        "simulate",
        "d.csv",
        "--epsilon",
        "1",
        "--clip=2",
    ]
    said = capsys.readouterr().err
    assert "--dp-epsilon is deprecated; use --epsilon" in said
    assert "--dp-clip is deprecated; use --clip" in said
    # a word renamed in one command keeps its meaning in the others
    assert renamed(["anonymize", "d.csv", "--c", "2", "-o", "r.csv"]) == [
        "anonymize",
        "d.csv",
        "--c",
        "2",
        "-o",
        "r.csv",
    ]
    assert renamed(["report", "r.csv", "-c", "c.json"])[2] == "--certificate"


_HOSTILE_LINES = [
    "plain line",
    "tab\there and 漢字\tthere",  # a tab goes to rich, which sets it by cell width
    "cr\rhere",
    "bell\x07 bs\x08 vt\x0b ff\x0c",
    "esc \x1b[31mred\x1b[0m",
    "wide 漢字 é",
    "x" * 300,
    "trailing   ",
    "",
    "multi\nline",
    "[bold]markup[/bold] :smile:",
    "nul\x00 del\x7f \u200b",
]


@pytest.mark.parametrize("stderr", [False, True])
def test_a_plain_line_is_written_as_rich_writes_it(
    stderr: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """The consoles write plain text without importing rich (13 ms of every command's start):
    each line, hostile ones too, is what a rich console with the same options writes, and once
    rich's console is made (a table, a live bar) everything goes through it."""
    import io

    from rich.console import Console

    from veil.cli._common import LazyConsole

    for line in _HOSTILE_LINES:
        lazy = LazyConsole(stderr=stderr)
        lazy.print(line)
        captured = capsys.readouterr()
        got = captured.err if stderr else captured.out
        buffer = io.StringIO()
        Console(file=buffer, highlight=False, soft_wrap=True, markup=False, emoji=False).print(line)
        assert got == buffer.getvalue(), repr(line)
    lazy = LazyConsole()
    assert lazy.is_terminal is False  # captured: no terminal, and no console made to say so
    assert lazy._console is None
    lazy.print("a", "b", end="!\n")  # an option: rich's own print
    assert capsys.readouterr().out == "a b!\n"
    assert lazy._console is not None


@pytest.mark.parametrize(
    ("command", "unloaded"),
    [
        (["check", "{table}", "-q", "age,county", "-k", "2"], ["rich"]),
        (["anonymize", "{table}", "-k", "2", "-o", "{out}"], ["rich", "stdnum", "ssl"]),
    ],
)
def test_a_command_loads_only_what_it_uses(
    tmp_path: Path, key_env: str, command: list[str], unloaded: list[str]
) -> None:
    """``veil check`` prints lines only: rich is not imported; a release whose values hold no
    number to check imports neither python-stdnum nor the ssl it imports (in a process of its
    own; each took milliseconds of every command's start)."""
    table = tmp_path / "t.csv"
    table.write_text("age,county\n" + "34,Nyeri\n" * 5)
    argv = [a.format(table=table, out=tmp_path / "r.csv") for a in command]
    probe = (
        f"import sys, runpy; sys.argv = ['veil', *{argv!r}]\ntry:\n"
        "    runpy.run_module('veil', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {unloaded!r} if m in sys.modules], file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert "k = 5" in done.stdout, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_the_command_collects_garbage_after_its_first_second_only() -> None:
    """The command's process holds cyclic garbage collection while it starts (the imports'
    objects, walked again and again, were 48 ms of `veil anonymize`'s start); after
    ``veil.memory.GC_HELD_SECONDS`` what exists is frozen and collection runs again, so a long
    command still collects (in a process of its own, with a command that takes 0.3 s and a hold of
    0.1 s; and one done before its hold ends, which never collected)."""
    probe = (
        "import gc, sys, time, veil.cli as c, veil.memory as m\n"
        "m.GC_HELD_SECONDS = float(sys.argv[1])\n"
        "seen = []\n"
        "def main():\n"
        "    seen.append(gc.isenabled())\n"
        "    time.sleep(0.3)\n"
        "    seen.append(gc.isenabled())\n"
        "    return 0\n"
        "c.main = main\n"
        "code = c.run()\n"
        "print(code, seen, gc.get_freeze_count() > 0, gc.isenabled())"
    )
    for held, expected in (
        ("0.1", "0 [False, True] True True"),
        ("5", "0 [False, False] True True"),
    ):
        done = subprocess.run(
            [sys.executable, "-c", probe, held], capture_output=True, text=True, check=True
        )
        assert done.stdout.strip() == expected, (held, done.stdout, done.stderr)

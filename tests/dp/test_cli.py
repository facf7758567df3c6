"""veil budget and veil dp from the command line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.loaded import loaded_by
from veil.cli import main
from veil.demo import demo_data


def run(args: list, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_budget_and_dp_flow(tmp_path: Path, capsys) -> None:
    data = tmp_path / "clients.csv"
    demo_data().to_csv(data, index=False)
    code, out, _ = run(["budget", "init", data, "--epsilon", "1"], capsys)
    assert code == 0
    ledger = Path(os.environ["XDG_DATA_HOME"]) / "veil" / "budget.db"
    assert ledger.exists()  # with the user, not beside the (possibly shared) data
    assert not (tmp_path / ".veil").exists()
    assert str(ledger) in out  # said where it was created
    code, out, _ = run(
        ["dp", data, "mean(Age)", "--bounds", "Age=18:90", "--epsilon", "0.6", "--format", "json"],
        capsys,
    )
    assert code == 0
    result = json.loads(out)
    assert result["epsilon"] == 0.6
    assert 18 <= result["value"] <= 90
    assert result["error95"] > 0
    code, _, err = run(["dp", data, "count()", "--epsilon", "0.5"], capsys)
    assert code == 1  # 0.4 left: refused, exit 1
    assert "only epsilon 0.4" in err
    code, out, _ = run(["budget", "show", "--ledger", ledger, "--format", "json"], capsys)
    shown = json.loads(out)
    assert [e["what"] for e in shown["entries"]] == ["mean(Age)"]
    assert shown["remaining"]["epsilon"] == pytest.approx(0.4)
    assert run(["budget", "reset", "--ledger", ledger], capsys)[0] == 2  # needs --yes
    assert run(["budget", "reset", "--ledger", ledger, "--yes"], capsys)[0] == 0
    assert run(["budget", "init", data, "--epsilon", "5"], capsys)[0] == 2  # never replaced


def test_dp_bad_queries(tmp_path: Path, capsys) -> None:
    data = tmp_path / "clients.csv"
    demo_data().to_csv(data, index=False)
    run(["budget", "init", data, "--epsilon", "1"], capsys)
    code, _, err = run(["dp", data, "avg(Age)", "--epsilon", "0.1"], capsys)
    assert code == 2
    assert "query must be count()" in err
    code, _, err = run(
        ["dp", data, "mean(Age)", "--bounds", "Age=18-90", "--epsilon", "0.1"], capsys
    )
    assert code == 2
    assert "COLUMN=LOW:HIGH" in err


def test_dp_answers_are_a_table_grouped_statistics_have_the_cli(tmp_path: Path, capsys) -> None:
    data = tmp_path / "clients.csv"
    frame = demo_data()
    frame.to_csv(data, index=False)
    ledger = tmp_path / "b.db"
    assert run(["budget", "init", data, "--epsilon", "5", "--ledger", ledger], capsys)[0] == 0
    code, out, _ = run(
        [
            "--quiet",
            "dp",
            data,
            "mean(Age)",
            "--bounds",
            "Age=18:100",
            "--epsilon",
            "0.5",
            "--ledger",
            ledger,
        ],
        capsys,
    )
    assert code == 0
    assert "answer" in out
    assert "epsilon spent" in out
    assert "{" not in out  # no Python dict printed
    groups = sorted(frame["Illness_category"].unique())
    code, out, _ = run(
        [
            "--quiet",
            "dp",
            data,
            "mean(Age)",
            "--by",
            "Illness_category",
            "--categories",
            ",".join(groups),
            "--bounds",
            "Age=18:100",
            "--epsilon",
            "1",
            "--ledger",
            ledger,
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0
    answer = json.loads(out)
    assert sorted(answer["value"]) == groups
    assert answer["remaining_epsilon"] == pytest.approx(3.5)
    code, _, err = run(
        ["dp", data, "count()", "--by", "Illness_category", "--epsilon", "0.1", "--ledger", ledger],
        capsys,
    )
    assert code == 2
    assert "--categories" in err
    code, _, err = run(
        ["dp", data, "histogram(Illness_category)", "--epsilon", "0.1", "--ledger", ledger], capsys
    )
    assert code == 2
    assert "--categories A,B,C" in err


def test_help_reads_as_text_and_transforms_are_listed_whole(capsys) -> None:
    assert main(["anonymize", "--help"]) == 0
    text = capsys.readouterr().out
    assert "\\[required]" not in text
    assert "``" not in text
    import inspect

    from veil.cli.tools import _summary
    from veil.transforms import Generalize

    summary = _summary(inspect.getdoc(Generalize) or "")
    assert summary.startswith("Replace values by a coarser version. Exactly one mode: - bins:")
    assert main(["transforms"]) == 0


def test_the_budget_commands_load_neither_pandas_nor_opendp(tmp_path: Path) -> None:
    """``veil budget show`` and ``reset`` read the ledger alone: ``veil.dp``'s statistics
    (pandas, OpenDP) load when a statistic is asked for."""
    data = tmp_path / "t.csv"
    data.write_text("age\n30\n41\n")
    ledger = {"VEIL_LEDGER": str(tmp_path / "budget.db")}
    heavy = ["pandas", "opendp", "veil.dp.stats"]
    loaded_by(["budget", "init", data, "--epsilon", "1"], [], env=ledger)
    loaded, printed = loaded_by(["budget", "show"], heavy, env=ledger)
    assert "remaining 1" in printed
    assert loaded == []
    loaded, printed = loaded_by(["budget", "reset", "--yes"], heavy, env=ledger)
    assert "ledger emptied" in printed
    assert loaded == []

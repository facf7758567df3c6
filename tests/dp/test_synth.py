"""DP synthetic data (MST through OpenDP): shape, public domains respected, charged once."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from veil import dp
from veil.cli import main
from veil.demo import demo_data
from veil.dp.synth import synthesize
from veil.exceptions import BudgetExceededError, PrivacyLeakWarning


def test_mst_synthesis_respects_the_public_domain(tmp_path: Path) -> None:
    data = demo_data()[["Gender", "Tier", "Age"]]
    acc = dp.Accountant.create(tmp_path / "b.db", dp.Budget(2.0))
    keys = {"Gender": ["Female", "Male"], "Tier": ["Bronze", "Silver", "Gold"]}
    result = synthesize(data, epsilon=1.0, accountant=acc, keys=keys,
                        bounds={"Age": (18, 90)}, bins=6, rows=500)  # fmt: skip
    out = result.data
    assert list(out.columns) == ["Gender", "Tier", "Age"]
    assert len(out) == 500
    assert set(out["Gender"].dropna()) <= {"Female", "Male"}
    assert set(out["Tier"].dropna()) <= {"Bronze", "Silver", "Gold"}
    assert out["Age"].dropna().between(18, 90).all()
    assert [(e.epsilon, e.status) for e in acc.entries()] == [(1.0, "spent")]
    # the marginal of a common category survives roughly (epsilon 1 on 1,001 rows)
    share = (out["Tier"] == "Bronze").mean()
    assert abs(share - (data["Tier"] == "Bronze").mean()) < 0.15
    with pytest.raises(BudgetExceededError):
        synthesize(data, epsilon=1.5, accountant=acc, keys=keys, bounds={"Age": (18, 90)})
    assert len(acc.entries()) == 1


def test_inferred_domains_warn_and_cli_writes_the_file(tmp_path: Path, capsys) -> None:
    data = tmp_path / "clients.csv"
    demo_data()[["Gender", "Tier", "Illness_category"]].to_csv(data, index=False)
    assert main(["budget", "init", str(data), "--epsilon", "1"]) == 0
    out = tmp_path / "synthetic.csv"
    with pytest.warns(PrivacyLeakWarning):
        synthesize(pd.read_csv(data), epsilon=0.1,
                   accountant=dp.Accountant(tmp_path / ".veil" / "budget.db"))  # fmt: skip
    code = main(["synth", str(data), "--dp", "--epsilon", "0.5", "-o", str(out)])
    assert code == 0
    assert pd.read_csv(out).shape == (1001, 3)
    assert "veil: warning:" in capsys.readouterr().err  # leaks are said in one line
    assert main(["synth", str(data), "--dp", "--epsilon", "5", "-o", str(tmp_path / "x.csv")]) == 1
    assert not (tmp_path / "x.csv").exists()

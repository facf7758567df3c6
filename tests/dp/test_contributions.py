"""Contribution bounding: with a person column, each person keeps at most N rows, the noise is
calibrated to what one person (all N rows) can change, and the ledger records the bound."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.cli import main
from veil.dp import Accountant, Budget
from veil.dp import stats as dpstats
from veil.exceptions import ParameterError


def _claims() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    clients = np.repeat(np.arange(400), rng.integers(1, 12, 400))
    return pd.DataFrame(
        {
            "client": clients,
            "amount": rng.uniform(0, 1000, len(clients)),
            "tier": rng.choice(["Gold", "Silver"], len(clients)),
        }
    )


def test_a_person_keeps_at_most_n_rows_and_the_noise_covers_them() -> None:
    frame = _claims()
    rows, bound, unit = dpstats.contributions(frame, "client", 3)
    assert rows.groupby("client").size().max() == 3
    assert bound == 3
    assert "one person (client)" in unit
    assert set(rows["client"]) == set(frame["client"])  # nobody dropped, only extra rows
    per_client = frame.groupby("client").size()
    assert len(rows) == int(np.minimum(per_client, 3).sum())  # all of a client's first 3


def test_the_scale_grows_with_the_bound_and_the_ledger_says_so(tmp_path: Path) -> None:
    frame = _claims()
    ledger = Accountant.create(tmp_path / "ledger.db", Budget(10.0))
    one = dpstats.count(frame, epsilon=1.0, accountant=ledger)
    three = dpstats.count(
        frame, epsilon=1.0, accountant=ledger, person="client", max_contributions=3
    )
    assert three.scale == pytest.approx(3 * one.scale, rel=0.01)  # OpenDP's own calibration
    assert three.neighbours.startswith("one person (client)")
    total = dpstats.sum(
        frame,
        "amount",
        bounds=(0, 1000),
        epsilon=1.0,
        accountant=ledger,
        person="client",
        max_contributions=2,
    )
    alone = dpstats.sum(frame, "amount", bounds=(0, 1000), epsilon=1.0, accountant=ledger)
    assert total.scale == pytest.approx(2 * alone.scale, rel=0.01)
    hist = dpstats.histogram(
        frame,
        "tier",
        categories=["Gold", "Silver"],
        epsilon=1.0,
        accountant=ledger,
        person="client",
        max_contributions=4,
    )
    assert hist.scale == pytest.approx(4 * one.scale, rel=0.01)
    lines = [e.what for e in ledger.entries()]
    assert "count() per person (client, <= 3 rows)" in lines
    assert "histogram(tier) per person (client, <= 4 rows)" in lines
    with pytest.raises(ParameterError, match="--person-id 'nobody' is not a column"):
        dpstats.count(frame, epsilon=1.0, accountant=ledger, person="nobody")


def test_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "claims.csv"
    _claims().to_csv(data, index=False)
    ledger = tmp_path / "ledger.db"
    assert main(["budget", "init", str(data), "--epsilon", "3", "--ledger", str(ledger)]) == 0
    capsys.readouterr()
    assert (
        main(
            [
                "dp",
                str(data),
                "mean(amount)",
                "--bounds",
                "amount=0:1000",
                "--epsilon",
                "1",
                "--person-id",
                "client",
                "--max-contributions",
                "2",
                "--ledger",
                str(ledger),
                "--format",
                "json",
            ]
        )
        == 0
    )
    answer = json.loads(capsys.readouterr().out)
    assert answer["neighbours"].startswith("one person (client) added or removed")
    code = main(
        [
            "dp",
            str(data),
            "quantile(amount, 0.5)",
            "--bounds",
            "amount=0:1000",
            "--epsilon",
            "0.5",
            "--person-id",
            "client",
            "--ledger",
            str(ledger),
        ]
    )
    assert code == 2
    assert "--person-id bounds one person's rows" in capsys.readouterr().err

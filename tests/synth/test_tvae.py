"""TVAE: rows decoded from the prior keep what ties the columns together (which independent
marginals lose), come again with the same seed, give identifiers fresh values, and are judged
by the same evaluation as every release."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from veil.cli import main
from veil.evaluate import evaluate_release
from veil.synth import TVAE, Marginals

ADULT = Path(__file__).parents[1] / "data" / "arx_adult" / "adult.csv.gz"


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    frame = pd.read_csv(ADULT, sep=";").sample(4_000, random_state=1).reset_index(drop=True)
    frame.insert(0, "customer", [f"CUS-{100000 + i}" for i in range(len(frame))])
    return frame


def test_tvae_keeps_the_columns_together_and_is_judged_like_any_release(
    adult: pd.DataFrame,
) -> None:
    train, holdout = adult.iloc[:3_200], adult.iloc[3_200:]
    model = TVAE(dim=8, epochs=40, identifiers=["customer"]).fit(train, random_state=0)
    rows = model.sample(2_000, random_state=7)
    pd.testing.assert_frame_equal(rows, model.sample(2_000, random_state=7))
    assert list(rows.columns) == list(adult.columns)
    assert not set(rows["customer"]) & set(train["customer"])  # fresh, never a real key
    assert rows["customer"].str.fullmatch(r"CUS-\d{6}").all()
    assert set(rows["sex"]) <= set(adult["sex"])
    independent = (
        Marginals(identifiers=["customer"]).fit(train, random_state=0).sample(2_000, random_state=7)
    )
    judged = {
        name: evaluate_release(
            train.drop(columns="customer"),
            release.drop(columns="customer"),
            holdout=holdout.drop(columns="customer"),
            target="salary-class",
        )
        for name, release in (("tvae", rows), ("marginals", independent))
    }
    tvae, marginals = (judged[k].fidelity["association_difference"] for k in ("tvae", "marginals"))
    assert tvae < 0.6 * marginals  # marginals keep no association at all
    assert judged["tvae"].utility is not None
    assert judged["tvae"].utility["tstr"]["roc_auc"] > 0.7  # trained on synthetic, tested on real
    assert any("variational autoencoder" in line for line in model.describe())


def test_veil_synth_method_tvae(adult: pd.DataFrame, tmp_path: Path) -> None:
    source = tmp_path / "adult.csv"
    adult.drop(columns="customer").head(1_500).to_csv(source, index=False)
    out = tmp_path / "synthetic.csv"
    assert (
        main(
            [
                "synth",
                str(source),
                "--method",
                "tvae",
                "--rows",
                "300",
                "--seed",
                "2",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    made = pd.read_csv(out)
    assert made.shape == (300, 9)


def test_tvae_refuses_a_column_it_would_copy(adult: pd.DataFrame) -> None:
    from veil.exceptions import InputError

    notes = adult.head(300).assign(note=[f"visited on day {i}" for i in range(300)])
    with pytest.raises(InputError, match="'note' has 300 distinct values"):
        TVAE(epochs=1, identifiers=["customer"]).fit(notes)

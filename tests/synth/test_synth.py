"""veil.synth: marginals and a Gaussian copula behind fit/sample, identifiers made fresh."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from faker import Faker

from veil.cli import main
from veil.demo import demo_data
from veil.exceptions import InputError, ParameterError, PrivacyLeakWarning
from veil.scan import scan
from veil.synth import GaussianCopula, Marginals, make

DATA = Path(__file__).resolve().parents[1] / "data"


def gaussian(n: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rho = np.array([[1.0, 0.7, -0.4], [0.7, 1.0, 0.2], [-0.4, 0.2, 1.0]])
    z = np.random.default_rng(seed).multivariate_normal(np.zeros(3), rho, n)
    # monotone transforms change the marginals, never the rank correlations
    frame = pd.DataFrame({"a": 50 + 10 * z[:, 0], "b": np.exp(z[:, 1]), "c": z[:, 2] ** 3})
    return frame, rho


def test_copula_keeps_the_spearman_correlations_of_a_known_gaussian() -> None:
    n = 20_000
    frame, rho = gaussian(n)
    synthetic = GaussianCopula(identifiers=[]).fit(frame).sample(n, random_state=1)
    expected = 6 / np.pi * np.arcsin(rho / 2)  # Spearman's rho of a Gaussian (Pearson 1907)
    got = synthetic.corr(method="spearman").to_numpy()
    # the fitted and the sampled table each estimate rho_s with a standard error below 0.007
    # at 20,000 rows: 0.04 is four standard errors of their difference
    assert np.abs(got - expected).max() < 0.04
    independent = Marginals(identifiers=[]).fit(frame).sample(n, random_state=1)
    off_diagonal = independent.corr(method="spearman").to_numpy()[np.triu_indices(3, 1)]
    assert np.abs(off_diagonal).max() < 0.03  # marginals alone keep no dependence


def test_best_fit_for_ibm_hr_monthly_income_is_exponnorm() -> None:
    income = pd.read_csv(DATA / "ibm_hr_monthly_income.csv")
    for criterion in ("aic", "ks"):
        model = Marginals(identifiers=[], criterion=criterion).fit(income)
        column = model.models_["MonthlyIncome"]
        assert column.distribution == "exponnorm", column.fit_report[:2]
    synthetic = model.sample(5000, random_state=0)["MonthlyIncome"]
    assert synthetic.dtype == np.int64  # integers stay integers
    assert synthetic.min() >= income["MonthlyIncome"].min()  # inside the observed range
    assert synthetic.max() <= income["MonthlyIncome"].max()
    assert abs(synthetic.median() / income["MonthlyIncome"].median() - 1) < 0.1


def test_identifiers_are_new_well_formed_and_unique_never_real() -> None:
    fake = Faker("en_GB")
    fake.seed_instance(0)
    n = 300
    frame = pd.DataFrame(
        {
            "customer_id": [f"CUS-{i:07d}" for i in range(n)],
            "email": [fake.email() for _ in range(n)],
            "card": [fake.credit_card_number() for _ in range(n)],
            "iban": [fake.iban() for _ in range(n)],
            "age": np.random.default_rng(0).integers(18, 90, n),
        }
    )
    synthetic = GaussianCopula().fit(frame).sample(n, random_state=2)
    for column in ("customer_id", "email", "card", "iban"):
        assert synthetic[column].is_unique, column
        assert not set(synthetic[column]) & set(frame[column]), column
    assert synthetic["customer_id"].str.fullmatch(r"CUS-\d{7}").all()
    # the scan, which checks Luhn digits and IBAN checksums, reads them as what they were
    found = {c.name: c.entity for c in scan(synthetic).columns}
    assert found["card"] == "CREDIT_CARD"
    assert found["iban"] == "IBAN"
    assert found["email"] == "EMAIL"


def test_demo_table_keeps_types_missing_rates_and_leaves_free_text_out() -> None:
    frame = demo_data()
    frame.loc[frame.index[::10], "Age"] = np.nan  # 10% missing
    model = make("copula").fit(frame)
    synthetic = model.sample(2000, random_state=3)
    assert "Notes" not in synthetic.columns  # resampled notes would be real notes
    assert any("Notes: free text" in line for line in model.describe())
    assert pd.api.types.is_datetime64_any_dtype(synthetic["Date_of_entry"])
    assert (synthetic["Date_of_entry"].dt.second == 0).all()  # the real dates are to the minute
    real_dates = frame["Date_of_entry"]
    assert synthetic["Date_of_entry"].between(real_dates.min(), real_dates.max()).all()
    assert abs(synthetic["Age"].isna().mean() - 0.1) < 0.03
    assert set(synthetic["County"].dropna()) <= set(frame["County"])
    assert not set(synthetic["ID_number"]) & set(frame["ID_number"])
    assert synthetic["Tax_id"].str.fullmatch(r"[AP]\d{9}[A-Z]").all()  # a KRA PIN's form
    again = make("copula").fit(frame).sample(2000, random_state=3)
    pd.testing.assert_frame_equal(synthetic, again)  # same seed, same rows
    assert not synthetic.equals(model.sample(2000, random_state=4))


def test_bad_input_gets_one_clear_line() -> None:
    with pytest.raises(ParameterError, match="call fit"):
        Marginals().sample(10)
    with pytest.raises(ParameterError, match="method must be one of"):
        make("ctgan")
    words = pd.DataFrame({"code": [f"x{i}yz" for i in range(100)], "n": range(100)})
    with pytest.raises(InputError, match="would copy real values"):
        Marginals(identifiers=[]).fit(words)
    with pytest.raises(InputError, match="no values"):
        Marginals(identifiers=[]).fit(pd.DataFrame({"a": [np.nan] * 5, "b": range(5)}))


def test_cli_synth_methods(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "data.csv"
    demo_data().to_csv(source, index=False)
    out = tmp_path / "synthetic.csv"
    code = main(
        [
            "synth",
            str(source),
            "-o",
            str(out),
            "--method",
            "marginals",
            "--rows",
            "300",
            "--seed",
            "1",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert "300 synthetic rows" in printed
    assert "not differentially private" in printed
    assert len(pd.read_csv(out)) == 300
    code = main(
        [
            "synth",
            str(source),
            "-o",
            str(tmp_path / "x.csv"),
            "--epsilon",
            "1",
            "--method",
            "copula",
        ]
    )
    assert code != 0
    assert "--epsilon applies to --method mst or aim only" in capsys.readouterr().err
    code = main(["synth", str(source), "-o", str(tmp_path / "y.csv"), "--method", "mst"])
    assert code != 0
    assert "pass --epsilon" in capsys.readouterr().err
    code = main(["synth", str(source), "-o", str(tmp_path / "z.csv"), "--seed", "4"])
    printed = capsys.readouterr().out
    assert code == 0, printed  # no method: the copula, and it says so
    assert "method: copula, the default" in printed
    assert "chosen by the BIC of a Gaussian mixture" in printed
    assert len(pd.read_csv(tmp_path / "z.csv")) == len(demo_data())
    mixed = tmp_path / "mixed.csv"
    code = main(
        [
            "synth",
            str(source),
            "-o",
            str(mixed),
            "--method",
            "copula",
            "--condition-on",
            "Account_withdrawal",
            "--clusters",
            "3",
            "--seed",
            "2",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "one copula per group of Account_withdrawal x 3 k-means clusters" in printed
    assert len(pd.read_csv(mixed)) == len(demo_data())
    code = main(
        [
            "synth",
            str(source),
            "-o",
            str(tmp_path / "w.csv"),
            "--method",
            "marginals",
            "--clusters",
            "3",
        ]
    )
    assert code != 0
    assert "--clusters applies to --method copula, not marginals" in capsys.readouterr().err


def test_a_copula_per_value_of_the_condition_keeps_how_columns_depend_on_it() -> None:
    rng = np.random.default_rng(5)
    n = 3000
    group = rng.choice(["low", "high", "rare", "tiny"], n, p=[0.6, 0.36, 0.03, 0.01])
    x = np.where(group == "high", rng.normal(30, 3, n), rng.normal(10, 3, n))
    x = np.where(group == "rare", rng.normal(50, 3, n), x)
    frame = pd.DataFrame({"id": [f"K{i:06d}" for i in range(n)], "x": x, "group": group})
    model = GaussianCopula(condition_on="group").fit(frame)
    # 'rare' (~90 rows) has at least MIN_TARGET_GROUP: its own; 'tiny' (~30): the whole table's
    assert sorted(model.parts_) == [("high",), ("low",), ("rare",)]
    synthetic = model.sample(4000, random_state=1)
    means = synthetic.groupby("group")["x"].mean()
    assert means["high"] == pytest.approx(30, abs=1)
    assert means["low"] == pytest.approx(10, abs=1)
    assert means["rare"] == pytest.approx(50, abs=1.5)
    shares = synthetic["group"].value_counts(normalize=True)
    assert shares["rare"] == pytest.approx(0.03, abs=0.01)
    assert shares["tiny"] == pytest.approx(0.01, abs=0.005)
    assert synthetic["id"].is_unique
    assert not set(synthetic["id"]) & set(frame["id"])
    pooled = GaussianCopula(identifiers=["id"]).fit(frame).sample(4000, random_state=1)
    gap = pooled.groupby("group")["x"].mean()
    assert gap["high"] - gap["low"] < means["high"] - means["low"] - 5  # blurred without
    with pytest.raises(ParameterError, match="condition_on must name categorical columns"):
        GaussianCopula(condition_on="x").fit(frame)


def test_conditioning_on_two_columns_keeps_their_combinations() -> None:
    rng = np.random.default_rng(8)
    n = 4000
    sex = rng.choice(["F", "M"], n)
    label = np.where(
        sex == "F",
        rng.choice(["yes", "no"], n, p=[0.7, 0.3]),
        rng.choice(["yes", "no"], n, p=[0.2, 0.8]),
    )
    x = rng.normal(0, 1, n) + 5 * (label == "yes") + 2 * (sex == "M")
    frame = pd.DataFrame({"sex": sex, "label": label, "x": x})
    model = GaussianCopula(condition_on=["label", "sex"], identifiers=[]).fit(frame)
    assert len(model.parts_) == 4
    synthetic = model.sample(8000, random_state=2)
    real = frame.groupby(["label", "sex"])["x"].mean()
    made = synthetic.groupby(["label", "sex"])["x"].mean()
    assert (made - real).abs().max() < 0.15
    shares = pd.crosstab(synthetic["sex"], synthetic["label"], normalize="index")
    assert shares.loc["F", "yes"] == pytest.approx(0.7, abs=0.03)


def test_a_rare_combination_comes_from_the_copula_of_its_leading_value() -> None:
    rng = np.random.default_rng(3)
    n = 4000
    a = rng.choice(["x", "y"], n)
    b = np.where(rng.random(n) < 0.03, "rare", rng.choice(["p", "q"], n))
    value = np.where(a == "x", 10.0, 0.0) + rng.normal(0, 1, n)
    frame = pd.DataFrame({"a": a, "b": b, "value": value})
    model = GaussianCopula(condition_on=["a", "b"], identifiers=[]).fit(frame)
    assert ("x", "rare") not in model.parts_  # about 60 rows
    assert ("x",) in model.parts_
    assert ("y",) in model.parts_
    synthetic = model.sample(20_000, random_state=4)
    rare = synthetic[synthetic["b"] == "rare"].groupby("a")["value"].mean()
    # from a's copula, not from the whole table's (whose mean is 5)
    assert rare["x"] == pytest.approx(10, abs=0.5)
    assert rare["y"] == pytest.approx(0, abs=0.5)


def test_clusters_keep_dependence_that_differs_between_groups_of_rows() -> None:
    rng = np.random.default_rng(6)
    n = 4000
    side = rng.choice([-1.0, 1.0], n)
    x = 6 * side + rng.normal(0, 1, n)
    y = side * (x - 6 * side) + rng.normal(0, 0.3, n)  # +x on the right, -x on the left
    frame = pd.DataFrame({"x": x, "y": y})

    def within(table: pd.DataFrame) -> tuple[float, float]:
        right, left = table[table["x"] > 0], table[table["x"] < 0]
        return (
            float(right["x"].corr(right["y"], method="spearman")),
            float(left["x"].corr(left["y"], method="spearman")),
        )

    real_right, real_left = within(frame)
    assert real_right > 0.9
    assert real_left < -0.9
    one = within(GaussianCopula(identifiers=[]).fit(frame).sample(n, random_state=1))
    mixed = GaussianCopula(clusters=2, identifiers=[]).fit(frame)
    two = within(mixed.sample(n, random_state=1))
    assert max(abs(one[0]), abs(one[1])) < 0.5  # one correlation matrix averages them out
    assert two[0] == pytest.approx(real_right, abs=0.05)
    assert two[1] == pytest.approx(real_left, abs=0.05)
    assert "2 k-means clusters of rows" in mixed.describe()[-1]
    for wrong in (1, 2.5, "three", True):
        with pytest.raises(ParameterError, match="clusters must be a whole number of at least 2"):
            GaussianCopula(clusters=wrong)


def test_categories_are_ordered_so_the_copula_sees_their_dependence() -> None:
    rng = np.random.default_rng(9)
    n = 6000
    levels = [f"level {i}" for i in range(8)]
    # frequencies unrelated to the levels' order, income rising with the level
    index = rng.choice(8, n, p=[0.05, 0.2, 0.1, 0.15, 0.05, 0.25, 0.1, 0.1])
    frame = pd.DataFrame(
        {"level": np.array(levels)[index], "income": np.exp(rng.normal(index / 2, 0.5, n))}
    )
    model = GaussianCopula(identifiers=[]).fit(frame)
    order = list(model.models_["level"].categories)
    assert order in (levels, levels[::-1])
    synthetic = model.sample(n, random_state=2)
    real = frame.groupby("level")["income"].median()
    made = synthetic.groupby("level")["income"].median()
    # an oracle outside veil: scipy's Spearman over the eight levels' medians
    from scipy.stats import spearmanr

    assert spearmanr(real[levels], made[levels]).statistic > 0.95


@pytest.mark.parametrize("method", ["marginals", "copula", "mst"])
def test_a_rare_identifier_among_categories_is_never_drawn_into_synthetic_rows(
    method: str, tmp_path: Path
) -> None:
    """One e-mail address among a category column's 1,001 values: the scan's sample may miss
    it, and a model of the categories (resampled frequencies, a copula's margins, MST's domain
    read from the rows) could give it to a synthetic row. The scan searches every value of a
    column it finds harmless, so the column is an identifier (free text: left out, never
    resampled); where no scan runs (identifiers named by the caller, MST's by their names) the
    model refuses it in one line naming the row, before any budget is spent."""
    from veil import dp

    frame = demo_data()[["Gender", "Tier", "Age"]].copy()
    frame["remark"] = np.where(np.arange(len(frame)) % 2 == 0, "none", "see file")
    frame.loc[700, "remark"] = "jane.doe@example.org"
    options: dict[str, object] = {"identifiers": []}  # none named: no scan
    if method == "mst":
        accountant = dp.Accountant.create(tmp_path / "b.db", dp.Budget(2.0))
        options = {"epsilon": 1.0, "accountant": accountant, "bounds": {"Age": (18, 90)}}
    else:
        rows = make(method).fit(frame).sample(5_000, random_state=1)
        assert not rows.astype(str).apply(lambda c: c.str.contains("jane.doe")).any().any()
    with pytest.raises(InputError, match=r"column 'remark': row 701 holds an e-mail address"):
        make(method, **options).fit(frame)
    if method == "mst":
        assert accountant.entries() == []
    with warnings.catch_warnings():  # MST's domain read from the rows: warned, as it says
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        make(method, **options).fit(frame.drop(index=700))  # the same column without it

"""Latent releases: PCA with every component is a rotation an attacker inverts exactly (and
then re-identifies exactly the rows unique on their quasi-identifiers); codes of pure noise
leak nothing beyond the marginals; the autoencoder is deterministic, keeps utility, and its
DP-SGD epsilon is Opacus' and lands in veil's ledger; bad input is one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.cli import main
from veil.exceptions import BudgetExceededError, ParameterError
from veil.learn.latent import TableCodec, mask_latent
from veil.learn.latent._release import _Fitted, _measure
from veil.risk import latent_attacks as _attacks

HEART = Path(__file__).parents[1] / "data" / "heart.csv"
ADULT = Path(__file__).parents[1] / "data" / "arx_adult" / "adult.csv.gz"
CONTRACT = {"method", "dim", "utility", "attacks", "invertible", "epsilon"}


@pytest.fixture(scope="module")
def heart() -> pd.DataFrame:
    return pd.read_csv(HEART, encoding="utf-8-sig")


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    frame = pd.read_csv(ADULT, sep=";").replace("?", None)
    return frame.sample(3_000, random_state=0).reset_index(drop=True)


def test_pca_with_every_component_is_a_rotation_an_attacker_inverts(heart: pd.DataFrame) -> None:
    release = mask_latent(
        heart,
        dim="all",
        method="pca",
        target="target",
        quasi_identifiers=["age", "sex", "cp", "trestbps"],
    )
    attacks = release.attacks
    white = attacks["reconstruction"]["white_box"]
    assert white["age"] < 1e-6  # exact, up to rounding
    assert white["trestbps"] < 1e-6
    assert white["sex"] == 1.0
    assert white["cp"] == 1.0
    assert release.explained_variance == pytest.approx(1.0)
    # exact values link exactly the rows no other row shares: the uniqueness rate
    assert attacks["reidentification"]["white_box"] == pytest.approx(
        attacks["uniqueness"], abs=0.03
    )
    assert attacks["reidentification_baseline"] < 0.02
    assert release.invertible
    # a rotation keeps what a model needs: the same classifier scores alike
    assert abs(release.utility["raw"] - release.utility["latent"]) < 0.05
    assert release.data.shape[1] == release.dim + 1  # the codes and the target


class _Noise(_Fitted):
    """Codes drawn afresh for every row, whatever it holds; a decoder that knows nothing."""

    def __init__(self, codec: TableCodec, frame: pd.DataFrame, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.codec, self.frame = codec, frame

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        return self.rng.normal(size=(len(frame), 4))

    def decode(self, codes: np.ndarray) -> pd.DataFrame:
        picks = self.rng.integers(0, len(self.frame), len(codes))
        return self.frame.iloc[picks].reset_index(drop=True)


def test_codes_of_pure_noise_leak_nothing_beyond_the_marginals(adult: pd.DataFrame) -> None:
    qis = ["age", "sex", "race", "marital-status", "education"]
    train, holdout = adult.iloc[:2_400], adult.iloc[2_400:]
    codec = TableCodec.fit(train[qis])
    noise = _Noise(codec, train[qis], seed=3)
    codes = noise.encode(train)
    measured = _measure(train, qis, [], codec, codes, noise.encode(holdout), noise, 0.05, seed=0)
    assert measured["recovery"] < 0.1
    rates = measured["reidentification"]
    assert max(rates.values()) <= measured["reidentification_baseline"] + 0.01
    assert abs(measured["membership_advantage"]) < 0.15
    real = _attacks.reidentification(
        train[qis].reset_index(drop=True),
        train[qis].reset_index(drop=True),
        ["age"],
        np.arange(200),
    )
    assert real > 0.2  # the same linking on the true values does link: the test can fail


def test_the_autoencoder_is_deterministic_and_keeps_the_contract(adult: pd.DataFrame) -> None:
    runs = [
        mask_latent(adult, dim=3, target="salary-class", epochs=8, random_state=5) for _ in range(2)
    ]
    # the same codes, each run in a fresh order of its own (the order comes from the OS, never
    # from the seed): sorted, the two releases are one
    ordered = [r.data.sort_values(list(r.data.columns)).reset_index(drop=True) for r in runs]
    pd.testing.assert_frame_equal(ordered[0], ordered[1])
    assert not runs[0].data.equals(runs[1].data)
    body = runs[0].to_dict()
    assert set(body) >= CONTRACT
    assert set(body["utility"]) >= {"metric", "raw", "latent"}
    attacks = body["attacks"]
    assert set(attacks["reconstruction"]) >= {"white_box", "insider", "baseline"}
    for key in ("reidentification_rate", "reidentification_baseline", "membership_advantage"):
        assert isinstance(attacks[key], float)
    assert body["utility"]["metric"] == "roc_auc"
    assert body["utility"]["latent"] > 0.7  # codes of 3 numbers still predict the salary class
    assert list(runs[0].data.columns) == ["latent1", "latent2", "latent3", "salary-class"]
    white = attacks["reconstruction"]["white_box"]
    assert white["sex"] > attacks["reconstruction"]["baseline"]["sex"]  # the decoder recovers
    assert runs[0].embeddings["sex"][1].shape[1] == 8


def test_the_supervised_code_keeps_the_trees_utility(adult: pd.DataFrame) -> None:
    """The encoder reads gradient boosting's score of the target (He et al. 2014), so a code of
    2 numbers predicts about as well as the raw columns even where a small network alone cannot
    (bench_latent measures adult against the issue's 0.02); without a target the trees are
    absent, and under DP-SGD too (they would see the rows outside the accountant)."""
    from veil.learn.latent._release import _Autoencoder

    # the label flips 16 times along u (5% noise): trees find the steps, a small MLP does not
    # (without the trees' score the code's AUC was 0.73 here when this was written)
    rng = np.random.default_rng(3)
    u = rng.uniform(0, 1, 3_000)
    label = (np.floor(u * 16) % 2).astype(bool) ^ (rng.random(3_000) < 0.05)
    steps = pd.DataFrame(
        {
            "u": u,
            "v": rng.normal(size=3_000),
            "colour": rng.choice(list("abcd"), 3_000),
            "label": np.where(label, "yes", "no"),
        }
    )
    release = mask_latent(steps, dim=2, target="label", random_state=0)
    utility = release.utility
    assert utility["raw"] > 0.85  # the steps are learnable from the raw columns
    assert utility["latent"] > 0.85, utility  # 0.73 without the trees' score
    assert utility["raw"] - utility["latent"] <= 0.05, utility
    assert any("gradient boosting" in note for note in release.notes)
    frame = adult.drop(columns="salary-class")
    codec = TableCodec.fit(frame)
    fitted = _Autoencoder(codec, frame, 3, 0, 2, None, adult["salary-class"], None)
    assert fitted.booster is not None
    # the network learned from scores of trees that never saw the row: not the final fit's
    final = fitted.booster.scores(frame)
    assert fitted.booster.cross_fitted.shape == final.shape == (len(frame), 1)
    assert np.abs(fitted.booster.cross_fitted - final).mean() > 0.05
    assert np.corrcoef(fitted.booster.cross_fitted[:, 0], final[:, 0])[0, 1] > 0.8
    assert _Autoencoder(codec, frame, 3, 0, 2, None, None, None).booster is None
    private = _Autoencoder(codec, frame, 3, 0, 1, (5.0, 1e-4), adult["salary-class"], None)
    assert private.booster is None


def test_dp_sgd_spends_opacus_epsilon_in_the_ledger(adult: pd.DataFrame, tmp_path: Path) -> None:
    from veil.dp import Accountant, Budget

    accountant = Accountant.create(tmp_path / "ledger.db", Budget(1.0, 1e-3))
    release = mask_latent(
        adult,
        dim=3,
        target="salary-class",
        epsilon=0.6,
        epochs=3,
        accountant=accountant,
        random_state=1,
    )
    entries = accountant.entries()
    assert len(entries) == 1
    assert entries[0].epsilon == 0.6
    assert entries[0].delta == pytest.approx(1 / (10 * release.rows["released"]))
    assert release.epsilon is not None
    assert 0.5 < release.epsilon <= 0.6 + 1e-6  # what Opacus' accountant says it spent
    assert release.training is not None
    assert release.training.noise_multiplier > 0
    with pytest.raises(BudgetExceededError, match="only epsilon 0.4"):
        mask_latent(adult, dim=3, epsilon=0.6, epochs=3, accountant=accountant)
    assert len(accountant.entries()) == 1  # refused before training


def test_bad_input_is_one_line(
    heart: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ParameterError, match="--dim 13: the data has 13 features"):
        mask_latent(heart.drop(columns=["target"]), dim=13, method="autoencoder")
    with pytest.raises(ParameterError, match="--target: 'outcome' is not a column"):
        mask_latent(heart, dim=2, target="outcome")
    with pytest.raises(ParameterError, match="no numeric or categorical features are left"):
        mask_latent(heart[["age", "target"]], dim=1, target="target", keep=["age"])
    with pytest.raises(ParameterError, match="--dim all .* applies to --method pca"):
        mask_latent(heart, dim="all")
    out = tmp_path / "latent.csv"
    code = main(
        [
            "mask-latent",
            str(HEART),
            "--dim",
            "3",
            "--method",
            "pca",
            "--target",
            "target",
            "--format",
            "json",
            "-o",
            str(out),
            "--allow-invertible",
        ]
    )
    assert code == 0
    body = json.loads(capsys.readouterr().out)
    assert set(body) >= CONTRACT
    assert body["dim"] == 3
    assert pd.read_csv(out).shape == (242, 4)
    code = main(["mask-latent", str(HEART), "--dim", "0", "-o", str(tmp_path / "x.csv")])
    assert code == 2
    assert "--dim 0" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_the_figures_render(adult: pd.DataFrame) -> None:
    from veil.learn.latent._figures import dp_curve_figure, embedding_map_figure
    from veil.plotting import render

    release = mask_latent(adult, dim=2, target="salary-class", epochs=3)
    names, vectors = release.embeddings["education"]
    assert len(names) == vectors.shape[0] == adult["education"].nunique()  # none missing
    page = render(embedding_map_figure(release.embeddings, columns=["education", "sex"]))
    assert page.startswith(b"\x89PNG")
    curve = pd.DataFrame(
        {
            "epsilon": [1.0, 3.0],
            "utility_raw": [0.9, 0.9],
            "utility_latent": [0.7, 0.8],
            "recovery": [0.4, 0.6],
            "reidentification": [0.01, 0.02],
        }
    )
    assert render(dp_curve_figure(curve)).startswith(b"\x89PNG")


def test_an_invertible_release_says_so_in_the_output_certificate_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import hashlib

    out, report, certificate = (tmp_path / n for n in ("pca.csv", "report.html", "cert.json"))
    args = [
        "mask-latent",
        str(HEART),
        "--method",
        "pca",
        "--dim",
        "all",
        "--target",
        "target",
        "-o",
        str(out),
        "--report",
        str(report),
        "--certificate",
        str(certificate),
    ]
    assert main(args) == 1  # refused: nothing written without --allow-invertible
    refused = capsys.readouterr().err
    assert "nothing written" in refused
    assert "INVERTIBLE" in refused
    assert not out.exists()
    assert not report.exists()
    code = main([*args, "--allow-invertible"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "INVERTIBLE" in printed
    body = json.loads(certificate.read_text())
    assert body["invertible"] is True
    assert body["label"].startswith("INVERTIBLE")
    assert body["release"]["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    page = report.read_text()
    assert "INVERTIBLE" in page
    for text in (printed, page, certificate.read_text()):
        assert text.lower().count("anonymized") == text.lower().count("not anonymized")
    assert "63,1,3,145" not in page  # no row of the data

"""sdcMicro's PRAM and local suppression: PRAM's matrix is invariant (the column's frequencies
times it are the frequencies) and the released counts stay within sampling error of the real
ones; local suppression reaches k on adult blanking far fewer cells than withholding the
records would remove, measured by veil check (which shares no code with the transform)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil import anonymize
from veil.privacy import check
from veil.transforms import PRAM, LocalSuppression
from veil.transforms.sdc import invariant_matrix

ADULT = Path(__file__).parents[1] / "data" / "arx_adult" / "adult.csv.gz"
QIS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
]


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(ADULT, sep=";")


@pytest.mark.parametrize("alpha", [0.3, 0.5, 1.0])
def test_the_pram_matrix_is_invariant(alpha: float) -> None:
    p = np.array([0.6, 0.25, 0.1, 0.05])
    matrix = invariant_matrix(p, 0.7, alpha, np.random.default_rng(1))
    assert np.allclose(matrix.sum(axis=1), 1)
    assert (matrix >= 0).all()
    assert np.allclose(p @ matrix, p, atol=1e-12)
    assert not np.allclose(matrix, np.eye(4))  # it does move values


def test_pram_keeps_expected_frequencies_within_sampling_error(adult: pd.DataFrame) -> None:
    pram = PRAM(["marital-status", "race"], pd=0.6, random_state=3).fit(adult)
    out = pram.transform(adult)
    for column in ("marital-status", "race"):
        categories = pram.categories_[column]
        matrix = pram.matrices_[column]
        codes = adult[column].map({c: i for i, c in enumerate(categories)}).to_numpy()
        expected = matrix[codes].sum(axis=0)  # E[count of k] = sum over records of R[c_i, k]
        spread = np.sqrt((matrix[codes] * (1 - matrix[codes])).sum(axis=0))
        counts = out[column].value_counts().reindex(categories, fill_value=0).to_numpy()
        assert np.all(np.abs(counts - expected) <= 4 * spread + 1)
        real = adult[column].value_counts().reindex(categories).to_numpy()
        assert np.allclose(expected, real)  # invariance: the expectation is the real count
        assert (out[column] != adult[column]).mean() > 0.02  # values did move
    unchanged = PRAM(["race"], pd=1.0, random_state=3).fit_transform(adult)
    pd.testing.assert_series_equal(unchanged["race"], adult["race"])


def test_local_suppression_reaches_k_with_fewer_cells_than_record_suppression(
    adult: pd.DataFrame,
) -> None:
    blanker = LocalSuppression(QIS, k=5).fit(adult)
    out = blanker.transform(adult)
    assert check(out, QIS).k >= 5
    sizes = adult.groupby(QIS).size()
    withheld = int(sizes[sizes < 5].sum())  # records record suppression would remove
    assert blanker.cells_blanked_ < withheld * len(QIS)
    assert len(out) == len(adult) - blanker.records_left_unsafe_
    changed = (out[QIS] != adult.loc[out.index, QIS]).to_numpy().sum()
    assert changed == blanker.cells_blanked_  # only blanked cells differ, all to "*"
    assert set(out.loc[:, QIS].to_numpy()[(out[QIS] != adult.loc[out.index, QIS]).to_numpy()]) == {
        "*"
    }


def test_both_from_a_policy(adult: pd.DataFrame) -> None:
    sample = adult.head(2_000)
    policy = {
        "columns": {
            "race": {"role": "quasi_identifier", "steps": [{"pram": {"random_state": 1}}]},
            "sex": {"role": "quasi_identifier"},
            "age": {"role": "quasi_identifier"},
        },
        "steps": [{"local_suppression": {"columns": ["sex", "age", "race"], "k": 3}}],
    }
    release = anonymize(sample, policy)
    assert check(release.data, ["sex", "age", "race"]).k >= 3
    described = [s.description for s in release.certificate.steps]
    assert any(d.startswith("PRAM(race") for d in described)
    assert any(d.startswith("LocalSuppression(k=3)") for d in described)

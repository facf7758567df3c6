"""The frequency table built from batches of rows (never holding the rows) is the table built
from the whole frame: the same entries in the same order, sizes, sensitive histograms and
values; the search finds the same optimum on both."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.hierarchy import load_hierarchies
from veil.privacy.criteria import DistinctLDiversity, KAnonymity
from veil.privacy.lattice import CodedFrequencies
from veil.privacy.metrics import make_metric
from veil.privacy.search import search

ADULT = Path(__file__).parents[1] / "data" / "arx_adult"


@pytest.mark.parametrize("batch", [997, 5_000])
def test_batches_build_the_same_table(batch: int) -> None:
    frame = pd.read_csv(ADULT / "adult.csv.gz", sep=";", dtype=str, keep_default_na=False)
    trees = load_hierarchies(ADULT, "adult")
    quasi = ["sex", "age", "race", "marital-status", "education"]
    hierarchies = [trees[q] for q in quasi]
    whole = CodedFrequencies.build(frame, quasi, hierarchies, sensitive="occupation")
    parts = (frame.iloc[i : i + batch] for i in range(0, len(frame), batch))
    streamed = CodedFrequencies.stream(parts, quasi, hierarchies, sensitive="occupation")
    assert streamed.rows == whole.rows
    assert np.array_equal(streamed.bottom.leaves, whole.bottom.leaves)
    assert np.array_equal(streamed.bottom.sizes, whole.bottom.sizes)
    assert streamed.sensitive_values == whole.sensitive_values
    assert whole.bottom.histograms is not None
    assert np.array_equal(streamed.bottom.histograms, whole.bottom.histograms)
    criteria = [KAnonymity(k=5), DistinctLDiversity(l=2)]
    found = [
        search(t, criteria, make_metric("loss"), max_suppression=0.02) for t in (whole, streamed)
    ]
    assert found[0].levels == found[1].levels
    assert found[0].loss == found[1].loss


@pytest.mark.parametrize("bulk", [1, 50, 10**9])
def test_summed_batches_equal_merging_one_after_another(
    bulk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``FrequencySum`` (merging in bulk, whenever its parts outnumber ``SUM_ROWS`` and the
    merged table) gives what merging each batch's table in turn gave: the same combinations,
    in the same order, with the same counts and weights, missing values included."""
    import veil.frequency as frequency

    monkeypatch.setattr(frequency, "SUM_ROWS", bulk)
    rng = np.random.default_rng(3)
    n = 4_000
    frame = pd.DataFrame(
        {
            "age": rng.integers(17, 30, n),
            "county": rng.choice(["Nairobi", "Kisumu", "Nyeri", None], n),
            "diagnosis": rng.choice(["flu", "Flu ", "malaria", "HIV"], n),
        }
    )
    weights = rng.uniform(1, 50, n)
    one_after_another: frequency.Frequencies | None = None
    summed = frequency.FrequencySum()
    for start in range(0, n, 333):
        part = frequency.Frequencies.of(
            frame.iloc[start : start + 333],
            ["age", "county"],
            "diagnosis",
            weights=weights[start : start + 333],
        )
        one_after_another = part if one_after_another is None else one_after_another.merge(part)
        summed.add(part).add(None)
    total = summed.total()
    assert total is not None
    assert one_after_another is not None
    pd.testing.assert_frame_equal(total.counts, one_after_another.counts)
    assert total.rows == n
    assert frequency.FrequencySum().total() is None

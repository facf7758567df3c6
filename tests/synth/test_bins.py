"""Numeric columns in DP synthesis (``veil.synth._bins``): coarse bins at private quantiles, a
value that holds many rows a bin of its own, draws inside the range and inside their bin, whole
numbers for an integer column."""

from __future__ import annotations

import numpy as np
import pytest

from veil.synth._bins import FINE_BINS, fine_edges, private_bins

#: epsilon at which OpenDP's Laplace is far below one count: the histogram is the exact one
EXACT = 1e7


def gains(n: int, seed: int) -> np.ndarray:
    """Adult's capital gain in shape: 92% exactly 0, the rest spread up to 99,999."""
    rng = np.random.default_rng(seed)
    return np.where(rng.random(n) < 0.92, 0, rng.integers(1, 100_000, n)).astype(float)


def test_fine_grid_is_whole_numbers_when_few_else_equal_bins_and_the_low_end() -> None:
    assert fine_edges(17, 90, integer=True).tolist() == list(range(17, 91))
    wide = fine_edges(0, 99_999, integer=True)
    assert len(wide) == FINE_BINS + 1
    assert wide[0] == 0  # the low end: a point of its own
    assert wide[-1] == 99_999
    assert np.all(np.diff(wide) > 0)


def test_quantile_cuts_are_the_exact_quantiles_when_the_noise_is_negligible() -> None:
    values = np.random.default_rng(1).integers(17, 91, 20_000).astype(float)
    bins = private_bins(values, 17, 90, True, 10, EXACT)
    expected = sorted(
        {float(np.quantile(values, q, method="inverted_cdf")) for q in np.arange(1, 10) / 10}
    )
    assert bins.cuts == [c for c in expected if c < 90]


def test_a_value_that_holds_most_rows_is_a_bin_of_its_own_and_draws_back_exactly() -> None:
    values = gains(20_000, 2)
    bins = private_bins(values, 0, 99_999, True, 10, EXACT)
    assert bins.cuts[0] == 0  # the zeros: (-inf, 0]
    rng = np.random.default_rng(3)
    zero = bins.draw(np.zeros(5_000, dtype=np.int64), rng)
    assert np.all(zero == 0)
    rest = bins.draw(np.full(5_000, len(bins.cuts), dtype=np.int64), rng)
    assert rest.min() > bins.cuts[-1]
    assert rest.max() <= 99_999
    assert np.all(rest == np.floor(rest))  # whole numbers


@pytest.mark.parametrize("integer", [True, False])
def test_draws_stay_inside_their_bin_and_the_range(integer: bool) -> None:
    rng = np.random.default_rng(4)
    values = rng.gamma(2.0, 20.0, 10_000)
    values = np.round(values) if integer else values
    low, high = 0.0, float(values.max())
    bins = private_bins(values, low, high, integer, 8, 0.5)  # real noise
    coarse = rng.integers(0, len(bins.cuts) + 1, 20_000)
    drawn = bins.draw(coarse, rng)
    assert drawn.min() >= low
    assert drawn.max() <= high
    bounds = np.concatenate([[-np.inf], bins.cuts, [np.inf]])
    assert np.all(drawn > bounds[coarse])  # the first coarse bin's bound is -inf
    assert np.all(drawn <= bounds[coarse + 1])
    if integer:
        assert np.all(drawn == np.floor(drawn))


def test_missing_values_are_left_out_and_out_of_range_ones_clamped() -> None:
    values = np.array([np.nan, -5.0, 3.0, 3.0, 200.0, np.nan])
    bins = private_bins(values, 0, 10, True, 4, EXACT)
    assert round(bins.counts.sum()) == 4  # the two missing values are in no bin
    assert round(bins.counts[0]) == 1  # -5 counted at the low end
    assert round(bins.counts[-1]) == 1  # 200 at the high end


def test_the_rows_beside_a_point_mass_are_split_at_their_own_quantiles() -> None:
    values = gains(20_000, 5)
    bins = private_bins(values, 0, 99_999, True, 10, EXACT)
    assert bins.cuts[0] == 0  # the zeros, a bin of their own
    positive = values[values > 0]
    inside = np.searchsorted(bins.cuts, positive, side="left")  # coarse bins 1..9
    shares = np.bincount(inside, minlength=len(bins.cuts) + 1)[1:] / len(positive)
    assert len(bins.cuts) == 9  # eight cuts among the gains: nine bins of them
    assert np.all(np.abs(shares - 1 / 9) < 0.01)  # each a ninth, to a fine bin's share


def test_a_point_mass_inside_the_range_is_a_bin_of_its_own() -> None:
    rng = np.random.default_rng(6)
    hours = np.where(rng.random(20_000) < 0.46, 40, rng.integers(1, 100, 20_000)).astype(float)
    bins = private_bins(hours, 1, 99, True, 10, EXACT)
    assert {39.0, 40.0} <= set(bins.cuts)  # (39, 40]: the 40-hour week alone
    assert len(bins.cuts) == 10  # and nine bins' worth of quantiles around it


def test_with_more_budget_the_gains_are_cut_finer_not_coarser() -> None:
    """At adult's epsilon 5 a numeric column's histogram gets epsilon 0.1: read through the
    counts clamped at 0, 1,000 empty fine bins weighed ~5,000 rows and the 8% of gains above 0
    got two or three cuts (at epsilon 1, more: the noise's weight spread them); read through
    the running sum of the noisy counts they get their eight, every time."""
    values = gains(26_000, 7)
    for _ in range(20):
        cuts = private_bins(values, 0, 99_999, True, 10, 0.1).cuts
        assert sum(cut > 0 for cut in cuts) >= 6, cuts


def test_on_a_small_table_the_running_sums_noise_does_not_choose_the_cuts() -> None:
    """1,500 incomes at epsilon 0.02: the running sum of 1,000 noisy counts wanders by ~2,200
    rows, more than the table, and cut by it one coarse bin held over half the rows in a
    quarter of the draws (up to 93%); the clamped counts' even bias spreads the cuts."""
    rng = np.random.default_rng(8)
    incomes = np.round(rng.gamma(2.0, 3_000.0, 1_500)).clip(1_000, 20_000)
    for _ in range(20):
        cuts = private_bins(incomes, 1_000, 20_000, True, 10, 0.02).cuts
        sizes = np.bincount(np.searchsorted(cuts, incomes, side="left"), minlength=len(cuts) + 1)
        assert sizes.max() < 0.5 * len(incomes), cuts

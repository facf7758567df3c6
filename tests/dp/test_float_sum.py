"""DP sums are sound in floating point (Casacuberta, Shoemate, Vadhan, Wagaman, "Widespread
underestimation of sensitivity in differentially private libraries and how to fix it", CCS
2022): a float sum's rounding depends on the order and the number of the values, so one record
can move it by more than the bound a library declares. veil sums in fixed point: each clamped
value is a whole number of steps, added as exact integers. These tests feed the paper's kinds
of adversarial input (catastrophic cancellation, values lost below a large partial sum, a record
that shifts every other one to another accumulator of numpy's pairwise sum, extremes and ties)
and check the two facts the noise relies on: the total is the same in any order, and adding or
removing one record moves it by at most the declared sensitivity.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.dp import Accountant, Budget
from veil.dp import stats as dpstats
from veil.dp.stats import FIXED_POINT_BITS, fixed_point_sum

BIG = 2.0**60


def cancellation(ones: int = 1000) -> np.ndarray:
    """A huge value, many small ones lost beneath it, and the huge value's opposite."""
    return np.array([BIG] + [1.0] * ones + [-BIG])


def orders(values: np.ndarray, count: int = 30) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [values, values[::-1], *(rng.permutation(values) for _ in range(count))]


def test_a_float_sum_of_the_adversarial_input_depends_on_the_order() -> None:
    # the premise: numpy's own sums of one multiset differ (this is what breaks float sensitivity)
    sums = {float(np.sum(order)) for order in orders(cancellation())}
    assert len(sums) > 1


@pytest.mark.parametrize(
    "values",
    [
        cancellation(),
        np.array([BIG] * 7 + [1.0] * 993),  # ones below BIG's ulp in some accumulators only
        np.tile([1.0, 2.0**-53, 1 - 2.0**-53, 0.1], 2500),
        np.array([5e-324, -0.0, 0.0, BIG, -BIG, BIG / 3]),
    ],
)
def test_the_fixed_point_total_is_the_same_in_any_order(values: np.ndarray) -> None:
    bounds = (-BIG, BIG)
    totals = {fixed_point_sum(order, bounds)[0] for order in orders(values)}
    assert len(totals) == 1


@pytest.mark.parametrize("bounds", [(-BIG, BIG), (0.0, 1.0), (-3.5, 100.25), (18.0, 90.0)])
def test_one_record_moves_the_total_by_at_most_the_sensitivity(bounds) -> None:
    low, high = bounds
    base = np.concatenate([cancellation(), np.linspace(low, high, 997)])
    total, step, sensitivity = fixed_point_sum(base, bounds)
    assert sensitivity == round(max(abs(low), abs(high)) / step)
    extremes = [
        low,
        high,
        0.0,
        -0.0,
        5e-324,
        step / 2,
        -step / 2,
        1.5 * step,
        BIG,
        -BIG,
        (low + high) / 2,
        np.nextafter(high, 0),
        1e308,
        -1e308,
    ]
    for record in extremes:
        for neighbour in (np.r_[record, base], np.r_[base, record]):  # front: shifts alignment
            moved = fixed_point_sum(neighbour, bounds)[0] - total
            assert abs(moved) <= sensitivity
            assert moved == int(np.rint(np.clip(record, low, high) / step))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=0, max_size=60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e300, max_value=1e300),
    st.floats(min_value=1e-300, max_value=1e300),
)
def test_neighbours_and_orders_hold_for_any_floats(values, record, low, width) -> None:
    high = low + width
    if not low < high:
        return
    data = np.array(values, dtype=float)
    total, _, sensitivity = fixed_point_sum(data, (low, high))
    assert fixed_point_sum(data[::-1], (low, high))[0] == total
    assert abs(fixed_point_sum(np.r_[record, data], (low, high))[0] - total) <= sensitivity
    assert abs(total) <= sensitivity * len(data)


def test_the_dp_sum_is_calibrated_to_the_fixed_point_sensitivity(tmp_path) -> None:
    ledger = Accountant.create(tmp_path / "b.db", Budget(10.0))
    frame = pd.DataFrame({"premium": np.r_[cancellation(200)[1:-1], 99.0, 3.0]})
    result = dpstats.sum(frame, "premium", bounds=(0.0, 100.0), epsilon=0.5, accountant=ledger)
    step = 100.0 / 2**FIXED_POINT_BITS
    assert result.scale == pytest.approx(round(100.0 / step) * step / 0.5, rel=1e-6)
    assert abs(result.value - 302.0) < 40 * result.scale  # noisy, but around the truth

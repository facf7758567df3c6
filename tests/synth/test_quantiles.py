"""The quantile table of a fitted family: scipy's own where it has a quantile function, and
where scipy only has a root search (exponnorm), every quantile found at once and equal to
scipy's to the CDF's resolution."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from veil.synth._marginals import _ppf

GRID = np.unique(np.concatenate([np.logspace(-9, -2, 64), np.linspace(0.01, 0.99, 301)]))
GRID = np.unique(np.concatenate([GRID, 1 - GRID]))


@pytest.mark.parametrize("params", [(1.5, 38.0, 10.0), (0.3, 0.0, 1.0), (8.0, -5.0, 0.01)])
def test_a_family_without_a_quantile_function_agrees_with_scipy(
    params: tuple[float, ...],
) -> None:
    ours, theirs = _ppf(stats.exponnorm, GRID, params), stats.exponnorm.ppf(GRID, *params)
    scale = params[-1]
    assert np.all(np.diff(ours) >= 0)
    central = (GRID > 1e-4) & (GRID < 1 - 1e-4)
    assert np.max(np.abs(ours - theirs)[central]) <= 1e-9 * scale
    assert np.max(np.abs(ours - theirs)) <= 1e-5 * scale  # the tails: the CDF is flat there
    # each quantile's CDF is the level asked for (the definition, not scipy's answer)
    assert np.max(np.abs(stats.exponnorm.cdf(ours, *params) - GRID)[central]) <= 1e-12


def test_a_family_with_its_own_quantile_function_is_scipy_s() -> None:
    params = (2.0, 1.0, 3.0)
    assert np.array_equal(_ppf(stats.gamma, GRID, params), stats.gamma.ppf(GRID, *params))

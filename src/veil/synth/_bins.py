"""Numeric columns in differentially private synthesis: bins at private quantiles, and values
drawn back inside them from a private histogram.

MST and AIM model categories. A numeric column becomes one through bins; equal-width bins over
the range put adult's capital gains, 92% of them 0 and the rest up to 99,999, in one bin of 0 to
10,000 that decodes as noise spread across it, where the real value is exactly 0. Here a share
of the budget buys a noisy histogram of each numeric column on a fine grid (one bin per whole
number when the range has at most ``FINE_BINS`` of them, else ``FINE_BINS`` equal bins and the
range's low end as a point of its own): the coarse bins the model sees are a bin for each
value that holds many rows (0, or a 40-hour week) and the rest of the rows' quantiles
(``cuts_of``), and each synthetic value is
drawn from the fine histogram inside its coarse bin, then uniformly inside its fine bin (a
whole number for an integer column). Both steps read only the noisy histogram
(post-processing). The noise is OpenDP's Laplace on the exact counts (sensitivity 1: a record
adds or removes one count); the range is public (``bounds``) or read from the data, which the
caller's warning says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["FINE_BINS", "HISTOGRAM_SHARE", "PrivateBins", "cuts_of", "private_bins"]

#: Fine bins of a numeric column's private histogram (at most; a whole number each when fewer)
FINE_BINS = 1_000
#: Share of a synthesis' epsilon spent on the numeric columns' histograms (split evenly)
HISTOGRAM_SHARE = 0.1


@dataclass(frozen=True)
class PrivateBins:
    """A numeric column's fine grid (``edges``: each fine bin's upper edge; the first bin is
    ``[low, edges[0]]``, the others ``(edges[i-1], edges[i]]``), its noisy counts, and the
    coarse cuts the model bins the column by (a subset of the edges, below the last)."""

    low: float
    high: float
    integer: bool
    edges: np.ndarray
    counts: np.ndarray
    cuts: list[float]

    def draw(self, coarse: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Values for rows in the coarse bins ``coarse`` (0 to ``len(cuts)``): a fine bin
        inside each, chosen by the noisy counts, then a value inside that."""
        bounds = np.concatenate([[-math.inf], self.cuts, [math.inf]])
        fine = np.empty(len(coarse), dtype=np.int64)
        for j in np.unique(coarse).tolist():
            rows = np.flatnonzero(coarse == j)
            inside = np.flatnonzero((self.edges > bounds[j]) & (self.edges <= bounds[j + 1]))
            if not len(inside):  # a coarse bin beyond the fine grid: its nearest fine bin
                inside = np.array(
                    [min(np.searchsorted(self.edges, bounds[j]), len(self.edges) - 1)]
                )
            weights = self.counts[inside].astype(float)
            total = weights.sum()
            p = weights / total if total > 0 else None
            fine[rows] = rng.choice(inside, size=len(rows), p=p)
        upper = self.edges[fine]
        lower = np.where(fine == 0, self.low, self.edges[np.maximum(fine - 1, 0)])
        if self.integer:  # the whole numbers in the fine bin: [low, e0], (e_{i-1}, e_i]
            first = np.where(fine == 0, np.ceil(lower), np.floor(lower) + 1)
            last = np.maximum(np.floor(upper), first)
            return np.floor(first + rng.random(len(fine)) * (last - first + 1)).clip(first, last)
        # the first fine bin of a continuous column is [low, low]: the low end alone
        return lower + rng.random(len(fine)) * (upper - lower)


def fine_edges(low: float, high: float, integer: bool) -> np.ndarray:
    """The upper edges of a column's fine bins over ``[low, high]``."""
    if integer and math.floor(high) - math.ceil(low) + 1 <= FINE_BINS:
        return np.arange(math.ceil(low), math.floor(high) + 1, dtype=float)
    return np.concatenate([[low], np.linspace(low, high, FINE_BINS + 1)[1:]])


def private_bins(
    values: np.ndarray, low: float, high: float, integer: bool, bins: int, epsilon: float
) -> PrivateBins:
    """``values``' noisy histogram on the fine grid over ``[low, high]`` (values clamped into
    it, missing ones left out) at ``epsilon``, and about ``bins`` coarse bins (``cuts_of``;
    fewer where quantiles fall on one fine bin)."""
    from veil.dp._mechanisms import _laplace

    edges = fine_edges(low, high, integer)
    present = values[~np.isnan(values)]
    where = np.searchsorted(edges, np.clip(present, low, high), side="left")
    exact = np.bincount(np.minimum(where, len(edges) - 1), minlength=len(edges))
    measurement, scale = _laplace("counts", 1, float(epsilon))
    noisy = np.asarray(measurement([int(c) for c in exact]), dtype=float)
    return PrivateBins(
        float(low),
        float(high),
        integer,
        edges,
        np.maximum(noisy, 0.0),
        cuts_of(noisy, edges, bins, scale),
    )


def cuts_of(noisy: np.ndarray, edges: np.ndarray, bins: int, scale: float) -> list[float]:
    """The coarse cuts of a fine histogram's ``noisy`` counts (Laplace of ``scale``, as OpenDP
    calibrated it; post-processing): each fine bin that holds at least a ``bins``-th of the
    rows is a coarse bin of its own (adult's capital gain of 0, a working week of 40 hours),
    and the rest of the rows are split at their quantiles into the coarse bins left.

    The shares come from the running sum of the noisy counts as measured (made
    non-decreasing) when its noise at the far end (a standard deviation of sqrt(2 x fine
    bins) x scale) is at most a coarse bin's worth of rows; otherwise from the counts
    clamped at 0. Clamping adds about half the noise's scale to every empty fine bin: on adult
    at epsilon 1, 1,000 of them weighed ~25,000 rows and put the capital-gain cuts anywhere
    from 0 to 99,999 (a run's TSTR F1 fell to 0.59 when no cut fell between small and large
    gains), and quantiles of all the rows gave the 8% of gains above 0 no cut of their own, so
    with less noise (epsilon 5) they got fewer cuts, not more. But on a small table the
    running sum's noise is larger than the table (1,470 monthly incomes at epsilon 0.02: a
    standard deviation of ~2,200 rows) and its quantiles fall where the noise rises, while the
    clamped counts' even bias makes bins between quantile and equal width."""
    total = noisy.sum()
    if total > 0 and math.sqrt(2 * len(noisy)) * scale <= total / bins:
        cdf = np.clip(np.maximum.accumulate(np.cumsum(noisy)), 0.0, None)
        counts = np.diff(np.concatenate([[0.0], cdf]))
    else:
        counts = np.maximum(noisy, 0.0)
    if counts.sum() <= 0:  # nothing measured above the noise: two coarse bins at the low end
        return [float(edges[0])]
    mass = counts / counts.sum()
    points = np.flatnonzero(mass >= 1.0 / bins)
    cuts = {float(edges[i]) for i in points}  # a point's bin: (its lower edge, its edge]
    cuts |= {float(edges[i - 1]) for i in points if i > 0}
    rest = mass.copy()
    rest[points] = 0.0
    left, parts = rest.sum(), bins - len(points)
    if left > 0 and parts > 1:
        share = np.cumsum(rest) / left
        picked = np.searchsorted(share, np.arange(1, parts) / parts, side="left")
        cuts |= {float(edges[i]) for i in np.minimum(picked, len(edges) - 1).tolist()}
    return sorted(c for c in cuts if c < edges[-1]) or [float(edges[0])]

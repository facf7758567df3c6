"""Numeric columns in differentially private synthesis: bins at private quantiles, and values
drawn back inside them from a private histogram.

MST and AIM model categories. A numeric column becomes one through bins; equal-width bins over
the range put adult's capital gains, 92% of them 0 and the rest up to 99,999, in one bin of 0 to
10,000 that decodes as noise spread across it, where the real value is exactly 0. Here a share
of the budget buys a noisy histogram of each numeric column on a fine grid (one bin per whole
number when the range has at most ``FINE_BINS`` of them, else ``FINE_BINS`` equal bins and the
range's low end as a point of its own): the coarse bins the model sees are its quantiles (a
value that holds many rows, such as 0, becomes a bin of its own), and each synthetic value is
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

__all__ = ["FINE_BINS", "HISTOGRAM_SHARE", "PrivateBins", "private_bins"]

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
    it, missing ones left out) at ``epsilon``, and ``bins`` coarse bins at its quantiles (fewer
    where quantiles fall on one fine bin)."""
    from veil.dp._mechanisms import _laplace

    edges = fine_edges(low, high, integer)
    present = values[~np.isnan(values)]
    where = np.searchsorted(edges, np.clip(present, low, high), side="left")
    exact = np.bincount(np.minimum(where, len(edges) - 1), minlength=len(edges))
    measurement, _ = _laplace("counts", 1, float(epsilon))
    counts = np.maximum(np.asarray(measurement([int(c) for c in exact]), dtype=float), 0.0)
    total = counts.sum()
    share = np.cumsum(counts) / total if total > 0 else np.linspace(0, 1, len(edges) + 1)[1:]
    levels = np.arange(1, bins) / bins
    picked = np.minimum(np.searchsorted(share, levels, side="left"), len(edges) - 1)
    cuts = sorted({float(edges[i]) for i in picked.tolist() if edges[i] < edges[-1]})
    if not cuts:  # every count in one fine bin: two coarse bins around the low end
        cuts = [float(edges[0])]
    return PrivateBins(float(low), float(high), integer, edges, counts, cuts)

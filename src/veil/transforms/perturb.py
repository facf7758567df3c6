"""Perturbation that keeps distributions: additive noise, rank swapping, shuffling.

None of these is differential privacy: their noise is not calibrated to a sensitivity and no
privacy budget is spent. For guarantees use ``veil.dp``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from veil.transforms._base import (
    COLUMNS,
    Columns,
    ColumnTransform,
    Interval,
    Real,
    StrOptions,
    numeric_values,
    rng_from,
)


class Noise(ColumnTransform):
    """Add zero-mean ``normal`` or ``laplace`` noise to numeric columns.

    With ``relative=True`` (default) ``scale`` is a fraction of each column's standard
    deviation learned at fit; otherwise it is in the column's units. NOT differential privacy.
    """

    _needs_every_row = (
        "its draws are made for the whole table at once (batch by batch they would repeat)"
    )

    numeric_only = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "scale": [Interval(Real, 0, None, closed="left")],
        "relative": ["boolean"],
        "distribution": [StrOptions({"normal", "laplace"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        scale: float = 0.1,
        relative: bool = True,
        distribution: str = "normal",
        random_state: Any = None,
    ) -> None:
        self.columns = columns
        self.scale = scale
        self.relative = relative
        self.distribution = distribution
        self.random_state = random_state

    def _fit(self, frame: pd.DataFrame) -> None:
        self.scale_: dict[str, float] = {}
        for name in self.columns_:
            std = float(np.nanstd(numeric_values(frame, name))) if self.relative else 1.0
            self.scale_[name] = float(self.scale) * (std if np.isfinite(std) else 0.0)

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        rng = rng_from(self.random_state)
        draw = rng.normal if self.distribution == "normal" else rng.laplace
        for name in self.columns_:
            values = numeric_values(frame, name)
            frame[name] = pd.Series(
                values + draw(0.0, self.scale_[name], size=len(values)), index=frame.index
            )
        return frame

    def describe(self) -> str:
        """The columns and the noise's distribution (not differential privacy)."""
        return f"Noise({', '.join(self.columns_)}; {self.distribution}, not DP)"


def swap_partners(n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """For ranks 0..n-1, the rank each swaps with: a random free rank at most ``p`` percent of
    n away, below or above. Ranks are visited in random order, so the highest and lowest
    values find partners as often as the middle ones (searching only upwards left half of the
    top 1% in place). A rank stays only when its whole window is taken."""
    window = max(1, int(np.floor(p / 100 * n)))
    partner = list(range(n))
    # Union-find over ranks (plain lists: the loop runs once per value): up[x] leads to the
    # nearest free rank >= x (n: none), down[x + 1] to the nearest free rank <= x (0: none).
    up = list(range(n + 1))
    down = list(range(n + 1))

    def take(x: int) -> None:
        up[x] = x + 1
        down[x + 1] = x

    targets = rng.integers(-window, window + 1, size=n).tolist()
    for i in rng.permutation(n).tolist():
        if up[i] != i:  # already swapped
            continue
        take(i)
        t = min(max(i + targets[i], 0), n - 1)
        j = _root(up, t)
        if j > min(n - 1, i + window):
            j = _root(down, t + 1) - 1
            if j < max(0, i - window):
                continue  # every rank in the window is taken: this value stays
        partner[i], partner[j] = j, i
        take(j)
    return np.asarray(partner, dtype=np.int64)


def _root(parent: list[int], x: int) -> int:
    """Follow ``parent`` to the root, compressing the path."""
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        parent[x], x = root, parent[x]
    return root


class RankSwap(ColumnTransform):
    """Rank swapping (Moore 1996): each value is swapped with another whose rank is at most
    ``p`` percent of the rows away, below or above, column by column. Marginals are kept
    exactly; the link between a row and its true value is broken within that window."""

    _needs_every_row = "it swaps values between rows of the whole table"

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "p": [Interval(Real, 0, 100, closed="right")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, columns: Columns = None, *, p: float = 5.0, random_state: Any = None
    ) -> None:
        self.columns = columns
        self.p = p
        self.random_state = random_state

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        rng = rng_from(self.random_state)
        for name in self.columns_:
            series = frame[name]
            valid = np.flatnonzero(series.notna().to_numpy())
            order = valid[np.argsort(series.to_numpy()[valid], kind="stable")]
            partner = swap_partners(len(order), self.p, rng)
            values = series.to_numpy().copy()
            values[order] = series.to_numpy()[order[partner]]
            frame[name] = pd.Series(values, index=series.index, name=name).astype(series.dtype)
        return frame

    def describe(self) -> str:
        """The columns swapped and the largest rank distance p."""
        return f"RankSwap({', '.join(self.columns_)}; p={self.p}%)"


class Shuffle(ColumnTransform):
    """Permute the values of each column independently (``together=False``) or the rows of
    ``columns`` as a block (``together=True``, keeping their joint distribution)."""

    _needs_every_row = "it shuffles values across the whole table"

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "together": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self, columns: Columns = None, *, together: bool = False, random_state: Any = None
    ) -> None:
        self.columns = columns
        self.together = together
        self.random_state = random_state

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        rng = rng_from(self.random_state)
        permutation = rng.permutation(len(frame))
        for name in self.columns_:
            if not self.together:
                permutation = rng.permutation(len(frame))
            values = frame[name].to_numpy()[permutation]
            frame[name] = pd.Series(values, index=frame.index, name=name).astype(frame[name].dtype)
        return frame

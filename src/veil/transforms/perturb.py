"""Perturbation that keeps distributions: additive noise, rank swapping, shuffling.

None of these is differential privacy: their noise is not calibrated to a sensitivity and no
privacy budget is spent. For guarantees use ``veil.dp``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.exceptions import ParameterError
from veil.transforms._base import (
    Columns,
    ColumnTransform,
    check_choice,
    numeric_values,
    rng_from,
)


class Noise(ColumnTransform):
    """Add zero-mean ``normal`` or ``laplace`` noise to numeric columns.

    With ``relative=True`` (default) ``scale`` is a fraction of each column's standard
    deviation learned at fit; otherwise it is in the column's units. NOT differential privacy.
    """

    numeric_only = True

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

    def _validate(self) -> None:
        check_choice("distribution", self.distribution, ["normal", "laplace"])
        if not isinstance(self.scale, int | float) or self.scale < 0:
            raise ParameterError(f"scale must be a non-negative number, got {self.scale!r}")

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
        return f"Noise({', '.join(self.columns_)}; {self.distribution}, not DP)"


class RankSwap(ColumnTransform):
    """Rank swapping (Moore 1996): each value is swapped with another whose rank is at most
    ``p`` percent of the rows away, column by column. Marginals are kept exactly; the link
    between a row and its true value is broken within that window."""

    def __init__(
        self, columns: Columns = None, *, p: float = 5.0, random_state: Any = None
    ) -> None:
        self.columns = columns
        self.p = p
        self.random_state = random_state

    def _validate(self) -> None:
        if not isinstance(self.p, int | float) or not 0 < self.p <= 100:
            raise ParameterError(f"p must be a percentage in (0, 100], got {self.p!r}")

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        rng = rng_from(self.random_state)
        for name in self.columns_:
            series = frame[name]
            valid = np.flatnonzero(series.notna().to_numpy())
            order = valid[np.argsort(series.to_numpy()[valid], kind="stable")]
            n = len(order)
            window = max(1, int(np.floor(self.p / 100 * n)))
            partner = np.arange(n)
            swapped = np.zeros(n, dtype=bool)
            offsets = rng.integers(1, window + 1, size=n)
            for i in range(n):
                if swapped[i]:
                    continue
                # first free rank at or after the drawn offset, inside the window
                for j in range(i + offsets[i], min(n, i + window + 1)):
                    if not swapped[j]:
                        partner[i], partner[j] = j, i
                        swapped[i] = swapped[j] = True
                        break
            values = series.to_numpy().copy()
            values[order] = series.to_numpy()[order[partner]]
            frame[name] = pd.Series(values, index=series.index, name=name).astype(series.dtype)
        return frame

    def describe(self) -> str:
        return f"RankSwap({', '.join(self.columns_)}; p={self.p}%)"


class Shuffle(ColumnTransform):
    """Permute the values of each column independently (``together=False``) or the rows of
    ``columns`` as a block (``together=True``, keeping their joint distribution)."""

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

"""Two of sdcMicro's statistical-disclosure-control methods for categorical quasi-identifiers.

- ``PRAM`` (post-randomization, sdcMicro's ``pram``; Gouweleeuw et al. 1998): each value is
  replaced by a draw from a row of an *invariant* transition matrix, so the expected frequency
  of every category is what it was. A matrix P keeps a value with probability drawn between
  ``pd`` and 1 and spreads the rest evenly; with the column's frequencies p, the backward
  matrix Q (Q[k, j] = P[j, k] p[j] / sum_i p[i] P[i, k]) gives R = P Q, for which p R = p; the
  draw uses alpha R + (1 - alpha) I.
- ``LocalSuppression`` (sdcMicro's ``localSuppression``, ARX's cell suppression): instead of
  withholding whole records, blank single quasi-identifier cells ("*") of the records in
  classes smaller than ``k``, a column at a time, the column with the most distinct values
  first (``importance`` to choose), until every class has ``k`` records; records that still
  cannot reach ``k`` with every cell blanked are reported and, when ``remove_rest``, removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from veil.exceptions import ParameterError
from veil.transforms._base import (
    COLUMNS,
    Columns,
    ColumnTransform,
    Integral,
    Interval,
    Real,
    rng_from,
)

MISSING = "(missing)"
STAR = "*"


class PRAM(ColumnTransform):
    """Post-randomization of categorical columns with an invariant transition matrix."""

    _needs_every_row = "its transition matrix comes from the whole column's frequencies"

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "pd": [Interval(Real, 0, 1, closed="both")],
        "alpha": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        pd: float = 0.8,
        alpha: float = 0.5,
        random_state: Any = None,
    ) -> None:
        self.columns = columns
        self.pd = pd
        self.alpha = alpha
        self.random_state = random_state

    def _fit(self, frame: pd.DataFrame) -> None:
        rng = rng_from(self.random_state)
        self.categories_: dict[str, list[Any]] = {}
        self.matrices_: dict[str, np.ndarray] = {}
        self.frequencies_: dict[str, np.ndarray] = {}
        for name in self.columns_:
            counts = frame[name].astype(object).where(frame[name].notna(), MISSING).value_counts()
            categories = list(counts.index)
            p = counts.to_numpy(dtype=float) / counts.sum()
            self.categories_[name] = categories
            self.frequencies_[name] = p
            self.matrices_[name] = invariant_matrix(p, self.pd, self.alpha, rng)

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        rng = rng_from(self.random_state)
        for name in self.columns_:
            categories = self.categories_[name]
            lookup = {value: i for i, value in enumerate(categories)}
            values = frame[name].astype(object).where(frame[name].notna(), MISSING)
            codes = np.array([lookup.get(v, -1) for v in values])
            if (codes < 0).any():
                unseen = values[codes < 0].iloc[0]
                raise ParameterError(
                    f"PRAM of {name!r} was fitted without the value {unseen!r}: "
                    "fit it on the table it transforms"
                )
            cumulative = np.cumsum(self.matrices_[name], axis=1)
            draws = rng.random(len(codes))
            new = (cumulative[codes] < draws[:, None] * cumulative[codes, -1:]).sum(axis=1)
            new = np.minimum(new, len(categories) - 1)
            out = pd.Series(np.array(categories, dtype=object)[new], index=frame.index)
            out = out.where(out != MISSING, None)
            frame[name] = out if out.isna().any() else out.astype(frame[name].dtype)
        return frame

    def describe(self) -> str:
        """The columns, the transition parameters and each column's share of values kept on
        average."""
        kept = ", ".join(
            f"{c} {float(np.diag(self.matrices_[c]) @ self.frequencies_[c]):.0%}"
            for c in self.columns_
        )
        return (
            f"PRAM({', '.join(self.columns_)}; pd={self.pd:g}, alpha={self.alpha:g}): each "
            f"value redrawn from an invariant transition matrix, expected frequencies kept; "
            f"values kept on average: {kept}"
        )


def invariant_matrix(
    p: np.ndarray, pd: float, alpha: float, rng: np.random.Generator
) -> np.ndarray:
    """sdcMicro's invariant PRAM matrix for category frequencies ``p``: alpha P Q + (1-alpha) I,
    for which p R = p."""
    size = len(p)
    if size == 1:
        return np.ones((1, 1))
    keep = rng.uniform(pd, 1, size)
    forward = np.repeat(((1 - keep) / (size - 1))[:, None], size, axis=1)
    np.fill_diagonal(forward, keep)
    arriving = p @ forward  # sum_i p_i P[i, k]
    backward = (forward * p[:, None]).T / arriving[:, None]  # Q[k, j] = P[j, k] p_j / arriving_k
    return alpha * (forward @ backward) + (1 - alpha) * np.eye(size)


class LocalSuppression(ColumnTransform):
    """Blank single quasi-identifier cells ("*") until every class of ``columns`` has ``k``
    records."""

    _needs_every_row = (
        "it counts combinations over every row; leave them to the privacy search (max_suppression)"
    )

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "k": [Interval(Integral, 2, None, closed="left")],
        "importance": [list, tuple, None],
        "remove_rest": ["boolean"],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        k: int = 2,
        importance: Sequence[str] | None = None,
        remove_rest: bool = True,
    ) -> None:
        self.columns = columns
        self.k = k
        self.importance = importance
        self.remove_rest = remove_rest

    def _fit(self, frame: pd.DataFrame) -> None:
        if self.importance is not None:
            unknown = [c for c in self.importance if c not in self.columns_]
            if unknown:
                raise ParameterError(
                    f"importance names {unknown}, which are not among the columns {self.columns_}"
                )
        rest = [c for c in self.columns_ if c not in (self.importance or ())]
        by_spread = sorted(rest, key=lambda c: -frame[c].nunique(dropna=False))
        # blanked first: the column with the most distinct values (it singles out the most)
        self.order_: list[str] = [*(self.importance or ()), *by_spread]

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        text = {c: frame[c].astype(object).where(frame[c].notna(), MISSING) for c in self.columns_}
        work = pd.DataFrame(text, index=frame.index)
        blanked = pd.DataFrame(False, index=frame.index, columns=self.columns_)
        for column in self.order_:
            unsafe = self._unsafe(work)
            if not unsafe.any():
                break
            change = unsafe & (work[column] != STAR)
            work.loc[change, column] = STAR
            blanked.loc[change, column] = True
        rest = self._unsafe(work)
        self.cells_blanked_ = int(blanked.to_numpy().sum())
        self.records_left_unsafe_ = int(rest.sum())
        self.blanked_per_column_ = {c: int(blanked[c].sum()) for c in self.columns_}
        for column in self.columns_:
            cells = blanked[column].to_numpy()
            if cells.any():
                frame[column] = frame[column].astype(object)
                frame.loc[cells, column] = STAR
        if self.remove_rest and rest.any():
            frame = frame.loc[~rest.to_numpy()]
        return frame

    def _unsafe(self, work: pd.DataFrame) -> pd.Series:
        from veil.frequency import class_sizes  # the classes veil check counts

        klass, sizes = class_sizes(work, list(self.columns_))
        return pd.Series(sizes[klass] < self.k, index=work.index)

    def describe(self) -> str:
        """k, the cells blanked per column, and the records that could not reach k."""
        per = ", ".join(f"{c} {n:,}" for c, n in self.blanked_per_column_.items() if n)
        left = self.records_left_unsafe_
        tail = (
            (
                f"; {left:,} records could not reach k and were "
                f"{'removed' if self.remove_rest else 'left'}"
            )
            if left
            else ""
        )
        return (
            f"LocalSuppression(k={self.k}): {self.cells_blanked_:,} quasi-identifier cells "
            f"blanked ({per or 'none'}){tail}"
        )

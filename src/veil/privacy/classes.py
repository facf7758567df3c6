"""Class statistics of a table: its equivalence classes over the quasi-identifiers (k, the
number and average size of classes, the records alone in theirs).

This is the straightforward group-by version used to check a release; the privacy engine's
search works on integer-coded frequency tables instead (the README's Architecture).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import pandas as pd

from veil._html import Shown
from veil.frequency import class_sizes, histograms
from veil.schema import require_columns


@dataclass(frozen=True)
class ClassStats(Shown):
    """Equivalence-class statistics of a table over its quasi-identifiers."""

    quasi_identifiers: tuple[str, ...]
    rows: int
    classes: int
    k: int  # size of the smallest class (rows if there are no quasi-identifiers)
    unique_rows: int  # rows alone in their class: re-identifiable by linkage
    average_class_size: float
    l_distinct: int | None = None  # fewest distinct sensitive values in a class

    @property
    def unique_share(self) -> float:
        """The share of records alone in their class."""
        return self.unique_rows / self.rows if self.rows else 0.0

    def to_dict(self) -> dict[str, object]:
        """The statistics as JSON values."""
        data = asdict(self)
        data["quasi_identifiers"] = list(self.quasi_identifiers)
        data["unique_share"] = self.unique_share
        return data


def class_stats(
    frame: pd.DataFrame, quasi_identifiers: Sequence[str], *, sensitive: Sequence[str] = ()
) -> ClassStats:
    """k (smallest class), uniques and, with ``sensitive``, the distinct l of ``frame``."""
    qis = list(quasi_identifiers)
    require_columns(frame, [*qis, *sensitive], where="quasi_identifiers/sensitive")
    rows = len(frame)
    if not qis or rows == 0:
        return ClassStats(tuple(qis), rows, 1 if rows else 0, rows, 0, float(rows))
    codes, sizes = class_sizes(frame, qis)
    l_distinct = None
    if sensitive:
        per_class = []
        for name in sensitive:
            counts, _ = histograms(frame, codes, name, len(sizes))
            per_class.append(int((counts > 0).sum(axis=1).min()))
        l_distinct = min(per_class)
    return ClassStats(
        quasi_identifiers=tuple(qis),
        rows=rows,
        classes=len(sizes),
        k=int(sizes.min()),
        unique_rows=int((sizes == 1).sum()),
        average_class_size=float(rows / len(sizes)),
        l_distinct=l_distinct,
    )

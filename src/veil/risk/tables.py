"""The rows a risk measure reads: the training rows a release was made from, real rows it was
not made from (the holdout: the attacks' control), and the release, column by column comparable
(``veil.evaluate`` prepares them)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd


@dataclass
class Prepared:
    """Training rows, holdout rows and release rows, column by column comparable."""

    columns: list[str]  # compared, in the original's order
    kinds: dict[str, str]  # "numeric" or "categorical"
    train: pd.DataFrame
    holdout: pd.DataFrame | None
    release: pd.DataFrame
    left_out: dict[str, str] = field(default_factory=dict)  # column -> why not compared
    notes: list[str] = field(default_factory=list)
    sensitive: list[str] = field(default_factory=list)  # the scan's sensitive columns

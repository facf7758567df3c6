"""The rows a risk measure reads: the training rows a release was made from, real rows it was
not made from (the holdout: the attacks' control), and the release, column by column comparable
(``veil.evaluate`` prepares them); and how an attack's interval reads (``risk_label``), which
a report reads without loading the attacks."""

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


def risk_label(ci: tuple[float, float] | list[float]) -> str:
    """What the interval (not the point) says: ``low`` when it stays under 5%, ``high`` when it
    starts at 10% or more, ``moderate`` when it lies between, else ``uncertain`` (it reaches
    past 5%: too few attacks, or too few rows, to call it low)."""
    low, high = ci
    if high < 0.05:
        return "low"
    if low >= 0.1:
        return "high"
    return "moderate" if low >= 0.05 else "uncertain"

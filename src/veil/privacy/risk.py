"""Re-identification risk from equivalence-class sizes (prosecutor, journalist, marketer).

Without a population table the data is taken as the population, so the journalist attacker
(who knows the population, not who is in the sample) faces the same classes as the prosecutor;
the marketer's risk is the expected share of records re-identified (classes / records).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Risk:
    prosecutor_average: float
    prosecutor_max: float
    journalist_average: float
    journalist_max: float
    marketer_average: float
    records_at_risk: float  # share of records whose risk exceeds the threshold
    threshold: float
    sample_uniques: float  # share of records alone in their class

    def to_dict(self) -> dict[str, Any]:
        """The risk measures as JSON values."""
        return asdict(self)


def risk(sizes: np.ndarray, *, threshold: float = 0.2) -> Risk:
    """Risks of a table whose equivalence classes have ``sizes`` (suppressed records excluded)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    sizes = sizes[sizes > 0]
    rows = int(sizes.sum())
    if rows == 0:
        return Risk(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, threshold, 0.0)
    classes = len(sizes)
    average = classes / rows  # sum over records of 1/size, divided by the records
    highest = 1.0 / int(sizes.min())
    at_risk = float(sizes[1.0 / sizes > threshold].sum()) / rows
    uniques = float((sizes == 1).sum()) / rows
    return Risk(average, highest, average, highest, average, at_risk, threshold, uniques)

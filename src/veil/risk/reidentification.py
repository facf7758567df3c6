"""Re-identification risk from equivalence-class sizes (prosecutor, journalist, marketer), and
per person when people have several rows.

Without a population table the data is taken as the population, so the journalist attacker
(who knows the population, not who is in the sample) faces the same classes as the prosecutor;
the marketer's risk is the expected share of records re-identified (classes / records).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Risk:
    """Re-identification risk of records from their class sizes: prosecutor (average and
    highest), journalist, marketer, the share of records above the threshold and the share
    unique."""

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


@dataclass(frozen=True)
class PersonRisk:
    """Risk counted on people, not rows (a patient's many vitals rows, a client's claims)."""

    people: int
    k: int  # the fewest distinct people in a class
    prosecutor_average: float  # per person: 1 / people in their riskiest row's class
    prosecutor_max: float
    household_average: float  # sdcMicro's household risk: 1 - prod(1 - r) over their rows
    household_max: float
    people_at_risk: float  # share of people whose riskiest row exceeds the threshold
    threshold: float
    class_people: np.ndarray = field(repr=False, compare=False)  # distinct people per class

    def to_dict(self) -> dict[str, Any]:
        """The measures as JSON values."""
        out = asdict(self)
        out.pop("class_people")
        return out


def person_risk(
    person: Any, klass: np.ndarray, classes: int, *, threshold: float = 0.2
) -> PersonRisk:
    """Risks of people whose rows (``person``: the id of each row) fall in classes ``klass``."""
    import pandas as pd

    ids = pd.factorize(pd.Series(person).astype("string").fillna("(missing)"))[0]
    pairs = pd.DataFrame({"id": ids, "klass": np.asarray(klass)}).drop_duplicates()
    class_people = np.bincount(pairs["klass"].to_numpy(), minlength=classes)
    row_risk = 1.0 / class_people[np.asarray(klass)]
    frame = pd.DataFrame({"id": ids, "risk": row_risk, "keep": 1 - row_risk})
    riskiest = frame.groupby("id")["risk"].max()
    household = 1 - frame.groupby("id")["keep"].prod()
    present = class_people[class_people > 0]
    if len(riskiest) == 0:
        return PersonRisk(0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, threshold, class_people)
    return PersonRisk(
        len(riskiest),
        int(present.min()),
        float(riskiest.mean()),
        float(riskiest.max()),
        float(household.mean()),
        float(household.max()),
        float((riskiest > threshold).mean()),
        threshold,
        class_people,
    )

"""Recognizers that read a column's distribution rather than its text: ages, incomes, dates of
birth, and unique keys. Their value evidence is moderate; a column name makes it strong."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pandas as pd

from veil.scan.recognizers.base import ColumnSample, Entity, Evidence, percent


class AgeRecognizer:
    """Ages: whole numbers up to 120, mostly adult, in a column of many repeats."""

    entity = "AGE"

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence (heuristic) of ages: whole numbers from 0 up to 40-120, median 18-80, at least
        10 distinct values.
        """
        if column.kind != "numeric" or column.n_valid < 10:
            return None
        values = column.whole.numbers()
        lo, hi, median = values.low, values.high, values.median
        if not (values.integral and lo >= 0 and 40 <= hi <= 120 and 18 <= median <= 80):
            return None
        if column.n_distinct < 10:
            return None
        detail = f"whole numbers from {lo:.0f} to {hi:.0f} (median {median:.0f}), as ages are"
        return Evidence(self.entity, 0.55, detail, heuristic=True)


class IncomeRecognizer:
    """Incomes and salaries: positive amounts with a long right tail."""

    entity = "INCOME"

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence (heuristic) of incomes: positive, right-skewed amounts with a median of at
        least 500 and many distinct values.
        """
        if column.kind != "numeric" or column.n_valid < 20:
            return None
        values = column.whole.numbers()
        median = values.median
        if values.low < 0 or median < 500 or column.distinct_ratio < 0.2:
            return None
        skew = values.skew
        if skew < 0.5:
            return None
        detail = f"positive amounts, median {median:,.0f}, right-skewed (skew {skew:.1f}) like pay"
        return Evidence(self.entity, 0.5, detail, heuristic=True)


class BirthDateRecognizer:
    """Dates whose 'ages' (years before today) look like a population's: median 18-85."""

    entity = "DATE_OF_BIRTH"

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence (heuristic) of dates of birth: dates 18-85 years ago on median, none in the
        future or over 115 years ago, spread over at least 5 years.
        """
        dates = column.dates
        if dates is None or dates.notna().sum() < 10:
            return None
        dates = pd.to_datetime(dates.dropna())
        if dates.dt.tz is not None:
            dates = dates.dt.tz_localize(None)
        years = (pd.Timestamp(datetime.now()) - dates).dt.days.to_numpy() / 365.25
        median = float(np.median(years))
        q1, q3 = np.percentile(years, [25, 75])
        if years.min() < 0 or years.max() > 115 or not 18 <= median <= 85 or q3 - q1 < 5:
            return None
        detail = f"dates {median:.0f} years ago on median (spread {q3 - q1:.0f} years): birth dates"
        return Evidence(self.entity, 0.7, detail, heuristic=True)


class EventDateRecognizer:
    """Dates and timestamps of events (an admission, a reading, joining a scheme): what an
    attacker who saw the event knows, so a quasi-identifier; a timestamp to the minute is
    nearly unique. Birth dates score higher (``BirthDateRecognizer``)."""

    entity = "EVENT_DATE"

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence (heuristic) of event dates: at least 90% of the values read as dates."""
        dates = column.dates
        if dates is None or dates.notna().sum() < 10:
            return None
        dates = pd.to_datetime(dates.dropna())
        timed = bool((dates != dates.dt.normalize()).any())
        what = "timestamps" if timed else "dates"
        detail = (
            f"{what} from {dates.min():%Y-%m-%d} to {dates.max():%Y-%m-%d}: when something "
            "happened to a person, which whoever saw it knows"
        )
        return Evidence(self.entity, 0.65, detail, heuristic=True)


def _record_key(column: ColumnSample) -> tuple[float, str, bool] | None:
    """(score, detail, whether read from the distribution alone) when a column is distinct
    whole numbers with no skew: row numbers and auto-increment keys (a run: at most twice as
    many numbers as values span them: sure), or a surrogate key drawn at random (respondent
    ids: heuristic, so a meaningful name that says otherwise, ``MonthlyRate``, outweighs it and
    a key's name, ``rownames``, confirms it); None otherwise."""
    if column.kind != "numeric" or column.n_valid < 20:
        return None
    if column.n_distinct < 0.999 * column.n_valid:
        return None
    values = column.whole.numbers()
    if not values.integral or abs(values.skew) > 1:  # skewed: amounts, not keys
        return None
    span = values.high - values.low + 1
    if span <= 2 * column.n_valid:
        return (
            0.95,
            (
                f"{column.n_distinct:,} distinct whole numbers from {values.low:,.0f} to "
                f"{values.high:,.0f}: a run, as row numbers and auto-increment keys are"
            ),
            False,
        )
    return (
        0.6,
        (
            f"{column.n_distinct:,} distinct whole numbers spread evenly from {values.low:,.0f} to "
            f"{values.high:,.0f}: a surrogate key (a respondent or record id), not a measurement"
        ),
        True,
    )


class RecordKeyRecognizer:
    """Row numbers and record ids (R's ``rownames``, a survey's respondent id, ``id``
    1..n): they single out each row but say nothing of the person, so they are dropped
    rather than generalized as a quasi-identifier, or fed to a model as a feature."""

    entity = "RECORD_KEY"

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence of a record key: distinct whole numbers, unskewed (``_record_key``)."""
        found = _record_key(column)
        if found is None:
            return None
        score, detail, heuristic = found
        return Evidence(self.entity, score, detail, heuristic=heuristic)


class UniqueNumberRecognizer:
    """A measurement with nearly one value per row (IBM HR's MonthlyRate: 1,427 distinct in
    1,470 rows) singles a person out as surely as an ID does, to whoever knows the value; it
    needs rounding, top/bottom coding or noise before release."""

    entity = "UNIQUE_NUMBER"

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence of a near-unique measurement: numbers, at least 90% of them distinct."""
        if column.kind != "numeric" or column.n_valid < 50 or column.distinct_ratio < 0.9:
            return None
        key = _record_key(column)
        if key is not None and not key[2]:  # a run of row numbers, not a measurement
            return None
        detail = (
            f"{column.n_distinct:,} distinct values in {column.n_valid:,} rows "
            f"({percent(column.distinct_ratio)}): nearly one per person, as identifying as an ID"
        )
        return Evidence(self.entity, 0.55, detail)


class KeyRecognizer:
    """A column whose values are (almost) all distinct links each row to one person even when
    it matches no entity: a customer number, a policy number, a UUID."""

    entity = None

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence (heuristic) of a unique key: at least 95% distinct values that are unskewed
        whole numbers or short text that is not prose.
        """
        if column.n_valid < 20 or column.distinct_ratio < 0.95 or column.kind == "datetime":
            return None
        if column.kind == "numeric":
            values = column.whole.numbers()
            if not values.integral or abs(values.skew) > 1:  # skewed: amounts, not keys
                return None
        elif column.kind == "text":
            if column.is_free_text or column.mean_length > 40:
                return None
        else:
            return None
        detail = f"{percent(column.distinct_ratio)} of values are distinct: a key to one person"
        return Evidence(None, 0.6, detail, role="identifier", heuristic=True)


#: The entities read from numbers and dates.
ENTITIES: tuple[Entity, ...] = (
    Entity(
        "EVENT_DATE",
        "quasi_identifier",
        label="the date of an event",
        hints=(
            "date",
            "datetime",
            "timestamp",
            "admission",
            "admission date",
            "admitted",
            "discharge",
            "discharge date",
            "visit date",
            "appointment",
            "date of entry",
            "entry date",
            "signup",
            "sign up date",
            "signup date",
            "registration date",
            "joined",
            "join date",
            "start date",
            "hire date",
            "date joined",
            "created",
            "created at",
            "claim date",
            "year",
            "census year",
            "survey year",
            "interview year",
            "wave",
            "reading time",
            "tarehe",
            "tarehe ya kujiunga",
        ),
    ),
    Entity("UNIQUE_NUMBER", "quasi_identifier", label="a near-unique measurement"),
    Entity(
        "RECORD_KEY",
        "identifier",
        label="a row number or record id",
        hints=(
            "rownames",
            "row names",
            "row",
            "row number",
            "row id",
            "rowid",
            "row no",
            "index",
            "obs",
            "observation number",
            "respondent",
            "respondent id",
            "respondent number",
            "case",
            "case id",
            "caseid",
            "case number",
            "serial",
            "serial number",
            "record number",
            "record no",
            "seqn",
            "sequence number",
            "unnamed 0",
            "sn",
            "s no",
            "sl no",
        ),
    ),
    Entity(
        "DATE_OF_BIRTH",
        "quasi_identifier",
        hints=(
            "dob",
            "date of birth",
            "birth date",
            "birthdate",
            "birthday",
            "birth year",
            "year of birth",
            "yob",
            "birth month",
            "birth quarter",
            "birth qrtr",
            "born",
            "tarehe ya kuzaliwa",
            "kuzaliwa",
        ),
    ),
    Entity(
        "AGE",
        "quasi_identifier",
        hints=(
            "age",
            "age years",
            "umri",
            "miaka",
        ),
    ),
    Entity(
        "INCOME",
        "sensitive",
        hints=(
            "income",
            "salary",
            "wage",
            "wages",
            "earnings",
            "pay",
            "monthly income",
            "annual income",
            "net pay",
            "gross pay",
            "mshahara",
            "kipato",
            "mapato",
        ),
    ),
)

RECOGNIZERS = (
    AgeRecognizer(),
    IncomeRecognizer(),
    BirthDateRecognizer(),
    EventDateRecognizer(),
    UniqueNumberRecognizer(),
    RecordKeyRecognizer(),
    KeyRecognizer(),
)

"""Text dates as real exports write them: spaces around them, a colon for the space between
date and time, day-first and month-first mixed in one column, a few impossible values.

``parse_dates_column`` reads one column. Numeric dates (``2021/04/13 12:05``, ``13.04.21``)
are read both ways; a value only one way reads (``2021/16/04``) is evidence of that order.
With ``dayfirst=None`` the column's evidence decides: one order seen, that order; both orders
seen (Organs.csv: until June 2021 written ``2021/DD/MM``, later ``2021/MM/DD``), the values
that read either way are read so that the rows run forward in time (the rows of such an export
follow time) and the choice is reported; no evidence at all, the caller must say.
Values that are no date (``20:26:97``) stop the read with the row and the fix, or, with
``coerce``, become missing and are counted. Text months (``4 Apr 2021``) go to pandas.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from veil.exceptions import InputError, one_line, shown

_TIME = r"(?:[ T:]+(?P<time>\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?"
_YEAR_FIRST = rf"^(?P<y>\d{{4}})[-/.](?P<a>\d{{1,2}})[-/.](?P<b>\d{{1,2}}){_TIME}$"
_YEAR_LAST = rf"^(?P<a>\d{{1,2}})[-/.](?P<b>\d{{1,2}})[-/.](?P<y>\d{{4}}|\d{{2}}){_TIME}$"

_DATE_SHAPE = r"\d{1,4}[-/.]\d{1,2}|\d{1,2}\s+[A-Za-z]{3}"
_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
_OTHER_FORM = (
    rf"(?i)^\d{{4}}-\d{{2}}-\d{{2}}T|\d.*\b(?:{_MONTHS})[a-z]*\b|\b(?:{_MONTHS})[a-z]*\b.*\d"
)


class DateNotice(UserWarning):
    """How a text date column was read, where it needed a choice (order, coerced values)."""


@dataclass
class DateReading:
    """What reading one column decided: its order, and the values it had to judge."""

    column: str
    order: str | None = None  # "day-first", "month-first", "mixed" or None (no numeric dates)
    day_first_only: int = 0  # values that read only day-first
    month_first_only: int = 0
    by_time_order: int = 0  # values that read either way, read so the rows run forward in time
    coerced_rows: list[int] = field(default_factory=list)  # read as missing (coerce)

    def notes(self) -> list[str]:
        out = []
        if self.order == "mixed":
            out.append(
                f"column {self.column!r} mixes day-first ({self.day_first_only:,} values) and "
                f"month-first ({self.month_first_only:,}) dates; {self.by_time_order:,} values "
                "that read either way were read so that the rows run forward in time; pass "
                "--dayfirst/--monthfirst or --date-format to choose one order instead"
            )
        if self.coerced_rows:
            rows = ", ".join(str(r) for r in self.coerced_rows[:5])
            more = "..." if len(self.coerced_rows) > 5 else ""
            out.append(
                f"{len(self.coerced_rows):,} values of {self.column!r} are no dates and were "
                f"read as missing (rows {rows}{more})"
            )
        return out


def _year(text: pd.Series) -> pd.Series:
    years = text.astype(int)
    short = text.str.len() == 2  # strptime's %y: 69-99 -> 19xx, 00-68 -> 20xx
    return years.where(~short, np.where(years >= 69, 1900 + years, 2000 + years))


def _stamp(year: pd.Series, month: pd.Series, day: pd.Series, time: pd.Series) -> pd.Series:
    text = (
        year.astype(str).str.zfill(4)
        + "-"
        + month.str.zfill(2)
        + "-"
        + day.str.zfill(2)
        + " "
        + time.fillna("00:00").str.replace(r"^(\d):", r"0\1:", regex=True)
    )
    return pd.to_datetime(text, format="ISO8601", errors="coerce")


def _numeric_readings(cleaned: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Each value read month-first and day-first (NaT where that reading is no date)."""
    month_first = pd.Series(pd.NaT, index=cleaned.index, dtype="datetime64[ns]")
    day_first = month_first.copy()
    for pattern in (_YEAR_FIRST, _YEAR_LAST):
        parts = cleaned.str.extract(pattern)
        hit = parts["y"].notna()
        if not hit.any():
            continue
        parts = parts[hit]
        year = _year(parts["y"])
        month_first[hit] = _stamp(year, parts["a"], parts["b"], parts["time"])
        day_first[hit] = _stamp(year, parts["b"], parts["a"], parts["time"])
        if pattern == _YEAR_FIRST:  # 2021-04-05 is ISO 8601, never day-first
            iso = hit & cleaned.str.match(r"\d{4}-").fillna(False).astype(bool)
            day_first[iso] = month_first[iso]
    return month_first, day_first


def _in_time_order(settled: pd.Series, first: pd.Series, second: pd.Series) -> pd.Series:
    """Where ``settled`` is missing, ``first`` or ``second``: whichever keeps the column
    running forward in time (the rows of an export follow time). A dynamic programme over the
    rows (Viterbi over the two readings): a step forward costs its length, a step back eleven
    times its length, so a run of ambiguous values is read one way, not value by value."""
    sure = settled.notna().to_numpy()
    a = np.where(sure, settled.to_numpy("int64", na_value=0), first.to_numpy("int64", na_value=0))
    b = np.where(sure, a, second.to_numpy("int64", na_value=0))
    chain = np.flatnonzero(sure | first.notna().to_numpy() | second.notna().to_numpy())
    out = first.where(~sure, settled).copy()
    if not len(chain):
        return out
    seconds_a, seconds_b = a[chain] // 10**9, b[chain] // 10**9
    back = np.zeros((len(chain), 2), dtype=np.int8)  # the best previous reading, per reading
    cost = [0.0, 0.0]
    previous = (int(seconds_a[0]), int(seconds_b[0]))
    for i in range(1, len(chain)):
        here = (int(seconds_a[i]), int(seconds_b[i]))
        new = []
        for j, value in enumerate(here):
            steps = [
                cost[k] + abs(value - previous[k]) + 10 * max(0, previous[k] - value)
                for k in (0, 1)
            ]
            back[i, j] = int(steps[1] < steps[0])
            new.append(min(steps))
        cost, previous = new, here
    pick = int(cost[1] < cost[0])
    chosen = np.empty(len(chain), dtype=np.int8)
    for i in range(len(chain) - 1, -1, -1):
        chosen[i] = pick
        pick = back[i, pick]
    values = np.where(chosen == 0, a[chain], b[chain])
    out.iloc[chain] = pd.to_datetime(values)
    return out


def parse_dates_column(
    series: pd.Series,
    name: str,
    *,
    dayfirst: bool | None = None,
    date_format: str | None = None,
    coerce: bool = False,
) -> tuple[pd.Series, DateReading]:
    """``series`` as datetimes, and what reading it decided; an ``InputError`` naming the row
    and the fix when a value is no date (unless ``coerce``) or the order cannot be told."""
    reading = DateReading(name)
    if pd.api.types.is_datetime64_any_dtype(series):
        return series, reading
    present = series.notna()
    text = series.astype("string").str.strip().str.replace(r"\s+", " ", regex=True)
    if date_format is not None:
        parsed = pd.to_datetime(text, format=date_format, errors="coerce")
    else:
        codes, uniques = pd.factorize(text)  # each distinct text read once
        distinct = pd.Series(uniques, dtype="string")
        month_first, day_first = _numeric_readings(distinct)
        both = month_first.notna() & day_first.notna() & (month_first != day_first)
        only_day = day_first.notna() & month_first.isna()
        only_month = month_first.notna() & day_first.isna()

        def per_row(values: pd.Series) -> pd.Series:
            out = values.take(np.where(codes < 0, 0, codes)).reset_index(drop=True)
            return out.where(codes >= 0)

        rows_day = per_row(only_day).fillna(False).astype(bool).to_numpy()
        rows_month = per_row(only_month).fillna(False).astype(bool).to_numpy()
        ambiguous = per_row(both).fillna(False).astype(bool).to_numpy()
        reading.day_first_only, reading.month_first_only = (
            int(rows_day.sum()),
            int(rows_month.sum()),
        )
        rows_mf, rows_df = per_row(month_first), per_row(day_first)
        mixed = dayfirst is None and rows_day.any() and rows_month.any()
        if mixed:
            reading.order, reading.by_time_order = "mixed", int(ambiguous.sum())
            settled = rows_mf.where(rows_mf.notna(), rows_df).where(~ambiguous)
            parsed_numeric = _in_time_order(settled, rows_mf, rows_df)
        else:
            if dayfirst is None:
                if ambiguous.any() and not (rows_day.any() or rows_month.any()):
                    example = shown(str(text[ambiguous].iloc[0]))
                    raise InputError(
                        f"column {name!r}: every date reads both day-first and month-first "
                        f"(e.g. {example}); pass --dayfirst or --monthfirst "
                        "(dayfirst=True or False)"
                    )
                dayfirst = bool(rows_day.any())
            if rows_day.any() or rows_month.any() or ambiguous.any():
                reading.order = "day-first" if dayfirst else "month-first"
            parsed_numeric = rows_df if dayfirst else rows_mf
        parsed = pd.Series(parsed_numeric.to_numpy(), index=series.index)
        numeric = (rows_mf.notna() | rows_df.notna()).to_numpy()
        # text months (4 Apr 2021) and ISO with zones: pandas reads each value; not any text
        # dateutil accepts ("5" would be the 5th of this month)
        worded = text.str.contains(_OTHER_FORM).fillna(False).to_numpy()
        other = present.to_numpy() & ~numeric & worded
        if other.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "could not infer format": expected here
                parsed[other] = pd.to_datetime(
                    text[other], format="mixed", dayfirst=bool(dayfirst), errors="coerce"
                )
    bad = present.to_numpy() & parsed.isna().to_numpy()
    if bad.any():
        rows = np.flatnonzero(bad)
        if not coerce:
            raise InputError(
                f"column {name!r}: {len(rows):,} values are no dates (e.g. row {rows[0] + 1}: "
                f"{shown(one_line(str(series.iloc[rows[0]])))}); fix them, or read the column "
                f"with --dates {name} and --coerce-dates to read them as missing (counted) or "
                "--date-format"
            )
        reading.coerced_rows = [int(r) + 1 for r in rows]
    return parsed.astype("datetime64[ns]"), reading


def as_dates(series: pd.Series, name: str, *, warn: bool = True) -> pd.Series:
    """A column a step needs as dates: datetimes as they are, text read as ``read(dates=
    [name])`` reads it (order detected, what was decided a ``DateNotice``); a value that is no
    date, or an order that cannot be told, stops with the fix."""
    parsed, reading = parse_dates_column(series, name)
    for note in reading.notes() if warn else ():
        warnings.warn(note, DateNotice, stacklevel=3)
    return parsed


def mostly_dates(texts: pd.Series, share: float = 0.9) -> pd.Series | None:
    """``texts`` read as dates when at least ``share`` of the present ones are dates (order
    detected; all-ambiguous read month-first, which is enough to tell dates from not), else
    None. For telling a column of dates, on a sample; nothing here is released."""
    if texts.notna().sum() == 0:
        return None
    if texts.astype("string").str.contains(_DATE_SHAPE).fillna(False).mean() < share:
        return None  # cheap refusal of columns that are no dates at all
    try:
        parsed, _ = parse_dates_column(texts, "sample", coerce=True)
    except InputError:  # every value reads both ways: either way, they are dates
        parsed, _ = parse_dates_column(texts, "sample", dayfirst=False, coerce=True)
    present = texts.notna().to_numpy()
    return parsed if parsed[present].notna().mean() >= share else None

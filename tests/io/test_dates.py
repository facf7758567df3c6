"""Text dates as real exports write them (issue 15): trimmed, day/month order detected, mixed
orders read in time order, values that are no dates stopped or counted, never guessed."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil import io
from veil.exceptions import InputError
from veil.hierarchy import auto_hierarchy
from veil.io._dates import DateNotice, parse_dates_column
from veil.privacy import anonymize
from veil.transforms import Generalize

DATA = Path(__file__).resolve().parents[1] / "data"
ORGANS = DATA / "organs_vitals.csv"  # a copy of ../shared/datasets/organs_vitals/Organs.csv


def test_organs_dates_stop_on_impossible_seconds_naming_row_and_fix() -> None:
    with pytest.raises(InputError) as err:
        io.read(ORGANS, dates=["Date"])
    message = str(err.value)
    assert "row 55" in message
    assert "20:26:97" in message
    assert "--coerce-dates" in message


def test_organs_dates_mixed_orders_read_in_time_order_and_coerced_values_counted() -> None:
    raw = pd.read_csv(ORGANS, dtype=str)["Date"]
    with pytest.warns(DateNotice) as notices:
        frame = io.read(ORGANS, dates=["Date"], coerce_dates=True)
    said = " ".join(str(n.message) for n in notices)
    assert "mixes day-first" in said
    assert "3 values of 'Date' are no dates" in said
    dates = frame["Date"]
    assert dates.isna().sum() == 3
    assert raw[dates.isna()].str.contains(":97").all()
    # values that read one way only are read that way: 16/04 is day-first, 08/14 month-first
    assert (dates[raw.str.startswith("2021/16/04 20:26:5")].dt.month == 4).all()
    assert (dates[raw.str.startswith("2021/08/14")].dt.month == 8).all()
    # the file follows time: read so, it steps back by more than a day once only, where it
    # switches from YYYY/DD/MM to YYYY/MM/DD (05/09, 06/09, 08/09 read either way)
    steps = dates.dropna().diff().dt.total_seconds().dropna()
    assert (steps < -86400).sum() == 1
    assert dates.min() == pd.Timestamp("2021-04-04 12:05:00")
    assert dates.max().year == 2022
    # a trailing space, two spaces, a colon between date and time: all read
    for text in ("2021/12/10  09:10:28 ", "2021/10/05:01:19:55 "):
        assert dates[raw == text].notna().all()


def test_ambiguous_column_needs_an_order_and_the_order_is_kept() -> None:
    texts = pd.Series(["01/02/2021", "03/04/2021", None])
    with pytest.raises(InputError, match="--dayfirst or --monthfirst"):
        parse_dates_column(texts, "d")
    day, _ = parse_dates_column(texts, "d", dayfirst=True)
    month, _ = parse_dates_column(texts, "d", dayfirst=False)
    assert day.iloc[0] == pd.Timestamp("2021-02-01")
    assert month.iloc[0] == pd.Timestamp("2021-01-02")
    assert day.isna().iloc[2]  # missing stays missing, and is not a value that failed


def test_text_months_read_and_bare_numbers_are_no_dates() -> None:
    parsed, _ = parse_dates_column(pd.Series(["4 Apr 2021", "April 5, 2021 10:00"]), "d")
    assert parsed.tolist() == [pd.Timestamp("2021-04-04"), pd.Timestamp("2021-04-05 10:00")]
    with pytest.raises(InputError, match="1 values are no dates"):
        parse_dates_column(pd.Series(["4 Apr 2021", "5"]), "d")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2049, 12, 31)),  # %y
        min_size=1,
        max_size=30,
    ),
    st.sampled_from(["%d/%m/%Y %H:%M", "%Y/%d/%m %H:%M:%S", "%d.%m.%y", "%m/%d/%Y", "%Y-%m-%d"]),
)
def test_dates_written_in_one_order_read_back_as_written(stamps: list[datetime], form: str) -> None:
    stamps = [s.replace(microsecond=0) for s in stamps]
    if "%S" not in form:
        stamps = [s.replace(second=0) for s in stamps]
    if "%H" not in form:
        stamps = [s.replace(hour=0, minute=0) for s in stamps]
    texts = pd.Series([f" {s.strftime(form)} " for s in stamps])
    dayfirst = form.index("%d") < form.index("%m")
    # a day over 12, ISO 8601, or every value reads the same both ways (01/01)
    told = any(s.day > 12 for s in stamps) or "-" in form or all(s.day == s.month for s in stamps)
    if told:
        parsed, reading = parse_dates_column(texts, "d")
    else:  # no value tells the order: it asks, never guesses
        with pytest.raises(InputError, match="--dayfirst or --monthfirst"):
            parse_dates_column(texts, "d")
        parsed, reading = parse_dates_column(texts, "d", dayfirst=dayfirst)
    assert parsed.tolist() == [pd.Timestamp(s) for s in stamps]
    if any(s.day > 12 for s in stamps) and "-" not in form:
        assert reading.order == ("day-first" if dayfirst else "month-first")


def test_text_dates_generalize_by_time_not_by_masking_characters() -> None:
    texts = pd.Series(["2021/13/04 10:00", "2021/20/04 11:30", "2021/02/05 09:00", None])
    hierarchy = auto_hierarchy("when", texts)
    rows = {row[0]: row[1:] for row in hierarchy.table}
    # the text is the leaf; the levels that group nothing (each value its own day) or put
    # every value in one group (the year) are left out
    assert rows["2021/13/04 10:00"] == ["2021-04", "2021-Q2", "*"]
    assert rows["2021/02/05 09:00"][0] == "2021-05"
    month = Generalize(date="week").fit_transform(texts.to_frame("when"))["when"]
    assert month.tolist()[:3] == ["2021-W15", "2021-W16", "2021-W17"]


def test_anonymize_generalizes_text_event_dates_and_stops_on_values_that_are_no_dates() -> None:
    days = pd.date_range("2021-04-01", periods=120, freq="13h")
    frame = pd.DataFrame(
        {
            "admitted": [f"{d:%Y/%d/%m %H:%M} " for d in days],  # day-first text, as exported
            "ward": ["A", "B", "C"] * 40,
        }
    )
    # June's 7 rows split over 3 wards cannot stay by month: 10% may be withheld for them
    release = anonymize(frame, {"privacy": {"k": 5, "max_suppression": 0.1}})
    assert release.data["admitted"].str.fullmatch(r"2021-0[45]").all()
    frame.loc[7, "admitted"] = "2021/16/04 20:26:97"
    with pytest.raises(InputError, match="row 8: '2021/16/04 20:26:97'.*--coerce-dates"):
        anonymize(frame, {"privacy": {"k": 5}})

"""scan(): roles from names and values, embedded PII, risk, accuracy on Faker tables."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scan.faker_tables import LOCALES, make_table, role_accuracy
from veil.demo import demo_data
from veil.scan import assess, core, scan
from veil.scan.core import held_identifiers
from veil.scan.hints import read_name, tokens


def test_kenyan_sample_finds_ids_and_kra_pins() -> None:
    result = scan(demo_data())
    assert result.column("ID_number").entity == "KE_NATIONAL_ID"
    assert result.column("Tax_id").entity == "KE_KRA_PIN"
    assert result.column("Illness_category").role.value == "sensitive"
    # when a client joined, to the minute, is an event an insider saw: a quasi-identifier
    # and so is the number of dependants (a household's size), which the name says
    assert set(result.quasi_identifiers) == {
        "County",
        "Gender",
        "Age",
        "Marital_status",
        "No_of_dependents",
        "Date_of_entry",
    }
    assert result.column("Date_of_entry").entity == "EVENT_DATE"
    assert result.column("No_of_dependents").entity == "HOUSEHOLD"
    for name in ("Tier", "Policy_limit", "Retention"):
        assert result.column(name).role.value == "insensitive"


def test_opaque_headers_are_classified_from_values() -> None:
    data = demo_data()
    opaque = data.set_axis([f"c{i:02d}" for i in range(data.shape[1])], axis=1)
    named, hidden = scan(data), scan(opaque)
    for a, b in zip(named.columns, hidden.columns, strict=True):
        if a.entity == "HOUSEHOLD":  # 0-7 dependants: any small count, only the name tells
            assert b.role.value == "insensitive"
            continue
        assert a.role == b.role, (a.name, a.role, b.role, b.evidence)
    assert hidden.column("c14").entity == "KE_KRA_PIN"


@pytest.mark.parametrize(
    ("name", "entity"),
    [
        ("barua_pepe", "EMAIL"),
        ("EmailAddress", "EMAIL"),
        ("nambari_ya_simu", "PHONE"),
        ("simu", "PHONE"),
        ("jina_kamili", "PERSON"),
        ("kitambulisho", "KE_NATIONAL_ID"),
        ("umri", "AGE"),
        ("jinsia", "GENDER"),
        ("kaunti", "LOCATION"),
        ("DateOfBirth", "DATE_OF_BIRTH"),
        ("MonthlyIncome", "INCOME"),
        ("KRA_PIN", "KE_KRA_PIN"),
    ],
)
def test_names_in_english_and_swahili(name: str, entity: str) -> None:
    assert read_name(name)[0].entity == entity


def test_company_name_is_not_a_person() -> None:
    assert "PERSON" not in {h.entity for h in read_name("company_name")}
    assert tokens("customerIDNumber") == ["customer", "id", "number"]


def test_emails_inside_notes_make_the_column_an_identifier() -> None:
    rng = np.random.default_rng(0)
    notes = [
        f"Client called about the renewal of policy {i}."
        + (f" Reach her at wanjiku{i}@example.co.ke." if rng.random() < 0.3 else "")
        for i in range(300)
    ]
    finding = scan(pd.DataFrame({"c00": notes})).column("c00")
    assert finding.role.value == "identifier"
    assert finding.entity == "FREE_TEXT"
    assert finding.free_text
    truth = sum("@" in n for n in notes) / len(notes)
    assert finding.in_text == {"EMAIL": pytest.approx(truth, abs=1e-3)}
    first = next(i for i, n in enumerate(notes) if "@" in n)
    assert finding.evidence.startswith(
        f"free text: {100 * truth:.0f}% of cells contain an e-mail address (e.g. row {first + 1})"
    )


@pytest.mark.parametrize("share", [0.02, 0.38])
def test_identifiers_among_a_few_values_make_the_column_an_identifier(share: float) -> None:
    """``none`` in most rows, a bare e-mail address or a card number in the others: too few
    for the recognizers, which ask for 60% of the values, and no prose to search; still a
    column that carries direct identifiers. (Before, a release of adult grown to 1M rows with
    such a column, 39% of it addresses, put them all out as they were.)"""
    rng = np.random.default_rng(1)
    rows = 30_000
    mails = [f"wanjiku{i}@example.co.ke" for i in range(rows)]
    cards = ["4111 1111 1111 1111", "5500 0000 0000 0004"]
    for values in (mails, [cards[i % 2] for i in range(rows)]):
        cells = np.where(rng.random(rows) < share, values, "none")
        finding = scan(pd.DataFrame({"contact": cells})).column("contact")
        assert finding.role.value == "identifier", finding.evidence
        assert finding.entity == "FREE_TEXT"
        # 38% of values, interleaved: prose to search as well; 2%: only among the values
        assert finding.evidence.endswith("too few for the column to read as one") or share > 0.3


def test_categories_with_no_confirmed_identifier_stay_as_they_were() -> None:
    """Words of categories may be names or places: only identifiers a checksum, a parse or
    their form confirm count among few values, so a category column is not made personal; nor
    is a column of dates whose digits also parse as phone numbers (it did in the review)."""
    rng = np.random.default_rng(2)
    words = ["Nairobi", "Kisumu", "Wanjiku", "none", "Otieno", "ICU", "ward 4", "A-12"]
    cells = rng.choice(words, 5_000)
    finding = scan(pd.DataFrame({"unit": cells})).column("unit")
    assert finding.entity != "FREE_TEXT", finding.evidence
    assert "too few for the column" not in finding.evidence
    # German dates of birth, whose digits phonenumbers also parses as phone numbers
    days = pd.Timestamp("1930-01-01") + pd.to_timedelta(rng.integers(0, 30_000, 5_000), "D")
    born = scan(pd.DataFrame({"Geburtsdatum": days.strftime("%d.%m.%Y")})).column("Geburtsdatum")
    assert born.entity == "DATE_OF_BIRTH", born.evidence


def test_a_sweep_of_every_value_finds_what_the_sample_misses() -> None:
    """One e-mail address in 30,000 rows is seldom among the scan's 1,000 sampled values: the
    sample lets the column through, and ``held_identifiers`` (a search of every value, which
    the scan and a release run on every column they find harmless) finds it, with its row. A
    phone number needs a second value (one number may parse as one by chance); categories,
    codes and dates hold none."""
    cells = pd.Series(["none", "see file"] * 15_000)
    cells[12_345] = "write to jane.doe@example.org"
    remark = pd.DataFrame({"remark": cells})
    assert core.scan(remark, sweep=False).column("remark").role.value == "insensitive"
    found = scan(remark).column("remark")  # every value searched
    assert (found.role.value, found.entity) == ("identifier", "FREE_TEXT")
    held = held_identifiers(cells)
    assert held is not None
    assert held.rows == (12_345,)
    assert str(held) == "row 12,346 holds an e-mail address"
    cells = pd.Series(["none"] * 30_000, dtype="string[pyarrow]")
    cells[100] = "0712 345 678"
    assert held_identifiers(cells) is None
    cells[29_000] = "simu +254 722 000 111"
    cells[29_001] = "simu +254 722 000 111"
    assert str(held_identifiers(cells)) == "rows 101 and 29,001 hold a phone number"
    rng = np.random.default_rng(3)
    days = pd.Timestamp("1930-01-01") + pd.to_timedelta(rng.integers(0, 30_000, 5_000), "D")
    stamps = days + pd.to_timedelta(rng.integers(0, 86_400_000_000, 5_000), "us")
    for harmless in (
        pd.Series(rng.choice(["Nairobi", "ICU", "ward 4", "A-12", "E11.9", "J45"], 5_000)),
        pd.Series(days.strftime("%d.%m.%Y")),  # dates whose digits parse as phone numbers
        pd.Series(stamps.strftime("%Y-%m-%d %H:%M:%S.%f")),  # and times as well
        pd.Series(rng.integers(0, 10**10, 5_000)),  # numbers: the scan's recognizers' own
    ):
        assert held_identifiers(harmless) is None, held_identifiers(harmless)


def test_one_value_listing_phone_numbers_is_enough() -> None:
    """One cell of IBM's HR table listing 200 phone numbers: one number may parse as a phone
    number by chance, two different ones in one value do not, so the search of every value
    names the row (it let the cell through before: a single distinct value). The same number
    twice in one value is still one."""
    hr = pd.read_csv(Path(__file__).parents[1] / "data" / "ibm_hr_attrition.csv")
    department = hr["Department"].astype(object)
    assert held_identifiers(department) is None  # the real column holds none
    rng = np.random.default_rng(3)
    numbers = [
        f"+254 7{rng.integers(10, 99)} {rng.integers(100, 999)} 1{i:02d}" for i in range(200)
    ]
    listed = department.copy()
    listed[700] = "Sales; contacts: " + ", ".join(numbers)
    assert str(held_identifiers(listed)) == "row 701 holds a phone number"
    assert scan(hr.assign(Department=listed)).column("Department").held is not None
    twice = department.copy()
    twice[700] = f"Sales; call {numbers[0]} or {numbers[0]}"
    assert held_identifiers(twice) is None


def test_json_shape() -> None:
    result = scan(demo_data()).to_dict()
    assert set(result) >= {"columns", "quasi_identifiers", "risk"}
    keys = {"name", "role", "entity", "confidence", "evidence", "distinct_ratio", "null_ratio"}
    for column in result["columns"]:
        assert keys <= set(column)
        assert 0 <= column["confidence"] <= 1


def test_risk_agrees_with_pandas_groupby() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 5, 2000),
            "b": rng.choice(["x", "y", None], 2000),
            "c": rng.integers(0, 40, 2000),
        }
    )
    risk = assess(frame, ["a", "b", "c"])
    sizes = frame.groupby(["a", "b", "c"], dropna=False).size()
    assert risk.unique_rows == int((sizes == 1).sum())
    assert risk.k == sizes.min()
    assert risk.classes == len(sizes)
    for combo in risk.most_identifying:
        by = frame.groupby(combo["columns"], dropna=False).size()
        assert combo["unique_rows"] == int((by == 1).sum())
    worst = risk.most_identifying[0]["unique_rows"]
    assert all(worst >= c["unique_rows"] for c in risk.most_identifying)


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize(("opaque", "target"), [(False, 0.95), (True, 0.85)])
def test_role_accuracy_on_faker_tables(locale: str, opaque: bool, target: float) -> None:
    frame, truth = make_table(locale, 300, seed=11, opaque=opaque)
    result = scan(frame)
    predicted = {c.name: c.role.value for c in result.columns}
    accuracy = role_accuracy(predicted, truth)
    wrong = {c: (truth[c][0], predicted[c]) for c in truth if predicted[c] != truth[c][0]}
    assert accuracy >= target, wrong


def test_names_about_something_else_are_not_misread() -> None:
    """IBM HR / insurance column names: 'Job' in JobSatisfaction is no occupation, numbers
    30-100 called HourlyRate are no ages, a distinct MonthlyRate is no key to a person (but,
    with one value per person, a quasi-identifier)."""
    rng = np.random.default_rng(4)
    n = 500
    frame = pd.DataFrame(
        {
            "HourlyRate": rng.integers(30, 101, n),
            "JobSatisfaction": rng.integers(1, 5, n),
            "Vehicle_Age": rng.choice(["< 1 Year", "1-2 Year", "> 2 Years"], n),
            "MonthlyRate": rng.permutation(np.arange(2000, 2000 + n * 50, 50)),
            "JobRole": rng.choice(["Sales Executive", "Research Scientist", "Manager"], n),
            "c03": rng.integers(18, 90, n),  # an opaque name: the values alone decide
        }
    )
    found = {c.name: c for c in scan(frame).columns}
    for name in ("HourlyRate", "JobSatisfaction", "Vehicle_Age"):
        assert found[name].role.value == "insensitive", (name, found[name].evidence)
    assert found["MonthlyRate"].role.value == "quasi_identifier"
    assert found["MonthlyRate"].entity == "UNIQUE_NUMBER"
    assert found["JobRole"].entity == "OCCUPATION"
    assert found["c03"].entity == "AGE"


@pytest.mark.parametrize(
    ("name", "opaque"),
    [
        ("c00", True),
        ("col_3", True),
        ("V12", True),
        ("Unnamed: 0", True),
        ("age", False),
        ("sex", False),
        ("HourlyRate", False),
    ],
)
def test_opaque_names(name: str, opaque: bool) -> None:
    from veil.scan.hints import is_opaque

    assert is_opaque(name) is opaque


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", None]),
            st.integers(0, 3),
            st.sampled_from([0.5, float("nan"), 2.0]),
            st.sampled_from(["x", "y"]),
        ),
        min_size=1,
        max_size=60,
    )
)
def test_the_most_identifying_combinations_are_counted_on_every_row(rows: list[Any]) -> None:
    """The smaller combinations' classes, rolled up from the classes on all the
    quasi-identifiers, are those counted on every row of the table."""
    from itertools import combinations

    from veil.frequency import class_sizes

    frame = pd.DataFrame(rows, columns=["p", "q", "r", "s"])
    qis = list(frame.columns)
    measured = assess(frame, qis, top=100)
    counted = []
    for size in (1, 2, 3):
        for columns in combinations(qis, size):
            _, sizes = class_sizes(frame, list(columns))
            counted.append(
                {
                    "columns": list(columns),
                    "unique_rows": int((sizes == 1).sum()),
                    "uniqueness": int((sizes == 1).sum()) / len(frame),
                    "k": int(sizes.min()),
                }
            )
    counted.sort(key=lambda c: (-c["unique_rows"], len(c["columns"])))
    assert [dict(c) for c in measured.most_identifying] == counted


def test_a_tie_between_entities_goes_the_same_way_in_every_process() -> None:
    """``none`` is a religion and a health state alike (the same score): the scan called such a
    column one or the other as each process's string hashes ordered a set. Four processes with
    four hash seeds now give one finding."""
    import subprocess
    import sys

    program = (
        "import pandas as pd, veil; "
        "t = pd.DataFrame({'remark': ['none'] * 2000 + ['see file'] * 3}); "
        "f = veil.scan(t).column('remark'); print(f.role.value, f.entity)"
    )
    found = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True
        )
        found.add(done.stdout.strip())
    assert len(found) == 1, found
    assert found.pop().startswith("sensitive ")

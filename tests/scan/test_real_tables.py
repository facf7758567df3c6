"""The scan on real tables it was not written against (issue 15's mistakes, each a test):
free text, a clinical table, vital-sign readings, an HR table, an insurer's event dates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.demo import demo_data
from veil.io import read
from veil.scan import scan

DATA = Path(__file__).parents[1] / "data"


def roles(path: Path) -> dict[str, tuple[str, str | None]]:
    found = scan(read(path))
    return {c.name: (c.role.value, c.entity) for c in found.columns}


def test_a_clinical_table_is_health_data_and_its_diagnosis_is_sensitive() -> None:
    result = scan(read(DATA / "heart.csv"))
    assert result.health_data
    got = {c.name: c.role.value for c in result.columns}
    assert got.pop("age") == got.pop("sex") == "quasi_identifier"
    assert set(got.values()) == {"sensitive"}, got  # cp, trestbps, chol ... thal, target
    assert result.column("target").entity == "HEALTH"
    assert any(
        "the whole table is special-category data" in line for line in result.category_lines()
    )


def test_vital_signs_are_health_data_and_a_status_word_is_no_place() -> None:
    got = roles(DATA / "organs_vitals.csv")
    assert got["Status"] == ("sensitive", "HEALTH")  # "Well" is also a place name somewhere
    assert got["Reading"] == ("sensitive", "HEALTH")
    assert got["Observation"] == ("sensitive", "HEALTH")
    assert got["Date"] == ("quasi_identifier", "EVENT_DATE")  # trailing space, mixed order


@pytest.mark.parametrize(
    ("column", "role", "entity"),
    [
        ("YearsAtCompany", "quasi_identifier", "TENURE"),
        ("TotalWorkingYears", "quasi_identifier", "TENURE"),
        ("Department", "quasi_identifier", "DEPARTMENT"),
        ("EducationField", "quasi_identifier", "EDUCATION"),
        ("PerformanceRating", "sensitive", "EMPLOYMENT_RECORD"),
        ("Attrition", "sensitive", "EMPLOYMENT_RECORD"),
        ("MonthlyRate", "quasi_identifier", "UNIQUE_NUMBER"),  # 1,427 distinct in 1,470
        ("MonthlyIncome", "sensitive", "INCOME"),
        ("EmployeeNumber", "identifier", None),
        ("JobSatisfaction", "insensitive", None),
        ("OverTime", "insensitive", None),
    ],
)
def test_hr_quasi_identifiers_and_judgements(column: str, role: str, entity: str | None) -> None:
    assert hr_roles()[column] == (role, entity)


_HR: dict[str, tuple[str, str | None]] = {}


def hr_roles() -> dict[str, tuple[str, str | None]]:
    if not _HR:
        _HR.update(roles(DATA / "ibm_hr_attrition_full.csv"))
    return _HR


def test_the_department_is_read_from_its_values_too() -> None:
    frame = read(DATA / "ibm_hr_attrition_full.csv")[["Department"]].set_axis(["c1"], axis=1)
    assert scan(frame).column("c1").entity == "DEPARTMENT"


def test_an_insurers_entry_timestamp_is_a_quasi_identifier() -> None:
    finding = scan(demo_data()).column("Date_of_entry")
    assert (finding.role.value, finding.entity) == ("quasi_identifier", "EVENT_DATE")


@pytest.mark.parametrize("header", ["zip", "postcode", "PLZ", "code_postal"])
def test_many_distinct_5_digit_postcodes_are_quasi_identifiers_not_ids(header: str) -> None:
    rng = np.random.default_rng(0)
    codes = [f"{x:05d}" for x in rng.integers(1000, 99999, 1000)]  # ~990 distinct in 1,000
    found = scan(pd.DataFrame({header: codes, "age": rng.integers(18, 90, 1000)})).columns[0]
    assert (found.role.value, found.entity) == ("quasi_identifier", "POSTCODE")


def test_a_german_patient_list_reads_in_german() -> None:
    rng = np.random.default_rng(1)
    n = 600
    frame = pd.DataFrame(
        {
            "Geschlecht": rng.choice(["weiblich", "männlich", "divers"], n, p=[0.5, 0.48, 0.02]),
            "Konfession": rng.choice(["evangelisch", "römisch-katholisch", "konfessionslos"], n),
            "Diagnose": rng.choice(
                [
                    "Diabetes mellitus Typ 2",
                    "Hypertonie",
                    "Asthma bronchiale",
                    "Depression",
                    "Migräne",
                ],
                n,
            ),
            "Versichertennummer": [f"A{x}" for x in rng.choice(10**9, n, replace=False)],
            "capital_gain": rng.choice([0, 0, 0, 2174, 14084, 5178], n),
        }
    )
    got = {c.name: (c.role.value, c.entity) for c in scan(frame).columns}
    assert got["Geschlecht"] == ("quasi_identifier", "GENDER")
    assert got["Konfession"] == ("sensitive", "RELIGION")
    assert got["Diagnose"] == ("sensitive", "HEALTH")  # five repeated phrases: no free text
    assert got["Versichertennummer"][0] == "identifier"
    assert got["capital_gain"] == ("sensitive", "FINANCIAL")


def test_wordy_categories_are_no_free_text_but_a_column_of_notes_is() -> None:
    rng = np.random.default_rng(2)
    countries = [
        "United-States",
        "Puerto-Rico",
        "El-Salvador",
        "Dominican-Republic",
        "Trinadad&Tobago",
        "Outlying-US(Guam-USVI-etc)",
        "South-Africa",
    ]
    values = [*rng.choice(countries, 30_000), "Holand-Netherlands"]  # one singleton
    found = scan(pd.DataFrame({"native_country": values})).columns[0]
    assert not found.free_text
    # in a small table (a federated party's share) a rare category is 1 row in 500
    jobs = [
        "Machine-op-inspct",
        "Handlers-cleaners",
        "Farming-fishing",
        "Tech-support",
        "Protective-serv",
        "Exec-managerial",
        "Prof-specialty",
    ]
    small = [*rng.choice(jobs, 500), "Armed-Forces"]
    assert not scan(pd.DataFrame({"occupation": small})).columns[0].free_text
    notes = list(rng.choice(["No change to the plan.", "Renewal sent by post."], 30_000))
    notes[::500] = [f"Customer {i} asked for the claim form again." for i in range(60)]
    assert scan(pd.DataFrame({"notes": notes})).columns[0].free_text  # 60 written once


@pytest.mark.parametrize(
    ("path", "column"),
    [
        ("surveys/HealthInsurance.csv.gz", "ethnicity"),  # cauc, afam, other
        ("surveys/CPS1985.csv.gz", "ethnicity"),  # cauc, hispanic, other
        ("surveys/acs12.csv.gz", "race"),
        ("surveys/Wage.csv.gz", "race"),  # 1. White, 2. Black...
        ("arx_adult/adult.csv.gz", "race"),
        ("arx_fars/fars_subset.csv.gz", "irace"),  # 58% "Not a fatal(N/A)", 5% "Unknown"
    ],
)
def test_a_race_column_is_read_from_its_values_under_a_name_that_says_nothing(
    path: str, column: str
) -> None:
    """Race is special-category data: a column of races is found by its values, whatever it
    is called (FARS's ``irace`` was insensitive: its census categories were not in the word
    list, and answers saying the race is not known counted against it)."""
    table = read(DATA / path).rename(columns={column: "v7"})
    found = scan(table).column("v7")
    assert (found.role.value, found.entity) == ("quasi_identifier", "ETHNICITY")


def test_answers_that_say_nothing_make_no_column_a_vocabulary_s() -> None:
    """A column of "Unknown" and "N/A" is of no vocabulary, nor are colours with black and
    white among them."""
    rng = np.random.default_rng(3)
    table = pd.DataFrame(
        {
            "a": rng.choice(["Unknown", "N/A", "Not stated", "Refused"], 600),
            "b": rng.choice(["black", "white", "red", "blue", "green", "yellow"], 600),
        }
    )
    found = scan(table)
    assert found.column("a").entity is None
    assert found.column("b").entity != "ETHNICITY"

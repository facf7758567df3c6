"""Labelled tables for bench/scan_accuracy.py beyond the Faker customer tables: the real tables
in ../shared/datasets (labels written here, by judgement, before looking at what veil says,
and kept when it disagreed) and four generated tables of kinds veil was not built against (a
Kenyan clinic, an HR register, a German patient list, a British customer list).

    for name, frame, truth in real_tables(): ...       # truth: column -> role
    for name, frame, truth in generated_tables(rows, seed): ...

Labels follow GDPR/Kenya DPA readings: direct identifiers `identifier`; what an acquaintance
or a public record knows (age, sex, place, dates of events, job, tenure, the size of a
household) `quasi_identifier`; special categories, money and judgements about a person
`sensitive`, except racial or ethnic origin, which others see or record, so a quasi-identifier
(relabelled so with the first-try work, as the scan now reads it); the rest `insensitive`.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
from faker import Faker

from veil.io import read

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "datasets"
TESTS = ROOT / "tests" / "data"

ID, Q, S, N = "identifier", "quasi_identifier", "sensitive", "insensitive"

HR_LABELS = {
    "Age": Q,
    "Attrition": S,
    "BusinessTravel": N,
    "DailyRate": S,
    "Department": Q,
    "DistanceFromHome": N,
    "Education": Q,
    "EducationField": Q,
    "EmployeeCount": N,
    "EmployeeNumber": ID,
    "EnvironmentSatisfaction": N,
    "Gender": Q,
    "HourlyRate": S,
    "JobInvolvement": N,
    "JobLevel": Q,
    "JobRole": Q,
    "JobSatisfaction": N,
    "MaritalStatus": Q,
    "MonthlyIncome": S,
    "MonthlyRate": Q,
    "NumCompaniesWorked": N,
    "Over18": N,
    "OverTime": N,
    "PercentSalaryHike": S,
    "PerformanceRating": S,
    "RelationshipSatisfaction": N,
    "StandardHours": N,
    "StockOptionLevel": S,
    "TotalWorkingYears": Q,
    "TrainingTimesLastYear": N,
    "WorkLifeBalance": N,
    "YearsAtCompany": Q,
    "YearsInCurrentRole": Q,
    "YearsSinceLastPromotion": Q,
    "YearsWithCurrManager": Q,
}
ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income",
]
ADULT_LABELS = {
    "age": Q,
    "workclass": Q,
    "fnlwgt": N,
    "education": Q,
    "education_num": Q,
    "marital_status": Q,
    "occupation": Q,
    "relationship": Q,
    "race": Q,
    "sex": Q,
    "capital_gain": S,
    "capital_loss": S,
    "hours_per_week": N,
    "native_country": Q,
    "income": S,
}
CROSS_SELL_LABELS = {
    "id": ID,
    "Gender": Q,
    "Age": Q,
    "Driving_License": N,
    "Region_Code": Q,
    "Previously_Insured": N,
    "Vehicle_Age": N,
    "Vehicle_Damage": N,
    "Annual_Premium": N,
    "Policy_Sales_Channel": N,
    "Vintage": N,
    "Response": N,
}
KE_INSURANCE_LABELS = {
    "id": ID,
    "County": Q,
    "Gender": Q,
    "Marital_status": Q,
    "No_of_dependents": Q,
    "Age": Q,
    "Tier": N,
    "Policy_limit": N,
    "Illness_category": S,
    "Date_of_entry": Q,
    "Updated_subscription": N,
    "Account_withdrawal": N,
    "Retention": N,
    "ID_number": ID,
    "Tax_id": ID,
}

Labelled = tuple[str, pd.DataFrame, dict[str, str]]


def real_tables(rows: int = 5000) -> Iterator[Labelled]:
    """The real tables (the first ``rows`` rows); those under ../shared only when it exists."""
    heart = read(TESTS / "heart.csv")
    yield "heart (UCI, clinical)", heart, {c: Q if c in ("age", "sex") else S for c in heart}
    yield (
        "organs vitals (Kenya, readings)",
        read(TESTS / "organs_vitals.csv"),
        {"Date": Q, "Instrument": S, "Reading": S, "Observation": S, "Status": S},
    )
    yield "IBM HR attrition", read(TESTS / "ibm_hr_attrition_full.csv"), HR_LABELS
    if not SHARED.exists():
        return
    adult = pd.read_csv(
        SHARED / "adult_census" / "adult.data",
        header=None,
        names=ADULT_COLUMNS,
        skipinitialspace=True,
        nrows=rows,
    )
    yield "adult census (held out)", adult, ADULT_LABELS
    sell = read(SHARED / "health_insurance_cross_sell" / "train_subset_30pct_original_encoding.csv")
    yield "insurance cross-sell (held out)", sell.head(rows), CROSS_SELL_LABELS
    ke = read(SHARED / "kenya_insurance" / "Insurance_data_ke_with_ids.csv")
    yield "Kenyan insurance with IDs", ke.head(rows), KE_INSURANCE_LABELS


def generated_tables(rows: int = 1000, seed: int = 0) -> Iterator[Labelled]:
    rng = np.random.default_rng(seed)

    def choice(values: list | tuple, p: list[float] | None = None) -> np.ndarray:  # type: ignore[type-arg]
        return rng.choice(np.array(values, dtype=object), rows, p=p)

    def dates(start: str, days: int, hours: bool = False) -> pd.Series:
        offsets = pd.to_timedelta(
            rng.integers(0, days * (24 if hours else 1), rows), "h" if hours else "D"
        )
        return pd.Series(pd.Timestamp(start) + offsets)

    ke = Faker("en_KE")
    ke.seed_instance(seed)
    admitted = dates("2022-01-01", 700, hours=True)
    clinic = pd.DataFrame(
        {
            "patient_no": [
                f"KNH/{y}/{n:06d}"
                for y, n in zip(
                    rng.integers(2015, 2024, rows), rng.permutation(rows) + 1, strict=True
                )
            ],
            "patient_name": [ke.name() for _ in range(rows)],
            "yob": rng.integers(1940, 2015, rows),
            "sex": choice(["M", "F"]),
            "sub_county": choice(
                [
                    "Kibra",
                    "Langata",
                    "Embakasi East",
                    "Kasarani",
                    "Ruaraka",
                    "Westlands",
                    "Dagoretti North",
                    "Starehe",
                    "Mathare",
                ]
            ),
            "admission_date": admitted.dt.strftime("%d/%m/%Y %H:%M"),  # day-first text, as exported
            "ward": choice(["Ward 4A", "Ward 5B", "ICU", "Maternity", "Paediatrics"]),
            "icd10": choice(["I10", "E11.9", "J45.909", "B50.9", "A15.0", "O80", "K35.80"]),
            "hba1c": rng.normal(6.4, 1.2, rows).round(1),
            "bp_systolic": rng.normal(128, 18, rows).round().astype(int),
            "hiv_status": choice(["Negative", "Positive", "Unknown"], [0.8, 0.1, 0.1]),
            "nhif_no": rng.choice(np.arange(10_000_000, 99_999_999), rows, replace=False),
            "bed_count": rng.integers(10, 40, rows),
            "cleaning_shift": choice(["A", "B", "C"]),
        }
    )
    yield (
        "generated: Kenyan clinic admissions",
        clinic,
        {
            "patient_no": ID,
            "patient_name": ID,
            "yob": Q,
            "sex": Q,
            "sub_county": Q,
            "admission_date": Q,
            "ward": S,
            "icd10": S,
            "hba1c": S,
            "bp_systolic": S,
            "hiv_status": S,
            "nhif_no": ID,
            "bed_count": N,
            "cleaning_shift": N,
        },
    )

    us = Faker("en_US")
    us.seed_instance(seed)
    hired = dates("2005-01-01", 6500)
    hr = pd.DataFrame(
        {
            "emp_id": rng.permutation(rows) + 40_000,
            "work_email": [f"{us.user_name()}{i}@acme-corp.com" for i in range(rows)],
            "dept": choice(
                [
                    "Finance",
                    "Sales",
                    "Engineering",
                    "Human Resources",
                    "Legal",
                    "Operations",
                    "Customer Support",
                ]
            ),
            "title": [us.job() for _ in range(rows)],
            "hire_date": hired,
            "years_of_service": ((pd.Timestamp("2025-01-01") - hired).dt.days // 365).astype(int),
            "base_salary": (rng.lognormal(11, 0.35, rows) // 500 * 500).astype(int),
            "last_rating": choice(["Exceeds", "Meets", "Below", "Outstanding"]),
            "disciplinary_action": choice(
                ["None", "Verbal warning", "Written warning"], [0.85, 0.1, 0.05]
            ),
            "union_member": choice(["Yes", "No"]),
            "desk_floor": rng.integers(1, 12, rows),
            "laptop_model": choice(["X1 Carbon", "MacBook Air", "Latitude 7440"]),
        }
    )
    yield (
        "generated: HR register",
        hr,
        {
            "emp_id": ID,
            "work_email": ID,
            "dept": Q,
            "title": Q,
            "hire_date": Q,
            "years_of_service": Q,
            "base_salary": S,
            "last_rating": S,
            "disciplinary_action": S,
            "union_member": S,
            "desk_floor": N,
            "laptop_model": N,
        },
    )

    de = Faker("de_DE")
    de.seed_instance(seed)
    pool_plz = [de.postcode() for _ in range(300)]
    german = pd.DataFrame(
        {
            "Vorname": [de.first_name() for _ in range(rows)],
            "Nachname": [de.last_name() for _ in range(rows)],
            "Geburtsdatum": [
                de.date_of_birth(minimum_age=1, maximum_age=95).strftime("%d.%m.%Y")
                for _ in range(rows)
            ],
            "Geschlecht": choice(["weiblich", "männlich", "divers"], [0.5, 0.48, 0.02]),
            "PLZ": choice(pool_plz),
            "Krankenkasse": choice(["AOK", "TK", "Barmer", "DAK", "IKK classic"]),
            "Versichertennummer": [
                f"{rng.choice(list(string.ascii_uppercase))}{rng.integers(10**8, 10**9)}"
                for _ in range(rows)
            ],
            "Diagnose": choice(
                [
                    "Diabetes mellitus Typ 2",
                    "Hypertonie",
                    "Asthma bronchiale",
                    "Depression",
                    "Migräne",
                ]
            ),
            "Konfession": choice(
                ["evangelisch", "römisch-katholisch", "konfessionslos", "muslimisch"]
            ),
            "Aufnahmedatum": dates("2023-01-01", 365),
            "Station": choice(["Innere", "Chirurgie", "Neurologie"]),
            "Zimmertyp": choice(["Einzelzimmer", "Zweibettzimmer"]),
        }
    )
    yield (
        "generated: German patient list",
        german,
        {
            "Vorname": ID,
            "Nachname": ID,
            "Geburtsdatum": Q,
            "Geschlecht": Q,
            "PLZ": Q,
            "Krankenkasse": N,
            "Versichertennummer": ID,
            "Diagnose": S,
            "Konfession": S,
            "Aufnahmedatum": Q,
            "Station": S,
            "Zimmertyp": N,
        },
    )

    gb = Faker("en_GB")
    gb.seed_instance(seed)
    nhs = []
    while len(nhs) < rows:  # NHS numbers: 9 digits and a mod-11 check digit
        digits = rng.integers(0, 10, 9)
        check = 11 - int(sum(d * w for d, w in zip(digits, range(10, 1, -1), strict=True)) % 11)
        if check == 10:
            continue
        nhs.append("".join(map(str, digits)) + str(0 if check == 11 else check))
    pool_postcodes = [gb.postcode() for _ in range(400)]
    british = pd.DataFrame(
        {
            "customer_ref": [f"C{n:08d}" for n in rng.permutation(rows)],
            "name": [gb.name() for _ in range(rows)],
            "nhs_number": nhs,
            "postcode": choice(pool_postcodes),
            "date_of_birth": [
                gb.date_of_birth(minimum_age=18, maximum_age=90) for _ in range(rows)
            ],
            "ethnic_group": choice(
                [
                    "White British",
                    "Asian or Asian British",
                    "Black British",
                    "Mixed",
                    "Other ethnic group",
                ]
            ),
            "sort_code": [
                f"{rng.integers(10, 99)}-{rng.integers(10, 99)}-{rng.integers(10, 99)}"
                for _ in range(rows)
            ],
            "account_balance": rng.normal(2500, 1800, rows).round(2),
            "marketing_opt_in": choice(["Y", "N"]),
            "branch": choice(["Leeds", "Cardiff", "Glasgow", "Bristol"]),
            "product": choice(["Current account", "ISA", "Mortgage"]),
        }
    )
    yield (
        "generated: British bank customers",
        british,
        {
            "customer_ref": ID,
            "name": ID,
            "nhs_number": ID,
            "postcode": Q,
            "date_of_birth": Q,
            "ethnic_group": Q,
            "sort_code": ID,
            "account_balance": S,
            "marketing_opt_in": N,
            "branch": Q,
            "product": N,
        },
    )

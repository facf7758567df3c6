"""Realistic labelled tables made with Faker, for measuring how well `scan` finds roles.

Each table mixes identifiers, quasi-identifiers, sensitive and harmless columns as a data
team's customer table would, in one locale, with the truth for every column. Headers are
meaningful (English, or Swahili for `sw`) or opaque (`c00`, `c01`, ...).

Kenyan values Faker does not make (phones, national IDs, KRA PINs, counties, P.O. boxes) are
drawn here in their real formats; UK National Insurance numbers likewise, because Faker's
en_GB `ssn()` returns the invalid placeholder prefix ZZ.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from faker import Faker

from veil.scan.recognizers.ke.counties import COUNTY_PROVINCE

LOCALES = ("en_KE", "sw", "en_US", "en_GB", "de_DE", "fr_FR")

DIAGNOSES = (
    "Hypertension",
    "Diabetes",
    "Asthma",
    "Malaria",
    "Tuberculosis",
    "HIV",
    "Pneumonia",
    "Arthritis",
    "Depression",
    "Cancer",
    "Typhoid",
    "Healthy",
)
MARITAL = ("Single", "Married", "Divorced", "Widowed", "Separated")
SWAHILI_HEADERS = {
    "full_name": "jina_kamili",
    "email": "barua_pepe",
    "phone": "nambari_ya_simu",
    "national_id": "kitambulisho",
    "kra_pin": "kra_pin",
    "date_of_birth": "tarehe_ya_kuzaliwa",
    "age": "umri",
    "gender": "jinsia",
    "location": "kaunti",
    "marital_status": "hali_ya_ndoa",
    "occupation": "kazi",
    "diagnosis": "ugonjwa",
    "income": "mshahara",
    "address": "anwani",
    "notes": "maelezo",
    "customer_id": "nambari_ya_mteja",
}

Column = tuple[str, str | None, Callable[[int], list[Any]]]  # role, entity, make(n)


def _nino(rng: np.random.Generator) -> str:
    first = "ABCEGHJKLMNOPRSTWXYZ"
    second = "ABCEGHJKLMNPRSTWXYZ"
    while True:
        prefix = rng.choice(list(first)) + rng.choice(list(second))
        if prefix not in {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}:
            break
    digits = "".join(rng.choice(list(string.digits), 6))
    return f"{prefix} {digits[:2]} {digits[2:4]} {digits[4:]} {rng.choice(list('ABCD'))}"


def _pool(
    make: Callable[[], Any], rng: np.random.Generator, size: int = 60
) -> Callable[[int], list[Any]]:
    """Values drawn from a pool: people cluster in places, so postcodes repeat."""
    return lambda n: list(rng.choice([make() for _ in range(size)], n))


def _ke_phone(rng: np.random.Generator) -> str:
    n = "".join(rng.choice(list(string.digits), 8))
    style = rng.integers(3)
    if style == 0:
        return f"07{n}"
    if style == 1:
        return f"+254 7{n[:2]} {n[2:5]} {n[5:]}"
    return f"+2541{n}"


def make_table(
    locale: str, rows: int = 400, *, seed: int = 0, opaque: bool = False
) -> tuple[pd.DataFrame, dict[str, tuple[str, str | None]]]:
    """A table and its truth: column name -> (role, entity)."""
    fake = Faker(locale)
    fake.seed_instance(seed)
    rng = np.random.default_rng(seed)
    kenyan = locale in ("en_KE", "sw")
    counties = list(COUNTY_PROVINCE)

    def each(fn: Callable[[], Any]) -> Callable[[int], list[Any]]:
        return lambda n: [fn() for _ in range(n)]

    def notes(n: int) -> list[str]:
        out = []
        for _ in range(n):
            text = fake.sentence(nb_words=10)
            if rng.random() < 0.3:
                contact = _ke_phone(rng) if kenyan else fake.email()
                text += f" Call back on {contact} after lunch."
            out.append(text)
        return out

    columns: dict[str, Column] = {
        "customer_id": (
            "identifier",
            None,
            lambda n: [f"CUS-{i:07d}" for i in rng.permutation(n) + 1000],
        ),
        "full_name": ("identifier", "PERSON", each(fake.name)),
        "email": ("identifier", "EMAIL", each(fake.email)),
        "phone": (
            "identifier",
            "PHONE",
            each(lambda: _ke_phone(rng)) if kenyan else each(fake.phone_number),
        ),
        "credit_card": ("identifier", "CREDIT_CARD", each(fake.credit_card_number)),
        "iban": ("identifier", "IBAN", each(fake.iban)),
        "ip_address": ("identifier", "IP_ADDRESS", each(fake.ipv4)),
        "address": (
            "identifier",
            "ADDRESS",
            each(
                lambda: (
                    f"P.O. Box {rng.integers(1, 99999)}-{rng.integers(100, 90200):05d}"
                    f" {rng.choice(counties)}"
                )
            )
            if kenyan
            else each(lambda: fake.address().replace("\n", ", ")),
        ),
        "notes": ("identifier", "PHONE" if kenyan else "EMAIL", notes),
        "date_of_birth": (
            "quasi_identifier",
            "DATE_OF_BIRTH",
            each(lambda: pd.Timestamp(fake.date_of_birth(minimum_age=18, maximum_age=90))),
        ),
        "age": ("quasi_identifier", "AGE", lambda n: list(rng.integers(18, 91, n))),
        "gender": ("quasi_identifier", "GENDER", lambda n: list(rng.choice(["Female", "Male"], n))),
        "location": (
            "quasi_identifier",
            "LOCATION",
            lambda n: (
                list(rng.choice(counties, n)) if kenyan else [fake.country() for _ in range(n)]
            ),
        ),
        "marital_status": (
            "quasi_identifier",
            "MARITAL_STATUS",
            lambda n: list(rng.choice(MARITAL, n)),
        ),
        "occupation": ("quasi_identifier", "OCCUPATION", each(fake.job)),
        "diagnosis": ("sensitive", "HEALTH", lambda n: list(rng.choice(DIAGNOSES, n))),
        "income": (
            "sensitive",
            "INCOME",
            lambda n: list(np.round(rng.lognormal(10.5, 0.6, n), -2).astype(int)),
        ),
        "tier": ("insensitive", None, lambda n: list(rng.choice(["Bronze", "Silver", "Gold"], n))),
        "policy_limit": (
            "insensitive",
            None,
            lambda n: list(rng.choice([300_000, 500_000, 1_000_000], n)),
        ),
        "subscribed": ("insensitive", None, lambda n: list(rng.choice(["Yes", "No"], n))),
        # one decimal: a score many people share
        "risk_score": ("insensitive", None, lambda n: list(rng.normal(50, 12, n).round(1))),
        # a rate with nearly one value per person (IBM HR's MonthlyRate: 1,427 distinct in
        # 1,470) singles them out as an ID would (issue 15): a quasi-identifier
        "monthly_rate": (
            "quasi_identifier",
            "UNIQUE_NUMBER",
            lambda n: list(rng.integers(2_000, 27_000, n)),
        ),
        # a household's size: a quasi-identifier a person names (the issue of first tries)
        "dependents": ("quasi_identifier", "HOUSEHOLD", lambda n: list(rng.integers(0, 6, n))),
        # when a person joined is an event someone saw (issue 15): a QI
        "signup_date": (
            "quasi_identifier",
            "EVENT_DATE",
            lambda n: list(
                pd.Timestamp("2016-01-01") + pd.to_timedelta(rng.integers(0, 3000, n), "D")
            ),
        ),
        "channel": (
            "insensitive",
            None,
            lambda n: list(rng.choice(["web", "agent", "branch", "mobile app"], n)),
        ),
        "satisfaction": ("insensitive", None, lambda n: list(rng.integers(1, 6, n))),
    }
    if kenyan:
        columns["national_id"] = (
            "identifier",
            "KE_NATIONAL_ID",
            lambda n: list(rng.choice(np.arange(1_000_000, 40_000_000), n, replace=False)),
        )
        columns["kra_pin"] = (
            "identifier",
            "KE_KRA_PIN",
            each(
                lambda: (
                    f"{rng.choice(['A', 'P'])}{rng.integers(0, 10**9):09d}"
                    f"{rng.choice(list(string.ascii_uppercase))}"
                )
            ),
        )
    elif locale == "en_US":
        columns["ssn"] = ("identifier", "US_SSN", each(fake.ssn))
        columns["postcode"] = ("quasi_identifier", "POSTCODE", _pool(fake.zipcode, rng))
    elif locale == "en_GB":
        columns["national_insurance"] = ("identifier", "UK_NINO", each(lambda: _nino(rng)))
        columns["postcode"] = ("quasi_identifier", "POSTCODE", _pool(fake.postcode, rng))
    else:  # de_DE, fr_FR: national numbers veil has no recognizer for: a unique key still
        columns["national_id"] = ("identifier", None, each(fake.ssn))
        columns["postcode"] = ("quasi_identifier", "POSTCODE", _pool(fake.postcode, rng))

    data, truth = {}, {}
    for i, (name, (role, entity, make)) in enumerate(columns.items()):
        header = (
            f"c{i:02d}" if opaque else (SWAHILI_HEADERS.get(name, name) if locale == "sw" else name)
        )
        data[header] = make(rows)
        truth[header] = (role, entity)
    return pd.DataFrame(data), truth


def role_accuracy(predicted: dict[str, str], truth: dict[str, tuple[str, str | None]]) -> float:
    return sum(predicted[c] == role for c, (role, _) in truth.items()) / len(truth)

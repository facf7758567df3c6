"""Recognizers against tables of valid values and look-alikes (checksum-invalid cards, IBANs
and IDs; order numbers that are not phones)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.scan.core import sample_column
from veil.scan.recognizers.gb import UK_NINO, UK_POSTCODE
from veil.scan.recognizers.generic import (
    ADDRESS,
    CREDIT_CARD,
    EMAIL,
    IBAN,
    IP_ADDRESS,
    PHONE,
    URL,
)
from veil.scan.recognizers.ke import KE_KRA_PIN
from veil.scan.recognizers.special import ICD10
from veil.scan.recognizers.us import US_SSN

CASES = [
    # recognizer, value, recognized?
    (EMAIL, "jane.doe@example.co.ke", True),
    (EMAIL, "o'neil+news@mail.example.com", True),
    (EMAIL, "jane.doe@", False),
    (EMAIL, "@example.com", False),
    (EMAIL, "jane doe@example.com", False),
    (PHONE, "0712345678", True),
    (PHONE, "0722 000 111", True),
    (PHONE, "+254 712 345 678", True),
    (PHONE, "+254712345678", True),
    (PHONE, "254712345678", True),
    (PHONE, "+44 20 7946 0958", True),
    (PHONE, "(202) 456-1111", True),
    (PHONE, "ORD-12345678", False),  # order number
    (PHONE, "1234567890", False),  # unformatted 10 digits: an order or account number
    (PHONE, "2024-01-15", False),  # a date
    (PHONE, "12.345.678", False),  # an amount
    (PHONE, "+1 234", False),  # too short to be any number
    (CREDIT_CARD, "4111 1111 1111 1111", True),
    (CREDIT_CARD, "5500-0000-0000-0004", True),
    (CREDIT_CARD, "340000000000009", True),
    (CREDIT_CARD, "4111 1111 1111 1112", False),  # Luhn fails
    (CREDIT_CARD, "1234567812345678", False),  # Luhn fails
    (CREDIT_CARD, "9111111111111111", False),  # no card network starts with 9
    (IBAN, "GB82 WEST 1234 5698 7654 32", True),
    (IBAN, "DE89370400440532013000", True),
    (IBAN, "GB82 WEST 1234 5698 7654 33", False),  # mod-97 fails
    (IBAN, "XX00 0000 0000 0000 0000 00", False),
    (KE_KRA_PIN, "A004416331M", True),
    (KE_KRA_PIN, "P051365947M", True),
    (KE_KRA_PIN, "N690674664H", True),  # the shape, without python-stdnum's A/P rule
    (KE_KRA_PIN, "A00441633M", False),  # 8 digits
    (KE_KRA_PIN, "12345678901", False),
    (US_SSN, "123-45-6789", True),
    (US_SSN, "666-12-3456", False),  # area 666 is never issued
    (US_SSN, "000-12-3456", False),
    (US_SSN, "123-00-6789", False),
    (UK_NINO, "AB 12 34 56 C", True),
    (UK_NINO, "JG103759A", True),
    (UK_NINO, "GB 12 34 56 A", False),  # prefix never issued
    (UK_NINO, "QQ 12 34 56 A", False),  # Q is not a first letter
    (UK_NINO, "AB 12 34 56 E", False),  # suffix A-D only
    (IP_ADDRESS, "192.168.1.20", True),
    (IP_ADDRESS, "2001:db8::1", True),
    (IP_ADDRESS, "999.1.1.1", False),
    (IP_ADDRESS, "1.2.3", False),
    (URL, "https://example.com/profile/42", True),
    (URL, "www.jumia.co.ke", True),
    (URL, "example", False),
    (URL, "http:/bad", False),
    (ADDRESS, "P.O. Box 1234-00100 Nairobi", True),
    (ADDRESS, "221B Baker Street, London NW1 6XE", True),
    (ADDRESS, "4759 William Haven Apt. 194, West Corey, CA 90152", True),
    (ADDRESS, "Ziegertallee 8/6, 82421 Perleberg", True),
    (ADDRESS, "56, chemin Isabelle Carpentier, 64242 Joly", True),
    (ADDRESS, "Nairobi", False),
    (ADDRESS, "Gold", False),
    (UK_POSTCODE, "SW1A 1AA", True),
    (UK_POSTCODE, "M8T 4ED", True),
    (UK_POSTCODE, "SW1A 1A", False),
    (ICD10, "E11.9", True),
    (ICD10, "J45", True),
    (ICD10, "Z99999", False),
]


@pytest.mark.parametrize(
    ("recognizer", "value", "expected"),
    CASES,
    ids=[f"{r.entity}:{v}" for r, v, _ in CASES],
)
def test_value(recognizer, value: str, expected: bool) -> None:
    assert (recognizer.score_value(value) > 0) is expected


def test_checksum_confirmation_scores_higher_than_shape() -> None:
    assert KE_KRA_PIN.score_value("A004416331M") == 1.0  # python-stdnum confirms
    assert KE_KRA_PIN.score_value("N690674664H") < 1.0  # shape only


def column(values: list, name: str = "c00"):
    return sample_column(name, pd.Series(values), sample_size=1000)


def test_column_of_look_alikes_is_not_phones() -> None:
    rng = np.random.default_rng(1)
    orders = [f"{v}" for v in rng.integers(1_000_000_000, 9_999_999_999, 300)]
    assert PHONE.check(column(orders)) is None
    cards_bad = ["4111 1111 1111 1112"] * 300
    assert CREDIT_CARD.check(column(cards_bad)) is None


def test_validation_share_is_extrapolated_to_all_rows() -> None:
    """Half the card-shaped values fail Luhn: the evidence says about half, not all."""
    good = ["4111 1111 1111 1111", "5500 0000 0000 0004"] * 100
    bad = ["4111 1111 1111 1112"] * 200
    evidence = CREDIT_CARD.check(column(good + bad))
    assert evidence is None  # 50% is below the 60% needed to call the column cards
    evidence = CREDIT_CARD.check(column(good * 4 + bad))
    assert evidence is not None
    assert evidence.score == pytest.approx(0.8, abs=0.02)


def test_every_fact_about_an_entity_is_declared_beside_its_recognizer(monkeypatch) -> None:
    from veil.scan import recognizers
    from veil.scan.core import ROLE_OF
    from veil.scan.hints import read_name
    from veil.scan.recognizers import ENTITY_INFO, RECOGNIZERS, TEXT_RECOGNIZERS, vocabulary
    from veil.scan.recognizers.countries import COUNTRIES
    from veil.scan.text import text_entities
    from veil.suggest import SHAPED_IDS

    reported = {getattr(r, "entity", None) for r in RECOGNIZERS} - {None}
    assert reported <= set(ENTITY_INFO) == set(ROLE_OF)
    assert {c.__name__.rsplit(".", 1)[1] for c in COUNTRIES} == {"gb", "ke", "us"}
    assert {"KE_NATIONAL_ID", "KE_KRA_PIN", "US_SSN", "UK_NINO"} == SHAPED_IDS
    in_text = {e.name for e in ENTITY_INFO.values() if e.in_text}
    # names are found by the gazetteer in veil.scan.text, every other by its own patterns
    assert {r.entity for r in TEXT_RECOGNIZERS} | {"PERSON"} == in_text == set(text_entities())
    assert read_name("kitambulisho")[0].entity == "KE_NATIONAL_ID"  # ke/ declares the words
    assert "nyeri" in vocabulary.places()  # and its counties, for the location vocabulary

    class Undeclared:
        entity = "PASSPORT_XX"

        def check(self, column):  # pragma: no cover - never run
            return None

    monkeypatch.setattr(recognizers, "RECOGNIZERS", (*RECOGNIZERS, Undeclared()))
    with pytest.raises(RuntimeError, match="which no module declares"):
        recognizers._check_declarations()

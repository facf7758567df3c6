"""The phone numbers' fast path says what phonenumbers says: phonenumbers itself (``parse``,
``is_valid_number``, ``is_possible_number``, region by region) is the oracle, on Faker's
numbers in every locale, on numbers built around every country code and international and
national prefix, and on random texts of the fast path's alphabet."""

from __future__ import annotations

import random

import pytest
from faker import Faker
from faker.config import AVAILABLE_LOCALES
from hypothesis import given, settings
from hypothesis import strategies as st
from phonenumbers import COUNTRY_CODE_TO_REGION_CODE

from veil.scan.recognizers import phones
from veil.scan.recognizers.generic import PHONE_REGIONS, parsed_phone, valid_phone


def regions(text: str) -> tuple[str | None, ...]:
    return (None,) if text.lstrip().startswith("+") else PHONE_REGIONS


def faker_numbers() -> list[str]:
    found = []
    for locale in AVAILABLE_LOCALES:
        fake = Faker(locale)
        if hasattr(fake, "phone_number"):
            fake.seed_instance(5)
            found += [fake.phone_number() for _ in range(12)]
    return found


def built_numbers(n: int) -> list[str]:
    """Numbers around every country code, the international prefixes of the regions tried
    (00, 011, 000, ...), the regions' own country codes written without a plus, national
    prefixes and bare digits, grouped with every separator."""
    rng = random.Random(11)
    codes = sorted(COUNTRY_CODE_TO_REGION_CODE)
    found = []
    for _ in range(n):
        body = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 15)))
        kind = rng.random()
        if kind < 0.3:
            text = f"+{rng.choice(codes)}{body}"
        elif kind < 0.45:
            text = rng.choice(["00", "011", "000", "0011", "810", "001"]) + str(rng.choice(codes))
            text += body
        elif kind < 0.6:
            text = rng.choice(["254", "1", "44", "49", "33", "91", "256", "255", "234", "27"])
            text += rng.choice(["0", ""]) + body
        elif kind < 0.8:
            text = rng.choice(["07", "01", "020", "080", "0800", "1", "9"]) + body
        else:
            text = body
        if rng.random() < 0.6:
            grouped, i = "", 0
            while i < len(text):
                size = rng.randint(1, 4)
                grouped += text[i : i + size] + rng.choice([" ", "-", ".", "", "/", ") ", "("])
                i += size
            text = grouped.rstrip(" /(")
        found.append(text)
    return found


@pytest.mark.parametrize("source", ["faker", "built"])
def test_the_fast_path_says_what_phonenumbers_says(source: str) -> None:
    texts = list(dict.fromkeys(faker_numbers() if source == "faker" else built_numbers(6000)))
    decided = 0
    for text in texts:
        found = phones.verdict(text, regions(text))
        if found is not phones.UNSURE:
            decided += 1
            assert found == parsed_phone(text, regions(text)), text
    # the fast path decides nearly all of them (Faker's American numbers with an "x1234"
    # extension are phonenumbers' own), else it would be no faster
    assert decided >= 0.9 * len(texts)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789 ()./-+", min_size=0, max_size=40))
def test_any_text_of_its_alphabet_gets_phonenumbers_answer(text: str) -> None:
    found = phones.verdict(text, regions(text))
    assert found is phones.UNSURE or found == parsed_phone(text, regions(text))


@pytest.mark.parametrize(
    "text",
    [
        "+1-780-563-6083x7783",  # an extension
        "+٢٥٤ ٧١٢ ٣٤٥ ٦٧٨",  # Arabic-Indic digits
        "0712\t345678",  # a tab: not phonenumbers' punctuation
        "++254712345678",  # two pluses
        "+0712345678",  # a plus with no country code
        "07",  # too few digits
        "0" * 300,  # longer than phonenumbers reads
        "1-800-FLOWERS",
    ],
)
def test_what_the_fast_path_does_not_read_phonenumbers_decides(text: str) -> None:
    assert phones.verdict(text, regions(text)) is phones.UNSURE
    valid_phone.cache_clear()
    assert valid_phone(text) == parsed_phone(text, regions(text))


def test_valid_phone_decides_kenyan_and_foreign_numbers() -> None:
    valid_phone.cache_clear()
    assert valid_phone("0712 345 678") is True
    assert valid_phone("+254 712 345 678") is True
    assert valid_phone("+44 20 7946 0958") is True
    assert valid_phone("+254 712 345 6789 1234 5678") is False  # too long
    assert valid_phone("0123") is None  # possible somewhere, valid nowhere

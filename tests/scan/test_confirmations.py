"""The confirmations the free-text search runs on every hit say what their libraries say.

- Phone numbers: phonenumbers itself (``parse``, ``is_valid_number``, ``is_possible_number``,
  region by region) is the oracle of the fast path, on Faker's numbers in every locale, on
  numbers built around every country code and international and national prefix, and on
  random texts of the fast path's alphabet.
- IBANs: python-stdnum's ``iban.is_valid`` is the oracle of ``valid_iban``, on IBANs of every
  country in stdnum's registry, each also with one character changed, in lower case, with
  separators (Unicode's too), and on random texts of an IBAN's shape.
"""

from __future__ import annotations

import random
import re

import pytest
from faker import Faker
from faker.config import AVAILABLE_LOCALES
from hypothesis import given, settings
from hypothesis import strategies as st
from phonenumbers import COUNTRY_CODE_TO_REGION_CODE
from stdnum import iban, numdb

from veil.scan.recognizers import phones
from veil.scan.recognizers.generic import parsed_phone, phone_regions, valid_iban, valid_phone


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
        found = phones.verdict(text, phone_regions(text))
        if found is not phones.UNSURE:
            decided += 1
            assert found == parsed_phone(text, phone_regions(text)), text
    # the fast path decides nearly all of them (Faker's American numbers with an "x1234"
    # extension are phonenumbers' own), else it would be no faster
    assert decided >= 0.9 * len(texts)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789 ()./-+", min_size=0, max_size=40))
def test_any_text_of_its_alphabet_gets_phonenumbers_answer(text: str) -> None:
    found = phones.verdict(text, phone_regions(text))
    assert found is phones.UNSURE or found == parsed_phone(text, phone_regions(text))


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
    assert phones.verdict(text, phone_regions(text)) is phones.UNSURE
    valid_phone.cache_clear()
    assert valid_phone(text) == parsed_phone(text, phone_regions(text))


def test_valid_phone_decides_kenyan_and_foreign_numbers() -> None:
    valid_phone.cache_clear()
    assert valid_phone("0712 345 678") is True
    assert valid_phone("+254 712 345 678") is True
    assert valid_phone("+44 20 7946 0958") is True
    assert valid_phone("+254 712 345 6789 1234 5678") is False  # too long
    assert valid_phone("0123") is None  # possible somewhere, valid nowhere


def ibans() -> list[str]:
    """An IBAN of every country stdnum knows (its BBAN drawn to the country's format, its check
    digits computed), then each with a character changed, in lower case, with separators, with
    a country that is not one; and random texts shaped like IBANs."""
    rng = random.Random(3)
    kinds = {"n": "0123456789", "a": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "c": "0123456789ABCDEFGHXYZ"}
    found = []
    for _, low, _, props, _ in numdb.get("iban").prefixes:
        for _ in range(25):
            bban = ""
            for size, _, kind in re.findall(r"(\d+)(!?)([nac])", props.get("bban", "")):
                bban += "".join(rng.choice(kinds[kind]) for _ in range(int(size)))
            number = low + iban.calc_check_digits(low + "00" + bban) + bban
            at = rng.randrange(len(number))
            found += [
                number,
                number[:at] + rng.choice("0123456789ABC") + number[at + 1 :],
                number.lower(),
                iban.format(number),
                iban.format(number, "-"),
                "ZZ" + number[2:],
                number[:4] + "\u00a0" + number[4:],  # Unicode's spaces, digits and quotes
                number.replace("1", "\uff11"),
                number + "`",
                number[:6] + "_" + number[6:],
            ]
    for _ in range(2000):
        found.append(
            rng.choice(["DE", "GB", "KE", "BE", "ES", "NO", "ME", "FR"])
            + "".join(rng.choice("0123456789") for _ in range(2))
            + "".join(rng.choice("0123456789ABCD ") for _ in range(rng.randint(11, 30)))
        )
    return found


def test_valid_iban_says_what_stdnum_says() -> None:
    texts = ibans()
    answers = [valid_iban(text) for text in texts]
    assert answers == [iban.is_valid(text) for text in texts]
    assert 0.2 < sum(answers) / len(answers) < 0.8  # both kinds, many of each

"""Fresh identifiers for synthetic rows: never a real value resampled, always well formed.

A column of direct identifiers is not modelled: each synthetic row gets a new value of the same
kind, drawn by Faker where it has a provider that writes valid values (cards with a Luhn digit,
IBANs with their mod-97 check, phone numbers and e-mail addresses in the locale's forms), else
in the shape of the real values (``CUS-0001234`` -> ``CUS-5820193``: digits for digits, letters
for letters). Keys stay unique, and no fresh value equals a real one.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np
import pandas as pd
from faker import Faker

from veil.exceptions import InputError

#: entities Faker writes well-formed values for, and its provider
PROVIDERS = {
    "PERSON": "name",
    "EMAIL": "email",
    "PHONE": "phone_number",
    "CREDIT_CARD": "credit_card_number",
    "IBAN": "iban",
    "IP_ADDRESS": "ipv4",
    "ADDRESS": "address",
    "US_SSN": "ssn",
    "URL": "url",
}
#: entities with a fixed form and no Faker provider: Faker's bothify patterns (# a digit, ? a
#: letter), one drawn per value
PATTERNS = {"KE_KRA_PIN": ("A#########?", "P#########?"), "KE_NATIONAL_ID": ("########",)}
#: entities that may repeat between people (two people share a name); every other is a key
REPEATABLE = {"PERSON", "ADDRESS"}
_DIGITS, _UPPER, _LOWER = string.digits, string.ascii_uppercase, string.ascii_lowercase
_MAX_ROUNDS = 100


@dataclass
class FreshIdentifiers:
    """How to make new values for one identifier column."""

    name: str
    entity: str | None
    shapes: list[str]  # distinct real shapes ("CUS-0001234"), used when Faker has no provider
    real: frozenset[str]  # the real values, never to be produced
    integer: bool  # the column holds integers
    prefix: str = ""  # shared by every real value, kept
    suffix: str = ""

    @classmethod
    def fit(cls, series: pd.Series, entity: str | None) -> FreshIdentifiers:
        present = series.dropna()
        if present.empty:
            raise InputError(f"identifier column {series.name!r} is empty: leave it out")
        texts = present.astype(str)
        integer = pd.api.types.is_integer_dtype(series) or (
            pd.api.types.is_float_dtype(series) and bool((present == present.round()).all())
        )
        if integer:
            texts = present.astype("int64").astype(str)
        shapes = texts.sample(min(len(texts), 500), random_state=0).tolist()
        # what every real value shares at its start and end ("CUS-") is the form, not data
        prefix = _common_start(shapes)
        suffix = _common_start([s[::-1] for s in shapes])[::-1]
        shortest = min(len(s) for s in shapes)
        if len(prefix) + len(suffix) >= shortest:  # nothing left to vary: keep the prefix only
            prefix, suffix = prefix[: max(0, shortest - 1)], ""
        return cls(
            str(series.name), entity, shapes, frozenset(texts), bool(integer), prefix, suffix
        )

    def sample(self, n: int, rng: np.random.Generator, locale: str) -> pd.Series:
        provider = PROVIDERS.get(self.entity or "")
        faker = None
        if provider is not None:
            faker = Faker(locale)
            faker.seed_instance(int(rng.integers(2**31)))
        patterns_of = PATTERNS.get(self.entity or "")
        patterns = None
        if patterns_of is not None:
            patterns = Faker()
            patterns.seed_instance(int(rng.integers(2**31)))
        unique = (self.entity or "") not in REPEATABLE
        if self.integer and faker is None and patterns is None:
            return pd.Series(self._integers(n, rng), name=self.name)
        out: list[str] = []
        seen: set[str] = set()
        for _ in range(_MAX_ROUNDS):
            want = n - len(out)
            if want == 0:
                break
            if faker is not None and provider is not None:
                make = getattr(faker, provider)
                drawn = [str(make()).replace("\n", ", ") for _ in range(want)]
            elif patterns is not None and patterns_of is not None:
                drawn = [
                    patterns.bothify(patterns_of[i]).upper()
                    for i in rng.integers(0, len(patterns_of), 2 * want)
                ]
            else:
                drawn = [
                    self._like(self.shapes[i], rng)
                    for i in rng.integers(0, len(self.shapes), 2 * want)
                ]
                ends = len(self.prefix), len(self.suffix)
                drawn = [self.prefix + d[ends[0] : len(d) - ends[1]] + self.suffix for d in drawn]
            for value in drawn:
                if self.integer and value.isdigit():
                    value = str(int(value))  # 04857457 is the number 4857457, as stored
                if value in self.real or (unique and value in seen):
                    continue
                seen.add(value)
                out.append(value)
                if len(out) == n:
                    break
        if len(out) < n:
            raise InputError(
                f"identifier column {self.name!r}: its values' form allows too few new keys for "
                f"{n:,} rows; leave the column out or make fewer rows"
            )
        series = pd.Series(out[:n], name=self.name)
        if self.integer and not all(v.isdigit() for v in series):
            return series  # a provider's form (a phone's +254) where the column held numbers
        return series.astype("int64") if self.integer else series

    def _integers(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` distinct integers with as many digits as the longest real key (more when
        that leaves too few), none of them a real key."""
        real = {int(v) for v in self.real}
        width = max(len(v.lstrip("-")) for v in self.real)
        while 9 * 10 ** (width - 1) - len(real) < 2 * n:
            width += 1
        low, high = 10 ** (width - 1), 10**width
        out: set[int] = set()
        while len(out) < n:
            drawn = rng.integers(low, high, 2 * (n - len(out)))
            out.update(int(v) for v in drawn if int(v) not in real)
        return rng.permutation(np.array(sorted(out)[:n] if len(out) > n else sorted(out)))

    @staticmethod
    def _like(shape: str, rng: np.random.Generator) -> str:
        chars = []
        for i, c in enumerate(shape):
            if c.isdigit():
                pool = _DIGITS[1:] if i == 0 else _DIGITS  # no leading zero appears from nowhere
                chars.append(pool[rng.integers(len(pool))] if not (i == 0 and c == "0") else "0")
            elif c.isupper():
                chars.append(_UPPER[rng.integers(26)])
            elif c.islower():
                chars.append(_LOWER[rng.integers(26)])
            else:
                chars.append(c)
        return "".join(chars)


def _common_start(texts: list[str]) -> str:
    """The characters every text starts with."""
    first, last = min(texts), max(texts)  # the common start of all is theirs
    size = next(
        (i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b),
        min(len(first), len(last)),
    )
    return first[:size]

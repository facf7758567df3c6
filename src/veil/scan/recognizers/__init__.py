"""Every recognizer veil runs, listed explicitly (no discovery by import order).

Country-specific ones live in folders named by ISO code: ``ke/``, ``us/``, ``gb/``.
"""

from __future__ import annotations

from typing import Protocol

from veil.scan.recognizers.base import (
    ColumnSample,
    Evidence,
    Pattern,
    PatternRecognizer,
    VocabularyRecognizer,
)
from veil.scan.recognizers.gb import UK_NINO, UK_POSTCODE
from veil.scan.recognizers.generic import (
    ADDRESS,
    CREDIT_CARD,
    EMAIL,
    GENDER,
    HEALTH,
    IBAN,
    ICD10,
    IP_ADDRESS,
    LOCATION,
    MARITAL_STATUS,
    OCCUPATION,
    PERSON,
    PHONE,
    URL,
)
from veil.scan.recognizers.ke import KE_KRA_PIN, KE_NATIONAL_ID
from veil.scan.recognizers.numeric import (
    AgeRecognizer,
    BirthDateRecognizer,
    IncomeRecognizer,
    KeyRecognizer,
)
from veil.scan.recognizers.us import US_SSN, US_ZIP


class Recognizer(Protocol):
    def check(self, column: ColumnSample) -> Evidence | None: ...


RECOGNIZERS: tuple[Recognizer, ...] = (
    EMAIL,
    PHONE,
    URL,
    IP_ADDRESS,
    CREDIT_CARD,
    IBAN,
    KE_KRA_PIN,
    KE_NATIONAL_ID,
    US_SSN,
    UK_NINO,
    UK_POSTCODE,
    US_ZIP,
    ADDRESS,
    PERSON,
    GENDER,
    MARITAL_STATUS,
    LOCATION,
    OCCUPATION,
    HEALTH,
    ICD10,
    AgeRecognizer(),
    IncomeRecognizer(),
    BirthDateRecognizer(),
    KeyRecognizer(),
)

#: Recognizers searched for inside free text (an e-mail address in a note).
TEXT_RECOGNIZERS: tuple[PatternRecognizer, ...] = (
    EMAIL,
    PHONE,
    KE_KRA_PIN,
    US_SSN,
    UK_NINO,
    CREDIT_CARD,
    IBAN,
    IP_ADDRESS,
)

__all__ = [
    "RECOGNIZERS",
    "TEXT_RECOGNIZERS",
    "ColumnSample",
    "Evidence",
    "Pattern",
    "PatternRecognizer",
    "Recognizer",
    "VocabularyRecognizer",
]

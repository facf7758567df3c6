"""United Kingdom: National Insurance numbers and postcodes."""

from __future__ import annotations

import re

from veil.scan.recognizers.base import Entity, Pattern, PatternRecognizer

# HMRC: these prefixes are never issued
_NINO_BAD_PREFIXES = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}


def valid_nino(text: str) -> bool:
    """Whether ``text`` is a valid UK National Insurance number (python-stdnum)."""
    compact = re.sub(r"\s", "", text).upper()
    return compact[:2] not in _NINO_BAD_PREFIXES


UK_NINO = PatternRecognizer(
    "UK_NINO",
    [
        Pattern(
            "nino",
            r"[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]",
            0.9,
        )
    ],
    description="UK National Insurance numbers",
    validate=valid_nino,
)

UK_POSTCODE = PatternRecognizer(
    "POSTCODE",
    [Pattern("uk postcode", r"[A-Z]{1,2}\d[A-Z\d]?\s*\d[ABD-HJLNP-UW-Z]{2}", 0.85)],
    description="UK postcodes",
)

#: United Kingdom's entities (postcodes are the generic POSTCODE).
ENTITIES: tuple[Entity, ...] = (
    Entity(
        "UK_NINO",
        "identifier",
        hints=(
            "nino",
            "national insurance",
            "ni number",
            "national insurance number",
        ),
        keeps_shape=True,
        in_text=True,
        label="a UK National Insurance number",
    ),
)

RECOGNIZERS = (UK_NINO, UK_POSTCODE)

"""United States: Social Security numbers and ZIP codes."""

from __future__ import annotations

from veil.scan.recognizers.base import Entity, Pattern, PatternRecognizer


def _valid_ssn(text: str) -> bool:
    """python-stdnum's check (imported when a number is checked: it imports ssl)."""
    from stdnum.us import ssn

    return bool(ssn.is_valid(text))


US_SSN = PatternRecognizer(
    "US_SSN",
    [Pattern("ssn", r"\d{3}-\d{2}-\d{4}", 0.5)],
    description="US Social Security numbers (valid area/group/serial)",
    validate=lambda text: _valid_ssn(text),
)

# Five digits are also order numbers and amounts: alone this is weak evidence, a column name
# such as "zip" makes it strong.
US_ZIP = PatternRecognizer(
    "POSTCODE",
    [Pattern("zip", r"\d{5}(?:-\d{4})?", 0.35)],
    description="US ZIP codes (or other 5-digit codes)",
    min_share=0.95,
    numeric_ok=True,
    heuristic=True,
)

#: United States' entities.
ENTITIES: tuple[Entity, ...] = (
    Entity(
        "US_SSN",
        "identifier",
        hints=(
            "ssn",
            "social security",
            "social security number",
        ),
        keeps_shape=True,
        in_text=True,
        label="a US Social Security number",
    ),
)

RECOGNIZERS = (US_SSN, US_ZIP)

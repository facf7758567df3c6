"""Every recognizer veil runs, and the entities they declare.

Generic recognizers live in ``generic`` and ``numeric``, the special categories of data (health,
beliefs...) in ``special``, an employer's in ``work``; country-specific ones in a folder
named by ISO code (``ke/``, ``us/``, ``gb/``), each exporting ``RECOGNIZERS``, ``ENTITIES``
and, where it has them, ``PLACES`` (words the location recognizer knows). A new country is one
folder: it is found here, nothing else lists it.
"""

from __future__ import annotations

from typing import Protocol

from veil.scan.recognizers import generic, numeric, special, work
from veil.scan.recognizers.base import (
    ColumnSample,
    Entity,
    Evidence,
    Pattern,
    PatternRecognizer,
    VocabularyRecognizer,
)
from veil.scan.recognizers.countries import COUNTRIES, country_places


class Recognizer(Protocol):
    """What the scan asks of a recognizer: evidence about one column's sample."""

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence that ``column`` holds this recognizer's entity, or None."""


#: In the order they are asked: value patterns first (generic, then each country's), then
#: vocabularies, then the numeric and date heuristics.
RECOGNIZERS: tuple[Recognizer, ...] = (
    *generic.PATTERNS,
    *(r for country in COUNTRIES for r in country.RECOGNIZERS),
    *generic.VOCABULARIES,
    *special.RECOGNIZERS,
    *work.RECOGNIZERS,
    *numeric.RECOGNIZERS,
)

#: Every entity, by name, as its module declares it.
ENTITY_INFO: dict[str, Entity] = {
    e.name: e
    for e in (
        *generic.ENTITIES,
        *special.ENTITIES,
        *work.ENTITIES,
        *numeric.ENTITIES,
        *(e for c in COUNTRIES for e in c.ENTITIES),
    )
}

#: Pattern recognizers searched for inside free text (an e-mail address in a note): those of
#: the entities declared ``in_text``, or the pattern (``shape``) a recognizer confirms.
TEXT_RECOGNIZERS: tuple[PatternRecognizer, ...] = tuple(
    shape
    for shape in (getattr(r, "shape", r) for r in RECOGNIZERS)
    if isinstance(shape, PatternRecognizer)
    and shape.entity in ENTITY_INFO
    and ENTITY_INFO[shape.entity].in_text
)


def _check_declarations() -> None:
    """Every entity a recognizer reports is declared (else the scan could not give its
    column a role)."""
    for recognizer in RECOGNIZERS:
        entity = getattr(recognizer, "entity", None)
        if entity is not None and entity not in ENTITY_INFO:
            raise RuntimeError(
                f"recognizer {type(recognizer).__name__} reports entity {entity!r}, which no "
                "module declares: add Entity({entity!r}, role, hints) to its ENTITIES"
            )


_check_declarations()

__all__ = [
    "COUNTRIES",
    "ENTITY_INFO",
    "RECOGNIZERS",
    "TEXT_RECOGNIZERS",
    "ColumnSample",
    "Entity",
    "Evidence",
    "Pattern",
    "PatternRecognizer",
    "Recognizer",
    "VocabularyRecognizer",
    "country_places",
]

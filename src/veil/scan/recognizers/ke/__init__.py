"""Kenya: national ID numbers and KRA PINs (phones are in the generic recognizer, region KE)."""

from __future__ import annotations

from veil.scan.recognizers.base import ColumnSample, Entity, Evidence, Pattern, PatternRecognizer
from veil.scan.recognizers.ke.counties import NORMALIZED_PROVINCE, province_of


def valid_kra_pin(text: str) -> bool | None:
    """python-stdnum's rule (A for individuals, P for others) confirms; other letters keep the
    shape's score, because exports and test data use them too."""
    from stdnum.ke import pin  # python-stdnum imports ssl: loaded when a PIN is checked

    return True if pin.is_valid(text) else None


KE_KRA_PIN = PatternRecognizer(
    "KE_KRA_PIN",
    [Pattern("kra pin", r"[A-Za-z]\d{9}[A-Za-z]", 0.85)],
    description="KRA PINs (letter, 9 digits, letter)",
    validate=valid_kra_pin,
)


class NationalIdRecognizer:
    """Kenyan national ID numbers: 6-8 digits, almost all distinct. No checksum exists, so the
    value evidence is moderate; a column name such as ``id_number`` makes it strong."""

    entity = "KE_NATIONAL_ID"
    shape = PatternRecognizer(
        "KE_NATIONAL_ID",
        [Pattern("id", r"\d{6,8}", 0.6)],
        description="Kenyan national ID numbers (6-8 digits, distinct)",
        min_share=0.9,
        numeric_ok=True,
        heuristic=True,
    )

    def check(self, column: ColumnSample) -> Evidence | None:
        """Evidence that the column holds Kenyan national ID numbers: their shape, in a column
        whose values are nearly all (90%) distinct.
        """
        if column.distinct_ratio < 0.9:
            return None
        return self.shape.check(column)


KE_NATIONAL_ID = NationalIdRecognizer()

#: Kenya's entities: IDs whose shape pseudonyms keep.
ENTITIES: tuple[Entity, ...] = (
    Entity(
        "KE_NATIONAL_ID",
        "identifier",
        hints=(
            "national id",
            "id number",
            "idno",
            "id no",
            "nat id",
            "national id number",
            "kitambulisho",
            "nambari ya kitambulisho",
            "huduma number",
            "huduma namba",
            "passport",
            "passport number",
            "alien id",
        ),
        keeps_shape=True,
        in_text=True,
        context=(
            "id",
            "id no",
            "id number",
            "national id",
            "kitambulisho",
            "passport",
            "huduma",
            "idno",
            "nid",
        ),
        label="a Kenyan national ID number",
    ),
    Entity(
        "KE_KRA_PIN",
        "identifier",
        hints=(
            "kra",
            "kra pin",
            "pin",
            "tax id",
            "tax pin",
            "tin",
            "pin number",
            "taxpayer id",
            "tax number",
        ),
        keeps_shape=True,
        in_text=True,
        label="a KRA PIN",
    ),
)

RECOGNIZERS = (KE_KRA_PIN, KE_NATIONAL_ID)

#: The country's name, the level above its regions in a place hierarchy.
NAME = "Kenya"
#: Counties and provinces, for the location vocabulary.
PLACES = tuple(NORMALIZED_PROVINCE)
#: A county's former province: the region a suggested policy generalizes counties to.
region_of = province_of

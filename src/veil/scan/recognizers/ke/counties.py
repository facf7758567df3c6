"""Kenya's 47 counties (Constitution of Kenya 2010, First Schedule) with their former province.

Spellings vary in real data ("Taita-Taveta", the same with an en dash, "Mombasa (County)",
"Murang'a", "Muranga"), so lookups go through ``normalize_place``.
"""

from __future__ import annotations

from veil.scan.recognizers.normalize import normalize_place

COUNTY_PROVINCE: dict[str, str] = {
    "Mombasa": "Coast",
    "Kwale": "Coast",
    "Kilifi": "Coast",
    "Tana River": "Coast",
    "Lamu": "Coast",
    "Taita-Taveta": "Coast",
    "Garissa": "North Eastern",
    "Wajir": "North Eastern",
    "Mandera": "North Eastern",
    "Marsabit": "Eastern",
    "Isiolo": "Eastern",
    "Meru": "Eastern",
    "Tharaka-Nithi": "Eastern",
    "Embu": "Eastern",
    "Kitui": "Eastern",
    "Machakos": "Eastern",
    "Makueni": "Eastern",
    "Nyandarua": "Central",
    "Nyeri": "Central",
    "Kirinyaga": "Central",
    "Murang'a": "Central",
    "Kiambu": "Central",
    "Turkana": "Rift Valley",
    "West Pokot": "Rift Valley",
    "Samburu": "Rift Valley",
    "Trans-Nzoia": "Rift Valley",
    "Uasin Gishu": "Rift Valley",
    "Elgeyo-Marakwet": "Rift Valley",
    "Nandi": "Rift Valley",
    "Baringo": "Rift Valley",
    "Laikipia": "Rift Valley",
    "Nakuru": "Rift Valley",
    "Narok": "Rift Valley",
    "Kajiado": "Rift Valley",
    "Kericho": "Rift Valley",
    "Bomet": "Rift Valley",
    "Kakamega": "Western",
    "Vihiga": "Western",
    "Bungoma": "Western",
    "Busia": "Western",
    "Siaya": "Nyanza",
    "Kisumu": "Nyanza",
    "Homa Bay": "Nyanza",
    "Migori": "Nyanza",
    "Kisii": "Nyanza",
    "Nyamira": "Nyanza",
    "Nairobi": "Nairobi",
}


NORMALIZED_PROVINCE: dict[str, str] = {
    normalize_place(county): province for county, province in COUNTY_PROVINCE.items()
}
# common alternative spellings
NORMALIZED_PROVINCE.update({"muranga": "Central", "elgeyo marakwet": "Rift Valley"})


def province_of(value: str) -> str | None:
    """The former province of a Kenyan county (any spelling of its name), or None."""
    return NORMALIZED_PROVINCE.get(normalize_place(value))

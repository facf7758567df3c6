"""The country folders (``ke/``, ``us/``, ``gb/``...), found by listing this package: a new
country is one folder exporting ``RECOGNIZERS``, ``ENTITIES`` and, optionally, ``PLACES`` (place
names for the location vocabulary) and ``region_of`` (a place's larger region: Kenya's county
-> province), which the suggested policy generalizes locations to."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

__all__ = ["COUNTRIES", "country_places", "place_levels", "region_of"]


def _countries() -> tuple[ModuleType, ...]:
    folder = str(Path(__file__).parent)
    return tuple(
        importlib.import_module(f"{__package__}.{info.name}")
        for info in sorted(pkgutil.iter_modules([folder]), key=lambda i: i.name)
        if info.ispkg
    )


#: The country folders, by ISO code.
COUNTRIES: tuple[ModuleType, ...] = _countries()


def country_places() -> frozenset[str]:
    """Place names the countries contribute to the location vocabulary."""
    return frozenset(word for c in COUNTRIES for word in getattr(c, "PLACES", ()))


def region_of(place: str) -> str | None:
    """The region a country folder puts ``place`` in (``Machakos`` -> ``Eastern``), or None."""
    for country in COUNTRIES:
        find = getattr(country, "region_of", None)
        region = find(place) if find is not None else None
        if region is not None:
            return str(region)
    return None


def place_levels(place: str) -> tuple[str, str] | None:
    """(region, country) of ``place`` as a country folder knows it (``Machakos`` ->
    (``Eastern``, ``Kenya``)): the levels of a place hierarchy; None if no folder knows it."""
    for country in COUNTRIES:
        find = getattr(country, "region_of", None)
        region = find(place) if find is not None else None
        if region is not None:
            return str(region), str(getattr(country, "NAME", country.__name__.rsplit(".", 1)[-1]))
    return None

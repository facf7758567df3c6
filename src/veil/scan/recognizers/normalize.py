"""How values are compared with word lists: case, accents and punctuation do not matter."""

from __future__ import annotations

import re
import unicodedata


class _Spaced(dict[int, int]):
    """``str.translate``'s table: punctuation, separators and symbols of any script (but
    ``'/+-``) to a space, every other character to itself; each character's category looked
    up once, then kept."""

    def __missing__(self, code: int) -> int:
        char = chr(code)
        self[code] = 32 if unicodedata.category(char)[0] in "PZS" and char not in "'/+-" else code
        return self[code]


_SPACED = _Spaced()


def _fold(value: str) -> str:
    """Accents off, punctuation of any script (en dash, curly quotes) to a space, lower case."""
    spaced = value.translate(_SPACED)
    return unicodedata.normalize("NFKD", spaced).encode("ascii", "ignore").decode().casefold()


#: The code a survey writes before a category's label (R's ``1. Never Married``, ``(2) Male``).
_CODED = re.compile(r"^\s*\(?\d{1,2}[.)]\s+(?=\S)")


_NOT_WORD = re.compile(r"[^a-z0-9/'+-]+")


def normalize(value: str) -> str:
    """``value`` lower-cased, accents dropped, punctuation as spaces, a survey's code before
    a label dropped (``1. Never Married`` is ``never married``): how words are compared."""
    return _NOT_WORD.sub(" ", _fold(_CODED.sub("", value))).strip()


def normalize_place(value: str) -> str:
    """``"Taita-Taveta"`` (any dash), ``"taita taveta"`` and ``"Mombasa (County)"`` compare
    equal to the plain names."""
    text = re.sub(r"\((county|city|town|district)\)|\b(county|city)\b", " ", _fold(value))
    return re.sub(r"[^a-z]+", " ", text).strip()

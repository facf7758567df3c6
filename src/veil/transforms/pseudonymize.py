"""Keyed pseudonymization: HMAC-SHA256 tokens that are stable across tables and runs."""

from __future__ import annotations

import hmac
import os
import unicodedata
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from veil.exceptions import CheckFailedError, ParameterError
from veil.keys import DEFAULT_KEY_ENV, load_key
from veil.transforms._base import (
    COLUMNS,
    Columns,
    ColumnTransform,
    Integral,
    Interval,
    StrOptions,
    rebuild,
    value_text,
)

_DIGITS = "0123456789"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = _UPPER.lower()
#: Latin letters that have no accent to drop, written in plain letters.
_PLAIN = str.maketrans(
    {
        "ß": "ss",
        "ø": "o",
        "Ø": "O",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "đ": "d",
        "Đ": "D",
        "ł": "l",
        "Ł": "L",
        "þ": "th",
        "Þ": "Th",
        "\u0131": "i",
        "ð": "d",
        "Ð": "D",
    }
)


def latin_letters(text: str, *, column: str) -> str:
    """``text`` with accented Latin letters written plainly ("José Müller" -> "Jose Muller"):
    format-preserving pseudonyms permute A-Z and 0-9, and a letter they do not know would be
    copied into the pseudonym as it is. A letter of another script is refused."""
    plain = unicodedata.normalize("NFKD", text.translate(_PLAIN))
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    foreign = next(
        (c for c in plain if not c.isascii() and unicodedata.category(c)[0] == "L"), None
    )
    if foreign is not None:
        raise ParameterError(
            f"column {column!r}: format-preserving pseudonyms hide Latin letters and digits, "
            f"but a value holds {foreign!r} ({unicodedata.name(foreign, 'a letter')}), which "
            "would be copied as it is; use format: hex for this column"
        )
    return plain


class Pseudonymize(ColumnTransform):
    """Replace each value by a keyed HMAC-SHA256 token.

    The same value gives the same token in every column, table and run that uses the same key
    (and ``domain``), so joins survive; without the key, tokens cannot be recomputed from
    guessed values (an unkeyed hash of a national ID can be reversed by enumerating all IDs).

    ``format="hex"`` gives ``length`` hex characters (64 bits by default).
    ``format="preserve"`` keeps the shape: digits stay digits, letters stay letters of the same
    case (accents dropped: ``José`` is read as ``Jose``; other scripts are refused), other
    characters are kept (``N690674664H`` -> ``Q118203957K``); integer columns stay
    integers of the same number of digits. It is format-preserving *encryption*, so two values
    never share a pseudonym: FF3-1 (NIST SP 800-38G Rev. 1, the ``ff3`` package) with
    cycle-walking on the values of one shape, or, where a shape has at most 2^20 values (a
    4-digit ID), a keyed pseudorandom permutation of all of them.

    The key is read from the environment variable ``key_env`` or from ``key_file`` when the
    transform runs; it is never stored on the estimator.
    """

    _needs_every_row = None

    treats_identifiers = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "key_env": [str],
        "key_file": [str, os.PathLike, None],
        "format": [StrOptions({"hex", "preserve"})],
        "length": [Interval(Integral, 8, 64, closed="both")],
        "domain": [str],
        "normalize": ["boolean"],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        key_env: str = DEFAULT_KEY_ENV,
        key_file: str | os.PathLike[str] | None = None,
        format: str = "hex",
        length: int = 16,
        domain: str = "",
        normalize: bool = True,
    ) -> None:
        self.columns = columns
        self.key_env = key_env
        self.key_file = key_file
        self.format = format
        self.length = length
        self.domain = domain
        self.normalize = normalize

    def _fit(self, frame: pd.DataFrame) -> None:
        load_key(key_env=self.key_env, key_file=self.key_file)  # fail at fit, not mid-release

    def _canonical(self, value: object, column: str = "") -> str:
        """The text a pseudonym is made from: spelling variants of one value give one token
        (hex ignores case; preserve ignores surrounding space and keeps the case's shape)."""
        text = value if isinstance(value, str) else value_text(value)
        if self.format == "preserve":  # accents dropped: never copied into the pseudonym
            text = latin_letters(text, column=column)
        if not self.normalize:
            return text
        return text.strip().casefold() if self.format == "hex" else text.strip()

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        key = load_key(key_env=self.key_env, key_file=self.key_file)
        for name in self.columns_:
            series = frame[name]
            codes, uniques = pd.factorize(series, use_na_sentinel=True)
            # each distinct value's canonical text, once (integers vectorized: 5M ids)
            if pd.api.types.is_integer_dtype(uniques.dtype):
                texts = np.asarray(uniques).astype(str).tolist()
            else:
                texts = [self._canonical(v, str(name)) for v in np.asarray(uniques, dtype=object)]
            if self.format == "hex":
                mapped, distinct_tokens = self._hex_tokens(key, texts)
            else:
                integer = _is_integer_column(series)
                fpe = _Permutations(key, self.domain, column=str(name))
                mapped = [fpe.token(text, integer=integer) for text in texts]
                distinct_tokens = len(pd.unique(np.asarray(mapped, dtype=object)))
            # a pseudonym stays one-to-one: truncated hex tokens collide with probability
            # ~n^2/2^(4 length + 1); preserve is a permutation of the text with accents dropped,
            # so "José" and "Jose" meet unless normalize treats them as one value anyway
            if not self.normalize or pd.api.types.is_integer_dtype(uniques.dtype):
                distinct = len(uniques)  # the text of an integer is one-to-one
            else:
                distinct = len(pd.unique(np.asarray(texts, dtype=object)))
            if distinct_tokens < distinct:
                fix = (
                    "use a larger length"
                    if self.format == "hex"
                    else "accents are dropped; "
                    "set normalize: true to treat such values as one, or use format: hex"
                )
                raise CheckFailedError(
                    f"column {name!r}: two distinct values received the same pseudonym "
                    f"(format={self.format!r}); {fix}"
                )
            tokens = rebuild(series, codes, np.asarray(mapped, dtype=object))
            if self.format == "preserve" and _is_integer_column(series) and not tokens.isna().any():
                tokens = tokens.astype("int64")
            frame[name] = tokens
        return frame

    def _hex_tokens(self, key: bytes, texts: list[str]) -> tuple[list[str], int]:
        """HMAC-SHA256 of each text, as ``length`` hex characters, and how many distinct
        tokens there are (counted on the digests' first 64 bits, without a set of strings;
        in chunks, so 5M digests are never held at once)."""
        prefix, suffix = f"{self.domain}\x1f".encode(), b"\x1f0"
        keep = (self.length + 1) // 2
        shift = np.uint64(64 - 4 * min(self.length, 16))
        tokens: list[str] = []
        heads = np.empty(len(texts), dtype=np.uint64)
        for start in range(0, len(texts), _CHUNK):
            digests = [
                hmac.digest(key, prefix + text.encode() + suffix, "sha256")
                for text in texts[start : start + _CHUNK]
            ]
            tokens.extend(digest[:keep].hex()[: self.length] for digest in digests)
            first = np.frombuffer(b"".join(digests), dtype=">u8")[::4]
            heads[start : start + len(digests)] = first.astype(np.uint64) >> shift
        heads.sort()
        distinct = int(np.count_nonzero(np.diff(heads))) + 1 if len(heads) else 0
        if distinct < len(tokens):  # equal first 64 bits: compare the tokens themselves
            distinct = len(pd.unique(np.asarray(tokens, dtype=object)))
        return tokens, distinct

    def collision_bound(self, rows: int) -> float | None:
        """Hex tokens of ``rows`` distinct values treated in different batches: at most
        ``rows**2 / 2**(4 length + 1)``; format-preserving pseudonyms are a permutation (None)."""
        return min(1.0, rows**2 / 2.0 ** (4 * self.length + 1)) if self.format == "hex" else None

    def describe(self) -> str:
        """The columns and the pseudonyms' format (never the key)."""
        return f"Pseudonymize({', '.join(self.columns_)}; HMAC-SHA256, format={self.format})"


#: Values hashed at a time (the digests of one chunk are held, never all of them).
_CHUNK = 1 << 18
#: Shapes with at most this many values get a keyed permutation table (FF3-1 needs >= 10^6).
TABLE_MAX = 2**20
#: FF3-1 over bits takes at most 192 (2 * floor(96 / log2(2))).
FF3_MAX_BITS = 192


class _Permutations:
    """Keyed permutations of the values of each shape (digits, letters, kept characters).

    A value is read as a number in mixed radix (10 per digit, 26 per letter, case kept aside;
    9 for the leading digit of a multi-digit integer, so integers keep their length); the
    number is permuted within its shape's domain, which makes the map one-to-one. Keys are
    derived from the pseudonymization key by HMAC, per ``domain`` and shape.
    """

    def __init__(self, key: bytes, domain: str, *, column: str) -> None:
        self.key = key
        self.domain = domain
        self.column = column
        self.aes_key = hmac.digest(key, f"veil-fpe\x1f{domain}".encode(), "sha256")
        self.tables: dict[str, Any] = {}
        self.ciphers: dict[str, Any] = {}

    def token(self, text: str, *, integer: bool) -> str:
        free = [i for i, c in enumerate(text) if c in _DIGITS or c in _UPPER or c in _LOWER]
        if not free:
            return text  # nothing personal to hide: no digit, no letter
        free_set = set(free)
        digits = [i for i in free if text[i] in _DIGITS]
        lead = digits[0] if integer and len(digits) > 1 and text[digits[0]] != "0" else None
        radices, number = [], 0
        for i in free:
            char = text[i]
            if char in _DIGITS:
                radix, value = (9, int(char) - 1) if i == lead else (10, int(char))
            else:
                radix, value = 26, _UPPER.index(char.upper())
            radices.append(radix)
            number = number * radix + value
        shape = "".join(
            ("D" if i == lead else "d" if text[i] in _DIGITS else "a")
            if i in free_set
            else "\x00" + text[i]
            for i in range(len(text))
        )
        size = 1
        for radix in radices:
            size *= radix
        permuted = self._permute(number, size, shape)
        out = list(text)
        for i, radix in zip(reversed(free), reversed(radices), strict=True):
            permuted, value = divmod(permuted, radix)
            char = text[i]
            if char in _DIGITS:
                out[i] = str(value + 1 if radix == 9 else value)
            else:
                letter = _UPPER[value]
                out[i] = letter if char in _UPPER else letter.lower()
        return "".join(out)

    def _tweak(self, shape: str) -> bytes:
        return hmac.digest(
            self.key, f"veil-fpe-tweak\x1f{self.domain}\x1f{shape}".encode(), "sha256"
        )

    def _permute(self, number: int, size: int, shape: str) -> int:
        if size <= TABLE_MAX:
            table = self.tables.get(shape)
            if table is None:
                table = self.tables[shape] = self._table(size, self._tweak(shape))
            return int(table[number])
        bits = (size - 1).bit_length()
        if bits > FF3_MAX_BITS:
            raise ParameterError(
                f"column {self.column!r}: values with {len(shape)} characters are too long for "
                f"format-preserving pseudonyms (more than {FF3_MAX_BITS} bits); use format: hex"
            )
        cipher = self.ciphers.get(shape)
        if cipher is None:
            from ff3 import FF3Cipher

            tweak = self._tweak(shape)[:7].hex()  # FF3-1's 56-bit tweak
            cipher = self.ciphers[shape] = FF3Cipher(self.aes_key.hex(), tweak, radix=2)
        # cycle-walking: stay inside [0, size); terminates because FF3-1 is a permutation
        while True:
            number = int(cipher.encrypt(format(number, f"0{bits}b")), 2)
            if number < size:
                return number

    def _table(self, size: int, tweak: bytes) -> np.ndarray:
        """A keyed pseudorandom permutation of range(size): indices sorted by AES tags."""
        from Crypto.Cipher import AES

        blocks = np.zeros((size, 2), dtype=">u8")
        blocks[:, 0] = int.from_bytes(tweak[:8], "big")
        blocks[:, 1] = np.arange(size, dtype=np.uint64)
        tags = AES.new(self.aes_key, AES.MODE_ECB).encrypt(blocks.tobytes())
        return np.argsort(np.frombuffer(tags, dtype=">u8")[::2], kind="stable")


def _is_integer_column(series: pd.Series) -> bool:
    if pd.api.types.is_integer_dtype(series):
        return True
    if pd.api.types.is_float_dtype(series):
        valid = series.dropna()
        return bool(len(valid)) and bool((valid == valid.round()).all())
    return False

"""Keyed pseudonymization: HMAC-SHA256 tokens that are stable across tables and runs."""

from __future__ import annotations

import hmac
import os
import warnings

import pandas as pd

from veil.exceptions import ParameterError, PseudonymCollisionWarning
from veil.keys import DEFAULT_KEY_ENV, load_key
from veil.transforms._base import (
    Columns,
    ColumnTransform,
    apply_to_uniques,
    check_choice,
    check_positive_int,
    rebuild,
    value_text,
)

_DIGITS = "0123456789"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = _UPPER.lower()


class Pseudonymize(ColumnTransform):
    """Replace each value by a keyed HMAC-SHA256 token.

    The same value gives the same token in every column, table and run that uses the same key
    (and ``domain``), so joins survive; without the key, tokens cannot be recomputed from
    guessed values (an unkeyed hash of a national ID can be reversed by enumerating all IDs).

    ``format="hex"`` gives ``length`` hex characters (64 bits by default).
    ``format="preserve"`` keeps the shape: digits stay digits, letters stay letters of the same
    case, other characters are kept (``N690674664H`` -> ``Q118203957K``); integer columns stay
    integers of the same number of digits. Short preserved tokens can collide; veil warns with
    ``PseudonymCollisionWarning`` when they do in the data at hand.

    The key is read from the environment variable ``key_env`` or from ``key_file`` when the
    transform runs; it is never stored on the estimator.
    """

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

    def _validate(self) -> None:
        check_choice("format", self.format, ["hex", "preserve"])
        check_positive_int("length", self.length, minimum=8)
        if self.length > 64:
            raise ParameterError(f"length must be at most 64 hex characters, got {self.length}")
        load_key(key_env=self.key_env, key_file=self.key_file)  # fail at fit, not mid-release

    def _digest(self, key: bytes, text: str, counter: int = 0) -> bytes:
        # hmac.digest is the one-shot OpenSSL path: several times faster than hmac.new()
        return hmac.digest(key, f"{self.domain}\x1f{text}\x1f{counter}".encode(), "sha256")

    def _token(self, key: bytes, value: object, *, integer: bool) -> str:
        text = value if isinstance(value, str) else value_text(value)
        canonical = text.strip().casefold() if self.normalize else text
        if self.format == "hex":
            return self._digest(key, canonical).hex()[: self.length]
        stream = bytearray()
        counter = 0
        while len(stream) < len(text):
            stream += self._digest(key, canonical, counter)
            counter += 1
        out = []
        for i, (char, byte) in enumerate(zip(text, stream, strict=False)):
            if char.isdigit():
                # keep integers integers: no leading zero where the original had none
                alphabet = (
                    _DIGITS[1:] if integer and i == _first_digit(text) and char != "0" else _DIGITS
                )
                out.append(alphabet[byte % len(alphabet)])
            elif char in _UPPER:
                out.append(_UPPER[byte % 26])
            elif char in _LOWER:
                out.append(_LOWER[byte % 26])
            else:
                out.append(char)
        return "".join(out)

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        key = load_key(key_env=self.key_env, key_file=self.key_file)
        for name in self.columns_:
            series = frame[name]
            integer = self.format == "preserve" and _is_integer_column(series)
            codes, mapped = apply_to_uniques(
                series, lambda v, integer=integer: self._token(key, v, integer=integer)
            )
            collided = len(mapped) - len(set(mapped))
            if collided:
                warnings.warn(
                    f"column {name!r}: {collided} distinct values share a pseudonym "
                    f"with another value (format={self.format!r}); use format='hex' or a "
                    "larger length if joins must stay exact",
                    PseudonymCollisionWarning,
                    stacklevel=2,
                )
            tokens = rebuild(series, codes, mapped)
            if integer and not tokens.isna().any():
                tokens = tokens.astype("int64")
            frame[name] = tokens
        return frame

    def describe(self) -> str:
        return f"Pseudonymize({', '.join(self.columns_)}; HMAC-SHA256, format={self.format})"


def _first_digit(text: str) -> int:
    for i, char in enumerate(text):
        if char.isdigit():
            return i
    return -1


def _is_integer_column(series: pd.Series) -> bool:
    if pd.api.types.is_integer_dtype(series):
        return True
    if pd.api.types.is_float_dtype(series):
        valid = series.dropna()
        return bool(len(valid)) and bool((valid == valid.round()).all())
    return False

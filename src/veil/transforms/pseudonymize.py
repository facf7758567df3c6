"""Keyed pseudonymization: HMAC-SHA256 tokens that are stable across tables and runs."""

from __future__ import annotations

import hashlib
import importlib
import os
import unicodedata
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

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
from veil.transforms._fpe import Permutations

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

    def _canonical_all(self, values: np.ndarray, column: str) -> list[str]:
        """``_canonical`` of each value; text that needs no accent dropped in one pass."""
        text = pd.api.types.infer_dtype(values, skipna=False) == "string"
        joined = "\x00".join(values) if text else ""
        if not (text and joined.isascii()) or joined.count("\x00") != len(values) - 1:
            return [self._canonical(v, column) for v in values]  # (a NUL in a value too)
        if not self.normalize:
            return list(values)
        if any(space in joined for space in _SPACE):  # somewhere: each value trimmed
            joined = "\x00".join(v.strip() for v in values)
        return (joined.casefold() if self.format == "hex" else joined).split("\x00")

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
                texts = self._canonical_all(np.asarray(uniques, dtype=object), str(name))
            if self.format == "hex":
                hexed, distinct_tokens = self._hex_tokens(key, texts)
            else:
                integer = _is_integer_column(series)
                fpe = Permutations(key, self.domain, column=str(name))
                mapped = fpe.tokens(texts, integer=integer)
                distinct_tokens = len(pd.unique(np.asarray(mapped, dtype=object)))
            # a pseudonym stays one-to-one: truncated hex tokens collide with probability
            # ~n^2/2^(4 length + 1); preserve is a permutation of the text with accents dropped,
            # so "José" and "Jose" meet unless normalize treats them as one value anyway
            # (as many tokens as values: nothing to count)
            if distinct_tokens < len(uniques) and distinct_tokens < self._distinct(uniques, texts):
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
            if self.format == "hex":
                frame[name] = _text_column(series, codes, hexed)
                continue
            tokens = rebuild(series, codes, np.asarray(mapped, dtype=object))
            if self.format == "preserve" and _is_integer_column(series) and not tokens.isna().any():
                tokens = tokens.astype("int64")
            frame[name] = tokens
        return frame

    def _distinct(self, uniques: Any, texts: list[str]) -> int:
        """How many distinct texts the distinct values make (normalizing may merge some)."""
        if not self.normalize or pd.api.types.is_integer_dtype(uniques.dtype):
            return len(uniques)  # the text of an integer is one-to-one
        return len(pd.unique(np.asarray(texts, dtype=object)))

    def _hex_tokens(self, key: bytes, texts: list[str]) -> tuple[np.ndarray, int]:
        """HMAC-SHA256 of each text, as ``length`` hex characters, and how many distinct
        tokens there are (counted on the digests' first 64 bits, without a set of strings;
        in chunks, so 5M digests are never held at once). The key's HMAC state, with the
        domain's prefix taken in, is computed once and copied for each value (hmac.digest
        would derive the key's two padded blocks again for every one): HMAC written out
        (RFC 2104) over the interpreter's own SHA-256, whose copies are a small struct's,
        where OpenSSL's HMAC copies three contexts a value (1.7M against 1.3M values/s)."""
        inner, outer = _hmac_states(key, f"{self.domain}\x1f".encode())
        suffix = b"\x1f0"
        keep = (self.length + 1) // 2
        shift = np.uint64(64 - 4 * min(self.length, 16))
        tokens = np.empty(len(texts), dtype=f"S{self.length}")
        heads = np.empty(len(texts), dtype=np.uint64)
        for start in range(0, len(texts), _CHUNK):
            digests: list[bytes] = []
            copy, wrap, add = inner.copy, outer.copy, digests.append
            for message in _messages(texts[start : start + _CHUNK], suffix):
                state = copy()
                state.update(message)
                last = wrap()
                last.update(state.digest())
                add(last.digest())
            joined = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(-1, 32)
            tokens[start : start + len(digests)] = _hex_prefixes(joined[:, :keep], self.length)
            first = joined[:, :8].copy().view(">u8").ravel()
            heads[start : start + len(digests)] = first.astype(np.uint64) >> shift
        heads.sort()
        distinct = int(np.count_nonzero(np.diff(heads))) + 1 if len(heads) else 0
        if distinct < len(tokens):  # equal first 64 bits: compare the tokens themselves
            distinct = len(np.unique(tokens))
        return tokens, distinct

    def collision_bound(self, rows: int) -> float | None:
        """Hex tokens of ``rows`` distinct values treated in different batches: at most
        ``rows**2 / 2**(4 length + 1)``; format-preserving pseudonyms are a permutation (None)."""
        return min(1.0, rows**2 / 2.0 ** (4 * self.length + 1)) if self.format == "hex" else None

    def describe(self) -> str:
        """The columns and the pseudonyms' format (never the key)."""
        return f"Pseudonymize({', '.join(self.columns_)}; HMAC-SHA256, format={self.format})"


#: The ASCII characters ``str.strip`` removes.
_SPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "  # (a character at a time: memchr, 10x a regex)


def _sha256() -> Any:
    """The interpreter's own SHA-256 (no OpenSSL context to copy), or hashlib's."""
    for module in ("_sha2", "_sha256"):  # Python 3.12+, 3.11
        try:
            return importlib.import_module(module).sha256
        except (ImportError, AttributeError):
            continue
    return hashlib.sha256


def _hmac_states(key: bytes, prefix: bytes) -> tuple[Any, Any]:
    """HMAC-SHA256's inner state with ``key`` and ``prefix`` taken in, and its outer state:
    ``outer.copy().update(inner.copy().update(m).digest()).digest()`` is
    ``hmac.digest(key, prefix + m, "sha256")`` (RFC 2104; tested against it)."""
    sha256 = _sha256()
    block = (hashlib.sha256(key).digest() if len(key) > 64 else key).ljust(64, b"\0")
    inner = sha256(bytes(b ^ 0x36 for b in block))
    inner.update(prefix)
    return inner, sha256(bytes(b ^ 0x5C for b in block))


def _messages(texts: list[str], suffix: bytes) -> list[bytes]:
    """Each text encoded, ``suffix`` after it: one join, encoding and split for the lot (a NUL
    in a text, which the split would cut at, takes the value-by-value way)."""
    if not texts or "\x00" in "".join(texts):
        return [text.encode() + suffix for text in texts]
    end = suffix.decode()
    return (f"{end}\x00".join(texts) + end).encode().split(b"\x00")


def _hex_prefixes(digests: np.ndarray, length: int) -> np.ndarray:
    """The first ``length`` hex characters of each row of bytes, as ASCII (``S{length}``)."""
    rows, width = digests.shape
    hexed = np.frombuffer(np.ascontiguousarray(digests).tobytes().hex().encode(), dtype=np.uint8)
    return (
        np.ascontiguousarray(hexed.reshape(rows, 2 * width)[:, :length]).view(f"S{length}").ravel()
    )


def _text_column(series: pd.Series, codes: np.ndarray, tokens: np.ndarray) -> pd.Series:
    """The column of ``tokens[code]`` (ASCII, ``S{n}``) per row as text, missing where the
    code is -1: in Arrow, without a Python string a row (the same column ``rebuild`` makes
    from a list)."""
    dtype = pd.Series(["text"]).dtype  # what pandas makes of strings (object before 3.0)
    if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        return rebuild(series, codes, tokens.astype(str).astype(object))
    width = tokens.dtype.itemsize
    fixed = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), len(tokens), [None, pa.py_buffer(np.ascontiguousarray(tokens))]
    )
    text = fixed.cast(pa.binary()).cast(pa.string())
    taken = pc.take(text, pa.array(codes, mask=codes < 0))
    column = taken.to_pandas(types_mapper={pa.string(): dtype}.get)
    return pd.Series(column.array, index=series.index, name=series.name)


#: Values hashed at a time (the digests of one chunk are held, never all of them).
_CHUNK = 1 << 18


def _is_integer_column(series: pd.Series) -> bool:
    if pd.api.types.is_integer_dtype(series):
        return True
    if pd.api.types.is_float_dtype(series):
        valid = series.dropna()
        return bool(len(valid)) and bool((valid == valid.round()).all())
    return False

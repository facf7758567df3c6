"""Format-preserving pseudonyms: a value's digits and letters permuted within its shape (the
digits, letters and kept characters, position by position), by a keyed permutation table for
small shapes and FF3-1 (NIST SP 800-38G Rev. 1) over the number's bits for large ones.

FF3-1 is computed for whole arrays (``ff3_1_bits``): the eight Feistel rounds in numpy, the AES
block of every value of a round in one ECB call. It equals the ``ff3`` package value for value
(tests/transforms/test_fpe.py), which still serves the numbers over 64 bits.
"""

from __future__ import annotations

import hmac
import math
from typing import Any

import numpy as np

from veil.exceptions import ParameterError

_DIGITS = "0123456789"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = _UPPER.lower()
#: What a position of a value is: kept as it is, a digit, a letter, or an integer's leading
#: digit (1-9, so that integers keep their length). Kept characters are coded above _KINDS.
_KEPT, _DIGIT, _LETTER, _LEAD = 0, 1, 2, 3
_KINDS = 4
_RADIX = {_DIGIT: 10, _LETTER: 26, _LEAD: 9}
_SHAPE_WORD = {_DIGIT: "d", _LETTER: "a", _LEAD: "D"}
_UINT64 = 2**64 - 1


def _kinds(codes: np.ndarray, integer: bool) -> np.ndarray:
    """Each position's kind (``_KEPT``, ``_DIGIT``, ``_LETTER``, ``_LEAD``) of rows of code
    points; with ``integer``, a row's first digit is its lead when it has two digits or more
    and that digit is not 0."""
    digit = (codes >= 48) & (codes <= 57)
    letter = ((codes >= 65) & (codes <= 90)) | ((codes >= 97) & (codes <= 122))
    kinds = np.where(digit, _DIGIT, np.where(letter, _LETTER, _KEPT)).astype(np.uint32)
    if integer and codes.shape[1]:
        first = np.argmax(digit, axis=1)
        rows = np.arange(len(codes))
        lead = (digit.sum(axis=1) > 1) & (codes[rows, first] != 48)
        kinds[rows[lead], first[lead]] = _LEAD
    return kinds


def _digit_values(chars: np.ndarray, kind: int) -> np.ndarray:
    """The value of each character of one position in its radix."""
    if kind == _DIGIT:
        return (chars - 48).astype(np.uint64)
    if kind == _LEAD:
        return (chars - 49).astype(np.uint64)
    return ((chars | 32) - 97).astype(np.uint64)  # a letter, either case


def _characters(values: np.ndarray, kind: int, before: np.ndarray) -> np.ndarray:
    """The characters of ``values`` at one position; letters keep the case they had."""
    v = values.astype(np.uint32)
    if kind == _DIGIT:
        return v + 48
    if kind == _LEAD:
        return v + 49
    return np.where(before >= 97, v + 97, v + 65).astype(np.uint32)


def _groups(rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The distinct rows of a 2-D array, each with the indices of the rows equal to it: by a
    hash of each row (pandas' factorize, linear), each group then confirmed equal to its
    first row (np.unique's sort decides on the rare collision)."""
    import pandas as pd

    weights = np.random.default_rng(0).integers(1, 2**63, rows.shape[1], dtype=np.uint64) | 1
    with np.errstate(over="ignore"):
        hashed = (rows.astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
    labels, _ = pd.factorize(hashed)
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    groups = [(rows[idx[0]], idx) for idx in np.split(order, bounds) if len(idx)]
    if all((rows[idx] == first).all() for first, idx in groups):
        return groups
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    return [(row, np.flatnonzero(inverse.ravel() == g)) for g, row in enumerate(unique)]


def _code_points(text: str, length: int) -> np.ndarray:
    return np.array([text], dtype=f"<U{length}").view(np.uint32)


#: Each byte with its bits in reverse order.
_REVERSED_BYTE = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], dtype=np.uint8)


def bit_reverse(values: np.ndarray, width: int) -> np.ndarray:
    """The lowest ``width`` bits of each value (uint64) in reverse order."""
    if width == 0:
        return np.zeros_like(values)
    as_bytes = values.astype("<u8").view(np.uint8).reshape(-1, 8)
    flipped = np.ascontiguousarray(_REVERSED_BYTE[as_bytes][:, ::-1]).view("<u8").ravel()
    return flipped >> np.uint64(64 - width)


def ff3_1_bits(key: bytes, tweak: bytes, numbers: np.ndarray, bits: int) -> np.ndarray:
    """FF3-1 encryption, radix 2, of each number as a ``bits``-bit string written most
    significant bit first (``FF3Cipher(key.hex(), tweak.hex(), radix=2).encrypt(format(n,
    f"0{bits}b"))``, read back as a number), for ``bits`` up to 64.

    With radix 2, the specification's NUM(REV(X)) of a half is that half's bits reversed,
    the round's block is the other half (as 12 bytes) after the tweak's word, the cipher's key
    and blocks are byte-reversed, and only the low m bits of each round's output count: all of
    it uint64 arithmetic over the array."""
    if not 2 <= bits <= 64:
        raise ValueError(f"ff3_1_bits takes 2 to 64 bits, got {bits}")
    from Crypto.Cipher import AES

    t = tweak
    expanded = bytes([t[0], t[1], t[2], t[3] & 0xF0, t[4], t[5], t[6], (t[3] & 0x0F) << 4])
    left, right = expanded[:4], expanded[4:]
    cipher = AES.new(key[::-1], AES.MODE_ECB)
    u = (bits + 1) // 2
    v = bits - u
    numbers = numbers.astype(np.uint64)
    a = bit_reverse(numbers >> np.uint64(v), u)
    b = bit_reverse(numbers & np.uint64((1 << v) - 1), v)
    block = np.zeros((len(numbers), 16), dtype=np.uint8)
    for i in range(8):
        m, w = (u, right) if i % 2 == 0 else (v, left)
        block[:, :8] = b.astype("<u8").view(np.uint8).reshape(-1, 8)
        block[:, 12:] = [w[3] ^ i, w[2], w[1], w[0]]
        out = np.frombuffer(cipher.encrypt(block.tobytes()), dtype=np.uint8).reshape(-1, 16)
        y = np.ascontiguousarray(out[:, :8]).view("<u8").ravel()
        a, b = b, (a + y) & np.uint64((1 << m) - 1)  # the sum wraps at 2^64: m <= 64
    return (bit_reverse(a, u) << np.uint64(v)) | bit_reverse(b, v)


#: Shapes with at most this many values get a keyed permutation table (FF3-1 needs >= 10^6).
TABLE_MAX = 2**20


#: FF3-1 over bits takes at most 192 (2 * floor(96 / log2(2))).
FF3_MAX_BITS = 192


class Permutations:
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

    def tokens(self, texts: list[str], *, integer: bool) -> list[str]:
        """Each text's pseudonym (``token`` of each), computed for whole arrays: the texts
        grouped by length and shape, each group's numbers permuted at once (a table lookup,
        or FF3-1 over the group with the AES rounds of every value in one call:
        ``ff3_1_bits``). Texts the arrays cannot hold (a NUL) and numbers over 64 bits take
        ``token``, value by value."""
        out: list[str | None] = [None] * len(texts)
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        for length in np.unique(lengths):
            where = np.flatnonzero(lengths == length)
            chosen = [texts[i] for i in where]
            if length == 0 or any("\x00" in t for t in chosen):
                done = [self.token(t, integer=integer) for t in chosen]
            else:
                done = self._same_length(chosen, int(length), integer)
            for i, token in zip(where.tolist(), done, strict=True):
                out[i] = token
        return [t if t is not None else "" for t in out]

    def _same_length(self, texts: list[str], length: int, integer: bool) -> list[str]:
        """``tokens`` of texts of one length, as a (rows, length) array of code points."""
        codes = np.array(texts, dtype=f"<U{length}").view(np.uint32).reshape(-1, length).copy()
        kinds = _kinds(codes, integer)
        # a row's shape: each position's kind, or its character where it is kept
        shapes = np.where(kinds == _KEPT, codes + _KINDS, kinds)
        for shape_row, rows in _groups(shapes):
            free = np.flatnonzero(shape_row < _KINDS)
            if not len(free):
                continue  # nothing personal to hide: no digit, no letter
            radices = [_RADIX[int(k)] for k in shape_row[free]]
            size = math.prod(radices)
            if size > _UINT64:
                for r in rows:  # over 64 bits: value by value
                    codes[r] = _code_points(self.token(texts[r], integer=integer), length)
                continue
            shape = "".join(
                _SHAPE_WORD[int(k)] if k < _KINDS else "\x00" + chr(int(k) - _KINDS)
                for k in shape_row
            )
            block = codes[np.ix_(rows, free)]
            kind_of = shape_row[free]
            number = np.zeros(len(rows), dtype=np.uint64)
            for j, radix in enumerate(radices):
                number = number * np.uint64(radix) + _digit_values(block[:, j], int(kind_of[j]))
            permuted = self._permute_many(number, size, shape)
            for j in range(len(free) - 1, -1, -1):
                permuted, value = np.divmod(permuted, np.uint64(radices[j]))
                block[:, j] = _characters(value, int(kind_of[j]), block[:, j])
            codes[np.ix_(rows, free)] = block
        return codes.view(f"<U{length}").ravel().tolist()

    def _permute_many(self, numbers: np.ndarray, size: int, shape: str) -> np.ndarray:
        """``_permute`` of each number (all below ``size``, itself below 2^64)."""
        if size <= TABLE_MAX:
            table = self.tables.get(shape)
            if table is None:
                table = self.tables[shape] = self._table(size, self._tweak(shape))
            return table[numbers.astype(np.int64)].astype(np.uint64)
        bits = (size - 1).bit_length()
        tweak = self._tweak(shape)[:7]  # FF3-1's 56-bit tweak, as in _permute
        out = ff3_1_bits(self.aes_key, tweak, numbers, bits)
        outside = np.flatnonzero(out >= np.uint64(size))
        while len(outside):  # cycle-walking, as in _permute
            out[outside] = ff3_1_bits(self.aes_key, tweak, out[outside], bits)
            outside = outside[out[outside] >= np.uint64(size)]
        return out

    def token(self, text: str, *, integer: bool) -> str:
        """One text's pseudonym: its digits and letters permuted within its shape."""
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

"""Fixed-point encoding and packing: many floats in one Paillier plaintext, sums that cannot
overflow.

A value ``v`` with ``|v| <= bound`` becomes the integer ``round(v * 2^precision) + offset``
with ``offset = bound * 2^precision``, so negatives are non-negative too: each fits in
``value_bits``. Summed over at most ``max_parties`` parties, a slot holds at most
``max_parties * 2 * offset``: ``slot_bits`` is that number's bit length, the headroom. A
plaintext holds ``slots`` such slots below the modulus, one of them a check slot in which
every party puts 1: the decrypted sum must read the number of parties there, and each slot no
more than that many values within the bound can make. These catch accidents and a party's
oversized slot; they cannot authenticate a sum (Paillier is malleable, and its key public):
that is done by the parties' signatures, checked by the key holder
(:mod:`veil.federated.signing`).

Every configuration that could overflow is refused when it is made (:class:`Packing`), and
every value outside the bound when it is encoded; decoding subtracts the parties' offsets.
Weighting by row counts is folded in by the parties (each sends ``rows / total_rows`` times
its update), so the decrypted sum is already the weighted average.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from veil.exceptions import InputError, ParameterError

#: the check slot's value from every party
CHECK = 1


@dataclass(frozen=True)
class Packing:
    """How floats are packed into plaintexts of ``plaintext_bits`` bits (a Paillier modulus's
    bit length less one).

    ``precision``: fractional bits (24: steps of 6e-8); ``bound``: the largest magnitude a
    value may have; ``max_parties``: the most updates that will be summed.
    """

    plaintext_bits: int
    precision: int = 24
    bound: float = 64.0
    max_parties: int = 64

    def __post_init__(self) -> None:
        if not 1 <= self.precision <= 52:
            raise ParameterError(f"precision must be 1 to 52 bits, got {self.precision!r}")
        if not (math.isfinite(self.bound) and self.bound > 0):
            raise ParameterError(f"bound must be a positive number, got {self.bound!r}")
        if self.max_parties < 1:
            raise ParameterError(f"max_parties must be at least 1, got {self.max_parties!r}")
        if self.slots < 2:
            raise ParameterError(
                f"a {self.plaintext_bits}-bit plaintext cannot hold two {self.slot_bits}-bit "
                f"slots ({self.max_parties} parties, bound {self.bound}, precision "
                f"{self.precision} bits); use a larger key, fewer parties or a smaller bound"
            )

    @property
    def offset(self) -> int:
        """What every encoded value is shifted by, so none is negative."""
        return math.ceil(self.bound * 2**self.precision)

    @property
    def slot_bits(self) -> int:
        """Bits per slot: room for the sum of ``max_parties`` values of up to ``2 * offset``."""
        return (self.max_parties * 2 * self.offset).bit_length()

    @property
    def slots(self) -> int:
        """Slots per plaintext (one of them the check slot)."""
        return self.plaintext_bits // self.slot_bits

    @property
    def values_per_plaintext(self) -> int:
        """Values per plaintext: the slots but the check slot."""
        return self.slots - 1

    @property
    def resolution(self) -> float:
        """The largest rounding error of one decoded sum over ``parties`` parties is
        ``parties * resolution``."""
        return 0.5 / 2**self.precision

    def plaintexts(self, count: int) -> int:
        """How many plaintexts ``count`` values take."""
        return -(-count // self.values_per_plaintext)

    def encode(self, values: np.ndarray) -> list[int]:
        """Values (each ``|v| <= bound``) as packed plaintexts, the check slot first."""
        values = np.asarray(values, dtype=float).ravel()
        bad = ~np.isfinite(values) | (np.abs(values) > self.bound)
        if bad.any():
            where = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"value {values[where]!r} at position {where} of the update is outside the "
                f"encoding bound ±{self.bound}: clip the update (or raise bound, which costs "
                "slots) so the encrypted sum cannot overflow"
            )
        scaled = np.rint(values * 2.0**self.precision)
        encoded = [int(v) + self.offset for v in scaled.astype(object)]
        per, bits = self.values_per_plaintext, self.slot_bits
        out = []
        for start in range(0, len(encoded), per):
            plaintext = CHECK
            for shift, v in enumerate(encoded[start : start + per], start=1):
                plaintext |= v << (shift * bits)
            out.append(plaintext)
        return out

    def decode(self, plaintexts: list[int], count: int, parties: int) -> np.ndarray:
        """The ``count`` summed values of ``parties`` parties' plaintexts, checked."""
        if not 1 <= parties <= self.max_parties:
            raise ParameterError(
                f"parties must be 1 to {self.max_parties} (the packing's headroom), got "
                f"{parties!r}: a sum over more could overflow its slots"
            )
        if len(plaintexts) != self.plaintexts(count):
            raise InputError(
                f"the aggregate has {len(plaintexts)} plaintexts where {count:,} values take "
                f"{self.plaintexts(count)}: it was truncated"
            )
        per, bits = self.values_per_plaintext, self.slot_bits
        mask = (1 << bits) - 1
        shift_off = parties * self.offset
        out = np.empty(count)
        for i, plaintext in enumerate(plaintexts):
            if plaintext & mask != parties * CHECK or plaintext >> (bits * self.slots):
                raise InputError(
                    f"the aggregate does not decode (plaintext {i}: check slot "
                    f"{plaintext & mask}, expected {parties}): a ciphertext was tampered with, "
                    "or a party sent values outside the bound or with another packing"
                )
            take = min(per, count - i * per)
            for j in range(take):
                slot = (plaintext >> ((j + 1) * bits)) & mask
                if slot > 2 * shift_off:  # more than `parties` values within the bound make
                    raise InputError(
                        f"the aggregate does not decode (plaintext {i}, value {j}: a sum "
                        f"beyond what {parties} values within ±{self.bound} can make): a "
                        "party sent a value outside the bound or an oversized slot"
                    )
                out[i * per + j] = slot - shift_off
        return out / 2.0**self.precision

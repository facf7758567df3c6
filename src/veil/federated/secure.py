"""Secure aggregation schemes behind one interface: parties ``encrypt`` their (already
weighted) update, the server ``aggregate``s what it cannot read, the key holder ``decrypt``s
only the sum.

- ``paillier``: exact to the packing's precision, additively homomorphic (veil's own, on
  gmpy2), many values per ciphertext (:mod:`veil.federated.packing`);
- ``ckks``: TenSEAL's approximate scheme (Apache-2.0), faster for long vectors, errors around
  1e-6;
- ``none``: the plain baseline, float64 bytes.

A scheme made from public material (:meth:`Scheme.public`) encrypts and aggregates; only the
key holder's, made with the secret, decrypts. Every update is one ``bytes`` blob, framed and
checked, so a truncated or tampered one fails with one line and never becomes a wrong model.
"""

from __future__ import annotations

import struct
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from veil.exceptions import InputError, MissingExtraError, ParameterError, SecretError
from veil.federated import paillier
from veil.federated.packing import Packing

#: how the parties' updates may be protected
SCHEMES = ("paillier", "ckks", "none")


class Scheme(ABC):
    """One way of summing updates; see the module's doc."""

    name: str

    @abstractmethod
    def encrypt(self, values: np.ndarray) -> bytes:
        """A party's update, protected."""

    @abstractmethod
    def aggregate(self, updates: list[bytes]) -> bytes:
        """The protected sum of the parties' protected updates (needs no secret)."""

    @abstractmethod
    def decrypt(self, aggregate: bytes, count: int, parties: int) -> np.ndarray:
        """The sum of ``parties`` updates of ``count`` values (key holder only)."""

    @abstractmethod
    def public(self) -> bytes:
        """What parties and server need: never the secret."""

    def fingerprint(self) -> str:
        """A hash of the public key alone (what a party compares with the key it was given)."""
        import hashlib

        return hashlib.sha256(self.public()).hexdigest()


# ---------------------------------------------------------------------------------- plain
class Plain(Scheme):
    """No protection: the baseline that shows what the encryption costs."""

    name = "none"

    def encrypt(self, values: np.ndarray) -> bytes:
        """The update's float64 bytes."""
        return np.asarray(values, dtype="<f8").tobytes()

    def aggregate(self, updates: list[bytes]) -> bytes:
        """The element-wise sum."""
        arrays = [_floats(u) for u in updates]
        if len({len(a) for a in arrays}) > 1:
            raise InputError("the parties' updates differ in length: their models differ")
        return np.sum(arrays, axis=0).astype("<f8").tobytes()

    def decrypt(self, aggregate: bytes, count: int, parties: int) -> np.ndarray:
        """The sum itself."""
        out = _floats(aggregate)
        if len(out) != count:
            raise InputError(f"the aggregate holds {len(out):,} values, expected {count:,}")
        return out

    def public(self) -> bytes:
        """Nothing: there is no key."""
        return b""


def _floats(blob: bytes) -> np.ndarray:
    if len(blob) % 8:
        raise InputError(f"an update of {len(blob):,} bytes is not float64 values: truncated")
    return np.frombuffer(blob, dtype="<f8")


# ------------------------------------------------------------------------------- paillier
class Paillier(Scheme):
    """Packed Paillier (exact to ``packing.resolution`` per party)."""

    name = "paillier"
    #: the largest magnitude of an update value (DP updates are clipped to it)
    DEFAULT_BOUND = 64.0

    def __init__(
        self,
        public: paillier.PublicKey,
        *,
        private: paillier.PrivateKey | None = None,
        precision: int = 24,
        bound: float = DEFAULT_BOUND,
        max_parties: int = 64,
    ) -> None:
        if private is not None and private.public != public:
            raise SecretError("the private key does not belong to this public key")
        self.key = public
        self.private = private
        self.packing = Packing(
            public.bits - 1, precision=precision, bound=bound, max_parties=max_parties
        )

    @classmethod
    def generate(cls, bits: int = 2048, **options: Any) -> Paillier:
        """A key holder's scheme with a new key pair."""
        public, private = paillier.generate_keypair(bits)
        return cls(public, private=private, **options)

    def encrypt(self, values: np.ndarray) -> bytes:
        """Pack, then encrypt each plaintext (parties encrypt in parallel on their own
        machines; within one, a process pool is the caller's choice, as the bench shows)."""
        encrypt = paillier.encryptor(self.key).encrypt
        return paillier.to_bytes(self.key, [encrypt(p) for p in self.packing.encode(values)])

    def aggregate(self, updates: list[bytes]) -> bytes:
        """Ciphertexts multiplied position by position mod ``n^2``: their plaintexts added."""
        if len(updates) > self.packing.max_parties:
            raise ParameterError(
                f"{len(updates)} updates exceed the packing's headroom of "
                f"{self.packing.max_parties} parties: their sum could overflow"
            )
        columns = [paillier.from_bytes(self.key, u) for u in updates]
        if len({len(c) for c in columns}) > 1:
            raise InputError("the parties' encrypted updates differ in length: their models differ")
        return paillier.to_bytes(self.key, [self.key.add(*cs) for cs in zip(*columns, strict=True)])

    def decrypt(self, aggregate: bytes, count: int, parties: int) -> np.ndarray:
        """Decrypt (CRT) and unpack the sum; the check slots must read ``parties``."""
        if self.private is None:
            raise SecretError("only the key holder can decrypt: this scheme holds no private key")
        plaintexts = [self.private.decrypt(c) for c in paillier.from_bytes(self.key, aggregate)]
        return self.packing.decode(plaintexts, count, parties)

    def public(self) -> bytes:
        """The public key's JSON."""
        return self.key.to_json().encode()

    def for_parties(self) -> Paillier:
        """The same scheme without the private key (what the server and parties get)."""
        p = self.packing
        return Paillier(self.key, precision=p.precision, bound=p.bound, max_parties=p.max_parties)


# ----------------------------------------------------------------------------------- ckks
#: CKKS parameters: 8192 slots' ring (4096 values per ciphertext), 2^40 scale
CKKS_RING, CKKS_PRIMES, CKKS_SCALE = 8192, (60, 40, 40, 60), 2.0**40
#: the largest coefficient modulus (bits) per ring size at 128-bit classical security, from
#: the Homomorphic Encryption Standard's table (also SEAL's default bound)
CKKS_MAX_MODULUS_128 = {1024: 27, 2048: 54, 4096: 109, 8192: 218, 16384: 438, 32768: 881}


def check_ckks_security(context: Any) -> None:
    """Refuse a CKKS context below 128-bit security (its ring too small for its modulus)."""
    data = context.data.seal_context().key_context_data()
    ring, bits = data.parms().poly_modulus_degree(), data.total_coeff_modulus_bit_count()
    if bits > CKKS_MAX_MODULUS_128.get(ring, 0):
        raise InputError(
            f"the CKKS context (ring {ring}, modulus {bits} bits) is below 128-bit security: "
            f"at ring {ring} the modulus may have at most {CKKS_MAX_MODULUS_128.get(ring, 0)} "
            "bits; ask the key holder for a context veil made"
        )


def _tenseal() -> Any:
    try:
        import tenseal
    except ImportError as err:
        raise MissingExtraError("CKKS needs TenSEAL: pip install 'veil[federated]'") from err
    return tenseal


class Ckks(Scheme):
    """TenSEAL's CKKS: approximate (errors near 1e-6), one ciphertext per 4,096 values."""

    name = "ckks"

    def __init__(self, context: bytes | None = None) -> None:
        ts = _tenseal()
        if context is None:  # the key holder: a new secret key
            self._context = ts.context(
                ts.SCHEME_TYPE.CKKS, CKKS_RING, coeff_mod_bit_sizes=list(CKKS_PRIMES)
            )
            self._context.global_scale = CKKS_SCALE
        else:
            try:
                self._context = ts.context_from(context)
            except Exception as err:  # TenSEAL raises its own ValueError/RuntimeError kinds
                raise InputError("the CKKS context is not a TenSEAL context: damaged") from err
        check_ckks_security(self._context)
        self.slots = CKKS_RING // 2

    def encrypt(self, values: np.ndarray) -> bytes:
        """The update (and a check value of 1 in front) as CKKS vectors."""
        ts = _tenseal()
        values = np.concatenate([[1.0], np.asarray(values, dtype=float).ravel()])
        chunks = [
            ts.ckks_vector(self._context, values[i : i + self.slots].tolist()).serialize()
            for i in range(0, len(values), self.slots)
        ]
        return _frame(chunks)

    def aggregate(self, updates: list[bytes]) -> bytes:
        """CKKS vectors added position by position."""
        ts = _tenseal()
        parts = [_unframe(u) for u in updates]
        if len({len(p) for p in parts}) > 1:
            raise InputError("the parties' encrypted updates differ in length: their models differ")
        sums = []
        for chunks in zip(*parts, strict=True):
            total = None
            for chunk in chunks:
                vector = self._vector(ts, chunk)
                total = vector if total is None else total + vector
            assert total is not None
            sums.append(total.serialize())
        return _frame(sums)

    def decrypt(self, aggregate: bytes, count: int, parties: int) -> np.ndarray:
        """The decrypted sum; its check value must read ``parties``."""
        ts = _tenseal()
        if not self._context.has_secret_key():
            raise SecretError("only the key holder can decrypt: this context has no secret key")
        values = np.concatenate(
            [np.asarray(self._vector(ts, c).decrypt()) for c in _unframe(aggregate)]
        )
        if len(values) != count + 1 or abs(values[0] - parties) > 1e-3:
            raise InputError(
                "the CKKS aggregate does not decode (wrong length or check value): a ciphertext "
                "was tampered with, or parties used another context"
            )
        return values[1:]

    def _vector(self, ts: Any, blob: bytes) -> Any:
        try:
            return ts.ckks_vector_from(self._context, blob)
        except Exception as err:  # TenSEAL's deserializer raises several kinds
            raise InputError(
                "an encrypted update is not a CKKS vector: truncated or tampered"
            ) from err

    def public(self) -> bytes:
        """The context without its secret key."""
        return bytes(self._context.serialize(save_secret_key=False))

    def fingerprint(self) -> str:
        """A hash of the public key alone (a context's other keys serialize differently each
        time it is loaded)."""
        import hashlib

        key = self._context.serialize(
            save_public_key=True,
            save_secret_key=False,
            save_galois_keys=False,
            save_relin_keys=False,
        )
        return hashlib.sha256(bytes(key)).hexdigest()

    def secret(self) -> bytes:
        """The context with its secret key: for the key holder's own file only."""
        return bytes(self._context.serialize(save_secret_key=True))


def _frame(chunks: list[bytes]) -> bytes:
    return struct.pack("<I", len(chunks)) + b"".join(struct.pack("<Q", len(c)) + c for c in chunks)


def _unframe(blob: bytes) -> list[bytes]:
    try:
        (count,) = struct.unpack_from("<I", blob, 0)
        at, out = 4, []
        for _ in range(count):
            (size,) = struct.unpack_from("<Q", blob, at)
            at += 8
            if at + size > len(blob):
                raise struct.error("short")
            out.append(blob[at : at + size])
            at += size
    except struct.error as err:
        raise InputError("an encrypted update is truncated (its framing is short)") from err
    if at != len(blob):
        raise InputError("an encrypted update has trailing bytes: tampered")
    return out

"""Signed contributions: each party signs what it sends, so the key holder decrypts only sums
it can check are made of this round's contributions of enough distinct, enrolled parties.

Paillier (like CKKS) is malleable and its public key is public: anyone, the server too, can
encrypt a value and multiply it into a party's ciphertext. A check slot catches accidents, not
that. So every party holds an Ed25519 signing key made at enrolment (``veil fl certs``); the
key holder holds the roster of their public keys. A party signs, for each protected blob it
sends, the run's nonce (drawn by the key holder), the purpose, the round, its own name and the
blob's SHA-256. The key holder, asked to decrypt, is sent every signed piece: it checks each
signature against the roster, counts distinct signers, refuses a (purpose, round) it has
already decrypted, recomputes the product of the pieces itself and compares it with the sum the
server sent. One signature per blob (a whole update), never per value.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veil.exceptions import InputError, SecretError

#: what every signed message starts with (a signature made for anything else never verifies)
DOMAIN = b"veil federated contribution v1\0"


def _ed25519() -> Any:
    from cryptography.hazmat.primitives.asymmetric import ed25519

    return ed25519


def digest(*, nonce: str, purpose: str, round: int, party: str, blob: bytes) -> bytes:
    """The bytes a party signs: the context of one contribution and its blob's hash."""
    header = json.dumps(
        {"nonce": nonce, "purpose": purpose, "round": int(round), "party": party}, sort_keys=True
    )
    return DOMAIN + header.encode() + b"\0" + hashlib.sha256(blob).digest()


@dataclass(frozen=True)
class Signer:
    """A party's Ed25519 signing key (never printed)."""

    party: str
    key: Any

    def __repr__(self) -> str:
        return f"Signer({self.party!r}, public {self.public_hex[:16]}…)"

    @classmethod
    def generate(cls, party: str) -> Signer:
        """A new key for ``party``."""
        return cls(party, _ed25519().Ed25519PrivateKey.generate())

    @property
    def public_hex(self) -> str:
        """The public key (32 bytes, hex): what the key holder's roster lists."""
        from cryptography.hazmat.primitives import serialization

        raw = self.key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        return bytes(raw).hex()

    def sign(self, *, nonce: str, purpose: str, round: int, blob: bytes) -> bytes:
        """The signature of one contribution."""
        message = digest(nonce=nonce, purpose=purpose, round=round, party=self.party, blob=blob)
        return bytes(self.key.sign(message))

    def to_bytes(self) -> bytes:
        """The key file's content (PEM, PKCS#8, with the party's name in a comment line)."""
        from cryptography.hazmat.primitives import serialization

        pem = self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return f"# veil party: {json.dumps(self.party)}\n".encode() + bytes(pem)

    @classmethod
    def from_bytes(cls, data: bytes) -> Signer:
        """Back from :meth:`to_bytes`."""
        from cryptography.hazmat.primitives import serialization

        first, _, pem = data.partition(b"\n")
        try:
            party = json.loads(first.decode().removeprefix("# veil party: "))
            key = serialization.load_pem_private_key(pem, password=None)
        except (ValueError, TypeError, UnicodeDecodeError) as err:
            raise SecretError("the signing key file is not one `veil fl certs` wrote") from err
        if not isinstance(key, _ed25519().Ed25519PrivateKey) or not isinstance(party, str):
            raise SecretError("the signing key file does not hold an Ed25519 key and a party name")
        return cls(party, key)


def read_signer(path: str | Path) -> Signer:
    """A party's signing key from its file."""
    try:
        return Signer.from_bytes(Path(path).read_bytes())
    except OSError as err:
        raise SecretError(f"cannot read the signing key {str(path)!r}: {err.strerror}") from err


@dataclass(frozen=True)
class Roster:
    """The enrolled parties' public signing keys: what the key holder checks signatures with."""

    keys: dict[str, str]  # party -> Ed25519 public key, hex

    def to_json(self) -> str:
        """``{"parties": {name: public key hex}}``: public, safe to share."""
        return json.dumps({"parties": self.keys}, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Roster:
        """Back from :meth:`to_json`, every key checked."""
        try:
            keys = {str(k): str(v) for k, v in json.loads(text)["parties"].items()}
            for value in keys.values():
                _ed25519().Ed25519PublicKey.from_public_bytes(bytes.fromhex(value))
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise InputError(
                'the roster is not a veil roster ({"parties": {name: Ed25519 public key hex}}): '
                "use the parties.json `veil fl certs` wrote"
            ) from err
        return cls(keys)

    def verify(
        self, *, nonce: str, purpose: str, round: int, party: str, blob: bytes, signature: bytes
    ) -> None:
        """Refuse, in one line, a contribution this party did not sign for this round."""
        from cryptography.exceptions import InvalidSignature

        if party not in self.keys:
            raise SecretError(
                f"a contribution claims to come from {party!r}, which is not an "
                "enrolled party: refusing to decrypt"
            )
        public = _ed25519().Ed25519PublicKey.from_public_bytes(bytes.fromhex(self.keys[party]))
        try:
            public.verify(
                signature, digest(nonce=nonce, purpose=purpose, round=round, party=party, blob=blob)
            )
        except InvalidSignature:
            raise SecretError(
                f"the contribution of {party!r} does not carry its signature for {purpose} round "
                f"{round} of this run (forged, altered, or replayed from another round or run): "
                "refusing to decrypt"
            ) from None


def read_roster(path: str | Path) -> Roster:
    """The roster from its file."""
    try:
        return Roster.from_json(Path(path).read_text())
    except OSError as err:
        raise InputError(f"cannot read the roster {str(path)!r}: {err.strerror}") from err

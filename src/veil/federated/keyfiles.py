"""Key and model files: the key holder's secret (never printed, written owner-only and
atomically), the public key parties are given, and the trained model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veil.exceptions import InputError, SecretError
from veil.federated import secure
from veil.federated.paillier import PrivateKey

if TYPE_CHECKING:
    from veil.federated._flower import Outcome


def _write(path: str | Path, data: bytes, *, private: bool) -> None:
    """Through a temporary file and a rename (never a half-written key), owner-only when
    ``private``."""
    from veil.io import atomic_open

    with atomic_open(path, "wb", permissions=0o600 if private else None) as handle:
        handle.write(data)


def write_secret(scheme: secure.Scheme, path: str | Path) -> None:
    """The key holder's secret (Paillier private key or CKKS secret context), owner-only."""
    if isinstance(scheme, secure.Paillier):
        if scheme.private is None:
            raise SecretError("this scheme holds no private key to write")
        _write(path, scheme.private.to_json().encode(), private=True)
    elif isinstance(scheme, secure.Ckks):
        _write(path, b"CKKS\n" + scheme.secret(), private=True)
    else:
        raise SecretError("--encrypt none has no secret to keep")


def write_signing_key(signer: Any, path: str | Path) -> None:
    """A party's Ed25519 signing key (``veil.federated.signing.Signer``), owner-only."""
    _write(path, signer.to_bytes(), private=True)


def write_public(scheme: secure.Scheme, path: str | Path) -> None:
    """The public key (or CKKS public context): for the parties."""
    _write(path, scheme.public(), private=False)


def read_public(path: str | Path) -> bytes:
    """The public material in a file :func:`write_public` wrote (a Paillier key, checked for
    its size, or a CKKS public context, checked for its security): as the key holder relays
    it."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise InputError(f"cannot read the public key {str(path)!r}: {err.strerror}") from err
    if data.lstrip().startswith(b"{"):
        from veil.federated.paillier import PublicKey

        PublicKey.from_json(data.decode(errors="replace"))
    else:
        secure.Ckks(data)
    return data


def read_secret(path: str | Path) -> secure.Scheme:
    """The key holder's scheme, with its secret, from :func:`write_secret`'s file."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise SecretError(
            f"cannot read the key holder's secret {str(path)!r}: {err.strerror}"
        ) from err
    if data.startswith(b"CKKS\n"):
        return secure.Ckks(data[5:])
    private = PrivateKey.from_json(data.decode(errors="replace"))
    return secure.Paillier(private.public, private=private)


def write_model(outcome: Outcome, path: str | Path) -> None:
    """The trained model: its weights and the spec that encodes a table for it (JSON)."""
    body: dict[str, Any] = {
        "model": outcome.model,
        "encrypt": outcome.encrypt,
        "weights": [float(w) for w in outcome.weights],
        "spec": outcome.spec.to_dict(),
    }
    _write(path, json.dumps(body).encode(), private=False)


def read_model(path: str | Path) -> dict[str, Any]:
    """A model written by :func:`write_model`."""
    try:
        return dict(json.loads(Path(path).read_text()))
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read the federated model {str(path)!r}: {err}") from err


def key_pair(
    secret: str | Path, encrypt: str = "paillier", key_bits: int = 2048
) -> tuple[secure.Scheme, bool]:
    """The key holder's scheme: the one in ``secret``, else a new one (``encrypt``: paillier
    of ``key_bits`` or ckks) written there owner-only and read back as a node relays it.
    Returns it and whether it was made."""
    from veil.exceptions import ParameterError
    from veil.federated.paillier import check_key_bits

    if encrypt == "paillier":
        check_key_bits(key_bits)
    path = Path(secret)
    if path.exists():
        return read_secret(path), False
    if encrypt == "paillier":
        scheme: secure.Scheme = secure.Paillier.generate(key_bits)
    elif encrypt == "ckks":
        scheme = secure.Ckks()
    else:
        raise ParameterError(f"--encrypt must be paillier or ckks, got {encrypt!r}")
    write_secret(scheme, path)
    return read_secret(path), True  # the public key as the node will relay it

"""``veil fl certs``: everything a deployed federation needs to run over TLS with every node
authenticated, made with ``cryptography``:

- a certificate authority (``ca.pem``; its key ``ca.key`` stays with whoever runs
  ``veil fl certs``) and the server's certificate and key (``server/server.pem``,
  ``server/server.key``) for the names and addresses it is reached at;
- for the key holder and each party, Flower's node-authentication key (an ECDSA P-384 key in
  OpenSSH form: ``node.key``, its public half ``node.pub`` registered at the SuperLink, so an
  unknown SuperNode is refused);
- for each party, its Ed25519 signing key (``signing.key``), and for the key holder the
  roster of their public halves (``keyholder/roster.json``): the key holder decrypts only
  sums of signed contributions (:mod:`veil.federated.signing`).

The folder's layout says who gets what: ``server/`` to the server, ``keyholder/`` to the key
holder, ``parties/NAME/`` to each party; each folder holds its own copy of ``ca.pem``. Private
keys are written owner-only, each through a temporary file and a rename.
"""

from __future__ import annotations

import datetime
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veil.exceptions import InputError, ParameterError

#: how long the certificates veil makes are valid
VALID_DAYS = 365


def _write(path: Path, data: bytes, *, private: bool) -> None:
    from veil.io import atomic_open

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb", permissions=0o600 if private else None) as handle:
        handle.write(data)


def _ec_key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP384R1())


def _pem_key(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def _certificate(
    subject: str, public: Any, issuer: Any, signer: Any, *, ca: bool, names: Sequence[str] = ()
) -> Any:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer or name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
    )
    builder = builder.add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    else:
        alternatives: list[Any] = []
        for entry in names:
            try:
                alternatives.append(x509.IPAddress(ipaddress.ip_address(entry)))
            except ValueError:
                alternatives.append(x509.DNSName(entry))
        builder = builder.add_extension(
            x509.SubjectAlternativeName(alternatives), critical=False
        ).add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    return builder.sign(signer, hashes.SHA384())


def _pem_certificate(certificate: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return bytes(certificate.public_bytes(serialization.Encoding.PEM))


def node_key(folder: Path) -> None:
    """A Flower node-authentication key pair in ``folder`` (``node.key``, ``node.pub``)."""
    from cryptography.hazmat.primitives import serialization

    key = _ec_key()
    _write(
        folder / "node.key",
        bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.OpenSSH,
                serialization.NoEncryption(),
            )
        ),
        private=True,
    )
    _write(
        folder / "node.pub",
        bytes(
            key.public_key().public_bytes(
                serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
            )
        )
        + b"\n",
        private=False,
    )


@dataclass(frozen=True)
class Enrolment:
    """Where ``veil fl certs`` put what."""

    folder: Path
    parties: list[str]

    @property
    def ca(self) -> Path:
        """The CA certificate everyone verifies the server with."""
        return self.folder / "ca.pem"

    @property
    def server(self) -> Path:
        """The server's folder."""
        return self.folder / "server"

    @property
    def keyholder(self) -> Path:
        """The key holder's folder."""
        return self.folder / "keyholder"

    def party(self, name: str) -> Path:
        """One party's folder."""
        return self.folder / "parties" / safe_name(name)


def node_keys(server: Path) -> list[Path]:
    """Every enrolled node's public authentication key in a server folder (what the SuperLink
    registers)."""
    return sorted((server / "nodes").glob("*.pub"))


def check_folder(folder: str | Path, *names: str) -> Path:
    """A node's enrolment folder, with the files it needs, or one line saying what is missing."""
    folder = Path(folder)
    for name in ("ca.pem", *names):
        if not (folder / name).is_file():
            raise InputError(
                f"{folder / name} is missing: give this node its folder from "
                "`veil fl certs` (server/, keyholder/ or parties/NAME/)"
            )
    return folder


def safe_name(name: str) -> str:
    """A party's name as a folder name (letters, digits, ``-``, ``_``, ``.``)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
        raise ParameterError(
            f"party name {name!r}: use letters, digits, '-', '_' or '.' (up to "
            "64), starting with a letter or digit"
        )
    return name


def make(folder: str | Path, parties: list[str], *, hosts: list[str] | None = None) -> Enrolment:
    """Make a federation's certificates and keys in ``folder`` (see the module's doc)."""
    from veil.federated import keyfiles as keys
    from veil.federated.signing import Roster, Signer

    folder = Path(folder)
    if len(set(parties)) != len(parties) or not parties:
        raise ParameterError(f"--parties must name each party once, got {parties!r}")
    for name in parties:
        safe_name(name)
    if (folder / "ca.pem").exists():
        raise InputError(
            f"{folder} already holds a federation's certificates: use another "
            "folder (remaking them would lock out every enrolled node)"
        )
    names = ["localhost", "127.0.0.1", "::1", *(hosts or [])]
    ca_key, server_key = _ec_key(), _ec_key()
    ca = _certificate("veil federation CA", ca_key.public_key(), None, ca_key, ca=True)
    server = _certificate(
        names[-1] if hosts else "localhost",
        server_key.public_key(),
        ca.subject,
        ca_key,
        ca=False,
        names=names,
    )
    enrolment = Enrolment(folder, list(parties))
    _write(folder / "ca.key", _pem_key(ca_key), private=True)
    _write(enrolment.ca, _pem_certificate(ca), private=False)
    _write(enrolment.server / "server.key", _pem_key(server_key), private=True)
    _write(enrolment.server / "server.pem", _pem_certificate(server), private=False)
    roster = {}
    for name in parties:
        where = enrolment.party(name)
        node_key(where)
        signer = Signer.generate(name)
        keys.write_signing_key(signer, where / "signing.key")
        roster[name] = signer.public_hex
        _write(
            enrolment.server / "nodes" / f"{safe_name(name)}.pub",
            (where / "node.pub").read_bytes(),
            private=False,
        )
    node_key(enrolment.keyholder)
    _write(
        enrolment.server / "nodes" / "keyholder.pub",
        (enrolment.keyholder / "node.pub").read_bytes(),
        private=False,
    )
    _write(enrolment.keyholder / "roster.json", Roster(roster).to_json().encode(), private=False)
    for where in (enrolment.server, enrolment.keyholder, *map(enrolment.party, parties)):
        _write(where / "ca.pem", _pem_certificate(ca), private=False)
    return enrolment

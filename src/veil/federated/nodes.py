"""What each node of a deployed federation runs with (``veil fl server``, ``client``,
``keyholder``), checked before any process starts: the ServerApp's run configuration, a
party's SuperNode settings, the key holder's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["keyholder_settings", "party_settings", "server_config"]


def server_config(
    *,
    target: str,
    parties: int,
    rounds: int,
    model: str,
    encrypt: str,
    epochs: int,
    timeout: float,
    min_parties: int | None,
    dp_epsilon: float | None,
    dp_delta: float,
    dp_clip: float,
    domain: str,
    output: Path | None,
) -> dict[str, object]:
    """The ServerApp's run configuration (``veil fl server``), every parameter checked now
    rather than in round 1; ``domain`` is the public domain's JSON text (needed with DP);
    ``output`` where the trained model is written (refused now if it exists)."""
    from veil.federated._flower import Settings, fewest_parties
    from veil.io import check_output

    least = fewest_parties(encrypt, min_parties)
    settings = Settings(
        target=target,
        rounds=rounds,
        model=model,
        encrypt=encrypt,
        epochs=epochs,
        parties=parties,
        min_parties=least,
        dp_epsilon=dp_epsilon or 0.0,
        dp_delta=dp_delta,
        dp_clip=dp_clip,
        domain=domain,
    )
    settings.check()
    config: dict[str, object] = {
        "target": target,
        "parties": parties,
        "rounds": rounds,
        "model": model,
        "encrypt": encrypt,
        "epochs": epochs,
        "timeout": timeout,
        "min-parties": least,
    }
    if dp_epsilon is not None:
        config.update(
            {
                "dp-epsilon": dp_epsilon,
                "dp-delta": dp_delta,
                "dp-clip": dp_clip,
                "domain": settings.domain,
            }
        )
    if output is not None:
        check_output(output, inputs=[], force=False)
        config["output"] = str(Path(output).resolve())
    return config


def party_settings(
    data: Path,
    *,
    signing_key: Path | None,
    public_key: Path | None,
    ledger: Path,
    test_fraction: float,
    seed: int,
) -> dict[str, object]:
    """A party's SuperNode settings (``veil fl client``): its table checked readable now (one
    line, not an error in round 1), its name from its signing key, the key holder's public key
    it encrypts under (checked: 2048 bits at least), and its ledger when it has one."""
    from veil.federated.keyfiles import read_public
    from veil.federated.signing import read_signer
    from veil.io import read

    read(str(data)).head(1)
    settings: dict[str, object] = {
        "role": "party",
        "data": str(data.resolve()),
        "test-fraction": test_fraction,
        "seed": seed,
    }
    settings["party"] = read_signer(signing_key).party if signing_key is not None else data.stem
    if signing_key is not None:
        settings["signing-key"] = str(signing_key.resolve())
    if public_key is not None:
        read_public(public_key)
        settings["public-key"] = str(public_key.resolve())
        settings["encrypt"] = "encrypted"
    if ledger.exists():
        settings["ledger"] = str(ledger.resolve())
    return settings


def keyholder_settings(
    secret: Path,
    roster: Path | None,
    *,
    encrypt: str,
    key_bits: int,
    min_parties: int | None,
    public_key: Path | None = None,
    say: Any = print,
) -> dict[str, object]:
    """The key holder's SuperNode settings (``veil fl keyholder``): at least three parties per
    sum, its key pair read from ``secret`` or made there (owner-only), the public key written
    for the parties when asked, and the roster of the parties' signing keys checked."""
    from veil.exceptions import ParameterError
    from veil.federated import keyfiles as keys
    from veil.federated._flower import MIN_ENCRYPTED_PARTIES
    from veil.federated.signing import read_roster
    from veil.io import check_output

    least = MIN_ENCRYPTED_PARTIES if min_parties is None else min_parties
    if least < MIN_ENCRYPTED_PARTIES:
        raise ParameterError(
            f"--min-parties must be at least {MIN_ENCRYPTED_PARTIES}: with two, "
            "each party reads the other's update from the next model"
        )
    if roster is None:
        raise ParameterError(
            "the key holder needs the parties' signing keys: --certs FOLDER "
            "(its roster.json) or --roster FILE"
        )
    read_roster(roster)
    scheme, made = keys.key_pair(secret, encrypt, key_bits)
    say(
        f"made a new {scheme.name} key; its secret is in {secret} (owner-only)"
        if made
        else f"using the key in {secret}"
    )
    if public_key is not None:
        check_output(public_key, inputs=[str(secret)], force=True)
        keys.write_public(scheme, public_key)
        say(f"wrote the public key to {public_key}: give it to the parties")
    return {
        "role": "keyholder",
        "party": "key holder",
        "secret": str(secret.resolve()),
        "roster": str(roster.resolve()),
        "min-parties": least,
    }

"""``veil fl simulate``: every party and the key holder as virtual SuperNodes of Flower's
simulation engine (its Ray backend), running the same apps as a deployment, beside the
centralized baseline. Each party's rows, its signing key and the key holder's secret go to a
private temporary folder (owner-only, removed after the run), as they would sit on separate
machines."""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil._deprecated import UNSET, renamed_seed
from veil.exceptions import InputError, ParameterError
from veil.federated import _data, _ray
from veil.federated._flower import Outcome, Settings, _quiet_flower, fewest_parties, run
from veil.federated._models import make_model
from veil.federated.paillier import check_key_bits
from veil.federated.result import FederatedResult, plot_convergence
from veil.federated.secure import SCHEMES, Ckks, Paillier, Scheme


def partition(
    frame: pd.DataFrame, *, parties: int, split_by: str, seed: int = 0
) -> list[tuple[str, pd.DataFrame]]:
    """The table's rows shared among ``parties``: at random, or by a column's values (each
    value to one party, the largest values first to the party with fewest rows; the column
    itself is then left out, as each party holds its own values of it)."""
    if parties < 2:
        raise ParameterError(f"parties must be at least 2, got {parties}")
    if split_by == "random":
        owner = np.random.default_rng(seed).integers(0, parties, len(frame))
        return [(f"party {i + 1}", frame[owner == i]) for i in range(parties)]
    if split_by not in frame.columns:
        raise ParameterError(f"--split-by must be 'random' or a column, got {split_by!r}")
    sizes = frame[split_by].astype(str).value_counts()
    if len(sizes) < parties:
        raise ParameterError(
            f"column {split_by!r} has {len(sizes)} values: too few for {parties} parties"
        )
    load = [0] * parties
    groups: list[list[str]] = [[] for _ in range(parties)]
    for value, size in sizes.items():
        i = int(np.argmin(load))
        groups[i].append(str(value))
        load[i] += int(size)
    keys = frame[split_by].astype(str)
    out = []
    for values in groups:
        shown = ", ".join(values[:3]) + (f" (+{len(values) - 3})" if len(values) > 3 else "")
        out.append((f"{split_by}={shown}", frame[keys.isin(values)].drop(columns=split_by)))
    return out


def simulate(
    frame: pd.DataFrame,
    *,
    target: str,
    parties: int = 3,
    split_by: str = "random",
    rounds: int = 10,
    model: str = "logistic",
    encrypt: str = "paillier",
    epochs: int = 1,
    key_bits: int = 2048,
    test_fraction: float = 0.2,
    random_state: int = 0,
    dp_epsilon: float = 0.0,
    dp_delta: float = 1e-6,
    dp_clip: float = 1.0,
    domain: dict[str, Any] | str | None = None,
    min_parties: int | None = None,
    accountant: Any = None,
    say: Callable[[str], None] = lambda _: None,
    seed: Any = UNSET,
) -> FederatedResult:
    """Train on ``parties`` shares of ``frame`` with FedAvg on Flower's simulation engine;
    the key holder is a node of its own (the server code never holds its key).

    ``dp_epsilon > 0``: client-level DP (each party clips its update to ``dp_clip`` and adds
    OpenDP's Gaussian noise); the run's (epsilon, delta) is charged to ``accountant`` (a
    ``veil.dp.Accountant``, required then) before any row is read for training. ``domain``
    (required then): the public bounds and categories the features are made from.
    ``random_state`` seeds the shares, the splits and the training (``seed``: its old name,
    deprecated).
    """
    seed = renamed_seed(random_state, seed, "simulate")
    if encrypt not in SCHEMES:  # every parameter checked before a budget is charged
        raise ParameterError(f"encrypt must be one of {SCHEMES}, got {encrypt!r}")
    if rounds < 1:
        raise ParameterError(f"rounds must be at least 1, got {rounds}")
    if parties < 2:
        raise ParameterError(f"parties must be at least 2, got {parties}")
    if encrypt == "paillier":
        check_key_bits(key_bits)
    make_model(model, classes=2, width=1)  # an unknown model name: one line, now
    if isinstance(domain, dict):
        import json

        domain = json.dumps(domain)
    least = fewest_parties(encrypt, min_parties)
    settings = Settings(
        target=target,
        rounds=rounds,
        model=model,
        encrypt=encrypt,
        epochs=epochs,
        parties=parties,
        min_parties=least,
        dp_epsilon=dp_epsilon,
        dp_delta=dp_delta,
        dp_clip=dp_clip,
        domain=domain or "",
    )
    settings.check()
    privacy = settings.privacy()
    charge: Any = contextlib.nullcontext()
    if privacy is not None:
        if accountant is None:
            raise ParameterError("--epsilon needs a privacy budget (a ledger) to charge")
        from veil.dp.budget import dataset_id
        from veil.federated._dp import charged
        from veil.federated._flower import dp_what

        # reserved before a row is read for training; spent even if the run fails
        charge = accountant.spend(
            charged(privacy)[0], privacy.delta, what=dp_what(privacy), dataset=dataset_id(frame)
        )
    with charge:
        return _simulate(
            frame,
            settings,
            parties=parties,
            split_by=split_by,
            key_bits=key_bits,
            test_fraction=test_fraction,
            seed=seed,
            say=say,
        )


def _simulate(
    frame: pd.DataFrame,
    settings: Settings,
    *,
    parties: int,
    split_by: str,
    key_bits: int,
    test_fraction: float,
    seed: int,
    say: Callable[[str], None],
) -> FederatedResult:
    encrypt, rounds, model, epochs = (
        settings.encrypt,
        settings.rounds,
        settings.model,
        settings.epochs,
    )
    shares = partition(frame, parties=parties, split_by=split_by, seed=seed)
    splits = [_data.split(table, test_fraction, seed + i) for i, (_, table) in enumerate(shares)]
    with private_directory() as folder:
        nodes = enrol(
            folder,
            [(name, train, test) for (name, _), (train, test) in zip(shares, splits, strict=True)],
            encrypt=encrypt,
            key_bits=key_bits,
            say=say,
        )
        if settings.privacy() is not None:
            for node in nodes:
                node["dp-charged"] = "owner"  # the table's ledger was charged once, above
        outcome = run_simulated(nodes, replace(settings, parties=len(shares)), say=say)
    if settings.privacy() is not None:
        # no party reports an accuracy under DP: the table's owner scores each round's model
        # on the test rows it holds (the same rows the parties would have used)
        for log in outcome.rounds:
            if log.weights is not None:
                log.accuracy = _accuracy(splits, outcome, log.weights)
    central = _centralized(splits, outcome, epochs, rounds, seed)
    return FederatedResult(
        encrypt,
        model,
        [name for name, _ in shares],
        [
            {
                "round": r.round,
                "accuracy": r.accuracy,
                "seconds": r.seconds,
                "bytes_sent": r.bytes_sent,
                "parties": r.parties,
                "timing": r.timing,
            }
            for r in outcome.rounds
        ],
        central,
        outcome.weights,
        outcome.spec.to_dict(),
        outcome.privacy,
        disclosed=outcome.disclosed,
    )


@contextlib.contextmanager
def private_directory() -> Iterator[Path]:
    """A temporary folder only this user can read (the parties' shares and the keys of a
    simulated run), removed on the way out."""
    with tempfile.TemporaryDirectory(prefix="veil-fl-") as name:
        os.chmod(name, 0o700)
        yield Path(name)


def enrol(
    folder: Path,
    tables: list[tuple[str, pd.DataFrame, pd.DataFrame]],
    *,
    encrypt: str,
    key_bits: int = 2048,
    say: Callable[[str], None] = lambda _: None,
    secret: Scheme | None = None,
) -> list[dict[str, Any]]:
    """Node settings for parties holding ``tables`` (name, training rows, test rows) and a key
    holder, with everything written to ``folder``: each party's rows, its signing key and the
    key holder's public key; the key holder's secret and the roster of signing keys."""
    from veil.federated import keyfiles as keys
    from veil.federated.signing import Roster, Signer

    nodes: list[dict[str, Any]] = []
    roster: dict[str, str] = {}
    public_path = folder / "keyholder.pub"
    for i, (name, train, test) in enumerate(tables):
        train_path, test_path = folder / f"party-{i}.parquet", folder / f"party-{i}-test.parquet"
        train.to_parquet(train_path)
        test.to_parquet(test_path)
        node: dict[str, Any] = {
            "role": "party",
            "party": name,
            "data": str(train_path),
            "test-data": str(test_path),
            "encrypt": encrypt,
        }
        if encrypt != "none":
            signer = Signer.generate(name)
            key_path = folder / f"party-{i}.sign"
            keys.write_signing_key(signer, key_path)
            roster[name] = signer.public_hex
            node.update({"signing-key": str(key_path), "public-key": str(public_path)})
        nodes.append(node)
    if encrypt != "none":
        if secret is None:
            say(
                f"key holder: making a {key_bits}-bit key"
                if encrypt == "paillier"
                else "key holder: making a CKKS context"
            )
            secret = Paillier.generate(key_bits) if encrypt == "paillier" else Ckks()
        keys.write_secret(secret, folder / "keyholder.key")
        keys.write_public(secret, public_path)
        nodes.append(
            {
                "role": "keyholder",
                "party": "key holder",
                "secret": str(folder / "keyholder.key"),
                "roster": Roster(roster).to_json(),
            }
        )
    return nodes


def run_simulated(
    nodes: list[dict[str, Any]],
    settings: Settings,
    *,
    say: Callable[[str], None] = lambda _: None,
    client: Any = None,
    grid: Callable[[Any], Any] | None = None,
) -> Outcome:
    """veil's apps on Flower's simulation engine: node ``i`` (a virtual SuperNode, run by
    Flower's Ray backend) has ``nodes[i]`` as its node settings. ``client``: another
    ``ClientApp`` (default veil's); ``grid``: wraps the server's ``Grid`` (to watch or attack
    the messages, as tests do). The process's Ray session is started once and kept
    (``veil.federated._ray``)."""
    from flwr.serverapp import ServerApp
    from flwr.simulation import run_simulation

    settings.check()
    outcome: dict[str, Any] = {}
    server = ServerApp()

    @server.main()
    def _main(real: Any, context: Any) -> None:
        try:
            outcome["value"] = run(grid(real) if grid else real, settings, say=say)
        except Exception as err:  # re-raised in the caller's thread, as one line if veil's
            outcome["error"] = err

    app = _node_client(nodes, client)
    ended_well = lambda: "value" in outcome  # noqa: E731
    with _quiet_flower(logging.ERROR), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Ray's, as it starts
        with _ray.kept(ended_well, len(nodes)) as config:
            run_simulation(server, app, num_supernodes=len(nodes), backend_config=config)
    if "error" in outcome:
        raise outcome["error"]
    if "value" not in outcome:
        raise InputError("the simulated federation ended without a result")
    return outcome["value"]


def _node_client(nodes: list[dict[str, Any]], inner: Any) -> Any:
    """A ``ClientApp`` that gives each virtual SuperNode its own settings (Flower gives each
    only its ``partition-id``) and hands the message to veil's (or ``inner``'s) handlers."""
    from flwr.app import Context
    from flwr.clientapp import ClientApp

    from veil.federated._flower import client_app

    target = inner or client_app
    app = ClientApp()

    def handle(message: Any, context: Any) -> Any:
        own = Context(
            run_id=context.run_id,
            node_id=context.node_id,
            node_config=dict(nodes[int(context.node_config["partition-id"])]),
            state=context.state,
            run_config=context.run_config,
        )
        return target(message, own)

    app.train()(handle)
    app.evaluate()(handle)
    for kind in ("describe", "moments", "decrypt"):
        app.query(kind)(handle)
    return app


def _accuracy(
    splits: list[tuple[pd.DataFrame, pd.DataFrame]], outcome: Outcome, weights: np.ndarray
) -> float:
    spec = outcome.spec
    test = pd.concat([t for _, t in splits])
    model = make_model(outcome.model, classes=len(spec.classes), width=spec.width)
    right, rows = model.correct(weights, *_data.encode(test, spec))
    return right / max(rows, 1)


def _centralized(
    tables: list[tuple[pd.DataFrame, pd.DataFrame]],
    outcome: Outcome,
    epochs: int,
    rounds: int,
    seed: int,
) -> float:
    """The same model trained on all parties' training rows pooled, as many passes as the
    federation made, scored on all their test rows."""
    spec = outcome.spec
    train = pd.concat([t for t, _ in tables])
    test = pd.concat([t for _, t in tables])
    model = make_model(
        outcome.model, classes=len(spec.classes), width=spec.width, epochs=epochs * rounds
    )
    x, y = _data.encode(train, spec)
    weights = model.fit(model.initial(), x, y, seed=seed)
    right, rows = model.correct(weights, *_data.encode(test, spec))
    return right / max(rows, 1)


__all__ = ["FederatedResult", "partition", "plot_convergence", "simulate"]

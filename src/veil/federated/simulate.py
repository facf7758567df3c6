"""``veil fl simulate``: every party (and the key holder) in one process, on Flower's apps
through :class:`~veil.federated._flower.LocalGrid`, beside the centralized baseline."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from uuid import uuid4

import numpy as np
import pandas as pd

from veil.exceptions import ParameterError
from veil.federated import _data
from veil.federated._flower import _MEMORY, LocalGrid, Outcome, Settings, client_app, run
from veil.federated._models import make_model
from veil.federated.result import FederatedResult, plot_convergence
from veil.federated.secure import SCHEMES, Ckks, Paillier


def partition(frame: pd.DataFrame, *, parties: int, split_by: str, seed: int = 0
              ) -> list[tuple[str, pd.DataFrame]]:  # fmt: skip
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
        raise ParameterError(f"column {split_by!r} has {len(sizes)} values: too few for "
                             f"{parties} parties")  # fmt: skip
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


def simulate(frame: pd.DataFrame, *, target: str, parties: int = 3, split_by: str = "random",
             rounds: int = 10, model: str = "logistic", encrypt: str = "paillier",
             epochs: int = 1, key_bits: int = 2048, test_fraction: float = 0.2, seed: int = 0,
             dp_epsilon: float = 0.0, dp_delta: float = 1e-6, dp_clip: float = 1.0,
             accountant: Any = None,
             say: Callable[[str], None] = lambda _: None) -> FederatedResult:  # fmt: skip
    """Train on ``parties`` shares of ``frame`` with FedAvg on Flower's apps in this process;
    the key holder is a node of its own (the server code never holds its key).

    ``dp_epsilon > 0``: client-level DP (each party clips its update to ``dp_clip`` and adds
    OpenDP's Gaussian noise); the run's (epsilon, delta) is charged to ``accountant`` (a
    ``veil.dp.Accountant``, required then) before any row is read for training.
    """
    if encrypt not in SCHEMES:  # every parameter checked before a budget is charged
        raise ParameterError(f"encrypt must be one of {SCHEMES}, got {encrypt!r}")
    if rounds < 1:
        raise ParameterError(f"rounds must be at least 1, got {rounds}")
    if parties < 2:
        raise ParameterError(f"parties must be at least 2, got {parties}")
    make_model(model, classes=2, width=1)  # an unknown model name: one line, now
    settings = Settings(target=target, rounds=rounds, model=model, encrypt=encrypt,
                        epochs=epochs, parties=parties, dp_epsilon=dp_epsilon,
                        dp_delta=dp_delta, dp_clip=dp_clip)  # fmt: skip
    privacy = settings.privacy()
    charge: Any = contextlib.nullcontext()
    if privacy is not None:
        if accountant is None:
            raise ParameterError("--dp-epsilon needs a privacy budget (a ledger) to charge")
        from veil.dp.budget import dataset_id
        from veil.federated._dp import charged
        from veil.federated._flower import dp_what

        # reserved before a row is read for training; spent even if the run fails
        charge = accountant.spend(charged(privacy)[0], privacy.delta, what=dp_what(privacy),
                                  dataset=dataset_id(frame))  # fmt: skip
    with charge:
        return _simulate(frame, settings, parties=parties, split_by=split_by,
                         key_bits=key_bits, test_fraction=test_fraction, seed=seed,
                         say=say)  # fmt: skip


def _simulate(frame: pd.DataFrame, settings: Settings, *, parties: int, split_by: str,
              key_bits: int, test_fraction: float, seed: int,
              say: Callable[[str], None]) -> FederatedResult:  # fmt: skip
    encrypt, rounds, model, epochs = (settings.encrypt, settings.rounds, settings.model,
                                      settings.epochs)  # fmt: skip
    shares = partition(frame, parties=parties, split_by=split_by, seed=seed)
    tokens = []
    configs: list[dict[str, Any]] = []
    try:
        for i, (name, table) in enumerate(shares):
            token = f"memory:{uuid4()}"
            _MEMORY[token] = _data.split(table, test_fraction, seed + i)
            tokens.append(token)
            configs.append({"role": "party", "party": name, "data": token})
        if encrypt != "none":
            token = f"memory:{uuid4()}"
            say(f"key holder: making a {key_bits}-bit key" if encrypt == "paillier"
                else "key holder: making a CKKS context")  # fmt: skip
            _MEMORY[token] = Paillier.generate(key_bits) if encrypt == "paillier" else Ckks()
            tokens.append(token)
            configs.append({"role": "keyholder", "party": "key holder", "secret": token})
        grid = LocalGrid(client_app, configs)
        settings = replace(settings, parties=len(shares))
        outcome = run(grid, settings, say=say)
        central = _centralized([_MEMORY[t] for t in tokens[: len(shares)]], outcome, epochs,
                               rounds, seed)  # fmt: skip
    finally:
        for token in tokens:
            _MEMORY.pop(token, None)
    return FederatedResult(
        encrypt, model, [name for name, _ in shares],
        [{"round": r.round, "accuracy": r.accuracy, "seconds": r.seconds,
          "bytes_sent": r.bytes_sent, "parties": r.parties, "timing": r.timing}
         for r in outcome.rounds],
        central, outcome.weights, outcome.spec.to_dict(), outcome.privacy,
    )  # fmt: skip


def _centralized(tables: list[tuple[pd.DataFrame, pd.DataFrame]], outcome: Outcome,
                 epochs: int, rounds: int, seed: int) -> float:  # fmt: skip
    """The same model trained on all parties' training rows pooled, as many passes as the
    federation made, scored on all their test rows."""
    spec = outcome.spec
    train = pd.concat([t for t, _ in tables])
    test = pd.concat([t for _, t in tables])
    model = make_model(outcome.model, classes=len(spec.classes), width=spec.width,
                       epochs=epochs * rounds)  # fmt: skip
    x, y = _data.encode(train, spec)
    weights = model.fit(model.initial(), x, y, seed=seed)
    right, rows = model.correct(weights, *_data.encode(test, spec))
    return right / max(rows, 1)


__all__ = ["FederatedResult", "partition", "plot_convergence", "simulate"]

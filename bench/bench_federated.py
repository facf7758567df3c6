"""Federated learning with protected updates: what encryption costs, and what accuracy it keeps.

    make bench-federated      (or: python bench/bench_federated.py [--parties 10] [--params 100000])

Prints, all measured in this run:
- Paillier 2048-bit throughput, one core: veil's packed encryption and CRT decryption (values
  per second, ciphertext bytes per value) beside python-paillier (phe 1.5.0 with gmpy2, one
  value per ciphertext, in its own `.venv-phe`: it is GPL-3.0);
- Ed25519 signing and verifying of one party's encrypted update (one signature per update);
- one round of 10 parties x 100,000 parameters: encrypt and sign (the parties in parallel on
  this machine's 2 cores, as they would run on their own machines), Flower message encoding
  (transport: every update up and the model down, deflated and inflated as Flower's wire
  format; the loopback itself is not counted), aggregate, verify (the key holder checks every
  signature and recomputes the product of the pieces), decrypt; for Paillier, CKKS and plain
  FedAvg; naive phe extrapolated from its measured per-value rates;
- accuracy: FedAvg (logistic) with updates in the clear, under Paillier and under CKKS, on
  adult split by native country and on the cross-sell data split by Region_Code, 10 rounds,
  beside centralized training (and on adult: with client-level DP at epsilon 1 and 10, its
  features from the public domain adult.names documents, and a torch MLP); the largest
  weight difference between the encrypted and the plain model; convergence plots
  (bench/out/federated_convergence_*.png);
- simulations back to back (3 parties x 3 rounds on 6,000 rows of adult, Paillier): each run
  on the process's kept Ray session and actors, beside each run on a session started and
  shut down for it (what Flower's backend does: the floor veil's reuse is measured against),
  wall time and the machine's CPU seconds (Ray's processes are no children of this one).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("FLWR_TELEMETRY_ENABLED", "0")

from veil.dp import Accountant
from veil.dp.budget import Budget
from veil.federated import paillier
from veil.federated.secure import Ckks, Paillier, Plain, Scheme
from veil.federated.simulation import plot_convergence, simulate

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
OUT = ROOT / "bench" / "out"
ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income",
]


def throughput(phe_python: str) -> None:
    print("Paillier, 2048-bit key, one core")
    holder = Paillier.generate(2048)
    party = holder.for_parties()
    values = np.random.default_rng(0).uniform(-1, 1, 200_000)
    paillier.encryptor(party.key)  # the fixed-base table, built once per key (not timed)
    start = time.perf_counter()
    blob = party.encrypt(values)
    encrypt = len(values) / (time.perf_counter() - start)
    start = time.perf_counter()
    decoded = holder.decrypt(blob, len(values), 1)
    decrypt = len(values) / (time.perf_counter() - start)
    assert np.abs(decoded - values).max() <= party.packing.resolution
    print(
        f"  veil (packed, {party.packing.values_per_plaintext} values per ciphertext): "
        f"encrypt {encrypt:,.0f} values/s, decrypt {decrypt:,.0f} values/s, "
        f"{len(blob) / len(values):.1f} bytes per value"
    )
    phe = _phe(phe_python, 200)
    print(
        f"  phe 1.5.0 (one value per ciphertext): encrypt {phe['encrypt_per_s']:,.0f} values/s, "
        f"decrypt {phe['decrypt_per_s']:,.0f} values/s, {phe['bytes_per_value']} bytes per "
        f"value"
    )
    from veil.federated.signing import Roster, Signer

    signer = Signer.generate("party")
    roster = Roster({"party": signer.public_hex})
    start = time.process_time()
    signature = signer.sign(nonce="n", purpose="update", round=1, blob=blob)
    sign = time.process_time() - start
    start = time.process_time()
    roster.verify(
        nonce="n", purpose="update", round=1, party="party", blob=blob, signature=signature
    )
    verify = time.process_time() - start
    signed_bytes = (len(blob) + len(signature) + len("party")) / len(values)
    print(
        f"  Ed25519 over the update's SHA-256 ({len(blob) / 1e6:.1f} MB): sign "
        f"{sign * 1e3:.1f} ms, verify {verify * 1e3:.1f} ms CPU; {signed_bytes:.2f} bytes per "
        "value with the signature"
    )
    fewer = phe["bytes_per_value"] / (len(blob) / len(values))
    print(
        f"  veil / phe: encrypt {encrypt / phe['encrypt_per_s']:,.0f}x, decrypt "
        f"{decrypt / phe['decrypt_per_s']:,.0f}x, bytes {fewer:,.0f}x fewer"
    )


def _phe(python: str, count: int) -> dict[str, float]:
    if not Path(python).exists():
        raise SystemExit(f"{python} is missing: `make bench-federated` builds it")
    done = subprocess.run(
        [python, str(ROOT / "bench" / "phe_runner.py"), str(count)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout))


def _encrypt_party(args: tuple[str, bytes, int, int, bytes]) -> tuple[bytes, bytes, float]:
    """One party's update encrypted and signed; its CPU seconds."""
    from veil.federated.signing import Signer

    name, public, size, seed, key = args
    scheme = _public_scheme(name, public)
    values = np.random.default_rng(seed).uniform(-0.1, 0.1, size)
    start = time.process_time()
    blob = scheme.encrypt(np.concatenate([[0.1], values]))
    signature = (
        b""
        if name == "none"
        else Signer.from_bytes(key).sign(nonce="n", purpose="update", round=1, blob=blob)
    )
    return blob, signature, time.process_time() - start


def _public_scheme(name: str, public: bytes) -> Scheme:
    if name == "paillier":
        return Paillier(paillier.PublicKey.from_json(public.decode()))
    return Ckks(public) if name == "ckks" else Plain()


def _transport(blobs: list[bytes], model_size: int) -> float:
    """Flower's wire encoding of every update (up) and of the model to every party (down):
    each record and every object under it deflated, as Flower sends them."""
    from flwr.app import Array, ArrayRecord, ConfigRecord, RecordDict

    def deflate(node: object) -> int:
        total = len(node.deflate())  # type: ignore[attr-defined]
        for child in (getattr(node, "children", None) or {}).values():
            total += deflate(child)
        return total

    model = np.zeros(model_size)
    start = time.perf_counter()
    for blob in blobs:
        for payload in (np.frombuffer(blob, np.uint8), model):
            content = RecordDict(
                {"arrays": ArrayRecord({"x": Array(payload)}), "config": ConfigRecord({"round": 1})}
            )
            assert deflate(content) >= payload.nbytes
    return time.perf_counter() - start


def one_round(parties: int, params: int, phe_python: str) -> None:
    print(f"\none round, {parties} parties x {params:,} parameters (2 cores)")
    print(
        f"  {'':<10}{'encrypt':>10}{'transport':>11}{'aggregate':>11}{'verify':>9}"
        f"{'decrypt':>9}{'total':>9}{'MB sent':>9}{'CPU s':>8}"
    )
    holders: dict[str, Scheme] = {
        "paillier": Paillier.generate(2048),
        "ckks": Ckks(),
        "none": Plain(),
    }
    for name, holder in holders.items():
        from veil.federated.signing import Roster, Signer

        public = holder.public()
        signers = [Signer.generate(f"party {i}") for i in range(parties)]
        roster = Roster({s.party: s.public_hex for s in signers})
        jobs = [(name, public, params, seed, signers[seed].to_bytes()) for seed in range(parties)]
        main_cpu = time.process_time()
        start = time.perf_counter()
        with concurrent.futures.ProcessPoolExecutor(2) as pool:
            results = list(pool.map(_encrypt_party, jobs))
        encrypt = time.perf_counter() - start
        blobs = [blob for blob, _, _ in results]
        transport = _transport(blobs, params)
        server = _public_scheme(name, public)
        start = time.perf_counter()
        aggregate = server.aggregate(blobs)
        aggregated = time.perf_counter() - start
        start = time.perf_counter()
        if name != "none":  # what the key holder does before it decrypts anything
            for signer, (blob, signature, _) in zip(signers, results, strict=True):
                roster.verify(
                    nonce="n",
                    purpose="update",
                    round=1,
                    party=signer.party,
                    blob=blob,
                    signature=signature,
                )
            assert holder.aggregate(blobs) == aggregate
        verify = time.perf_counter() - start
        start = time.perf_counter()
        total = holder.decrypt(aggregate, params + 1, parties)
        decrypt = time.perf_counter() - start
        # CPU: this process (server and key holder) plus each party's own encrypt and sign
        cpu = time.process_time() - main_cpu + sum(c for _, _, c in results)
        assert abs(total[0] - 0.1 * parties) < 1e-4
        seconds = encrypt + transport + aggregated + verify + decrypt
        sent = sum(len(b) + len(sig) for b, sig, _ in results)
        print(
            f"  {name:<10}{encrypt:>9.2f}s{transport:>10.2f}s{aggregated:>10.2f}s"
            f"{verify:>8.2f}s{decrypt:>8.2f}s{seconds:>8.1f}s{sent / 1e6:>9.1f}"
            f"{cpu:>8.1f}"
        )
    phe = _phe(phe_python, 100)
    values = parties * params
    encrypt = values / phe["encrypt_per_s"] / 2  # two cores
    aggregate = (parties - 1) * params * phe["add_seconds"]
    decrypt = params / phe["decrypt_per_s"]
    total = encrypt + aggregate + decrypt
    print(
        f"  {'phe naive':<10}{encrypt:>9.0f}s{'':>11}{aggregate:>10.0f}s{'':>9}{decrypt:>8.0f}s"
        f"{total:>8.0f}s{values * phe['bytes_per_value'] / 1e6:>9.0f}   extrapolated from "
        f"its measured rates: {total / 3600:.1f} hours, not run"
    )


def _adult_domain() -> dict[str, list]:
    """The public domain of adult's columns as UCI's adult.names documents them (not learnt
    from rows); the numbers' bounds are round figures any analyst would pick."""
    domain: dict[str, list] = {
        "age": [16, 100],
        "capital_gain": [0, 100_000],
        "capital_loss": [0, 5_000],
        "hours_per_week": [0, 100],
        "income": ["<=50K", ">50K"],
    }
    for line in (DATASETS / "adult_census" / "adult.names").read_text().splitlines():
        name, _, values = line.partition(": ")
        column = name.strip().replace("-", "_")
        if column in ADULT_COLUMNS and column not in domain and values.strip() != "continuous.":
            domain[column] = [v.strip() for v in values.rstrip(".").split(",")]
    return domain


def _adult() -> pd.DataFrame:
    frame = pd.read_csv(
        DATASETS / "adult_census" / "adult.data",
        header=None,
        names=ADULT_COLUMNS,
        skipinitialspace=True,
    )
    return frame.drop(columns=["fnlwgt", "education_num"])


def _cross_sell() -> pd.DataFrame:
    path = DATASETS / "health_insurance_cross_sell" / "train_subset_30pct_original_encoding.csv"
    return pd.read_csv(path).drop(columns=["id"])


def accuracy(rounds: int) -> None:
    cases = [
        ("adult", _adult, "income", "native_country"),
        ("cross-sell", _cross_sell, "Response", "Region_Code"),
    ]
    OUT.mkdir(parents=True, exist_ok=True)
    for label, load, target, split_by in cases:
        frame = load()
        print(
            f"\n{label}: {len(frame):,} rows, target {target}, 3 parties split by {split_by}, "
            f"{rounds} rounds of FedAvg (logistic)"
        )
        results = {}
        for encrypt in ("none", "paillier", "ckks"):
            start = time.perf_counter()
            results[encrypt] = simulate(
                frame, target=target, parties=3, split_by=split_by, rounds=rounds, encrypt=encrypt
            )
            curve = " ".join(f"{r['accuracy']:.4f}" for r in results[encrypt].rounds)
            print(
                f"  {encrypt:<9} accuracy per round: {curve}  ({time.perf_counter() - start:.1f} s)"
            )
        plain = results["none"]
        final = plain.final_accuracy or 0.0
        print(
            f"  centralized: {plain.centralized_accuracy:.4f}; FedAvg final {final:.4f} "
            f"({100 * (final - plain.centralized_accuracy):+.2f} points); majority class "
            f"{frame[target].value_counts(normalize=True).iloc[0]:.4f}"
        )
        for encrypt in ("paillier", "ckks"):
            gap = np.abs(results[encrypt].weights - plain.weights).max()
            print(f"  {encrypt} model vs plain model: largest weight difference {gap:.2e}")
        if label == "adult":
            for epsilon in (1.0, 10.0):
                with tempfile.TemporaryDirectory() as tmp:
                    ledger = Accountant.create(Path(tmp) / "ledger.db", Budget(epsilon, 1e-5))
                    domain = {k: v for k, v in _adult_domain().items() if k != split_by}
                    noisy = simulate(
                        frame,
                        target=target,
                        parties=3,
                        split_by=split_by,
                        rounds=rounds,
                        encrypt="paillier",
                        dp_epsilon=epsilon,
                        accountant=ledger,
                        domain=domain,
                    )
                curve = " ".join(f"{r['accuracy']:.4f}" for r in noisy.rounds)
                assert noisy.privacy is not None
                print(
                    f"  client-level DP epsilon {epsilon:g} (delta 1e-6, clip 1, sigma "
                    f"{noisy.privacy['sigma']:.3g}), paillier: {curve}"
                )
            mlp = simulate(
                frame,
                target=target,
                parties=3,
                split_by=split_by,
                rounds=rounds,
                encrypt="paillier",
                model="mlp",
            )
            curve = " ".join(f"{r['accuracy']:.4f}" for r in mlp.rounds)
            print(f"  mlp (torch), paillier: {curve}; centralized {mlp.centralized_accuracy:.4f}")
        path = OUT / f"federated_convergence_{label}.png"
        plot_convergence(
            list(results.values()), path, title=f"{label}: FedAvg by protection vs centralized"
        )
        print(f"  plot: {path.relative_to(ROOT)}")


def _machine_cpu() -> float:
    """The CPU seconds every process of the machine has used (/proc/stat), or NaN."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return float("nan")
    user, nice, system, _idle, _wait, irq, softirq, steal = (int(v) for v in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def back_to_back(runs: int = 3) -> None:
    """``runs`` simulations in one process, on veil's kept Ray session and actors, beside as
    many on a session started and shut down for each run (Flower's own backend)."""
    from veil.federated import _ray

    adult = _adult().sample(6_000, random_state=0)
    options = {"target": "income", "parties": 3, "rounds": 3, "encrypt": "paillier"}
    print(f"\nsimulations back to back, {runs} runs of 3 parties x 3 rounds, 6,000 rows of adult")
    note = "(machine CPU: every process's, Ray's too)"
    print(f"  {note:<44}{'wall':>8}{'machine CPU':>13}")
    for label, fresh in (("kept session and actors (veil)", False), ("a session a run", True)):
        for run in range(1, runs + 1):
            if fresh and _ray._folder is not None:
                _ray._end(_ray._folder)  # as Flower's backend shuts Ray down after each run
            cpu, start = _machine_cpu(), time.perf_counter()
            simulate(adult, **options)
            wall, used = time.perf_counter() - start, _machine_cpu() - cpu
            print(f"  {label + f', run {run}':<44}{wall:>7.1f}s{used:>12.1f}s")
    if _ray._folder is not None:
        _ray._end(_ray._folder)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phe-python", default=str(ROOT / ".venv-phe" / "bin" / "python"))
    parser.add_argument("--parties", type=int, default=10)
    parser.add_argument("--params", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    throughput(args.phe_python)
    one_round(args.parties, args.params, args.phe_python)
    back_to_back()
    accuracy(args.rounds)


if __name__ == "__main__":
    main()

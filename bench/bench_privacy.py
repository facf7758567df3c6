"""The privacy engine against ARX's figures (measured by the issue's author on this machine
kind, 2 vCPU: ARX 3.9.2 cannot be fetched here, so its numbers are printed as given) and
against pycanon (run here, in its own environment, in the same run).

    make bench-privacy     (or: python bench/bench_privacy.py [--quick])

Prints, per task: veil's in-process search (median of repeats), `veil anonymize` as a whole
process, the loss found, and ARX's figures beside them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from veil.hierarchy import load_hierarchies
from veil.privacy import check
from veil.privacy.criteria import KAnonymity
from veil.privacy.lattice import CodedFrequencies
from veil.privacy.metrics import make_metric
from veil.privacy.search import search
from veil.transforms import LocalSuppression

ROOT = Path(__file__).resolve().parents[1]
ARX = ROOT.parent / "shared" / "datasets" / "arx"
# task: (folder, stem, suppression, ARX in-JVM median s, ARX whole process s)
OPTIMAL = [
    ("adult k=5 0% (Loss)", "adult", "adult", 0.0, 0.067, 3.8),
    ("adult k=5 4%", "adult", "adult", 0.04, 1.6, 7.7),
    ("fars (fars_int) k=5 4%", "fars", "fars_int", 0.04, 5.7, 11.3),
    ("cup k=5 4%", "cup", "cup", 0.04, 12.4, 26.0),
]
# task: (folder, stem, ARX heuristic loss in 30 s)
HEURISTIC = [
    ("creditcard (24 QIs)", "creditcard", "creditcard_int", 0.6747),
    ("mach2019 (16 QIs)", "mach2019", "mach2019_int", 0.5346),
    ("adult_full (14 QIs)", "adult_full", "adult_full", 0.3771),
]


def load(folder: str, stem: str) -> tuple[pd.DataFrame, CodedFrequencies]:
    frame = pd.read_csv(ARX / folder / f"{stem}.csv", sep=";", dtype=str, keep_default_na=False)
    hierarchies = load_hierarchies(ARX / folder, stem)
    columns = [c for c in frame.columns if c in hierarchies]
    return frame, CodedFrequencies.build(frame, columns, [hierarchies[c] for c in columns])


def anonymized(args: list[str], out: Path) -> tuple[float, float, dict]:
    """``veil anonymize ARGS`` as a whole process: wall and CPU seconds, and its JSON."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [sys.executable, "-m", "veil", "anonymize", *args, "--format", "json"]
    done = subprocess.run(
        [*command, "-o", str(out), "--force"],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, json.loads(done.stdout)


def whole_process(folder: str, stem: str, suppression: float, tmp: Path) -> tuple[float, dict]:
    wall, _, found = anonymized(
        [
            str(ARX / folder / f"{stem}.csv"),
            "--hierarchies",
            str(ARX / folder),
            "-k",
            "5",
            "--max-suppression",
            str(suppression),
            "--sep",
            ";",
        ],
        tmp / f"{stem}.out.csv",
    )
    return wall, found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats, 10 s heuristics")
    parser.add_argument("--pycanon-python", default=str(ROOT / ".venv-pycanon/bin/python"))
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    print(
        f"{'task':<24}{'veil search':>12}{'ARX in-JVM':>12}{'veil process':>14}"
        f"{'ARX process':>13}  levels, loss"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for task, folder, stem, suppression, arx_jvm, arx_process in OPTIMAL:
            _, table = load(folder, stem)
            times, result = [], None
            for _ in range(repeats):
                start = time.perf_counter()
                result = search(
                    table, [KAnonymity(k=5)], make_metric("loss"), max_suppression=suppression
                )
                times.append(time.perf_counter() - start)
            process, cert = whole_process(folder, stem, suppression, Path(tmp))
            assert result is not None
            print(
                f"{task:<24}{statistics.median(times):>11.3f}s{arx_jvm:>11.3f}s"
                f"{process:>13.2f}s{arx_process:>12.1f}s  {list(result.levels)} "
                f"{result.loss:.6f} (process: {cert['loss']:.6f})"
            )

    print(
        "\nfars k=5 4%, discernibility (DM) and ARX's DM*: bounds from evaluated nodes prune "
        "their successors (target < 10 s):"
    )
    _, fars = load("fars", "fars_int")
    for name in ("discernibility", "dm_star"):
        start = time.perf_counter()
        found = search(fars, [KAnonymity(k=5)], make_metric(name), max_suppression=0.04)
        print(
            f"  {name:<15} {time.perf_counter() - start:6.2f} s  {list(found.levels or [])} "
            f"{found.loss:.0f}" + ("   (ARX's JUnit: 4469271)" if name == "dm_star" else "")
        )

    limit = 10.0 if args.quick else 30.0
    print(f"\nhigh-dimensional, k=5 4%, heuristic with a {limit:.0f} s limit (ARX: 30 s):")
    for task, folder, stem, arx_loss in HEURISTIC:
        _, table = load(folder, stem)
        start = time.perf_counter()
        result = search(
            table, [KAnonymity(k=5)], make_metric("loss"), max_suppression=0.04, time_limit=limit
        )
        print(
            f"  {task:<22} veil loss {result.loss:.5f} in {time.perf_counter() - start:.1f} s "
            f"({result.evaluated} nodes)   ARX {arx_loss:.4f}   "
            f"{'<= ARX' if result.loss <= arx_loss else '> ARX'}"
        )

    print("\nchecks on synthetic rows, 5 quasi-identifiers (pycanon 1.5-2.5 s / 7-10 s at 1M):")
    rng = np.random.default_rng(0)
    for rows in (1_000_000, 10_000_000):
        frame = pd.DataFrame(
            {
                "age": rng.integers(18, 90, rows),
                "sex": rng.choice(["F", "M"], rows),
                "zip": rng.integers(10000, 10100, rows),
                "race": rng.integers(0, 5, rows),
                "edu": rng.integers(0, 16, rows),
                "disease": rng.choice(["flu", "cold", "hiv", "cancer", "ulcer"], rows),
            }
        )
        qi = ["age", "sex", "zip", "race", "edu"]
        k_times, l_times = [], []
        for _ in range(3):
            start = time.perf_counter()
            check(frame, qi)
            k_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            check(frame, qi, sensitive="disease")
            l_times.append(time.perf_counter() - start)
        line = f"  {rows:>10,} rows: veil k {min(k_times):.3f} s, k+l+t {min(l_times):.3f} s"
        if rows == 1_000_000 and Path(args.pycanon_python).exists():
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "rows.csv"
                frame.to_csv(path, index=False)
                code = (
                    "import sys,time,pandas as pd; from pycanon import anonymity as a; "
                    "d=pd.read_csv(sys.argv[1]); q=['age','sex','zip','race','edu']; "
                    "t=time.perf_counter(); a.k_anonymity(d,q); k=time.perf_counter()-t; "
                    "t=time.perf_counter(); a.l_diversity(d,q,['disease']); "
                    "print(k, time.perf_counter()-t)"
                )
                out = subprocess.run(
                    [args.pycanon_python, "-c", code, str(path)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                k_py, l_py = map(float, out.stdout.split())
                line += f"   | pycanon k {k_py:.2f} s, l {l_py:.2f} s (same rows, this run)"
        print(line)

    with tempfile.TemporaryDirectory() as tmp:
        sensitive_searches(Path(tmp))

    print(
        "\nk = 5 on adult's 8 quasi-identifiers without generalization: local suppression "
        "(blank cells) vs record suppression (withhold records):"
    )
    adult, _ = load("adult", "adult")
    qis = [c for c in adult.columns if c != "salary-class"]
    start = time.perf_counter()
    blanker = LocalSuppression(qis, k=5).fit(adult)
    blanked = blanker.transform(adult)
    seconds = time.perf_counter() - start
    sizes = adult.groupby(qis).size()
    withheld = int(sizes[sizes < 5].sum())
    print(
        f"  local suppression: {blanker.cells_blanked_:,} cells blanked, "
        f"{blanker.records_left_unsafe_:,} records removed, k = {check(blanked, qis).k} "
        f"({seconds:.2f} s)"
    )
    print(
        f"  record suppression: {withheld:,} records x {len(qis)} quasi-identifiers = "
        f"{withheld * len(qis):,} cells withheld"
    )


#: l-diversity and t-closeness on adult in full (veil's own hierarchies: 777,600 nodes), each
#: beside the same search for k alone, its floor
SENSITIVE = [
    ("distinct l=2, capital-gain", ["--l", "2", "--sensitive", "capital-gain"]),
    (
        "entropy l=2, hours-per-week",
        ["--l", "2", "--l-variant", "entropy", "--sensitive", "hours-per-week"],
    ),
    (
        "recursive (3,3), hours-per-week",
        ["--l", "3", "--l-variant", "recursive", "--c", "3", "--sensitive", "hours-per-week"],
    ),
    ("t=0.4 equal, capital-gain", ["--t", "0.4", "--sensitive", "capital-gain"]),
    (
        "t=0.4 ordered, capital-gain",
        ["--t", "0.4", "--t-distance", "ordered", "--sensitive", "capital-gain"],
    ),
    (
        "t=0.3 ordered, hours-per-week",
        ["--t", "0.3", "--t-distance", "ordered", "--sensitive", "hours-per-week"],
    ),
]


def sensitive_searches(tmp: Path) -> None:
    """``veil anonymize`` of adult in full (k = 5, 5% suppression) with each sensitive model,
    as a whole process (wall and CPU seconds, nodes evaluated), beside k alone."""
    table = ARX / "adult_full" / "adult_full.csv"
    print(
        "\nl-diversity and t-closeness, adult in full (32,561 rows, 9 quasi-identifiers, "
        "777,600 nodes), k=5 5%, whole process:"
    )
    print(f"  {'model':<34}{'wall':>8}{'CPU':>8}{'nodes':>8}   loss")
    for name, extra in [("k=5 alone (the floor)", []), *SENSITIVE]:
        args = [str(table), "-k", "5", *extra, "--max-suppression", "0.05"]
        wall, cpu, found = anonymized(args, tmp / "full.csv")
        print(
            f"  {name:<34}{wall:>7.1f}s{cpu:>7.1f}s{found['search']['evaluated']:>8,}   "
            f"{found['loss']:.6f}"
        )


def entropy_kept(original: pd.DataFrame, released: pd.DataFrame, qis: list[str]) -> float:
    """The share of the quasi-identifiers' information the release keeps, measured on the
    rows alone (so the same yardstick whatever the hierarchies): 1 - H(value | released
    value) / H(value), summed over the QIs, on the released rows (ARX's non-uniform entropy)."""
    lost = total = 0.0
    rows = original.loc[released.index]
    for q in qis:
        joint = pd.crosstab(rows[q].astype(str), released[q].astype(str)).to_numpy(float)
        p_value = joint.sum(axis=1) / joint.sum()
        total += float(-(p_value[p_value > 0] * np.log2(p_value[p_value > 0])).sum())
        p_given = joint / joint.sum(axis=0, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(joint > 0, -joint * np.log2(p_given), 0.0)
        lost += float(terms.sum() / joint.sum())
    return 1 - lost / total if total else 1.0


def automatic_hierarchies() -> None:
    """adult at k = 5: the hierarchies veil builds against ARX's hand-made ones, each searched
    for its optimum (Loss), with the same yardstick for both (entropy kept, records kept)."""
    from veil.privacy import anonymize
    from veil.scan.hierarchies import build_hierarchy

    frame = pd.read_csv(ARX / "adult" / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    given = load_hierarchies(ARX / "adult", "adult")
    qis = [c for c in frame.columns if c in given and c != "salary-class"]
    typed = frame.assign(age=pd.to_numeric(frame["age"]))
    print(
        "\nadult, k = 5: information kept with veil's automatic hierarchies and with ARX's "
        "hand-made ones (optimal search, Loss):"
    )
    print(
        f"  {'hierarchies':<11}{'supp.':>6}{'wall s':>8}{'CPU s':>7}{'records kept':>14}"
        f"{'classes':>9}{'entropy kept':>14}  levels"
    )
    for suppression in (0.0, 0.04):
        for label, hierarchies in (
            ("ARX", {q: given[q] for q in qis}),
            ("automatic", {q: build_hierarchy(q, typed[q]) for q in qis}),
        ):
            policy = {
                "columns": {q: {"role": "quasi_identifier"} for q in qis},
                "unlisted": "drop",
                "keep_order": True,
                "privacy": {"k": 5, "max_suppression": suppression},
            }
            wall, cpu = time.perf_counter(), time.process_time()
            release = anonymize(typed[qis], policy, hierarchies=hierarchies)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            cert = release.certificate
            kept = entropy_kept(typed, release.data, qis)
            print(
                f"  {label:<11}{suppression:>6.0%}{wall:>8.2f}{cpu:>7.2f}"
                f"{cert.rows_out:>8,} ({cert.rows_out / cert.rows_in:.1%})"
                f"{cert.after.classes:>9,}{kept:>13.1%}  {list(cert.search['levels'].values())}"
            )


if __name__ == "__main__":
    main()
    automatic_hierarchies()

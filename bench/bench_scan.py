"""Scan speed: 1M rows x 20 columns, veil against Presidio's structured analyzer (regex-only:
presidio-structured with Presidio's NoOpNlpEngine, no spaCy model), in the same run.

    make bench-scan            # sets up both environments and runs this
    python bench/bench_scan.py --rows 1000000 --presidio-python .venv-presidio/bin/python

Presidio analyzes every sampled cell with every recognizer; on the full table that takes hours,
so it runs on row samples (its own `n` parameter) and the per-row time is printed with them.
veil is timed on all rows (it samples per column, then confirms the winning pattern on every
row). The table's columns have known entities, so each tool's findings are compared too.

Then entities inside free text: on the same held-out notes (bench/heldout_notes.py, labelled
spans), the share of embedded entities each tool finds, per entity, and its false hits on the
rest of the text. Presidio runs regex-only (no spaCy model: its models are not on PyPI and
nothing may download at run time), so it finds no PERSON here.
"""

from __future__ import annotations

import argparse
import json
import os
import string
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from faker import Faker
from heldout_notes import ENTITY_OF, PRESIDIO, make_notes, recall  # bench/

from veil.scan import scan
from veil.scan.recognizers.ke.counties import COUNTY_PROVINCE
from veil.scan.text import find_entities

# column -> (veil entity expected, presidio entity expected)
TRUTH = {
    "customer_id": (None, None),
    "full_name": ("PERSON", "PERSON"),
    "email": ("EMAIL", "EMAIL_ADDRESS"),
    "phone": ("PHONE", "PHONE_NUMBER"),
    "national_id": ("KE_NATIONAL_ID", None),
    "kra_pin": ("KE_KRA_PIN", None),
    "credit_card": ("CREDIT_CARD", "CREDIT_CARD"),
    "iban": ("IBAN", "IBAN_CODE"),
    "ip_address": ("IP_ADDRESS", "IP_ADDRESS"),
    "date_of_birth": ("DATE_OF_BIRTH", "DATE_TIME"),
    "age": ("AGE", None),
    "gender": ("GENDER", None),
    "county": ("LOCATION", "LOCATION"),
    "marital_status": ("MARITAL_STATUS", None),
    "occupation": ("OCCUPATION", None),
    "diagnosis": ("HEALTH", None),
    "income": ("INCOME", None),
    "tier": (None, None),
    "risk_score": (None, None),  # 2 decimals over 1M rows: far from one value per person
    "signup_date": ("EVENT_DATE", "DATE_TIME"),
}


def make_table(rows: int, seed: int = 0) -> pd.DataFrame:
    """Realistic values, vectorized: Faker fills pools, numpy draws from them."""
    rng = np.random.default_rng(seed)
    fake = Faker(["en_KE", "en_US"])
    fake.seed_instance(seed)

    def pool(make, size: int = 5000) -> np.ndarray:  # type: ignore[no-untyped-def]
        return np.array([make() for _ in range(size)], dtype=object)

    names = pool(fake.name)[rng.integers(0, 5000, rows)]
    user = np.char.lower(np.array([n.split()[0] for n in names], dtype=str))
    digits = rng.integers(0, 10**8, rows)
    pins = rng.integers(0, 10**9, rows)
    letters = np.array(list(string.ascii_uppercase))
    return pd.DataFrame(
        {
            "customer_id": np.char.add("CUS-", rng.permutation(rows).astype(str)),
            "full_name": names,
            "email": np.char.add(
                np.char.add(user, rng.integers(1, 999, rows).astype(str)), "@example.co.ke"
            ),
            "phone": np.char.add("07", np.char.zfill(digits.astype(str), 8)),
            "national_id": rng.choice(np.arange(1_000_000, 40_000_000), rows, replace=False),
            "kra_pin": np.char.add(
                np.char.add(rng.choice(["A", "P"], rows), np.char.zfill(pins.astype(str), 9)),
                letters[rng.integers(0, 26, rows)],
            ),
            "credit_card": pool(fake.credit_card_number, 2000)[rng.integers(0, 2000, rows)],
            "iban": pool(fake.iban, 2000)[rng.integers(0, 2000, rows)],
            "ip_address": [f"10.{a}.{b}.{c}" for a, b, c in rng.integers(0, 256, (rows, 3))],
            "date_of_birth": pd.Timestamp("1935-01-01")
            + pd.to_timedelta(rng.integers(0, 25_000, rows), "D"),
            "age": rng.integers(18, 91, rows),
            "gender": rng.choice(["Female", "Male"], rows),
            "county": rng.choice(list(COUNTY_PROVINCE), rows),
            "marital_status": rng.choice(["Single", "Married", "Divorced", "Widowed"], rows),
            "occupation": pool(fake.job, 500)[rng.integers(0, 500, rows)],
            "diagnosis": rng.choice(["Hypertension", "Diabetes", "Asthma", "Malaria"], rows),
            "income": np.round(rng.lognormal(10.5, 0.6, rows), -2).astype(np.int64),
            "tier": rng.choice(["Bronze", "Silver", "Gold"], rows),
            "risk_score": rng.normal(50, 12, rows).round(2),
            "signup_date": pd.Timestamp("2016-01-01")
            + pd.to_timedelta(rng.integers(0, 3000, rows), "D"),
        }
    )


def run_presidio(python: str, table: Path, samples: list[int], budget: float) -> list[dict]:
    runner = Path(__file__).with_name("presidio_runner.py")
    out = subprocess.run(
        [python, str(runner), str(table), json.dumps(samples), str(budget)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"Presidio runner failed:\n{out.stderr[-2000:]}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def free_text(python: str, n: int) -> None:
    """Entities inside the same held-out notes: veil's find_entities against Presidio's."""
    notes = make_notes(n)
    find_entities("warm up: Call Mr Otieno on 0712 345 678")  # word lists and patterns load
    start = time.perf_counter()
    ours = [[(s.entity, s.start, s.end) for s in find_entities(text)] for text, _ in notes]
    veil_seconds = time.perf_counter() - start
    veil_recall, veil_false = recall(notes, ours, {e: e for e in ENTITY_OF.values()})
    theirs = None
    if Path(python).exists():
        with tempfile.TemporaryDirectory() as tmp:
            cells = Path(tmp) / "cells.json"
            cells.write_text(json.dumps([text for text, _ in notes]))
            runner = Path(__file__).with_name("presidio_runner.py")
            out = subprocess.run(
                [python, str(runner), "--text", str(cells)],
                capture_output=True,
                text=True,
                check=False,
            )
        if out.returncode != 0:
            raise SystemExit(f"Presidio runner failed:\n{out.stderr[-2000:]}")
        answer = json.loads(out.stdout.splitlines()[-1])
        found = [[tuple(hit) for hit in cell] for cell in answer["found"]]
        theirs = (*recall(notes, found, PRESIDIO), answer["seconds"])
    print(
        f"\nEntities inside free text: {n} held-out notes (bench/heldout_notes.py), "
        f"{sum(len(t) for _, t in notes)} labelled entities"
    )
    print(f"  {'entity':<16}{'embedded':>9}{'veil':>8}{'Presidio':>10}")
    totals = [0, 0, 0]
    for entity, (embedded, hit) in veil_recall.items():
        other = theirs[0][entity][1] if theirs else None
        totals[0] += embedded
        totals[1] += hit
        totals[2] += other or 0
        shown = "-" if other is None else f"{other / embedded:.0%}"
        note = "" if PRESIDIO[entity] else "  (no Presidio recognizer)"
        print(f"  {entity:<16}{embedded:>9}{hit / embedded:>8.0%}{shown:>10}{note}")
    shown = "-" if theirs is None else f"{totals[2] / totals[0]:.0%}"
    print(f"  {'all':<16}{totals[0]:>9}{totals[1] / totals[0]:>8.0%}{shown:>10}")
    both = [e for e in veil_recall if PRESIDIO[e] and e != "PERSON"]  # no NER model here
    if theirs is not None:
        embedded = sum(veil_recall[e][0] for e in both)
        print(
            f"  {'both can find':<16}{embedded:>9}"
            f"{sum(veil_recall[e][1] for e in both) / embedded:>8.0%}"
            f"{sum(theirs[0][e][1] for e in both) / embedded:>10.0%}"
            "  (patterns only: no PERSON, no Kenyan IDs)"
        )
    print(
        f"  false hits (spans on no labelled entity): veil {veil_false}"
        + ("" if theirs is None else f", Presidio {theirs[1]}")
    )
    print(
        f"  time: veil {veil_seconds * 1e6 / n:.0f} us/note"
        + ("" if theirs is None else f", Presidio {theirs[2] * 1e6 / n:.0f} us/note")
    )
    if theirs is None:
        print(f"  Presidio not measured: {python} missing (run `make bench-scan`)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--notes", type=int, default=1000, help="held-out notes (free text)")
    parser.add_argument("--presidio-python", default=".venv-presidio/bin/python")
    parser.add_argument("--presidio-samples", default="1000,10000,100000")
    parser.add_argument("--presidio-budget", type=float, default=600, help="seconds")
    args = parser.parse_args()

    print(f"making {args.rows:,} rows x {len(TRUTH)} columns ...", flush=True)
    table = make_table(args.rows)
    start = time.perf_counter()
    result = scan(table)
    veil_seconds = time.perf_counter() - start
    found = {c.name: c.entity for c in result.columns}
    veil_right = sum(found[c] == want for c, (want, _) in TRUTH.items())
    print(
        f"\nveil scan, all {args.rows:,} rows: {veil_seconds:.2f} s "
        f"(target <= 10 s); entity right on {veil_right}/{len(TRUTH)} columns"
    )
    for c in result.columns:
        mark = "ok " if found[c.name] == TRUTH[c.name][0] else "MISS"
        print(f"  {mark} {c.name:<15} {c.role.value:<17} {c.entity or '-':<15} {c.confidence:.2f}")

    free_text(args.presidio_python, args.notes)
    if not Path(args.presidio_python).exists():
        print(f"\nPresidio not measured: {args.presidio_python} missing (run `make bench-scan`)")
        return
    samples = [int(s) for s in args.presidio_samples.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table.parquet"
        table.to_parquet(path)
        rows = run_presidio(args.presidio_python, path, samples, args.presidio_budget)
    print("\nPresidio structured (regex-only NoOpNlpEngine), same table:")
    for row in rows:
        mapping = row["mapping"]
        right = sum(mapping.get(c) == want for c, (_, want) in TRUTH.items())
        per_row = row["seconds"] / row["n"]
        print(
            f"  n={row['n']:>9,} rows sampled: {row['seconds']:8.2f} s "
            f"({per_row * 1e3:.2f} ms/row -> {per_row * args.rows / 3600:.1f} h for all "
            f"{args.rows:,}); entity right on {right}/{len(TRUTH)} columns"
        )
    if rows:
        print(f"  its findings at n={rows[-1]['n']:,}: {rows[-1]['mapping']}")
    if os.environ.get("VEIL_BENCH_JSON"):
        print(json.dumps({"veil_seconds": veil_seconds, "presidio": rows}))


if __name__ == "__main__":
    main()

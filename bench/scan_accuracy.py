"""Role accuracy of `veil scan` on realistic Faker tables, per locale, with meaningful and with
opaque headers (targets: >= 0.95 named, >= 0.85 opaque).

    python bench/scan_accuracy.py [--rows 1000] [--seeds 5]

The tables come from tests/scan/faker_tables.py (28-29 labelled columns per locale). Caveat
printed with the figures: for the vocabulary columns (names, jobs, countries, diagnoses) the
recognizers' word lists and the generator overlap, so those columns measure coverage of the
gazetteer, not generalization beyond it; pattern, checksum and distribution columns do not.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections import Counter
from pathlib import Path

from veil.scan import scan

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package
tables = importlib.import_module("tests.scan.faker_tables")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    print(f"{'locale':<8}{'named':>8}{'opaque':>8}   misses (truth -> found)")
    totals: dict[bool, list[float]] = {False: [], True: []}
    for locale in tables.LOCALES:
        scores: dict[bool, list[float]] = {False: [], True: []}
        misses: Counter[str] = Counter()
        for seed in range(args.seeds):
            for opaque in (False, True):
                frame, truth = tables.make_table(locale, args.rows, seed=seed, opaque=opaque)
                found = {c.name: c.role.value for c in scan(frame).columns}
                scores[opaque].append(tables.role_accuracy(found, truth))
                for i, (name, (role, entity)) in enumerate(truth.items()):
                    if found[name] != role:
                        label = "opaque" if opaque else "named"
                        misses[f"{label} #{i} {entity or role}: {role}->{found[name]}"] += 1
        named = sum(scores[False]) / len(scores[False])
        opaque_ = sum(scores[True]) / len(scores[True])
        totals[False] += scores[False]
        totals[True] += scores[True]
        detail = "; ".join(f"{k} x{v}" for k, v in misses.most_common(4))
        print(f"{locale:<8}{named:>8.3f}{opaque_:>8.3f}   {detail}")
    print(
        f"{'all':<8}{sum(totals[False]) / len(totals[False]):>8.3f}"
        f"{sum(totals[True]) / len(totals[True]):>8.3f}"
    )


if __name__ == "__main__":
    main()

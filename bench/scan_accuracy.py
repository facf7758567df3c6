"""How right `veil scan` is, and whether its confidence means what it says.

    make bench-accuracy        (or: python bench/scan_accuracy.py [--rows 1000] [--seeds 5])

1. Role accuracy on the Faker customer tables (tests/scan/faker_tables.py), per locale, with
   meaningful and with opaque headers (targets: >= 0.95 named, >= 0.85 opaque). For the
   vocabulary columns (names, jobs, countries, diagnoses) the recognizers' word lists and the
   generator overlap: those measure the gazetteer's coverage, not generalization beyond it.
2. The labelled tables of bench/labelled_tables.py: the real ones (heart, vitals, IBM HR; adult
   census, insurance cross-sell and the Kenyan insurance file when ../shared is beside the
   repository) and four generated kinds veil was not built against (clinic, HR, German,
   British). Accuracy per table with every miss.
3. Over every column of 1 and 2: per-role precision and recall, the confusion matrix, and the
   calibration of the confidence (per confidence bin: how often the role was right; the
   expected calibration error), with a reliability plot (--plot, default bench/out/).
4. Free text: recall of the entities inside held-out notes (bench/heldout_notes.py) and inside
   the development set (tests/data/free_text_notes.csv), and false hits.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
from heldout_notes import ENTITY_OF, gazetteer_share, make_notes, recall  # bench/
from labelled_tables import generated_tables, real_tables  # bench/

from veil.scan import scan
from veil.scan.text import find_entities

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tests package
tables = importlib.import_module("tests.scan.faker_tables")
ROLES = ("identifier", "quasi_identifier", "sensitive", "insensitive")
BINS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0001)

# every scanned column: (table, column, truth, found, confidence)
Row = tuple[str, str, str, str, float]


def faker_part(rows: int, seeds: int, out: list[Row]) -> None:
    print(f"1. Faker customer tables, {rows} rows x {seeds} seeds")
    print(f"{'locale':<8}{'named':>8}{'opaque':>8}   misses (truth -> found)")
    totals: dict[bool, list[float]] = {False: [], True: []}
    for locale in tables.LOCALES:
        scores: dict[bool, list[float]] = {False: [], True: []}
        misses: Counter[str] = Counter()
        for seed in range(seeds):
            for opaque in (False, True):
                frame, truth = tables.make_table(locale, rows, seed=seed, opaque=opaque)
                result = {c.name: c for c in scan(frame).columns}
                found = {name: c.role.value for name, c in result.items()}
                scores[opaque].append(tables.role_accuracy(found, truth))
                label = "opaque" if opaque else "named"
                for i, (name, (role, entity)) in enumerate(truth.items()):
                    out.append(
                        (
                            f"faker {locale} {label}",
                            name,
                            role,
                            found[name],
                            result[name].confidence,
                        )
                    )
                    if found[name] != role:
                        misses[f"{label} #{i} {entity or role}: {role}->{found[name]}"] += 1
        totals[False] += scores[False]
        totals[True] += scores[True]
        named, opaque_ = (sum(scores[o]) / len(scores[o]) for o in (False, True))
        detail = "; ".join(f"{k} x{v}" for k, v in misses.most_common(4))
        print(f"{locale:<8}{named:>8.3f}{opaque_:>8.3f}   {detail}")
    named, opaque_ = (sum(totals[o]) / len(totals[o]) for o in (False, True))
    print(f"{'all':<8}{named:>8.3f}{opaque_:>8.3f}")


def labelled_part(rows: int, out: list[Row]) -> None:
    print("\n2. Labelled tables (labels by judgement, bench/labelled_tables.py)")
    for name, frame, truth in [*real_tables(), *generated_tables(rows)]:
        result = {c.name: c for c in scan(frame).columns}
        right = 0
        misses = []
        for column, role in truth.items():
            found = result[column]
            out.append((name, column, role, found.role.value, found.confidence))
            right += found.role.value == role
            if found.role.value != role:
                misses.append(f"{column} {role}->{found.role.value}")
        print(
            f"  {name:<38}{right:>3}/{len(truth):<3} {right / len(truth):.3f}   "
            + "; ".join(misses)
        )


def role_part(rows: list[Row]) -> pd.DataFrame:
    table = pd.DataFrame(rows, columns=["table", "column", "truth", "found", "confidence"])
    labelled = table[~table["table"].str.startswith("faker")]
    for title, part in (("every column", table), ("labelled tables only (2)", labelled)):
        print(
            f"\n3. Per role, {title}: {len(part):,} columns, accuracy "
            f"{(part['truth'] == part['found']).mean():.3f}"
        )
        print(f"  {'role':<18}{'precision':>10}{'recall':>8}{'truth n':>9}{'found n':>9}")
        for role in ROLES:
            said, real = part["found"] == role, part["truth"] == role
            both = (said & real).sum()
            precision = both / said.sum() if said.any() else float("nan")
            print(
                f"  {role:<18}{precision:>10.3f}{both / real.sum():>8.3f}"
                f"{real.sum():>9}{said.sum():>9}"
            )
        matrix = pd.crosstab(part["truth"], part["found"]).reindex(
            index=ROLES, columns=ROLES, fill_value=0
        )
        print("  confusion (rows: truth, columns: found)")
        print("\n".join("    " + line for line in matrix.to_string().splitlines()))
    print(
        "\n   Calibration: columns by the confidence the scan gave, and how often its role "
        "was right"
    )
    print(
        f"  {'confidence':<12}{'columns':>8}{'mean conf.':>11}{'right':>8}   insensitive right (n)"
    )
    table["bin"] = pd.cut(table["confidence"], BINS, right=False)
    table["right"] = table["truth"] == table["found"]
    gap = 0.0
    for interval, part in table.groupby("bin", observed=True):
        quiet = part[part["found"] == "insensitive"]
        gap += len(part) * abs(part["right"].mean() - part["confidence"].mean())
        print(
            f"  {interval.left:.1f}-{min(interval.right, 1):.1f}{'':<5}{len(part):>8}"
            f"{part['confidence'].mean():>11.3f}{part['right'].mean():>8.3f}   "
            f"{quiet['right'].mean() if len(quiet) else float('nan'):.3f} ({len(quiet)})"
        )
    print(f"  expected calibration error: {gap / len(table):.3f}")
    return table


def overlaps(found: str, labelled: str) -> bool:
    return found in labelled or labelled in found


def free_text_part(n: int) -> None:
    notes = make_notes(n)
    found = [[(s.entity, s.start, s.end) for s in find_entities(t)] for t, _ in notes]
    per, false = recall(notes, found, {e: e for e in ENTITY_OF.values()})
    given, family = gazetteer_share()
    print(
        f"\n4. Free text, {n} held-out notes: entities found / embedded "
        f"(names hand-written; veil's gazetteer holds {given:.0%} of the given and "
        f"{family:.0%} of the family names)"
    )
    embedded = sum(e for e, _ in per.values())
    hit = sum(h for _, h in per.values())
    print("  " + "; ".join(f"{e} {h}/{m}" for e, (m, h) in per.items()))
    print(f"  recall {hit / embedded:.3f} ({hit}/{embedded}); false hits {false}")
    dev = pd.read_csv(ROOT / "tests" / "data" / "free_text_notes.csv", keep_default_na=False)
    wanted = hit_dev = false_dev = 0
    for text, labels in zip(dev["note"], dev["entities"], strict=True):
        truth = [tuple(item.split(":", 1)) for item in labels.split("|") if item]
        spans = find_entities(text)
        for entity, value in truth:
            wanted += 1
            hit_dev += any(
                s.entity == entity and overlaps(text[s.start : s.end], value) for s in spans
            )
        false_dev += sum(
            not any(overlaps(text[s.start : s.end], v) for _, v in truth) for s in spans
        )
    print(
        f"  development set ({len(dev)} notes, tuned on): recall {hit_dev / wanted:.3f} "
        f"({hit_dev}/{wanted}); false hits {false_dev}"
    )


def plot(table: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grouped = table.groupby("bin", observed=True).agg(
        confidence=("confidence", "mean"), right=("right", "mean"), n=("right", "size")
    )
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0.5, 1], [0.5, 1], color="grey", linestyle="--", label="perfectly calibrated")
    ax.plot(grouped["confidence"], grouped["right"], marker="o", label="veil scan")
    for _, row in grouped.iterrows():
        ax.annotate(
            f"n={int(row['n'])}",
            (row["confidence"], row["right"]),
            fontsize=8,
            textcoords="offset points",
            xytext=(4, -10),
        )
    ax.set(
        xlabel="confidence given",
        ylabel="share of roles right",
        xlim=(0.5, 1.0),
        ylim=(0.4, 1.02),
        title="Scan confidence: reliability",
    )
    ax.legend(loc="lower right")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print(f"\nreliability plot: {path}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--plot", default=str(ROOT / "bench" / "out" / "scan_calibration.png"))
    args = parser.parse_args()
    rows: list[Row] = []
    faker_part(args.rows, args.seeds, rows)
    labelled_part(args.rows, rows)
    table = role_part(rows)
    free_text_part(args.notes)
    plot(table, Path(args.plot))


if __name__ == "__main__":
    main()

"""``veil demo``: the whole flow on the bundled Kenyan insurance sample — scan, suggested
policy, anonymize, certificate and report."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from veil.data import SAMPLE, sample
from veil.dp.budget import Accountant, dataset_id
from veil.dp.stats import DPResult
from veil.exceptions import MissingExtraError, OutputError
from veil.io import TEXT_FORMATS, OutputSet, write_table
from veil.keys import DEFAULT_KEY_ENV, ensure_key_file
from veil.policy import Policy
from veil.privacy import Release, anonymize
from veil.privacy.suggest import suggest_policy_yaml
from veil.report import Curve, Report, build_report
from veil.scan import ScanResult, scan

DEMO_DATA = SAMPLE
KEY_FILE = "demo.key"
TARGET = "Account_withdrawal"  # the utility model predicts whether a client withdraws
DP_BUDGET = 1.0
DP_SPENDS = (0.1, 0.3, 0.3)  # the demo's DP sum, mean and histogram
CURVE_EPSILONS = (0.03, 0.1, 0.3, 1.0, 3.0)
CURVE_REPEATS = 20
AGE_BOUNDS = (18, 100)
#: The illness categories an insurer's claim form offers: domain knowledge, not read from the data.
ILLNESS_CATEGORIES = ("Acute", "Chronic", "Congenital", "Subacute")


@dataclass(frozen=True)
class DemoResult:
    """The files ``veil demo`` wrote, its release and its report."""

    scan: ScanResult
    release: Release
    original: pd.DataFrame
    files: dict[str, Path]
    generated_key: bool
    report: Report
    dp_note: str = ""  # why the DP answers were not made, when they were not


def demo_data() -> pd.DataFrame:
    """The bundled sample: 1001 synthetic Kenyan insurance clients with IDs and KRA PINs (CC0)."""
    return sample()


def _demo_files(folder: Path, force: bool) -> dict[str, Path]:
    """The demo's files in ``folder``; refused when any is there already, unless ``force``."""
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"-o {folder} is a file; give a folder for the demo's outputs")
    files = {
        "data": folder / DEMO_DATA,
        "scan": folder / "scan.json",
        "policy": folder / "policy.yaml",
        "release": folder / "release.csv",
        "certificate": folder / "certificate.json",
        "budget": folder / "budget.db",
        "report": folder / "report.html",
        "report_json": folder / "report.json",
    }
    present = [path.name for path in files.values() if path.exists()]
    if present and not force:
        raise OutputError(
            f"{folder} already holds {', '.join(present)} from an earlier run; pass --force "
            "to replace them (a budget ledger with entries is kept), or -o another folder"
        )
    folder.mkdir(parents=True, exist_ok=True)
    return files


def _demo_policy(
    found: ScanResult, original: pd.DataFrame, folder: Path, staged: Path, *, generated_key: bool
) -> Policy:
    """The suggested policy, written to ``staged`` and read back from there (beside the key
    file it names: one made in ``folder`` when the user has no key of their own)."""
    if generated_key:  # no key of the user's: make one beside the outputs
        ensure_key_file(folder / KEY_FILE)
    text = suggest_policy_yaml(
        found, original, source=DEMO_DATA, key_file=KEY_FILE if generated_key else None
    )
    staged.write_text(text, encoding="utf-8")
    return Policy.load(staged)


def run_demo(
    out: str | os.PathLike[str],
    *,
    progress: Callable[[str], None] | None = None,
    force: bool = False,
) -> DemoResult:
    """Write the input, scan.json, policy.yaml, release.csv, certificate.json, budget.db,
    report.html and report.json into ``out``.

    A folder that already holds any of these is refused unless ``force``; then they are
    replaced, except the privacy-budget ledger: one with entries is never reset, and the demo's
    DP answers are charged to it while it can afford them. Nothing else in ``out`` is touched,
    and the files appear together, when all are made.
    """
    folder = Path(out)
    files = _demo_files(folder, force)
    say = progress or (lambda _msg: None)
    say("reading the Kenyan insurance sample")
    original = demo_data()
    outputs = OutputSet(force=True)
    for key, path in files.items():
        if key != "budget":
            outputs.check(path)
    with outputs:
        outputs.stage(files["data"]).write_bytes(
            (resources.files("veil.data") / DEMO_DATA).read_bytes()
        )
        found = scan(original, progress=say)
        outputs.stage(files["scan"]).write_text(found.to_json() + "\n", encoding="utf-8")

        generated_key = DEFAULT_KEY_ENV not in os.environ
        policy = _demo_policy(
            found, original, folder, outputs.stage(files["policy"]), generated_key=generated_key
        )
        # written as CSV: cells a spreadsheet would run get an apostrophe, counted and pinned
        release = anonymize(original, policy, progress=say).with_formulas_escaped()
        say("answering questions with differential privacy")
        accountant, answers, curves, dp_note = _dp_demo(
            original, files["budget"], folder, public_rows=release.certificate.rows_out
        )
        if accountant is None:
            del files["budget"]
        say("building the report")
        report = build_report(
            release,
            original=original,
            scan_result=found,
            aligned=True,
            target=TARGET,
            title="veil demo: Kenyan insurance release",
            progress=say,
            accountant=accountant,
            dp_releases=answers,
            curves=curves,
        )
        say("writing the release, certificate and report")
        write_table(
            release.data,
            outputs.stage(files["release"]),
            "csv",
            formats=original.attrs.get(TEXT_FORMATS, {}),
        )
        outputs.stage(files["certificate"]).write_text(
            release.certificate.to_json() + "\n", encoding="utf-8"
        )
        outputs.stage(files["report"]).write_text(report.render("html"), encoding="utf-8")
        outputs.stage(files["report_json"]).write_text(report.render("json"), encoding="utf-8")
    return DemoResult(found, release, original, files, generated_key, report, dp_note)


def _dp_demo(
    original: pd.DataFrame, ledger: Path, folder: Path, public_rows: int
) -> tuple[Accountant | None, list[DPResult], list[Curve], str]:
    """Three DP answers charged to the demo's budget of epsilon 1, and the error of a DP mean
    against epsilon drawn on simulated data (never the original: the curve repeats releases
    a hundred times). Without the ``dp`` extra the report simply has no DP section.

    A ledger left by an earlier run is kept when it has entries (a spent budget is never
    reset): the answers are charged to it while it can afford them, else not made, and the
    returned note says why."""
    try:
        from veil.dp import Budget, stats
        from veil.dp.curves import error_vs_epsilon

        stats.opendp()
    except MissingExtraError:
        return None, [], [], ""
    dataset = dataset_id(original)
    accountant = Accountant(ledger) if ledger.exists() else None
    if accountant is not None and accountant.dataset != dataset:
        raise OutputError(
            f"{ledger} is the budget ledger of another dataset; move it away, or -o another folder"
        )
    if accountant is None or not accountant.entries():
        accountant = Accountant.create(ledger, Budget(DP_BUDGET), dataset=dataset, overwrite=True)
    # Everything a query is told is public knowledge: categories and bounds from the domain,
    # never read from the data. (The record count is not asked: the release's
    # certificate states it exactly already.)
    need = sum(DP_SPENDS)
    left = accountant.remaining().epsilon
    if left + 1e-12 < need:
        note = (
            f"{ledger} keeps the spending of earlier runs: epsilon {left:g} of "
            f"{accountant.budget.epsilon:g} is left, and the demo's answers need {need:g}, so "
            "they were not made (a ledger with entries is never reset; move it away to start "
            "over)"
        )
        return accountant, [], [], note
    spend_sum, spend_mean, spend_histogram = DP_SPENDS
    answers = [
        stats.sum(
            original, "No_of_dependents", bounds=(0, 10), epsilon=spend_sum, accountant=accountant
        ),
        stats.mean(original, "Age", bounds=AGE_BOUNDS, epsilon=spend_mean, accountant=accountant),
        stats.histogram(
            original,
            "Illness_category",
            categories=ILLNESS_CATEGORIES,
            epsilon=spend_histogram,
            accountant=accountant,
        ),
    ]
    # The curve: as many simulated ages as the release has records (public in the report),
    # uniform on the public bounds; its throwaway ledger charges no one's data.
    simulated = pd.DataFrame({"Age": np.random.default_rng(0).uniform(*AGE_BOUNDS, public_rows)})
    scratch = folder / ".curve-budget.db"
    try:
        curve_ledger = Accountant.create(scratch, Budget(1e6), overwrite=True)
        table = error_vs_epsilon(
            simulated,
            "Age",
            bounds=AGE_BOUNDS,
            epsilons=CURVE_EPSILONS,
            accountant=curve_ledger,
            repeats=CURVE_REPEATS,
        )
    finally:
        for leftover in folder.glob(".curve-budget.db*"):
            leftover.unlink()
    curve = Curve(
        f"Error of a DP mean of Age against epsilon (simulated: {public_rows:,} ages uniform "
        f"on {AGE_BOUNDS[0]}-{AGE_BOUNDS[1]})",
        table,
        y="mean_abs_error",
        ylabel="mean absolute error (years)",
    )
    return accountant, answers, [curve], ""

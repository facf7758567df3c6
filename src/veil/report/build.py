"""Build the Report for a release: the headline, then each section's builder in order (one
module per section in ``veil/report/sections``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from veil._version import __version__
from veil.dp.budget import Accountant
from veil.dp.stats import DPResult
from veil.evaluate import Evaluation
from veil.federated.result import FederatedResult
from veil.privacy.certificate import Certificate, Release
from veil.progress import as_progress
from veil.registry import Registry
from veil.report.model import Fact, Report, Section
from veil.report.sections import (
    columns,
    dp,
    evaluation,
    federated,
    latent,
    policy,
    privacy,
    scan,
    utility,
)
from veil.report.sections._common import Curve, Inputs, Progress
from veil.scan import ScanResult

if TYPE_CHECKING:  # its module loads scikit-learn (the latent attacks): only typed here
    from veil.learn.latent import LatentRelease

#: The sections, in the order a reader meets them: what is personal, what was done, how
#: private the release is, what analysts keep, what attacks still learn, each column,
#: differential privacy.
SECTIONS: Registry[Callable[[Inputs], Section | None]] = Registry("report section")
for _section in (scan, policy, privacy, utility, evaluation, federated, latent, columns, dp):
    SECTIONS.add(_section.__name__.rsplit(".", 1)[-1], _section.build)


def _headline(cert: Certificate) -> tuple[list[Fact], str]:
    met = list(cert.checks.values())
    verdict = "" if not met else ("good" if all(met) else "bad")
    facts = [
        Fact(f"{cert.rows_out:,}", f"records released of {cert.rows_in:,}"),
        Fact(str(len(cert.columns_out)), f"columns released of {len(cert.columns_in)}"),
    ]
    if cert.quasi_identifiers:
        facts += [
            Fact(
                f"{cert.before.k} → {cert.after.k}",
                "k: the smallest group sharing quasi-identifiers",
                "good" if cert.after.k > 1 else "bad",
            ),
            Fact(
                f"{cert.before.unique_rows:,} → {cert.after.unique_rows:,}",
                "records unique on the quasi-identifiers",
                "good" if cert.after.unique_rows == 0 else "bad",
            ),
        ]
    if met:
        facts.append(Fact(f"{sum(met)} of {len(met)}", "policy goals met", verdict))
    return facts, verdict


def build_report(
    release: Release,
    *,
    original: pd.DataFrame | None = None,
    scan_result: ScanResult | None = None,
    aligned: bool = False,
    target: str | None = None,
    accountant: Accountant | None = None,
    dp_releases: Sequence[DPResult] = (),
    curves: Sequence[Curve] = (),
    evaluation: Evaluation | None = None,
    federated: FederatedResult | None = None,
    latent: LatentRelease | None = None,
    sampling: dict[str, Any] | None = None,
    title: str = "veil release report",
    risk_threshold: float = 0.2,
    random_state: int = 0,
    created: str | None = None,
    progress: Progress | None = None,
) -> Report:
    """The report on ``release``.

    Parameters
    ----------
    release : Release
        The release and its certificate.
    original : DataFrame, optional
        The table it was made from: adds the scan (unless ``scan_result`` is given),
        before/after risk, utility and column profiles.
    scan_result : ScanResult, optional
        The original's scan, when already made.
    aligned : bool
        The release's index points at the original's rows (true for a release made in this
        process).
    target : str, optional
        Adds a model trained on each table, predicting this column.
    accountant : Accountant, optional
        Adds the DP section (with ``dp_releases`` and ``curves``).
    dp_releases : list of DPResult
        DP statistics to show.
    curves : list of Curve
        Accuracy against epsilon curves to draw.
    evaluation : Evaluation, optional
        Adds the evaluation section (``veil.evaluate.evaluate_release``).
    federated : FederatedResult, optional
        Adds the federated section (``veil.federated.simulate``).
    latent : LatentRelease, optional
        Adds the latent-release section (``veil.learn.latent.mask_latent``).
    sampling : dict, optional
        What the original is a sample of (``population``, ``sampling_fraction`` or
        ``weights``): the scan's estimates for that population.
    title : str
        The report's title.
    risk_threshold : float
        Risk above which a record is counted at risk.
    random_state : int
        Seed of the models and samples the report draws.
    created : str, optional
        The time the report says it was made (default: now).
    progress : callable, optional
        Told of each step.

    Returns
    -------
    Report
        The sections, ready to ``render("html")`` or ``render("json")``.
    """
    inputs = Inputs(
        release,
        original=original,
        scan_result=scan_result,
        aligned=aligned,
        target=target,
        accountant=accountant,
        dp_releases=dp_releases,
        curves=curves,
        evaluation=evaluation,
        federated=federated,
        latent=latent,
        sampling=sampling,
        risk_threshold=risk_threshold,
        random_state=random_state,
        progress=progress or (lambda _message: None),
    )
    cert = release.certificate
    facts, verdict = _headline(cert)
    built = (build(inputs) for build in SECTIONS.values())
    return Report(
        title=title,
        veil_version=__version__,
        created=created or cert.created,
        headline=tuple(cert.summary()),
        facts=tuple(facts),
        sections=tuple(section for section in built if section is not None),
        verdict=verdict,
        notice=(
            "Internal: this report shows statistics of the original data (value counts, "
            "histograms, risk before). Share it as you would the original's aggregates, not "
            "as you would the release."
            if original is not None
            else "This report describes the release and its certificate only."
        ),
    )


def report_files(
    release: Any,
    certificate: Any,
    output: str | os.PathLike[str],
    *,
    original: Any = None,
    target: str | None = None,
    ledger: str | os.PathLike[str] | None = None,
    sampling: dict[str, Any] | None = None,
    title: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    **reading: Any,
) -> Report:
    """Write the report of a release made earlier (``veil report``): read the release and,
    when given, the original it was made from, check both against the certificate, build the
    report and write it (.html or .json) atomically.

    Parameters
    ----------
    release : str, path, DataFrame or Source
        The released table, as ``veil anonymize`` wrote it.
    certificate : path of its certificate (JSON)
        What the release claims: its columns must be the release's.
    output : path
        ``report.html`` or ``report.json``; ``force`` replaces an existing one (never an
        input).
    original : str, path, DataFrame or Source, optional
        The original table: adds the scan, risk before/after, utility and column profiles.
    target : str, optional
        A column a model predicts on both tables (needs ``original``).
    ledger : path, optional
        A privacy-budget ledger: adds the DP section.
    sampling, title
        What the original is a sample of; the report's title.
    force : bool
        Replace an existing report (never an input).
    progress : callable, optional
        Told of each step.
    **reading
        The options of both tables' reading (``sep``, ``dates``...).

    Returns
    -------
    Report
        The report written.
    """
    from pathlib import Path

    from veil.exceptions import InputError, ParameterError
    from veil.io import OutputSet, Source
    from veil.report.model import report_format

    inputs = [str(p) for p in (release, certificate, original) if isinstance(p, str | os.PathLike)]
    outputs = OutputSet(force=force, inputs=inputs)
    outputs.check(output)
    chosen = report_format(output)
    if target is not None and original is None:
        raise ParameterError("--target compares a model on both tables: give --original too")
    cert = Certificate.load(certificate)
    accountant = Accountant(ledger) if ledger is not None else None
    said = as_progress(progress)
    released = Source.of(release, **reading)
    said(f"reading {released.name}")
    data = released.frame()
    if list(data.columns) != list(cert.columns_out):
        raise InputError(
            f"{released.name} has columns {list(data.columns)} but the "
            f"certificate's release has {list(cert.columns_out)}; give the "
            "certificate written with this release"
        )
    frame = None
    if original is not None:
        source = Source.of(original, **reading)
        said(f"reading {source.name}")
        frame = source.frame()
        missing = [c for c in cert.columns_in if c not in frame.columns]
        if missing:
            raise InputError(
                f"{source.name} lacks the columns {missing} that the "
                "certificate's input had; give the table the release was made "
                "from"
            )
    built = build_report(
        Release(data, cert),
        original=frame,
        target=target,
        accountant=accountant,
        progress=said,
        sampling=sampling,
        title=title or f"veil release report: {Path(released.name).name}",
    )
    with outputs:
        outputs.stage(output).write_text(built.render(chosen), encoding="utf-8")
    return built

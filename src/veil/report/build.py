"""Build the Report for a release: the headline, then each section's builder in order (one
module per section in ``veil/report/sections``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from veil._version import __version__
from veil.dp.budget import Accountant
from veil.dp.stats import DPResult
from veil.evaluate import Evaluation
from veil.federated.result import FederatedResult
from veil.learn.latent import LatentRelease
from veil.privacy.certificate import Certificate, Release
from veil.report.model import Fact, Report
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

#: The sections, in the order a reader meets them: what is personal, what was done, how
#: private the release is, what analysts keep, what attacks still learn, each column,
#: differential privacy.
SECTIONS = (scan, policy, privacy, utility, evaluation, federated, latent, columns, dp)


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

    ``original`` adds the scan (unless ``scan_result`` is given), before/after risk, utility
    and column profiles; ``aligned`` says the release's index points at the original's rows
    (true for a release made in this process); ``target`` adds a model trained on each table;
    ``accountant`` (a ``veil.dp.Accountant``), ``dp_releases`` and ``curves`` the DP section;
    ``evaluation`` (``veil.evaluate.evaluate_release``) the evaluation section; ``federated``
    (``veil.federated.simulate``) the federated section; ``latent``
    (``veil.learn.latent.mask_latent``) the latent-release section; ``sampling``
    (``population``, ``sampling_fraction`` or ``weights``) the scan's estimates for the
    population the original was sampled from.
    """
    inputs = Inputs(
        release, original=original, scan_result=scan_result, aligned=aligned, target=target,
        accountant=accountant, dp_releases=dp_releases, curves=curves, evaluation=evaluation,
        federated=federated, latent=latent, sampling=sampling,
        risk_threshold=risk_threshold, random_state=random_state,
        progress=progress or (lambda _message: None),
    )  # fmt: skip
    cert = release.certificate
    facts, verdict = _headline(cert)
    built = (section.build(inputs) for section in SECTIONS)
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

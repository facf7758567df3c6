"""What every section builder shares: its inputs, and the few ways numbers are written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from veil._version import __version__
from veil.dp.budget import Accountant
from veil.dp.stats import DPResult
from veil.evaluate import Evaluation
from veil.federated.result import FederatedResult
from veil.privacy.certificate import Certificate, Release
from veil.report.model import Report, Section
from veil.scan import ScanResult

if TYPE_CHECKING:  # its module loads scikit-learn (the latent attacks): only typed here
    from veil.learn.latent import LatentRelease

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Curve:
    """A measure against epsilon (from ``veil.dp.curves``) to draw in the DP section."""

    title: str
    table: pd.DataFrame
    y: str
    ylabel: str
    reference: str | None = None


@dataclass
class Inputs:
    """What a section may draw on: the release, and whatever the caller gave besides it.

    A builder returns its section, or None when its inputs are missing (no original table,
    no DP ledger): a report shows what it can measure and no more."""

    release: Release
    original: pd.DataFrame | None = None
    scan_result: ScanResult | None = None
    aligned: bool = False  # the release's index labels point at the original's rows
    target: str | None = None  # the column a model predicts, for the utility section
    accountant: Accountant | None = None
    dp_releases: Sequence[DPResult] = ()
    curves: Sequence[Curve] = ()
    evaluation: Evaluation | None = None  # veil.evaluate's measures of the release
    federated: FederatedResult | None = None  # a federated run (veil.federated.simulate)
    latent: LatentRelease | None = None  # a latent release (veil.learn.latent.mask_latent)
    sampling: dict[str, Any] | None = None  # population / sampling_fraction / weights
    risk_threshold: float = 0.2
    random_state: int = 0
    progress: Progress = field(default=lambda _message: None)

    @property
    def cert(self) -> Certificate:
        return self.release.certificate

    @property
    def data(self) -> pd.DataFrame:
        return self.release.data


def percent(share: float) -> str:
    return f"{100 * share:.1f}%"


def change(before: float | None, after: float) -> str:
    """Like "94.2% → 5.8%", or "5.8%" when there is no before."""
    return f"{percent(before)} → {percent(after)}" if before is not None else percent(after)


def column_steps(cert: Certificate) -> tuple[dict[str, list[str]], list[Any]]:
    per_column: dict[str, list[str]] = {}
    table_steps = []
    for step in cert.steps:
        if step.where.startswith("columns."):
            column = step.where.removeprefix("columns.").rsplit(".steps[", 1)[0]
            per_column.setdefault(column, []).append(step.description)
        else:
            table_steps.append(step)
    return per_column, table_steps


def standalone(
    measured: Section, *, title: str, headline: str, notice: str, created: str = ""
) -> Report:
    """A whole report of one section (``veil evaluate --report``, ``veil fl simulate
    --report``): its first three facts up top, red when one of them is."""
    return Report(
        title=title,
        veil_version=__version__,
        created=created or pd.Timestamp.now(tz="UTC").strftime("%Y-%m-%d %H:%M UTC"),
        headline=(headline,),
        facts=measured.facts[:3],
        sections=(measured,),
        verdict="bad" if any(f.status == "bad" for f in measured.facts[:3]) else "",
        notice=notice,
    )

"""``veil anonymize`` and ``veil report``: a release, its certificate and its report."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from veil.cli._common import (
    GROUP,
    Data,
    EngineFlags,
    EscapeFormulas,
    Force,
    Format,
    GoalFlags,
    ReadFlags,
    SamplingFlags,
    Target,
    _check_format,
    _progress,
    out,
    output_option,
    with_groups,
)
from veil.exceptions import ParameterError


@dataclass
class SearchFlags:
    """How the privacy search runs."""

    l_variant: Annotated[
        str | None, typer.Option("--l-variant", help="distinct, entropy or recursive.")
    ] = None
    c_value: Annotated[float | None, typer.Option("--c", help="c of recursive (c,l).")] = None
    max_suppression: Annotated[
        float | None, typer.Option("--max-suppression", help="Share of records, e.g. 0.04.")
    ] = None
    metric: Annotated[
        str | None, typer.Option("--metric", help="loss, entropy, precision, discernibility, aecs.")
    ] = None
    method: Annotated[
        str | None, typer.Option("--method", help="optimal, heuristic or mondrian.")
    ] = None
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", help="Seconds for the heuristic.")
    ] = None

    def settings(self) -> dict[str, Any]:
        """As ``Policy.with_goals`` takes them."""
        given = dataclasses.asdict(self)
        given["c"] = given.pop("c_value")
        return given


Hierarchies = Annotated[
    Path | None,
    typer.Option("--hierarchies", help="Folder of `<data stem>_hierarchy_<column>.csv` files."),
]
ReportFile = Annotated[
    Path | None,
    typer.Option("--report", help="Also write a report here (.html, or .json for data)."),
]
CertificateFile = Annotated[
    Path | None, typer.Option("--certificate", help="Also write the certificate (JSON).")
]
ReleaseFile = Annotated[Path, output_option("Release file (.csv/.parquet).")]
PolicyFile = Annotated[Path | None, typer.Option("--policy", "-p", help="Policy YAML file.")]


@with_groups
def anonymize(
    data: Data,
    output: ReleaseFile,
    policy: PolicyFile = None,
    report: ReportFile = None,
    certificate: CertificateFile = None,
    target: Target = None,
    sampling: SamplingFlags = GROUP,
    hierarchies: Hierarchies = None,
    goals: GoalFlags = GROUP,
    search: SearchFlags = GROUP,
    fmt: Format = "text",
    force: Force = False,
    escape_formulas: EscapeFormulas = True,
    reading: ReadFlags = GROUP,
    engines: EngineFlags = GROUP,
) -> None:
    """Anonymize DATA with a policy and/or privacy goals; write the release.

    With --hierarchies, the columns that have a hierarchy file are the quasi-identifiers and
    the optimal generalization meeting -k/--l/--t is searched for, as in ARX.
    """
    from veil.api import anonymize as run
    from veil.policy import Policy

    _check_format(fmt)
    engine = engines.chosen()
    pol = (Policy.load(policy) if policy is not None else Policy()).with_goals(
        goals.specs(), search=hierarchies is not None, **goals.settings(), **search.settings()
    )
    if pol.privacy is None and policy is None:
        raise ParameterError("give --policy, or privacy goals such as -k 5 with --hierarchies DIR")
    with _progress() as say, engines.running(engine):
        release = run(
            data,
            pol,
            engine=engine,
            hierarchies=hierarchies,
            output=output,
            certificate=certificate,
            report=report,
            target=target,
            sampling=sampling.given(),
            force=force,
            escape_formulas=escape_formulas,
            batch_rows=engines.batch_rows,
            progress=say,
            **reading.given(),
        )
    _said(release.certificate, fmt, output, [report, certificate])


def _said(cert: Any, fmt: str, output: Path, others: list[Path | None]) -> None:
    if fmt == "json":
        out.print_json(cert.to_json())
        return
    out.print(f"wrote {output} ({cert.rows_out:,} rows x {len(cert.columns_out)} columns)")
    for line in cert.summary():
        out.print(f"  {line}")
    for path in others:
        if path is not None:
            out.print(f"wrote {path}")


@with_groups
def report_command(
    release: Annotated[
        str, typer.Argument(help="The released table (as veil anonymize wrote it).")
    ],
    certificate: Annotated[
        Path, typer.Option("--certificate", help="certificate.json of the release.")
    ],
    output: Annotated[Path, output_option("report.html or report.json.")],
    original: Annotated[
        str | None,
        typer.Option(
            "--original",
            help="The original table: adds scan, risk before/after, utility and column profiles.",
        ),
    ] = None,
    target: Target = None,
    sampling: SamplingFlags = GROUP,
    ledger: Annotated[
        Path | None, typer.Option("--budget", help="A privacy-budget ledger: adds the DP section.")
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="The report's title.")] = None,
    force: Force = False,
    reading: ReadFlags = GROUP,
) -> None:
    """Write the report of a release: what was done, privacy and risk, utility, DP budget."""
    from veil.report import report_files

    with _progress() as say:
        built = report_files(
            release,
            certificate,
            output,
            original=original,
            target=target,
            ledger=ledger,
            sampling=sampling.given(),
            title=title,
            force=force,
            progress=say,
            **reading.given(),
        )
    out.print(f"wrote {output}")
    for line in built.headline:
        out.print(f"  {line}")


def _sampling(
    population: float | None, fraction: float | None, weights: str | None
) -> dict[str, Any] | None:
    """What the original is a sample of, for the report's scan (None: the whole population)."""
    given = {"population": population, "sampling_fraction": fraction, "weights": weights}
    return {k: v for k, v in given.items() if v is not None} or None


def register(app: typer.Typer) -> None:
    """Add ``veil anonymize`` and ``veil report`` to ``app``."""
    app.command("anonymize")(anonymize)
    app.command("report")(report_command)

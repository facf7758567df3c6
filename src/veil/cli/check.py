"""``veil check`` and ``veil verify``: measure a table, re-check a release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from veil.cli._common import (
    GROUP,
    Data,
    EngineFlags,
    Force,
    Format,
    GoalFlags,
    ReadFlags,
    SamplingFlags,
    Sep,
    _check_format,
    _progress,
    _read_options,
    _report_format,
    _source,
    out,
    with_groups,
)
from veil.exceptions import CheckFailedError, ParameterError


@with_groups
def check_command(
    data: Data,
    quasi_identifiers: Annotated[
        str, typer.Option("--quasi-identifiers", "-q", help="Comma-separated columns.")
    ],
    goals: GoalFlags = GROUP,
    risk_threshold: Annotated[
        float, typer.Option("--risk-threshold", help="Risk above which a record is at risk.")
    ] = 0.2,
    sampling: SamplingFlags = GROUP,
    hierarchies: Annotated[
        Path | None,
        typer.Option(
            "--hierarchies",
            help="Folder with the sensitive column's hierarchy (for --t-distance hierarchical).",
        ),
    ] = None,
    person_id: Annotated[
        str | None,
        typer.Option(
            "--person-id",
            help="A column naming each row's person (or household): "
            "k and risk count people, not rows.",
        ),
    ] = None,
    fmt: Format = "text",
    reading: ReadFlags = GROUP,
    engines: EngineFlags = GROUP,
) -> None:
    """Measure k, l, t and re-identification risk of DATA; exit 1 if a threshold fails."""
    from veil.privacy import check

    _check_format(fmt)
    columns = [c.strip() for c in quasi_identifiers.split(",") if c.strip()]
    if not columns:
        raise ParameterError("--quasi-identifiers must name a column at least, e.g. -q Age,County")
    engine = engines.chosen()
    with _progress() as say, engines.running(engine):
        result = check(
            data,
            columns,
            engine=engine,
            sensitive=goals.sensitive,
            k=goals.k,
            l=goals.l_value,
            t=goals.t_value,
            t_distance=goals.t_distance,
            models=goals.specs(),
            risk_threshold=risk_threshold,
            population=sampling.population,
            sampling_fraction=sampling.sampling_fraction,
            weights=sampling.weights,
            person=person_id,
            hierarchies=hierarchies,
            batch_rows=engines.batch_rows,
            progress=say,
            **reading.given(),
        )
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict()))
    else:
        for line in result.lines():
            out.print(line)
    if result.failed:
        raise CheckFailedError(f"{data}: does not meet {', '.join(result.failed)}")


@with_groups
def verify_command(
    release: Annotated[str, typer.Argument(help="The released file (or folder of parts).")],
    certificate: Annotated[Path, typer.Option("--certificate", help="Its certificate (JSON).")],
    hierarchies: Annotated[
        Path | None,
        typer.Option(
            "--hierarchies",
            help="The sensitive hierarchy, for a certificate made before veil kept it.",
        ),
    ] = None,
    fmt: Format = "text",
    sep: Sep = None,
    engines: EngineFlags = GROUP,
) -> None:
    """Re-check a release against its certificate, independently of the search."""
    from veil.privacy import verify

    _check_format(fmt)
    result = verify(release, certificate, engine=engines.chosen(), hierarchies=hierarchies,
                    batch_rows=engines.batch_rows, sep=sep)  # fmt: skip
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict()))
    else:
        for claim, holds, detail in result.claims:
            out.print(f"  {'ok  ' if holds else 'FAIL'} {claim}: {detail}")
    if not result.ok:
        raise CheckFailedError(f"{release}: does not verify against {certificate}")


def evaluate_command(
    original: Annotated[str, typer.Argument(help="The table the release was made from.")],
    release: Annotated[
        str, typer.Argument(help="The release (any kind: k-anonymous, masked, synthetic...).")
    ],
    holdout: Annotated[
        str | None,
        typer.Option("--holdout", help="Real rows of the same kind the release was NOT made from."),
    ] = None,
    holdout_fraction: Annotated[
        float | None,
        typer.Option(
            "--holdout-fraction",
            help="Set aside this share of ORIGINAL as holdout (the release must have been made "
            "without those rows).",
        ),
    ] = None,
    target: Annotated[
        str | None, typer.Option("--target", help="Category a model predicts (TSTR vs TRTR).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random choice.")] = 0,
    report: Annotated[
        Path | None, typer.Option("--report", help="Also write a report (.html or .json).")
    ] = None,
    fmt: Format = "text",
    force: Force = False,
    sep: Sep = None,
) -> None:
    """Fidelity, utility on real holdout rows, and attacks (DCR, membership, singling out,
    linkability, inference) on any release."""
    from veil.evaluate import evaluate_release
    from veil.io import OutputSet, read

    _check_format(fmt)
    inputs = [original, release] + ([holdout] if holdout else [])
    outputs = OutputSet(force=force, inputs=inputs)
    if report is not None:
        outputs.check(report)
        chosen = _report_format(report)
    options = _read_options(None, sep=sep)
    with _progress() as say:
        say(f"reading {_source(original)} and {_source(release)}")
        real = read(original, **options)
        released = read(release, **options)
        rows = None if holdout is None else read(holdout, **options)
        say("measuring fidelity, utility and privacy")
        result = evaluate_release(real, released, holdout=rows, holdout_fraction=holdout_fraction,
                                  target=target, seed=seed)  # fmt: skip
    if report is not None:
        from veil.report.sections.evaluation import build_evaluation_report

        built = build_evaluation_report(result, title=f"veil evaluation: {Path(release).name}")
        with outputs:
            outputs.stage(report).write_text(built.render(chosen), encoding="utf-8")
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict()))
        return
    data = result.to_dict()
    fidelity = data["fidelity"]
    left = ", ".join(f"{c} ({why})" for c, why in result.left_out.items()) or "none"
    out.print(f"compared {len(result.compared)} columns; left out: {left}")
    for note in result.notes:
        out.print(f"  {note}")
    worst = max(fidelity["columns"].items(), key=lambda item: item[1]["value"])
    out.print(f"fidelity: detection AUC {fidelity['detection_auc']:.3f} (0.5: indistinguishable); "
              f"association difference {fidelity['association_difference']:.3f}; furthest column "
              f"{worst[0]} ({worst[1]['statistic']} {worst[1]['value']:.3f})")  # fmt: skip
    if data["utility"] is not None:
        u = data["utility"]
        for name in ("trtr", "tstr"):
            scores = u[name]
            if scores is not None:
                auc = "-" if scores["roc_auc"] is None else f"{scores['roc_auc']:.3f}"
                out.print(f"utility {name.upper()} ({u['target']}): accuracy "
                          f"{scores['accuracy']:.3f}, F1 {scores['f1']:.3f}, "
                          f"ROC-AUC {auc}")  # fmt: skip
    else:
        out.print(f"utility: not measured ({data['utility_reason']})")
    p = data["privacy"]
    if p["dcr"] is None:
        out.print(f"privacy: not measured ({p['dcr_reason']})")
        return
    out.print(f"privacy: {p['dcr']['share_closer_to_training']:.1%} of release rows closer to "
              f"training than to holdout rows ({p['dcr']['ideal']:.0%} ideal: the training rows' "
              f"share); exact copies {p['exact_copies']:.1%}; "
              f"membership advantage {p['membership_advantage']:.3f}")  # fmt: skip
    from veil.evaluate import risk_label

    for attack in ("singling_out", "linkability", "inference"):
        measured = p[attack]
        if measured["risk"] is None:
            out.print(f"  {attack.replace('_', ' ')}: not measured ({measured['reason']})")
            continue
        low, high = measured["ci"]
        light = risk_label((low, high))
        out.print(f"  {attack.replace('_', ' ')} risk {measured['risk']:.3f} "
                  f"[{low:.3f}, {high:.3f}] ({light})")  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add ``veil check``, ``veil verify`` and ``veil evaluate`` to ``app``."""
    app.command("evaluate")(evaluate_command)
    app.command("check")(check_command)
    app.command("verify")(verify_command)

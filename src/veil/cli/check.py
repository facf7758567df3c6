"""``veil check`` and ``veil verify``: measure a table, re-check a release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from veil.cli._common import (
    Backend,
    BatchRows,
    Encoding,
    Force,
    Format,
    KGoal,
    LGoal,
    ModelGoals,
    Population,
    SamplingFraction,
    Scheduler,
    Sensitive,
    Sep,
    Sheet,
    SqlQuery,
    SqlTable,
    Streaming,
    TDistance,
    TGoal,
    Weights,
    Workers,
    _backend,
    _check_format,
    _model_specs,
    _progress,
    _read_options,
    _refuse_given,
    _report_format,
    _source,
    _streams,
    out,
)
from veil.exceptions import CheckFailedError, InputError, ParameterError


def check_command(
    data: Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")],
    quasi_identifiers: Annotated[
        str, typer.Option("--quasi-identifiers", "-q", help="Comma-separated columns.")
    ],
    sensitive: Sensitive = None,
    k: KGoal = None,
    l_value: LGoal = None,
    t_value: TGoal = None,
    t_distance: TDistance = None,
    models: ModelGoals = None,
    risk_threshold: Annotated[
        float, typer.Option("--risk-threshold", help="Risk above which a record is at risk.")
    ] = 0.2,
    population: Population = None,
    sampling_fraction: SamplingFraction = None,
    weights: Weights = None,
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
    sep: Sep = None,
    encoding: Encoding = None,
    sheet: Sheet = None,
    table: SqlTable = None,
    query: SqlQuery = None,
    streaming: Streaming = None,
    batch_rows: BatchRows = 500_000,
    backend: Backend = "pandas",
    scheduler: Scheduler = None,
    workers: Workers = None,
) -> None:
    """Measure k, l, t and re-identification risk of DATA; exit 1 if a threshold fails."""
    from veil.io import TableStream, read
    from veil.privacy import check, check_stream

    _check_format(fmt)
    specs = _model_specs(models)
    options = _read_options(None, sep=sep, encoding=encoding, sheet=sheet, table=table, query=query)
    columns = [c.strip() for c in quasi_identifiers.split(",") if c.strip()]
    if not columns:
        raise ParameterError("--quasi-identifiers must name a column at least, e.g. -q Age,County")
    goals: dict[str, Any] = {
        "k": k, "l": l_value, "t": t_value, "t_distance": t_distance,
        "risk_threshold": risk_threshold, "models": specs, "population": population,
        "sampling_fraction": sampling_fraction, "hierarchies": _trees(hierarchies),
    }  # fmt: skip
    reading: dict[str, Any] = {"sheet": sheet, "table": table, "query": query,
                               "weights": weights, "person-id": person_id}  # fmt: skip
    if _backend(backend) == "dask":
        from veil.io import dask_frame
        from veil.privacy._dask import check_dask, cluster

        _refuse_given(reading, "with --backend dask")
        with _progress() as say, cluster(scheduler, workers):
            frame = dask_frame(data, columns=[*columns, *([sensitive] if sensitive else [])])
            result = check_dask(frame, columns, sensitive=sensitive, progress=say, **goals)
    elif _streams(data, streaming, **reading):
        with _progress() as say:
            source = TableStream(data, sep=options.get("sep"), encoding=options.get("encoding"))
            result = check_stream(source, columns, sensitive=sensitive, batch_rows=batch_rows,
                                  progress=say, **goals)  # fmt: skip
    else:
        frame = read(data, **options)
        result = check(frame, columns, sensitive=sensitive, weights=weights, person=person_id,
                       **goals)  # fmt: skip
    if fmt == "json":
        out.print_json(json.dumps(result.to_dict()))
    else:
        r = result.risk
        out.print(f"{result.rows:,} rows, {result.classes:,} classes on {', '.join(columns)}")
        out.print(f"  k = {result.k}")
        if result.l_distinct is not None:
            out.print(f"  l = {result.l_distinct} (distinct), {result.l_entropy} (entropy)")
            out.print(f"  t = {result.t:.4f} ({result.t_distance} distance)")
        out.print(
            f"  prosecutor risk: average {r.prosecutor_average:.4f}, "
            f"highest {r.prosecutor_max:.4f}; "
            f"{r.records_at_risk:.2%} of records above {r.threshold}; "
            f"{r.sample_uniques:.2%} unique"
        )
        if result.persons is not None:
            pr = result.persons
            out.print(f"  per person ({pr.people:,} people in {person_id}): k = {pr.k}; "
                      f"prosecutor risk average {pr.prosecutor_average:.4f}, highest "
                      f"{pr.prosecutor_max:.4f}; household risk (any of their rows) average "
                      f"{pr.household_average:.4f}, highest {pr.household_max:.4f}")  # fmt: skip
        for line in result.population.lines() if result.population is not None else []:
            out.print(f"  {line}")
    if result.failed:
        raise CheckFailedError(f"{data}: does not meet {', '.join(result.failed)}")


def _trees(folder: Path | None) -> dict[str, Any] | None:
    """The hierarchies in ``folder`` by column (``<stem>_hierarchy_<column>.csv`` or
    ``<column>.csv``)."""
    if folder is None:
        return None
    from veil.hierarchy import load_hierarchy_dir

    return dict(load_hierarchy_dir(folder))


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
    streaming: Streaming = None,
    batch_rows: BatchRows = 500_000,
) -> None:
    """Re-check a release against its certificate, independently of the search."""
    from veil.io import TableStream, read
    from veil.privacy import verify, verify_files

    _check_format(fmt)
    try:
        claims = json.loads(certificate.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise InputError(f"{certificate}: no such certificate file") from e
    except json.JSONDecodeError as e:
        raise InputError(f"{certificate}: not a JSON certificate ({e})") from e
    if claims.get("release_parts") or _streams(release, streaming):  # parts: file by file
        source = TableStream(release, sep=sep)
        result = verify_files(source, claims, batch_rows=batch_rows,
                              hierarchies=_trees(hierarchies))  # fmt: skip
    else:
        frame = read(release, **_read_options(None, sep=sep))
        result = verify(frame, claims, hierarchies=_trees(hierarchies))
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

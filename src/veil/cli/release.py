"""``veil anonymize`` and ``veil report``: a release, its certificate and its report."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from veil.cli._common import (
    Backend,
    BatchRows,
    CoerceDates,
    DateFormat,
    Dates,
    Dayfirst,
    Encoding,
    EscapeFormulas,
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
    Target,
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
    _stem,
    _streams,
    out,
)
from veil.exceptions import InputError, ParameterError


def anonymize(
    data: Annotated[str, typer.Argument(help="CSV, Parquet or Excel file, or a SQLAlchemy URL.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Release file (.csv/.parquet).")],
    policy: Annotated[Path | None, typer.Option("--policy", "-p", help="Policy YAML file.")] = None,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Also write a report here (.html, or .json for data)."),
    ] = None,
    certificate: Annotated[
        Path | None, typer.Option("--certificate", help="Also write the certificate (JSON).")
    ] = None,
    target: Target = None,
    population: Population = None,
    sampling_fraction: SamplingFraction = None,
    weights: Weights = None,
    hierarchies: Annotated[
        Path | None,
        typer.Option("--hierarchies", help="Folder of `<data stem>_hierarchy_<column>.csv` files."),
    ] = None,
    k: KGoal = None,
    l_value: LGoal = None,
    l_variant: Annotated[
        str | None, typer.Option("--l-variant", help="distinct, entropy or recursive.")
    ] = None,
    c_value: Annotated[float | None, typer.Option("--c", help="c of recursive (c,l).")] = None,
    t_value: TGoal = None,
    t_distance: TDistance = None,
    models: ModelGoals = None,
    sensitive: Sensitive = None,
    max_suppression: Annotated[
        float | None, typer.Option("--max-suppression", help="Share of records, e.g. 0.04.")
    ] = None,
    metric: Annotated[
        str | None, typer.Option("--metric", help="loss, entropy, precision, discernibility, aecs.")
    ] = None,
    method: Annotated[
        str | None, typer.Option("--method", help="optimal, heuristic or mondrian.")
    ] = None,
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", help="Seconds for the heuristic.")
    ] = None,
    fmt: Format = "text",
    force: Force = False,
    escape_formulas: EscapeFormulas = True,
    sep: Sep = None,
    encoding: Encoding = None,
    dates: Dates = None,
    dayfirst: Dayfirst = None,
    date_format: DateFormat = None,
    coerce_dates: CoerceDates = False,
    sheet: Sheet = None,
    table: SqlTable = None,
    query: SqlQuery = None,
    streaming: Streaming = None,
    batch_rows: BatchRows = 500_000,
    backend: Backend = "pandas",
    scheduler: Scheduler = None,
    workers: Workers = None,
) -> None:
    """Anonymize DATA with a policy and/or privacy goals; write the release.

    With --hierarchies, the columns that have a hierarchy file are the quasi-identifiers and
    the optimal generalization meeting -k/--l/--t is searched for, as in ARX.
    """
    from veil.criteria import SHORTHAND, override
    from veil.hierarchy import load_hierarchies
    from veil.io import (
        SPREADSHEETS,
        TEXT_FORMATS,
        OutputSet,
        check_writable,
        output_format,
        read,
        write_table,
    )
    from veil.policy import Policy
    from veil.privacy import anonymize as run
    from veil.report import build_report

    _check_format(fmt)
    pol = Policy.load(policy) if policy is not None else Policy()
    flags = {
        "k": k, "l": l_value, "l_variant": l_variant, "c": c_value, "t": t_value,
        "t_distance": t_distance, "max_suppression": max_suppression, "metric": metric,
        "method": method, "time_limit": time_limit,
        "sensitive": [sensitive] if sensitive else None,
    }  # fmt: skip
    asked = {key: value for key, value in flags.items() if value is not None}
    specs = _model_specs(models)
    if asked or specs or hierarchies is not None:
        base = pol.privacy.model_dump(exclude_unset=True) if pol.privacy else {}
        goals = {key: asked.pop(key) for key in SHORTHAND if key in asked}
        settings = {**override(base, goals), **asked}
        settings["models"] = [*settings.get("models", []), *specs]
        pol = pol.model_copy(update={"privacy": Policy.from_dict({"privacy": settings}).privacy})
    if pol.privacy is None and policy is None:
        raise ParameterError("give --policy, or privacy goals such as -k 5 with --hierarchies DIR")
    # Refuse bad outputs before any expensive work.
    release_format = output_format(output) if backend != "dask" else "parquet"  # dask: a folder
    report_format = _report_format(report) if report is not None else None
    inputs = [data] + ([str(policy)] if policy is not None else [])
    if target is not None and report is None:
        raise ParameterError("--target is for the report: give --report too")
    destinations = [p for p in (output, report, certificate) if p is not None]
    if len(set(map(os.path.abspath, destinations))) != len(destinations):
        raise ParameterError("--output, --report and --certificate must be different files")
    outputs = OutputSet(force=force, inputs=inputs)
    for destination in destinations:
        if backend != "dask" or destination != output:  # a folder of parts: anonymize_dask checks
            outputs.check(destination)
    options = _read_options(
        pol.read,
        sep=sep,
        encoding=encoding,
        dates=dates,
        dayfirst=dayfirst,
        date_format=date_format,
        coerce_dates=coerce_dates,
        sheet=sheet,
        table=table,
        query=query,
    )
    reading = {key: options.get(key) for key in ("dates", "sheet", "table", "query")}
    if _backend(backend) == "dask":
        from veil.io import dask_frame
        from veil.privacy._dask import anonymize_dask, cluster

        _refuse_given({**reading, "report": report, "sep": sep}, "with --backend dask")
        found = load_hierarchies(hierarchies, _stem(data)) if hierarchies else None
        # the certificate appears with the folder of parts, or neither does
        with _progress() as say, cluster(scheduler, workers), outputs:
            released = anonymize_dask(dask_frame(data), pol, output=output, force=force,
                                      hierarchies=found, progress=say)  # fmt: skip
            if certificate is not None:
                outputs.stage(certificate).write_text(
                    released.certificate.to_json() + "\n", encoding="utf-8"
                )
        _said(released.certificate, fmt, output, [certificate])
        return
    if _streams(data, streaming, fmt=release_format, report=report, **reading):
        from veil.io._batches import TableStream
        from veil.privacy._stream import anonymize_stream

        found = load_hierarchies(hierarchies, _stem(data)) if hierarchies else None
        with _progress() as say:
            source = TableStream(data, sep=options.get("sep"), encoding=options.get("encoding"))
            with outputs:
                streamed = anonymize_stream(
                    source,
                    pol,
                    outputs.stage(output),
                    release_format,
                    hierarchies=found,
                    batch_rows=batch_rows,
                    escape_formulas=escape_formulas,
                    progress=say,
                )
                if certificate is not None:
                    outputs.stage(certificate).write_text(
                        streamed.certificate.to_json() + "\n", encoding="utf-8"
                    )
        _said(streamed.certificate, fmt, output, [certificate])
        return
    with _progress() as say:
        say(f"reading {_source(data)}")
        frame = read(data, **options)
        check_writable(release_format, output, rows=len(frame))  # a release has no more rows
        found = load_hierarchies(hierarchies, _stem(data)) if hierarchies else None
        release = run(frame, pol, hierarchies=found, progress=say)
        if escape_formulas and release_format in SPREADSHEETS:
            release = release.with_formulas_escaped()  # the certificate counts and pins them
        built = None
        if report is not None:
            name = f"veil release of {Path(data).name}"
            built = build_report(
                release,
                original=frame,
                aligned=True,
                target=target,
                title=name,
                progress=say,
                sampling=_sampling(population, sampling_fraction, weights),
            )
        # the run's files are one set: all of them appear, or none (disk full, SIGTERM)
        say(f"writing {output}")
        with outputs:
            # columns left as they were go out in the form they came in (62 stays 62)
            # (escaped above, so that the certificate counts them: a second pass is a no-op)
            write_table(release.data, outputs.stage(output), release_format,
                        formats=frame.attrs.get(TEXT_FORMATS, {}),
                        escape_formulas=escape_formulas)  # fmt: skip
            if certificate is not None:
                outputs.stage(certificate).write_text(
                    release.certificate.to_json() + "\n", encoding="utf-8"
                )
            if report is not None and built is not None and report_format is not None:
                outputs.stage(report).write_text(built.render(report_format), encoding="utf-8")
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


def report_command(
    release: Annotated[
        str, typer.Argument(help="The released table (as veil anonymize wrote it).")
    ],
    certificate: Annotated[
        Path, typer.Option("--certificate", "-c", help="certificate.json of the release.")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="report.html or report.json.")],
    original: Annotated[
        str | None,
        typer.Option(
            "--original",
            help="The original table: adds scan, risk before/after, utility and column profiles.",
        ),
    ] = None,
    target: Target = None,
    population: Population = None,
    sampling_fraction: SamplingFraction = None,
    weights: Weights = None,
    ledger: Annotated[
        Path | None, typer.Option("--budget", help="A privacy-budget ledger: adds the DP section.")
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="The report's title.")] = None,
    force: Force = False,
    sep: Sep = None,
    encoding: Encoding = None,
    dates: Dates = None,
    dayfirst: Dayfirst = None,
    date_format: DateFormat = None,
    coerce_dates: CoerceDates = False,
) -> None:
    """Write the report of a release: what was done, privacy and risk, utility, DP budget."""
    from veil.io import OutputSet, read
    from veil.privacy import Release
    from veil.privacy.certificate import Certificate
    from veil.report import build_report

    inputs = [release, str(certificate)] + ([original] if original else [])
    outputs = OutputSet(force=force, inputs=inputs)
    outputs.check(output)
    chosen = _report_format(output)
    if target is not None and original is None:
        raise ParameterError("--target compares a model on both tables: give --original too")
    cert = Certificate.load(certificate)
    options = _read_options(None, sep=sep, encoding=encoding, dates=dates, dayfirst=dayfirst,
                            date_format=date_format, coerce_dates=coerce_dates)  # fmt: skip
    accountant = None
    if ledger is not None:
        from veil.dp import Accountant

        accountant = Accountant(ledger)
    with _progress() as say:
        say(f"reading {release}")
        data = read(release, **options)
        if list(data.columns) != list(cert.columns_out):
            raise InputError(
                f"{release} has columns {list(data.columns)} but the certificate's release has "
                f"{list(cert.columns_out)}; give the certificate written with this release"
            )
        frame = None
        if original is not None:
            say(f"reading {original}")
            frame = read(original, **options)
            missing = [c for c in cert.columns_in if c not in frame.columns]
            if missing:
                raise InputError(
                    f"{original} lacks the columns {missing} that the certificate's input had; "
                    "give the table the release was made from"
                )
        built = build_report(
            Release(data, cert),
            original=frame,
            target=target,
            accountant=accountant,
            progress=say,
            sampling=_sampling(population, sampling_fraction, weights),
            title=title or f"veil release report: {Path(release).name}",
        )
        with outputs:
            outputs.stage(output).write_text(built.render(chosen), encoding="utf-8")
    out.print(f"wrote {output}")
    for line in built.headline:
        out.print(f"  {line}")


def _sampling(population: float | None, fraction: float | None,
              weights: str | None) -> dict[str, Any] | None:  # fmt: skip
    """What the original is a sample of, for the report's scan (None: the whole population)."""
    given = {"population": population, "sampling_fraction": fraction, "weights": weights}
    return {k: v for k, v in given.items() if v is not None} or None


def register(app: typer.Typer) -> None:
    """Add ``veil anonymize`` and ``veil report`` to ``app``."""
    app.command("anonymize")(anonymize)
    app.command("report")(report_command)

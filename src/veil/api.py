"""veil's entry points over any source and engine: ``anonymize``, ``check`` and ``verify``
(``veil.scan`` is the scan's own) take a ``veil.io.Source`` (a DataFrame, a Dask DataFrame,
files, a SQL URL) and an ``engine`` (``"auto"``, ``"memory"``, ``"stream"``, ``"dask"``:
``veil.io.Source.engine`` decides and refuses), run that engine of ``veil.privacy``, and write
the release, its certificate and its report as one set of files (all appear, or none). The
command line calls these and prints."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

import pandas as pd

from veil.checking import Hierarchies, check, hierarchy_trees
from veil.exceptions import InputError, ParameterError
from veil.hierarchy import Hierarchy, load_hierarchies
from veil.io import (
    DEFAULT_BATCH_ROWS,
    SPREADSHEETS,
    TEXT_FORMATS,
    OutputSet,
    Source,
    check_writable,
    output_format,
    write_table,
)
from veil.policy import Policy
from veil.progress import Progress, as_progress

if TYPE_CHECKING:  # the engines load with the call that runs one
    from veil.evaluate import Evaluation
    from veil.federated import FederatedResult
    from veil.learn.latent import LatentRelease
    from veil.privacy._dask import DaskRelease
    from veil.privacy._stream import StreamedRelease
    from veil.privacy._verify import Verification
    from veil.privacy.certificate import Certificate, Release

__all__ = [
    "Synthesized",
    "anonymize",
    "check",
    "evaluate",
    "mask_latent",
    "simulate",
    "synthesize",
    "verify",
]

PolicyLike = Policy | Mapping[str, Any] | str | os.PathLike[str] | None
Told = Callable[[str], None] | Progress | None
PathLike = str | os.PathLike[str]


@overload
def anonymize(
    source: pd.DataFrame,
    policy: PolicyLike = None,
    *,
    engine: Literal["auto", "memory"] = "auto",
    hierarchies: Hierarchies = None,
    output: PathLike | None = None,
    certificate: PathLike | None = None,
    report: PathLike | None = None,
    target: str | None = None,
    sampling: Mapping[str, Any] | None = None,
    title: str | None = None,
    force: bool = False,
    escape_formulas: bool = True,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    progress: Told = None,
    **reading: Any,
) -> Release: ...


@overload
def anonymize(
    source: Any,
    policy: PolicyLike = None,
    *,
    engine: str = "auto",
    hierarchies: Hierarchies = None,
    output: PathLike | None = None,
    certificate: PathLike | None = None,
    report: PathLike | None = None,
    target: str | None = None,
    sampling: Mapping[str, Any] | None = None,
    title: str | None = None,
    force: bool = False,
    escape_formulas: bool = True,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    progress: Told = None,
    **reading: Any,
) -> Release | StreamedRelease | DaskRelease: ...


def anonymize(
    source: Any,
    policy: PolicyLike = None,
    *,
    engine: str = "auto",
    hierarchies: Hierarchies = None,
    output: PathLike | None = None,
    certificate: PathLike | None = None,
    report: PathLike | None = None,
    target: str | None = None,
    sampling: Mapping[str, Any] | None = None,
    title: str | None = None,
    force: bool = False,
    escape_formulas: bool = True,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    progress: Told = None,
    **reading: Any,
) -> Release | StreamedRelease | DaskRelease:
    """Apply ``policy``'s steps to ``source`` (never modified) and certify the release.

    Parameters
    ----------
    source : DataFrame, Dask DataFrame, str, path or Source
        The table (``veil.io.Source``): in memory, on a cluster, files, or a SQL URL with
        ``table=`` or ``query=``; ``reading`` holds the options of its reading (``sep``,
        ``encoding``, ``dates``...).
    policy : Policy, mapping, or path of a YAML file, optional
        What to do (default: the scan decides, identifiers are treated).
    engine : {"auto", "memory", "stream", "dask"}
        Where the passes run (``veil.io.Source.engine``): ``"auto"`` streams files over a tenth
        of this machine's memory (Parquet weighed by its cells) and runs a Dask DataFrame on Dask.
    hierarchies : mapping or folder, optional
        Generalization hierarchies by column, or a folder of ``<stem>_hierarchy_<column>.csv``
        files (ARX's form).
    output, certificate, report : path, optional
        Write the release (.csv/.parquet/.xlsx/.json; a folder of Parquet parts on Dask), its
        certificate (JSON) and its report (.html or .json) as one set: all appear, or none.
        ``force`` replaces existing files (never an input).
    target, sampling, title
        The report's model target, what the table is a sample of (``population``,
        ``sampling_fraction`` or ``weights``) and title.
    force : bool
        Replace existing output files (never an input).
    escape_formulas : bool
        In CSV and Excel releases, prefix cells a spreadsheet would run with an apostrophe.
    batch_rows : int
        Rows per batch when streaming.
    progress : callable or Progress, optional
        Told of each step.
    **reading
        The source's reading options (``sep``, ``encoding``, ``dates``, ``dayfirst``,
        ``date_format``, ``coerce_dates``, ``sheet``, ``table``, ``query``), over the
        policy's ``read:``.

    Returns
    -------
    Release, StreamedRelease or DaskRelease
        The release and its certificate: in memory; in a file (``output``, else a private
        temporary file ``to_file`` moves); or as Parquet parts.

    Raises
    ------
    PolicyError
        The policy does not fit the data (the message says where in the policy).
    CheckFailedError
        The release misses the policy's privacy goals.
    """
    from veil.privacy._anonymize import anonymize as _release_in_memory

    pol = _policy(policy)
    # the policy's read: section says how veil reads a file or a database, not a table in hand
    read_here = isinstance(source, str | os.PathLike)
    src = Source.of(source, **pol.read.model_dump()) if read_here else Source.of(source)
    src = Source.of(src, **reading)  # given here, over the policy's ``read:``
    chosen = src.engine(engine, memory_only={"--report": report})
    plan = _Outputs(src, policy, output, certificate, report, target, force, chosen)
    found = _hierarchies(hierarchies, src)
    if chosen == "dask":
        return _on_dask(src, pol, plan, found, progress)
    if chosen == "stream":
        return _in_batches(src, pol, plan, found, batch_rows, escape_formulas, progress)
    said = as_progress(progress)
    said(f"reading {src.name}")
    frame = src.frame()
    if output is not None:
        check_writable(plan.format, output, rows=len(frame))  # a release has no more rows
    release = _release_in_memory(frame, pol, hierarchies=found, progress=progress)
    if escape_formulas and plan.format in SPREADSHEETS:
        release = release.with_formulas_escaped()  # the certificate counts and pins them
    built = None
    if report is not None:
        from veil.report import build_report

        built = build_report(
            release,
            original=frame,
            aligned=True,
            target=target,
            title=title or f"veil release of {Path(src.name).name}",
            progress=progress,
            sampling=dict(sampling or {}) or None,
        )
    if output is not None:
        said(f"writing {output}")
    with plan.outputs:  # the run's files are one set: all appear, or none (disk full, SIGTERM)
        if output is not None:
            # columns left as they were go out in the form they came in (62 stays 62)
            write_table(
                release.data,
                plan.outputs.stage(output),
                plan.format,
                formats=frame.attrs.get(TEXT_FORMATS, {}),
                escape_formulas=escape_formulas,
            )
        plan.write_certificate(release.certificate)
        if report is not None and built is not None:
            from veil.report.model import report_format

            plan.outputs.stage(report).write_text(
                built.render(report_format(report)), encoding="utf-8"
            )
    return release


class _Outputs:
    """The files of one release, refused before any work when they cannot be written."""

    def __init__(
        self,
        src: Source,
        policy: PolicyLike,
        output: PathLike | None,
        certificate: PathLike | None,
        report: PathLike | None,
        target: str | None,
        force: bool,
        engine: str,
    ) -> None:
        self.output, self.certificate, self.force = output, certificate, force
        if target is not None and report is None:
            raise ParameterError("--target is for the report: give --report too")
        wanted = [Path(p) for p in (output, report, certificate) if p is not None]
        if len({os.path.abspath(p) for p in wanted}) != len(wanted):
            raise ParameterError("--output, --report and --certificate must be different files")
        # a release kept in memory has no format; one streamed without output is Parquet
        self.format: str = "parquet"
        if output is not None:
            self.format = "parquet" if engine == "dask" else output_format(output)
        if engine == "stream" and self.format not in {"csv", "parquet"}:
            raise ParameterError(
                f"a release read in batches is written as .csv or .parquet, "
                f"not .{self.format}; or use --in-memory"
            )
        if report is not None:  # the report's modules load only when one is asked for
            from veil.report.model import report_format

            report_format(report)
        inputs = [str(src.data)] if src.kind in {"files", "sql"} else []
        if isinstance(policy, str | os.PathLike):
            inputs.append(str(policy))
        elif isinstance(policy, Policy) and policy.file is not None:
            inputs.append(str(policy.file))
        self.outputs = OutputSet(force=force, inputs=inputs)
        for path in wanted:
            if engine != "dask" or output is None or path != Path(output):  # parts: placed
                self.outputs.check(path)

    def write_certificate(self, certificate: Certificate) -> None:
        if self.certificate is not None:
            self.outputs.stage(self.certificate).write_text(
                certificate.to_json() + "\n", encoding="utf-8"
            )


def _on_dask(
    src: Source, pol: Policy, plan: _Outputs, found: Mapping[str, Hierarchy] | None, progress: Told
) -> DaskRelease:
    from veil.privacy._dask import anonymize_dask

    # the certificate appears with the folder of parts, or neither does
    with plan.outputs:
        released = anonymize_dask(
            src.dask(),
            pol,
            output=plan.output,
            force=plan.force,
            hierarchies=found,
            progress=progress,
        )
        plan.write_certificate(released.certificate)
    return released


def _in_batches(
    src: Source,
    pol: Policy,
    plan: _Outputs,
    found: Mapping[str, Hierarchy] | None,
    batch_rows: int,
    escape_formulas: bool,
    progress: Told,
) -> StreamedRelease:
    from veil.privacy._stream import anonymize_stream

    folder = None
    if plan.output is None:  # a private file until ``to_file`` names it
        folder = Path(tempfile.mkdtemp(prefix="veil-release-"))
    try:
        with plan.outputs:
            if plan.output is None:
                staged = (folder or Path()) / "release.parquet"
            else:
                staged = plan.outputs.stage(plan.output)
            streamed = anonymize_stream(
                src.stream(),
                pol,
                staged,
                plan.format,
                hierarchies=found,
                batch_rows=batch_rows,
                escape_formulas=escape_formulas,
                progress=progress,
            )
            plan.write_certificate(streamed.certificate)
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    streamed.path = staged if plan.output is None else Path(plan.output)
    return streamed


def _policy(policy: PolicyLike) -> Policy:
    if policy is None or isinstance(policy, Policy):
        return policy or Policy()
    return Policy.from_dict(policy) if isinstance(policy, Mapping) else Policy.load(policy)


def _hierarchies(given: Hierarchies, src: Source) -> dict[str, Hierarchy] | None:
    if given is None:
        return None
    if isinstance(given, str | os.PathLike):
        return load_hierarchies(given, src.stem)
    return dict(given)


def verify(
    release: Any,
    certificate: Certificate | Mapping[str, Any] | PathLike,
    *,
    engine: str = "auto",
    hierarchies: Hierarchies = None,
    content: bool = True,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    sep: str | None = None,
) -> Verification:
    """Re-check ``release`` against ``certificate``, independently of the search.

    Parameters
    ----------
    release : DataFrame, str, path or Source
        The released table, a file, or the folder of a release written in parts (verified
        file by file).
    certificate : Certificate, mapping, or path of its JSON file
        What the release claims.
    engine : {"auto", "memory", "stream"}
        Whole, or a batch at a time (a release in parts always is).
    hierarchies : mapping or folder, optional
        The sensitive hierarchy, for a certificate made before veil kept it.
    content : bool
        Compare every cell with the certificate's hash (``False``: a caller that has just
        computed it from these rows).
    batch_rows : int
        Rows per batch when read a batch at a time.
    sep : str, optional
        CSV delimiter (detected when omitted).

    Returns
    -------
    Verification
        Each claim, whether it holds, and how it was measured; ``ok`` when all hold.
    """
    from veil.privacy._verify import verify as _verify_frame
    from veil.privacy._verify import verify_files

    claims = _claims(certificate)
    src = Source.of(release, sep=sep)
    trees = hierarchy_trees(hierarchies)
    if engine == "dask":
        raise ParameterError("verify reads the release's files: use engine 'memory' or 'stream'")
    if claims.get("release_parts") or src.engine(engine) == "stream":  # parts: file by file
        return verify_files(src.stream(), claims, batch_rows=batch_rows, hierarchies=trees)
    return _verify_frame(src.frame(), claims, content=content, hierarchies=trees)


def _claims(certificate: Certificate | Mapping[str, Any] | PathLike) -> dict[str, Any]:
    from veil.privacy.certificate import Certificate

    if isinstance(certificate, Certificate):
        return certificate.to_dict()
    if isinstance(certificate, Mapping):
        return dict(certificate)
    path = Path(certificate)
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise InputError(f"{path}: no such certificate file") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not a JSON certificate ({e})") from e
    if not isinstance(loaded, dict):
        raise InputError(f"{path}: not a JSON certificate (a JSON object is expected)")
    return loaded


def evaluate(
    original: Any,
    release: Any,
    *,
    holdout: Any = None,
    holdout_fraction: float | None = None,
    target: str | None = None,
    random_state: int = 0,
    report: PathLike | None = None,
    title: str | None = None,
    force: bool = False,
    progress: Told = None,
    **reading: Any,
) -> Evaluation:
    """Fidelity, utility on real holdout rows, and attacks (DCR, membership, singling out,
    linkability, inference) on any release (``veil.evaluate.evaluate_release``), with the
    tables read from any source and the report written when asked.

    Parameters
    ----------
    original, release : DataFrame, str, path or Source
        The table the release was made from, and the release (any kind).
    holdout : DataFrame, str, path or Source, optional
        Real rows of the same kind the release was not made from.
    holdout_fraction : float, optional
        Set aside this share of ``original`` as holdout (the release must have been made
        without those rows).
    target : str, optional
        A category a model predicts (TSTR against TRTR).
    random_state : int
        Seed of every random choice.
    report : path, optional
        Also write a report (.html or .json).
    title : str, optional
        The report's title.
    force : bool
        Replace an existing report (never an input).
    progress : callable or Progress, optional
        Told of each step.
    **reading
        The tables' reading options (``sep``...).

    Returns
    -------
    Evaluation
        What was measured, with a reason where a measure could not be.
    """
    from veil.evaluate import evaluate_release
    from veil.report.model import report_format
    from veil.report.sections.evaluation import build_evaluation_report

    tables = [Source.of(t, **reading) for t in (original, release)]
    rows = None if holdout is None else Source.of(holdout, **reading)
    named = [t.data for t in [*tables, *([rows] if rows else [])] if t.kind in {"files", "sql"}]
    outputs = OutputSet(force=force, inputs=[str(p) for p in named])
    if report is not None:
        outputs.check(report)
        chosen = report_format(report)
    said = as_progress(progress)
    said(f"reading {tables[0].name} and {tables[1].name}")
    real, released = (t.frame() for t in tables)
    said("measuring fidelity, utility and privacy")
    result = evaluate_release(
        real,
        released,
        holdout=None if rows is None else rows.frame(),
        holdout_fraction=holdout_fraction,
        target=target,
        random_state=random_state,
    )
    if report is not None:
        name = title or f"veil evaluation: {Path(tables[1].name).name}"
        built = build_evaluation_report(result, title=name)
        with outputs:
            outputs.stage(report).write_text(built.render(chosen), encoding="utf-8")
    return result


@dataclass
class Synthesized:
    """What ``synthesize`` wrote: the synthetic rows, the synthesizer, and what to say."""

    data: pd.DataFrame
    method: str
    epsilon: float | None = None  # spent, for a differentially private method
    lines: list[str] = field(default_factory=list)  # how it was modelled, and notes

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON values (the rows are in the file)."""
        return {
            "rows": len(self.data),
            "columns": [str(c) for c in self.data.columns],
            "method": self.method,
            "epsilon": self.epsilon,
            "notes": self.lines,
        }

    def to_json(self) -> str:
        """``to_dict`` as JSON text."""
        return json.dumps(self.to_dict())

    def _repr_html_(self) -> str:
        from veil._html import card

        title = f"veil synthetic data: {len(self.data):,} rows ({self.method})"
        return card(title, lines=self.lines)


def synthesize(
    source: Any,
    output: PathLike | None = None,
    *,
    method: str = "copula",
    epsilon: float | None = None,
    accountant: Any = None,
    columns: Sequence[str] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    bins: int = 10,
    rows: int | None = None,
    random_state: int | None = None,
    options: Mapping[str, Any] | None = None,
    target: str | None = None,
    force: bool = False,
    escape_formulas: bool = True,
    progress: Told = None,
    **reading: Any,
) -> Synthesized:
    """Synthetic rows learnt from ``source`` (``veil synth``), written to ``output`` when given.

    Parameters
    ----------
    source : DataFrame, str, path or Source
        The real table (``reading``: its reading options).
    output : path, optional
        Where to write the rows (.csv/.parquet/.xlsx/.json; ``force`` replaces an existing
        file, never an input).
    method : str
        A synthesizer of ``veil.synth.METHODS``: ``copula``, ``marginals``, ``tvae``, or
        ``mst`` and ``aim`` (differentially private: need ``epsilon`` and ``accountant``).
    epsilon : float, optional
        For ``mst`` and ``aim``: the budget the fit spends.
    accountant : Accountant, optional
        For ``mst`` and ``aim``: the ledger charged.
    columns : list of str, optional
        Only these columns.
    bounds, bins
        For ``mst`` and ``aim``: public numeric ranges and bins per numeric column.
    rows : int, optional
        Rows to make (default: as many as the source; for ``mst`` and ``aim``, the DP
        estimate).
    random_state : int, optional
        Seed of the fitting and the sampling (``mst`` and ``aim``: only the sampling; their
        noise is never seeded).
    options : mapping, optional
        The synthesizer's own options (``condition_on``, ``clusters``...). The copula's
        ``clusters`` is ``"auto"`` unless given (``None``: no split).
    target : str, optional
        The column a model will predict from the rows: the copula is conditioned on it (one
        copula per value, before ``condition_on``'s columns); AIM weighs its pairs more.
    force : bool
        Replace an existing output (never an input).
    escape_formulas : bool
        In CSV and Excel files, prefix cells a spreadsheet would run with an apostrophe.
    progress : callable or Progress, optional
        Told of each step.
    **reading
        The source's reading options (``sep``...).

    Returns
    -------
    Synthesized
        The rows, the method and what to say about them.
    """
    from veil.io import check_output, check_writable, output_format, write
    from veil.schema import require_columns
    from veil.synth import METHODS, make

    src = Source.of(source, **reading)
    private = method in METHODS and METHODS[method].differentially_private
    if private and (epsilon is None or accountant is None):
        raise ParameterError(f"--method {method} is differentially private: pass --epsilon E")
    if not private and epsilon is not None:
        raise ParameterError(
            f"--epsilon applies to --method mst or aim only; {method} is not differentially private"
        )
    inputs = [str(src.data)] if src.kind in {"files", "sql"} else []
    if output is not None:
        check_output(output, inputs=inputs, force=force)
        if rows is not None:
            check_writable(output_format(output), output, rows=rows)
    said = as_progress(progress)
    frame = src.frame()
    given = _synth_options(method, options, target, frame)
    if private:
        given.update(
            epsilon=epsilon,
            accountant=accountant,
            columns=columns,
            bounds=dict(bounds or {}),
            bins=bins,
        )
    elif columns is not None:
        require_columns(frame, list(columns), where="--columns")
        frame = frame[list(columns)]
    model = make(method, **given)
    model.progress = said
    # DP synthesis' sampling is seeded 0 unless told (its noise never is)
    seed = 0 if private and random_state is None else random_state
    model.fit(frame, random_state=seed)
    said(f"sampling {rows or len(frame):,} rows" if not private else "synthesizing")
    synthetic = model.sample(rows, random_state=seed)
    if output is not None:
        write(synthetic, output, force=force, inputs=inputs, escape_formulas=escape_formulas)
    return Synthesized(synthetic, method, epsilon if private else None, _said(model, synthetic))


def _synth_options(
    method: str, options: Mapping[str, Any] | None, target: str | None, frame: pd.DataFrame
) -> dict[str, Any]:
    """The synthesizer's options: the copula's clusters chosen by the data unless given, and
    conditioned on ``target`` first; AIM's workload weighing ``target``'s pairs."""
    from veil.schema import require_columns

    given = dict(options or {})
    if target is not None and method == "aim":
        require_columns(frame, [target], where="--target")
        return {**given, "target": target}
    if method not in {"copula", "gaussian_copula"}:
        if target is not None:
            raise ParameterError(
                f"--target applies to --method copula or aim, not {method}; drop it, or use "
                "one of them"
            )
        return given
    given.setdefault("clusters", "auto")
    if target is not None:
        require_columns(frame, [target], where="--target")
        on = given.get("condition_on") or []
        others = [on] if isinstance(on, str) else list(on)
        given["condition_on"] = [target, *[c for c in others if c != target]]
    return given


def _said(model: Any, synthetic: pd.DataFrame) -> list[str]:
    if not model.differentially_private:
        return list(model.describe())
    first = (
        f"{len(synthetic):,} rows: the number given as public input"
        if model.rows_from_ == "public"
        else f"{len(synthetic):,} rows: as many as the noisy marginals estimate (the input's "
        "size is not published)"
    )
    return [first, *model.describe()]


def mask_latent(
    source: Any,
    output: PathLike | None = None,
    *,
    report: PathLike | None = None,
    certificate: PathLike | None = None,
    allow_invertible: bool = False,
    force: bool = False,
    escape_formulas: bool = True,
    progress: Told = None,
    options: Mapping[str, Any] | None = None,
    **reading: Any,
) -> LatentRelease:
    """``source`` released as latent codes (``veil.learn.latent.mask_latent``; ``options`` are
    its keywords: ``dim``, ``method``, ``target``, ``epsilon``...), with the release, its report
    and its certificate written as one set when asked (all appear, or none).

    Parameters
    ----------
    source : DataFrame, str, path or Source
        The table (``reading``: its reading options).
    output, report, certificate : path, optional
        The release (.csv/.parquet...), its report (.html/.json) and its certificate (JSON:
        the measures, the label, and the release file's SHA-256).
    allow_invertible : bool
        Write a release whose codes give the quasi-identifiers or membership back (labelled
        so); without it such a release is refused (``CheckFailedError``) and nothing is
        written.
    force : bool
        Replace existing files (never an input).
    escape_formulas : bool
        In CSV and Excel releases, prefix cells a spreadsheet would run with an apostrophe.
    progress : callable or Progress, optional
        Told of each step.
    options : mapping, optional
        ``veil.learn.latent.mask_latent``'s keywords.
    **reading
        The source's reading options (``sep``...).

    Returns
    -------
    LatentRelease
        The codes, the measures and the label.
    """
    from veil.exceptions import CheckFailedError
    from veil.learn.latent import mask_latent as release_codes
    from veil.report.model import report_format
    from veil.report.sections.latent import build_latent_report

    src = Source.of(source, **reading)
    wanted = [Path(p) for p in (output, report, certificate) if p is not None]
    if len({os.path.abspath(p) for p in wanted}) != len(wanted):
        raise ParameterError("--output, --report and --certificate must be different files")
    outputs = OutputSet(force=force, inputs=[str(src.data)] if src.kind == "files" else [])
    for path in wanted:
        outputs.check(path)
    chosen = report_format(report) if report is not None else None
    release = release_codes(src.frame(), progress=as_progress(progress), **dict(options or {}))
    if release.disclosive and not allow_invertible:
        extra = (
            ""
            if "--allow-invertible" in release.advice
            else ("; or pass --allow-invertible to write it labelled as such")
        )
        raise CheckFailedError(f"nothing written: {release.label}; {release.advice}{extra}")
    with outputs:
        if output is not None:
            staged = outputs.stage(output)
            write_table(
                release.data, staged, output_format(output), escape_formulas=escape_formulas
            )
        if report is not None and chosen is not None:
            built = build_latent_report(release, title=f"veil latent release: {src.name}")
            outputs.stage(report).write_text(built.render(chosen), encoding="utf-8")
        if certificate is not None:
            body = release.to_dict()
            if output is not None:
                digest = hashlib.sha256(staged.read_bytes()).hexdigest()
                body["release"] = {
                    "file": Path(output).name,
                    "sha256": digest,
                    "rows": len(release.data),
                    "columns": list(map(str, release.data.columns)),
                }
            outputs.stage(certificate).write_text(
                json.dumps(body, indent=1, default=float) + "\n", encoding="utf-8"
            )
    return release


def simulate(
    source: Any,
    *,
    target: str,
    plot: PathLike | None = None,
    report: PathLike | None = None,
    progress: Told = None,
    options: Mapping[str, Any] | None = None,
    **reading: Any,
) -> FederatedResult:
    """A federated run of ``source`` shared among parties on Flower's simulation engine
    (``veil.federated.simulate``; ``options`` are its keywords: ``parties``, ``rounds``,
    ``encrypt``, ``dp_epsilon``...), with its convergence plot (PNG) and report (.html/.json)
    written when asked.

    Parameters
    ----------
    source : DataFrame, str, path or Source
        The table to share among the parties (``reading``: its reading options).
    target : str
        The column to predict.
    plot, report : path, optional
        Accuracy per round as a PNG; the run's report.
    progress : callable or Progress, optional
        Told of each step.
    options : mapping, optional
        ``veil.federated.simulate``'s keywords (``parties``, ``rounds``, ``encrypt``...).
    **reading
        The source's reading options (``sep``...).

    Returns
    -------
    FederatedResult
        Accuracy per round beside the same model trained on all rows in one place.
    """
    from veil.federated import plot_convergence
    from veil.federated.simulation import simulate as run
    from veil.report.model import report_format
    from veil.report.sections.federated import build_federated_report

    src = Source.of(source, **reading)
    outputs = OutputSet(force=True, inputs=[str(src.data)] if src.kind == "files" else [])
    for path in (plot, report):
        if path is not None:
            outputs.check(path)
    chosen = report_format(report) if report is not None else None
    said = as_progress(progress)
    result = run(src.frame(), target=target, say=said, **dict(options or {}))
    if plot is not None:
        plot_convergence([result], Path(plot), title=f"{src.name}: {target}")
    if report is not None and chosen is not None:
        built = build_federated_report(result, title=f"veil federated run: {src.name}")
        with outputs:
            outputs.stage(report).write_text(built.render(chosen), encoding="utf-8")
    return result

"""From a scan to a starting policy a person edits: ScanResult ──suggest──▶ Policy.

Identifiers that other tables join on (national IDs, KRA PINs, keys) are pseudonymized with
their shape kept; contact details, names, cards and accounts are dropped; quasi-identifiers
get a first generalization (age bands, birth years, Kenyan counties to provinces, postcode
prefixes, partnered / not partnered); sensitive columns are kept; rare combinations of
quasi-identifiers are withheld so that the ``privacy: {k: ...}`` goal holds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import yaml

from veil.exceptions import InputError, ParameterError
from veil.frequency import COUNT, CodedColumns
from veil.io._dates import as_dates
from veil.policy import Policy
from veil.scan import ColumnFinding, ScanResult
from veil.scan.recognizers import ENTITY_INFO
from veil.scan.recognizers.countries import region_of
from veil.scan.recognizers.normalize import normalize
from veil.schema import ColumnRole
from veil.transforms.generalize import round_edges

DEFAULT_K = 5
#: Bands of years of tenure or experience: under 2, 2-5, 5-10, 10-20, 20 and more.
TENURE_BANDS = (0, 2, 5, 10, 20, math.inf)
# Identifiers other tables join on: pseudonymized, not dropped. Known formats keep their shape;
# bare keys get hex tokens (short keys such as row numbers would collide in their own shape).
SHAPED_IDS = {name for name, entity in ENTITY_INFO.items() if entity.keeps_shape}
PARTNERED = {
    "married", "registered partnership", "domestic partnership", "civil partnership",
    "partnered", "cohabiting", "de facto", "living together", "married-civ-spouse",
    "married-spouse-absent", "married-af-spouse", "ameoa", "ameolewa",
}  # fmt: skip


def _age_bins(series: pd.Series, width: int = 15) -> list[float]:
    values = pd.to_numeric(series, errors="coerce").dropna()
    low = int(math.floor(values.min() / width) * width) if len(values) else 0
    high = int(values.max()) if len(values) else 100
    # lower edges up to the oldest; the last band is open-ended
    return [*range(low, high + 1, width), math.inf]


def _region_mapping(series: pd.Series) -> dict[str, str] | None:
    """Places to their regions (a country folder's ``region_of``), if most of them have one."""
    values = [v for v in series.dropna().unique() if isinstance(v, str)]
    mapping = {v: region_of(v) for v in values}
    known = {v: p for v, p in mapping.items() if p is not None}
    if not values or len(known) / len(values) < 0.8:
        return None
    return dict(sorted(known.items()))


def _date_unit(series: pd.Series, most: int = 8) -> str:
    """The finest of month, quarter, year and decade that leaves at most ``most`` distinct
    dates: an event date joins the other quasi-identifiers, and each of its values splits
    every group of them."""
    dates = as_dates(series, str(series.name), warn=False).dropna()
    for unit, key in (("month", dates.dt.to_period("M")), ("quarter", dates.dt.to_period("Q")),
                      ("year", dates.dt.year)):  # fmt: skip
        if key.nunique() <= most:
            return unit
    return "decade"


def _marital_mapping(series: pd.Series) -> dict[str, str]:
    values = [v for v in series.dropna().unique() if isinstance(v, str)]
    return {v: "Partnered" for v in sorted(values) if normalize(v) in PARTNERED}


def suggested_steps(
    finding: ColumnFinding, series: pd.Series | None, key_file: str | None,
    weights: np.ndarray | None = None,
) -> tuple[list[Any], str]:  # fmt: skip
    """The suggested steps for one column, and a note on them for the YAML comment.
    ``series``: the column (a quasi-identifier's is needed); ``weights``: each of its values
    stands for that many rows (the counts of a scan in passes)."""
    entity = finding.entity
    if finding.free_text and finding.role in (ColumnRole.IDENTIFIER, ColumnRole.INSENSITIVE):
        if finding.role is ColumnRole.IDENTIFIER:
            note = "the personal data inside each text replaced (<PHONE>, <PERSON>...)"
        else:
            note = "free text: redacted in case a name or number the sample missed is in it"
        return [{"redact": {"replace": "placeholder"}}], note
    if finding.role is ColumnRole.IDENTIFIER:
        key: dict[str, Any] = {} if key_file is None else {"key_file": key_file}
        if entity in SHAPED_IDS:
            return [{"pseudonymize": {"format": "preserve", **key}}], "keyed pseudonym keeps joins"
        if entity is None:
            return [{"pseudonymize": key}], "keyed pseudonym keeps joins"
        return ["drop"], "dropped: not needed for analysis"
    if finding.role is not ColumnRole.QUASI_IDENTIFIER:
        return [], ""
    if series is None:
        raise ValueError(f"the suggestion for {finding.name!r} needs its values")
    if entity == "AGE":
        return [{"generalize": {"bins": _age_bins(series)}}], "15-year bands"
    if entity == "DATE_OF_BIRTH":
        return [{"generalize": {"date": "year"}}], "birth year only"
    if entity == "EVENT_DATE":
        try:
            unit = _date_unit(series)
        except InputError:  # text that is not all dates: the step stops the run with the fix
            unit = "year"
        return [{"generalize": {"date": unit}}], f"the {unit} of the event only"
    if entity == "TENURE" and pd.api.types.is_numeric_dtype(series):
        return [{"generalize": {"bins": list(TENURE_BANDS)}}], "tenure bands (years)"
    if entity == "UNIQUE_NUMBER":
        if weights is not None:  # a table read in batches is binned by edges given as a list
            return (
                [{"generalize": {"bins": _deciles(series, weights)}}],
                "deciles of every row; or round it (round_to), top/bottom-code it, or add noise",
            )
        return [
            {"generalize": {"bins": 10, "strategy": "quantile"}}
        ], "deciles; or round it (round_to), top/bottom-code it, or add noise"
    if entity == "LOCATION":
        mapping = _region_mapping(series)
        if mapping is not None:
            return [
                {"generalize": {"mapping": mapping, "other": "Other"}}
            ], "Kenyan counties to former provinces"
        return [], "consider a mapping to regions (generalize: {mapping: ...})"
    if entity == "POSTCODE":
        return [{"mask": {"keep_first": 2}}], "postcode area only"
    if entity == "MARITAL_STATUS":
        mapping = _marital_mapping(series)
        if mapping:
            return [
                {"generalize": {"mapping": mapping, "other": "Not partnered"}}
            ], "partnered / not partnered"
    return [], ""


def _deciles(series: pd.Series, weights: np.ndarray) -> list[float]:
    """Edges of ten equal-frequency bins of ``series`` (each value counting ``weights`` rows),
    rounded and open at both ends as ``Generalize`` rounds the edges it computes."""
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    present = ~np.isnan(values)
    values, weights = values[present], np.asarray(weights, dtype=float)[present]
    if not len(values):
        return [-math.inf, math.inf]
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    wanted = np.linspace(0, 1, 11)[1:-1] * cumulative[-1]
    inner = values[order][np.minimum(np.searchsorted(cumulative, wanted), len(values) - 1)]
    width = float(values.max() - values.min()) / 10
    return [-math.inf, *round_edges(inner, width), math.inf]


def _withheld(result: ScanResult, data: pd.DataFrame, k: int,
              weights: np.ndarray | None) -> tuple[int, str]:  # fmt: skip
    """How many records the suggested generalizations leave in classes smaller than ``k``,
    and the quasi-identifier with the most distinct values after them."""
    quasi = result.quasi_identifiers
    generalized = data[quasi]
    for finding in result.columns:
        if finding.name not in quasi:
            continue
        steps, _ = suggested_steps(finding, data[finding.name], None, weights)
        if steps:
            plan = Policy.from_dict({"columns": {finding.name: {"steps": steps}}})
            for step in plan.planned_steps():
                generalized = step.transform.fit_transform(generalized)
    _, sizes = CodedColumns.of(generalized, quasi).class_sizes(range(len(quasi)), weights)
    coarsest = max(quasi, key=lambda name: generalized[name].nunique())
    return int(sizes[sizes < k].sum()), coarsest


def _flow(values: list[str]) -> str:
    return yaml.safe_dump(values, default_flow_style=True).strip()


def suggest_policy(
    result: ScanResult,
    data: pd.DataFrame | None = None,
    *,
    k: int = DEFAULT_K,
    key_file: str | None = None,
) -> Policy:
    """A validated starting policy for ``data`` from its scan (``data`` left out: a scan in
    passes, fitted on its counts)."""
    text = suggest_policy_yaml(result, data, k=k, key_file=key_file)
    return Policy.from_yaml(text, source="suggested policy")


def suggest_policy_yaml(
    result: ScanResult,
    data: pd.DataFrame | None = None,
    *,
    k: int = DEFAULT_K,
    source: str = "the data",
    key_file: str | None = None,
) -> str:
    """The suggested policy as commented YAML: every column says what veil found and why.
    Fitted on ``data``, or, for a table scanned in passes (``scan_stream``, a Dask
    DataFrame), on the counts of its quasi-identifiers' combinations the scan kept.

    Pseudonyms are keyed by ``VEIL_KEY`` unless ``key_file`` names a key file (a path, never
    the key itself, is written into the policy).
    """
    weights = None
    if data is None:
        if result.counts is None:
            raise ParameterError("a suggested policy is fitted on the table: give it (a scan in "
                                 "passes keeps the counts it needs instead)")  # fmt: skip
        data = result.counts
        weights = data[COUNT].to_numpy(dtype=np.int64)
    lines = [
        f"# veil policy suggested by `veil scan` for {source} ({result.rows:,} rows).",
        "# A starting point: check each role, then edit the steps (`veil transforms` lists them).",
        "version: 1",
        "columns:",
    ]
    for finding in result.columns:
        series = data[finding.name] if finding.name in data.columns else None
        steps, note = suggested_steps(finding, series, key_file, weights)
        found = finding.entity or finding.role.value
        lines.append(f"  # {found} ({finding.confidence:.2f}): {finding.evidence}")
        if note:
            lines.append(f"  # suggested: {note}")
        spec: dict[str, Any] = {"role": finding.role.value}
        if steps:
            spec["steps"] = steps
        block = yaml.safe_dump({finding.name: spec}, sort_keys=False, allow_unicode=True)
        lines.extend("  " + line for line in block.rstrip("\n").splitlines())
    quasi = result.quasi_identifiers
    if quasi:
        withheld, coarsest = _withheld(result, data, k, weights)
        share = withheld / result.rows if result.rows else 0.0
        lines += [
            f"# withhold the records whose combination of quasi-identifiers fewer than {k} "
            f"people share: with the steps above, {withheld:,} records ({share:.0%})",
        ]
        if share > 0.2:
            lines.append(
                f"# that is a lot: generalize the quasi-identifiers further, first {coarsest} "
                "(the most detailed), or remove some"
            )
        lines += [
            "steps:",
            f"  - suppress_rows: {{rare: {k}, columns: {_flow(quasi)}}}",
        ]
    lines += [
        "# checked on the release: every person shares their quasi-identifiers with k-1 others",
        "privacy:",
        f"  k: {k}",
    ]
    return "\n".join(lines) + "\n"

"""The tables an evaluation compares, in one comparable form.

The release may not look like the original: a k-anonymous release holds intervals
(``[30, 45)``), truncated dates (``2021-04``) and ``*``; a masked one hides characters; a
synthetic one has new identifiers. Numeric and date columns of the release are read as numbers:
an interval at its midpoint, a truncated date at the start of its period, anything else
(``*``, masks) missing. Categories are compared as text (a generalized category is a category
the original does not have, and shows as such). Direct identifiers and free text (by the scan
of the original) are left out of every comparison: a pseudonym or a new key says nothing about
fidelity, and whether a release kept them is the policy's business, certified elsewhere.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from veil.exceptions import InputError, ParameterError
from veil.risk.tables import Prepared
from veil.schema import as_numbers, is_continuous

#: a holdout smaller than this says nothing (DCR shares and attack rates need rows)
MIN_HOLDOUT = 50
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_INTERVAL = re.compile(rf"^[\[(]\s*({_NUMBER}|-inf)\s*,\s*({_NUMBER}|inf)\s*[\])]$")
_RANGE = re.compile(rf"^({_NUMBER})\s*(?:-|\u2013|to)\s*({_NUMBER})$")  # 30-45, 30 to 45


def prepare(
    original: pd.DataFrame,
    release: pd.DataFrame,
    *,
    holdout: pd.DataFrame | None = None,
    holdout_fraction: float | None = None,
    seed: int = 0,
) -> Prepared:
    """Check and align the tables; split a holdout off ``original`` if asked."""
    extra = [c for c in release.columns if c not in original.columns]
    if extra:
        raise InputError(
            f"the release has columns the original lacks: {extra}; evaluate a release against "
            "the table it was made from (renamed columns: rename them back first)"
        )
    train, holdout = _split(original, holdout, holdout_fraction, seed)
    # every column is built on the same row positions
    train, release = train.reset_index(drop=True), release.reset_index(drop=True)
    holdout = None if holdout is None else holdout.reset_index(drop=True)
    if holdout is not None and len(holdout) < MIN_HOLDOUT:
        raise InputError(
            f"a holdout of {len(holdout)} rows is too small to say anything: give at least "
            f"{MIN_HOLDOUT} real rows the release was not made from (20% of the data is usual)"
        )
    if len(release) == 0:
        raise InputError("the release has no rows: nothing to evaluate")
    left_out, sensitive = _left_out(original, release)
    kinds: dict[str, str] = {}
    tables: tuple[dict[str, pd.Series], ...] = ({}, {}, {})  # train, holdout, release
    notes: list[str] = []
    for name in [c for c in original.columns if c not in left_out]:
        why = _compared(name, train, holdout, release, kinds, tables, notes)
        if why is not None:
            left_out[name] = why
    if not kinds:
        raise InputError(
            "no column is left to compare (the release keeps none of the original's "
            f"quasi-identifiers or attributes: {left_out})"
        )
    out_train, out_holdout, out_release = tables
    return Prepared(
        list(kinds),
        kinds,
        pd.DataFrame(out_train).reset_index(drop=True),
        None if holdout is None else pd.DataFrame(out_holdout).reset_index(drop=True),
        pd.DataFrame(out_release).reset_index(drop=True),
        left_out,
        notes,
        [c for c in sensitive if c in kinds],
    )


def _split(
    original: pd.DataFrame,
    holdout: pd.DataFrame | None,
    holdout_fraction: float | None,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The rows the release was made from, and the real rows it was not made from (given, or
    ``holdout_fraction`` of ``original`` set aside at random)."""
    if holdout is not None and holdout_fraction is not None:
        raise ParameterError("give a holdout table or a holdout fraction, not both")
    if holdout is not None:
        missing = [c for c in original.columns if c not in holdout.columns]
        if missing:
            raise InputError(f"the holdout lacks the original's columns {missing}")
        return original, holdout
    if holdout_fraction is None:
        return original, None
    if not 0 < holdout_fraction < 1:
        raise ParameterError(f"holdout fraction must be between 0 and 1, got {holdout_fraction}")
    order = np.random.default_rng(seed).permutation(len(original))
    cut = round(len(original) * holdout_fraction)
    return original.iloc[order[cut:]], original.iloc[order[:cut]]


def _left_out(original: pd.DataFrame, release: pd.DataFrame) -> tuple[dict[str, str], list[str]]:
    """The columns not compared and why (not released, free text, direct identifiers: as the
    scan reads them), and the scan's sensitive columns."""
    from veil.scan import scan

    left_out = {c: "not in the release" for c in original.columns if c not in release.columns}
    sensitive = []
    for found in scan(original).columns:
        if found.role.value == "sensitive":
            sensitive.append(found.name)
        if found.name in left_out:
            continue
        if found.free_text:
            left_out[found.name] = "free text"
        elif found.role.value == "identifier":
            left_out[found.name] = f"direct identifier ({found.entity or 'key'})"
    return left_out, sensitive


def _compared(
    name: str,
    train: pd.DataFrame,
    holdout: pd.DataFrame | None,
    release: pd.DataFrame,
    kinds: dict[str, str],
    tables: tuple[dict[str, pd.Series], ...],
    notes: list[str],
) -> str | None:
    """Column ``name`` of the three tables as numbers or text, put in ``tables`` (train,
    holdout, release) with its kind; or why it is not compared."""
    series = train[name]
    if series.notna().sum() == 0:
        return "no values in the original"
    if release[name].notna().sum() == 0:
        return "no values in the release (suppressed)"
    out_train, out_holdout, out_release = tables
    is_date = pd.api.types.is_datetime64_any_dtype(series)
    if not is_continuous(series):
        kinds[name] = "categorical"
        out_train[name] = _as_text(series)
        if holdout is not None:
            out_holdout[name] = _as_text(holdout[name])
        out_release[name] = _as_text(release[name])
        return None
    released, read = _release_number(release[name], is_date)
    if released.isna().all():  # a type the original's column cannot be compared with
        example = release[name].dropna().iloc[0]
        return (
            f"the release holds no {'dates' if is_date else 'numbers'} "
            f"here (e.g. {str(example)[:30]!r})"
        )
    kinds[name] = "numeric"
    out_train[name] = _as_number(series)
    if holdout is not None:
        out_holdout[name] = _as_number(holdout[name])
    out_release[name] = released
    if read:
        notes.append(f"{name}: {read}")
    return None


def _as_number(series: pd.Series) -> pd.Series:
    return pd.Series(as_numbers(series))


_WHOLE = re.compile(r"^[-+]?\d+\.0*$")


def _category(value: object) -> str | None:
    """A category by its value: a whole number is written as one, whether a table holds it as
    an integer (2003), a float (2003.0) or the text of either; other values as their text."""
    if value is None:
        return None
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    text = str(value)
    return text.split(".")[0].lstrip("+") if _WHOLE.match(text) else text


def _as_text(series: pd.Series) -> pd.Series:
    return series.astype(object).where(series.notna(), None).map(_category)


def _release_number(series: pd.Series, is_date: bool) -> tuple[pd.Series, str | None]:
    """A release column as numbers, and how generalized values were read (None: as is)."""
    if is_date and pd.api.types.is_datetime64_any_dtype(series):
        return _as_number(series), None
    if not is_date and pd.api.types.is_numeric_dtype(series):
        return _as_number(series), None
    text = series.astype("string").str.strip()
    if is_date:
        stamps = pd.to_datetime(text, errors="coerce", format="mixed")
        missing = int((stamps.isna() & series.notna()).sum())
        note = "dates read at the start of their period (2021-04 as 1 April)"
        if missing:
            note += f"; {missing:,} values that are no date ('*', masks) as missing"
        return _as_number(stamps), note
    plain = pd.to_numeric(text, errors="coerce")
    values = plain.to_numpy(dtype=float, na_value=np.nan)
    generalized = 0
    todo = np.isnan(values) & series.notna().to_numpy()
    for pattern in (_INTERVAL, _RANGE):
        bounds = text[todo].str.extract(pattern.pattern).astype(float)
        low, high = bounds[0].to_numpy(), bounds[1].to_numpy()
        middle = np.where(np.isinf(high), low, np.where(np.isinf(low), high, (low + high) / 2))
        read = ~np.isnan(middle)
        values[np.flatnonzero(todo)[read]] = middle[read]
        generalized += int(read.sum())
        todo = np.isnan(values) & series.notna().to_numpy()
    unread = int(np.isnan(values).sum() - series.isna().sum())
    if not generalized and not unread:
        return pd.Series(values), None
    note = f"{generalized:,} intervals read at their midpoint" if generalized else ""
    if unread:
        note += (
            f"{'; ' if note else ''}{unread:,} values that are no number ('*', masks) as missing"
        )
    return pd.Series(values), note

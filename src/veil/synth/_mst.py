"""Differentially private synthetic data: MST (McKenna et al.) through OpenDP's Private-PGM
integration, on discretized columns, charged to the same ledger as every other DP release.

Categories and numeric bin edges are part of the release's *public* description: given, they
cost nothing; inferred from the data, they leak (which categories occur, the min and max), so
veil warns with ``PrivacyLeakWarning``. Direct identifiers (known by their column names, public
metadata: no row is scanned to choose what to release), free text and dates are left out
unless named. A missing value appears only in a column whose domain has one.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil._html import Shown
from veil.dp._calibrate import calibrating
from veil.dp._mechanisms import prelude_as_used
from veil.dp.budget import Accountant, check_epsilon_delta, dataset_id
from veil.dp.stats import opendp
from veil.exceptions import MissingExtraError, ParameterError, PrivacyLeakWarning
from veil.schema import require_columns
from veil.synth._base import Synthesizer, refuse_held
from veil.synth._bins import HISTOGRAM_SHARE, private_bins
from veil.synth._mst_split import safe_mst
from veil.synth._project import sample_rows


def named_identifier(name: str) -> bool:
    """A column whose name says it is a direct identifier or a key (``national_id``,
    ``email``, ``customer_id``), read from the name alone."""
    from veil.scan.hints import KEY, read_name
    from veil.scan.recognizers import ENTITY_INFO

    hints = read_name(name)  # strongest first: "No_of_dependents" is a household size
    if not hints or hints[0].score < 0.75:
        return False
    info = ENTITY_INFO.get(hints[0].entity)
    return hints[0].entity == KEY or bool(info and info.role == "identifier")


_MAX_CATEGORIES = 50


@dataclass(frozen=True)
class Synthetic(Shown):
    """DP synthetic rows, the epsilon spent, the columns made and left out, and notes."""

    data: pd.DataFrame
    epsilon: float
    columns: tuple[str, ...]
    left_out: tuple[str, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = field(default_factory=tuple)
    # where the number of records came from: "dp" (estimated from the noisy marginals, part of
    # the guarantee) or "public" (given by the caller as public knowledge)
    rows_from: str = "dp"

    def to_dict(self) -> dict[str, object]:
        """What was made (the rows are in ``data``)."""
        return {
            "rows": len(self.data),
            "epsilon": self.epsilon,
            "columns": list(self.columns),
            "left_out": list(self.left_out),
            "notes": list(self.notes),
            "rows_from": self.rows_from,
        }


def _plan(
    frame: pd.DataFrame,
    columns: Sequence[str] | None,
    keys: Mapping[str, Sequence[str]],
    bounds: Mapping[str, tuple[float, float]],
    bins: int,
    *,
    strict: bool,
) -> _Plan:
    chosen, categories, cuts, left_out, leaked, integers = [], {}, {}, [], [], []
    ranges: dict[str, tuple[float, float]] = {}
    names = list(frame.columns) if columns is None else list(columns)
    require_columns(frame, names, where="synth columns")
    for name in names:
        series = frame[name]
        numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
        if name in keys:
            categories[name] = [str(k) for k in keys[name]]
        elif name in bounds or (numeric and series.nunique() > _MAX_CATEGORIES):
            low, high = bounds.get(name) or (float(series.min()), float(series.max()))
            if name not in bounds:
                leaked.append(f"the range of {name!r}")
            cuts[name] = np.linspace(low, high, bins + 1)[1:-1].tolist()
            ranges[name] = (float(low), float(high))
            if pd.api.types.is_integer_dtype(series):
                integers.append(name)
            elif numeric and _whole_numbers(series):  # codes stored as floats: 28.0
                integers.append(name)
                leaked.append(f"that {name!r} holds whole numbers")
        elif series.nunique(
            dropna=True
        ) <= _MAX_CATEGORIES and not pd.api.types.is_datetime64_any_dtype(series):
            refuse_held(series, "its categories, read from the rows, are the synthetic rows'")
            categories[name] = sorted(series.dropna().astype(str).unique().tolist())
            leaked.append(f"the categories of {name!r}")
        else:
            if strict:
                raise ParameterError(
                    f"column {name!r} has {series.nunique():,} distinct values: give its "
                    "categories (keys) or numeric bounds, or leave it out"
                )
            left_out.append(name)
            continue
        chosen.append(name)
    return _Plan(chosen, categories, cuts, ranges, left_out, leaked, integers)


def _whole_numbers(series: pd.Series) -> bool:
    """Whether every value present is a whole number."""
    values = pd.to_numeric(series, errors="coerce").dropna().to_numpy(dtype=float)
    return bool(len(values)) and bool(np.all(values == np.round(values)))


@dataclass(frozen=True)
class _Plan:
    """The columns MST synthesizes: categories (keys), numeric bin cuts and ranges, the
    columns left out, what was read from the data (leaked), and the numeric columns drawn as
    whole numbers (an integer dtype, or floats that all are)."""

    chosen: list[str]
    categories: dict[str, list[str]]
    cuts: dict[str, list[float]]
    ranges: dict[str, tuple[float, float]]
    left_out: list[str]
    leaked: list[str]
    integers: list[str]


class MST(Synthesizer):
    """Differentially private synthetic rows from MST's marginals (McKenna et al.), charged to
    ``accountant`` when fitted; sampling reads only what the fit released (post-processing, no
    privacy cost).

    Without ``columns``, direct identifiers are left out: ``identifiers`` names them, else
    their column names do (``national_id``, ``email``: public metadata; scanning the private
    rows to choose would be a release of its own, outside the budget). ``keys`` (categories)
    and ``bounds`` (numeric ranges) are the public domain: given, they cost nothing; read from
    the data, they leak (a ``PrivacyLeakWarning`` says which).

    Parameters
    ----------
    epsilon : float
        The budget the fit spends.
    accountant : Accountant
        The ledger charged.
    columns : list of str, optional
        The columns to synthesize (each must be: keys or bounds where the data cannot say).
    keys, bounds : mapping, optional
        Public categories and numeric ranges by column.
    bins : int
        Bins per numeric column.
    identifiers : list of str, optional
        Direct identifiers to leave out (default: by their names).
    """

    method = "mst"
    differentially_private = True

    def __init__(
        self,
        *,
        epsilon: float,
        accountant: Accountant | None,
        columns: Sequence[str] | None = None,
        keys: Mapping[str, Sequence[str]] | None = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        bins: int = 10,
        identifiers: Sequence[str] | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        check_epsilon_delta(epsilon)
        if accountant is None:
            raise ParameterError("accountant must be given: DP synthesis is charged to the budget")
        self.epsilon, self.accountant = epsilon, accountant
        self.columns = None if columns is None else list(columns)
        self.keys, self.bounds, self.bins = dict(keys or {}), dict(bounds or {}), bins
        self.identifiers = None if identifiers is None else list(identifiers)
        self.progress: Callable[[str], None] = progress or (lambda _: None)

    def _fit(self, frame: pd.DataFrame, random_state: int | None) -> None:
        from veil.memory import xla_for_mbi

        dp = opendp()  # a missing extra is said before any work or warning
        xla_for_mbi()  # before JAX starts: the command's process compiles in less time and memory
        try:
            import mbi  # noqa: F401  (MST's graphical model)
            import polars as pl
        except ImportError as err:
            raise MissingExtraError(
                f"DP synthetic data needs OpenDP's mbi extra (no module {err.name!r}): "
                "pip install 'veil[dp]'"
            ) from err
        columns, dropped, by_name = self._columns(frame)
        strict = self.columns is not None  # columns the user named must all be synthesized
        plan = _plan(frame, columns, self.keys, self.bounds, self.bins, strict=strict)
        chosen, categories, cuts = plan.chosen, plan.categories, plan.cuts
        left_out, leaked = plan.left_out, plan.leaked
        if not chosen:
            raise ParameterError("no column can be synthesized: give columns with keys or bounds")
        # a column has missing values in its domain when it has them (with the categories or
        # range read from the data, part of what the warning below says is read) or its keys
        # list one
        self.nullable_ = {
            name: bool(frame[name].isna().any()) or any(pd.isna(k) for k in self.keys.get(name, ()))
            for name in chosen
        }
        if leaked:
            warnings.warn(
                f"{', '.join(leaked)} were read from the data: that leaks outside the guarantee; "
                "pass keys= and bounds= from domain knowledge",
                PrivacyLeakWarning,
                stacklevel=3,
            )
        data = pd.DataFrame(
            {
                name: frame[name].astype(str).where(frame[name].notna(), None)
                if name in categories
                else pd.to_numeric(frame[name], errors="coerce").astype(float)
                for name in chosen
            }
        )
        integers = set(plan.integers)
        # a share of the budget bins the numeric columns at their private quantiles
        share = HISTOGRAM_SHARE if cuts else 0.0
        algorithm = self._algorithm(chosen)  # its parameters checked before any charge
        self.progress(f"fitting {self.method.upper()} marginals")
        with self.accountant.spend(
            self.epsilon,
            0.0,
            what=f"synthesize {self.method.upper()} ({len(chosen)} columns)",
            dataset=dataset_id(frame),
        ):
            self.bins_ = {
                name: private_bins(
                    data[name].to_numpy(dtype=float),
                    *plan.ranges[name],
                    name in integers,
                    self.bins,
                    self.epsilon * share / len(cuts),
                )
                for name in cuts
            }
            cuts = {name: self.bins_[name].cuts for name in cuts}
            context = dp.Context.compositor(
                data=pl.LazyFrame(data),
                privacy_unit=dp.unit_of(contributions=1),
                privacy_loss=dp.loss_of(epsilon=self.epsilon * (1 - share)),
                split_evenly_over=1,
            )
            # (the query's construction calibrates the one-ways; OpenDP's domains of arrays
            # import its prelude, whose extras load scikit-learn: veil's namespace stands in)
            with self._releasing(), prelude_as_used():
                query = context.query().contingency_table(
                    keys=categories, cuts=cuts, algorithm=algorithm
                )
                self.table_ = query.release()
        self.chosen_, self.cuts_ = chosen, cuts
        self.integers_ = [n for n in cuts if n in integers]
        self.dropped_, self.left_out_, self.by_name_ = dropped, left_out, by_name

    def _releasing(self) -> AbstractContextManager[None]:
        """The context the release runs in: OpenDP's noise scales found in a few checks
        (``veil.dp._calibrate``; its own search takes ~70 a scale)."""
        return calibrating()

    def _algorithm(self, chosen: list[str]) -> Any:
        """OpenDP's algorithm measuring the marginals of the ``chosen`` columns."""
        return safe_mst()

    def _columns(self, frame: pd.DataFrame) -> tuple[list[Any], list[str], bool]:
        """The columns to synthesize, the direct identifiers left out, and whether they were
        known by their names (public; the rows are not read to choose)."""
        if self.columns is not None:
            return list(self.columns), [], False
        identifiers, by_name = self.identifiers, False
        if identifiers is None:
            identifiers = [str(c) for c in frame.columns if named_identifier(str(c))]
            by_name = True
        dropped = [str(c) for c in frame.columns if c in set(identifiers)]
        return [c for c in frame.columns if str(c) not in dropped], dropped, by_name

    def _sample(self, n: int | None, random_state: int | None) -> pd.DataFrame:
        if not hasattr(self, "table_"):
            raise ParameterError("call fit(frame) before sample(): this mst is empty")
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise ParameterError(f"rows must be a whole number >= 1 (or None), got {n!r}")
        # None: the model's total, estimated from the noisy marginals (post-processing); the
        # model synthesizes sorted rows: shuffled (post-processing, no privacy cost)
        rng = np.random.default_rng(random_state)
        # each row drawn from the model, not as mbi's default "round", which rounds the
        # counts of each group of parent values: with many small groups it gives their modes,
        # so on adult every Wife came out earning >50K (real: 48%), a model trained on the rows
        # reached ROC-AUC 0.63-0.78 and more budget did worse; drawn: 0.86 at epsilon 1, 0.84-0.88
        # at 5, detection AUC 0.999 -> 0.73-0.82. Drawn by veil's ``sample_rows`` rather than
        # mbi's "sample", which conditions on the wrong columns where AIM's pairs close a cycle
        # (post-processing of the released model, not the DP noise, which OpenDP drew in the fit)
        table = self.table_.model
        total = max(1, int(n if n is not None else table.total))
        drawn = sample_rows(table, total, rng)
        indices = pd.DataFrame(drawn).iloc[rng.permutation(total)].reset_index(drop=True)
        out = pd.DataFrame(
            {name: self._decoded(name, indices[name].to_numpy(), rng) for name in self.chosen_}
        )
        self.redrawn_ = _redraw_blanks(out, self.chosen_, self.nullable_)
        for name in self.integers_:
            out[name] = out[name].round().astype("Int64")
        self.rows_from_ = "dp" if n is None else "public"
        return out[self.chosen_]

    def _decoded(self, name: str, index: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A column's values from the model's indices: a category, or a number drawn inside
        its bin from the column's private histogram (``veil.synth._bins``; OpenDP's own
        decoding draws the lowest bin within 1 of its upper cut: every capital gain of 0 on
        adult came out as 9,999)."""
        if name not in self.cuts_:
            return np.asarray(self.table_.keys[name].to_list(), dtype=object)[index]
        return self.bins_[name].draw(index, rng)

    def describe(self) -> list[str]:
        """What was made and left out, and how many rows, as notes."""
        if not hasattr(self, "rows_from_"):
            return [f"{self.method.upper()} at epsilon {self.epsilon:g}: not sampled yet"]
        notes = []
        if self.dropped_:
            how = (
                " by their names (public; no row was read to choose them)" if self.by_name_ else ""
            )
            notes.append(f"left out (direct identifiers{how}): {', '.join(self.dropped_)}")
        if self.redrawn_:
            notes.append(
                f"{self.redrawn_:,} cells the model drew as missing in columns that "
                "have no missing value were redrawn from the column's synthetic values "
                "(post-processing)"
            )
        if self.left_out_:
            notes.append(
                f"left out (too many distinct values: text, dates): {', '.join(self.left_out_)}"
            )
        return notes


def _redraw_blanks(out: pd.DataFrame, chosen: list[str], nullable: dict[str, bool]) -> int:
    """A value outside the given domain is counted in a bucket of its own, which the noise
    fills even where no row holds one: drawn as missing. A column without missing values gets
    those cells redrawn from its own synthetic values (post-processing: no privacy cost)."""
    redrawn = 0
    for name in chosen:
        blank = out[name].isna().to_numpy()
        if blank.any() and not nullable[name] and (~blank).any():
            filled = out[name].to_numpy(dtype=object)
            # the rows are in a random order already: the first values that are not blank
            # are a draw from the column's synthetic values (no generator of our own)
            present = filled[~blank]
            filled[blank] = np.resize(present, int(blank.sum()))
            out[name] = pd.Series(filled, index=out.index).astype(out[name].dtype)
            redrawn += int(blank.sum())
    return redrawn


def synthesize(
    frame: pd.DataFrame,
    *,
    epsilon: float,
    accountant: Accountant | None,
    columns: Sequence[str] | None = None,
    keys: Mapping[str, Sequence[str]] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    bins: int = 10,
    rows: int | None = None,
    random_state: int = 0,
    identifiers: Sequence[str] | None = None,
) -> Synthetic:
    """``MST`` fitted and sampled once: ``rows`` records when given (public knowledge: it costs
    nothing because it says nothing about the data), otherwise as many as the noisy marginals
    estimate. Never the input's exact size: under add/remove-one neighbours the size alone
    tells D from D' (``Synthetic.rows_from`` says which).

    Parameters
    ----------
    frame : DataFrame
        The real rows.
    epsilon, accountant, columns, keys, bounds, bins, identifiers
        As ``MST`` takes them.
    rows : int, optional
        Rows to make (public).
    random_state : int
        Seed of the rows' order (the DP noise is never seeded).

    Returns
    -------
    Synthetic
        The rows, the epsilon spent, the columns made and left out, and notes.
    """
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 1):
        raise ParameterError(f"rows must be a whole number >= 1 (or None), got {rows!r}")
    model = MST(
        epsilon=epsilon,
        accountant=accountant,
        columns=columns,
        keys=keys,
        bounds=bounds,
        bins=bins,
        identifiers=identifiers,
    )
    out = model.fit(frame).sample(rows, random_state=random_state)
    first = (
        f"{len(out):,} rows: the number given as public input"
        if rows is not None
        else f"{len(out):,} rows: as many as the noisy marginals estimate (the input's size "
        "is not published)"
    )
    return Synthetic(
        out,
        epsilon,
        tuple(model.chosen_),
        tuple(model.dropped_ + model.left_out_),
        (first, *model.describe()),
        rows_from=model.rows_from_,
    )


#: ``veil.synth.synthesize_mst``: the package's name for ``synthesize``
synthesize_mst = synthesize

"""The mechanisms under veil's DP statistics, on a table in memory (``veil.dp.stats``) or a
Dask DataFrame's partitions (``veil.dp._dask``): OpenDP's Laplace on exact integer aggregates,
fixed-point sums, the answer type, and the charge to the ledger before the data is read."""

from __future__ import annotations

import contextlib
import functools
import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil._html import Shown
from veil.dp.budget import NEIGHBOURS, Accountant, check_epsilon_delta, dataset_id
from veil.exceptions import MissingExtraError, ParameterError

__all__ = ["FIXED_POINT_BITS", "DPResult", "fixed_point_sum", "opendp"]


#: The modules ``opendp.prelude`` gathers with ``from ... import *``, in its order (a name two
#: of them hold is the later one's), its three short names, and the names ``opendp.context``
#: exports (that module imports Polars, where it is installed).
_PRELUDE = (
    "opendp.mod",
    "opendp.domains",
    "opendp.metrics",
    "opendp.measures",
    "opendp.typing",
    "opendp.accuracy",
)
_SHORT = {"t": "opendp.transformations", "m": "opendp.measurements", "c": "opendp.combinators"}
_CONTEXT = frozenset(
    (
        *("space_of", "domain_of", "metric_of", "loss_of", "unit_of"),
        *("Context", "Query", "Chain", "PartialChain", "register"),
    )
)


class _Prelude:
    """``opendp.prelude``'s names, each imported when first used: the prelude itself imports
    all of OpenDP's extras (scikit-learn, Polars, its numpy and mbi helpers: 0.23 s and their
    memory), which a Laplace count does not use. A name none of the modules below holds is
    the prelude's own (its extras)."""

    #: what ``from opendp.prelude import *`` gives (the prelude's own ``__all__``)
    __all__ = ("t", "m", "c")

    def __getattr__(self, name: str) -> Any:
        import importlib

        if name.startswith("__"):  # the import system's questions (__spec__, __path__...)
            raise AttributeError(name)
        if name in _SHORT:
            return importlib.import_module(_SHORT[name])
        if name in _CONTEXT:
            return getattr(importlib.import_module("opendp.context"), name)
        if not name.startswith("_"):
            for module_name in reversed(_PRELUDE):
                module = importlib.import_module(module_name)
                exported = getattr(module, "__all__", None)
                if (name in exported) if exported is not None else hasattr(module, name):
                    return getattr(module, name)
        if isinstance(sys.modules.get(_NAME), _Prelude):  # standing in (``prelude_as_used``)
            del sys.modules[_NAME]
        return getattr(importlib.import_module(_NAME), name)


_NAME = "opendp.prelude"


@contextlib.contextmanager
def prelude_as_used() -> Iterator[None]:
    """Within, OpenDP's own ``import opendp.prelude as dp`` (its numpy extras import the
    prelude inside functions: MST's ``arrayd_domain``) gets ``_Prelude``, each name imported as
    used, unless the prelude is imported already. The prelude would import scikit-learn's
    decomposition for OpenDP's PCA: 60 MB of MST's 1.04 GB on adult. Every public name is the
    prelude's very own object (tested); a name only the prelude holds imports it."""
    if _NAME in sys.modules:
        yield
        return
    sys.modules[_NAME] = _Prelude()  # type: ignore[assignment]
    try:
        yield
    finally:
        if isinstance(sys.modules.get(_NAME), _Prelude):
            del sys.modules[_NAME]


def opendp() -> Any:
    """OpenDP's prelude (``import opendp.prelude as dp``, each name imported when first used)
    with contrib features on; a clear error if the extra is missing."""
    try:
        from opendp.mod import enable_features
    except ImportError as err:
        raise MissingExtraError(
            "differential privacy needs OpenDP: pip install 'veil[dp]'"
        ) from err
    enable_features("contrib")
    return _Prelude()


@dataclass(frozen=True)
class DPResult(Shown):
    """A DP answer with what it cost and how far to trust it."""

    statistic: str
    value: Any
    epsilon: float
    delta: float = 0.0
    scale: float | dict[str, float] | None = None  # noise scale of the mechanism(s)
    error95: float | None = None  # |answer - truth| stays below this with 95% probability
    mechanism: str = "laplace"
    bounds: tuple[float, float] | None = None
    notes: list[str] = field(default_factory=list)
    neighbours: str = NEIGHBOURS  # what epsilon protects: one record added or removed

    def to_dict(self) -> dict[str, Any]:
        """The answer and its cost as plain JSON values."""
        data = asdict(self)
        if isinstance(self.value, np.ndarray):
            data["value"] = self.value.tolist()
        return data

    def rows(self) -> list[tuple[str, str]]:
        """The answer as a person reads it: the value(s), how far to trust it, what it cost."""

        def number(value: Any) -> str:
            return f"{value:,.6g}" if isinstance(value, int | float) else str(value)

        if isinstance(self.value, dict):  # one row per category or group
            rows = [(str(key), number(value)) for key, value in self.value.items()]
        else:
            rows = [("answer", number(self.value))]
        if self.error95:
            rows.append(("95% within", f"±{self.error95:,.4g}"))
        scales = self.scale if isinstance(self.scale, dict) else {"": self.scale}
        for part, scale in scales.items():
            if scale is not None:
                rows.append((f"noise scale{f' ({part})' if part else ''}", number(scale)))
        if self.bounds is not None:
            rows.append(("bounds", f"{number(self.bounds[0])} to {number(self.bounds[1])}"))
        rows.append(("epsilon spent", f"{self.epsilon:g}"))
        rows.append(("protects", f"what {self.neighbours} can change"))
        return rows

    def _repr_html_(self) -> str:
        from veil._html import card

        return card(self.statistic, rows=self.rows(), lines=self.notes)


def _accountant(accountant: Accountant | None) -> Accountant:
    if accountant is None:
        raise ParameterError(
            "accountant must be given: every DP release is charged to a budget "
            "(Accountant.create(path, Budget(epsilon=3)) or `veil budget init`)"
        )
    return accountant


def _require_numeric(series: pd.Series, name: str) -> None:
    """The column's dtype, not its values, decides (checked before any budget is reserved):
    a test on the values would answer a question about the data for free."""
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise ParameterError(
            f"column {name!r} must be numeric for this statistic, got dtype {series.dtype}; "
            "convert it first (e.g. pd.to_numeric(values, errors='coerce'))"
        )


def ordered(bounds: tuple[float, float]) -> tuple[float, float]:
    """``bounds`` as floats, or one line if they are not (low, high) with low < high."""
    low, high = float(bounds[0]), float(bounds[1])
    if not low < high:
        raise ParameterError(f"bounds must be (low, high) with low < high, got {bounds!r}")
    return low, high


def present(series: pd.Series) -> int:
    """Non-missing values (one numpy pass for numbers)."""
    if pd.api.types.is_float_dtype(series):
        array = series.to_numpy(dtype=float, copy=False)
        return int(len(array) - np.count_nonzero(np.isnan(array)))
    return int(series.notna().sum())


def _numbers(series: pd.Series, name: str) -> np.ndarray:
    """The present values as floats (missing ones dropped: a per-record step, so neighbours
    stay neighbours). Never raises on the values, only on the dtype."""
    _require_numeric(series, name)
    array = series.to_numpy(dtype=float, na_value=np.nan)
    return array[~np.isnan(array)]


def _scale_for(make: Callable[[float], Any], epsilon: float) -> tuple[Any, float]:
    """The smallest-noise measurement of ``make(scale)`` whose privacy loss is <= epsilon."""
    dp = opendp()
    scale = dp.binary_search_param(make, d_in=1, d_out=epsilon)
    return make(scale), float(scale)


def _laplace_error(scale: float) -> float:
    return scale * math.log(1 / 0.05)  # P(|Laplace(b)| > t) = exp(-t/b)


def _run(
    accountant: Accountant | None,
    frame: Any,
    what: str,
    epsilon: float,
    compute: Callable[[], DPResult],
    dataset: str | None = None,
) -> DPResult:
    check_epsilon_delta(epsilon)
    acc = _accountant(accountant)
    with acc.spend(epsilon, 0.0, what=what, dataset=dataset or dataset_id(frame)):
        return compute()


# Aggregates are computed with numpy and only the noise is OpenDP's: its Laplace mechanism on
# the exact aggregate. Counts are integers. Sums are fixed point (``fixed_point_sum``): each
# clamped value becomes a whole number of steps and the steps are added as integers, exactly,
# in any order, so one record moves the total by at most its own step count, which is the
# sensitivity the integer Laplace is calibrated to. A floating-point sum has no such bound:
# its rounding depends on the order and the number of values, which the sensitivity of a
# library's float sum assumes and numpy's pairwise summation does not promise (Casacuberta et
# al., "Widespread underestimation of sensitivity in differentially private libraries", CCS
# 2022). This is how a DP mean over 10M rows costs a numpy pass instead of 10M values crossing
# into OpenDP.


@functools.lru_cache(maxsize=256)
def _laplace(kind: str, sensitivity: int, epsilon: float) -> tuple[Any, float]:
    """OpenDP's Laplace on an integer aggregate (``scalar``: a count, a fixed-point sum, 64-bit)
    or on a vector of integer counts (``counts``). Every aggregate veil releases is an exact
    integer; none is noised as a float."""
    dp = opendp()
    if kind == "scalar":
        space: tuple[Any, Any] = (dp.atom_domain(T="i64"), dp.absolute_distance(T="i64"))
    elif kind == "counts":
        space = (dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int))
    else:
        raise ValueError(f"kind must be scalar or counts, got {kind!r}")
    d_in = int(sensitivity)

    def make(scale: float) -> Any:
        return dp.m.make_laplace(*space, scale=scale)

    scale = dp.binary_search_param(make, d_in=d_in, d_out=epsilon)
    return make(scale), float(scale)


#: A sum's resolution: the larger bound's magnitude is 2^24 steps (a relative precision of
#: 6e-8 per value, far below the noise); 2^63 / 2^24 values can be summed without overflow.
FIXED_POINT_BITS = 24
_MAX_SUMMANDS = 2 ** (63 - FIXED_POINT_BITS - 1)


def fixed_point_sum(values: np.ndarray, bounds: tuple[float, float]) -> tuple[int, float, int]:
    """The clamped sum of ``values`` in fixed point: ``(total, step, sensitivity)``, where the
    sum is ``total * step``, ``total`` is an exact integer (the same in any order of the
    records), and adding or removing one record changes it by at most ``sensitivity``."""
    low, high = float(bounds[0]), float(bounds[1])
    reach = max(abs(low), abs(high))
    step = reach / 2**FIXED_POINT_BITS if reach > 0 else 1.0
    if len(values) > _MAX_SUMMANDS:
        raise ParameterError(
            f"a DP sum takes at most {_MAX_SUMMANDS:,} values, got {len(values):,}; "
            "sum parts of the table and add the noisy parts"
        )
    steps = np.rint(np.clip(np.asarray(values, dtype=float), low, high) / step).astype(np.int64)
    sensitivity = max(abs(round(low / step)), abs(round(high / step)), 1)
    return int(steps.sum()), step, int(sensitivity)


def _noisy_count(values: Any, epsilon: float, rows: int = 1) -> tuple[float, float]:
    """Noisy number of ``values`` (or ``values`` itself when it is a count); ``rows``: how
    many of them one person may hold."""
    n = values if isinstance(values, int) else len(values)
    measurement, scale = _laplace("scalar", rows, float(epsilon))
    return float(measurement(int(n))), scale

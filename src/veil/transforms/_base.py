"""The contract every veil transform keeps (scikit-learn's, plus privacy's).

``__init__`` stores arguments only; ``fit`` validates and sets attributes ending in ``_``;
``transform`` never mutates its input, keeps the index, and passes the columns it does not own
through unchanged; ``get_feature_names_out`` makes ``Pipeline`` and
``set_output(transform="pandas")`` work.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import (  # scikit-learn's own parameter checks
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils.validation import check_is_fitted

from veil.exceptions import ParameterError
from veil.schema import require_columns

__all__ = ["COLUMNS", "ColumnTransform", "Columns", "Integral", "Interval", "Real", "StrOptions"]

Columns = str | Sequence[str] | None

#: The constraint every transform's ``columns`` has (scikit-learn's notation).
COLUMNS: list[Any] = [str, list, tuple, None]


def as_frame(X: Any) -> pd.DataFrame:
    """Accept a DataFrame as is; name the columns of an array ``x0, x1, ...`` as sklearn does."""
    if isinstance(X, pd.DataFrame):
        return X
    if isinstance(X, pd.Series):
        return X.to_frame()
    array = np.asarray(X)
    if array.ndim != 2:
        raise ParameterError(
            f"X must be a 2-D table (DataFrame or array), got {array.ndim}-D input; "
            "pass a DataFrame or reshape with X.reshape(-1, 1)"
        )
    return pd.DataFrame(array, columns=[f"x{i}" for i in range(array.shape[1])])


def rng_from(random_state: Any) -> np.random.Generator:
    """A numpy Generator from an int/None/RandomState/Generator (not for DP noise: see veil.dp).

    ``None`` (no reproducibility asked for) is a generator seeded with 128 bits fresh from the
    operating system's CSPRNG, never numpy's global state (which any library may have seeded
    with ``np.random.seed``): nobody can replay the draws of PRAM, noise, shuffles or
    resampling. An int reproduces them, so whoever holds it can undo those steps."""
    if random_state is None:
        return np.random.default_rng(secrets.randbits(128))
    if isinstance(random_state, np.random.Generator):
        return random_state
    legacy = check_random_state(random_state)
    return np.random.default_rng(legacy.randint(0, 2**31 - 1))


class ColumnTransform(TransformerMixin, BaseEstimator):
    """Base of veil transforms: works on ``columns`` of a DataFrame, passes the rest through.

    Subclasses set ``columns`` in ``__init__`` and implement ``_fit`` (optional) and
    ``_transform``; ``_select`` decides which columns ``columns=None`` means.
    """

    columns: Columns
    numeric_only: bool = False
    #: The transform leaves none of a direct identifier's real values in the release (drop,
    #: pseudonymize, mask, fake): a policy may give it to an identifier column. Declared here,
    #: by each transform, so a new one needs no list elsewhere.
    treats_identifiers: ClassVar[bool] = False
    #: Each parameter's allowed values, declared once in scikit-learn's notation (types,
    #: ``Interval``, ``StrOptions``, ``"boolean"``, ``None``...). ``check_parameters`` checks
    #: them, with the rules between parameters (``_validate``), when a policy loads and again
    #: in ``fit``: a bad parameter is refused before any data is read.
    _parameter_constraints: ClassVar[dict[str, Any]] = {"columns": COLUMNS}
    #: Why the transform cannot run a batch of rows at a time, or None when it can: a table
    #: read in batches (larger than memory) or a cluster's partitions get the rows the whole
    #: table would. Fail closed: a new transform needs every row until it says otherwise.
    _needs_every_row: ClassVar[str | None] = "it needs every row of the table at once"

    def batchwise(self) -> str | None:
        """None when applying the transform batch by batch (fitted on a sample of the rows,
        since its fit learns nothing from their values) gives what the whole table would;
        else why not and what to use instead, as one clause."""
        return self._needs_every_row

    # -- what the release engines ask a step (each family answers for itself) ------------
    def counts_whole_table(self) -> bool:
        """Whether its fit needs its columns' combinations counted over the whole table
        (given as ``table_counts_`` by a release in batches, which counts them in a pass of
        its own)."""
        return False

    def withholds_every_row(self) -> bool:
        """Whether, given the whole table's counts, it withholds every row."""
        return False

    def columns_after(self, names: list[str], *, masked: bool = False) -> list[str]:
        """``names`` after this (fitted) step: the columns it keeps; renamed or replaced ones
        as the step's family says (``masked``: columns replaced by derived ones are followed
        into them)."""
        present = set(self.get_feature_names_out())
        return [n for n in names if n in present]

    def values_left_unchanged(self) -> int | None:
        """How many present values the (fitted) step left as they were, for a step that
        hides values in place (a mask); None for the others."""
        return None

    def collision_bound(self, rows: int) -> float | None:
        """The chance that two of ``rows`` distinct values, treated in different batches, get
        the same output (keyed tokens); None when outputs cannot collide or are checked."""
        return None

    def _select(self, frame: pd.DataFrame) -> list[str]:
        if self.columns is None:
            if self.numeric_only:
                return [c for c in frame.columns if _is_numeric(frame[c])]
            return list(frame.columns)
        names = [self.columns] if isinstance(self.columns, str) else list(self.columns)
        require_columns(frame, names, where=type(self).__name__)
        if self.numeric_only:
            for name in names:
                if not _is_numeric(frame[name]):
                    raise ParameterError(
                        f"column {name!r} must be numeric for {type(self).__name__}, got dtype "
                        f"{frame[name].dtype}; convert it first or choose numeric columns"
                    )
        return names

    def fit(self, X: Any, y: Any = None) -> ColumnTransform:
        """Check the parameters, select ``columns`` in ``X`` and learn what the transform needs."""
        frame = as_frame(X)
        self.columns_ = self._select(frame)
        self.feature_names_in_ = np.asarray([str(c) for c in frame.columns], dtype=object)
        self.n_features_in_ = frame.shape[1]
        self.check_parameters()
        self._fit(frame)
        return self

    def transform(self, X: Any) -> pd.DataFrame:
        """``X`` with the fitted columns transformed and the others passed through (the index
        kept; ``X`` itself never changed).
        """
        check_is_fitted(self, "columns_")
        frame = as_frame(X)
        require_columns(frame, self.columns_, where=type(self).__name__)
        # A shallow copy is enough: we only ever assign whole columns, never write into one.
        out = frame.copy(deep=False)
        return self._transform(out)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The output columns' names (scikit-learn's ``Pipeline`` and ``set_output`` use them)."""
        check_is_fitted(self, "columns_")
        names = list(self.feature_names_in_) if input_features is None else list(input_features)
        return np.asarray(self._names_out(names), dtype=object)

    def check_parameters(self) -> None:
        """Check every parameter without data: the declared constraints, then the rules
        between parameters (``_validate``); a ``ParameterError`` names the parameter.

        >>> from veil.transforms import Microaggregate
        >>> Microaggregate(k=1).check_parameters()
        Traceback (most recent call last):
        ...
        veil.exceptions.ParameterError: k must be an int in the range [2, inf), got 1
        """
        params = self.get_params(deep=False)
        constraints = self._parameter_constraints
        for name, value in params.items():
            # a bool is an int to Python: where no boolean is allowed, say so instead
            allowed = constraints.get(name, "no_validation")
            if (
                allowed != "no_validation"
                and isinstance(value, bool | np.bool_)
                and ("boolean" not in allowed)
            ):
                raise ParameterError(f"{name} must not be true or false, got {value!r}")
        try:
            validate_parameter_constraints(constraints, params, caller_name=type(self).__name__)
        except InvalidParameterError as err:
            raise ParameterError(_plain(str(err))) from err
        self._validate()

    # hooks --------------------------------------------------------------------------------
    def _validate(self) -> None:
        """Rules between parameters (the constraints are checked first); raise
        ParameterError naming the parameters. No data: called when a policy loads."""

    def _fit(self, frame: pd.DataFrame) -> None:
        """Learn what transform needs from ``frame``."""

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        raise NotImplementedError

    def _names_out(self, names: list[str]) -> list[str]:
        return names

    #: After a transform, what the step counted (``{"PHONE": 12}``), if it counts anything:
    #: the certificate records it beside ``describe()``.
    counts_: dict[str, int] | None
    #: The whole-number attributes a transform counts in (beside ``counts_``): run batch by
    #: batch, their sums over the batches (``veil.privacy._passes.merge_tallies``) are set
    #: back before ``describe()``.
    _tallies: ClassVar[tuple[str, ...]] = ()

    def tallies(self) -> dict[str, Any]:
        """What the last transform counted: ``counts_`` and the ``_tallies`` attributes."""
        out: dict[str, Any] = {
            name: getattr(self, name) for name in self._tallies if hasattr(self, name)
        }
        if isinstance(getattr(self, "counts_", None), dict):
            out["counts_"] = dict(self.counts_ or {})
        return out

    def describe(self) -> str:
        """One line for certificates and reports: what this step did. Never holds secrets."""
        cols = ", ".join(getattr(self, "columns_", None) or [])
        return f"{type(self).__name__}({cols})"


def _is_numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series)) and not pd.api.types.is_bool_dtype(series)


_SKLEARN_MESSAGE = re.compile(
    r"The '(?P<name>\w+)' parameter of \w+ must be (?P<rule>.*)\. Got (?P<got>.*) instead\.$",
    re.DOTALL,
)


def _plain(message: str) -> str:
    """scikit-learn's "The 'k' parameter of Microaggregate must be ... Got 1 instead." in
    veil's words: "k must be ..., got 1" (the policy says which step it is)."""
    found = _SKLEARN_MESSAGE.match(message.strip())
    if found is None:
        return message
    return f"{found['name']} must be {found['rule']}, got {found['got']}"


def numeric_values(frame: pd.DataFrame, column: str) -> np.ndarray:
    return frame[column].to_numpy(dtype=float, na_value=np.nan)


def apply_to_uniques(series: pd.Series, func: Any) -> tuple[np.ndarray, np.ndarray]:
    """``func`` of each distinct non-missing value: (codes per row, results per code).

    Tables repeat values, so this is what makes per-value Python work (HMAC, Faker) affordable.
    Code -1 marks a missing value.
    """
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    values = np.asarray(uniques, dtype=object)  # iterating an Arrow-backed array is slow
    return codes, np.array([func(value) for value in values], dtype=object)


def rebuild(series: pd.Series, codes: np.ndarray, mapped: np.ndarray) -> pd.Series:
    """The column of ``mapped[code]`` per row, missing where the code is -1."""
    table = np.append(mapped, np.nan)  # code -1 indexes the trailing NaN
    return pd.Series(table[codes].tolist(), index=series.index, name=series.name)


def map_uniques(series: pd.Series, func: Any) -> pd.Series:
    """Apply ``func`` once per distinct non-missing value; missing values stay missing."""
    return rebuild(series, *apply_to_uniques(series, func))


def value_text(value: object) -> str:
    """The canonical text of a cell: ``12.0`` read from a column with gaps is ``"12"``."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return str(value)

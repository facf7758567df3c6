"""The contract every veil transform keeps (scikit-learn's, plus privacy's).

``__init__`` stores arguments only; ``fit`` validates and sets attributes ending in ``_``;
``transform`` never mutates its input, keeps the index, and passes the columns it does not own
through unchanged; ``get_feature_names_out`` makes ``Pipeline`` and
``set_output(transform="pandas")`` work.
"""

from __future__ import annotations

import inspect
import secrets
from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np
import pandas as pd

from veil.exceptions import ParameterError
from veil.schema import require_columns
from veil.transforms._constraints import Integral, Interval, Real, StrOptions, unmet

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
    if isinstance(random_state, np.random.RandomState):
        legacy = random_state
    elif isinstance(random_state, int | np.integer) and not isinstance(random_state, bool):
        legacy = np.random.RandomState(int(random_state))  # as scikit-learn's check_random_state
    else:
        raise ParameterError(
            f"random_state must be an int, a numpy Generator or RandomState, or None; "
            f"got {random_state!r}"
        )
    return np.random.default_rng(legacy.randint(0, 2**31 - 1))


def _not_fitted(transform: object) -> Exception:
    """scikit-learn's own ``NotFittedError`` (imported only on this path: code that catches it
    keeps working, and a transform needs no scikit-learn import otherwise)."""
    from sklearn.exceptions import NotFittedError

    return NotFittedError(
        f"This {type(transform).__name__} instance is not fitted yet. Call 'fit' with "
        "appropriate arguments before using this estimator."
    )


class Estimator:
    """scikit-learn's estimator protocol without importing scikit-learn (it loads SciPy: most
    of a second in every command with a step): ``get_params``/``set_params`` from
    ``__init__``'s signature (what ``clone``, grid searches and ``Pipeline`` use),
    ``fit_transform``, ``set_output`` and the tags a ``Pipeline`` or ``ColumnTransformer``
    asks for. The contract tests run the transforms through scikit-learn's ``clone``,
    ``Pipeline`` and ``ColumnTransformer``."""

    _sklearn_output_config: dict[str, Any]

    @classmethod
    def _get_param_names(cls) -> list[str]:
        init = cls.__init__
        if init is object.__init__:
            return []
        params = inspect.signature(init).parameters.values()
        names = []
        for p in params:
            if p.kind == p.VAR_POSITIONAL:
                raise TypeError(f"{cls.__name__}.__init__ must not take *args (scikit-learn)")
            if p.name != "self" and p.kind != p.VAR_KEYWORD:
                names.append(p.name)
        return sorted(names)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The parameters given to ``__init__`` (``deep``: those of nested estimators too, as
        ``name__parameter``)."""
        out: dict[str, Any] = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params().items())
            out[name] = value
        return out

    def set_params(self, **params: Any) -> Any:
        """Set parameters (``name__parameter`` for a nested estimator's); returns self."""
        valid = self.get_params(deep=True)
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {self}. Valid parameters "
                    f"are: {self._get_param_names()!r}."
                )
            if sub:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
                valid[name] = value
        for name, subs in nested.items():
            valid[name].set_params(**subs)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default
            for p in inspect.signature(type(self).__init__).parameters.values()
            if p.default is not p.empty
        }
        changed = []
        for name, value in self.get_params(deep=False).items():
            default = defaults.get(name, inspect.Parameter.empty)
            same = value is default
            if not same and type(value) is type(default):
                try:
                    same = bool(value == default)
                except (TypeError, ValueError):  # arrays and the like: shown
                    same = False
            if not same:
                changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def fit(self, X: Any, y: Any = None) -> Any:
        raise NotImplementedError

    def transform(self, X: Any) -> Any:
        raise NotImplementedError

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """``fit`` then ``transform`` on the same rows."""
        return self.fit(X, y, **fit_params).transform(X)

    def set_output(self, *, transform: str | None = None) -> Any:
        """scikit-learn's output setting: a veil transform returns a DataFrame already, so
        "default" and "pandas" keep it; "polars" converts it (polars must be installed)."""
        if transform is not None:
            if transform not in ("default", "pandas", "polars"):
                raise ParameterError(
                    f"set_output(transform=...) takes 'default', 'pandas' or 'polars', got "
                    f"{transform!r}"
                )
            self._sklearn_output_config = {"transform": transform}
        return self

    def _output(self, out: Any) -> Any:
        config = getattr(self, "_sklearn_output_config", {})
        if config.get("transform") == "polars":
            import polars  # only when asked for

            return polars.from_pandas(out)
        return out

    def __sklearn_tags__(self) -> Any:
        """A transformer's tags (asked only by scikit-learn, so imported from it then)."""
        from sklearn.utils import Tags, TargetTags, TransformerTags

        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=False),
            transformer_tags=TransformerTags(),
        )


class ColumnTransform(Estimator):
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

    def fit(self, X: Any, y: Any = None) -> Self:
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
        if not hasattr(self, "columns_"):
            raise _not_fitted(self)
        frame = as_frame(X)
        require_columns(frame, self.columns_, where=type(self).__name__)
        # A shallow copy is enough: we only ever assign whole columns, never write into one.
        out = frame.copy(deep=False)
        return self._output(self._transform(out))

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The output columns' names (scikit-learn's ``Pipeline`` and ``set_output`` use them)."""
        if not hasattr(self, "columns_"):
            raise _not_fitted(self)
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
        refused = unmet(constraints, params)
        if refused is not None:
            raise ParameterError(refused)
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

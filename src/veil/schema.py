"""Column roles (what a column is to privacy) and kinds (what its values are)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import pandas as pd

from veil.exceptions import UnknownColumnError

__all__ = [
    "DAY_NS",
    "MAX_NUMERIC_CATEGORIES",
    "ColumnKind",
    "ColumnRole",
    "ColumnSpec",
    "Schema",
    "as_numbers",
    "infer_kind",
    "is_continuous",
    "require_columns",
]


class ColumnRole(StrEnum):
    """What a column is to privacy. Every column has exactly one role."""

    IDENTIFIER = "identifier"  # names, national IDs, KRA PINs, phones: never released as-is
    QUASI_IDENTIFIER = "quasi_identifier"  # age, gender, county: identifying in combination
    SENSITIVE = "sensitive"  # diagnosis, income: what must not be learned about a person
    INSENSITIVE = "insensitive"  # released unchanged


class ColumnKind(StrEnum):
    """What a column's values are, as far as transforms care."""

    NUMERIC = "numeric"
    CATEGORICAL = "categorical"
    DATETIME = "datetime"
    TEXT = "text"
    BOOLEAN = "boolean"


def infer_kind(
    series: pd.Series, *, max_categories: int = 50, max_ratio: float = 0.5
) -> ColumnKind:
    """Numeric, boolean and datetime from the dtype; text vs categorical from cardinality."""
    if pd.api.types.is_bool_dtype(series):
        return ColumnKind.BOOLEAN
    if pd.api.types.is_datetime64_any_dtype(series):
        return ColumnKind.DATETIME
    if pd.api.types.is_numeric_dtype(series):
        return ColumnKind.NUMERIC
    if isinstance(series.dtype, pd.CategoricalDtype):
        return ColumnKind.CATEGORICAL
    n = int(series.notna().sum())
    distinct = int(series.nunique(dropna=True))
    if distinct <= max_categories or (n and distinct / n <= max_ratio and distinct <= 1000):
        return ColumnKind.CATEGORICAL
    return ColumnKind.TEXT


#: A number column with more distinct values than this is continuous; with fewer, a category
#: (codes, flags, counts), however it is typed.
MAX_NUMERIC_CATEGORIES = 20
#: nanoseconds in a day: dates as numbers are days since 1970
DAY_NS = 86_400 * 10**9


def is_continuous(series: pd.Series) -> bool:
    """Dates, and numbers (not booleans) with more than ``MAX_NUMERIC_CATEGORIES`` values:
    what is fitted, binned and compared as a quantity rather than by its categories."""
    if pd.api.types.is_datetime64_any_dtype(series):
        return True
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    return numeric and series.nunique() > MAX_NUMERIC_CATEGORIES


def as_numbers(series: pd.Series) -> np.ndarray:
    """A number or date column as floats (dates: days since 1970), NaN where missing."""
    if pd.api.types.is_datetime64_any_dtype(series):
        stamps = series.to_numpy("datetime64[ns]")
        return np.where(np.isnat(stamps), np.nan, stamps.astype("int64") / DAY_NS)
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


@dataclass(frozen=True)
class ColumnSpec:
    """A column's role and kind, as a schema records them."""

    name: str
    role: ColumnRole = ColumnRole.INSENSITIVE
    kind: ColumnKind | None = None

    def to_dict(self) -> dict[str, str | None]:
        """The column's spec as JSON values."""
        return {
            "name": self.name,
            "role": self.role.value,
            "kind": None if self.kind is None else self.kind.value,
        }


@dataclass(frozen=True)
class Schema:
    """The columns of a table with their roles; columns not listed are insensitive."""

    columns: tuple[ColumnSpec, ...] = field(default_factory=tuple)

    @classmethod
    def from_roles(cls, roles: Mapping[str, ColumnRole | str]) -> Schema:
        """A schema from ``{column: role}`` (roles by value, e.g. ``"quasi_identifier"``).

        >>> from veil.schema import Schema
        >>> Schema.from_roles({"ID": "identifier", "Age": "quasi_identifier"}).quasi_identifiers
        ['Age']
        """
        return cls(tuple(ColumnSpec(name, ColumnRole(role)) for name, role in roles.items()))

    def role(self, name: str) -> ColumnRole:
        """The role of column ``name`` (``insensitive`` if the schema does not list it)."""
        for spec in self.columns:
            if spec.name == name:
                return spec.role
        return ColumnRole.INSENSITIVE

    def with_role(self, role: ColumnRole) -> list[str]:
        """The columns with ``role``, in schema order."""
        return [spec.name for spec in self.columns if spec.role is role]

    @property
    def quasi_identifiers(self) -> list[str]:
        """The quasi-identifier columns."""
        return self.with_role(ColumnRole.QUASI_IDENTIFIER)

    @property
    def identifiers(self) -> list[str]:
        """The direct-identifier columns."""
        return self.with_role(ColumnRole.IDENTIFIER)

    @property
    def sensitive(self) -> list[str]:
        """The sensitive columns."""
        return self.with_role(ColumnRole.SENSITIVE)

    def to_dict(self) -> dict[str, list[dict[str, str | None]]]:
        """The schema as JSON values."""
        return {"columns": [spec.to_dict() for spec in self.columns]}


def require_columns(frame: pd.DataFrame, columns: Iterable[object], *, where: str = "") -> None:
    """Raise ``UnknownColumnError`` for the first of ``columns`` missing from ``frame``."""
    present = set(frame.columns)
    for name in columns:
        if name not in present:
            raise UnknownColumnError(name, [str(c) for c in frame.columns], where=where)

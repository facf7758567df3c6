"""Suppression: of attributes (drop columns) and of records (rows matching a condition or rare)."""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from veil.exceptions import ParameterError
from veil.frequency import class_sizes
from veil.transforms._base import COLUMNS, Columns, ColumnTransform, Integral, Interval, StrOptions


class Drop(ColumnTransform):
    """Attribute suppression: remove ``columns`` from the release."""

    _needs_every_row = None

    treats_identifiers = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {"columns": COLUMNS}

    def __init__(self, columns: Columns = None) -> None:
        self.columns = columns

    def _validate(self) -> None:
        if self.columns is None:
            raise ParameterError("columns must name the columns to drop, got None")

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        return frame.drop(columns=self.columns_)

    def _names_out(self, names: list[str]) -> list[str]:
        dropped = set(self.columns_)
        return [n for n in names if n not in dropped]


_SIZE = "__veil_size__"


class SuppressRows(ColumnTransform):
    """Record suppression: rows matching ``where`` (a pandas query such as ``"Age > 90"``) or
    whose combination of ``columns`` occurs fewer than ``rare`` times.

    ``action="remove"`` deletes those rows (the index of the others is kept);
    ``action="blank"`` keeps the rows but sets ``columns`` to missing in them.
    """

    def batchwise(self) -> str | None:
        """Rare combinations are counted over every row: possible in batches only with the whole
        table's counts."""
        if self.rare is not None and not hasattr(self, "table_counts_"):
            return (
                "rare combinations are counted over every row: give it the whole table's counts "
                "(use_counts), or leave them to the privacy search (max_suppression)"
            )
        return None

    def use_counts(self, counts: pd.DataFrame, count: str) -> SuppressRows:
        """Judge rarity by the whole table's counts, not by the rows at hand: ``counts`` holds
        each combination of ``columns`` once with how many rows of the whole table hold it
        (column ``count``; a streamed pass's or a cluster's group-by-count), so that a batch
        withholds exactly the rows the whole table would."""
        self.table_counts_ = counts[[*self.columns_, count]].rename(columns={count: _SIZE})
        return self

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "where": [str, None],
        "rare": [Interval(Integral, 2, None, closed="left"), None],
        "columns": COLUMNS,
        "action": [StrOptions({"remove", "blank"})],
    }

    def __init__(
        self,
        where: str | None = None,
        *,
        rare: int | None = None,
        columns: Columns = None,
        action: str = "remove",
    ) -> None:
        self.where = where
        self.rare = rare
        self.columns = columns
        self.action = action

    def _validate(self) -> None:
        if (self.where is None) == (self.rare is None):
            raise ParameterError(
                "SuppressRows needs exactly one of where (a condition such as 'Age > 90') "
                f"or rare (a minimum group size), got where={self.where!r}, rare={self.rare!r}"
            )
        if self.rare is not None and self.columns is None:
            raise ParameterError(
                "rare needs columns: the combination whose rare values are suppressed"
            )

    def mask(self, frame: pd.DataFrame) -> pd.Series:
        """Which rows of ``frame`` are suppressed."""
        if self.where is not None:
            try:
                hit: Any = frame.eval(self.where)
            except Exception as err:  # pandas raises many types for a bad expression
                raise ParameterError(
                    f"where must be a condition on the table's columns, got {self.where!r} "
                    f'({type(err).__name__}: {err}); e.g. "Age > 90" or '
                    "\"County == 'Lamu'\" (quote names with spaces in backticks)"
                ) from err
            if not isinstance(hit, pd.Series) or not pd.api.types.is_bool_dtype(hit):
                raise ParameterError(
                    f"where must evaluate to true/false per row, got {self.where!r}"
                )
            return hit.fillna(False).astype(bool)
        if hasattr(self, "table_counts_"):  # the whole table's counts (use_counts)
            found = frame[self.columns_].merge(self.table_counts_, how="left", on=self.columns_)
            known = found[_SIZE].fillna(0).to_numpy()
            return pd.Series(known < (self.rare or 0), index=frame.index)
        klass, sizes = class_sizes(frame, self.columns_)
        return pd.Series(sizes[klass] < (self.rare or 0), index=frame.index)

    def counts_whole_table(self) -> bool:
        """Rare combinations are counted over every row."""
        return self.rare is not None

    def withholds_every_row(self) -> bool:
        """Every combination, as counted over the whole table, is rare and removed."""
        sizes = getattr(self, "table_counts_", None)
        return (
            self.rare is not None
            and self.action == "remove"
            and sizes is not None
            and bool((sizes.iloc[:, -1] < self.rare).all())
        )

    def describe(self) -> str:
        """Which rows were withheld and how many."""
        what = (
            "rows where " + self.where
            if self.where is not None
            else (f"rows whose ({', '.join(self.columns_)}) occurs fewer than {self.rare} times")
        )
        how = "removed" if self.action == "remove" else "blanked"
        return f"SuppressRows({what}: {how})"

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        hit = self.mask(frame)
        if self.action == "remove":
            return frame.loc[~hit]
        for name in self.columns_:
            frame[name] = frame[name].mask(hit)
        return frame

"""Column names: rename, or remove them (replace by opaque names such as ``c00``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pandas as pd

from veil.exceptions import ParameterError
from veil.schema import require_columns
from veil.transforms._base import COLUMNS, Columns, ColumnTransform


class RenameColumns(ColumnTransform):
    """Rename with ``mapping``, or (no mapping) give ``columns`` opaque names ``{prefix}00...``
    so a release does not say what each column is. ``mapping_`` records what was done (keep it
    with the data controller, not with the release)."""

    _needs_every_row = None

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        "mapping": [dict, None],
        "prefix": [str],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        mapping: Mapping[str, str] | None = None,
        prefix: str = "c",
    ) -> None:
        self.columns = columns
        self.mapping = mapping
        self.prefix = prefix

    def _fit(self, frame: pd.DataFrame) -> None:
        if self.mapping is not None:
            require_columns(frame, list(self.mapping), where="RenameColumns mapping")
            self.mapping_ = {str(k): str(v) for k, v in self.mapping.items()}
        else:
            width = max(2, len(str(len(self.columns_) - 1)))
            self.mapping_ = {
                str(name): f"{self.prefix}{i:0{width}d}" for i, name in enumerate(self.columns_)
            }
        names = self._names_out([str(c) for c in frame.columns])
        clashes = sorted({n for n in names if names.count(n) > 1})
        if clashes:
            raise ParameterError(
                f"renaming would give two columns the same name {clashes}; choose other names"
            )

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        return frame.rename(columns=self.mapping_)

    def _names_out(self, names: list[str]) -> list[str]:
        return [self.mapping_.get(n, n) for n in names]

    def columns_after(self, names: list[str], *, masked: bool = False) -> list[str]:
        """``names`` renamed: a renamed column keeps its role under its new name."""
        return [self.mapping_.get(n, n) for n in names]

    def describe(self) -> str:
        """How many columns were renamed (never the names)."""
        return f"RenameColumns({len(self.mapping_)} columns renamed)"

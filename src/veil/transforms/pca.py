"""PCA masking: numeric columns replaced by their principal components."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from veil.exceptions import ParameterError
from veil.transforms._base import (
    COLUMNS,
    Columns,
    ColumnTransform,
    Integral,
    Interval,
    Real,
    numeric_values,
)


class PCAMask(ColumnTransform):
    """Replace numeric ``columns`` by principal components ``{prefix}0, {prefix}1, ...``.

    ``n_components=None`` keeps all of them: a rotation, so distances between (standardized)
    records and therefore most models' accuracy are kept while no released column is an
    original attribute. Fewer components also discard detail. A rotation is not anonymization
    on its own: whoever learns the loadings, or a few people's values, can invert it; so
    ``anonymize`` keeps the components of masked quasi-identifiers in the k check.
    """

    _needs_every_row = "its components are fitted on the whole table"

    numeric_only = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "columns": COLUMNS,
        # a count of components, or the share of variance to keep (scikit-learn's PCA)
        "n_components": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0, 1, closed="neither"),
            None,
        ],
        "standardize": ["boolean"],
        "prefix": [str],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        columns: Columns = None,
        *,
        n_components: int | float | None = None,
        standardize: bool = True,
        prefix: str = "pc",
        random_state: Any = None,
    ) -> None:
        self.columns = columns
        self.n_components = n_components
        self.standardize = standardize
        self.prefix = prefix
        self.random_state = random_state

    def _matrix(self, frame: pd.DataFrame) -> np.ndarray:
        matrix = np.column_stack([numeric_values(frame, c) for c in self.columns_])
        missing = np.isnan(matrix).sum(axis=0)
        if missing.any():
            name = self.columns_[int(np.argmax(missing > 0))]
            raise ParameterError(
                f"column {name!r} has {int(missing.max())} missing values and PCA needs none; "
                "impute them or suppress those rows first"
            )
        return matrix

    def _fit(self, frame: pd.DataFrame) -> None:
        if len(self.columns_) == 0:
            raise ParameterError("PCAMask needs at least one numeric column, got none")
        matrix = self._matrix(frame)
        from sklearn.decomposition import PCA  # only a PCA step loads scikit-learn
        from sklearn.preprocessing import StandardScaler

        self.scaler_ = StandardScaler(with_std=self.standardize).fit(matrix)
        self.pca_ = PCA(n_components=self.n_components, random_state=self.random_state)
        self.pca_.fit(self.scaler_.transform(matrix))
        self.explained_variance_ratio_ = self.pca_.explained_variance_ratio_

    def component_names(self) -> list[str]:
        """The released columns, ``{prefix}0, {prefix}1, ...``."""
        return [f"{self.prefix}{i}" for i in range(self.pca_.n_components_)]

    def _transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        scores = self.pca_.transform(self.scaler_.transform(self._matrix(frame)))
        rest = frame.drop(columns=self.columns_)
        clash = [c for c in self.component_names() if c in rest.columns]
        if clash:
            raise ParameterError(
                f"the components {clash} would replace columns of the same name; give this "
                "PCAMask another prefix, e.g. prefix='pca_income_'"
            )
        components = pd.DataFrame(scores, index=frame.index, columns=self.component_names())
        return pd.concat([rest, components], axis=1)

    def _names_out(self, names: list[str]) -> list[str]:
        replaced = set(self.columns_)
        return [n for n in names if n not in replaced] + self.component_names()

    def columns_after(self, names: list[str], *, masked: bool = False) -> list[str]:
        """``names`` without the columns replaced, followed into the components when
        ``masked``: a rotation of Age and Income identifies people as well as Age and Income
        do (whoever knows three of them recovers the rest by an affine fit)."""
        kept = [n for n in names if n not in self.columns_]
        hit = masked and len(kept) < len(names)
        return kept + (self.component_names() if hit else [])

    def describe(self) -> str:
        """The columns replaced, the components kept and the share of variance they hold."""
        kept = float(np.sum(self.explained_variance_ratio_))
        return (
            f"PCAMask({len(self.columns_)} columns -> {self.pca_.n_components_} components, "
            f"{kept:.1%} of variance)"
        )

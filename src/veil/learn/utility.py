"""Utility as a model sees it: the same pipeline cross-validated on the original and on the
release, beside a baseline that ignores the features.

Each table is judged on its own rows (train and test both from the release), as ARX's and
sdmetrics' utility evaluations do: a generalized column ("[30, 45)") has no values in common
with the original's (37), so a model trained on one cannot be scored on the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from veil._html import Shown
from veil.exceptions import ParameterError
from veil.schema import require_columns

MAX_CLASSES = 20  # a target with more distinct values than this, and numeric, is regressed
FOLDS = 5


@dataclass(frozen=True)
class ModelComparison(Shown):
    """The same model trained on the original and on the release, scored on the same held-out
    original rows."""

    target: str
    task: str  # "classification" or "regression"
    features: tuple[str, ...]
    metrics: tuple[str, ...]
    scores: dict[str, dict[str, float]]  # "original" / "release" / "baseline" -> metric -> value
    rows: dict[str, int]  # records each table was judged on
    sampled: bool = False  # a table was longer than max_rows

    def loss(self, metric: str) -> float:
        """How much ``metric`` dropped from the original to the release."""
        return self.scores["original"][metric] - self.scores["release"][metric]

    def to_dict(self) -> dict[str, Any]:
        """The comparison as plain JSON values."""
        return {
            "target": self.target,
            "task": self.task,
            "features": list(self.features),
            "metrics": list(self.metrics),
            "scores": self.scores,
            "rows": self.rows,
            "sampled": self.sampled,
        }


def _encode(frame: pd.DataFrame) -> pd.DataFrame:
    """Dates as fractional years; everything else kept (categories are one-hot encoded later)."""
    out = {}
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_datetime64_any_dtype(column):
            column = column.dt.year + (column.dt.day_of_year - 1) / 366.0
        out[name] = column
    return pd.DataFrame(out, index=frame.index)


def _pipeline(frame: pd.DataFrame, task: str, random_state: int) -> Any:
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
    other = [c for c in frame.columns if c not in numeric]
    encode = ColumnTransformer(
        [
            ("numbers", make_pipeline(SimpleImputer(), StandardScaler()), numeric),
            (
                "categories",
                make_pipeline(
                    SimpleImputer(strategy="constant", fill_value="(missing)"),
                    OneHotEncoder(handle_unknown="ignore", min_frequency=5),
                ),
                other,
            ),
        ]
    )
    if task == "classification":
        model = LogisticRegression(max_iter=2000, random_state=random_state)
    else:
        model = Ridge()
    return make_pipeline(encode, model)


def _task(target: pd.Series) -> str:
    numeric = pd.api.types.is_numeric_dtype(target) and not pd.api.types.is_bool_dtype(target)
    return "regression" if numeric and target.nunique() > MAX_CLASSES else "classification"


def _scores(frame: pd.DataFrame, target: str, task: str, random_state: int) -> dict[str, float]:
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.model_selection import KFold, StratifiedKFold, cross_validate

    y = frame[target]
    x = _encode(frame.drop(columns=[target]))
    if task == "classification":
        y = y.astype(str)
        smallest = int(y.value_counts().min())
        folds = min(FOLDS, smallest)
        if y.nunique() < 2 or folds < 2:
            raise ParameterError(
                f"target {target!r} needs two classes with at least 2 records each to be "
                f"cross-validated, got {y.value_counts().to_dict()}; name another target"
            )
        splitter: Any = StratifiedKFold(folds, shuffle=True, random_state=random_state)
        scoring = {"accuracy": "accuracy"}
        scoring["roc_auc"] = "roc_auc" if y.nunique() == 2 else "roc_auc_ovr_weighted"
        baseline: Any = DummyClassifier(strategy="prior")
    else:
        y = y.astype(float)
        splitter = KFold(FOLDS, shuffle=True, random_state=random_state)
        scoring = {"r2": "r2", "mae": "neg_mean_absolute_error"}
        baseline = DummyRegressor()
    out = {}
    for name, model in (("model", _pipeline(x, task, random_state)), ("baseline", baseline)):
        result = cross_validate(model, x, y, cv=splitter, scoring=scoring)
        out[name] = {
            metric: float(
                abs(np.mean(result[f"test_{metric}"]))
                if metric == "mae"
                else np.mean(result[f"test_{metric}"])
            )
            for metric in scoring
        }
    return {**out["model"], **{f"baseline_{k}": v for k, v in out["baseline"].items()}}


def _sample(frame: pd.DataFrame, rows: int | None, random_state: int) -> pd.DataFrame:
    if rows is None or len(frame) <= rows:
        return frame
    return frame.sample(n=rows, random_state=random_state)


def compare_models(
    original: pd.DataFrame,
    release: pd.DataFrame,
    *,
    target: str,
    features: Sequence[str] | None = None,
    max_rows: int | None = 50_000,
    random_state: int = 0,
) -> ModelComparison:
    """Cross-validated scores of one pipeline predicting ``target`` from ``features`` (default:
    every column present in both tables except the target), on each table.

    A table longer than ``max_rows`` is judged on a seeded random sample of that many records
    (``rows`` says how many were used): the scores settle long before, the time does not.
    """
    require_columns(original, [target], where="target")
    require_columns(release, [target], where="target (in the release)")
    if features is None:
        features = [c for c in release.columns if c in original.columns and c != target]
    else:
        require_columns(original, list(features), where="features")
        require_columns(release, list(features), where="features (in the release)")
    if not features:
        raise ParameterError(f"no feature column to predict {target!r} from; name --features")
    task = _task(original[target].dropna())
    columns = [*features, target]
    before = _sample(original[columns].dropna(subset=[target]), max_rows, random_state)
    after = _sample(release[columns].dropna(subset=[target]), max_rows, random_state)
    first = _scores(before, target, task, random_state)
    second = _scores(after, target, task, random_state)
    metrics = ("accuracy", "roc_auc") if task == "classification" else ("r2", "mae")
    return ModelComparison(
        target=target,
        task=task,
        features=tuple(features),
        metrics=metrics,
        scores={
            "original": {m: first[m] for m in metrics},
            "release": {m: second[m] for m in metrics},
            "baseline": {m: first[f"baseline_{m}"] for m in metrics},
        },
        rows={"original": len(before), "release": len(after)},
        sampled=max_rows is not None and max(len(original), len(release)) > max_rows,
    )

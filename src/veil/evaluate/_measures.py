"""Fidelity, utility on real holdout rows, and distance-based privacy of a release.

Fidelity: per column the Kolmogorov-Smirnov statistic (numbers) or the total variation
distance (categories), 0 the same distribution, 1 disjoint; the mean absolute difference of the
association matrices (Pearson between numbers, Cramér's V between categories, the correlation
ratio between a number and a category); a detection score: the ROC-AUC of a classifier telling
original rows from release rows (0.5: indistinguishable).

Utility: a model trained on the release and tested on real holdout rows (TSTR) beside the same
model trained on the real training rows (TRTR): accuracy, F1, ROC-AUC.

Privacy: distance to closest record (DCR) of each release row: the share closer to a sample of
the training rows than to as many holdout rows (equal sizes, so 50% is ideal), and the median
DCR to all training and to all holdout rows; exact copies of a training row; a
membership-inference advantage (training rows and holdout rows told apart by their distance to
the nearest release row: 2 AUC - 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from veil.exceptions import InputError
from veil.risk.tables import Prepared

_DETECTION_ROWS = 5_000


# ------------------------------------------------------------------------------- fidelity
def column_fidelity(prepared: Prepared) -> dict[str, dict[str, Any]]:
    """Per column: the KS statistic (numbers) or the total variation distance (categories)
    between the training rows and the release, 0 the same distribution, 1 disjoint."""
    out = {}
    for name in prepared.columns:
        real, released = prepared.train[name], prepared.release[name]
        if prepared.kinds[name] == "numeric":
            a, b = real.dropna().to_numpy(), released.dropna().to_numpy()
            value = float(stats.ks_2samp(a, b).statistic) if len(a) and len(b) else 1.0
            out[name] = {"statistic": "ks", "value": value}
        else:
            p = real.value_counts(normalize=True, dropna=False)
            q = released.value_counts(normalize=True, dropna=False)
            both = p.index.union(q.index)
            tvd = 0.5 * float(
                np.abs(p.reindex(both, fill_value=0) - q.reindex(both, fill_value=0)).sum()
            )
            out[name] = {"statistic": "tvd", "value": tvd}
    return out


def associations(frame: pd.DataFrame, kinds: dict[str, str]) -> pd.DataFrame:
    """Pairwise association in [0, 1] (|Pearson|, Cramér's V, correlation ratio)."""
    names = list(frame.columns)
    matrix = pd.DataFrame(np.eye(len(names)), index=names, columns=names)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            value = _association(frame[a], frame[b], kinds[a], kinds[b])
            matrix.loc[a, b] = matrix.loc[b, a] = value
    return matrix


def _association(x: pd.Series, y: pd.Series, kx: str, ky: str) -> float:
    present = x.notna() & y.notna()
    x, y = x[present], y[present]
    if len(x) < 3:
        return 0.0
    if kx == ky == "numeric":
        if x.std() == 0 or y.std() == 0:
            return 0.0
        return float(abs(np.corrcoef(x.astype(float), y.astype(float))[0, 1]))
    if kx == ky == "categorical":
        table = pd.crosstab(x, y).to_numpy()
        if min(table.shape) < 2:
            return 0.0
        chi2 = stats.chi2_contingency(table, correction=False)[0]
        return float(np.sqrt(chi2 / (table.sum() * (min(table.shape) - 1))))
    numbers, groups = (x, y) if kx == "numeric" else (y, x)
    numbers = numbers.astype(float)
    total = ((numbers - numbers.mean()) ** 2).sum()
    if total == 0:
        return 0.0
    means = numbers.groupby(groups.to_numpy()).transform("mean")
    return float(np.sqrt(((means - numbers.mean()) ** 2).sum() / total))


def _design(
    frames: list[pd.DataFrame], kinds: dict[str, str]
) -> tuple[list[np.ndarray], list[bool]]:
    """Feature matrices for scikit-learn, categories as shared integer codes."""
    columns, categorical = [], []
    for name in frames[0].columns:
        if kinds[name] == "categorical":
            values = pd.concat([f[name] for f in frames], ignore_index=True).astype(object)
            codes = pd.Series(pd.factorize(values, use_na_sentinel=True)[0]).astype(float)
            codes[codes < 0] = np.nan
            columns.append(codes.to_numpy())
            categorical.append(True)
        else:
            columns.append(pd.concat([f[name] for f in frames], ignore_index=True).to_numpy(float))
            categorical.append(False)
    stacked = np.column_stack(columns) if columns else np.empty((sum(map(len, frames)), 0))
    bounds = np.cumsum([0, *map(len, frames)])
    return [stacked[bounds[i] : bounds[i + 1]] for i in range(len(frames))], categorical


def _model(categorical: list[bool], seed: int) -> HistGradientBoostingClassifier:
    # categories coded to at most 255 values are native; more, and they are read as numbers
    return HistGradientBoostingClassifier(
        categorical_features=np.array(categorical) if any(categorical) else None,
        random_state=seed,
        max_iter=100,
    )


def detection_auc(prepared: Prepared, seed: int) -> float:
    """ROC-AUC of a classifier telling training rows from release rows (3-fold, out of fold),
    at least 0.5: 0.5, the release cannot be told from real rows; 1, every row can."""
    rng = np.random.default_rng(seed)
    n = min(len(prepared.train), len(prepared.release), _DETECTION_ROWS)
    real = prepared.train.iloc[rng.choice(len(prepared.train), n, replace=False)]
    fake = prepared.release.iloc[rng.choice(len(prepared.release), n, replace=False)]
    (x_real, x_fake), categorical = _design([real, fake], prepared.kinds)
    x = np.vstack([x_real, x_fake])
    y = np.r_[np.zeros(n), np.ones(n)]
    too_many = [
        c and len(np.unique(x[:, j][~np.isnan(x[:, j])])) > 255 for j, c in enumerate(categorical)
    ]
    categorical = [c and not t for c, t in zip(categorical, too_many, strict=True)]
    folds = StratifiedKFold(3, shuffle=True, random_state=seed)
    proba = cross_val_predict(_model(categorical, seed), x, y, cv=folds, method="predict_proba")
    # below 0.5 only when rows repeat across the two tables and the model memorizes them
    # (the original itself): as SDMetrics' detection metrics, that counts as indistinguishable
    return max(float(roc_auc_score(y, proba[:, 1])), 0.5)


# -------------------------------------------------------------------------------- utility
def check_target(prepared: Prepared, target: str) -> None:
    """Refuse a target that is missing, left out, or not a category, saying why."""
    if target not in prepared.columns:
        why = prepared.left_out.get(target, "not a column of the original")
        raise InputError(f"target {target!r} cannot be predicted: {why}")
    if prepared.kinds[target] != "categorical":
        raise InputError(
            f"target {target!r} is a number with many values: TSTR measures classification "
            "(accuracy, F1, ROC-AUC); give a categorical target"
        )


def utility(prepared: Prepared, target: str, seed: int) -> dict[str, Any]:
    """TSTR and TRTR on the holdout rows for ``target`` (a category)."""
    check_target(prepared, target)
    assert prepared.holdout is not None
    features = [c for c in prepared.columns if c != target]
    train, test, release = (
        f.dropna(subset=[target]) for f in (prepared.train, prepared.holdout, prepared.release)
    )
    (x_train, x_test, x_release), categorical = _design(
        [train[features], test[features], release[features]], prepared.kinds
    )
    classes = train[target].value_counts()
    positive = classes.index[-1]  # the rarer class is the one to find (">50K", "Yes")
    out: dict[str, Any] = {"target": target, "positive": positive, "test_rows": len(test)}
    for name, x, y in (("trtr", x_train, train[target]), ("tstr", x_release, release[target])):
        if y.nunique() < 2:
            out[name] = None
            out[f"{name}_reason"] = "the training table holds one class of the target"
            continue
        model = _model(categorical, seed).fit(x, y.to_numpy())
        predicted = model.predict(x_test)
        truth = test[target].to_numpy()
        binary = len(classes) == 2
        scores: dict[str, float | None] = {
            "accuracy": float(accuracy_score(truth, predicted)),
            "f1": float(
                f1_score(truth, predicted, pos_label=positive, average="binary")
                if binary
                else f1_score(truth, predicted, average="macro")
            ),
        }
        proba = model.predict_proba(x_test)
        known = list(model.classes_)
        if binary and positive in known:
            scores["roc_auc"] = float(
                roc_auc_score(truth == positive, proba[:, known.index(positive)])
            )
        elif not binary and set(np.unique(truth)) <= set(known):
            scores["roc_auc"] = float(roc_auc_score(truth, proba, multi_class="ovr", labels=known))
        else:
            scores["roc_auc"] = None
        out[name] = scores
    return out

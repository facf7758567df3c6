"""A Gaussian copula over the fitted marginals: the columns' dependence kept, on scipy alone
(SDV's ``copulas`` package is under the Business Source License).

Fit: each column's values become normal scores (numbers by their mid-ranks, categories by a
uniform draw inside their frequency interval, as SDV's frequency encoding does), and the
copula is the correlation matrix of those scores (a missing value scores 0, the mean). A
category's interval order is its own choice, and a correlation can only see dependence along
it: the categories are put in the order of the rows' first principal component (optimal
scaling, as in categorical PCA, a few rounds), so occupation and education line up with
income and age instead of sitting in frequency order. Sample: correlated standard normals,
through the normal CDF, through each column's fitted quantile function (``Marginals``);
missing values at each column's rate, independently.

One correlation matrix cannot hold dependence that differs between groups of rows. With
``condition_on`` and ``clusters``, the table is split (by the named columns' values, and by
k-means clusters of the rows' normal scores) and each part gets its own marginals and copula:
a mixture of Gaussian copulas.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import BrokenExecutor
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy import stats

from veil.exceptions import ParameterError
from veil.schema import as_numbers, is_continuous, require_columns
from veil.synth import _second
from veil.synth._marginals import Marginals, in_dtype

#: a group of rows (a combination of ``condition_on``'s values, a cluster) needs this many rows
#: for a copula of its own
MIN_GROUP = 200
#: a value of the first column of ``condition_on`` (the target) needs only this many: the rarer
#: class is the one a model must learn (IBM's HR table: 180 leavers in 1,102 rows; from the
#: whole table's copula, a model trained on the rows told them apart at ROC-AUC 0.55, from a
#: copula of their own 0.71, the real rows 0.75)
MIN_TARGET_GROUP = 50
#: ``clusters="auto"``: the numbers of clusters tried, in turn (stopping after BIC rose twice)
CLUSTER_CANDIDATES = (1, 2, 3, 4, 6, 8, 10, 12, 16)
#: ``clusters="auto"``: rows of the cluster space the Gaussian mixtures are fitted on
BIC_ROWS = 8_000
#: rounds of putting categories in the order of the first principal component
ORDER_ROUNDS = 3


class GaussianCopula(Marginals):
    """Synthetic rows whose columns follow the real marginals and whose dependence follows the
    real rank correlations (``correlation_``, over ``copula_columns_``).

    ``condition_on``: categorical columns (the target a model will predict, and what it depends
    on most); then one copula per combination of their values with at least ``MIN_GROUP`` rows
    (``MIN_TARGET_GROUP`` for a value of the first column alone; marginals and correlations
    learnt from those rows alone), the rarer combinations from the copula of the widest group
    around them that has its own (or the whole table's), rows in the real proportions. Finer
    conditioning keeps more of the dependence, and copies more of the real groups: measure it
    (``veil evaluate``). A single copula blurs how the other columns depend on a category;
    this keeps it.

    ``clusters``: also split the rows into this many k-means clusters of their normal scores
    (within them, the copula's straight-line dependence fits better); parts under
    ``MIN_GROUP`` rows again come from the whole table's copula. On adult, conditioning on
    income with 8 clusters brings a model trained on the synthetic rows to within 2 points
    of one trained on the real rows (bench/bench_synth.py). ``"auto"``: as many as the data
    support, by the Bayesian information criterion of a Gaussian mixture (full covariances)
    fitted to ``BIC_ROWS`` rows of the cluster space for each of ``CLUSTER_CANDIDATES`` in
    turn, stopping once it rose twice (``clusters_``: the number chosen; ``cluster_bic_``:
    each tried and its BIC); 1 means no split. ``veil synth`` uses it by default.
    """

    method = "copula"

    def __init__(
        self,
        *,
        condition_on: str | Sequence[str] | None = None,
        clusters: int | str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        if clusters is not None and clusters != "auto":
            if isinstance(clusters, bool) or not isinstance(clusters, int | np.integer):
                raise ParameterError(
                    f"clusters must be a whole number of at least 2 or 'auto', got {clusters!r}"
                )
            if clusters < 2:
                raise ParameterError(
                    f"clusters must be a whole number of at least 2 or 'auto', got {clusters}"
                )
        self.condition_on = condition_on
        self.clusters = clusters

    def _fit(self, frame: pd.DataFrame, seed: int | None) -> None:
        """Fit the marginals, then the correlation of the columns' normal scores (per value of
        ``condition_on`` and cluster when given)."""
        if self.condition_on is not None or self.clusters is not None:
            self._fit_conditional(frame, seed)
            return
        super()._fit(frame, seed)
        rng = np.random.default_rng(seed)
        self.copula_columns_ = [n for n, m in self.models_.items() if m.kind != "identifier"]
        self.progress("fitting the copula (rank correlations)")
        scores = self._scores(frame, rng)
        for _ in range(ORDER_ROUNDS):
            if not self._order_categories(frame, scores):
                break
            scores = self._scores(frame, rng)
        self.correlation_ = _nearest_correlation(scores)

    def _scores(self, frame: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
        """Each row's normal scores over ``copula_columns_`` (0 where missing)."""
        scores = np.zeros((len(frame), len(self.copula_columns_)))
        for j, name in enumerate(self.copula_columns_):
            u = self.models_[name].to_uniform(frame[name], rng)
            scores[:, j] = np.where(np.isnan(u), 0.0, stats.norm.ppf(u))
        return scores

    def _cluster_space(self, frame: pd.DataFrame, seed: int | None) -> np.ndarray:
        """Rows as points for k-means: categories by their normal scores, numbers by their
        values standardized (winsorized at the 1st and 99th percentiles first), not their
        normal scores: ranks would close the gaps between groups that clustering looks for."""
        points = self._scores(frame, np.random.default_rng(seed))
        for j, name in enumerate(self.copula_columns_):
            if self.models_[name].kind == "category":
                continue
            values = as_numbers(frame[name])
            present = ~np.isnan(values)
            if present.sum() < 2:
                continue
            low, high = np.percentile(values[present], [1, 99])
            clipped = np.clip(values, low, high)
            spread = np.nanstd(clipped) or 1.0
            points[:, j] = np.where(present, (clipped - np.nanmean(clipped)) / spread, 0.0)
        return points

    def _order_categories(self, frame: pd.DataFrame, scores: np.ndarray) -> bool:
        """Put each category column's values in the order of the mean, over their rows, of
        the other columns' scores along the first principal component; True if any moved."""
        loading = np.linalg.eigh(_nearest_correlation(scores))[1][:, -1]
        moved = False
        for j, name in enumerate(self.copula_columns_):
            model = self.models_[name]
            if model.kind != "category" or model.categories is None or len(model.categories) < 3:
                continue  # two values: either order is the same copula
            assert model.probabilities is not None
            rest = np.delete(scores, j, axis=1) @ np.delete(loading, j)
            means = pd.Series(rest).groupby(frame[name].to_numpy(), dropna=True).mean()
            order = np.argsort(
                means.reindex(model.categories).fillna(0.0).to_numpy(), kind="stable"
            )
            if (order != np.arange(len(order))).any():
                model.categories = model.categories[order]
                model.probabilities = model.probabilities[order]
                moved = True
        return moved

    def _fit_conditional(self, frame: pd.DataFrame, seed: int | None) -> None:
        pool = second_process(len(frame))  # started now: its imports overlap the fits below
        names = self._conditions()
        require_columns(frame, names, where="condition_on")
        whole = GaussianCopula(**self._options())
        whole.known_roles = whole._roles(frame)  # the scan, once: identifiers, free text
        identifiers, _, left_out = whole.known_roles
        modelled = [n for n in frame.columns if n not in left_out and n not in identifiers]
        options = {**self._options(), "identifiers": [], "progress": self.progress}
        parts = [frame[n].to_numpy(dtype=object) for n in names]
        early: dict[tuple[Any, ...], Any] = {}
        early_rows: dict[tuple[Any, ...], pd.DataFrame] = {}
        if self.clusters is not None and names and all(_categories(frame[n]) for n in names):
            # a condition's values alone, fitted there while this process fits the whole
            # table and clusters its rows
            early, early_rows = _early_groups(frame, parts, modelled, options, seed, pool)
        try:
            whole.fit(frame, random_state=seed)
            for name in names:
                if whole.models_[name].kind != "category":
                    kind = whole.models_[name].kind
                    raise ParameterError(
                        f"condition_on must name categorical columns; {name!r} is {kind}"
                    )
        except BaseException:
            for future in early.values():
                future.cancel()
            raise
        whole.known_roles = None  # used: a later fit of it scans again
        if modelled != [n for n, m in whole.models_.items() if m.kind != "identifier"]:
            early, early_rows = {}, {}  # not the columns the groups hold: fitted again
        self.parts_: dict[tuple[Any, ...], GaussianCopula] = {}
        self.clusters_ = None if self.clusters is None else 1
        if self.clusters is not None:
            from sklearn.cluster import KMeans

            points = whole._cluster_space(frame, seed)
            if self.clusters == "auto":
                self.progress("choosing how many clusters of rows (BIC of Gaussian mixtures)")
                self.clusters_, self.cluster_bic_ = _chosen_clusters(points, seed)
            else:
                self.clusters_ = int(self.clusters)
            if self.clusters_ > 1:
                self.progress(f"clustering the rows into {self.clusters_}")
                kmeans = KMeans(self.clusters_, n_init=3, random_state=seed)
                parts.append(kmeans.fit_predict(points).astype(object))
        if not parts:  # "auto" found no clusters and nothing is conditioned on: one copula
            del self.parts_
            self.__dict__.update({k: v for k, v in whole.__dict__.items() if k.endswith("_")})
            return
        keys = pd.Series(list(zip(*parts, strict=True)), dtype=object)
        shares = keys.value_counts(normalize=True, dropna=False)
        groups: dict[tuple[Any, ...], pd.DataFrame] = {}
        rows = _rows_by_prefix(keys.tolist())
        for key in shares.index:  # a rare group: the longest leading part of its key that
            for length in range(len(key), 0, -1):  # has enough rows (income before clusters)
                prefix = key[:length]
                if prefix in groups:
                    break
                need = MIN_TARGET_GROUP if length == 1 and names else MIN_GROUP
                if len(rows(prefix)) >= need:
                    if prefix in early_rows:  # the same rows, already sent
                        groups[prefix] = early_rows[prefix]
                        break
                    chosen = np.zeros(len(frame), dtype=bool)
                    chosen[rows(prefix)] = True
                    groups[prefix] = frame.loc[chosen, modelled]
                    break
        labels = {prefix: _label(prefix, names) for prefix in groups}
        self.parts_ = fit_groups(groups, labels, options, seed, self.progress, pool, early)
        self.shares_ = shares
        self.whole_ = whole
        self.models_, self.dtypes_, self.left_out_ = whole.models_, whole.dtypes_, whole.left_out_
        self.copula_columns_, self.correlation_ = whole.copula_columns_, whole.correlation_
        self.n_rows_ = len(frame)

    def _conditions(self) -> list[str]:
        on = self.condition_on
        return [on] if isinstance(on, str) else [str(c) for c in (on or ())]

    def _options(self) -> dict[str, Any]:
        return {
            "candidates": self.candidates,
            "criterion": self.criterion,
            "identifiers": self.identifiers,
            "leave_out": self.leave_out,
            "locale": self.locale,
        }

    def _sample(self, n: int | None, seed: int | None) -> pd.DataFrame:
        if not hasattr(self, "parts_"):
            return super()._sample(n, seed)
        rows = self.n_rows_ if n is None else int(n)
        if rows < 1:
            raise ParameterError(f"n must be at least 1, got {rows}")
        rng = np.random.default_rng(seed)
        counts = rng.multinomial(rows, self.shares_.to_numpy())
        pieces = []
        names = self._conditions()
        for key, count in zip(self.shares_.index, counts, strict=True):
            if count == 0:
                continue
            key = cast(tuple[Any, ...], key)
            seed_part = int(rng.integers(2**31))
            prefix = next((key[:n] for n in range(len(key), 0, -1) if key[:n] in self.parts_), ())
            part = self.parts_.get(prefix, self.whole_)
            piece = part.sample(count, random_state=seed_part)[part_columns(self)]
            if len(prefix) < len(names):  # a rare group: its values set on rows of a wider one
                for name, component in zip(names, key[: len(names)], strict=False):
                    piece[name] = np.full(count, component, dtype=object)
            pieces.append(piece)
        body = pd.concat(pieces, ignore_index=True).iloc[rng.permutation(rows)]
        body = body.reset_index(drop=True)
        out = {}
        for column, model in self.models_.items():
            if model.kind == "identifier":  # new keys for every row, once, across the parts
                out[column] = self._fresh(model, rows, rng, rng.random(rows) < model.missing)
            elif model.kind == "category":
                out[column] = in_dtype(body[column], self.dtypes_[column])
            else:
                out[column] = body[column]
        return pd.DataFrame(out)

    def describe(self) -> list[str]:
        """One line per column: how it was modelled (for the CLI and the report)."""
        lines = super().describe()
        if hasattr(self, "parts_"):
            split = [", ".join(self._conditions())] if self._conditions() else []
            if self.clusters_ is not None and self.clusters_ > 1:
                split.append(f"{self.clusters_} k-means clusters of rows")
            full = sum(len(k) == len(next(iter(self.shares_.index))) for k in self.parts_)
            need = f"{MIN_GROUP} rows"
            if self._conditions():
                need += f" ({MIN_TARGET_GROUP} for a value of {self._conditions()[0]})"
            lines.append(
                f"one copula per group of {' x '.join(split)}: {full} of {len(self.shares_)} "
                f"groups have their own, the rest take the widest group around them with {need}"
            )
        if self.clusters == "auto":
            tried = ", ".join(f"{k}: {bic:,.0f}" for k, bic in self.cluster_bic_)
            chosen = "no split" if self.clusters_ == 1 else f"{self.clusters_} clusters"
            rows = min(BIC_ROWS, self.n_rows_)
            lines.append(
                f"{chosen}, chosen by the BIC of a Gaussian mixture on {rows:,} rows "
                f"(lowest wins; tried {tried}; a cluster needs {MIN_GROUP} rows on average)"
            )
        return lines

    def _uniforms(self, rows: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        if not self.copula_columns_:
            return {}
        factor = np.linalg.cholesky(self.correlation_)
        normals = rng.standard_normal((rows, len(self.copula_columns_))) @ factor.T
        u = stats.norm.cdf(normals)
        return {name: u[:, j] for j, name in enumerate(self.copula_columns_)}


def _chosen_clusters(points: np.ndarray, seed: int | None) -> tuple[int, list[tuple[int, float]]]:
    """The number of clusters the rows' ``points`` support: the lowest BIC of a Gaussian
    mixture with full covariances over ``CLUSTER_CANDIDATES`` tried in turn (stopping once it
    rose twice), each with at least ``MIN_GROUP`` rows a cluster on average; with every BIC
    tried."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture

    rng = np.random.default_rng(seed)
    fitted = points
    if len(points) > BIC_ROWS:
        fitted = points[rng.choice(len(points), BIC_ROWS, replace=False)]
    tried: list[tuple[int, float]] = []
    rises = 0
    for k in CLUSTER_CANDIDATES:
        if k > 1 and k * MIN_GROUP > len(points):
            break
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # a few rounds are enough here
            mixture = GaussianMixture(
                k, covariance_type="full", max_iter=30, tol=1e-2, random_state=seed
            ).fit(fitted)
        tried.append((k, float(mixture.bic(fitted))))
        rises = rises + 1 if len(tried) > 1 and tried[-1][1] > min(b for _, b in tried[:-1]) else 0
        if rises == 2:
            break
    best = min(tried, key=lambda t: t[1])[0]
    return best, tried


#: Rows below which a mixture's copulas are all fitted in this process (a second process costs
#: ~0.9 s to start: scipy and pandas imported again)
PARALLEL_ROWS = 10_000


def second_process(rows: int) -> Any:
    """The second process to fit a mixture's copulas in (``veil.synth._second``), started now
    if it is not running, so that its imports overlap the work before the groups' fits; None
    with one core or under ``PARALLEL_ROWS`` rows."""
    import os

    if (os.cpu_count() or 1) < 2 or rows < PARALLEL_ROWS:
        return None
    return _second.executor()


def fit_groups(
    groups: dict[tuple[Any, ...], pd.DataFrame],
    labels: dict[tuple[Any, ...], str],
    options: dict[str, Any],
    seed: int | None,
    progress: Any,
    pool: Any = None,
    started: dict[tuple[Any, ...], Any] | None = None,
) -> dict[tuple[Any, ...], GaussianCopula]:
    """A copula of each group's rows, in the groups' order. Each fit reads only its rows and
    ``seed``, so the fits are independent and give the same models wherever they run (tested).

    Given a ``pool`` (``second_process``), the two processes take the largest group left,
    each as soon as it is free: this process fits one, the second process is sent the next
    when its last is done (a thread of this process sends it). ``started``: groups the
    second process was already sent (a condition's value alone, fitted while the rows were
    clustered: ``_early_groups``); those not among ``groups`` are not waited for.

    On adult with income and 8 clusters, the 16 groups' fits took 4.0 of the whole process's
    7.3-7.4 seconds one after the other."""
    order = sorted(groups, key=lambda g: -len(groups[g]))
    early = started or {}
    futures = {g: f for g, f in early.items() if g in groups}
    left = [g for g in order if g not in futures]
    # re-entrant: a future already done runs its callback at once, in the thread adding it
    lock = threading.RLock()
    state = {"stopped": False, "busy": 0}
    quiet = {**options, "progress": None}

    def send_next(done: Any = None) -> None:
        """Keep the second process at one group: called as one of its fits ends."""
        with lock:
            if done is not None:
                state["busy"] -= 1
            while not state["stopped"] and left and state["busy"] < 1:
                group = left.pop(0)
                try:
                    future = pool.submit(_fit_group, groups[group], quiet, seed)
                except RuntimeError:  # the second process is gone: fitted here
                    left.insert(0, group)
                    state["stopped"] = True
                    return
                futures[group] = future
                state["busy"] += 1
                future.add_done_callback(send_next)

    if pool is not None and len(groups) > 1:
        with lock:
            for future in early.values():
                if not future.done():
                    state["busy"] += 1
                    future.add_done_callback(send_next)
        send_next()
    fitted: dict[tuple[Any, ...], GaussianCopula] = {}
    try:
        while True:
            with lock:
                if not left:
                    state["stopped"] = True
                    break
                group = left.pop(0)
            progress(f"fitting the copula of {labels[group]}")
            fitted[group] = GaussianCopula(**options).fit(groups[group], random_state=seed)
        for group, future in futures.items():
            progress(f"fitting the copula of {labels[group]} (in a second process)")
            try:
                fitted[group] = future.result()
            except BrokenExecutor:  # its worker died (killed, out of memory): fitted here
                fitted[group] = GaussianCopula(**options).fit(groups[group], random_state=seed)
            fitted[group].progress = progress
    finally:
        with lock:
            state["stopped"] = True
        for future in [*futures.values(), *early.values()]:  # on an error: none left queued
            future.cancel()
    return {group: fitted[group] for group in groups}


#: At most this many condition values are fitted before the clusters are known.
EARLY_GROUPS = 4


def _categories(series: pd.Series) -> bool:
    """Whether the marginals will model ``series`` as categories (as ``Marginals`` decides)."""
    return not is_continuous(series.dropna())


def _early_groups(
    frame: pd.DataFrame,
    values: list[np.ndarray],
    modelled: list[str],
    options: dict[str, Any],
    seed: int | None,
    pool: Any,
) -> tuple[dict[tuple[Any, ...], Any], dict[tuple[Any, ...], pd.DataFrame]]:
    """Each condition's value alone (income <=50K, >50K) sent to the second process before
    the rows are clustered: a cluster too small for a copula of its own takes its value's,
    and these do not wait for the clusters. (futures, their rows: the same rows the groups
    are made of, so a group chosen later is this one.)"""
    if pool is None:
        return {}, {}
    need = MIN_TARGET_GROUP if len(values) == 1 else MIN_GROUP
    keys = list(zip(*values, strict=True))
    rows = _rows_by_prefix(keys)
    if sum(len(rows(key)) >= need for key in dict.fromkeys(keys)) > EARLY_GROUPS:
        return {}, {}  # many values: most would not be needed
    quiet = {**options, "progress": None}
    futures: dict[tuple[Any, ...], Any] = {}
    made: dict[tuple[Any, ...], pd.DataFrame] = {}
    for key in dict.fromkeys(keys):
        if len(rows(key)) < need:
            continue
        chosen = np.zeros(len(frame), dtype=bool)
        chosen[rows(key)] = True
        made[key] = frame.loc[chosen, modelled]
        try:
            futures[key] = pool.submit(_fit_group, made[key], quiet, seed)
        except RuntimeError:  # the second process is gone: the groups are fitted later
            return {}, {}
    return futures, made


def _fit_group(rows: pd.DataFrame, options: dict[str, Any], seed: int | None) -> GaussianCopula:
    """One group's copula, fitted in a second process (silent: ``options`` has no progress,
    and a callable of this process could not travel there)."""
    return GaussianCopula(**options).fit(rows, random_state=seed)


def _rows_by_prefix(keys: list[tuple[Any, ...]]) -> Callable[[tuple[Any, ...]], list[int]]:
    """The rows whose key starts with a prefix, found in one pass over the keys per prefix
    length (a dict of prefixes: the same equality as comparing each key's prefix)."""
    by_length: dict[int, dict[tuple[Any, ...], list[int]]] = {}

    def rows(prefix: tuple[Any, ...]) -> list[int]:
        size = len(prefix)
        if size not in by_length:
            found: dict[tuple[Any, ...], list[int]] = {}
            for i, key in enumerate(keys):
                found.setdefault(key[:size], []).append(i)
            by_length[size] = found
        return by_length[size].get(prefix, [])

    return rows


def _label(key: tuple[Any, ...], names: list[str]) -> str:
    shown = [f"{n}={v}" for n, v in zip(names, key, strict=False)]
    return ", ".join(shown + ([f"cluster {key[-1]}"] if len(key) > len(names) else []))


def part_columns(model: GaussianCopula) -> list[str]:
    return [n for n, m in model.models_.items() if m.kind != "identifier"]


def _nearest_correlation(scores: np.ndarray) -> np.ndarray:
    """The correlation matrix of ``scores``, made positive definite (eigenvalues at least
    1e-6, unit diagonal) so it has a Cholesky factor."""
    if scores.shape[1] == 1:
        return np.ones((1, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = np.corrcoef(scores, rowvar=False)
    matrix = np.nan_to_num(matrix, nan=0.0)  # a constant column correlates with nothing
    np.fill_diagonal(matrix, 1.0)
    values, vectors = np.linalg.eigh(matrix)
    matrix = (vectors * np.maximum(values, 1e-6)) @ vectors.T
    scale = np.sqrt(np.diag(matrix))
    return matrix / np.outer(scale, scale)

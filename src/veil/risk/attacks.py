"""The three attacks of the Article 29 Working Party's Opinion 05/2014 on anonymisation, as
Anonymeter (Giomi et al., PoPETs 2023) defines and measures them, on veil's own engine.

Anonymeter itself pins numpy < 1.27 and cannot be installed beside veil; bench/ runs it in its
own environment on the same data and seeds. Each attack is run three times: on the training rows
(the release was made from them), on control rows (real, not used: the holdout) and as a naive
baseline; the risk is the attack's success beyond the control's, (a - c) / (1 - c), with the
Wilson-score error of both rates propagated into a 95% interval.

- Singling out (multivariate): predicates on 3 columns built from release rows (a number above
  or below the release's median, a category equal) that match exactly one release row; success
  when one matches exactly one training row. The control's count is corrected for its size by
  Anonymeter's model of singling out against table size (Cohen and Nissim 2020), fitted as
  Anonymeter fits it: on 5 subsamples of the control at each of 10 sizes from 1,000 rows (or
  all of a smaller control) to all of it.
- Linkability: the columns split in two halves; a target's nearest release row on each half;
  success when both are the same row (the release links the halves).
- Inference: a secret column (the target) guessed from the nearest release row on the others;
  success when equal (categories) or within 5% (numbers).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from math import sqrt
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import curve_fit

from veil.risk.distance import Encoder, category_codes, nearest
from veil.risk.tables import Prepared, risk_label

N_ATTACKS = 500
N_COLUMNS = 3
_MAX_ATTEMPTS = 10_000_000  # Anonymeter's default
_BITSET_BYTES = 512 * 2**20  # above this, queries are counted one by one
_SLOW_ATTEMPTS = 200_000
_BATCH = 1000
_Z = float(stats.norm.ppf(0.975))


@dataclass
class AttackRisk:
    """An attack's residual success over the control: the risk and its 95% interval."""

    risk: float
    ci: tuple[float, float]
    attack_rate: float
    control_rate: float
    baseline_rate: float
    n_attacks: int
    detail: dict[str, Any] = field(default_factory=dict)  # what the attack used (columns)

    def to_dict(self) -> dict[str, Any]:
        """The risk, its interval, the three rates and what the attack used."""
        return {
            "risk": self.risk,
            "ci": list(self.ci),
            "label": risk_label(self.ci),
            "attack_rate": self.attack_rate,
            "control_rate": self.control_rate,
            "baseline_rate": self.baseline_rate,
            "n_attacks": self.n_attacks,
            **self.detail,
        }


def _wilson(n: int, success: float) -> tuple[float, float]:
    variance = success * (n - success) / n
    denominator = n + _Z**2
    return (success + 0.5 * _Z**2) / denominator, _Z / denominator * sqrt(variance + 0.25 * _Z**2)


def risk_of(n: int, success: float, control: float, baseline: float) -> AttackRisk:
    """Anonymeter's residual risk with its propagated Wilson errors, bound to [0, 1]."""
    a, da = _wilson(n, success)
    c, dc = _wilson(n, control)
    b, _ = _wilson(n, baseline)
    if c >= 1:
        value, error = 0.0, 1.0
    else:
        value = (a - c) / (1 - c)
        error = sqrt((da / (1 - c)) ** 2 + (dc * (a - 1) / (1 - c) ** 2) ** 2)

    def bound(x: float) -> float:  # Anonymeter's bind_value: every figure within [0, 1]
        return min(max(x, 0.0), 1.0)

    return AttackRisk(bound(value), (bound(value - error), bound(value + error)), a, c, b, n)


# ---------------------------------------------------------------------------- singling out
class _Table:
    """A deduplicated table as arrays: numbers as floats, categories as shared codes."""

    def __init__(self, frame: pd.DataFrame, kinds: dict[str, str], codes: dict[str, dict]) -> None:
        frame = frame.drop_duplicates().reset_index(drop=True)
        self.rows = len(frame)
        self.columns: dict[str, np.ndarray] = {}
        for name in frame.columns:
            if kinds[name] == "numeric":
                self.columns[name] = frame[name].to_numpy(dtype=float)
            else:
                self.columns[name] = category_codes(frame[name], codes.setdefault(name, {}))

    def count(
        self, query: tuple[tuple[str, str, float], ...], rows: np.ndarray | None = None
    ) -> int:
        mask = None
        for name, op, value in query:
            column = self.columns[name] if rows is None else self.columns[name][rows]
            if op == "isnull":
                hit = np.isnan(column) if column.dtype.kind == "f" else column == -1
            elif op == "==":
                hit = column == value
            elif op == "!=":
                hit = column != value
            elif op == ">=":
                hit = column >= value
            elif op == "<=":
                hit = column <= value
            elif op == ">":
                hit = column > value
            else:
                hit = column < value
            mask = hit if mask is None else mask & hit
        return int(mask.sum()) if mask is not None else 0


def _targets(frame: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    return frame.iloc[rng.choice(len(frame), n, replace=False)]


def singling_out(prepared: Prepared, seed: int, n_attacks: int = N_ATTACKS) -> AttackRisk:
    """Multivariate singling out (``N_COLUMNS`` columns), as Anonymeter's evaluator."""
    assert prepared.holdout is not None
    rng = np.random.default_rng(seed)
    codes: dict[str, dict] = {}
    release = _Table(prepared.release, prepared.kinds, codes)
    train = _Table(prepared.train, prepared.kinds, codes)
    control = _Table(prepared.holdout, prepared.kinds, codes)
    names = list(prepared.columns)
    width = min(N_COLUMNS, len(names))
    medians = {
        n: float(np.nanmedian(release.columns[n])) for n in names if prepared.kinds[n] == "numeric"
    }
    queries = _singling_queries(release, prepared.kinds, names, width, medians, n_attacks, rng)
    success = sum(train.count(q) == 1 for q in queries)
    on_control = float(sum(control.count(q) == 1 for q in queries))
    if control.rows != train.rows and queries:  # a query singles out more often in fewer rows
        on_control *= _size_correction(control, queries, train.rows, rng)
    baseline = 0
    for _ in range(n_attacks):  # random predicates, as an attacker without the release
        parts = []
        for name in rng.choice(names, size=width, replace=False):
            values = np.unique(release.columns[name])
            value = float(values[rng.integers(len(values))])
            ops = (
                ("==", "!=")
                if prepared.kinds[name] == "categorical"
                else ("==", "!=", ">", "<", ">=", "<=")
            )
            parts.append((str(name), str(ops[rng.integers(len(ops))]), value))
        baseline += train.count(tuple(parts)) == 1
    return risk_of(n_attacks, success, min(on_control, float(n_attacks)), baseline)


Query = tuple[tuple[str, str, float], ...]


def _query(parts: list[tuple[str, str, float]]) -> Query:
    return tuple(sorted(parts))


def _part(name: str, kind: str, value: float, median: float | None) -> tuple[str, str, float]:
    """Anonymeter's predicate from a record's value: missing is null; a number is ``>=`` itself
    above the median, ``<=`` at or below it; a category is equal."""
    if kind == "numeric":
        if np.isnan(value):
            return (name, "isnull", 0.0)
        return (name, ">=" if value > (median or 0.0) else "<=", float(value))
    return (name, "isnull" if value == -1 else "==", float(value))


def _singling_queries(
    release: _Table,
    kinds: dict[str, str],
    names: list[str],
    width: int,
    medians: dict[str, float],
    n_attacks: int,
    rng: np.random.Generator,
) -> list[Query]:
    """Up to ``n_attacks`` distinct queries that single out one release row, drawn as
    Anonymeter draws them (a random release row, ``width`` random columns), trying up to
    Anonymeter's 10 million times. Each column's rows are held as bit sets (equal to each value;
    for numbers also at least and at most it), so a batch of 1,000 tries is counted with a few
    ANDs and popcounts rather than a pass over the release per try."""
    if not _can_single_out(release, names, width):
        return []  # every row shares its values on any columns with another: nothing to find
    bits = _Bitsets.of(release, kinds, names)
    # counted one by one (a release too large for the bit sets), Anonymeter's 10 million tries
    # would take hours: such a release gets the tries of old, and fewer queries may be found
    limit = _MAX_ATTEMPTS if bits is not None else _SLOW_ATTEMPTS
    queries: list[Query] = []
    seen: set[Query] = set()
    tried: set[tuple[int, ...]] = set()  # (row, columns...) pairs that single out, once each
    space = release.rows * math.comb(len(names), width)
    attempts = 0
    while len(queries) < n_attacks and attempts < limit:
        rows = rng.integers(release.rows, size=_BATCH)
        chosen = np.argsort(rng.random((_BATCH, len(names))), axis=1)[:, :width]
        if bits is not None:
            singles = np.flatnonzero(bits.count(rows, chosen, medians) == 1)
        else:
            singles = np.arange(_BATCH)
        for i in singles:
            row = int(rows[i])
            pair = (row, *sorted(chosen[i].tolist()))
            if pair in tried:
                continue
            tried.add(pair)
            query = _query(
                [
                    _part(
                        names[j],
                        kinds[names[j]],
                        release.columns[names[j]][row],
                        medians.get(names[j]),
                    )
                    for j in chosen[i]
                ]
            )
            if query in seen or (bits is None and release.count(query) != 1):
                continue
            seen.add(query)
            queries.append(query)
            if len(queries) == n_attacks:
                break
        attempts += _BATCH
        if len(tried) >= space:  # every (row, columns) pair was tried: no new query is left
            break
    return queries


def _can_single_out(release: _Table, names: list[str], width: int) -> bool:
    """Whether some row is alone on its values in some ``width`` columns: a query built from a
    row matches at least the rows equal to it on its columns (an equality matches them, and so
    does a ``>=`` or ``<=`` from the row's own value), so where no row is alone, no query can
    single one out, and Anonymeter's 10 million tries would all fail (a table of a few
    categories). Checked over every set of columns, up to 2,000 sets (more: assumed)."""
    subsets = list(itertools.islice(itertools.combinations(names, width), 2001))
    if len(subsets) > 2000:
        return True
    for subset in subsets:
        stacked = np.column_stack([release.columns[n].astype(float) for n in subset])
        _, counts = np.unique(stacked, axis=0, return_counts=True)
        if counts.min() == 1:
            return True
    return False


@dataclass
class _Bitsets:
    """A table's columns as bit sets of rows, per distinct value: ``equal`` (missing included,
    as a value of its own) and, for numbers, ``at_least`` and ``at_most`` (missing excluded)."""

    names: list[str]
    distinct: list[np.ndarray]  # per column, its sorted distinct values
    index: list[np.ndarray]  # per column, each row's distinct-value index
    missing: list[int]  # per column, the index of the missing value, or -1
    equal: list[np.ndarray]  # per column (distinct, words) uint64
    at_least: list[np.ndarray | None]
    at_most: list[np.ndarray | None]

    @classmethod
    def of(cls, table: _Table, kinds: dict[str, str], names: list[str]) -> _Bitsets | None:
        words = (table.rows + 63) // 64
        sizes = [
            len(np.unique(table.columns[n])) * (3 if kinds[n] == "numeric" else 1) for n in names
        ]
        if sum(sizes) * words * 8 > _BITSET_BYTES:
            return None
        out = cls(names, [], [], [], [], [], [])
        for name in names:
            values = table.columns[name]
            distinct, inverse = np.unique(values, return_inverse=True)
            if kinds[name] == "numeric":
                nan = np.flatnonzero(np.isnan(distinct))
            else:
                nan = np.flatnonzero(distinct == -1)
            missing = int(nan[0]) if len(nan) else -1
            equal = np.zeros((len(distinct), words), dtype=np.uint64)
            rows = np.arange(table.rows)
            bit = np.left_shift(np.uint64(1), (rows % 64).astype(np.uint64))
            np.bitwise_or.at(equal, (inverse.reshape(-1), rows // 64), bit)
            out.distinct.append(distinct)
            out.index.append(inverse.reshape(-1))
            out.missing.append(missing)
            out.equal.append(equal)
            if kinds[name] == "numeric":
                present = equal.copy()
                if missing >= 0:
                    present[missing] = 0
                out.at_least.append(np.bitwise_or.accumulate(present[::-1], axis=0)[::-1])
                out.at_most.append(np.bitwise_or.accumulate(present, axis=0))
            else:
                out.at_least.append(None)
                out.at_most.append(None)
        return out

    def count(self, rows: np.ndarray, chosen: np.ndarray, medians: dict[str, float]) -> np.ndarray:
        """How many rows each query (row ``rows[i]``'s values on columns ``chosen[i]``) matches."""
        total: np.ndarray | None = None
        for slot in range(chosen.shape[1]):
            sets = np.empty((len(rows), self.equal[0].shape[1]), dtype=np.uint64)
            for j, name in enumerate(self.names):
                pick = np.flatnonzero(chosen[:, slot] == j)
                if not len(pick):
                    continue
                value = self.index[j][rows[pick]]
                sets[pick] = self.equal[j][value]
                at_least, at_most = self.at_least[j], self.at_most[j]
                if at_least is not None and at_most is not None:
                    numbers = value != self.missing[j]
                    above = numbers & (self._values(j, value) > medians[name])
                    below = numbers & ~above
                    sets[pick[above]] = at_least[value[above]]
                    sets[pick[below]] = at_most[value[below]]
            total = sets if total is None else total & sets
        assert total is not None
        return np.bitwise_count(total).sum(axis=1)

    def _values(self, j: int, value: np.ndarray) -> np.ndarray:
        return self.distinct[j][value]


def _probability_integral(n: np.ndarray, w: float) -> np.ndarray:
    """Integral over query weights 0..w of n w (1 - w)^(n - 1) (Cohen and Nissim 2020)."""
    return (1 - (n * w + 1) * (1 - w) ** n) / (n + 1)


def _size_correction(control: _Table, queries: list, rows: int, rng: np.random.Generator) -> float:
    """How much more often the queries single out in ``rows`` rows than in the control's
    size, from the model fitted on subsamples of the control."""
    sizes, hits = [], []
    # Anonymeter's design: 10 sizes from 1,000 rows (or the whole control, if smaller) to all of
    # it, 5 subsamples each. (Fitting from a tenth of the control instead erred low: the
    # audit measured 0.036 where Anonymeter measured 0.121 on the same split.)
    for size in np.linspace(min(1000, control.rows), control.rows, 10).astype(int):
        for _ in range(5):
            subset = rng.choice(control.rows, size, replace=False)
            sizes.append(size)
            hits.append(sum(control.count(q, subset) == 1 for q in queries))
    x, y = np.array(sizes, dtype=float), np.array(hits, dtype=float)

    def model(n: np.ndarray, w: float, norm: float) -> np.ndarray:
        return norm * _probability_integral(n, w)

    guess_w = 1 / x.max()
    guess_norm = 1 / float(_probability_integral(np.array([x.max()]), guess_w)[0])
    try:
        (w, norm), _ = curve_fit(model, x, y, p0=(guess_w, guess_norm), bounds=(0, (1, np.inf)))
    except (RuntimeError, ValueError):
        return 1.0
    at = model(np.array([float(rows), float(control.rows)]), w, norm)
    return float(at[0] / at[1]) if at[1] > 0 else 1.0


# ----------------------------------------------------------------- linkability, inference
def linkability(prepared: Prepared, seed: int, n_attacks: int = N_ATTACKS) -> AttackRisk:
    """Can the release link two halves of a person's record?"""
    assert prepared.holdout is not None
    rng = np.random.default_rng(seed)
    names = list(rng.permutation(prepared.columns))
    halves = names[: len(names) // 2], names[len(names) // 2 :]
    n = min(n_attacks, len(prepared.train), len(prepared.holdout))

    encoders = [Encoder(prepared.train[half], prepared.kinds) for half in halves]
    released = [e.encode(prepared.release[h]) for e, h in zip(encoders, halves, strict=True)]

    def linked(targets: pd.DataFrame) -> int:
        found = [
            nearest(e.encode(targets[h]), r)[1]
            for e, h, r in zip(encoders, halves, released, strict=True)
        ]
        return int((found[0] == found[1]).sum())

    success = linked(_targets(prepared.train, n, rng))
    control = linked(_targets(prepared.holdout, n, rng))
    rows = len(prepared.release)
    baseline = int((rng.integers(rows, size=n) == rng.integers(rows, size=n)).sum())
    measured = risk_of(n, success, control, baseline)
    measured.detail = {"halves": [list(map(str, h)) for h in halves]}
    return measured


def inference(prepared: Prepared, secret: str, seed: int, n_attacks: int = N_ATTACKS) -> AttackRisk:
    """Can the release tell a person's ``secret`` from their other columns?"""
    assert prepared.holdout is not None
    rng = np.random.default_rng(seed)
    aux = [c for c in prepared.columns if c != secret]
    n = min(n_attacks, len(prepared.train), len(prepared.holdout))
    encoder = Encoder(prepared.train[aux], prepared.kinds)
    candidates = encoder.encode(prepared.release[aux])
    secrets = prepared.release[secret].to_numpy()
    numeric = prepared.kinds[secret] == "numeric"

    def right(guesses: np.ndarray, truth: np.ndarray) -> int:
        if numeric:
            guesses, truth = guesses.astype(float), truth.astype(float)
            with np.errstate(invalid="ignore", divide="ignore"):
                hit = np.abs(guesses - truth) / (guesses + 1e-12) <= 0.05
            return int((hit | (np.isnan(guesses) & np.isnan(truth))).sum())
        same = np.array(
            [g == t or (g is None and t is None) for g, t in zip(guesses, truth, strict=True)]
        )
        return int(same.sum())

    def attack(frame: pd.DataFrame) -> int:
        targets = _targets(frame, n, rng)
        _, index = nearest(encoder.encode(targets[aux]), candidates)
        return right(secrets[index], targets[secret].to_numpy())

    success = attack(prepared.train)
    control = attack(prepared.holdout)
    naive = _targets(prepared.train, n, rng)[secret].to_numpy()
    baseline = right(secrets[rng.integers(len(secrets), size=n)], naive)
    return risk_of(n, success, control, baseline)

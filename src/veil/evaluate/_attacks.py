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

from dataclasses import dataclass, field
from math import sqrt
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import curve_fit

from veil.evaluate._distance import Encoder, category_codes, nearest
from veil.evaluate._prepare import Prepared

N_ATTACKS = 500
N_COLUMNS = 3
_MAX_ATTEMPTS = 200_000
_BATCH = 1000
_Z = float(stats.norm.ppf(0.975))


@dataclass
class Risk:
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
        return {"risk": self.risk, "ci": list(self.ci), "label": risk_label(self.ci),
                "attack_rate": self.attack_rate,
                "control_rate": self.control_rate, "baseline_rate": self.baseline_rate,
                "n_attacks": self.n_attacks, **self.detail}  # fmt: skip


def _wilson(n: int, success: float) -> tuple[float, float]:
    variance = success * (n - success) / n
    denominator = n + _Z**2
    return (success + 0.5 * _Z**2) / denominator, _Z / denominator * sqrt(variance + 0.25 * _Z**2)


def risk_of(n: int, success: float, control: float, baseline: float) -> Risk:
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

    return Risk(bound(value), (bound(value - error), bound(value + error)), a, c, b, n)


def risk_label(ci: tuple[float, float] | list[float]) -> str:
    """What the interval (not the point) says: ``low`` when it stays under 5%, ``high`` when it
    starts at 10% or more, ``moderate`` when it lies between, else ``uncertain`` (it reaches
    past 5%: too few attacks, or too few rows, to call it low)."""
    low, high = ci
    if high < 0.05:
        return "low"
    if low >= 0.1:
        return "high"
    return "moderate" if low >= 0.05 else "uncertain"


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

    def count(self, query: tuple[tuple[str, str, float], ...], rows: np.ndarray | None = None
              ) -> int:  # fmt: skip
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


def singling_out(prepared: Prepared, seed: int, n_attacks: int = N_ATTACKS) -> Risk:
    """Multivariate singling out (``N_COLUMNS`` columns), as Anonymeter's evaluator."""
    assert prepared.holdout is not None
    rng = np.random.default_rng(seed)
    codes: dict[str, dict] = {}
    release = _Table(prepared.release, prepared.kinds, codes)
    train = _Table(prepared.train, prepared.kinds, codes)
    control = _Table(prepared.holdout, prepared.kinds, codes)
    names = list(prepared.columns)
    width = min(N_COLUMNS, len(names))
    medians = {n: float(np.nanmedian(release.columns[n])) for n in names
               if prepared.kinds[n] == "numeric"}  # fmt: skip
    queries: list[tuple[tuple[str, str, float], ...]] = []
    seen: set[tuple[tuple[str, str, float], ...]] = set()
    attempts = 0
    while len(queries) < n_attacks and attempts < _MAX_ATTEMPTS:
        for _ in range(_BATCH):
            row = int(rng.integers(release.rows))
            chosen = rng.choice(names, size=width, replace=False)
            parts = []
            for name in chosen:
                value = release.columns[name][row]
                if prepared.kinds[name] == "numeric":
                    if np.isnan(value):
                        parts.append((str(name), "isnull", 0.0))
                    else:
                        parts.append(
                            (str(name), ">=" if value > medians[name] else "<=", float(value))
                        )
                else:
                    parts.append((str(name), "isnull" if value == -1 else "==", float(value)))
            query = tuple(sorted(parts))
            if query not in seen and release.count(query) == 1:
                seen.add(query)
                queries.append(query)
                if len(queries) == n_attacks:
                    break
        attempts += _BATCH
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
            ops = ("==", "!=") if prepared.kinds[name] == "categorical" else (
                "==", "!=", ">", "<", ">=", "<=")  # fmt: skip
            parts.append((str(name), str(ops[rng.integers(len(ops))]), value))
        baseline += train.count(tuple(parts)) == 1
    return risk_of(n_attacks, success, min(on_control, float(n_attacks)), baseline)


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
def linkability(prepared: Prepared, seed: int, n_attacks: int = N_ATTACKS) -> Risk:
    """Can the release link two halves of a person's record?"""
    assert prepared.holdout is not None
    rng = np.random.default_rng(seed)
    names = list(rng.permutation(prepared.columns))
    halves = names[: len(names) // 2], names[len(names) // 2 :]
    n = min(n_attacks, len(prepared.train), len(prepared.holdout))

    encoders = [Encoder(prepared.train[half], prepared.kinds) for half in halves]
    released = [e.encode(prepared.release[h]) for e, h in zip(encoders, halves, strict=True)]

    def linked(targets: pd.DataFrame) -> int:
        found = [nearest(e.encode(targets[h]), r)[1]
                 for e, h, r in zip(encoders, halves, released, strict=True)]  # fmt: skip
        return int((found[0] == found[1]).sum())

    success = linked(_targets(prepared.train, n, rng))
    control = linked(_targets(prepared.holdout, n, rng))
    rows = len(prepared.release)
    baseline = int((rng.integers(rows, size=n) == rng.integers(rows, size=n)).sum())
    measured = risk_of(n, success, control, baseline)
    measured.detail = {"halves": [list(map(str, h)) for h in halves]}
    return measured


def inference(prepared: Prepared, secret: str, seed: int, n_attacks: int = N_ATTACKS) -> Risk:
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

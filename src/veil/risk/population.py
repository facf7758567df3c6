"""Risk beyond the sample: how many people are unique in the *population* a sample of it was
drawn from, and each record's risk when the attacker knows the population but not who is in
the sample (the journalist).

- Population uniqueness, as ARX estimates it (its ``RiskModelPopulationUniqueness``; the
  formulas below follow ARX's implementation, Apache-2.0): Zayatz (1991), Pitman's model
  (Hoshino 2001; maximum likelihood of its two parameters), the slide negative binomial model
  (Chen & Keller-McNulty 1998) and Dankar et al.'s (2012) decision rule between them: Pitman
  when at most 10% was sampled (Zayatz if Pitman finds no estimate), else the smaller of Zayatz
  and SNB.
- Individual risk, as sdcMicro's ``indivRisk`` (Benedetti & Franconi 1998, its "approx"
  method) from each class's sample count f_k and its estimated population count F_k (the sum
  of the sampling weights, or f_k / sampling fraction): with p = f_k / F_k, the risk is
  p/(1-p) log(1/p) for f_k = 1, p/(1-p) - (p/(1-p))^2 log(1/p) for f_k = 2, else
  p / (f_k - (1 - p)); 1/f_k when the class is its whole population (p = 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from veil.exceptions import ParameterError

DANKAR_FRACTION = 0.1  # Dankar et al.: Pitman at or below this sampling fraction


@dataclass(frozen=True)
class PopulationRisk:
    """Estimates for a sample of ``population`` people (``sampling_fraction`` of them)."""

    population: float
    sampling_fraction: float
    sample_uniques: int
    uniques: dict[str, float | None]  # model -> estimated population uniques (count)
    dankar_model: str
    journalist_average: float  # mean individual risk over the records
    journalist_max: float
    records_at_risk: float  # share of records whose individual risk exceeds the threshold
    expected_reidentifications: float  # sum of the individual risks

    def lines(self) -> list[str]:
        """The estimates in sentences (``veil scan``, ``veil check``, the report)."""

        def shown(model: str) -> str:
            value = self.uniques[model]
            if value is None:
                return f"{model}: no estimate"
            return f"{model} {value:,.0f} ({value / self.population:.2%})"

        return [
            f"a sample of {self.sampling_fraction:.2%} of {self.population:,.0f} people: "
            f"{self.sample_uniques:,} records unique in the sample",
            "population uniques estimated: "
            + ", ".join(shown(m) for m in ("pitman", "zayatz", "snb"))
            + f"; Dankar's rule: {shown('dankar')} by "
            f"{self.dankar_model}",
            f"journalist risk (sdcMicro's individual risk): average "
            f"{self.journalist_average:.4f}, highest {self.journalist_max:.4f}; "
            f"{self.expected_reidentifications:,.1f} re-identifications expected",
        ]

    def to_dict(self) -> dict[str, Any]:
        """For ``veil check --format json``, under ``risk``."""
        shares = {m: None if v is None else v / self.population for m, v in self.uniques.items()}
        return {
            "population": self.population,
            "sampling_fraction": self.sampling_fraction,
            "sample_unique_records": self.sample_uniques,  # beside risk's share of them
            "population_uniques": dict(self.uniques),
            "population_uniqueness": shares,
            "dankar_model": self.dankar_model,
            "journalist_average": self.journalist_average,
            "journalist_max": self.journalist_max,
            "journalist_records_at_risk": self.records_at_risk,
            "expected_reidentifications": self.expected_reidentifications,
        }


def sampling(
    rows: int, *, population: float | None = None, sampling_fraction: float | None = None
) -> tuple[float, float]:
    """(population, sampling fraction) from either; one clear line when neither fits."""
    if (population is None) == (sampling_fraction is None):
        raise ParameterError(
            "give the population size (--population N) or the sampling "
            "fraction (--sampling-fraction F), one of them"
        )
    if sampling_fraction is not None:
        if not 0 < sampling_fraction <= 1:
            raise ParameterError(
                f"--sampling-fraction must be in (0, 1], got {sampling_fraction!r}"
            )
        return rows / sampling_fraction, float(sampling_fraction)
    assert population is not None
    if not population >= rows:
        raise ParameterError(
            f"--population {population:g} is smaller than the {rows:,} "
            "records of the sample: give the population they were drawn "
            "from"
        )
    return float(population), rows / population


def histogram(sizes: np.ndarray) -> dict[int, int]:
    """Class size -> number of classes of that size."""
    values, counts = np.unique(np.asarray(sizes, dtype=np.int64), return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts, strict=True) if v > 0}


# ------------------------------------------------------------------------------- Zayatz
def zayatz(classes: dict[int, int], population: float, rows: int) -> float:
    """Zayatz's estimate of the population uniques."""
    from scipy.stats import hypergeom

    u = sum(classes.values())
    c1 = classes.get(1, 0)
    big = round(population)
    total = sum(count / u * hypergeom(big, size, rows).pmf(1) for size, count in classes.items())
    uniqueness = (c1 / u) * hypergeom(big, 1, rows).pmf(1) / total
    return float(c1 * uniqueness / (rows / population))


# ------------------------------------------------------------------------------- Pitman
def pitman_parameters(classes: dict[int, int]) -> tuple[float, float] | None:
    """(theta, alpha) of Pitman's model by maximum likelihood (the score equations solved
    from ARX's starting point), or None when no solution is found."""
    from scipy.optimize import root
    from scipy.special import digamma, polygamma

    u = float(sum(classes.values()))
    n = float(sum(size * count for size, count in classes.items()))
    c1 = float(classes.get(1, 0))
    c2 = float(classes.get(2, 0)) or 1.0  # none of size 2: an overestimate, as ARX does
    c = c1 * (c1 - 1) / c2
    t0 = (n * u * c - c1 * (n - 1) * (2 * u + c)) / (2 * c1 * u + c1 * c - n * c)
    a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * u)
    larger = [(size, count) for size, count in classes.items() if size != 1]

    def score(x: np.ndarray) -> list[float]:
        t, a = float(x[0]), float(x[1])
        if a <= 0 or a >= 1 or t <= -a:
            return [1e6, 1e6]
        spread = digamma(u + t / a) - digamma(t / a + 1)
        o1 = spread / a
        o2 = digamma(n + t) - digamma(t + 1)
        o3 = (u - 1) / a - t / (a * a) * spread
        o4 = sum(count * (digamma(size - a) - digamma(1 - a)) for size, count in larger)
        return [o1 - o2, o3 - o4]

    def jacobian(x: np.ndarray) -> list[list[float]]:
        t, a = float(x[0]), float(x[1])
        trigamma = lambda z: float(polygamma(1, z))  # noqa: E731
        v2, v3 = trigamma((a + t + a * (u - 1)) / a), trigamma(t / a + 1)
        v1, v4 = digamma(u + t / a), digamma(t / a + 1)
        d1 = (v3 - v2) / (a * a)
        d5 = (a * v1 + t * v2 - a * v4 - t * v3) / (a**3)
        d3 = (a * a * (u - 1) - t * t * v2 + t * t * v3 - 2 * a * t * v1 + 2 * a * t * v4) / a**4
        d2 = trigamma(t + 1) - trigamma(n + t)
        d4 = sum(count * (trigamma(1 - a) - trigamma(size - a)) for size, count in larger)
        return [[d2 - d1, -d5], [-d5, -d3 - d4]]

    starts = [(t0, a0), (max(t0, 1.0), 0.5), (u, 0.3), (1.0, 0.1)]
    for start in starts:
        if not (np.isfinite(start[0]) and np.isfinite(start[1])):
            continue
        found = root(score, np.array(start, dtype=float), jac=jacobian, method="hybr")
        t, a = (float(v) for v in found.x)
        if found.success and t >= 0 and 0 < a < 1 and max(map(abs, score(found.x))) < 1e-6:
            return t, a
    return None


def pitman(classes: dict[int, int], population: float) -> float | None:
    """Pitman's estimate of the population uniques: Gamma(t+1)/Gamma(t+a) N^a."""
    fitted = pitman_parameters(classes)
    if fitted is None:
        return None
    t, a = fitted
    value = math.exp(math.lgamma(t + 1) - math.lgamma(t + a) + a * math.log(population))
    return value if 0 <= value <= population else None


# ---------------------------------------------------------------------------------- SNB
def snb_classes(classes: dict[int, int], f: float) -> float:
    """The SNB model's estimate of the non-empty classes in the population (ARX's form)."""
    u = sum(classes.values())
    c1 = classes.get(1, 0)
    var1 = var2 = var3 = var4 = 0.0
    for size, count in classes.items():
        shrunk = (1 - f) ** size * count
        var1 += size * f * f * (1 - f * f) ** (size - 1) * count
        var2 += count * (1 - f * f) ** size - 1  # (1-f)^s (1+f)^s, as ARX sums it
        var3 += shrunk
        var4 += size * f * (1 - f) ** (size - 1) * count
    return u + c1 * (var1 / var2) * (var3 / var4) ** 2


def snb(classes: dict[int, int], f: float) -> float | None:
    """The slide negative binomial model's estimate of the population uniques: K b^a, with
    (a, b) solving its two equations for the sample's classes of size 1 and 2."""
    from scipy.optimize import root

    c1, c2 = float(classes.get(1, 0)), float(classes.get(2, 0))
    k = snb_classes(classes, f)

    def equations(x: np.ndarray) -> list[float]:
        a, b = float(x[0]), float(x[1])
        if a <= 0 or not 0 < b < 1:
            return [1e6, 1e6]
        d = (1 - f) * (1 - b)
        first = k * f * (b / (1 - d)) ** a * (a * d / (1 - d) + 1) - c1
        second = k * a * b**a * f * f * (1 - b) / 2 * (1 - d) ** (a + 2) * (2 - (1 - a) * d) - c2
        return [first, second]

    for a0 in (0.5, 1.0, 2.0, 0.1, 5.0):
        for b0 in (0.5, 0.1, 0.9, 0.01):
            found = root(equations, np.array([a0, b0]), method="hybr")
            a, b = (float(v) for v in found.x)
            if (
                found.success
                and a > 0
                and 0 < b < 1
                and max(map(abs, equations(found.x))) < 1e-6 * max(c1, 1)
            ):
                value = k * b**a
                if math.isfinite(value) and value >= 0:
                    return value
    return None


# ------------------------------------------------------------------------ individual risk
def individual_risk(f_k: np.ndarray, big_f_k: np.ndarray) -> np.ndarray:
    """sdcMicro's individual risk (``indivRisk``, approx) of a class with ``f_k`` sample and
    ``big_f_k`` estimated population members."""
    f = np.asarray(f_k, dtype=float)
    p = np.clip(f / np.maximum(np.asarray(big_f_k, dtype=float), f), 1e-300, 1.0)
    out = np.empty_like(f)
    whole = p >= 1.0
    odds = np.where(whole, 0.0, p / np.where(whole, 1.0, 1 - p))
    log_inverse = np.log(1 / p)
    out = np.where(f > 2, p / (f - (1 - p)), out)
    out = np.where(f == 2, odds - odds**2 * log_inverse, out)
    out = np.where(f == 1, odds * log_inverse, out)
    return np.where(whole, 1 / f, out)


def population_risk(
    sizes: np.ndarray,
    *,
    population: float | None = None,
    sampling_fraction: float | None = None,
    weights: np.ndarray | None = None,
    threshold: float = 0.2,
) -> PopulationRisk:
    """The estimates for classes of ``sizes`` (records per class in the sample); ``weights``:
    each class's summed sampling weights (its estimated population count), else
    size / sampling fraction."""
    sizes = np.asarray(sizes, dtype=np.int64)
    keep = sizes > 0
    sizes = sizes[keep]
    rows = int(sizes.sum())
    if weights is not None:
        counts = np.asarray(weights, dtype=float)[keep]
        big_n = float(counts.sum()) if population is None else float(population)
        fraction = rows / big_n
    else:
        big_n, fraction = sampling(rows, population=population, sampling_fraction=sampling_fraction)
        counts = sizes / fraction
    classes = histogram(sizes)
    c1 = classes.get(1, 0)
    if c1 == 0 or rows == 0:
        uniques: dict[str, float | None] = {"pitman": 0.0, "zayatz": 0.0, "snb": 0.0, "dankar": 0.0}
        chosen = "none (no sample uniques)"
    elif fraction >= 1:
        uniques = {m: float(c1) for m in ("pitman", "zayatz", "snb", "dankar")}
        chosen = "census (the sample is the population)"
    else:
        uniques = {
            "pitman": pitman(classes, big_n),
            "zayatz": zayatz(classes, big_n, rows),
            "snb": snb(classes, fraction),
        }
        uniques["dankar"], chosen = _dankar(uniques, fraction)
    risks = individual_risk(sizes, counts)
    per_record = np.repeat(risks, sizes)
    return PopulationRisk(
        big_n,
        fraction,
        c1,
        uniques,
        chosen,
        float(per_record.mean()) if rows else 0.0,
        float(per_record.max()) if rows else 0.0,
        float((per_record > threshold).mean()) if rows else 0.0,
        float((risks * sizes).sum()),
    )


def _dankar(uniques: dict[str, float | None], fraction: float) -> tuple[float, str]:
    """Dankar et al.'s decision rule, as ARX applies it (Zayatz as the fallback)."""
    zayatz_value = float(uniques["zayatz"] or 0.0)
    if fraction <= DANKAR_FRACTION:
        if uniques["pitman"] is not None:
            return float(uniques["pitman"]), "pitman"
        return zayatz_value, "zayatz"
    if uniques["snb"] is not None and uniques["snb"] <= zayatz_value:
        return float(uniques["snb"]), "snb"
    return zayatz_value, "zayatz"


def weight_values(data: Any, weights: str, sampling_fraction: float | None = None) -> np.ndarray:
    """The sampling weights in ``data``'s column ``weights`` (how many people each row stands
    for), or one line saying what is wrong with them."""
    import pandas as pd

    if sampling_fraction is not None:
        raise ParameterError(
            "give --weights or --sampling-fraction, not both: the weights "
            "say how many people each row stands for"
        )
    if weights not in data.columns:
        raise ParameterError(f"--weights {weights!r} is not a column of the data")
    values = pd.to_numeric(data[weights], errors="coerce").to_numpy(dtype=float)
    if np.isnan(values).any() or (values < 1).any():
        raise ParameterError(
            f"--weights {weights!r}: every row needs a sampling weight of "
            "at least 1 (how many people it stands for)"
        )
    return values


def beyond(
    data: Any,
    klass: np.ndarray,
    sizes: np.ndarray,
    *,
    population: float | None = None,
    sampling_fraction: float | None = None,
    weights: str | None = None,
    threshold: float = 0.2,
) -> PopulationRisk | None:
    """The estimates for ``data`` (a DataFrame) whose rows fall in classes ``klass`` of
    ``sizes``, when the caller said what it is a sample of; else None."""
    if population is None and sampling_fraction is None and weights is None:
        return None
    summed = None
    if weights is not None:
        values = weight_values(data, weights, sampling_fraction)
        summed = np.bincount(klass, weights=values, minlength=len(sizes))
    return population_risk(
        sizes,
        population=population,
        sampling_fraction=sampling_fraction,
        weights=summed,
        threshold=threshold,
    )

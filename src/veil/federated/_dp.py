"""Client-level differential privacy for federated averaging: each party clips its update to
L2 norm ``clip`` and adds Gaussian noise drawn by OpenDP (never numpy.random) before it is
protected and sent.

Neighbouring inputs are one party's whole data replaced: its clipped update moves by at most
``2 * clip`` in L2. Each round's Gaussian mechanism is rho-zCDP with rho given by OpenDP's own
privacy map; rounds add up in zCDP, and the run's total converts to (epsilon, delta) with
``epsilon = rho + 2 sqrt(rho ln(1/delta))``. The guarantee is each party's own (its noise
alone protects it, whatever the others do); the shares of one table are disjoint, so in
``veil fl simulate`` the table's ledger is charged the run's total once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from veil.exceptions import ParameterError


@dataclass(frozen=True)
class ClientDP:
    """What the parties need to add noise, and what the run spends."""

    epsilon: float
    delta: float
    rounds: int
    clip: float

    def __post_init__(self) -> None:
        if not (self.epsilon > 0 and math.isfinite(self.epsilon)):
            raise ParameterError(f"--epsilon must be a positive number, got {self.epsilon!r}")
        if not 0 < self.delta < 1:
            raise ParameterError(f"--delta must be between 0 and 1, got {self.delta!r}")
        if not self.clip > 0:
            raise ParameterError(f"--clip must be positive, got {self.clip!r}")

    @property
    def rho(self) -> float:
        """The run's total zCDP budget that ``(epsilon, delta)`` allows."""
        log = math.log(1 / self.delta)
        return (math.sqrt(self.epsilon + log) - math.sqrt(log)) ** 2

    @property
    def sigma(self) -> float:
        """Each round's noise scale: ``2 clip / sqrt(2 rho / rounds)``."""
        return 2 * self.clip / math.sqrt(2 * self.rho / self.rounds)

    @property
    def epsilon_per_round(self) -> float:
        """One round's epsilon at ``delta`` (what a round alone would spend)."""
        rho = self.rho / self.rounds
        return rho + 2 * math.sqrt(rho * math.log(1 / self.delta))


def _measurement(size: int, sigma: float) -> Any:
    from veil.dp.stats import opendp

    dp = opendp()
    space = (
        dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size),
        dp.l2_distance(T=float),
    )
    return dp.m.make_gaussian(*space, scale=sigma)


def charged(dp: ClientDP) -> tuple[float, float]:
    """What the run spends by OpenDP's own privacy map (its rho per round for sensitivity
    ``2 clip``, times the rounds) as ``(epsilon at delta, rho)``: what ledgers are charged,
    never less than planned."""
    rho = dp.rounds * float(_measurement(1, dp.sigma).map(2 * dp.clip))
    return rho + 2 * math.sqrt(rho * math.log(1 / dp.delta)), rho


def privatize(update: np.ndarray, dp: ClientDP, *, bound: float) -> np.ndarray:
    """The update clipped to L2 ``clip`` with OpenDP's Gaussian noise, then (post-processing)
    each value clipped to ``±bound`` so an encrypted sum cannot overflow."""
    norm = float(np.linalg.norm(update))
    clipped = update * min(1.0, dp.clip / norm) if norm > 0 else update
    noisy = np.asarray(_measurement(len(update), dp.sigma)(clipped.tolist()), dtype=float)
    return np.clip(noisy, -bound, bound)

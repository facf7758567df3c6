"""Differentially private synthetic data: AIM (McKenna, Mullins, Sheldon and Miklau, 2022)
through OpenDP's Private-PGM integration, charged to the same ledger as MST.

AIM measures marginals one round at a time: each round the exponential mechanism picks the
marginal of a workload the model estimates worst (weighted by how much it matters), Laplace
noise measures it, and the graphical model is refitted; a round whose measurement changed the
model less than its noise makes the next round's budget four times larger. MST measures one
spanning tree of pairs in one go. Everything MST does around the model (public domains,
numeric columns binned at private quantiles and drawn back inside their bins, identifiers left
out, no invented missing values) is shared: ``AIM`` is ``MST`` with another algorithm.

Two things differ from OpenDP's defaults, neither touching the privacy analysis:

- the workload: every pair of columns; with a ``target``, its pairs weigh ``TARGET_WEIGHT``
  times as much (a model trained on the rows predicts the target from them);
- the model: refitted with ``ITERATIONS`` mirror-descent steps warm-started from the last round
  (mbi's default, 1,000 from scratch each round, spends minutes on adult), and the workload's
  marginals the model does not hold projected with numpy's einsum rather than mbi's variable
  elimination, which JAX compiles anew for every marginal (54 of 115 seconds on adult).
  Both read only the model, after the noise (post-processing).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from veil.dp.budget import Accountant
from veil.exceptions import ParameterError
from veil.synth._mst import MST

__all__ = ["AIM", "ITERATIONS", "TARGET_WEIGHT"]

#: Mirror-descent steps per round (the model is warm-started from the last round's)
ITERATIONS = 100
#: How much more a pair with the target weighs in the workload than another pair
TARGET_WEIGHT = 4.0
#: numpy's einsum names at most 52 axes: a model over more columns projects through mbi
_EINSUM_AXES = 52


class AIM(MST):
    """Differentially private synthetic rows from AIM's adaptively chosen marginals, charged
    to ``accountant`` when fitted (``MST``'s parameters, and):

    Parameters
    ----------
    target : str, optional
        The column a model will predict: its pairs weigh more in the workload.
    iterations : int
        Mirror-descent steps each round.
    max_size : float
        The largest model (MB) AIM may grow to.
    """

    method = "aim"

    def __init__(
        self,
        *,
        epsilon: float,
        accountant: Accountant | None,
        columns: Sequence[str] | None = None,
        keys: Mapping[str, Sequence[str]] | None = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        bins: int = 10,
        identifiers: Sequence[str] | None = None,
        target: str | None = None,
        iterations: int = ITERATIONS,
        max_size: float = 80.0,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(
            epsilon=epsilon,
            accountant=accountant,
            columns=columns,
            keys=keys,
            bounds=bounds,
            bins=bins,
            identifiers=identifiers,
            progress=progress,
        )
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise ParameterError(f"iterations must be a whole number >= 1, got {iterations!r}")
        if not max_size > 0:
            raise ParameterError(f"max_size must be a positive number of MB, got {max_size!r}")
        self.target, self.iterations, self.max_size = target, iterations, float(max_size)

    def _algorithm(self, chosen: list[str]) -> Any:
        from opendp.extras import mbi

        if self.target is not None and self.target not in chosen:
            raise ParameterError(
                f"target {self.target!r} is not among the columns synthesized "
                f"({', '.join(map(str, chosen))}): name one of them, or add it to columns"
            )
        self.rounds_ = 0
        return mbi.AIM(
            queries=workload(chosen, self.target),
            estimator=self._estimate,
            max_size=self.max_size,
        )

    @contextmanager
    def _releasing(self) -> Iterator[None]:
        """OpenDP 0.16's AIM ends its rounds when no noise scale fits a selection's budget (an
        ``except ValueError`` its code marks as unlikely), but when the last sliver of budget
        (the total less what was spent, rounded down) is too small for any scale, the search
        raises OpenDP's own error instead, and the release failed after every round had been
        measured (a wage survey at epsilon 1, one run in three). Here that error too ends the
        rounds: the selection was never made, so nothing was released or charged by it.
        Drop this when OpenDP catches it."""
        from opendp.extras.mbi import _aim
        from opendp.mod import OpenDPException

        original = _aim._make_aim_select

        def select(*args: Any, **kwargs: Any) -> Any:
            try:
                return original(*args, **kwargs)
            except OpenDPException as err:
                if "scale" not in str(err):
                    raise
                self.unspent_ = float(kwargs["d_out"])
                return None

        _aim._make_aim_select = select
        try:
            yield
        finally:
            _aim._make_aim_select = original

    def _estimate(self, domain: Any, loss_fn: Any, *, potentials: Any = None) -> Any:
        """One round's model: OpenDP's estimator contract (``mirror_descent``'s signature)."""
        from mbi.estimation import mirror_descent

        self.rounds_ += 1
        self.progress(f"AIM round {self.rounds_}: fitting the model")
        fitted = mirror_descent(domain, loss_fn, potentials=potentials, iters=self.iterations)
        return projecting(fitted)


def workload(columns: Sequence[str], target: str | None) -> list[Any]:
    """Every pair of ``columns`` (each one column when there is only one), the pairs with
    ``target`` weighing ``TARGET_WEIGHT``."""
    from opendp.extras.mbi import Count

    if len(columns) < 2:
        return [Count(tuple(columns))]
    return [
        Count(pair, TARGET_WEIGHT if target in pair else 1.0)
        for pair in itertools.combinations(columns, 2)
    ]


def projecting(model: Any) -> Any:
    """``model`` whose marginals outside its cliques are summed out with numpy's einsum."""
    if len(model.potentials.domain.attributes) > _EINSUM_AXES:
        return model
    return _einsum_model()(
        potentials=model.potentials, marginals=model.marginals, total=model.total
    )


_EINSUM_MODEL: list[type] = []


def _einsum_model() -> type:
    """mbi's ``MarkovRandomField`` with ``project`` by einsum (made once, on first use: mbi is
    an optional dependency)."""
    if _EINSUM_MODEL:
        return _EINSUM_MODEL[0]
    import chex
    from mbi import MarkovRandomField
    from mbi.factor import Factor

    @chex.dataclass(frozen=True, kw_only=False)
    class EinsumModel(MarkovRandomField):
        """The marginal on ``attrs``: held, or the product of the potentials summed over the
        other columns (each potential exponentiated less its maximum, so nothing overflows;
        the result is scaled to the model's total)."""

        def project(self, attrs: str | Sequence[str]) -> Any:
            attrs = (attrs,) if isinstance(attrs, str) else tuple(attrs)
            if self.marginals.supports(attrs):
                return self.marginals.project(attrs)
            domain = self.potentials.domain
            axis = {name: i for i, name in enumerate(domain.attributes)}
            operands: list[Any] = []
            for factor in self.potentials.arrays.values():
                values = np.asarray(factor.values, dtype=float)
                operands += [
                    np.exp(values - values.max()),
                    [axis[a] for a in factor.domain.attributes],
                ]
            for name in attrs:  # a column no potential holds is uniform
                operands += [np.ones(domain[name]), [axis[name]]]
            summed = np.einsum(*operands, [axis[a] for a in attrs], optimize="greedy")
            return Factor(domain.project(attrs), summed * (float(self.total) / summed.sum()))

    _EINSUM_MODEL.append(EinsumModel)
    return EinsumModel

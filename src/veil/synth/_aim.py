"""Differentially private synthetic data: AIM (McKenna, Mullins, Sheldon and Miklau, 2022)
through OpenDP's Private-PGM integration, charged to the same ledger as MST.

AIM measures marginals one round at a time: each round the exponential mechanism picks the
marginal of a workload the model estimates worst (weighted by how much it matters), Laplace
noise measures it, and the graphical model is refitted; a round whose measurement changed the
model less than its noise makes the next round's budget four times larger. MST measures one
spanning tree of pairs in one go. Everything MST does around the model (public domains,
numeric columns binned at private quantiles and drawn back inside their bins, identifiers left
out, no invented missing values) is shared: ``AIM`` is ``MST`` with another algorithm.

Where veil departs from OpenDP's defaults (none touches the privacy analysis: OpenDP composes
and calibrates every measurement):

- the workload: every pair of columns; with a ``target``, its pairs weigh ``TARGET_WEIGHT``
  times as much (a model trained on the rows predicts the target from them);
- the one-way marginals measured before the rounds take ``ONEWAY_SHARE`` of the budget, not
  half: every column's categories and bins are given (public keys, private quantiles), and the
  workload holds every one-way marginal, so AIM measures again the ones its model gets wrong;
- each round's model is refitted with ``ITERATIONS`` mirror-descent steps warm-started from the
  last round's (mbi's default, 1,000 from scratch each round, spent minutes on adult), and the
  last model with ``FINAL_ITERATIONS`` on every marginal measured (post-processing of the
  released marginals, as AIM's paper does);
- the workload's marginals the model does not hold are projected with numpy's einsum rather than
  mbi's variable elimination, which JAX compiles anew for every marginal (54 of 115 seconds on
  adult).

On adult (26,049 training rows), with OpenDP's half for the one-way marginals and no final fit,
a model trained on the rows reached accuracy 0.802-0.821 at epsilon 5 against 0.821-0.827 at
epsilon 1 (three seeds each): more budget, worse rows. On one seed at epsilon 5, the final fit
took accuracy from 0.802 to 0.815 (F1 0.530 to 0.595), and a fifth for the one-way marginals to
0.832 (F1 0.646); 50 steps a round instead of 100 changed neither (0.832 / 0.646).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import pandas as pd

from veil.dp._calibrate import calibrating
from veil.dp.budget import Accountant
from veil.exceptions import ParameterError
from veil.synth._mst import MST
from veil.synth._project import projecting

__all__ = ["AIM", "ITERATIONS", "TARGET_WEIGHT"]

#: Mirror-descent steps per round (the model is warm-started from the last round's)
ITERATIONS = 50
#: Mirror-descent steps of the last model, fitted to every marginal measured (post-processing)
FINAL_ITERATIONS = 1_000
#: Share of the budget spent on every column's one-way marginal before the rounds (OpenDP's
#: default: half)
ONEWAY_SHARE = 0.2
#: How much more a pair with the target weighs in the workload than another pair. At 4, one
#: run in six at epsilon 1 on adult fell below accuracy 0.82 / F1 0.55 (0.805 / 0.516: its
#: rounds measured pairs far from income); at 16, the same six seeds all kept 0.821-0.841 /
#: 0.616-0.665 (mean F1 0.645 against 0.624), rows a little easier to tell from real ones
#: (detection AUC 0.77-0.89 against 0.75-0.77).
TARGET_WEIGHT = 16.0


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
        self.rounds_ = -1
        return mbi.AIM(
            queries=workload(chosen, self.target),
            estimator=self._estimate,
            max_size=self.max_size,
            oneway_split=ONEWAY_SHARE,
        )

    def _fit(self, frame: pd.DataFrame, random_state: int | None) -> None:
        import dataclasses

        from mbi.estimation import mirror_descent

        super()._fit(frame, random_state)
        # post-processing: the released marginals only
        self.progress(f"fitting the last model to all {self.rounds_} rounds' marginals")
        table = self.table_
        measured = [tuple(m.clique) for m in table.marginals.flatten() if len(m.clique) > 1]
        self.measured_ = list(dict.fromkeys(measured))  # AIM's choices: released with its rows
        model = mirror_descent(
            table.model.domain,
            table.marginals.flatten(),
            potentials=table.model.potentials,
            iters=FINAL_ITERATIONS,
        )
        self.table_ = dataclasses.replace(table, model=model)

    @contextmanager
    def _releasing(self) -> Iterator[None]:
        """OpenDP 0.16's AIM ends its rounds when no noise scale fits a selection's budget (an
        ``except ValueError`` its code marks as unlikely), but when the last sliver of budget
        (the total less what was spent, rounded down) is too small for any scale, the search
        raises OpenDP's own error instead, and the release failed after every round had been
        measured (five columns of a wage survey at epsilon 1, every run, 5.6e-18 left). Here
        that error too ends the rounds: the selection was never made, so nothing was released
        or charged by it. Drop this when OpenDP catches it."""
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
            with calibrating():
                yield
        finally:
            _aim._make_aim_select = original

    def describe(self) -> list[str]:
        """MST's notes, after the rounds AIM measured and its workload."""
        if not hasattr(self, "rounds_"):
            return super().describe()
        weighed = f", {self.target}'s weighing {TARGET_WEIGHT:g}x" if self.target else ""
        pairs = ", ".join(" x ".join(map(str, clique)) for clique in getattr(self, "measured_", []))
        return [
            f"AIM: {self.rounds_} rounds, each measuring the marginal its model estimated "
            f"worst among every pair of columns{weighed}",
            f"  pairs measured, in AIM's order: {pairs}"
            if pairs
            else "  no pair measured: the rows follow the one-way marginals alone, every column "
            "drawn independently of the others",
            *super().describe(),
        ]

    def _estimate(self, domain: Any, loss_fn: Any, *, potentials: Any = None) -> Any:
        """One round's model: OpenDP's estimator contract (``mirror_descent``'s signature)."""
        from mbi.estimation import mirror_descent

        self.rounds_ += 1  # the first fit is to the one-way marginals, before any round
        if self.rounds_:
            _forget_staged()
        self.progress(
            f"AIM round {self.rounds_}: fitting the model"
            if self.rounds_
            else "fitting the model to the one-way marginals"
        )
        fitted = mirror_descent(domain, loss_fn, potentials=potentials, iters=self.iterations)
        return projecting(fitted)


def _forget_staged() -> None:
    """Empty JAX's tracing and lowering caches (what ``jax.clear_caches`` empties but its
    compiled-function caches). Each round fits a model of another shape with functions mbi
    makes anew, so what the last rounds staged is never used again, and those caches grew by
    ~30 MB a round (a process's peak on adult at epsilon 1, 19 rounds: 0.97 GB instead of
    1.38 GB, in 42 s instead of 38 s). ``jax.clear_caches`` would empty the compiled functions
    of every small array operation too, which each round compiles again (68 s). A process
    that uses JAX for its own work keeps its compiled functions; its next call is traced
    again."""
    try:
        from jax._src.util import clear_all_caches  # jax.clear_caches's first step
    except ImportError:  # another jax: its caches are left as they are
        return
    clear_all_caches()


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

"""Graphical models whose marginals are summed by numpy's einsum (MST's and AIM's).

mbi's ``MarkovRandomField.project`` runs variable elimination in JAX, which compiles anew for
every marginal it is asked for: AIM asks for each pair of its workload every round (54 of 115
seconds on adult), MST for each candidate pair of its spanning tree. ``projecting`` wraps a
fitted model so that a marginal its cliques do not hold is the product of its exponentiated
potentials summed by ``np.einsum`` (tested equal to mbi's own variable elimination).
``fit_model`` fits MST's models as mbi does, JAX's compiled code dropped between the steps
(memory), and ``sample_rows`` draws rows from a model by its junction tree.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["drop_compiled", "estimate", "fit_model", "projecting", "sample_rows"]

#: numpy's einsum names at most 52 axes: a model over more columns projects through mbi
_EINSUM_AXES = 52


def estimate(domain: Any, loss_fn: Any, *, potentials: Any = None) -> Any:
    """OpenDP's estimator contract (its ``mirror_descent``: mbi's, with mbi's defaults), fitted
    by ``fit_model`` and returned projecting by einsum."""
    return projecting(fit_model(domain, loss_fn, potentials=potentials))


def fit_model(domain: Any, loss_fn: Any, *, potentials: Any = None, iters: int = 1_000) -> Any:
    """mbi's ``mirror_descent`` of ``loss_fn`` (a list of measurements, or mbi's loss): the
    same model, with JAX's compiled code dropped (``drop_compiled``) after the loss is built
    and after the fit.

    JAX keeps every executable it compiled (about 2.5 MB of the C heap for one op on one
    shape), and mbi compiles many: the loss's Lipschitz constant runs op by op on every
    clique's shapes, and each fit jits a new closure. On adult, MST's second fit started from
    780 MB (the first fit's code kept), its Lipschitz constant took 140 MB more and the fit
    itself 350 MB: a whole process of 1.20 GB at its peak, 0.98-1.13 GB over six runs with the
    code dropped at both points (the peak varies with the pairs the noisy tree picks; MST's two
    fits share no shapes, and it costs 1-2 s). AIM's rounds do reuse the last round's shapes:
    dropping the code after each of them halved its memory (1.69 GB to 1.15) but doubled its
    time (82 s to 169 s), so AIM keeps it. The loss is built as mbi builds it (its
    ``_initialize``: the total of least variance, ``from_linear_measurements``)."""
    from mbi import marginal_loss
    from mbi.estimation import minimum_variance_unbiased_total, mirror_descent

    known_total = None
    if isinstance(loss_fn, list):
        known_total = minimum_variance_unbiased_total(loss_fn)
        loss_fn = marginal_loss.from_linear_measurements(loss_fn, domain=domain)
        drop_compiled()
    try:
        return mirror_descent(
            domain, loss_fn, known_total=known_total, potentials=potentials, iters=iters
        )
    finally:
        drop_compiled()


def drop_compiled() -> None:
    """Drop JAX's compiled code (its caches, and the closures' cycles that still hold some) and
    hand the C heap's free memory back to the system (glibc's ``malloc_trim``; elsewhere,
    JAX's caches alone)."""
    import gc

    import jax

    jax.clear_caches()
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        return None


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


def sample_rows(model: Any, rows: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``rows`` rows drawn from ``model`` (mbi's ``MarkovRandomField``), each column's index
    of its value: the columns in the reverse of the junction tree's elimination order, each
    drawn given the columns drawn before it that share a clique *of the junction tree* with
    it.

    mbi 1.1's ``synthetic_data`` (the one OpenDP 0.16 pins) conditions each column on the
    columns drawn before it that share one of the model's *measured* cliques with it, which is
    exact for a tree (MST's) but not where the measured pairs close a cycle and the junction
    tree joins them: on adult, AIM measured education x income, education x education_num,
    education_num x occupation and occupation x income; education_num was drawn, then income
    without it, then education given both, and both education columns came out independent
    of income in three runs of six at epsilon 5 (TSTR F1 0.60-0.62 against 0.65-0.66).
    Later mbi releases condition on the junction tree's cliques, as here."""
    from mbi import junction_tree, marginal_oracles

    domain = model.domain
    tree, elimination = junction_tree.make_junction_tree(
        domain, [tuple(clique) for clique in model.cliques]
    )
    cliques = [set(clique) for clique in tree.nodes]
    marginals = marginal_oracles.message_passing_stable(model.potentials.expand(list(tree.nodes)))
    drawn: dict[str, np.ndarray] = {}
    for column in elimination[::-1]:
        parents = tuple(
            p for p in drawn if any(column in clique and p in clique for clique in cliques)
        )
        table = np.asarray(marginals.project((*parents, column)).datavector(flatten=False))
        table = np.clip(table.reshape(-1, domain[column]), 0.0, None)
        at = (
            np.ravel_multi_index(
                tuple(drawn[p] for p in parents), tuple(domain[p] for p in parents)
            )
            if parents
            else np.zeros(rows, dtype=np.int64)
        )
        drawn[column] = _draw(table, at, rng)
    return {column: drawn[column] for column in domain.attrs}


def _draw(table: np.ndarray, at: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each row, a value drawn from row ``at`` of ``table`` (counts; a row of zeros, which
    no drawn combination of parents should meet, draws uniformly). The rows' cumulative
    shares are laid end to end (row i's in [i, i + 1]) and searched once for every draw."""
    size = table.shape[1]
    totals = table.sum(axis=1, keepdims=True)
    p = np.divide(table, totals, out=np.full_like(table, 1.0 / size), where=totals > 0)
    cdf = np.cumsum(p, axis=1)
    cdf[:, -1] = 1.0
    ends = (cdf + np.arange(len(cdf))[:, None]).ravel()
    found = np.searchsorted(ends, at + rng.random(len(at)), side="right")
    return np.minimum(found - at * size, size - 1).astype(np.int64)

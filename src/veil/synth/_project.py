"""Graphical models whose marginals are summed by numpy's einsum (MST's and AIM's).

mbi's ``MarkovRandomField.project`` runs variable elimination in JAX, which compiles anew for
every marginal it is asked for: AIM asks for each pair of its workload every round (54 of 115
seconds on adult), MST for each candidate pair of its spanning tree. ``projecting`` wraps a
fitted model so that a marginal its cliques do not hold is the product of its exponentiated
potentials summed by ``np.einsum`` (tested equal to mbi's own variable elimination).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["estimate", "projecting"]

#: numpy's einsum names at most 52 axes: a model over more columns projects through mbi
_EINSUM_AXES = 52


def estimate(domain: Any, loss_fn: Any, *, potentials: Any = None) -> Any:
    """OpenDP's estimator contract (its ``mirror_descent``: mbi's, with mbi's defaults), the
    model returned projecting by einsum."""
    from mbi.estimation import mirror_descent

    return projecting(compiled_once(mirror_descent)(domain, loss_fn, potentials=potentials))


def compiled_once(fit: Callable[..., Any]) -> Callable[..., Any]:
    """``fit``, JAX's compiled code dropped when it returns. mbi's mirror descent jits a new
    closure on every call (nothing compiled is reused by the next fit), and JAX keeps every
    executable: on adult, MST's two fits left 750 MB of compiled code behind (the process's
    peak 1.3 GB; dropped, the next fit's compilation reuses that memory)."""

    def dropping(*args: Any, **kwargs: Any) -> Any:
        import jax

        try:
            return fit(*args, **kwargs)
        finally:
            jax.clear_caches()

    return dropping


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

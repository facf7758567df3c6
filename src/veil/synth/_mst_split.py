"""OpenDP 0.16's MST with one budget split fixed, so that no epsilon fails by rounding.

OpenDP's MST gives each of its ``n`` marginal selections ``prior(d_select / n)`` and composes
them with upward rounding; for many (epsilon, n) the sum exceeds ``d_select`` by an ulp and
the release stops with "insufficient budget for query: 0.04999999999999998 >
0.049999999999999975" (epsilon 1 on the 13 usable columns of the Kenyan sample). Here the
selections share ``d_select`` shrunk by a relative 1e-9, so their sum stays below it whatever
the rounding. Two more departures, neither in the privacy analysis: the measurement's noise
scale is found by ``veil.dp._calibrate`` (within 2^-20 of OpenDP's search, in a few of its
checks), and the estimator returns models that project by einsum (``veil.synth._project``).
Everything else is OpenDP's own code path. Drop the split when OpenDP fixes it.
"""

from __future__ import annotations

import itertools
from typing import Any

#: Relative margin left unspent by the selections: far above float rounding, far below noise.
SPLIT_MARGIN = 1e-9


def safe_mst() -> Any:
    """An ``opendp.extras.mbi.MST`` whose selection budget cannot overshoot by rounding, its
    measurement's noise calibrated by ``veil.dp._calibrate``, its models projecting by einsum
    (``veil.synth._project``: the spanning tree's candidate pairs are scored on them)."""
    from opendp._internal import _new_pure_function
    from opendp.combinators import then_adaptive_composition
    from opendp.extras.mbi import MST
    from opendp.extras.mbi._mst import _make_mst_select
    from opendp.extras.mbi._utilities import (
        get_associated_metric,
        make_noise_marginals,
        make_stable_marginals,
        prior,
    )

    from veil.dp._calibrate import calibrated_chain
    from veil.synth._project import estimate

    class SafeMST(MST):
        def make_marginals(  # OpenDP's body, but for the lines marked veil below
            self,
            input_domain: Any,
            input_metric: Any,
            output_measure: Any,
            d_in: Any,
            d_out: float,
            *,
            marginals: Any,
            model: Any,
        ) -> Any:
            from mbi import MarkovRandomField

            if not isinstance(model, MarkovRandomField):
                raise ValueError("model must be a MarkovRandomField")
            d_measure = d_out * self.measure_split
            d_select = prior(prior(d_out - d_measure))
            edges: list[Any] = list(itertools.combinations(input_domain.columns, 2))
            lp_metric = get_associated_metric(output_measure)
            t_marginals = make_stable_marginals(input_domain, input_metric, lp_metric, edges)
            d_marginals = t_marginals.map(d_in)

            def function(qbl: Any) -> Any:
                m_select = _make_mst_select(
                    *t_marginals.output_space,
                    output_measure,
                    d_in=d_marginals,
                    d_out=d_select * (1 - SPLIT_MARGIN),  # veil: room for the rounding
                    edges=edges,
                    model=model,
                    num_selections=self.num_selections,
                )
                selected = qbl(m_select)
                m_measure = calibrated_chain(  # veil: OpenDP's answer in a few checks
                    lambda s: make_noise_marginals(
                        *t_marginals.output_space, output_measure, selected, scale=s
                    ),
                    d_in=d_marginals,
                    d_out=d_measure,
                    T=float,
                )
                released = marginals.add(*qbl(m_measure))
                fitted = self.estimator(
                    model.domain, released.flatten(), potentials=model.potentials
                )
                return released, fitted

            return (
                t_marginals
                >> then_adaptive_composition(
                    output_measure=output_measure,
                    d_in=t_marginals.map(d_in),
                    d_mids=[d_select, d_measure],
                )
                >> _new_pure_function(function)
            )

    return SafeMST(estimator=estimate)

"""veil's noise calibration (``veil.dp._calibrate``) against OpenDP's own binary search, the
oracle: the scale it returns passes OpenDP's check and is within ``TOLERANCE`` above OpenDP's
smallest passing scale; where the loss is not a power of the scale, or the search is not a
plain float one, OpenDP's answer is returned as it is; and the whole of a contingency table's
noise (one-way marginals and MST's measurements) matches OpenDP's calibration."""

from __future__ import annotations

from typing import Any

import numpy as np
import opendp.prelude as odp
import pytest

from veil.dp._calibrate import TOLERANCE, calibrated_chain, calibrated_param, calibrating

odp.enable_features("contrib")


def laplace(scale: float) -> Any:
    space = odp.vector_domain(odp.atom_domain(T=int)), odp.symmetric_distance()
    return space >> odp.t.then_count() >> odp.m.then_laplace(scale)


def gaussian(scale: float) -> Any:  # (rho proportional to 1/scale**2)
    space = odp.vector_domain(odp.atom_domain(T=float, nan=False)), odp.l2_distance(T=float)
    return odp.m.make_gaussian(*space, scale)


def within(found: float, reference: float) -> bool:
    return reference <= found <= reference * (1 + TOLERANCE)


@pytest.mark.parametrize("make", [laplace, gaussian], ids=["laplace", "gaussian"])
@pytest.mark.parametrize("d_in", [1, 3, 7])
@pytest.mark.parametrize("d_out", [1e-4, 0.05, 1.0, 3.7, 250.0])
def test_the_scale_is_opendp_s_to_within_the_tolerance(make, d_in: int, d_out: float) -> None:
    d_in_ = float(d_in) if make is gaussian else d_in
    reference = odp.binary_search_param(make, d_in_, d_out, T=float)
    found = calibrated_param(make, d_in_, d_out, T=float)
    assert make(found).check(d_in_, d_out)
    assert within(found, reference), (found, reference)
    assert calibrated_chain(make, d_in_, d_out).map(d_in_) <= d_out


def test_a_loss_that_is_no_power_of_the_scale_gets_opendp_s_answer() -> None:
    """Laplace composed with a measurement of fixed cost: loss = c / scale + c0, for which the
    power law's guess is wrong; the bracket does not hold and OpenDP's search answers."""

    def composed(scale: float) -> Any:
        space = odp.vector_domain(odp.atom_domain(T=int)), odp.symmetric_distance()
        count = space >> odp.t.then_count()
        return odp.c.make_composition(
            [count >> odp.m.then_laplace(scale), count >> odp.m.then_laplace(4.0)]
        )

    reference = odp.binary_search_param(composed, 1, 1.0, T=float)
    assert calibrated_param(composed, 1, 1.0, T=float) == reference


def test_a_budget_no_scale_opendp_searches_meets_fails_as_opendp_s() -> None:
    """A budget so small that the scale would pass 2**49 (the largest OpenDP's search looks
    at): OpenDP's error, not a scale beyond it (AIM ends its rounds on that error)."""
    from opendp.mod import OpenDPException

    for search in (odp.binary_search_param, calibrated_param):
        with pytest.raises((OpenDPException, ValueError)):
            search(laplace, 1, 1e-18, T=float)


def test_searches_other_than_a_plain_float_scale_are_opendp_s() -> None:
    bounded = calibrated_param(laplace, 1, 1.0, bounds=(0.5, 10.0))
    assert bounded == odp.binary_search_param(laplace, 1, 1.0, bounds=(0.5, 10.0))
    integer = calibrated_param(lambda n: laplace(float(n)), 1, 0.5, T=int)
    assert integer == odp.binary_search_param(lambda n: laplace(float(n)), 1, 0.5, T=int)


def test_calibrating_swaps_opendp_s_searches_and_puts_them_back() -> None:
    from opendp.extras.mbi import _aim, _mst, _table

    before = (_table.binary_search_param, _mst.binary_search_chain, _aim.binary_search_chain)
    with calibrating():
        assert _table.binary_search_param is calibrated_param
        assert _mst.binary_search_chain is calibrated_chain is _aim.binary_search_chain
        with calibrating():  # nested: still veil's inside, OpenDP's after both
            pass
        assert _table.binary_search_param is calibrated_param
    assert (
        _table.binary_search_param,
        _mst.binary_search_chain,
        _aim.binary_search_chain,
    ) == before
    with pytest.raises(RuntimeError), calibrating():
        raise RuntimeError("a failed release")
    assert _table.binary_search_param is before[0]


def test_a_release_in_another_thread_waits_for_the_swap_to_end() -> None:
    """Two releases at once in one process: the second enters only after the first has left
    (and put OpenDP's searches back), so neither sees the other's swap undone mid-release."""
    import threading

    from opendp.extras.mbi import _table

    original = _table.binary_search_param
    inside, events = threading.Event(), []

    def second() -> None:
        inside.wait()
        with calibrating():
            events.append(("second in", _table.binary_search_param is calibrated_param))

    worker = threading.Thread(target=second)
    worker.start()
    with calibrating():
        inside.set()
        worker.join(timeout=0.5)  # it must still be waiting
        events.append(("first still in", worker.is_alive()))
    worker.join(timeout=10)
    assert events == [("first still in", True), ("second in", True)]
    assert _table.binary_search_param is original


def test_a_contingency_table_s_noise_is_opendp_s() -> None:
    """MST on a small table, released with OpenDP's searches and with veil's: every
    measurement's standard deviation (one-way and pair marginals) agrees to the tolerance."""
    import polars as pl
    from opendp.extras import mbi

    from veil.synth._mst_split import safe_mst

    rng = np.random.default_rng(0)
    frame = pl.LazyFrame(
        {name: rng.choice(["a", "b", "c"], 300).tolist() for name in ("x", "y", "z")}
    )
    keys = {name: ["a", "b", "c"] for name in ("x", "y", "z")}

    def stddevs(algorithm: object) -> list[float]:
        context = odp.Context.compositor(
            data=frame,
            privacy_unit=odp.unit_of(contributions=1),
            privacy_loss=odp.loss_of(epsilon=1.0),
            split_evenly_over=1,
        )
        table = context.query().contingency_table(keys=keys, algorithm=algorithm).release()
        return sorted(float(m.stddev) for m in table.marginals.flatten())

    reference = stddevs(mbi.MST())
    with calibrating():
        found = stddevs(safe_mst())
    assert len(found) == len(reference) >= 4
    for ours, theirs in zip(found, reference, strict=True):
        assert theirs * (1 - 1e-5) <= ours <= theirs * (1 + 1e-5), (ours, theirs)

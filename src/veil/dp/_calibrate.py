"""The noise scale of an OpenDP measurement for a budget, found in a few checks instead of ~70.

OpenDP's ``binary_search_param`` finds the smallest scale whose measurement meets ``d_out`` by an
exponential search for bounds and a bisection down to adjacent floats: about 70 constructions
of the measurement. MST and AIM build theirs over every column at each step (one-way marginals
of adult: 15 LazyFrame plans serialized and checked a step), so calibration alone was 24 of
MST's 61 seconds on adult.

A noise scale's privacy loss is a power of it for the mechanisms these use (Laplace: epsilon
proportional to 1/scale; Gaussian under zCDP: rho to 1/scale**2). Two maps (at scales 1 and
2) give the power and the scale that meets ``d_out``; it is then bracketed by two checks, a
relative ``TOLERANCE`` apart: the scale just above the bracket passes (OpenDP's own check,
which composition repeats) and the one below fails, so the scale returned is within
``TOLERANCE`` of OpenDP's. Whenever that does not hold (another shape of loss, a tuple budget,
bounds, integers, a map that raises), OpenDP's own search runs. The search only chooses a
parameter: privacy rests on OpenDP's check of the measurement built with it, as it does with
OpenDP's search.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["TOLERANCE", "calibrated_chain", "calibrated_param", "calibrating"]

#: The relative distance from the smallest passing scale the scale returned may be.
TOLERANCE = 2.0**-20

#: The largest scale OpenDP's search looks at (its bands reach 2**(7**2)): a budget that needs
#: more is left to it, so that it fails as it does (AIM ends its rounds on that failure).
_LARGEST = 2.0**49


def calibrated_param(
    make_chain: Callable[[Any], Any],
    d_in: Any,
    d_out: Any,
    bounds: tuple[Any, Any] | None = (None, None),
    T: Any = None,
) -> Any:
    """``opendp.mod.binary_search_param``'s answer to within ``TOLERANCE``, in four to six
    constructions of the chain where the power law holds (OpenDP's search otherwise)."""
    from opendp.mod import binary_search_param

    found = _by_power_law(make_chain, d_in, d_out) if _plain(d_out, bounds, T) else None
    return binary_search_param(make_chain, d_in, d_out, bounds, T) if found is None else found


def calibrated_chain(make_chain: Callable[[Any], Any], *search: Any, **named: Any) -> Any:
    """``opendp.mod.binary_search_chain`` by ``calibrated_param`` (the same arguments)."""
    return make_chain(calibrated_param(make_chain, *search, **named))


def _plain(d_out: Any, bounds: Any, kind: Any) -> bool:
    """A float budget, a float parameter, no bounds: what the power law is tried on."""
    return (
        isinstance(d_out, float)
        and not isinstance(d_out, bool)
        and d_out > 0
        and kind in (None, float)
        and bounds in (None, (None, None))
    )


def _by_power_law(make_chain: Callable[[Any], Any], d_in: Any, d_out: float) -> float | None:
    """The scale bracketed as the module says, or None when the bracket does not hold."""
    try:
        at_one, at_two = float(make_chain(1.0).map(d_in)), float(make_chain(2.0).map(d_in))
        if not (math.isfinite(at_one) and math.isfinite(at_two) and at_one > at_two > 0):
            return None
        power = math.log2(at_one / at_two)
        guess = (at_one / d_out) ** (1 / power)
        if not (math.isfinite(guess) and 0 < guess <= _LARGEST):
            return None
        for above in (2.0**-40, 2.0**-30, TOLERANCE / 2):  # rounding: a hair above the guess
            scale = guess * (1 + above)
            if make_chain(scale).check(d_in, d_out):
                below = scale * (1 - TOLERANCE / 2)
                return None if make_chain(below).check(d_in, d_out) else scale
    except Exception:
        return None
    return None


#: OpenDP's modules whose searches MST and AIM call, and the name each imported.
_SEARCHES = (
    ("opendp.extras.mbi._table", "binary_search_param", calibrated_param),
    ("opendp.extras.mbi._mst", "binary_search_chain", calibrated_chain),
    ("opendp.extras.mbi._aim", "binary_search_chain", calibrated_chain),
)
_LOCK = threading.RLock()


@contextmanager
def calibrating() -> Iterator[None]:
    """While it is open, OpenDP's contingency tables, MST and AIM calibrate their noise by
    ``calibrated_param``; their own searches are put back on leaving. Releases in other
    threads wait (the modules are shared)."""
    import importlib

    with _LOCK:
        saved = []
        for module_name, name, replacement in _SEARCHES:
            module = importlib.import_module(module_name)
            saved.append((module, name, getattr(module, name)))
            setattr(module, name, replacement)
        try:
            yield
        finally:
            for module, name, original in saved:
                setattr(module, name, original)

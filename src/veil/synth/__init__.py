"""Synthetic data behind one interface, as scikit-learn's: ``fit(frame)``, then
``sample(n, random_state=...)``.

- ``Marginals``: each column from its own fitted distribution (frequencies; the best scipy
  distribution among stated candidates by AIC or KS; dates as dates; missing rates kept).
- ``GaussianCopula``: those marginals joined by a Gaussian copula of the rank correlations.
- ``TVAE``: a variational autoencoder (``veil.learn.latent``'s network) sampled from its
  prior; needs the ``ml`` extra (torch).
- ``MST``: differentially private (McKenna et al., through OpenDP), charged to the
  privacy-budget ledger when fitted; ``synthesize_mst`` fits and samples it once.
- ``AIM``: differentially private as MST, its marginals chosen round by round where the model
  is worst (McKenna et al. 2022); slower, better rows.
- ``from_schema``: test data from a schema alone (Faker, distributions, scikit-learn's
  ``make_classification`` / ``make_blobs``), no real rows.

Direct identifiers are never resampled: every synthetic row gets a new, well-formed value.

    >>> import pandas as pd
    >>> from veil.synth import GaussianCopula
    >>> frame = pd.DataFrame({"age": range(20, 70), "tier": ["Gold", "Silver"] * 25})
    >>> synthetic = GaussianCopula(identifiers=[]).fit(frame).sample(100, random_state=1)
    >>> synthetic.shape
    (100, 2)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from veil._lazy import lazy_names
from veil.exceptions import ParameterError
from veil.registry import Registry

if TYPE_CHECKING:
    from veil.synth._aim import AIM
    from veil.synth._base import Synthesizer
    from veil.synth._copula import GaussianCopula
    from veil.synth._marginals import ColumnModel, Marginals
    from veil.synth._mst import MST, Synthetic, named_identifier, synthesize_mst
    from veil.synth._schema import from_schema, load_schema
    from veil.synth._tvae import TVAE

__all__ = [
    "AIM",
    "METHODS",
    "MST",
    "TVAE",
    "ColumnModel",
    "GaussianCopula",
    "Marginals",
    "Synthesizer",
    "Synthetic",
    "from_schema",
    "load_schema",
    "make",
    "named_identifier",
    "start_second_process",
    "synthesize_mst",
]

#: Where each public name lives, loaded on first use: DP synthesis (MST, AIM) never loads the
#: copula's scipy.stats and scikit-learn (0.5 s and 60 MB of a process whose peak is its fit).
_LAZY = {
    "AIM": "veil.synth._aim",
    "Synthesizer": "veil.synth._base",
    "GaussianCopula": "veil.synth._copula",
    **dict.fromkeys(("ColumnModel", "Marginals"), "veil.synth._marginals"),
    **dict.fromkeys(("MST", "Synthetic", "named_identifier", "synthesize_mst"), "veil.synth._mst"),
    **dict.fromkeys(("from_schema", "load_schema"), "veil.synth._schema"),
    "TVAE": "veil.synth._tvae",
}
__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

#: The synthesizers by their command-line name (``mst`` and ``aim`` need ``epsilon`` and
#: ``accountant``), each imported when first asked for.
METHODS: Registry[type[Synthesizer]] = Registry("synthesizer")
METHODS.add_lazy("marginals", "veil.synth._marginals:Marginals")
METHODS.add_lazy("copula", "veil.synth._copula:GaussianCopula", aliases=("gaussian_copula",))
METHODS.add_lazy("tvae", "veil.synth._tvae:TVAE")
METHODS.add_lazy("mst", "veil.synth._mst:MST")
METHODS.add_lazy("aim", "veil.synth._aim:AIM")


def start_second_process() -> bool:
    """Start, now, the second process a copula mixture fits its groups in (its worker imports
    the copula's scipy meanwhile), as ``veil synth`` does before it reads a large table: the
    worker is ready when the groups are. False with one core. A fit that does not use it
    leaves it idle until it leaves (``veil.synth._second.IDLE_SECONDS``) or the process ends."""
    import os

    if (os.cpu_count() or 1) < 2:
        return False
    from veil.synth import _second

    return _second.executor() is not None


def make(method: str, **options: Any) -> Synthesizer:
    """The synthesizer called ``method`` (``marginals``, ``copula``, ``tvae``, ``mst`` or
    ``aim``) with ``options``."""
    if method not in METHODS:
        close = METHODS.suggest(method)
        raise ParameterError(
            f"method must be one of {', '.join(METHODS)}, got {method!r}"
            + (f"; did you mean {close!r}?" if close else "")
        )
    return METHODS[method](**options)

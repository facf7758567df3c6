"""Federated learning: parties train one model without sharing rows, and the server never
sees an update.

- ``simulate``: every party and the key holder in one process, on Flower's apps;
- ``SecureFedAvg``: the Flower strategy that only adds protected updates (Paillier, CKKS or
  none) and has a separate key holder decrypt the sum;
- ``Paillier``, ``Ckks``, ``Plain``: the schemes (veil's own Paillier on gmpy2, packed);
- real processes: ``veil fl server`` / ``keyholder`` / ``client`` (``veil.federated.deploy``).

Flower, gmpy2 and TenSEAL come with ``pip install 'veil[federated]'``; they are imported when
a name that needs them is first used, so ``import veil.federated`` stays light.

    >>> from veil.federated import Packing
    >>> Packing(2047).values_per_plaintext  # 2048-bit key, 24 fractional bits, 64 parties
    52
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from veil.federated.packing import Packing
from veil.federated.result import FederatedResult, plot_convergence

__all__ = [
    "MIN_ENCRYPTED_PARTIES",
    "Ckks",
    "Domain",
    "FederatedResult",
    "Packing",
    "Paillier",
    "Plain",
    "SecureFedAvg",
    "Settings",
    "fewest_parties",
    "partition",
    "plot_convergence",
    "simulate",
]

_LAZY = {
    "Ckks": "veil.federated.secure",
    "Paillier": "veil.federated.secure",
    "Plain": "veil.federated.secure",
    "SecureFedAvg": "veil.federated._flower",
    "Settings": "veil.federated._flower",
    "fewest_parties": "veil.federated._flower",
    "MIN_ENCRYPTED_PARTIES": "veil.federated._flower",
    "Domain": "veil.federated._data",
    "partition": "veil.federated.simulation",
    "simulate": "veil.federated.simulation",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'veil.federated' has no attribute {name!r}")

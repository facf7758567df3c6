"""Latent-representation releases: a table released as an autoencoder's (or PCA's) codes,
with the utility kept measured beside what the codes still reveal (reconstruction by a
white-box attacker and by an insider, re-identification, membership). A release whose codes
give the quasi-identifiers back is labelled invertible, never anonymized.

The autoencoder needs the ``ml`` extra (torch, CPU build; Opacus for DP-SGD).
"""

from __future__ import annotations

from veil.learn.latent._codec import TableCodec
from veil.learn.latent._release import METHODS, LatentRelease, mask_latent

__all__ = ["METHODS", "LatentRelease", "TableCodec", "mask_latent"]

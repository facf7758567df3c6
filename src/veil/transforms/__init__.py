"""Privacy transforms: scikit-learn transformers that never mutate their input.

Each is usable in a ``Pipeline`` and from the policy file under the name in ``TRANSFORMS``.
"""

from __future__ import annotations

from veil.registry import Registry
from veil.transforms._base import ColumnTransform
from veil.transforms.aggregate import Microaggregate
from veil.transforms.columns import RenameColumns
from veil.transforms.fake import Fake
from veil.transforms.generalize import Generalize, TopBottomCode
from veil.transforms.mask import Mask
from veil.transforms.pca import PCAMask
from veil.transforms.perturb import Noise, RankSwap, Shuffle
from veil.transforms.pseudonymize import Pseudonymize
from veil.transforms.redact import Redact
from veil.transforms.resample import Resample, ResampleContinuous
from veil.transforms.sdc import PRAM, LocalSuppression
from veil.transforms.suppress import Drop, SuppressRows

__all__ = [
    "PRAM",
    "TRANSFORMS",
    "ColumnTransform",
    "Drop",
    "Fake",
    "Generalize",
    "LocalSuppression",
    "Mask",
    "Microaggregate",
    "Noise",
    "PCAMask",
    "Pseudonymize",
    "RankSwap",
    "Redact",
    "RenameColumns",
    "Resample",
    "ResampleContinuous",
    "Shuffle",
    "SuppressRows",
    "TopBottomCode",
]

#: The name each transform has in a policy file.
TRANSFORMS: Registry[type[ColumnTransform]] = Registry("transform")
for _name, _transform in (
    ("drop", Drop),
    ("suppress_rows", SuppressRows),
    ("mask", Mask),
    ("pseudonymize", Pseudonymize),
    ("fake", Fake),
    ("redact", Redact),
    ("generalize", Generalize),
    ("top_bottom_code", TopBottomCode),
    ("microaggregate", Microaggregate),
    ("resample", Resample),
    ("resample_continuous", ResampleContinuous),
    ("noise", Noise),
    ("rank_swap", RankSwap),
    ("shuffle", Shuffle),
    ("rename_columns", RenameColumns),
    ("pca_mask", PCAMask),
    ("pram", PRAM),
    ("local_suppression", LocalSuppression),
):
    TRANSFORMS.add(_name, _transform)

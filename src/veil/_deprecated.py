"""Old spellings accepted for one release, with a ``DeprecationWarning`` that names the new one."""

from __future__ import annotations

import warnings
from typing import Any

#: A keyword nobody gave (``None`` may be a value given on purpose).
UNSET: Any = object()


def renamed_seed(random_state: Any, seed: Any, where: str) -> Any:
    """``random_state``, or the deprecated ``seed`` when a caller of ``where`` gave it."""
    if seed is UNSET:
        return random_state
    warnings.warn(
        f"{where}(seed=...) is deprecated: use random_state= (scikit-learn's name)",
        DeprecationWarning,
        stacklevel=3,
    )
    return seed

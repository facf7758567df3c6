"""``veil.anonymize``: a pandas DataFrame in memory (``_anonymize``), or a Dask DataFrame on a
cluster (``_dask``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, overload

import pandas as pd

from veil.hierarchy import Hierarchy
from veil.policy import Policy
from veil.privacy._anonymize import anonymize as _in_memory
from veil.privacy._dask import DaskRelease, anonymize_dask
from veil.privacy.certificate import Release
from veil.progress import Progress
from veil.schema import is_dask

__all__ = ["anonymize"]


@overload
def anonymize(
    data: pd.DataFrame,
    policy: Policy | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    progress: Callable[[str], None] | Progress | None = None,
) -> Release: ...


@overload
def anonymize(
    data: Any,
    policy: Policy | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    progress: Callable[[str], None] | Progress | None = None,
) -> Release | DaskRelease: ...


def anonymize(
    data: Any,
    policy: Policy | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    progress: Callable[[str], None] | Progress | None = None,
) -> Release | DaskRelease:
    """Apply ``policy``'s steps to ``data`` (never modified) and certify the release.

    Raises ``PolicyError`` when the policy does not fit the data (unknown column, untreated
    identifier, bad step parameter: the message says where in the policy), and
    ``CheckFailedError`` when the release misses the policy's privacy goals.

    ``data`` may be a Dask DataFrame (``veil[scale]``): the release is then made on the cluster
    and returned as a ``DaskRelease`` (its parts in a temporary folder until ``to_parquet``
    names them), with the same certificate.
    """
    if is_dask(data):
        return anonymize_dask(data, policy, hierarchies=hierarchies, progress=progress)
    return _in_memory(data, policy, hierarchies=hierarchies, progress=progress)

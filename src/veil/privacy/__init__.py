"""Privacy models, certificates and the release engines: ``anonymize`` (a DataFrame in
memory), ``anonymize_stream`` (files a batch at a time), ``anonymize_dask`` (a cluster), with
``check`` and ``verify`` beside them. ``veil.anonymize`` / ``veil.check`` / ``veil.verify``
(``veil.api``) take any source and choose among them.

The names load on first use: ``veil.privacy.criteria`` (the privacy models, which the policy
validates) is imported below the policy without the engines above it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from veil._lazy import lazy_names

if TYPE_CHECKING:
    from veil.privacy._anonymize import anonymize, explore
    from veil.privacy._check import check, check_counts, check_stream
    from veil.privacy._dask import DaskRelease, anonymize_dask, check_dask
    from veil.privacy._measures import CheckResult
    from veil.privacy._stream import DEFAULT_BATCH_ROWS, StreamedRelease, anonymize_stream
    from veil.privacy._verify import Verification, verify, verify_counts, verify_files
    from veil.privacy.certificate import Certificate, Release, StepRecord
    from veil.privacy.classes import ClassStats, class_stats
    from veil.privacy.space import Node, SolutionSpace
    from veil.privacy.suggest import suggest_policy, suggest_policy_yaml

#: Where each public name lives.
_LAZY = {
    **dict.fromkeys(("anonymize", "explore"), "veil.privacy._anonymize"),
    **dict.fromkeys(("check", "check_counts", "check_stream"), "veil.privacy._check"),
    "CheckResult": "veil.privacy._measures",
    **dict.fromkeys(("DaskRelease", "anonymize_dask", "check_dask"), "veil.privacy._dask"),
    **dict.fromkeys(
        ("DEFAULT_BATCH_ROWS", "StreamedRelease", "anonymize_stream"), "veil.privacy._stream"
    ),
    **dict.fromkeys(
        ("Verification", "verify", "verify_counts", "verify_files"), "veil.privacy._verify"
    ),
    **dict.fromkeys(("Certificate", "Release", "StepRecord"), "veil.privacy.certificate"),
    **dict.fromkeys(("ClassStats", "class_stats"), "veil.privacy.classes"),
    **dict.fromkeys(("Node", "SolutionSpace"), "veil.privacy.space"),
    **dict.fromkeys(("suggest_policy", "suggest_policy_yaml"), "veil.privacy.suggest"),
}


__all__ = [
    "DEFAULT_BATCH_ROWS",
    "Certificate",
    "CheckResult",
    "ClassStats",
    "DaskRelease",
    "Node",
    "Release",
    "SolutionSpace",
    "StepRecord",
    "StreamedRelease",
    "Verification",
    "anonymize",
    "anonymize_dask",
    "anonymize_stream",
    "check",
    "check_counts",
    "check_dask",
    "check_stream",
    "class_stats",
    "explore",
    "suggest_policy",
    "suggest_policy_yaml",
    "verify",
    "verify_counts",
    "verify_files",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

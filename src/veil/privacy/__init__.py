"""Privacy models, certificates and the release engines: ``anonymize`` (a DataFrame in
memory), ``anonymize_stream`` (files a batch at a time), ``anonymize_dask`` (a cluster), with
``check`` and ``verify`` beside them. ``veil.anonymize`` / ``veil.check`` / ``veil.verify``
(``veil.api``) take any source and choose among them."""

from __future__ import annotations

from veil.privacy._anonymize import anonymize
from veil.privacy._check import CheckResult, check, check_counts, check_stream
from veil.privacy._dask import DaskRelease, anonymize_dask, check_dask
from veil.privacy._stream import DEFAULT_BATCH_ROWS, StreamedRelease, anonymize_stream
from veil.privacy._verify import Verification, verify, verify_counts, verify_files
from veil.privacy.certificate import Certificate, Release, StepRecord
from veil.privacy.classes import ClassStats, class_stats
from veil.privacy.suggest import suggest_policy, suggest_policy_yaml

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "Certificate",
    "CheckResult",
    "ClassStats",
    "DaskRelease",
    "Release",
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
    "suggest_policy",
    "suggest_policy_yaml",
    "verify",
    "verify_counts",
    "verify_files",
]

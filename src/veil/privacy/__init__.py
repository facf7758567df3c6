"""Privacy models, certificates and ``anonymize``: the release half of veil's flow."""

from __future__ import annotations

from veil.privacy._check import CheckResult, check_counts, check_stream
from veil.privacy._dask import DaskRelease, anonymize_dask, check_dask
from veil.privacy._stream import StreamedRelease, anonymize_stream
from veil.privacy._verify import Verification, verify_counts, verify_files
from veil.privacy.api import anonymize, check, verify
from veil.privacy.certificate import Certificate, Release, StepRecord
from veil.privacy.models import ClassStats, class_stats
from veil.privacy.suggest import suggest_policy, suggest_policy_yaml

__all__ = [
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

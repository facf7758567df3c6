"""Privacy models, certificates and ``anonymize``: the release half of veil's flow."""

from __future__ import annotations

from veil.privacy.anonymize import anonymize
from veil.privacy.certificate import Certificate, Release, StepRecord
from veil.privacy.check import CheckResult, check
from veil.privacy.models import ClassStats, class_stats
from veil.privacy.verify import Verification, verify

__all__ = [
    "Certificate",
    "CheckResult",
    "ClassStats",
    "Release",
    "StepRecord",
    "Verification",
    "anonymize",
    "check",
    "class_stats",
    "verify",
]

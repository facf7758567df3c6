"""Privacy models, certificates and ``anonymize``: the release half of veil's flow."""

from __future__ import annotations

from veil.privacy._anonymize import anonymize
from veil.privacy._check import CheckResult, check
from veil.privacy._verify import Verification, verify
from veil.privacy.certificate import Certificate, Release, StepRecord
from veil.privacy.models import ClassStats, class_stats

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

"""Privacy models, certificates and ``anonymize``: the release half of veil's flow."""

from __future__ import annotations

from veil.privacy.anonymize import anonymize
from veil.privacy.certificate import Certificate, Release, StepRecord
from veil.privacy.models import ClassStats, class_stats

__all__ = ["Certificate", "ClassStats", "Release", "StepRecord", "anonymize", "class_stats"]

"""PII discovery: which columns are identifiers, quasi-identifiers, sensitive or harmless.

result = veil.scan(df)
result.column("Tax_id").entity   # "KE_KRA_PIN"
policy = suggest_policy(result, df)
"""

from __future__ import annotations

import sys
import types
from typing import Any

from veil.frequency import class_sizes
from veil.risk.assess import RiskSummary, assess
from veil.scan.api import scan, scan_source
from veil.scan.core import ENTITIES, ROLE_OF, ColumnFinding, ScanResult, classify
from veil.scan.passes import scan_partitions, scan_stream

__all__ = [
    "ENTITIES",
    "ROLE_OF",
    "ColumnFinding",
    "RiskSummary",
    "ScanResult",
    "assess",
    "class_sizes",
    "classify",
    "scan",
    "scan_partitions",
    "scan_source",
    "scan_stream",
]


class _CallableModule(types.ModuleType):
    """``veil.scan`` is this package and, called, the scan: ``veil.scan(df)``."""

    def __call__(self, *args: Any, **kwargs: Any) -> ScanResult:
        return scan(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

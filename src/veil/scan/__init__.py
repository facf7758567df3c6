"""PII discovery: which columns are identifiers, quasi-identifiers, sensitive or harmless.

result = veil.scan(df)
result.column("Tax_id").entity   # "KE_KRA_PIN"
policy = suggest_policy(result, df)
"""

from __future__ import annotations

import functools
import sys
import types
from typing import Any

from veil.frequency import class_sizes
from veil.scan import core
from veil.scan.core import ENTITIES, ROLE_OF, ColumnFinding, ScanResult, classify
from veil.scan.passes import scan_partitions, scan_stream
from veil.scan.risk import RiskSummary, assess
from veil.schema import is_dask

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
    "scan_stream",
]


@functools.wraps(core.scan)
def scan(data: Any, **options: Any) -> ScanResult:
    if is_dask(data):  # a cluster's partitions: profiled and confirmed on the workers
        columns = options.pop("columns", None)
        return scan_partitions(data if columns is None else data[list(columns)], **options)
    return core.scan(data, **options)


class _CallableModule(types.ModuleType):
    """``veil.scan`` is this package and, called, the scan: ``veil.scan(df)``."""

    def __call__(self, *args: Any, **kwargs: Any) -> ScanResult:
        return scan(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

"""PII discovery: which columns are identifiers, quasi-identifiers, sensitive or harmless.

result = veil.scan(df)
result.column("Tax_id").entity   # "KE_KRA_PIN"
policy = suggest_policy(result, df)
"""

from __future__ import annotations

from veil.scan.core import ENTITIES, ROLE_OF, ColumnFinding, ScanResult, classify, scan
from veil.scan.risk import RiskSummary, assess, class_sizes

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
]

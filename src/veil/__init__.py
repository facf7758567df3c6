"""veil: privacy engineering for tabular data.

Find what is personal, release it safely, prove the release is safe, show the utility kept::

    import veil
    df = veil.read("clients.csv")
    found = veil.scan(df)                          # what is personal, with evidence
    policy = veil.suggest_policy(found, df)        # a starting policy
    release = veil.anonymize(df, policy)           # applied, searched, verified
    veil.write(release.data, "release.csv")
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from veil._version import __version__
from veil.exceptions import (
    CheckFailedError,
    InputError,
    MissingExtraError,
    OutputError,
    ParameterError,
    PolicyError,
    SecretError,
    UnknownColumnError,
    VeilError,
)

if TYPE_CHECKING:  # the names below are imported on first use (import veil stays fast)
    from veil import scan, transforms
    from veil.api import anonymize, verify
    from veil.checking import check
    from veil.io import Source, read, write
    from veil.policy import Policy, load_policy
    from veil.privacy import Certificate, Release
    from veil.privacy.suggest import suggest_policy
    from veil.report import Report, build_report
    from veil.scan import ScanResult
    from veil.schema import ColumnKind, ColumnRole, ColumnSpec, Schema

#: Where each public name lives. ``veil.scan`` is the ``veil.scan`` package, and calling it
#: scans (``veil.scan(df)``), so ``import veil.scan.recognizers`` works as well.
_LAZY = {
    "read": "veil.io",
    "write": "veil.io",
    "Policy": "veil.policy",
    "load_policy": "veil.policy",
    "Certificate": "veil.privacy",
    "Release": "veil.privacy",
    "anonymize": "veil.api",
    "check": "veil.checking",
    "verify": "veil.api",
    "Source": "veil.io",
    "Report": "veil.report",
    "build_report": "veil.report",
    "ScanResult": "veil.scan",
    "ColumnKind": "veil.schema",
    "ColumnRole": "veil.schema",
    "ColumnSpec": "veil.schema",
    "Schema": "veil.schema",
    "suggest_policy": "veil.privacy",
}
_SUBPACKAGES = {"scan", "transforms"}


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"veil.{name}")
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'veil' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Certificate",
    "CheckFailedError",
    "ColumnKind",
    "ColumnRole",
    "ColumnSpec",
    "InputError",
    "MissingExtraError",
    "OutputError",
    "ParameterError",
    "Policy",
    "PolicyError",
    "Release",
    "Report",
    "ScanResult",
    "Schema",
    "SecretError",
    "Source",
    "UnknownColumnError",
    "VeilError",
    "__version__",
    "anonymize",
    "build_report",
    "check",
    "load_policy",
    "read",
    "scan",
    "suggest_policy",
    "transforms",
    "verify",
    "write",
]

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

from veil import transforms
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
from veil.io import read, write
from veil.policy import Policy, load_policy
from veil.privacy import Certificate, Release, anonymize, check, verify
from veil.report import Report, build_report
from veil.scan import ScanResult
from veil.scan import scan as _scan
from veil.schema import ColumnKind, ColumnRole, ColumnSpec, Schema
from veil.suggest import suggest_policy

# DESIGN's API is veil.scan(df): the function takes the name of its subpackage here (the
# subpackage stays importable: import veil.scan.recognizers, from veil.scan import ...)
scan = _scan

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

"""veil: privacy engineering for tabular data.

Find what is personal, release it safely, prove the release is safe, show the utility kept::

    import veil
    df = veil.read("clients.csv")
    release = veil.anonymize(df, "policy.yaml")
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
from veil.privacy import Certificate, Release, anonymize
from veil.schema import ColumnKind, ColumnRole, ColumnSpec, Schema

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
    "Schema",
    "SecretError",
    "UnknownColumnError",
    "VeilError",
    "__version__",
    "anonymize",
    "load_policy",
    "read",
    "transforms",
    "write",
]

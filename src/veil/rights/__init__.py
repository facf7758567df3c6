"""Data-subject rights across real stores: a data map (SQL databases, folders of files, S3
object storage), the right of access (``retrieve``), and a tamper-evident audit log of every
request.

    >>> from veil.rights import DataMap
    >>> data_map = DataMap.model_validate({"subject_keys": ["national_id"], "stores": {
    ...     "core": {"kind": "sql", "url": "sqlite:///insurer.db", "tables": {
    ...         "clients": {"subject_keys": {"national_id": "national_id"}},
    ...         "claims": {"links": {"client_id": "clients.id"}}}}}})
    >>> sorted(data_map.stores["core"].tables)
    ['claims', 'clients']
"""

from __future__ import annotations

# the kinds of store (SQL, files, S3) registered in veil.rights.stores.KINDS before any request
from veil.rights import file_kinds, sql_kind  # noqa: F401  (register the kinds)
from veil.rights._audit import AuditLog, subject_hash
from veil.rights._map import DataMap, RetentionClass, Store, TableMap, dump_map, load_map
from veil.rights.erase import Erasure
from veil.rights.requests import (
    access,
    erasure,
    open_audit,
    requests_of,
    retention,
    write_confirmation,
)
from veil.rights.retention import RetentionResult
from veil.rights.retrieve import Retrieval, parse_subject, retrieve

__all__ = [
    "AuditLog",
    "DataMap",
    "Erasure",
    "RetentionClass",
    "RetentionResult",
    "Retrieval",
    "Store",
    "TableMap",
    "access",
    "dump_map",
    "erasure",
    "load_map",
    "open_audit",
    "parse_subject",
    "requests_of",
    "retention",
    "retrieve",
    "subject_hash",
    "write_confirmation",
]

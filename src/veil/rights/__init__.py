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

from typing import TYPE_CHECKING

from veil._lazy import lazy_names

if TYPE_CHECKING:
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

#: Where each public name lives: loaded on first use (a request on a SQL map never loads the
#: file kinds, nor pandas with them; the kinds register themselves: veil.rights.stores).
_LAZY = {
    **dict.fromkeys(("AuditLog", "subject_hash"), "veil.rights._audit"),
    **dict.fromkeys(
        ("DataMap", "RetentionClass", "Store", "TableMap", "dump_map", "load_map"),
        "veil.rights._map",
    ),
    "Erasure": "veil.rights.erase",
    **dict.fromkeys(
        ("access", "erasure", "open_audit", "requests_of", "retention", "write_confirmation"),
        "veil.rights.requests",
    ),
    "RetentionResult": "veil.rights.retention",
    **dict.fromkeys(("Retrieval", "parse_subject", "retrieve"), "veil.rights.retrieve"),
}


# Two functions share a name with a module of this package (veil.rights.retrieve,
# veil.rights.retention): the modules are imported first (neither loads pandas), so that the
# names stay the functions once bound.
from veil.rights import retention as _retention_module  # noqa: E402, F401
from veil.rights import retrieve as _retrieve_module  # noqa: E402, F401
from veil.rights.requests import retention  # noqa: E402
from veil.rights.retrieve import retrieve  # noqa: E402

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

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

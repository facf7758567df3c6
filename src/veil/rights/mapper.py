"""A first data map from the databases themselves, and a check of a map against the live
stores.

``build_map``: tables and single-column foreign keys by SQLAlchemy reflection become the map's
tables and links; the columns veil's own scan reads as direct identifiers (national IDs, KRA
PINs, e-mails, phones, cards...) in a sample of each table become subject keys, named after
what they hold. The user edits the result; nothing is guessed silently: every table is listed,
those the map cannot reach are named by the check.

``check_map``: every table, column, link target and file pattern exists; every table is
reachable from a subject key; every subject-key and link column has an index (without one,
retrieve and erase read the whole table for each person).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd
import sqlalchemy as sa

from veil.exceptions import ParameterError
from veil.rights import _sql
from veil.rights._map import DataMap, Store, TableMap
from veil.rights.stores import kind_of

#: what a subject key is called in the map, by the scan's entity
KEY_NAMES = {
    "KE_NATIONAL_ID": "national_id",
    "KE_KRA_PIN": "kra_pin",
    "EMAIL": "email",
    "PHONE_NUMBER": "phone",
    "KE_PHONE": "phone",
    "CREDIT_CARD": "card",
    "IBAN": "iban",
    "US_SSN": "ssn",
    "PASSPORT": "passport",
}
SAMPLE = 1_000


def build_map(
    urls: list[str], *, scan: bool = True, progress: Callable[[str], None] = lambda _: None
) -> DataMap:
    """A map of the databases at ``urls``."""
    stores: dict[str, Store] = {}
    keys: set[str] = set()
    for index, url in enumerate(urls, 1):
        name = sa.engine.make_url(url).database or f"db{index}"
        name = name.rsplit("/", 1)[-1].split(".")[0] or f"db{index}"
        engine = _sql.connect(url, store=name)
        try:
            metadata = _sql.reflect(engine)
            tables: dict[str, TableMap] = {}
            with engine.connect() as connection:
                for table in metadata.sorted_tables:
                    if table.name == "veil_audit_anchor":  # veil's own (the log's anchor)
                        continue
                    progress(f"mapping {name}.{table.name}")
                    links = {}
                    for fk in table.foreign_keys:
                        if len(fk.constraint.columns) == 1:  # type: ignore[union-attr]
                            links[fk.parent.name] = f"{fk.column.table.name}.{fk.column.name}"
                    found = _subject_keys(connection, table) if scan else {}
                    keys.update(found)
                    tables[table.name] = TableMap(subject_keys=found, links=links)
            stores[name] = Store(kind="sql", url=url, tables=tables)
        finally:
            engine.dispose()
    return DataMap(subject_keys=sorted(keys) or ["customer_id"], stores=stores)


def _subject_keys(connection: sa.Connection, table: sa.Table) -> dict[str, str]:
    from veil.scan import scan
    from veil.schema import ColumnRole

    rows = [dict(r._mapping) for r in connection.execute(sa.select(table).limit(SAMPLE))]
    if not rows:
        return {}
    out: dict[str, str] = {}
    for found in scan(pd.DataFrame(rows)).columns:
        # only key-shaped values: a name or a free-text note is not looked a person up by
        if (
            found.role is ColumnRole.IDENTIFIER
            and found.entity in KEY_NAMES
            and not found.free_text
        ):
            out.setdefault(KEY_NAMES[found.entity], found.name)
    primary = [c.name for c in table.primary_key.columns]
    if out and len(primary) == 1 and not table.foreign_keys:
        # the table people are kept in: its own key is how other systems know them
        out.setdefault(f"{table.name}_{primary[0]}", primary[0])
    return out


def check_map(data_map: DataMap) -> tuple[list[str], list[str]]:
    """``(errors, warnings)`` of the map against the live stores."""
    errors: list[str] = []
    warnings: list[str] = []
    for name, store in data_map.stores.items():
        reached = reachable(store)
        for table in store.tables:
            if table not in reached:
                warnings.append(
                    f"{name}.{table}: no subject key and no link to one: retrieve and erase "
                    "never reach it (map its key, or leave it out)"
                )
        try:
            kind_of(store).check(name, store, errors, warnings)
        except Exception as err:  # a store that is down is one error line, not a traceback
            errors.append(f"{name}: {err}")
    return errors, warnings


def reachable(store: Store) -> set[str]:
    """The store's tables a request reaches: those with a subject key, and those linked to
    one it reaches."""
    out = {t for t, spec in store.tables.items() if spec.subject_keys}
    changed = True
    while changed:
        changed = False
        for table, spec in store.tables.items():
            if table not in out and any(v.split(".")[0] in out for v in spec.links.values()):
                out.add(table)
                changed = True
    return out


def write_map(
    output: str | Path,
    urls: Sequence[str] = (),
    *,
    fides: str | Path | None = None,
    fides_urls: Mapping[str, str] | None = None,
    scan: bool = True,
    progress: Callable[[str], None] | None = None,
) -> DataMap:
    """A first data map, written to ``output`` (YAML) for the user to edit: built from the
    databases at ``urls`` (tables, foreign keys, subject keys found by the scan), or from a
    Fides dataset YAML (``fides``, with each dataset's URL in ``fides_urls``)."""
    from veil.io import atomic_open, check_output
    from veil.rights._map import dump_map

    if not urls and fides is None:
        raise ParameterError("give database URLs to map, --from-fides FILE, or --map MAP --check")
    check_output(output, inputs=[str(fides)] if fides else [], force=False)
    if fides is not None:
        from veil.rights.fides import from_fides

        data_map = from_fides(fides, dict(fides_urls or {}))
    else:
        data_map = build_map(list(urls), scan=scan, progress=progress or (lambda _: None))
    with atomic_open(output, force=False) as handle:
        handle.write(dump_map(data_map))
    return data_map

"""Right of access and portability: everything about one person, in every store of the map,
found from their identity and followed along links breadth-first (a client's policies, a
policy's claims, a claim's payments), as data a program reads and a person can check.

A person is every key they are known by: from the key given, the rows found hold their other
subject keys (an e-mail in the customers table, a phone in a contacts file); those are looked
up too, across stores, until no new value appears (:func:`closure`). Keys the map says never
to follow (``follow.never``) and values many people share (``follow.shared``: a family
e-mail) are not followed; a closure past ``follow.max_values`` stops the request, since it
joins several people."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from veil._html import Shown
from veil.exceptions import InputError
from veil.rights import _sql
from veil.rights._map import DataMap, Store
from veil.rights._subject import TOKEN, Subject, values_of
from veil.rights.stores import kind_of


@dataclass(frozen=True)
class Retrieval(Shown):
    """What the map's stores hold about one subject."""

    subject: dict[str, str]
    stores: dict[str, dict[str, list[dict[str, Any]]]]
    retention: dict[str, str | None] = field(default_factory=dict)  # "store.table" -> class
    keys: dict[str, list[str]] = field(default_factory=dict)  # every key followed, its values

    @property
    def counts(self) -> dict[str, int]:
        """Rows per table (``store.table`` when two stores share a table name)."""
        names = [t for tables in self.stores.values() for t in tables]
        return {
            (t if names.count(t) == 1 else f"{s}.{t}"): len(rows)
            for s, tables in self.stores.items()
            for t, rows in tables.items()
        }

    @property
    def total(self) -> int:
        """Rows found in all."""
        return sum(self.counts.values())

    def _repr_html_(self) -> str:
        return summary_html(self)

    def to_dict(self) -> dict[str, Any]:
        """``{"subject", "stores": {STORE: {TABLE: [rows]}}, "counts": {TABLE: n}, "keys":
        {KEY: [values followed]}}``."""
        return {
            "subject": self.subject,
            "stores": {
                s: {
                    t: [{k: _sql.jsonable(v) for k, v in r.items()} for r in rows]
                    for t, rows in tables.items()
                }
                for s, tables in self.stores.items()
            },
            "counts": self.counts,
            "keys": self.keys,
        }


def summary_html(found: Retrieval) -> str:
    """A page a person can read: what is held about them, where, under which retention class,
    then every row (values escaped)."""
    from veil._html import card

    overview = [
        (store, table, str(len(rows)), found.retention.get(f"{store}.{table}") or "-")
        for store, tables in found.stores.items()
        for table, rows in tables.items()
    ]
    parts = [
        card(
            "What is held about you",
            headers=("store", "table", "rows", "retention class"),
            rows=overview or [("-", "-", "0", "-")],
            lines=[f"{found.total} rows in {len(found.stores)} stores"],
        )
    ]
    for store, tables in found.stores.items():
        for table, rows in tables.items():
            columns = list(rows[0]) if rows else []
            cells = [[str(_sql.jsonable(r.get(c, ""))) for c in columns] for r in rows[:500]]
            more = [f"... and {len(rows) - 500} more rows in the JSON"] if len(rows) > 500 else []
            parts.append(card(f"{store}: {table}", headers=columns, rows=cells, lines=more))
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Your data</title></head>"
        f"<body>{''.join(parts)}</body></html>"
    )


def write_export(found: Retrieval, path: str | Path) -> None:
    """The export: ``.json`` (the whole retrieval), or ``.zip`` (a JSON file per store and a
    readable ``summary.html``), written through a temporary file and a rename."""
    import zipfile

    from veil.io import atomic_path

    target = Path(path)
    data = found.to_dict()
    with atomic_path(target, force=False) as temporary:
        if target.suffix.lower() == ".zip":
            with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive:
                for store, tables in data["stores"].items():
                    body = {"subject": data["subject"], "store": store, "tables": tables}
                    archive.writestr(
                        f"{store}.json", json.dumps(body, indent=1, ensure_ascii=False)
                    )
                archive.writestr("summary.html", summary_html(found))
        else:
            Path(temporary).write_text(
                json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8"
            )


def parse_subject(text: str, data_map: DataMap) -> dict[str, str]:
    """``KEY=VALUE`` with a key the map knows."""
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key or not value:
        raise InputError(
            f"--subject must read KEY=VALUE (such as national_id=12345678), got {text!r}"
        )
    if key not in data_map.subject_keys:
        raise InputError(
            f"subject key {key!r} is not in the map; known keys: {', '.join(data_map.subject_keys)}"
        )
    return {key: value}


def retrieve(data_map: DataMap, subject: Subject) -> Retrieval:
    """Every row about ``subject`` in every store, under every key they are known by."""
    keys, stores = closure(data_map, subject)
    retention: dict[str, str | None] = {}
    for name, tables in stores.items():
        store = data_map.stores[name]
        retention.update({f"{name}.{t}": store.tables[t].retention for t in tables})
    given = {
        k: values_of(v)[0] if isinstance(v, str) else ", ".join(values_of(v))
        for k, v in subject.items()
    }
    return Retrieval(given, stores, retention, {k: sorted(v) for k, v in keys.items()})


Found = dict[str, dict[str, list[dict[str, Any]]]]


def closure(data_map: DataMap, subject: Subject) -> tuple[dict[str, set[str]], Found]:
    """The subject's keys, followed to a fixed point, and the rows they find in each store."""
    rules = data_map.follow
    known: dict[str, set[str]] = {k: {v.strip() for v in values_of(v)} for k, v in subject.items()}
    query: Subject = dict(subject)  # the first pass as given: a bad value is an error
    while True:
        found = {name: retrieve_one(name, store, query) for name, store in data_map.stores.items()}
        grew = False
        before = {k: set(v) for k, v in known.items()}
        for name, tables in found.items():
            store = data_map.stores[name]
            for table, rows in tables.items():
                keyed = store.tables[table].subject_keys
                for row in rows:
                    values = {key: _text(row.get(column)) for key, column in keyed.items()}
                    # a row found by one of the person's keys is theirs: all its keys are;
                    # a row reached only by a link (a claim's beneficiary) gives a key only
                    # of a kind the person has none of yet (a contacts row's phone)
                    direct = any(v in before.get(k, ()) for k, v in values.items())
                    for key, text in values.items():
                        if (
                            not text
                            or key in rules.never
                            or text.startswith(TOKEN)
                            or text in shared_values(rules, key)
                            or not (direct or not before.get(key))
                        ):
                            continue
                        seen = known.setdefault(key, set())
                        if text not in seen:
                            seen.add(text)
                            grew = True
        given = [k for k, v in subject.items() if isinstance(v, str)]  # one value, as asked
        for key in rules.unique or given:
            if len(known.get(key, ())) > 1:
                raise InputError(
                    f"following this person's keys found {len(known[key])} values of {key!r}, "
                    "which a person has one of: a value several people share (a family e-mail, "
                    "an office phone) joins them; list it under follow.shared in the map: "
                    "nothing was changed"
                )
        total = sum(map(len, known.values()))
        if total > rules.max_values:
            shown = ", ".join(f"{k} {len(v)}" for k, v in known.items() if v)
            raise InputError(
                f"following this person's keys found {total} values ({shown}), more than "
                f"follow.max_values ({rules.max_values}): a value several people share (a "
                "family e-mail, an office phone) joins them; list it under follow.shared in the "
                "map (or raise max_values): nothing was changed"
            )
        if not grew:
            return {k: v for k, v in known.items() if v}, found
        query = {k: v for k, v in known.items() if v}


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def shared_values(rules: Any, key: str) -> set[str]:
    """Values of ``key`` the map says many people share (never followed)."""
    return {v.strip() for v in rules.shared.get(key, [])}


def retrieve_one(name: str, store: Store, subject: Subject) -> dict[str, list[dict[str, Any]]]:
    """The rows about ``subject`` in one store (tables with none left out)."""
    found = kind_of(store).retrieve(name, store, subject)
    return {t: rows for t, rows in found.items() if rows}


Seed = Callable[[sa.Connection, str, sa.Table], list[dict[str, Any]]]

"""Fides datasets (YAML) into veil's data map, so Fides users can move over: parsed and
validated by ``fideslang`` (Apache-2.0), Fides' own models.

A dataset becomes a SQL store (its URL given, as Fides keeps connections apart from
datasets); a collection a table; a field with ``fides_meta.identity`` a subject key; a
field with ``fides_meta.references`` a link (``direction: from``: this field points at the
referenced one; ``to``: the referenced field points at this one). Data categories are kept
in nothing veil acts on; ``veil rights map --check`` then checks the result against the
database.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from veil.exceptions import MissingExtraError, PolicyError
from veil.rights._map import DataMap, Store, TableMap


def from_fides(path: str | Path, urls: dict[str, str]) -> DataMap:
    """The data map of the Fides datasets in ``path``; ``urls``: dataset fides_key -> URL."""
    try:
        from fideslang.models import Dataset
        from pydantic import ValidationError
    except ImportError as err:
        raise MissingExtraError(
            "Fides datasets need fideslang: pip install 'veil[rights]'"
        ) from err
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    items = raw.get("dataset", []) if isinstance(raw, dict) else []
    if not items:
        raise PolicyError(f"{path}: no `dataset:` list, as Fides writes datasets")
    stores: dict[str, Store] = {}
    keys: set[str] = set()
    for item in items:
        try:
            dataset = Dataset.model_validate(item)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise PolicyError(
                f"{path}: Fides dataset {item.get('fides_key')!r}, {where}: {first['msg']}"
            ) from err
        if dataset.fides_key not in urls:
            raise PolicyError(
                f"dataset {dataset.fides_key!r} has no database URL: pass "
                f"--url {dataset.fides_key}=URL"
            )
        tables: dict[str, dict[str, Any]] = {
            c.name: {"subject_keys": {}, "links": {}} for c in dataset.collections
        }
        for collection in dataset.collections:
            for field in collection.fields or []:
                meta = field.fides_meta
                if meta is None:
                    continue
                if meta.identity:
                    tables[collection.name]["subject_keys"][meta.identity] = field.name
                    keys.add(meta.identity)
                for reference in meta.references or []:
                    if reference.dataset != dataset.fides_key:
                        continue  # across datasets: veil links tables within one store
                    other, _, column = str(reference.field).partition(".")
                    if reference.direction == "to":
                        tables.setdefault(other, {"subject_keys": {}, "links": {}})
                        tables[other]["links"][column] = f"{collection.name}.{field.name}"
                    else:
                        tables[collection.name]["links"][field.name] = f"{other}.{column}"
        mapped = {t: TableMap(**v) for t, v in tables.items()}
        stores[dataset.fides_key] = Store(kind="sql", url=urls[dataset.fides_key], tables=mapped)
    return DataMap(subject_keys=sorted(keys), stores=stores)

"""The data map: which stores hold personal data, in which tables, under which subject keys,
how the tables link, and how long each may be kept. YAML, validated by pydantic; every
mistake is one line naming the store, table and key.

    subject_keys: [national_id, email, customer_id]
    audit_log: insurer.audit.jsonl        # default: beside the map, MAP.audit.jsonl
    stores:
      core:
        kind: sql
        url: postgresql+psycopg://veil@db/insurer
        tables:
          clients:  {subject_keys: {national_id: national_id, customer_id: id}}
          policies: {links: {client_id: clients.id}, retention: insurance_record}
          claims:   {links: {policy_id: policies.id}}

A link ``column: table.column`` says this table's rows belong to the subject of the row they
point at; retrieval and erasure follow links from the rows a subject key finds to the rows
that point at them (a client's policies, a policy's claims), never back up to a parent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from veil.exceptions import InputError, PolicyError, SecretError, one_line
from veil.keys import check_key_env


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TableMap(_Strict):
    """One table (or file pattern, or object prefix) of a store."""

    subject_keys: dict[str, str] = Field(default_factory=dict)  # subject key -> column
    links: dict[str, str] = Field(default_factory=dict)  # column -> "table.column"
    retention: str | None = None
    date_column: str | None = None  # the row's age, for retention

    @field_validator("links")
    @classmethod
    def _targets(cls, links: dict[str, str]) -> dict[str, str]:
        for column, target in links.items():
            if target.count(".") != 1 or not all(target.split(".")):
                raise ValueError(f"link {column}: {target!r} must read TABLE.COLUMN")
        return links


class Store(_Strict):
    """A place personal data is kept."""

    kind: str  # a registered kind (veil.rights.stores.KINDS): sql, files, s3
    url: str | None = None  # sql: a SQLAlchemy URL
    path: str | None = None  # files: a folder
    bucket: str | None = None  # s3
    endpoint_url: str | None = None  # s3-compatible servers (moto, MinIO)
    read_only: bool = False
    tables: dict[str, TableMap] = Field(default_factory=dict)

    @field_validator("kind")
    @classmethod
    def _known(cls, kind: str) -> str:
        import difflib

        from veil.rights.stores import known_kinds

        known = known_kinds()
        if kind not in known:
            close = difflib.get_close_matches(kind, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"kind must be one of {', '.join(known)}, got {kind!r}{hint}")
        return kind

    @model_validator(mode="after")
    def _located(self) -> Store:
        from veil.rights.stores import kind_of

        kind = kind_of(self)
        if getattr(self, kind.needs) is None:
            raise ValueError(f"a {self.kind} store needs {kind.needs}")
        kind.validate(self)
        return self


def inside_folder(pattern: str) -> str:
    """A file pattern that cannot leave its store's folder: relative, without ``..``."""
    from pathlib import PurePath, PurePosixPath, PureWindowsPath

    if (
        PurePosixPath(pattern).is_absolute()
        or PureWindowsPath(pattern).is_absolute()
        or PureWindowsPath(pattern).drive
    ):
        raise ValueError(
            f"file pattern {pattern!r} is absolute: patterns are read inside the "
            "store's folder; give the folder as the store's path"
        )
    if ".." in PurePath(pattern.replace("\\", "/")).parts:
        raise ValueError(
            f"file pattern {pattern!r} climbs out of the store's folder ('..'): "
            "map that folder as a store of its own"
        )
    return pattern


class RetentionClass(_Strict):
    """How long a class of rows may be kept, and what happens then."""

    keep: str | None = None  # "10 months", "5 years"
    then: Literal["delete", "archive"] = "delete"
    archive_to: str | None = None  # a store name, when then is archive
    hold: str | None = None  # a legal hold: not deleted before this age, anonymized instead


class FollowRules(_Strict):
    """How a person's keys are followed from one to the next (see ``retrieve``)."""

    never: list[str] = Field(default_factory=list)  # keys whose found values are not followed
    shared: dict[str, list[str]] = Field(default_factory=dict)  # key -> values many people share
    max_values: int = 25  # a closure past this many values joins several people: stop
    # keys a person has one value of (default: the key a request gives): a second one found
    # means a shared value joined two people, and the request stops
    unique: list[str] = Field(default_factory=list)


class DataMap(_Strict):
    """The whole map."""

    version: int = 1
    subject_keys: list[str]
    follow: FollowRules = Field(default_factory=FollowRules)
    stores: dict[str, Store]
    retention: dict[str, RetentionClass] = Field(default_factory=dict)
    audit_log: str | None = None
    key_env: str = "VEIL_KEY"
    key_file: str | None = None

    @field_validator("key_env")
    @classmethod
    def _key_env(cls, value: str) -> str:
        try:  # a key pasted in the name's place is refused without being repeated
            return check_key_env(value)
        except SecretError as err:
            raise ValueError(str(err)) from None

    @model_validator(mode="after")
    def _consistent(self) -> DataMap:
        for key in [*self.follow.never, *self.follow.shared, *self.follow.unique]:
            if key not in self.subject_keys:
                raise ValueError(f"follow: {key!r} is not one of subject_keys {self.subject_keys}")
        for store_name, store in self.stores.items():
            for table_name, table in store.tables.items():
                where = f"store {store_name!r}, table {table_name!r}"
                for key in table.subject_keys:
                    if key not in self.subject_keys:
                        raise ValueError(
                            f"{where}: subject key {key!r} is not in subject_keys "
                            f"{self.subject_keys}"
                        )
                for column, target in table.links.items():
                    parent = target.split(".")[0]
                    if parent not in store.tables:
                        raise ValueError(
                            f"{where}: link {column} -> {target} names a table the "
                            "store does not map"
                        )
                if table.retention is not None and table.retention not in self.retention:
                    raise ValueError(
                        f"{where}: retention class {table.retention!r} is not "
                        f"defined under retention"
                    )
                self._archivable(store_name, store, table_name, table.retention)
            cycle = _cycle(store)
            if cycle:
                raise ValueError(f"store {store_name!r}: links form a cycle: {' -> '.join(cycle)}")
        return self

    def _archivable(
        self, store_name: str, store: Store, table: str, class_name: str | None
    ) -> None:
        """A table archived by its class goes to a store of its kind that maps it (and, in a
        database, the tables linking to it): retrieve and erase must reach archived rows."""
        from veil.rights.stores import kind_of

        rule = self.retention.get(class_name or "")
        if rule is None or rule.then != "archive":
            return
        where = f"store {store_name!r}, table {table!r}: retention class {class_name!r}"
        if rule.archive_to is None or rule.archive_to not in self.stores:
            raise ValueError(
                f"{where} archives to {rule.archive_to!r}, which is not a store of "
                "the map: name one with archive_to"
            )
        archive = self.stores[rule.archive_to]
        if rule.archive_to == store_name or archive.kind != store.kind:
            raise ValueError(
                f"{where} archives to {rule.archive_to!r}: the archive must be "
                f"another {store.kind} store"
            )
        needed = [table, *_linking(store, table)] if kind_of(store).linked else [table]
        missing = [t for t in needed if t not in archive.tables]
        if missing:
            raise ValueError(
                f"{where} archives to {rule.archive_to!r}, which does not map "
                f"{', '.join(missing)}: map them there too, so that retrieve and "
                "erase reach archived rows"
            )

    def audit_path(self, map_path: str | Path) -> Path:
        """Where the audit log lives (relative paths: beside the map)."""
        base = Path(map_path)
        if self.audit_log is None:
            return base.with_name(base.stem + ".audit.jsonl")
        path = Path(self.audit_log)
        return path if path.is_absolute() else base.parent / path


def _cycle(store: Store) -> list[str]:
    """A cycle in the store's link graph (child -> parent), or []."""
    graph = {
        t: sorted({v.split(".")[0] for v in m.links.values()}) for t, m in store.tables.items()
    }
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for parent in graph.get(node, []):
            if state.get(parent) == 1:
                return [*path[path.index(parent) :], parent]
            if parent not in state and (found := visit(parent)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in graph:
        if node not in state and (found := visit(node)):
            return found
    return []


def _linking(store: Store, table: str) -> list[str]:
    """The tables whose rows link to ``table``'s, directly or through others."""
    out: list[str] = []
    todo = [table]
    while todo:
        parent = todo.pop()
        for child, spec in store.tables.items():
            if (
                child not in out
                and child != table
                and any(v.split(".")[0] == parent for v in spec.links.values())
            ):
                out.append(child)
                todo.append(child)
    return sorted(out)


def children_first(store: Store) -> list[str]:
    """The store's tables, every table before the tables it links to (erase order)."""
    order: list[str] = []
    seen: set[str] = set()
    parents = {t: {v.split(".")[0] for v in m.links.values()} for t, m in store.tables.items()}
    children = {t: [c for c, ps in parents.items() if t in ps] for t in store.tables}

    def place(table: str) -> None:
        if table in seen:
            return
        seen.add(table)
        for child in sorted(children[table]):
            place(child)
        order.append(table)

    for table in sorted(store.tables):
        place(table)
    return order


def load_map(path: str | Path) -> DataMap:
    """Read and validate a data map; one line on the first mistake."""
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError(f"cannot read the data map {str(path)!r}: {err.strerror}") from err
    except yaml.YAMLError as err:  # where and what, never the line (it may hold a key)
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
        problem = one_line(getattr(err, "problem", None) or "")
        raise PolicyError(
            f"the data map {str(path)!r} is not valid YAML:{where} {problem}"
        ) from err
    if not isinstance(raw, dict):
        raise PolicyError(f"the data map {str(path)!r} must be a mapping with stores")
    try:
        return DataMap.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the map"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise PolicyError(f"data map {str(path)!r}, {where}: {message}") from err


def dump_map(data_map: DataMap) -> str:
    """The map as YAML (what ``veil rights map`` writes for the user to edit)."""
    body = data_map.model_dump(exclude_none=True, exclude_defaults=False)
    return yaml.safe_dump(body, sort_keys=False, allow_unicode=True)

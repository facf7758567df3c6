"""SQL stores through SQLAlchemy (SQLite embedded; PostgreSQL through psycopg 3 or pg8000):
reflection, and rows fetched by a column's values in chunks, values first made the column's
own type (a national ID typed as text never matches an integer column silently)."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from veil.exceptions import InputError

#: values per IN (...) query: far below every database's bound-parameter limit
CHUNK = 1_000


def connect(url: str, *, store: str) -> sa.Engine:
    """An engine for ``url``, checked by one round trip; a store that is down is one line."""
    try:
        engine = sa.create_engine(url)
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except ModuleNotFoundError as err:
        raise InputError(
            f"store {store!r}: the database driver is missing ({err.name}): "
            "pip install 'veil[rights]'"
        ) from err
    except sa.exc.ArgumentError as err:
        raise InputError(
            f"store {store!r}: {url.split('@')[-1]!r} is not a SQLAlchemy URL"
        ) from err
    except sa.exc.SQLAlchemyError as err:
        raise InputError(f"store {store!r} cannot be reached: {first_line(err)}") from err
    return engine


def first_line(err: Exception) -> str:
    text = str(getattr(err, "orig", None) or err)
    return text.strip().splitlines()[0] if text.strip() else type(err).__name__


def reflect(
    engine: sa.Engine, tables: Iterable[str] | None = None, *, store: str = ""
) -> sa.MetaData:
    """The database's tables (only ``tables`` when given; one missing is one line)."""
    wanted = list(tables) if tables is not None else None
    if wanted is not None:
        present = set(sa.inspect(engine).get_table_names())
        missing = [t for t in wanted if t not in present]
        if missing:
            raise InputError(f"store {store!r} has no table {missing[0]!r}: fix the map")
    metadata = sa.MetaData()
    metadata.reflect(engine, only=wanted)
    return metadata


def typed(
    column: sa.Column[Any], values: Iterable[Any], *, where: str, lenient: bool = False
) -> list[Any]:
    """``values`` as the column's Python type (a text value for an integer key); with
    ``lenient``, a value that cannot be one is left out (it cannot match) instead of refused."""
    try:
        kind = column.type.python_type
    except NotImplementedError:
        return list(values)
    out = []
    for value in values:
        if value is None or isinstance(value, kind):
            out.append(value)
            continue
        try:
            out.append(kind(value) if kind is not bool else str(value).lower() in ("1", "true"))
        except (TypeError, ValueError, decimal.InvalidOperation) as err:
            if lenient:
                continue
            raise InputError(
                f"{where}: {value!r} cannot be a value of column {column.name!r} ({kind.__name__})"
            ) from err
    return out


def fetch(
    connection: sa.Connection,
    table: sa.Table,
    column: str,
    values: Iterable[Any],
    *,
    where: str,
    lenient: bool = False,
) -> list[dict[str, Any]]:
    """Every row of ``table`` whose ``column`` is one of ``values``."""
    wanted = typed(
        table.c[column], {v for v in values if v is not None}, where=where, lenient=lenient
    )
    rows: list[dict[str, Any]] = []
    for start in range(0, len(wanted), CHUNK):
        chunk = wanted[start : start + CHUNK]
        query = sa.select(table).where(table.c[column].in_(chunk))
        rows.extend(dict(r._mapping) for r in connection.execute(query))
    return rows


def row_key(table: sa.Table, row: dict[str, Any]) -> tuple[Any, ...]:
    """A row's identity: its primary key, else all its values."""
    columns = [c.name for c in table.primary_key.columns] or list(row)
    return tuple(row[c] for c in columns)


def jsonable(value: Any) -> Any:
    """A value as JSON can hold it (dates as ISO text, decimals as text, bytes as hex)."""
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return value

"""Reading a database: one table or one SELECT, on a read-only connection."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from veil.exceptions import (
    InputError,
    MissingExtraError,
    ParameterError,
    one_line,
    shown,
)


def display_source(source: object) -> str:
    """A data source as messages show it: a database URL without its password."""
    text = str(source)
    if "://" not in text:
        return text
    import sqlalchemy as sa

    try:
        return str(sa.engine.make_url(text).render_as_string(hide_password=True))
    except sa.exc.ArgumentError:
        return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", text)


def read_sql(url: str, *, table: str | None, query: str | None) -> pd.DataFrame:
    """Read a table or one SELECT from a database, on a read-only connection: veil never
    changes its input, and a query that would (``DROP TABLE``, ``SELECT ... INTO``, a
    data-modifying ``WITH``) is refused before it reaches the database."""
    import sqlalchemy as sa

    if (table is None) == (query is None):
        raise ParameterError(
            f"a SQL source needs exactly one of table or query, got table={table!r}, "
            f"query={query!r}; pass --table NAME or --query 'SELECT ...'"
        )
    try:
        address = sa.engine.make_url(url)
    except sa.exc.ArgumentError as err:
        raise InputError(f"{url}: not a SQLAlchemy URL ({err}); e.g. sqlite:///data.db") from err
    backend = address.get_backend_name()
    url = display_source(url)  # messages never show the password
    if query is not None:
        _check_select(url, query, backend)
    try:
        engine = _read_only_engine(address)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as err:
        raise InputError(
            f"{url}: not a usable SQLAlchemy URL ({one_line(str(err))}); e.g. sqlite:///data.db"
        ) from err
    except ImportError as err:  # the database's driver
        raise MissingExtraError(
            f"{url}: reading {backend} needs its driver {err.name or ''}, which is not "
            f"installed; pip install the driver the URL names (e.g. postgresql+pg8000:// with "
            "`pip install pg8000`)"
        ) from err
    try:
        with engine.connect() as conn:
            _make_read_only(conn, backend)
            if table is not None:
                if not sa.inspect(conn).has_table(table):
                    names = sa.inspect(conn).get_table_names()
                    raise InputError(
                        f"{url}: table {table!r} does not exist; tables: {', '.join(names)}"
                    )
                frame = pd.read_sql_table(table, conn)
            else:
                frame = pd.read_sql_query(sa.text(query or ""), conn)
            conn.rollback()  # a read-only session has nothing to keep
            return frame
    except (sa.exc.SQLAlchemyError, pd.errors.DatabaseError) as err:
        raise InputError(f"{url}: the database refused the read: {_db_message(err)}") from err
    finally:
        engine.dispose()


def _db_message(err: BaseException) -> str:
    """The database's own words (pandas and SQLAlchemy wrap them, pg8000 in a dict)."""
    while isinstance(err.__cause__, Exception) and not hasattr(err, "orig"):
        err = err.__cause__
    orig = getattr(err, "orig", None) or err
    first = orig.args[0] if getattr(orig, "args", None) else orig
    if isinstance(first, dict) and "M" in first:
        return str(first["M"])
    return one_line(str(orig).split("\n[SQL:")[0])


#: SQLAlchemy backend -> the sqlglot dialect that parses its SQL
_SQL_DIALECTS = {
    "sqlite": "sqlite",
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "oracle": "oracle",
}


def _check_select(url: str, query: str, backend: str) -> None:
    """Accept exactly one SELECT (or UNION, or WITH ... SELECT) that writes nothing."""
    import sqlglot
    import sqlglot.errors
    import sqlglot.expressions as exp

    if backend not in _SQL_DIALECTS:
        raise ParameterError(
            f"{url}: veil opens SQL sources read-only, and cannot make a {backend} session "
            "read-only; pass --table NAME, or export the query's result to CSV or Parquet"
        )
    try:
        statements = [s for s in sqlglot.parse(query, read=_SQL_DIALECTS[backend]) if s]
    except sqlglot.errors.SqlglotError as err:
        raise ParameterError(
            f"query is not SQL veil can read ({one_line(str(err))}); give a single SELECT"
        ) from err
    writes = (
        exp.Insert,
        exp.Update,
        exp.Delete,
        exp.Merge,
        exp.Create,
        exp.Drop,
        exp.Into,
        exp.Alter,
        exp.Command,
        exp.Lock,
    )
    if (
        len(statements) != 1
        or not isinstance(statements[0], exp.Query)
        or statements[0].find(*writes) is not None
    ):
        raise ParameterError(
            f"query must be a single SELECT that changes nothing, got {shown(query)}; veil "
            "only reads its input"
        )


def _read_only_engine(address: Any) -> Any:
    """An engine whose connections cannot write: SQLite opened with ``mode=ro`` (which also
    never creates a missing file), PostgreSQL and MySQL sessions set read-only on connect."""
    import sqlite3
    from urllib.parse import quote

    import sqlalchemy as sa

    backend = address.get_backend_name()
    if backend == "sqlite":
        database = address.database or ""
        if database in {"", ":memory:"}:
            return sa.create_engine("sqlite://")
        path = Path(database)
        if not path.is_file():
            raise InputError(f"{path}: no such SQLite database; check the path in the URL")
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        return sa.create_engine(
            "sqlite://", creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False)
        )
    engine = sa.create_engine(address)
    if backend == "postgresql":

        @sa.event.listens_for(engine, "connect")
        def _postgres_read_only(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            cursor.close()
            dbapi_conn.commit()
    elif backend in {"mysql", "mariadb"}:

        @sa.event.listens_for(engine, "connect")
        def _mysql_read_only(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
            cursor.close()

    return engine


def _make_read_only(conn: Any, backend: str) -> None:
    """Belt and braces inside the transaction the read runs in."""
    if backend == "sqlite":
        conn.exec_driver_sql("PRAGMA query_only = ON")
    elif backend in {"postgresql", "oracle"}:
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")

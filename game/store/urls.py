"""The store's database URLs: what ``--db`` takes, checked and completed before any
connection is tried.

``database_url`` reads what a user types: a URL as it is, or a file path, which is a
SQLite file (``htttx-server --db games.sqlite``, as ``htttx-tournament --db`` takes it).
``_async_url`` parses a URL and gives a bare ``sqlite`` / ``postgresql`` one its asyncio
driver, refusing what the store cannot open (``UnsupportedDatabaseError``, one line).

>>> database_url("sqlite:///games.sqlite")
'sqlite:///games.sqlite'
>>> database_url("/srv/htttx/games.sqlite")
'sqlite+aiosqlite:////srv/htttx/games.sqlite'
>>> _async_url("postgres://u@h/db").drivername
'postgresql+asyncpg'
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from game.store.errors import UnsupportedDatabaseError

__all__ = ["database_url"]

# The query option of a SQLite URL that sets ``PRAGMA synchronous`` (see Durability in
# ``game.store``), its values, and the default.
_SQLITE_SYNCHRONOUS: Final = "synchronous"
_SQLITE_SYNCHRONOUS_VALUES: Final = ("full", "normal")


def _async_url(url: str) -> URL:
    """Parse ``url`` and give a bare ``sqlite`` / ``postgresql`` URL its asyncio driver."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise UnsupportedDatabaseError(
            "cannot parse the database URL: expected sqlite+aiosqlite:///FILE or "
            "postgresql+asyncpg://USER:PASSWORD@HOST:PORT/DATABASE"
        ) from exc
    except ValueError as exc:  # SQLAlchemy's int() of the port is its only ValueError
        raise UnsupportedDatabaseError("the database URL's port is not a number") from exc
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise UnsupportedDatabaseError(
            f"the database URL's port must be from 1 to 65535, got {parsed.port}"
        )
    backend, _, driver = parsed.drivername.partition("+")
    if backend == "postgres":
        backend = "postgresql"
    wanted = {"sqlite": "aiosqlite", "postgresql": "asyncpg"}.get(backend)
    if wanted is None:
        raise UnsupportedDatabaseError(
            f"unsupported database {parsed.drivername!r}: expected a sqlite+aiosqlite:// "
            "or postgresql+asyncpg:// URL"
        )
    if driver and driver != wanted:
        raise UnsupportedDatabaseError(
            f"unsupported driver {parsed.drivername!r}: expected {backend}+{wanted}"
        )
    if _SQLITE_SYNCHRONOUS in parsed.query:
        if backend != "sqlite":
            raise UnsupportedDatabaseError(
                f"?{_SQLITE_SYNCHRONOUS}= is an option of SQLite URLs, not of {backend}"
            )
        _sqlite_synchronous(parsed)  # a wrong value is refused up front
    return parsed.set(drivername=f"{backend}+{wanted}")


def _sqlite_synchronous(url: URL) -> str:
    """``PRAGMA synchronous`` for a SQLite URL: ``?synchronous=normal`` or the default,
    ``full``. Raises UnsupportedDatabaseError for any other value."""
    value = url.query.get(_SQLITE_SYNCHRONOUS, "full")
    if not isinstance(value, str) or value.lower() not in _SQLITE_SYNCHRONOUS_VALUES:
        raise UnsupportedDatabaseError(
            f"?{_SQLITE_SYNCHRONOUS}= must be one of {', '.join(_SQLITE_SYNCHRONOUS_VALUES)}, "
            f"got {value!r}"
        )
    return value.upper()


def _is_memory_sqlite(url: URL) -> bool:
    return url.database in (None, "", ":memory:") or bool(url.query.get("mode") == "memory")


def database_url(text: str) -> str:
    """``text`` as a database URL: a URL (it has ``://``) as it is; anything else is the
    path of a SQLite file, made absolute (``~`` expanded), so a server started from
    another directory later opens the same file."""
    if "://" in text:
        return text
    return f"sqlite+aiosqlite:///{Path(text).expanduser().resolve()}"

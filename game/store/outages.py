"""Whether a failed store operation met the store out of reach, or was refused.

Two kinds of errors come out of a store operation. The store **out of reach** (its
connection refused or lost, the database shutting down, starting up or too busy, no
pooled connection free in time) says nothing about the write: the same write, tried
again once the database is back, goes through. The store **refusing** the write (a
constraint violated, a value that does not fit its column, a bad statement, a bug in
the query) says the write itself is wrong: trying it again fails the same way.

``is_outage`` tells them apart, for every loop that waits for the store to come back
(``game.recorder``: a game's moves and end; ``game.cluster_work``: a queued game's
settlement). What it cannot place (an error of the store's own, a bug in Python) is not
an outage: a loop that waits only for outages never waits on those.

The database's own code decides where the driver gives one: PostgreSQL's SQLSTATE, or
SQLite's result code. The DB-API exception class alone is not enough: asyncpg raises
only some classes (a constraint, a bad statement), and every other server error,
"value too long for type character varying(16)" as much as "terminating connection due
to administrator command", comes as the base class.

>>> from sqlalchemy.exc import IntegrityError, OperationalError
>>> is_outage(ConnectionRefusedError(111, "Connection refused"))
True
>>> is_outage(IntegrityError("INSERT ...", {}, Exception("UNIQUE constraint failed")))
False
>>> is_outage(OperationalError("SELECT 1", {}, Exception("server closed the connection")))
True
>>> is_outage(ValueError("not a store error"))
False
"""

from __future__ import annotations

import sqlite3
from typing import Final

from sqlalchemy.exc import (
    DataError,
    DBAPIError,
    DisconnectionError,
    IntegrityError,
    NotSupportedError,
    ProgrammingError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

__all__ = ["is_outage"]

#: SQLSTATE classes that mean the server could not take the statement now, whatever it
#: was: 08 connection exception, 40 transaction rollback (a serialization failure or a
#: deadlock with another writer: the next try goes through), 53 insufficient resources
#: (too many connections, disk full), 57 operator intervention (shutting down, starting
#: up, the statement cancelled), 58 system error (an I/O error on the server).
_OUTAGE_SQLSTATE_CLASSES: Final = frozenset({"08", "40", "53", "57", "58"})
#: Single SQLSTATEs of other classes that mean the same: 55P03 lock not available.
_OUTAGE_SQLSTATES: Final = frozenset({"55P03"})
#: SQLite primary result codes that mean the same: the database file busy or locked
#: by another connection, out of memory, an I/O error, the disk full, the file not
#: openable, a locking protocol error.
_OUTAGE_SQLITE_CODES: Final = frozenset(
    {
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
        sqlite3.SQLITE_NOMEM,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_PROTOCOL,
    }
)
#: The DB-API classes that refuse the statement itself, for an error without a code.
_REFUSALS: Final = (IntegrityError, DataError, ProgrammingError, NotSupportedError)


def is_outage(error: BaseException) -> bool:
    """Whether ``error``, raised by a store operation, says the store could not be
    reached (or could not take the operation now), so the same operation tried again
    later may go through; False if the store refused the operation itself, or if the
    error is not the store's (see the module docstring)."""
    if isinstance(error, (OSError, PoolTimeoutError, DisconnectionError)):
        return True  # refused, reset, timed out; no pooled connection in time
    if not isinstance(error, DBAPIError):
        return False
    if error.connection_invalidated:  # SQLAlchemy found the connection dead
        return True
    driver_error = error.orig
    sqlstate = getattr(driver_error, "sqlstate", None) or getattr(driver_error, "pgcode", None)
    if isinstance(sqlstate, str) and len(sqlstate) == 5:
        return sqlstate[:2] in _OUTAGE_SQLSTATE_CLASSES or sqlstate in _OUTAGE_SQLSTATES
    sqlite_code = getattr(driver_error, "sqlite_errorcode", None)
    if isinstance(sqlite_code, int):
        return sqlite_code & 0xFF in _OUTAGE_SQLITE_CODES  # the primary code of an extended one
    # No code to go by (a driver's own error, a connection closed under it): the class.
    return not isinstance(error, _REFUSALS)

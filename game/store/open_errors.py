"""Why ``GameStore.open`` failed, in one line that says what to fix: what ``htttx-server
--db`` and ``htttx-tournament --db`` print instead of the driver's exception
(``game.startup_checks.check_store``).

``why_store_cannot_open(url, error)`` reads the error, and what it wraps
(``game.connect_errors.causes``), with the URL, which names what the drivers leave
out: the PostgreSQL socket's path, the host and port, the SQLite file. PostgreSQL's own
refusals are told apart by their SQLSTATE (asyncpg's ``sqlstate``), SQLite's by their
text, which is all ``sqlite3`` gives.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from game.connect_errors import causes, unreachable

__all__ = ["first_line", "postgres_places", "why_store_cannot_open"]

#: PostgreSQL's port unless the URL or ``PGPORT`` says otherwise.
DEFAULT_POSTGRES_PORT = 5432

#: What to do about PostgreSQL's refusals, by SQLSTATE (its "Errors and Messages"
#: appendix); ``{user}`` and ``{database}`` are the URL's.
_POSTGRES_FIXES = {
    "28P01": "check the user and password in the URL",  # invalid_password
    "3D000": "create it (createdb -O {user} {database}) or fix the database name in the URL",
    "42501": (  # insufficient_privilege: CONNECT to the database, or CREATE on its schema
        "the user must connect to the database and create tables in it: make it the "
        "database's owner (ALTER DATABASE {database} OWNER TO {user})"
    ),
    "53300": "all of the server's max_connections are in use; close some or raise it",
    "57P03": "try again once the server has started",  # cannot_connect_now
}
#: invalid_authorization_specification (28000) covers several refusals, told by their text.
_LOGIN_FIXES = (
    ("does not exist", "create the role (createuser {user}) or give another user in the URL"),
    ("not permitted to log in", "let it log in (ALTER ROLE {user} LOGIN) or give another user"),
    ("pg_hba.conf", "allow this user, database and address in the server's pg_hba.conf"),
)
_UNKNOWN_OPTION = re.compile(r"unexpected keyword argument '([^']+)'")


def postgres_places(url: URL) -> Sequence[str]:
    """Where asyncpg connects for ``url``: ``host:port``, or ``the socket PATH`` for a
    host that is a directory; empty when the URL names no host (asyncpg then tries
    ``PGHOST``, the usual socket directories and localhost).

    >>> postgres_places(make_url("postgresql:///arena?host=/run/postgresql"))
    ['the socket /run/postgresql/.s.PGSQL.5432']
    >>> postgres_places(make_url("postgresql://u@db.example:6432/arena"))
    ['db.example:6432']
    >>> postgres_places(make_url("postgresql://u@[::1]/arena?host=a,b&port=1,2"))
    ['a:1', 'b:2']
    """
    hosts = _query_list(url, "host") or ([url.host] if url.host else [])
    if not hosts and (variable := os.environ.get("PGHOST")):
        hosts = variable.split(",")
    ports = _query_list(url, "port") or [
        str(url.port or os.environ.get("PGPORT") or DEFAULT_POSTGRES_PORT)
    ]
    places = []
    for index, host in enumerate(hosts):
        port = ports[min(index, len(ports) - 1)]
        if host.startswith("/"):
            places.append(f"the socket {host.rstrip('/')}/.s.PGSQL.{port}")
        else:
            places.append(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    return places


def _query_list(url: URL, key: str) -> list[str]:
    value = url.query.get(key)
    if value is None:
        return []
    values = [value] if isinstance(value, str) else list(value)
    return [part for item in values for part in item.split(",") if part]


def why_store_cannot_open(url: str, error: BaseException) -> str:
    """One line on why the store at ``url`` could not be opened (``error``: what
    ``GameStore.open`` raised), saying what to check or do. It does not repeat the URL.
    """
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return f"cannot open the store: {first_line(error)}"
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_problem(parsed, error)
    return _postgres_problem(parsed, error)


def _postgres_problem(url: URL, error: BaseException) -> str:
    places = postgres_places(url)
    port = url.port or DEFAULT_POSTGRES_PORT
    where = (
        " or ".join(places)
        if places
        else f"localhost:{port} or a socket in the usual directories (the URL names no host)"
    )
    if (network := unreachable("PostgreSQL", where, error)) is not None:
        return network
    names = {"user": url.username or "USER", "database": url.database or "DATABASE"}
    for cause in causes(error):
        state = getattr(cause, "sqlstate", None)
        if not isinstance(state, str):
            continue
        said = first_line(cause)
        fix = _POSTGRES_FIXES.get(state)
        if state == "28000":
            fix = next(
                (fix for text, fix in _LOGIN_FIXES if text in said),
                "check the user in the URL and the server's pg_hba.conf",
            )
        if fix is None:
            return f"PostgreSQL at {where} refused: {said}"
        return f"PostgreSQL at {where} refused: {said}; {fix.format(**names)}"
    for cause in causes(error):
        if isinstance(cause, TypeError) and (found := _UNKNOWN_OPTION.search(str(cause))):
            option = found.group(1)
            hint = " (asyncpg spells it ?ssl=require)" if option == "sslmode" else ""
            return f"?{option}= is not an option asyncpg takes{hint}; remove it from the URL"
        if isinstance(cause, TypeError) and url.query:  # asyncpg gets each as text
            return (
                f"asyncpg cannot take the URL's query options as given ({cause}); "
                "remove them from the URL"
            )
        if isinstance(cause, ConnectionError) and "SSL" in str(cause):
            return f"{cause}; drop ?ssl= from the URL, or turn on ssl in the server"
    return f"cannot open the store: {first_line(error)}"


def _sqlite_problem(url: URL, error: BaseException) -> str:
    path = Path(url.database or "").expanduser()
    directory = path.parent if str(path.parent) else Path(".")
    for cause in causes(error):
        if isinstance(cause, sqlite3.Error):
            said = str(cause)
            if "unable to open database file" in said:
                return (
                    f"SQLite cannot open or create {path}; check that this user may write "
                    f"in {directory}"
                )
            if "readonly database" in said:
                return f"{path} is read-only; make it writable for this user, or give another"
            if "file is not a database" in said:
                return f"{path} is not a SQLite database; give a new file or the arena's own"
            if "database is locked" in said:
                return f"{path} is locked by another process; is another server writing it?"
            return f"SQLite cannot open {path}: {said}"
        if isinstance(cause, OSError) and cause.filename is not None:
            # Creating the file's directory failed (GameStore.open makes it).
            return (
                f"cannot create {cause.filename}: {cause.strerror}; check that this user "
                "may write there"
            )
    return f"cannot open the store: {first_line(error)}"


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s text without SQLAlchemy's ``(module.Class)`` lead;
    the type's name when it has none (``TimeoutError()``)."""
    text = re.sub(r"^\([\w.]+\) ", "", str(error).strip())
    return text.splitlines()[0] if text else type(error).__name__

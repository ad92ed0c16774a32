"""What a command checks before it starts a game server, so that a database it cannot
open or a port it cannot listen on is one clear line rather than a traceback from the
server's startup (uvicorn exits with status 3 from inside its lifespan, after logging
the whole traceback). ``htttx-server`` and ``htttx-tournament`` both use these.

* ``check_store_url(url)``: what can be told of a store without touching it (the URL's
  scheme, driver and port; a SQLite file's path), checked before the port is bound, so
  a wrong ``--db`` is its own error whatever listens on the port.
* ``claim_store(url, owner)``: claims the database for this process, before anything
  touches it, so a second server on one database is one clear line rather than a
  startup that aborts the first one's games (``game.store_claim``).
* ``check_store(url)``: opens and closes the store once; what went wrong is said with
  what to fix (``game.store.open_errors``), the URL's password hidden.
* ``listen(host, port)``: binds the listening socket, handed to the server afterwards
  (``game.server.serving(..., sock=...)``), so the port cannot be taken in between.
"""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from game.connect_errors import safe_url
from game.store import GameStore, StoreError
from game.store.open_errors import why_store_cannot_open
from game.store.urls import _async_url
from game.store_claim import Claim, ClaimError, Owner, StoreInUseError, claim
from wire.listening import ListenError
from wire.listening import listen as listen_on

__all__ = [
    "StartupError",
    "check_store",
    "check_store_url",
    "claim_store",
    "listen",
    "nearest_existing",
]

log = logging.getLogger("game.startup")


class StartupError(Exception):
    """The server cannot start: one line saying what and why."""


def _sqlite_path_problem(url: str) -> str | None:
    """Why the SQLite file of ``url`` cannot be a database, named plainly (SQLite says
    only "unable to open database file"); ``None`` if nothing is visibly wrong."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return None  # GameStore.open says why
    database = parsed.database
    if not parsed.drivername.startswith("sqlite") or not database or database == ":memory:":
        return None
    path = Path(database).expanduser()
    if path.is_dir():
        return f"{path} is a directory, not a database file"
    parent = nearest_existing(path.parent)
    if not parent.is_dir():
        return f"{parent} is a file, so {path} cannot be created under it"
    # SQLite needs to write the file and, for its WAL and journal, its directory.
    # (os.access answers yes to root everywhere; SQLite's own refusal then says it.)
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        return f"this user may not read and write {path}"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"this user may not write in {parent}, so {path} cannot be created there"
    return None


def nearest_existing(path: Path) -> Path:
    """``path`` itself if it exists, else its nearest ancestor that does: where a file
    written to ``path`` would start creating directories (and where a file in the way,
    one that is not a directory, shows up).

    >>> nearest_existing(Path("/no/such/dir/f.txt"))
    PosixPath('/')
    """
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_store_url(url: str, option: str = "--db") -> None:
    """Check what ``url`` says without opening it: its scheme, driver and port, and a
    SQLite file's path. Raises ``StartupError`` naming ``option`` and the URL (its
    password hidden).

    >>> check_store_url("mysql://x/y")
    Traceback (most recent call last):
    ...
    game.startup_checks.StartupError: --db mysql://x/y: unsupported database 'mysql': \
expected a sqlite+aiosqlite:// or postgresql+asyncpg:// URL
    """
    shown = safe_url(url)
    try:
        _async_url(url)
    except StoreError as error:
        raise StartupError(f"{option} {shown}: {error}") from None
    if (problem := _sqlite_path_problem(url)) is not None:
        raise StartupError(f"{option} {shown}: cannot open the store: {problem}")


def claim_store(url: str, owner: Owner, *, shared: bool = False, option: str = "--db") -> Claim:
    """Claim the database of ``url`` for ``owner``, this process, until the claim's
    ``release`` (``game.store_claim.claim``; ``shared``: a cluster's worker). Raises
    ``StartupError`` naming ``option`` when another process holds it or it cannot be
    claimed. Blocks while it connects (PostgreSQL)."""
    check_store_url(url, option)  # what is wrong with the URL itself, said as such
    shown = safe_url(url)
    try:
        return claim(url, owner, shared=shared, option=option)
    except StoreInUseError as error:
        raise StartupError(str(error)) from None
    except ClaimError as error:
        # The driver's own error, when there is one, says what to fix (a missing socket,
        # a wrong password...) as the store's opening would have.
        why = (
            why_store_cannot_open(url, error.__cause__)
            if error.__cause__ is not None
            else f"cannot open the store: {error}"
        )
        raise StartupError(f"{option} {shown}: {why}") from None


async def check_store(url: str, option: str = "--db") -> None:
    """Open and close the store at ``url`` once. Raises ``StartupError`` naming
    ``option`` and the URL (its password hidden)."""
    shown = safe_url(url)
    if (problem := _sqlite_path_problem(url)) is not None:
        raise StartupError(f"{option} {shown}: cannot open the store: {problem}")
    try:
        store = await GameStore.open(url)
    except StoreError as error:  # the URL itself: its scheme, its driver, its port
        raise StartupError(f"{option} {shown}: {error}") from None
    except Exception as error:  # whatever the driver raises is one line; the rest at debug
        log.debug("opening the store %s failed", shown, exc_info=True)
        raise StartupError(f"{option} {shown}: {why_store_cannot_open(url, error)}") from None
    await store.close()


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (0: any free port) and listening
    (``wire.listening.listen``). Raises ``StartupError`` when the host is unknown or the
    port taken."""
    try:
        return listen_on(host, port)
    except ListenError as error:
        raise StartupError(str(error)) from None

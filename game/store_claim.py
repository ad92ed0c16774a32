"""One server per database: a process claims its store for as long as it runs.

A server's startup takes the games (and tournaments) a previous run left running for
dead and records them aborted (``GameStore.abort_running``). Were a second server
started on a database another one is using, that startup would abort the first one's
live games, and both would then write to one database, each taking the other's games
for its own. So ``htttx-server`` and ``htttx-tournament`` claim the database before they
touch it, and a second process on it is refused with one line naming the first, as
PostgreSQL refuses a second postmaster on a data directory (``postmaster.pid``)::

    database ./data/htttx.sqlite is in use by another htttx-server (pid 4242,
    http://127.0.0.1:8001, since 2026-05-01 12:00:00 UTC); stop it or pass another --db

* A SQLite file: an exclusive ``flock`` on a file beside it, ``<file>.lock``, which
  also records who holds it, or held it last (one JSON line: program, pid, host, URL,
  start). The kernel lets go of the lock when the process dies, however it dies
  (``kill -9`` included), so a crash never blocks a restart. The file stays: removing
  it on exit would let a process that opened it just before lock the removed file
  while a third locks a new one. Its path is the database's with symbolic links
  resolved (SQLite's own ``-wal`` and ``-shm`` files follow the links too), so two
  spellings of one file share a lock.
* PostgreSQL: a session advisory lock (``pg_try_advisory_lock``) held on a connection
  of its own, on a thread of its own (the claim is taken before the server's event loop
  exists and outlives it). A cluster's workers share one database by design (``--redis``,
  where only the first worker marks games aborted): each takes the lock *shared*, so
  they coexist, while a server that is no worker takes it exclusive and is refused
  beside any of them, and they beside it. Who holds it comes from ``pg_locks`` and
  ``pg_stat_activity``: the connection's ``application_name`` carries the program,
  pid and URL (``htttx-server 4242 http://127.0.0.1:8001``), its ``backend_start`` the
  start. A connection that is lost (the database restarted, the session killed) loses
  the lock: that is logged, and the lock is taken again as soon as it can be.
* An in-memory SQLite database belongs to its process alone: nothing to claim.

``game.server.create_app`` claims nothing: a program that embeds it claims what it needs
(``claim``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import json
import logging
import os
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from sqlalchemy import text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from game.store.open_errors import first_line

__all__ = [
    "ADVISORY_LOCK",
    "LOCK_SUFFIX",
    "Claim",
    "ClaimError",
    "Owner",
    "StoreInUseError",
    "claim",
    "in_use_message",
    "lock_file_path",
]

log = logging.getLogger("game.store_claim")

#: Beside a SQLite file: ``./data/htttx.sqlite.lock``.
LOCK_SUFFIX = ".lock"
#: The advisory lock's two keys: "httx" in ASCII, and the store's owner (the only lock).
ADVISORY_LOCK = (0x68747478, 1)
#: How often a lost PostgreSQL claim is tried again, in seconds.
RECLAIM_S = 1.0
#: The claim's connection asks PostgreSQL to probe it after 10 s of silence, 3 times 5 s
#: apart (over TCP; a unix socket ignores them): the lock of a server whose machine
#: died goes within half a minute, not the two hours of the system's TCP defaults.
_KEEPALIVES = {
    "tcp_keepalives_idle": "10",
    "tcp_keepalives_interval": "5",
    "tcp_keepalives_count": "3",
}
#: How long a release waits for the PostgreSQL claim's thread to close its connection.
RELEASE_TIMEOUT_S = 10.0
#: PostgreSQL keeps this many bytes of an ``application_name`` (NAMEDATALEN - 1).
_APPLICATION_NAME_BYTES = 63


class ClaimError(Exception):
    """The database could not be claimed: one line saying why."""


class StoreInUseError(ClaimError):
    """Another process holds the database (``in_use_message``)."""


# ------------------------------------------------------------------------- who holds it


@dataclass(frozen=True)
class Owner:
    """A process that holds (or wants) a database: enough for a person to find it."""

    program: str  # htttx-server, htttx-tournament
    pid: int | None = None
    url: str | None = None  # where it serves
    host: str | None = None  # the machine it runs on (a SQLite file's lock records it)
    since: datetime | None = None

    @classmethod
    def of_this_process(cls, program: str, url: str) -> Owner:
        return cls(program, os.getpid(), url, socket.gethostname(), datetime.now(UTC))

    def describe(self) -> str:
        """The program and what is known of it.

        >>> Owner("htttx-server", 42, "http://127.0.0.1:8001", None,
        ...       datetime(2026, 5, 1, 12, tzinfo=UTC)).describe()
        'htttx-server (pid 42, http://127.0.0.1:8001, since 2026-05-01 12:00:00 UTC)'
        >>> Owner("htttx-tournament").describe()
        'htttx-tournament'
        """
        facts = []
        if self.pid is not None:
            on = "" if self.host in (None, socket.gethostname()) else f" on {self.host}"
            facts.append(f"pid {self.pid}{on}")
        if self.url:
            facts.append(self.url)
        if self.since is not None:
            facts.append(f"since {self.since.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC")
        return f"{self.program} ({', '.join(facts)})" if facts else self.program

    def to_record(self) -> str:
        """One JSON line, for a SQLite file's lock file."""
        since = None if self.since is None else self.since.isoformat()
        fields = {"program": self.program, "pid": self.pid, "host": self.host}
        return json.dumps({**fields, "url": self.url, "since": since}) + "\n"

    @classmethod
    def from_record(cls, record: str) -> Owner | None:
        """What ``to_record`` wrote; None for anything else (an empty file: its holder
        has locked it and not written yet).

        >>> Owner.from_record(Owner("htttx-server", 7, "http://h:1").to_record())
        Owner(program='htttx-server', pid=7, url='http://h:1', host=None, since=None)
        >>> Owner.from_record("") is None
        True
        """
        try:
            fields = json.loads(record)
            since = fields.get("since")
            return cls(
                program=str(fields["program"]),
                pid=None if fields.get("pid") is None else int(fields["pid"]),
                url=fields.get("url"),
                host=fields.get("host"),
                since=None if since is None else datetime.fromisoformat(since),
            )
        except (ValueError, TypeError, KeyError, AttributeError):
            return None

    def application_name(self) -> str:
        """The PostgreSQL ``application_name`` that says who holds the advisory lock
        (cut to what PostgreSQL keeps).

        >>> Owner("htttx-server", 42, "http://127.0.0.1:8001").application_name()
        'htttx-server 42 http://127.0.0.1:8001'
        """
        name = " ".join(str(part) for part in (self.program, self.pid, self.url) if part)
        return name.encode()[:_APPLICATION_NAME_BYTES].decode(errors="ignore")

    @classmethod
    def from_application_name(cls, name: str | None, since: datetime | None) -> Owner:
        """The holder an ``application_name`` (and its connection's start) names.

        >>> Owner.from_application_name("htttx-server 42 http://127.0.0.1:8001", None).url
        'http://127.0.0.1:8001'
        >>> Owner.from_application_name("psql", None).describe()
        'a process whose connection is named psql'
        """
        program, _, rest = (name or "").partition(" ")
        pid, _, url = rest.partition(" ")
        if not program.startswith("htttx-") or not pid.isdigit():
            named = f"named {name}" if name else "unnamed"
            return cls(f"a process whose connection is {named}", since=since)
        return cls(program, int(pid), url or None, None, since)


def in_use_message(
    database: str,
    holders: Sequence[Owner],
    *,
    program: str,
    option: str = "--db",
    worker: bool = False,
    held_by_workers: bool = False,
) -> str:
    """Why ``program`` may not have ``database``: who holds it and what to do.
    ``worker``: the claimant is a cluster's worker; ``held_by_workers``: the holders are.

    >>> holder = Owner("htttx-server", 42, "http://127.0.0.1:8001")
    >>> in_use_message("./g.sqlite", [holder], program="htttx-server")
    'database ./g.sqlite is in use by another htttx-server (pid 42, http://127.0.0.1:8001); stop it or pass another --db'
    >>> in_use_message("./g.sqlite", [], program="htttx-tournament")
    'database ./g.sqlite is in use by another process; stop it or pass another --db'
    """  # noqa: E501
    if held_by_workers and not worker:
        first = holders[0].describe() if holders else "htttx-server"
        more = f" and {len(holders) - 1} more" if len(holders) > 1 else ""
        join = " (or --redis, to join them)" if program == "htttx-server" else ""
        return (
            f"database {database} is in use by the workers of a cluster: {first}{more}; "
            f"stop them or pass another {option}{join}"
        )
    if not holders:
        return f"database {database} is in use by another process; stop it or pass another {option}"
    holder = holders[0]
    another = "another " if holder.program == program else ""
    alone = ", which is no worker of a cluster" if worker else ""
    return (
        f"database {database} is in use by {another}{holder.describe()}{alone}; "
        f"stop it or pass another {option}"
    )


# ------------------------------------------------------------------------------ claims


class Claim(Protocol):
    """A database held until ``release`` (or the process's end)."""

    def release(self) -> None: ...


@dataclass
class _Nothing:
    """An in-memory database, or one this module does not know: nothing is held."""

    def release(self) -> None:
        pass


def lock_file_path(database: str) -> Path:
    """The lock file of a SQLite file.

    >>> lock_file_path("/srv/htttx/games.sqlite")
    PosixPath('/srv/htttx/games.sqlite.lock')
    """
    resolved = Path(database).expanduser().resolve()
    return resolved.with_name(resolved.name + LOCK_SUFFIX)


@dataclass
class _FileLock:
    """An exclusive ``flock`` on a SQLite file's lock file, held by an open descriptor."""

    path: Path
    fd: int

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # and with it the lock
            self.fd = -1


def _lock_file(database: str, owner: Owner, option: str) -> _FileLock:
    path = lock_file_path(database)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Not inherited by the programs a server starts (os.open's default), which
        # would otherwise hold the lock after it died.
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise ClaimError(
            f"cannot create {path}, the database's lock beside it: "
            f"{error.strerror or error}; check that this user may write in {path.parent}"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = Owner.from_record(os.pread(fd, 4096, 0).decode(errors="replace"))
        os.close(fd)
        # A record of a process gone is the previous holder's: the holder has only
        # just locked the file and not written yet.
        holders = [] if holder is None or _gone(holder) else [holder]
        raise StoreInUseError(
            in_use_message(database, holders, program=owner.program, option=option)
        ) from None
    except OSError as error:
        os.close(fd)
        raise ClaimError(f"cannot lock {path}: {error.strerror or error}") from None
    with contextlib.suppress(OSError):  # a full disk: the lock holds, unnamed
        os.ftruncate(fd, 0)
        os.pwrite(fd, owner.to_record().encode(), 0)
    return _FileLock(path, fd)


def _gone(owner: Owner) -> bool:
    """Whether ``owner`` is a process of this machine that has ended."""
    if owner.pid is None or owner.host != socket.gethostname():
        return False
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


@dataclass
class _AdvisoryLock:
    """A PostgreSQL advisory lock held on a connection of its own, on a thread with an
    event loop of its own (asyncpg's connection belongs to one loop; the server's is
    not running yet when the claim is taken, and is gone before it is released)."""

    url: URL
    shown: str
    owner: Owner
    shared: bool
    option: str
    _taken: concurrent.futures.Future[None] = field(default_factory=concurrent.futures.Future)
    _loop: asyncio.AbstractEventLoop | None = None
    _released: asyncio.Event | None = None
    _thread: threading.Thread | None = None

    def take(self) -> None:
        """Hold the lock, or raise ``StoreInUseError`` (or ``ClaimError``)."""
        self._thread = threading.Thread(
            target=asyncio.run, args=(self._hold(),), name="htttx: store claim", daemon=True
        )
        self._thread.start()
        self._taken.result()

    def release(self) -> None:
        loop, released = self._loop, self._released
        if loop is not None and released is not None:
            with contextlib.suppress(RuntimeError):  # its loop has ended already
                loop.call_soon_threadsafe(released.set)
        if self._thread is not None:
            self._thread.join(RELEASE_TIMEOUT_S)

    async def _hold(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._released = asyncio.Event()
        settings = {"application_name": self.owner.application_name(), **_KEEPALIVES}
        try:
            engine = create_async_engine(
                self.url, poolclass=NullPool, connect_args={"server_settings": settings}
            )
            try:
                await self._hold_on(engine, self._released)
            finally:
                await engine.dispose()
        except Exception as error:
            if self._taken.done():
                raise
            self._taken.set_exception(_claim_error(error))
        finally:
            if not self._taken.done():  # whatever else stopped this thread: take() returns
                self._taken.set_exception(ClaimError("the claim's thread stopped"))

    async def _hold_on(self, engine: AsyncEngine, released: asyncio.Event) -> None:
        logged: str | None = None  # the last failure to take it again, logged once
        while not released.is_set():
            try:
                if await self._held_until_lost(engine, released):
                    return
                logged = None
                log.warning(
                    "lost the lock on %s with its connection (another server could start "
                    "on it meanwhile): taking it again",
                    self.shown,
                )
            except Exception as error:  # any failure to connect or to lock
                if not self._taken.done():  # the claim itself: refused
                    self._taken.set_exception(_claim_error(error))
                    return
                if logged != first_line(error):
                    logged = first_line(error)
                    log.error("cannot take the lock on %s again: %s", self.shown, logged)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(released.wait(), RECLAIM_S)

    async def _held_until_lost(self, engine: AsyncEngine, released: asyncio.Event) -> bool:
        """Take the lock on a new connection and hold it until ``released`` (True) or
        the connection is lost (False)."""
        async with engine.connect() as opened:
            # No transaction left open: a session lock outlives transactions, and an
            # idle transaction held for days would hold back vacuum.
            connection = await opened.execution_options(isolation_level="AUTOCOMMIT")
            await self._lock(connection)
            lost = asyncio.Event()
            raw = (await connection.get_raw_connection()).driver_connection
            assert raw is not None  # an asyncpg connection, open
            raw.add_termination_listener(lambda _connection: lost.set())
            if self._taken.done():
                log.info("took the lock on %s again", self.shown)
            else:
                self._taken.set_result(None)
            waits = [asyncio.ensure_future(event.wait()) for event in (released, lost)]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for wait in waits:
                    wait.cancel()
            return released.is_set()

    async def _lock(self, connection: AsyncConnection) -> None:
        first, second = ADVISORY_LOCK
        kind = "pg_try_advisory_lock_shared" if self.shared else "pg_try_advisory_lock"
        for _ in range(2):  # once more if its holder let go between the two queries
            if (await connection.execute(text(f"SELECT {kind}({first}, {second})"))).scalar():
                return
            holders, held_shared = await _holders(connection)
            if holders:
                break
        raise StoreInUseError(
            in_use_message(
                self.shown,
                holders,
                program=self.owner.program,
                option=self.option,
                worker=self.shared,
                held_by_workers=held_shared,
            )
        )


async def _holders(connection: AsyncConnection) -> tuple[list[Owner], bool]:
    """Who holds the advisory lock, oldest first, and whether they share it."""
    first, second = ADVISORY_LOCK
    result = await connection.execute(
        text(
            "SELECT a.application_name, a.backend_start, l.mode FROM pg_locks l "
            "LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database()) "
            f"AND l.classid = {first} AND l.objid = {second} AND l.objsubid = 2 "
            "ORDER BY a.backend_start"
        )
    )
    rows = list(result.tuples())
    holders = [Owner.from_application_name(name, since) for name, since, _mode in rows]
    return holders, any(mode == "ShareLock" for *_rest, mode in rows)


def _claim_error(error: BaseException) -> ClaimError:
    """``error`` (the driver's, connecting or locking) as the claim's failure, keeping it
    as the cause, from which the command words what to fix (``game.store.open_errors``)."""
    if isinstance(error, ClaimError):
        return error
    failure = ClaimError(first_line(error))
    failure.__cause__ = error
    return failure


def claim(url: str, owner: Owner, *, shared: bool = False, option: str = "--db") -> Claim:
    """Hold the database of ``url`` for ``owner`` (this process) until ``release``.
    ``shared``: ``owner`` is a worker of a cluster (PostgreSQL only). Raises
    ``StoreInUseError`` when another process holds it, ``ClaimError`` when it cannot be
    claimed (a lock file that cannot be made, a database that cannot be reached). A URL
    it does not know is claimed by nothing: opening the store says what is wrong.

    >>> claim("sqlite://", Owner("htttx-server")).release()
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        return _Nothing()
    backend, _, driver = parsed.drivername.partition("+")
    if backend == "sqlite":
        memory = parsed.database in (None, "", ":memory:") or parsed.query.get("mode") == "memory"
        if memory:
            return _Nothing()
        assert parsed.database is not None
        return _lock_file(parsed.database, owner, option)
    if backend in ("postgresql", "postgres") and driver in ("", "asyncpg"):
        lock = _AdvisoryLock(
            url=parsed.set(drivername="postgresql+asyncpg"),
            shown=parsed.render_as_string(hide_password=True),
            owner=owner,
            shared=shared,
            option=option,
        )
        lock.take()
        return lock
    return _Nothing()

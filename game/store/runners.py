"""Where the store's transactions run: SQLite on threads of its own, here; PostgreSQL
through SQLAlchemy's asyncio engine, in ``game.store.engine_runner`` (see Concurrency
in ``game.store``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Concatenate, Final, ParamSpec, Protocol, TypeVar

from sqlalchemy import (
    create_engine,
    event,
)
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import StaticPool

from game.store.queries import (
    _CLAIM_NEXT_MOVES_SQL,
    _FINISH_RUNNING_SQL,
    _INSERT_BOT_SQL,
    _INSERT_GAME_SQL,
    _INSERT_MOVE_SQL,
    _INSERT_PLAYER_SQL,
    _add_moves,
    _create_game,
    _finish_with_moves,
    _iso_datetime,
)
from game.store.schema import RecordStatus, _bot_rows, _player_rows
from game.store.urls import _SQLITE_SYNCHRONOUS, _is_memory_sqlite, _sqlite_synchronous

# SQLite waits this long for another process's write lock before giving up; writers of
# this process never wait on each other at the SQLite level (see _SqliteThreads).
_SQLITE_BUSY_TIMEOUT_MS: Final = 10_000

# Reads of a SQLite file run on this many threads, each with a connection of its own.
_SQLITE_READ_THREADS: Final = 4


def _sqlite_engine(url: URL, *, begin: str, connections: int) -> Engine:
    """A synchronous (pysqlite) engine whose transactions start with ``begin``, used
    only from the store's own threads.

    pysqlite's own transaction handling starts transactions late (before the first
    write), so a read-then-write transaction could fail to upgrade its lock instead of
    waiting. As SQLAlchemy's SQLite docs advise, the driver is put in autocommit mode
    and the BEGIN is emitted here: ``BEGIN IMMEDIATE`` for writers takes the write lock
    up front, where the busy timeout applies.
    """
    # Every use is a transaction that ends in a commit or a rollback, so the pool's
    # rollback on check-in has nothing to do.
    kwargs: dict[str, Any] = {"pool_reset_on_return": None}
    if _is_memory_sqlite(url):
        # One shared connection: each new connection would see its own empty database.
        kwargs["poolclass"] = StaticPool
    else:
        # One connection per thread that uses the engine, so no thread ever waits here.
        kwargs["pool_size"] = connections
        kwargs["max_overflow"] = 0
    # A connection is used by one thread at a time, but not always by the thread that
    # opened it: the reader threads share their pool, and close() closes every
    # connection from the writer thread.
    kwargs["connect_args"] = {"check_same_thread": False}
    synchronous = _sqlite_synchronous(url)
    url = url.difference_update_query([_SQLITE_SYNCHRONOUS])  # ours, not the driver's
    engine = create_engine(url.set(drivername="sqlite+pysqlite"), **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={_SQLITE_BUSY_TIMEOUT_MS}")
        # WAL: readers never block the writer nor the other way round. FULL (the
        # default): a commit is on disk when add_move returns, so even a power cut
        # loses no acknowledged move. NORMAL (?synchronous=normal) skips the fsync of
        # each commit: a crash of the process still loses nothing committed, a crash of
        # the machine may lose the last commits (see Durability in game.store).
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql(begin)

    return engine


# ------------------------------------------------------------------ running them

_P = ParamSpec("_P")
_T = TypeVar("_T")


async def _to_completion(write: asyncio.Future[_T]) -> _T:
    """Wait for ``write``, a write that must finish even when its caller is cancelled;
    a cancelled caller waits for it, then sees its CancelledError.

    A transaction cut off halfway (a server shutting down cancels game tasks in the
    middle of their writes) could leave SQLite's write lock held by a connection whose
    rollback never ran, and every later writer would then fail with "database is
    locked"; and a caller could not tell whether its write landed. So a write runs on
    its own (on the writer thread, or in its own task on PostgreSQL) and a cancelled
    caller waits for it (a short wait: one transaction). The write lands whole.
    """
    try:
        return await asyncio.shield(write)
    except asyncio.CancelledError:
        while not write.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(write)
        if not write.cancelled():
            write.exception()  # retrieved: the caller is gone, its cancel wins
        raise


class _Runner(Protocol):
    """Runs the transaction functions above on one backend."""

    #: Whether ``read`` runs its function on the event loop's thread (then the costly
    #: part of a big read, rebuilding the record, is better done on a thread).
    reads_on_loop: bool

    async def write(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        """Run ``fn`` as a write transaction, committed if it returns. It runs to its
        end even if the caller is cancelled, and the caller waits for that end."""

    async def read(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        """Run ``fn`` in a read transaction."""

    async def write_new_game(
        self,
        game: dict[str, Any],
        moves: list[dict[str, Any]],
        names: tuple[str | None, str | None],
        bot_urls: tuple[str | None, str | None],
    ) -> None:
        """``write(_create_game, game, moves, names, bot_urls)``, the write every new
        game waits for before it starts, perhaps by a quicker way to the same
        transaction."""

    async def write_moves(self, game_id: str, first_index: int, rows: list[dict[str, Any]]) -> None:
        """``write(_add_moves, game_id, first_index, rows)``, the store's most frequent
        write, perhaps by a quicker way to the same transaction."""

    async def write_result(
        self,
        game_id: str,
        status: RecordStatus,
        result: str,
        ended_at: datetime,
        first_index: int = 0,
        rows: Sequence[dict[str, Any]] = (),
    ) -> None:
        """``write(_finish_with_moves, game_id, status, result, ended_at, first_index,
        rows)``: the game's last moves, if any, and its result; perhaps by a quicker way
        to the same transaction."""

    async def close(self) -> None:
        """Close every connection, after the writes under way."""


@dataclass(eq=False)  # each is itself: ``in`` a group means this very write
class _MovesWrite:
    """One game's next moves, waiting for the writer thread (``_SqliteThreads``)."""

    game_id: str
    first_index: int
    rows: list[dict[str, Any]]
    done: Future[None] = field(default_factory=Future)

    def usual(self, raw: sqlite3.Connection) -> bool:
        """The usual case, straight through the driver (``_next_moves``)."""
        return _next_moves(raw, self.game_id, self.first_index, self.rows)


def _next_moves(
    raw: sqlite3.Connection, game_id: str, first_index: int, rows: Sequence[dict[str, Any]]
) -> bool:
    """Add ``rows`` as the moves from ``first_index`` on, straight through the driver,
    if they follow the stored ones of a running game (see
    ``_SqliteThreads._straight_on_writer``); False, having changed nothing, if not."""
    claim = (first_index + len(rows), game_id, first_index)
    if raw.execute(_CLAIM_NEXT_MOVES_SQL, claim).rowcount != 1:
        return False
    _insert_moves(raw, game_id, rows)
    return True


def _insert_moves(raw: sqlite3.Connection, game_id: str, rows: Sequence[dict[str, Any]]) -> None:
    """Insert the ``moves`` rows ``rows`` of ``game_id`` (``GameStore``'s rows)."""
    moves = [(game_id, row["idx"], row["data"], row["latency_ms"]) for row in rows]
    raw.executemany(_INSERT_MOVE_SQL, moves)


class _SqliteThreads:
    """SQLite: a whole transaction is one call on a thread of ours, so the event loop
    only hands it over and awaits its end.

    Writes run on one writer thread: SQLite has a single writer anyway, and the thread
    runs them one at a time in the order they were made (the write queue of the
    store), so they never wait for each other inside SQLite, where waits are neither
    fair nor free of lock-upgrade failures.

    Reads of a file run on a few reader threads with connections of their own. In WAL
    mode they read beside the writer and never wait for it. They are synchronous
    functions too, rather than aiosqlite calls, because each aiosqlite statement (and
    BEGIN and COMMIT) is its own trip through SQLAlchemy's greenlet and aiosqlite's
    thread queue, where this is one hop per read; the JSON and pydantic work of
    rebuilding a record is then off the event loop as well; and the code is the very
    function that PostgreSQL runs.

    An in-memory database lives in one connection, which only the writer thread uses:
    reads go through the writer thread too, so they see every write.
    """

    reads_on_loop = False

    def __init__(self, url: URL) -> None:
        self._writer = _sqlite_engine(url, begin="BEGIN IMMEDIATE", connections=1)
        self._write_thread = ThreadPoolExecutor(1, thread_name_prefix="htttx-store-writer")
        # The writer thread's connection, opened by its first job and kept: no pool
        # checkout and check-in per transaction. Only that thread touches it.
        self._write_conn: Connection | None = None
        self._reader: Engine | None = None
        self._read_threads: ThreadPoolExecutor | None = None
        # Moves of any game waiting for the writer thread (see write_moves); appended on
        # the event loop, taken by the writer thread.
        self._moves_lock = threading.Lock()
        self._moves_waiting: list[_MovesWrite] = []
        if not _is_memory_sqlite(url):
            self._reader = _sqlite_engine(url, begin="BEGIN", connections=_SQLITE_READ_THREADS)
            self._read_threads = ThreadPoolExecutor(
                _SQLITE_READ_THREADS, thread_name_prefix="htttx-store-reader"
            )

    def _on_writer(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        """``fn`` in a transaction of the writer's connection (on the writer thread)."""
        if self._write_conn is None:
            self._write_conn = self._writer.connect()
        conn = self._write_conn
        try:
            with conn.begin():
                return fn(conn, *args, **kwargs)
        except BaseException:
            # A transaction that SQLite kept open (a COMMIT or ROLLBACK that failed) must
            # not reach the next write: then the connection goes, the next job opens one.
            if _left_in_transaction(conn):
                self._write_conn = None
                conn.invalidate()
                conn.close()
            raise

    def _straight_on_writer(
        self,
        usual: Callable[[sqlite3.Connection], bool],
        fn: Callable[Concatenate[Connection, _P], None],
        /,
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> None:
        """``fn`` on the writer thread, its usual case straight through sqlite3.

        The store's most frequent writes (a game's next moves, its result) are a couple
        of statements in their usual case. SQLAlchemy's transaction, execution contexts
        and result objects around them cost the writer thread more than SQLite's own
        work does, so ``usual`` sends them to the driver's connection directly (sqlite3
        keeps them prepared), inside the same transaction that ``_on_writer`` would run
        (``BEGIN IMMEDIATE`` ... ``COMMIT``), and returns whether they did the write.
        Its errors are raised as SQLAlchemy's (``DBAPIError``), as ``fn`` would raise
        them. Anything else (``usual`` returns False: the game is not running, the
        index is not the next one, a retried write) is rolled back and left to ``fn``
        itself, which sorts it out and raises the store's errors.
        """
        raw = self._raw_writer()
        try:
            raw.execute("BEGIN IMMEDIATE")
            if usual(raw):
                raw.execute("COMMIT")
                return
        except sqlite3.Error as exc:
            raise DBAPIError.instance(None, None, exc, sqlite3.Error) from exc
        finally:
            self._roll_back_if_open(raw)
        # Not the usual case: rolled back above, and sorted out here.
        self._on_writer(fn, *args, **kwargs)

    def _raw_writer(self) -> sqlite3.Connection:
        """The driver's connection under the writer's (on the writer thread)."""
        if self._write_conn is None:
            self._write_conn = self._writer.connect()
        return self._write_conn.connection.driver_connection  # type: ignore[return-value]

    def _roll_back_if_open(self, raw: sqlite3.Connection) -> None:
        if raw.in_transaction:
            try:
                raw.execute("ROLLBACK")
            except sqlite3.Error:
                # Stuck in a transaction: the connection goes (as in _on_writer).
                conn, self._write_conn = self._write_conn, None
                if conn is not None:
                    conn.invalidate()
                    conn.close()

    async def write_moves(self, game_id: str, first_index: int, rows: list[dict[str, Any]]) -> None:
        """Group commit across games: the moves of every game that queue up while the
        writer thread is busy go in one transaction. Each game's recorder already
        commits at most once per interval; with many games at once those commits were
        as many transactions, each a few hundred µs of the writer's CPU with its sync.
        A write that is not the usual case (see ``_straight_on_writer``) is left out
        of it and goes on its own, as before; a group whose transaction fails sends
        each of its writes on its own, each to raise its own error."""
        write = _MovesWrite(game_id, first_index, rows)
        with self._moves_lock:
            self._moves_waiting.append(write)
            first = len(self._moves_waiting) == 1
        if first:  # the writer thread takes it, and whatever joins it meanwhile
            try:
                self._write_thread.submit(self._write_waiting_moves)
            except RuntimeError:  # shut down: no job will take it
                with self._moves_lock:
                    self._moves_waiting.remove(write)
                raise
        await self._await_writer(write.done)

    def _write_waiting_moves(self) -> None:
        """On the writer thread: the moves waiting now, together where they can be."""
        with self._moves_lock:
            group, self._moves_waiting = self._moves_waiting, []
        try:
            alone = self._write_together(group) if len(group) > 1 else group
        except BaseException:  # e.g. no connection: each on its own, to get its error
            alone = [write for write in group if not write.done.done()]
        for write in alone:
            try:
                self._straight_on_writer(
                    write.usual, _add_moves, write.game_id, write.first_index, write.rows
                )
            except BaseException as exc:  # the caller's to see, as from any write
                write.done.set_exception(exc)
            else:
                write.done.set_result(None)

    def _write_together(self, group: list[_MovesWrite]) -> list[_MovesWrite]:
        """The usual cases of ``group`` in one transaction (a write that is not one
        changed nothing: its claim found no row); returns those left to write on
        their own, each as before: the others, or all if the transaction failed."""
        raw = self._raw_writer()
        try:
            raw.execute("BEGIN IMMEDIATE")
            alone = [write for write in group if not write.usual(raw)]
            raw.execute("COMMIT")
        except sqlite3.Error:
            return group  # rolled back below; each on its own raises its own error
        finally:
            self._roll_back_if_open(raw)
        for write in group:
            if write not in alone:
                write.done.set_result(None)
        return alone

    async def write_new_game(
        self,
        game: dict[str, Any],
        moves: list[dict[str, Any]],
        names: tuple[str | None, str | None],
        bot_urls: tuple[str | None, str | None],
    ) -> None:
        # Through SQLAlchemy's Core, these four INSERTs cost the writer thread about a
        # millisecond, and the game waits for them before it starts.
        def usual(raw: sqlite3.Connection) -> bool:
            started_at = game["started_at"]
            row = (
                game["game_id"],
                game["status"],
                None if started_at is None else _iso_datetime(started_at),
                game["header"],
                game["move_count"],
            )
            seq = raw.execute(_INSERT_GAME_SQL, row).lastrowid
            assert seq is not None  # the row id of the row just inserted
            players = [(seq, p["seat"], p["name_key"]) for p in _player_rows(seq, names)]
            raw.executemany(_INSERT_PLAYER_SQL, players)
            bots = [(seq, b["seat"], b["url_key"]) for b in _bot_rows(seq, bot_urls)]
            raw.executemany(_INSERT_BOT_SQL, bots)
            if moves:
                _insert_moves(raw, game["game_id"], moves)
            return True

        await self._await_writer(
            self._write_thread.submit(
                self._straight_on_writer, usual, _create_game, game, moves, names, bot_urls
            )
        )

    async def write_result(
        self,
        game_id: str,
        status: RecordStatus,
        result: str,
        ended_at: datetime,
        first_index: int = 0,
        rows: Sequence[dict[str, Any]] = (),
    ) -> None:
        def usual(raw: sqlite3.Connection) -> bool:
            if rows and not _next_moves(raw, game_id, first_index, rows):
                return False
            params = (status.value, result, _iso_datetime(ended_at), game_id)
            return bool(raw.execute(_FINISH_RUNNING_SQL, params).rowcount == 1)

        await self._await_writer(
            self._write_thread.submit(
                self._straight_on_writer,
                usual,
                _finish_with_moves,
                game_id,
                status,
                result,
                ended_at,
                first_index,
                list(rows),
            )
        )

    async def write(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        return await self._await_writer(
            self._write_thread.submit(self._on_writer, fn, *args, **kwargs)
        )

    async def _await_writer(self, job: Future[_T]) -> _T:
        # Not loop.run_in_executor: its future passes a cancel on to the job, and
        # asyncio.shield on top of it would cost a turn of the loop per write. Here the
        # job cannot be cancelled; ``ended`` only tells the loop that it is over.
        loop = asyncio.get_running_loop()
        ended = _on_loop_when_done(loop, job)
        try:
            await ended
        except asyncio.CancelledError:
            # The caller is cancelled: it waits for the transaction's end all the same
            # (see _to_completion), and then its cancel wins over the job's outcome.
            ended = _on_loop_when_done(loop, job)
            while not ended.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(ended)
            raise
        return job.result()

    async def read(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        # A cancelled read that has not started yet is dropped.
        loop = asyncio.get_running_loop()
        if self._read_threads is None or self._reader is None:  # in memory: on the writer
            job = functools.partial(self._on_writer, fn, *args, **kwargs)
            return await loop.run_in_executor(self._write_thread, job)
        read = functools.partial(_transaction, self._reader, fn, *args, **kwargs)
        return await loop.run_in_executor(self._read_threads, read)

    async def close(self) -> None:
        read_threads, reader = self._read_threads, self._reader

        def close_connections() -> None:
            # On the writer thread, so after every write queued before close().
            if read_threads is not None and reader is not None:
                read_threads.shutdown(wait=True)  # and after the reads under way
                reader.dispose()
            if self._write_conn is not None:
                self._write_conn.close()
            self._writer.dispose()

        if read_threads is not None:
            read_threads.shutdown(wait=False)  # no new reads from here on
        closed = asyncio.get_running_loop().run_in_executor(self._write_thread, close_connections)
        self._write_thread.shutdown(wait=False)  # no new writes; the queued ones still run
        try:
            await _to_completion(closed)
        finally:
            # The thread has run its last job: this only joins it.
            self._write_thread.shutdown(wait=True)


def _left_in_transaction(conn: Connection) -> bool:
    try:
        return bool(conn.connection.dbapi_connection.in_transaction)  # type: ignore[union-attr]
    except Exception:  # an invalidated connection reconnects on its next use
        return False


def _transaction(
    engine: Engine,
    fn: Callable[Concatenate[Connection, _P], _T],
    /,
    *args: _P.args,
    **kwargs: _P.kwargs,
) -> _T:
    """``fn`` in a transaction of its own, committed if it returns (in a thread)."""
    with engine.begin() as conn:
        return fn(conn, *args, **kwargs)


def _on_loop_when_done(loop: asyncio.AbstractEventLoop, job: Future[Any]) -> asyncio.Future[None]:
    """A future of ``loop`` that is done once ``job`` (of a thread) is done. Cancelling
    it does not touch ``job``."""
    ended: asyncio.Future[None] = loop.create_future()

    def settle() -> None:
        if not ended.done():
            ended.set_result(None)

    def on_job_done(_job: Future[Any]) -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(settle)

    job.add_done_callback(on_job_done)
    return ended

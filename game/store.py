"""Game records on disk: one row per game, one row per move, written as the game is played.

``GameStore`` keeps ``GameRecord`` s with SQLAlchemy Core, and no query ever blocks the
event loop. The default is a SQLite file (``./data/htttx.sqlite``); a
``postgresql+asyncpg://`` URL selects PostgreSQL. ``sqlite://`` and ``postgresql://``
URLs are completed to ``sqlite+aiosqlite://`` and ``postgresql+asyncpg://``. The SQLite
name is kept for compatibility with earlier versions and configurations; the store
reaches SQLite through its own threads and the standard ``sqlite3`` module (see
Concurrency), so the aiosqlite package is not needed.

Durability: every ``add_move`` is its own committed transaction, so a crash loses no
move that ``add_move`` returned for. After a restart, ``abort_running`` marks the games
that were still running as aborted; their moves stay.

Schema (created with ``metadata.create_all`` on ``open``; there are no migrations yet,
so a change to these tables needs Alembic or a fresh database)::

    games  seq        integer, primary key      creation order: newest first, cursors
           game_id    text, unique              the record's id
           status     'running' | 'finished' | 'aborted'
           started_at ISO 8601 text, nullable   exact round trip of naive/aware times
           ended_at   ISO 8601 text, nullable
           header     JSON text                 the GameRecord without id, start,
                                                moves and result (players, match,
                                                setup, name, tags, ...)
           result     JSON text, nullable       the GameResult
           move_count integer                   moves recorded so far
    moves  game_id    text, references games    primary key (game_id, idx)
           idx        integer                   0-based position in GameRecord.moves
           data       JSON text                 the RecordedMove
           latency_ms integer, nullable         measured round trip of the request

Nested data is JSON *text* rather than a JSON column type: it is portable, keeps
PositionEvaluation's extra fields and non-finite heuristics exactly, and PostgreSQL's
``jsonb`` would reject both ``Infinity`` and ``\\u0000``. Nothing filters on it.

Concurrency: one store serves every game of a server, and a game writes up to once per
move (the game manager groups the moves of fast games, see ``--commit-interval``), so
a write must cost the event loop little. Every operation is one synchronous
function of a SQLAlchemy ``Connection`` inside one transaction. On SQLite the whole
transaction runs on a writer thread of the store's own (pysqlite, no asyncio driver),
and the event loop only submits it and awaits one future; going through aiosqlite
instead, each statement, BEGIN and COMMIT would be a trip of its own through
SQLAlchemy's greenlet and aiosqlite's thread queue: ten times the loop time or more
(``bench/store.py`` measures it). The single writer thread is also SQLite's single
writer: writes queue on it in order, and its transactions start with ``BEGIN
IMMEDIATE`` (another process's writes are waited for, up to a busy timeout). Reads of
a SQLite file run on a few reader threads and, in WAL mode, never wait for writes; an
in-memory database is one connection, used only by the writer thread. On PostgreSQL,
the same functions run through the asyncpg engine (``AsyncConnection.run_sync``);
``add_move`` and ``finish_game`` lock the game's row, so two writers of one game queue
up and different games never wait for each other.

Aborted games: ``status`` is ``aborted`` and ``result`` is ``ABORTED_RESULT``,
``GameResult(winner=None, reason=DRAW, cause=ABORTED)``. ``GameResult`` allows no
winner only in a draw, and this is also exactly what the ``end`` packet of an aborted
game says on the wire (``winner: null``, ``reason: draw``, ``detail: aborted``).
Anything that counts draws (ratings, statistics) must check ``cause`` first.

Forward compatibility: records are stored through their pydantic serialisation, so a
field added to ``GameRecord``, ``RecordPlayer`` or ``RecordedMove`` is stored without a
schema change, and older rows read back with the field's default.

>>> GameStore.DEFAULT_URL
'sqlite+aiosqlite:///./data/htttx.sqlite'
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, Concatenate, Final, ParamSpec, Protocol, TypeVar

from pydantic import BaseModel, Field
from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    bindparam,
    create_engine,
    event,
    func,
    select,
    update,
)
from sqlalchemy.engine import URL, Connection, Dialect, Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool
from sqlalchemy.sql import Select

from models import EndCause, GameRecord, GameResult, RecordedMove, RecordPlayer, ResultReason

__all__ = [
    "ABORTED_RESULT",
    "MAX_PAGE_SIZE",
    "DuplicateGameError",
    "GameNotRunningError",
    "GamePage",
    "GameStore",
    "GameSummary",
    "InvalidCursorError",
    "InvalidGameIdError",
    "InvalidPageSizeError",
    "MoveConflictError",
    "MoveIndexError",
    "RecordAlreadyFinishedError",
    "RecordStatus",
    "StoreError",
    "UnknownGameError",
    "UnsupportedDatabaseError",
]

MAX_PAGE_SIZE: Final = 200
"""The largest ``limit`` that ``list_games`` accepts."""

MAX_GAME_ID_LENGTH: Final = 200

# SQLite waits this long for another process's write lock before giving up; writers of
# this process never wait on each other at the SQLite level (see _SqliteThreads).
_SQLITE_BUSY_TIMEOUT_MS: Final = 10_000

# Reads of a SQLite file run on this many threads, each with a connection of its own.
_SQLITE_READ_THREADS: Final = 4

ABORTED_RESULT: Final = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.ABORTED)
"""What an aborted game's ``result`` reads back as (no winner; ``cause`` says aborted)."""


# --------------------------------------------------------------------------- errors


class StoreError(Exception):
    """Base class of the store's errors."""


class UnsupportedDatabaseError(StoreError, ValueError):
    """The database URL names neither SQLite nor PostgreSQL, or cannot be parsed."""


class InvalidGameIdError(StoreError, ValueError):
    """A record to create has no usable ``game_id``."""


class RecordAlreadyFinishedError(StoreError, ValueError):
    """``create_game`` was given a record that already has a result."""


class DuplicateGameError(StoreError):
    """``create_game`` with a ``game_id`` that is already stored."""


class UnknownGameError(StoreError, LookupError):
    """No game with this ``game_id`` is stored."""


class GameNotRunningError(StoreError):
    """A move or a result for a game that has already finished or was aborted."""


class MoveIndexError(StoreError, ValueError):
    """``add_move`` with an index that is not the next one (moves are written in order)."""


class MoveConflictError(StoreError):
    """``add_move`` with the index of a move already stored, but a different move."""


class InvalidCursorError(StoreError, ValueError):
    """A ``before`` cursor that ``list_games`` did not hand out."""


class InvalidPageSizeError(StoreError, ValueError):
    """A ``limit`` outside 1..MAX_PAGE_SIZE."""


# --------------------------------------------------------------------------- values


class RecordStatus(str, Enum):
    """Where a stored game stands. ``aborted``: the server stopped while it ran."""

    RUNNING = "running"
    FINISHED = "finished"
    ABORTED = "aborted"


class GameSummary(BaseModel):
    """One line of the game list: enough to show it without loading its moves."""

    game_id: str
    name: str | None
    player_x: RecordPlayer
    player_o: RecordPlayer
    status: RecordStatus
    result: GameResult | None
    started_at: datetime | None
    ended_at: datetime | None
    moves: int


class GamePage(BaseModel):
    """A page of games, newest first. Pass ``next_cursor`` as ``before`` for the next
    page; it is None on the last page."""

    items: list[GameSummary] = Field(default_factory=list)
    next_cursor: str | None = None


# --------------------------------------------------------------------------- schema


class _IsoDateTime(TypeDecorator[datetime]):
    """A datetime as ISO 8601 text.

    SQLite has no datetime type and SQLAlchemy's emulation drops the UTC offset, so
    this keeps naive and aware values exactly as given on both backends. Games are
    ordered by ``seq``, never by this text.
    """

    impl = String(40)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> str | None:
        return None if value is None else value.isoformat()

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return None if value is None else datetime.fromisoformat(value)


_metadata = MetaData()

_games = Table(
    "games",
    _metadata,
    # BIGINT on PostgreSQL; SQLite only auto-increments a column declared INTEGER.
    Column("seq", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("game_id", String(MAX_GAME_ID_LENGTH), nullable=False, unique=True),
    Column("status", String(16), nullable=False),
    Column("started_at", _IsoDateTime(), nullable=True),
    Column("ended_at", _IsoDateTime(), nullable=True),
    Column("header", Text(), nullable=False),
    Column("result", Text(), nullable=True),
    Column("move_count", Integer(), nullable=False, default=0),
    # The list filtered by status, newest first.
    Index("ix_games_status_seq", "status", "seq"),
)

_moves = Table(
    "moves",
    _metadata,
    Column(
        "game_id",
        String(MAX_GAME_ID_LENGTH),
        ForeignKey("games.game_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("idx", Integer(), primary_key=True),
    Column("data", Text(), nullable=False),
    Column("latency_ms", Integer(), nullable=True),
)

# Fields of GameRecord kept outside the header blob: in columns or in other rows.
_NOT_IN_HEADER: Final = frozenset({"game_id", "started_at", "moves", "result"})


def _to_json(model: BaseModel, *, exclude: frozenset[str] | None = None) -> str:
    # mode="json" keeps float('inf') a float, where model_dump_json would write null;
    # json.dumps then writes it as Infinity, which json.loads reads back.
    data = model.model_dump(mode="json", exclude=None if exclude is None else set(exclude))
    return json.dumps(data, separators=(",", ":"))


def _from_json(text: str) -> Any:
    return json.loads(text)


# --------------------------------------------------------------------------- URLs


def _async_url(url: str) -> URL:
    """Parse ``url`` and give a bare ``sqlite`` / ``postgresql`` URL its asyncio driver."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise UnsupportedDatabaseError(f"cannot parse database URL {url!r}: {exc}") from exc
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
    return parsed.set(drivername=f"{backend}+{wanted}")


def _is_memory_sqlite(url: URL) -> bool:
    return url.database in (None, "", ":memory:") or bool(url.query.get("mode") == "memory")


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
    engine = create_engine(url.set(drivername="sqlite+pysqlite"), **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={_SQLITE_BUSY_TIMEOUT_MS}")
        # WAL: readers never block the writer nor the other way round. FULL: a commit
        # is on disk when add_move returns, so even a power cut loses no acknowledged
        # move (NORMAL would only survive process crashes).
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql(begin)

    return engine


# ------------------------------------------------------------------ transactions
#
# Each operation is one synchronous function of a Connection inside a transaction
# that its caller began and commits: on SQLite it runs whole on the writer (or a
# reader) thread, on PostgreSQL through ``AsyncConnection.run_sync``. One code path,
# two ways to run it.

# The statements of the usual write, built once: SQLAlchemy then finds their compiled
# form in its cache without building and hashing a new statement each time.
_CLAIM_NEXT_MOVES: Final = (
    update(_games)
    .where(
        _games.c.game_id == bindparam("claim_game_id"),
        _games.c.status == RecordStatus.RUNNING.value,
        _games.c.move_count == bindparam("claim_first"),
    )
    .values(move_count=bindparam("claim_count"))
)
_INSERT_MOVES: Final = _moves.insert()


def _lock_game(conn: Connection, game_id: str, *columns: Any, missing: str) -> Any:
    """The game's row (``columns``), locked for this transaction: concurrent writers of
    one game queue up on PostgreSQL (SQLite ignores FOR UPDATE; its write lock already
    serialises everything). Raises UnknownGameError naming what was being done."""
    row = conn.execute(
        select(*columns).where(_games.c.game_id == game_id).with_for_update()
    ).one_or_none()
    if row is None:
        raise UnknownGameError(f"no game {game_id!r} {missing}")
    return row


def _create_game(conn: Connection, game: dict[str, Any], moves: list[dict[str, Any]]) -> None:
    conn.execute(_games.insert(), game)
    if moves:
        conn.execute(_INSERT_MOVES, moves)


def _add_moves(
    conn: Connection, game_id: str, first_index: int, rows: list[dict[str, Any]]
) -> None:
    # The usual case in one statement: a running game whose next index is
    # ``first_index`` takes the moves (the UPDATE also locks the row on PostgreSQL).
    # Anything else is sorted out by the checks below.
    claimed = conn.execute(
        _CLAIM_NEXT_MOVES,
        {
            "claim_game_id": game_id,
            "claim_first": first_index,
            "claim_count": first_index + len(rows),
        },
    )
    if claimed.rowcount == 1:
        conn.execute(_INSERT_MOVES, rows)
        return
    row = _lock_game(
        conn, game_id, _games.c.status, _games.c.move_count, missing=f"to add move {first_index} to"
    )
    status, count = RecordStatus(row.status), row.move_count
    stored_already = [r for r in rows if 0 <= r["idx"] < count]
    for wanted in stored_already:
        stored = conn.execute(
            select(_moves.c.data, _moves.c.latency_ms).where(
                _moves.c.game_id == game_id, _moves.c.idx == wanted["idx"]
            )
        ).one()
        if (stored.data, stored.latency_ms) != (wanted["data"], wanted["latency_ms"]):
            raise MoveConflictError(
                f"game {game_id!r} already has a different move {wanted['idx']}: {stored.data}"
            )
    new_rows = rows[len(stored_already) :]
    if not new_rows:
        return
    if status is not RecordStatus.RUNNING:
        raise GameNotRunningError(f"game {game_id!r} is {status.value}; it takes no more moves")
    index = new_rows[0]["idx"]
    if index != count:
        raise MoveIndexError(
            f"game {game_id!r} has {count} moves, so the next index is {count}, got {index}"
        )
    conn.execute(_INSERT_MOVES, new_rows)
    conn.execute(
        update(_games)
        .where(_games.c.game_id == game_id)
        .values(move_count=_games.c.move_count + len(new_rows))
    )


def _finish_game(
    conn: Connection, game_id: str, status: RecordStatus, result: str, ended_at: datetime
) -> None:
    row = _lock_game(conn, game_id, _games.c.status, _games.c.result, missing="to finish")
    if row.status != RecordStatus.RUNNING.value:
        if row.result == result:
            return
        raise GameNotRunningError(
            f"game {game_id!r} is already {row.status} with result {row.result}"
        )
    conn.execute(
        update(_games)
        .where(_games.c.game_id == game_id)
        .values(status=status.value, result=result, ended_at=ended_at)
    )


def _abort_running(conn: Connection, ended_at: datetime) -> int:
    outcome = conn.execute(
        update(_games)
        .where(_games.c.status == RecordStatus.RUNNING.value)
        .values(
            status=RecordStatus.ABORTED.value, result=_to_json(ABORTED_RESULT), ended_at=ended_at
        )
    )
    return int(outcome.rowcount)


def _get_game(conn: Connection, game_id: str) -> GameRecord | None:
    game = conn.execute(
        select(_games.c.started_at, _games.c.header, _games.c.result).where(
            _games.c.game_id == game_id
        )
    ).one_or_none()
    if game is None:
        return None
    moves: list[str] = list(
        conn.execute(
            select(_moves.c.data).where(_moves.c.game_id == game_id).order_by(_moves.c.idx)
        ).scalars()
    )
    return GameRecord.model_validate(
        {
            **_from_json(game.header),
            "game_id": game_id,
            "started_at": game.started_at,
            "moves": [RecordedMove.model_validate(_from_json(m)) for m in moves],
            "result": None if game.result is None else _from_json(game.result),
        }
    )


def _move_latencies(conn: Connection, game_id: str) -> list[int | None]:
    exists = conn.execute(select(_games.c.seq).where(_games.c.game_id == game_id)).one_or_none()
    if exists is None:
        raise UnknownGameError(f"no game {game_id!r}")
    rows = conn.execute(
        select(_moves.c.latency_ms).where(_moves.c.game_id == game_id).order_by(_moves.c.idx)
    )
    return list(rows.scalars())


def _list_games(conn: Connection, query: Select[Any], limit: int) -> GamePage:
    rows = conn.execute(query).all()
    items = [
        _summary(
            game_id=row.game_id,
            status=row.status,
            started_at=row.started_at,
            ended_at=row.ended_at,
            header=row.header,
            result=row.result,
            moves=row.move_count,
        )
        for row in rows[:limit]
    ]
    next_cursor = str(rows[limit - 1].seq) if len(rows) > limit else None
    return GamePage(items=items, next_cursor=next_cursor)


def _count_games(conn: Connection, query: Select[Any]) -> int:
    return int(conn.execute(query).scalar_one())


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

    async def write(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        """Run ``fn`` as a write transaction, committed if it returns. It runs to its
        end even if the caller is cancelled, and the caller waits for that end."""

    async def read(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        """Run ``fn`` in a read transaction."""

    async def close(self) -> None:
        """Close every connection, after the writes under way."""


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

    def __init__(self, url: URL) -> None:
        self._writer = _sqlite_engine(url, begin="BEGIN IMMEDIATE", connections=1)
        self._write_thread = ThreadPoolExecutor(1, thread_name_prefix="htttx-store-writer")
        # The writer thread's connection, opened by its first job and kept: no pool
        # checkout and check-in per transaction. Only that thread touches it.
        self._write_conn: Connection | None = None
        self._reader: Engine | None = None
        self._read_threads: ThreadPoolExecutor | None = None
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

    async def write(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        # Not loop.run_in_executor: its future passes a cancel on to the job, and
        # asyncio.shield on top of it would cost a turn of the loop per write. Here the
        # job cannot be cancelled; ``ended`` only tells the loop that it is over.
        loop = asyncio.get_running_loop()
        job = self._write_thread.submit(self._on_writer, fn, *args, **kwargs)
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


class _AsyncEngineRunner:
    """PostgreSQL (asyncpg): the same functions, run through the asyncio engine."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._writes: set[asyncio.Task[Any]] = set()  # under way, for close()

    async def write(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        write = asyncio.ensure_future(self.read(fn, *args, **kwargs))
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)
        return await _to_completion(write)

    async def read(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        async with self._engine.begin() as conn:
            return await conn.run_sync(fn, *args, **kwargs)

    async def close(self) -> None:
        while self._writes:
            await asyncio.wait(list(self._writes))
        await self._engine.dispose()


# --------------------------------------------------------------------------- store


class GameStore:
    """Game records in SQLite or PostgreSQL. Open with ``await GameStore.open(url)``.

    Safe to share among all the games of one server: SQLite writes are serialised on
    the store's writer thread (SQLite has one writer), PostgreSQL writes lock the
    game's row.
    """

    DEFAULT_URL: ClassVar[str] = "sqlite+aiosqlite:///./data/htttx.sqlite"

    def __init__(self, url: URL, runner: _Runner) -> None:
        """Use ``GameStore.open``; this only wires up what it has prepared."""
        self.url = url
        self._runner = runner
        self._closing: asyncio.Future[None] | None = None

    @classmethod
    async def open(cls, url: str = DEFAULT_URL) -> GameStore:
        """Connect to ``url`` and create the tables if they are missing.

        For a SQLite file, the directory is created too.
        """
        parsed = _async_url(url)
        runner: _Runner
        if parsed.get_backend_name() == "sqlite":
            if not _is_memory_sqlite(parsed) and parsed.database:
                Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            runner = _SqliteThreads(parsed)
        else:
            runner = _AsyncEngineRunner(create_async_engine(parsed, pool_pre_ping=True))
        store = cls(parsed, runner)
        try:
            await runner.write(_metadata.create_all)
        except BaseException:
            await store.close()
            raise
        return store

    async def close(self) -> None:
        """Close every connection, once the writes under way have landed, and stop the
        store's threads. The store cannot be used afterwards; closing again does
        nothing more."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._runner.close())
        # Like a write, closing finishes even if its caller is cancelled: no thread or
        # connection is left behind.
        await _to_completion(self._closing)

    async def __aenter__(self) -> GameStore:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ writing

    async def create_game(self, record: GameRecord) -> None:
        """Store a new running game: players, match, setup, name, tags, start time.

        Moves already in ``record`` are stored as its first moves (indices 0, 1, ...).
        Raises InvalidGameIdError, RecordAlreadyFinishedError or DuplicateGameError.
        """
        game_id = record.game_id
        if game_id is None or not game_id or len(game_id) > MAX_GAME_ID_LENGTH:
            raise InvalidGameIdError(
                f"a stored game needs a game_id of 1 to {MAX_GAME_ID_LENGTH} characters, "
                f"got {game_id!r}"
            )
        if "\x00" in game_id:
            raise InvalidGameIdError(f"a game_id cannot contain NUL characters: {game_id!r}")
        if record.result is not None:
            raise RecordAlreadyFinishedError(
                f"game {game_id!r} already has a result; create_game expects a game that "
                "is starting (record the result with finish_game)"
            )
        game = {
            "game_id": game_id,
            "status": RecordStatus.RUNNING.value,
            "started_at": record.started_at,
            "header": _to_json(record, exclude=_NOT_IN_HEADER),
            "move_count": len(record.moves),
        }
        moves = [
            {"game_id": game_id, "idx": i, "data": _to_json(move), "latency_ms": None}
            for i, move in enumerate(record.moves)
        ]
        try:
            await self._runner.write(_create_game, game, moves)
        except IntegrityError as exc:
            raise DuplicateGameError(f"a game with id {game_id!r} is already stored") from exc

    async def add_move(
        self, game_id: str, index: int, move: RecordedMove, *, latency_ms: int | None = None
    ) -> None:
        """Record move number ``index`` (0-based) of a running game, committed at once.

        Idempotent: writing the same move and latency at the same index again does
        nothing, so a caller that does not know whether a write landed may retry it.
        Raises UnknownGameError, MoveConflictError (another move at ``index``),
        GameNotRunningError or MoveIndexError (``index`` is not the next one).
        """
        await self.add_moves(game_id, index, [(move, latency_ms)])

    async def add_moves(
        self, game_id: str, first_index: int, moves: Sequence[tuple[RecordedMove, int | None]]
    ) -> None:
        """Record consecutive moves ``(move, latency_ms)`` from ``first_index`` on, in one
        transaction: a game's recorder writes whatever has queued up at once (a group
        commit), which costs one round of statements instead of one per move.

        Same rules as ``add_move`` for each move: those already stored must be equal.
        """
        # Serialised here, on the caller's side: the rows are a snapshot of the moves
        # as they were when add_moves was called.
        rows: list[dict[str, Any]] = [
            {"game_id": game_id, "idx": first_index + i, "data": _to_json(move), "latency_ms": ms}
            for i, (move, ms) in enumerate(moves)
        ]
        if rows:
            await self._runner.write(_add_moves, game_id, first_index, rows)

    async def finish_game(self, game_id: str, result: GameResult, *, ended_at: datetime) -> None:
        """Record how a running game ended. A result with ``cause=ABORTED`` marks the
        game aborted rather than finished.

        Recording the same result again does nothing. Raises UnknownGameError, or
        GameNotRunningError if the game already has a different result.
        """
        status = RecordStatus.ABORTED if result.cause is EndCause.ABORTED else RecordStatus.FINISHED
        await self._runner.write(_finish_game, game_id, status, _to_json(result), ended_at)

    async def abort_running(self, *, ended_at: datetime) -> int:
        """Mark every running game aborted, keeping its moves; for server startup.

        Returns how many games were aborted.
        """
        return await self._runner.write(_abort_running, ended_at)

    # ------------------------------------------------------------------ reading

    async def get_game(self, game_id: str) -> GameRecord | None:
        """The full record of a game, moves in order; None if there is no such game."""
        return await self._runner.read(_get_game, game_id)

    async def move_latencies(self, game_id: str) -> list[int | None]:
        """The measured latency of each move of a game, in move order.

        ``RecordedMove`` has no field for it yet, so it is kept beside the move.
        Raises UnknownGameError.
        """
        return await self._runner.read(_move_latencies, game_id)

    async def list_games(
        self,
        *,
        status: RecordStatus | None = None,
        limit: int = 50,
        before: str | None = None,
    ) -> GamePage:
        """Games newest first (by creation), optionally only those with ``status``.

        Pagination is by cursor: pass a page's ``next_cursor`` as ``before`` to get
        the games created before the last one on it. Unlike an offset, this neither
        skips nor repeats games while new ones are being created.
        Raises InvalidPageSizeError or InvalidCursorError.
        """
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise InvalidPageSizeError(f"limit must be between 1 and {MAX_PAGE_SIZE}, got {limit}")
        query = select(
            _games.c.seq,
            _games.c.game_id,
            _games.c.status,
            _games.c.started_at,
            _games.c.ended_at,
            _games.c.header,
            _games.c.result,
            _games.c.move_count,
        )
        if status is not None:
            query = query.where(_games.c.status == RecordStatus(status).value)
        if before is not None:
            query = query.where(_games.c.seq < _parse_cursor(before))
        # One row more than asked tells whether there is a next page.
        query = query.order_by(_games.c.seq.desc()).limit(limit + 1)
        return await self._runner.read(_list_games, query, limit)

    async def count_games(self, *, status: RecordStatus | None = None) -> int:
        """How many games are stored, optionally only those with ``status``."""
        query = select(func.count()).select_from(_games)
        if status is not None:
            query = query.where(_games.c.status == RecordStatus(status).value)
        return await self._runner.read(_count_games, query)


def _parse_cursor(cursor: str) -> int:
    if not cursor.isascii() or not cursor.isdecimal() or len(cursor) > 18:
        raise InvalidCursorError(
            f"invalid cursor {cursor!r}: pass the next_cursor of a page of list_games"
        )
    return int(cursor)


def _summary(
    *,
    game_id: str,
    status: str,
    started_at: datetime | None,
    ended_at: datetime | None,
    header: str,
    result: str | None,
    moves: int,
) -> GameSummary:
    fields = _from_json(header)
    return GameSummary(
        game_id=game_id,
        name=fields.get("name"),
        player_x=RecordPlayer.model_validate(fields.get("player_x", {})),
        player_o=RecordPlayer.model_validate(fields.get("player_o", {})),
        status=RecordStatus(status),
        result=None if result is None else GameResult.model_validate(_from_json(result)),
        started_at=started_at,
        ended_at=ended_at,
        moves=moves,
    )

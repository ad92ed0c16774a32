"""Game records on disk: one row per game, one row per move, written as the game is played.

``GameStore`` keeps ``GameRecord`` s through SQLAlchemy's asyncio layer, so no query ever
blocks the event loop. The default is a SQLite file (``./data/htttx.sqlite``); a
``postgresql+asyncpg://`` URL selects PostgreSQL. ``sqlite://`` and ``postgresql://``
URLs are given their asyncio driver (aiosqlite, asyncpg) automatically.

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

Concurrency: one store serves every game of a server. SQLite has a single writer, so
the store queues writes on an ``asyncio.Lock`` and its write transactions start with
``BEGIN IMMEDIATE`` (another process's writes are waited for, up to a busy timeout);
reads go through a second engine and, in WAL mode, never wait for writes. On
PostgreSQL, ``add_move`` and ``finish_game`` lock the game's row, so two writers of one
game queue up and different games never wait for each other.

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
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, Concatenate, Final, ParamSpec, TypeVar

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
    event,
    func,
    select,
    update,
)
from sqlalchemy.engine import URL, Dialect, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

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
# this process never wait on each other at the SQLite level (see GameStore._write).
_SQLITE_BUSY_TIMEOUT_MS: Final = 10_000

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


def _sqlite_engine(url: URL, *, begin: str) -> AsyncEngine:
    """An aiosqlite engine whose transactions start with ``begin``.

    pysqlite's own transaction handling starts transactions late (before the first
    write), so a read-then-write transaction could fail to upgrade its lock instead of
    waiting. As SQLAlchemy's SQLite docs advise, the driver is put in autocommit mode
    and the BEGIN is emitted here: ``BEGIN IMMEDIATE`` for writers takes the write lock
    up front, where the busy timeout applies.
    """
    # Every use is a transaction that ends in a commit or a rollback, so the pool's
    # rollback on check-in has nothing to do; skipping it saves a trip to the
    # driver's thread per transaction (a move's write is a few of them).
    kwargs: dict[str, Any] = {"pool_reset_on_return": None}
    if _is_memory_sqlite(url):
        # One shared connection: each new connection would see its own empty database.
        kwargs["poolclass"] = StaticPool
    elif begin != "BEGIN":
        # The writer: one connection is all SQLite can use for writing anyway.
        kwargs["pool_size"] = 1
        kwargs["max_overflow"] = 0
    engine = create_async_engine(url, **kwargs)

    @event.listens_for(engine.sync_engine, "connect")
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

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql(begin)

    return engine


# --------------------------------------------------------------------------- store


async def _lock_game(conn: AsyncConnection, game_id: str, *columns: Any, missing: str) -> Any:
    """The game's row (``columns``), locked for this transaction: concurrent writers of
    one game queue up on PostgreSQL (SQLite ignores FOR UPDATE; its write lock already
    serialises everything). Raises UnknownGameError naming what was being done."""
    row = (
        await conn.execute(select(*columns).where(_games.c.game_id == game_id).with_for_update())
    ).one_or_none()
    if row is None:
        raise UnknownGameError(f"no game {game_id!r} {missing}")
    return row


_P = ParamSpec("_P")
_T = TypeVar("_T")


def _runs_to_completion(
    write: Callable[Concatenate[GameStore, _P], Coroutine[Any, Any, _T]],
) -> Callable[Concatenate[GameStore, _P], Coroutine[Any, Any, _T]]:
    """Let a write finish even when its caller is cancelled, then honour the cancel.

    A transaction cut off halfway (a server shutting down cancels game tasks in the
    middle of their writes) can leave SQLite's write lock held by a connection whose
    rollback never ran, and every later writer then fails with "database is locked".
    So the write runs in its own task; a cancelled caller waits for it (a short wait:
    one transaction) and only then sees its CancelledError. The write lands whole.
    """

    @functools.wraps(write)
    async def run(store: GameStore, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        task = asyncio.ensure_future(write(store, *args, **kwargs))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            while not task.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(task)
            if not task.cancelled():
                task.exception()  # retrieved: the caller is gone, its cancel wins
            raise

    return run


class GameStore:
    """Game records in SQLite or PostgreSQL. Open with ``await GameStore.open(url)``.

    Safe to share among all the games of one server: SQLite writes are serialised in
    the store (SQLite has one writer), PostgreSQL writes lock the game's row.
    """

    DEFAULT_URL: ClassVar[str] = "sqlite+aiosqlite:///./data/htttx.sqlite"

    def __init__(self, url: URL, writer: AsyncEngine, reader: AsyncEngine) -> None:
        """Use ``GameStore.open``; this only wires up engines it has prepared."""
        self.url = url
        self._writer = writer
        self._reader = reader
        self._is_sqlite = url.get_backend_name() == "sqlite"
        # Only SQLite needs it: one writer at a time, and waiting here (not in SQLite's
        # busy handler) keeps waits fair and free of lock-upgrade failures.
        self._write_lock = asyncio.Lock()

    @classmethod
    async def open(cls, url: str = DEFAULT_URL) -> GameStore:
        """Connect to ``url`` and create the tables if they are missing.

        For a SQLite file, the directory is created too.
        """
        parsed = _async_url(url)
        if parsed.get_backend_name() == "sqlite":
            if not _is_memory_sqlite(parsed) and parsed.database:
                Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            writer = _sqlite_engine(parsed, begin="BEGIN IMMEDIATE")
            reader = writer if _is_memory_sqlite(parsed) else _sqlite_engine(parsed, begin="BEGIN")
        else:
            writer = reader = create_async_engine(parsed, pool_pre_ping=True)
        store = cls(parsed, writer, reader)
        try:
            async with store._write() as conn:
                await conn.run_sync(_metadata.create_all)
        except BaseException:
            await store.close()
            raise
        return store

    async def close(self) -> None:
        """Close every connection. The store cannot be used afterwards."""
        await self._writer.dispose()
        if self._reader is not self._writer:
            await self._reader.dispose()

    async def __aenter__(self) -> GameStore:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncConnection]:
        """A short write transaction, committed on exit."""
        async with contextlib.AsyncExitStack() as stack:
            if self._is_sqlite:
                await stack.enter_async_context(self._write_lock)
            conn = await stack.enter_async_context(self._writer.begin())
            yield conn

    # ------------------------------------------------------------------ writing

    @_runs_to_completion
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
        header = _to_json(record, exclude=_NOT_IN_HEADER)
        try:
            async with self._write() as conn:
                await conn.execute(
                    _games.insert().values(
                        game_id=game_id,
                        status=RecordStatus.RUNNING.value,
                        started_at=record.started_at,
                        header=header,
                        move_count=len(record.moves),
                    )
                )
                if record.moves:
                    await conn.execute(
                        _moves.insert(),
                        [
                            {"game_id": game_id, "idx": i, "data": _to_json(move)}
                            for i, move in enumerate(record.moves)
                        ],
                    )
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

    @_runs_to_completion
    async def add_moves(
        self, game_id: str, first_index: int, moves: Sequence[tuple[RecordedMove, int | None]]
    ) -> None:
        """Record consecutive moves ``(move, latency_ms)`` from ``first_index`` on, in one
        transaction: a game's recorder writes whatever has queued up at once (a group
        commit), which costs one round of statements instead of one per move.

        Same rules as ``add_move`` for each move: those already stored must be equal.
        """
        rows: list[dict[str, Any]] = [
            {"game_id": game_id, "idx": first_index + i, "data": _to_json(move), "latency_ms": ms}
            for i, (move, ms) in enumerate(moves)
        ]
        if not rows:
            return
        async with self._write() as conn:
            # The usual case in one statement: a running game whose next index is
            # ``first_index`` takes the moves (the UPDATE also locks the row on
            # PostgreSQL). Anything else is sorted out by the checks below.
            claimed = await conn.execute(
                update(_games)
                .where(
                    _games.c.game_id == game_id,
                    _games.c.status == RecordStatus.RUNNING.value,
                    _games.c.move_count == first_index,
                )
                .values(move_count=first_index + len(rows))
            )
            if claimed.rowcount == 1:
                await conn.execute(_moves.insert(), rows)
                return
            row = await _lock_game(
                conn,
                game_id,
                _games.c.status,
                _games.c.move_count,
                missing=f"to add move {first_index} to",
            )
            status, count = RecordStatus(row.status), row.move_count
            stored_already = [r for r in rows if 0 <= r["idx"] < count]
            for wanted in stored_already:
                stored = (
                    await conn.execute(
                        select(_moves.c.data, _moves.c.latency_ms).where(
                            _moves.c.game_id == game_id, _moves.c.idx == wanted["idx"]
                        )
                    )
                ).one()
                if (stored.data, stored.latency_ms) != (wanted["data"], wanted["latency_ms"]):
                    raise MoveConflictError(
                        f"game {game_id!r} already has a different move {wanted['idx']}: "
                        f"{stored.data}"
                    )
            new_rows = rows[len(stored_already) :]
            if not new_rows:
                return
            if status is not RecordStatus.RUNNING:
                raise GameNotRunningError(
                    f"game {game_id!r} is {status.value}; it takes no more moves"
                )
            index = new_rows[0]["idx"]
            if index != count:
                raise MoveIndexError(
                    f"game {game_id!r} has {count} moves, so the next index is {count}, got {index}"
                )
            await conn.execute(_moves.insert(), new_rows)
            await conn.execute(
                update(_games)
                .where(_games.c.game_id == game_id)
                .values(move_count=_games.c.move_count + len(new_rows))
            )

    @_runs_to_completion
    async def finish_game(self, game_id: str, result: GameResult, *, ended_at: datetime) -> None:
        """Record how a running game ended. A result with ``cause=ABORTED`` marks the
        game aborted rather than finished.

        Recording the same result again does nothing. Raises UnknownGameError, or
        GameNotRunningError if the game already has a different result.
        """
        data = _to_json(result)
        status = RecordStatus.ABORTED if result.cause is EndCause.ABORTED else RecordStatus.FINISHED
        async with self._write() as conn:
            row = await _lock_game(
                conn, game_id, _games.c.status, _games.c.result, missing="to finish"
            )
            if row.status != RecordStatus.RUNNING.value:
                if row.result == data:
                    return
                raise GameNotRunningError(
                    f"game {game_id!r} is already {row.status} with result {row.result}"
                )
            await conn.execute(
                update(_games)
                .where(_games.c.game_id == game_id)
                .values(status=status.value, result=data, ended_at=ended_at)
            )

    @_runs_to_completion
    async def abort_running(self, *, ended_at: datetime) -> int:
        """Mark every running game aborted, keeping its moves; for server startup.

        Returns how many games were aborted.
        """
        async with self._write() as conn:
            outcome = await conn.execute(
                update(_games)
                .where(_games.c.status == RecordStatus.RUNNING.value)
                .values(
                    status=RecordStatus.ABORTED.value,
                    result=_to_json(ABORTED_RESULT),
                    ended_at=ended_at,
                )
            )
            return int(outcome.rowcount)

    # ------------------------------------------------------------------ reading

    async def get_game(self, game_id: str) -> GameRecord | None:
        """The full record of a game, moves in order; None if there is no such game."""
        async with self._reader.begin() as conn:
            game = (
                await conn.execute(
                    select(_games.c.started_at, _games.c.header, _games.c.result).where(
                        _games.c.game_id == game_id
                    )
                )
            ).one_or_none()
            if game is None:
                return None
            moves: list[str] = list(
                (
                    await conn.execute(
                        select(_moves.c.data)
                        .where(_moves.c.game_id == game_id)
                        .order_by(_moves.c.idx)
                    )
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

    async def move_latencies(self, game_id: str) -> list[int | None]:
        """The measured latency of each move of a game, in move order.

        ``RecordedMove`` has no field for it yet, so it is kept beside the move.
        Raises UnknownGameError.
        """
        async with self._reader.begin() as conn:
            exists = (
                await conn.execute(select(_games.c.seq).where(_games.c.game_id == game_id))
            ).one_or_none()
            if exists is None:
                raise UnknownGameError(f"no game {game_id!r}")
            rows = await conn.execute(
                select(_moves.c.latency_ms)
                .where(_moves.c.game_id == game_id)
                .order_by(_moves.c.idx)
            )
            return list(rows.scalars())

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
        async with self._reader.begin() as conn:
            rows = (await conn.execute(query)).all()
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

    async def count_games(self, *, status: RecordStatus | None = None) -> int:
        """How many games are stored, optionally only those with ``status``."""
        query = select(func.count()).select_from(_games)
        if status is not None:
            query = query.where(_games.c.status == RecordStatus(status).value)
        async with self._reader.begin() as conn:
            return int((await conn.execute(query)).scalar_one())


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

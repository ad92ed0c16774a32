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
that were still running as aborted; their moves stay. SQLite commits in WAL mode with
``PRAGMA synchronous=FULL`` by default: the commit is synced to disk (an fsync) before
``add_move`` returns, so this holds for a crash of the machine or a power cut too. A
SQLite URL may say ``?synchronous=normal`` instead: a commit is then written to the WAL
file but not synced, so a crash of the server's *process* (``kill -9``, an exception)
still loses no returned move, but a crash of the operating system or a power cut may
lose the last commits (the database stays consistent: whole transactions are lost, in
order, from the newest). What it saves is the fsync of each commit: here about 70 µs
of CPU (kernel time) and 150 µs of the writer thread's wall time per commit
(``bench/store.py --synchronous normal``), and in ``bench/server.py --quick`` a third
of the writer thread's CPU, about 5% of the server's, within that benchmark's noise in
its CPU per move. That is why FULL stays the default.

One process per database: ``htttx-server`` and ``htttx-tournament`` claim it before they
open it (``game.store_claim``), so ``abort_running`` never takes a running server's
games for games left behind.

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
    game_players                                primary key (seq, seat)
           seq        integer, references games.seq
           seat       'x' | 'o'
           name_key   text, nullable            the seat's name case-folded (null: none,
                                                or longer than MAX_PLAYER_FILTER);
                                                indexed with seq
    game_bots                                   primary key (seq, seat)
           seq        integer, references games.seq
           seat       'x' | 'o'
           url_key    text, nullable            SHA-256 (hex) of the seat's bot_url
                                                (null: no URL); indexed with seq

Nested data is JSON *text* rather than a JSON column type: it is portable, keeps
PositionEvaluation's extra fields and non-finite heuristics exactly, and PostgreSQL's
``jsonb`` would reject both ``Infinity`` and ``\\u0000``. Nothing filters on it: the
filters on what it holds, by player name and by bot URL, read ``game_players`` and
``game_bots``, which ``create_game`` writes in the same transaction as the game. They
are tables of their own, not columns of ``games``, so ``create_all`` adds them to a
database made before them; ``open`` then indexes the games stored before them (once).

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
IMMEDIATE`` (another process's writes are waited for, up to a busy timeout). The
store's most frequent writes, a game's next moves and its result, and the one every
new game waits for before it starts (its row and its players'), skip SQLAlchemy
there in their usual case: the same transaction goes to the sqlite3 connection as
prepared statements (``_SqliteThreads._straight_on_writer``), and each move is
serialised directly rather than through pydantic's dump (``schema._move_json``: the
same text). The moves of several games that queue up while the writer is busy share
one transaction (``_SqliteThreads.write_moves``: group commit across games). Reads of
a SQLite file run on a few reader threads and, in WAL mode, never wait for writes; an
in-memory database is one connection, used only by the writer thread. On PostgreSQL,
the same functions run through the asyncpg engine (``AsyncConnection.run_sync``);
``add_move`` and ``finish_game`` lock the game's row, so two writers of one game queue
up. Moves are written by one task of the store, the moves of every game waiting for it
in one transaction (``engine_runner``: group commit across games, as on SQLite).

Aborted games: ``status`` is ``aborted`` and ``result`` is
``GameResult(winner=None, reason=DRAW, cause=ABORTED, detail=<why>)``: ``ABORTED_RESULT``
for a game the server stopped, ``LEFT_RUNNING_RESULT`` for one a previous run left
running (marked at startup). ``GameResult`` allows no winner only in a draw, and this is
also exactly what the ``end`` packet of an aborted game says on the wire
(``winner: null``, ``reason: draw``, ``detail: "aborted: <why>"``).
Anything that counts draws (ratings, statistics) must check ``cause`` first.

Tournaments: the tables ``tournaments`` and ``tournament_games`` (``store.tournaments``,
see ``game.store.tournaments``) hold each tournament's settings and the result of every
game it counted, next to the games' own records; ``tournament_controls`` the hash of
the token that stops and resumes it; ``series`` (``store.series``, see
``game.store.series``) says which of them are series.

The arena: ``arena_players`` and ``bots`` (``store.arena``, see ``game.store.arena``)
hold the one namespace of player names and the registered bots; ``ratings``,
``rating_history`` and ``rated_games`` (``store.ratings``, see ``game.store.ratings``)
the ratings and which games count for them.

Forward compatibility: records are stored through their pydantic serialisation, so a
field added to ``GameRecord``, ``RecordPlayer`` or ``RecordedMove`` is stored without a
schema change, and older rows read back with the field's default.

>>> GameStore.DEFAULT_URL
'sqlite+aiosqlite:///./data/htttx.sqlite'
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from sqlalchemy import func, select
from sqlalchemy.engine import URL
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import create_async_engine

from game.store.arena import ArenaRecords
from game.store.challenges import ChallengeRecords
from game.store.engine_runner import _AsyncEngineRunner
from game.store.errors import (
    DuplicateGameError,
    GameNotRunningError,
    InvalidBotUrlFilterError,
    InvalidCursorError,
    InvalidGameIdError,
    InvalidPageSizeError,
    InvalidPlayerFilterError,
    MoveConflictError,
    MoveIndexError,
    RecordAlreadyFinishedError,
    StoreError,
    UnknownGameError,
    UnsupportedDatabaseError,
)
from game.store.queries import (
    _abort_games,
    _abort_running,
    _build_record,
    _count_games,
    _fetch_and_build,
    _fetch_game,
    _game_status,
    _index_players,
    _list_games,
    _move_latencies,
    _record_json,
    _status_is,
    _StoredGame,
)
from game.store.ratings import RatingRecords
from game.store.runners import (
    _Runner,
    _SqliteThreads,
    _to_completion,
)
from game.store.schema import (
    _NOT_IN_HEADER,
    ABORTED_RESULT,
    LEFT_RUNNING_RESULT,
    MAX_BOT_URL_FILTER,
    MAX_GAME_ID_LENGTH,
    MAX_PAGE_SIZE,
    MAX_PLAYER_FILTER,
    GamePage,
    GameSummary,
    RecordJson,
    RecordStatus,
    _game_bots,
    _game_players,
    _games,
    _metadata,
    _move_json,
    _parse_cursor,
    _to_json,
    bot_url_key,
    player_key,
)
from game.store.series import SeriesRecords
from game.store.tournaments import TournamentRecords
from game.store.urls import _async_url, _is_memory_sqlite, database_url
from game.store.work import WorkRecords
from models import EndCause, GameRecord, GameResult, RecordedMove

_T = TypeVar("_T")

__all__ = [
    "ABORTED_RESULT",
    "LEFT_RUNNING_RESULT",
    "MAX_BOT_URL_FILTER",
    "MAX_PAGE_SIZE",
    "MAX_PLAYER_FILTER",
    "DuplicateGameError",
    "GameNotRunningError",
    "GamePage",
    "GameStore",
    "GameSummary",
    "InvalidBotUrlFilterError",
    "InvalidCursorError",
    "InvalidGameIdError",
    "InvalidPageSizeError",
    "InvalidPlayerFilterError",
    "MoveConflictError",
    "MoveIndexError",
    "RecordAlreadyFinishedError",
    "RecordJson",
    "RecordStatus",
    "StoreError",
    "UnknownGameError",
    "UnsupportedDatabaseError",
    "database_url",
]


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
        #: The tournaments in this store (``game.store.tournaments``).
        self.tournaments = TournamentRecords(runner)
        #: Open challenges (``game.store.challenges``).
        self.challenges = ChallengeRecords(runner)
        #: Which tournaments are series (``game.store.series``).
        self.series = SeriesRecords(runner)
        #: The arena's players and registered bots (``game.store.arena``).
        self.arena = ArenaRecords(runner)
        #: The arena's ratings, their history and the rated games (``game.store.ratings``).
        self.ratings = RatingRecords(runner)
        #: The cluster's work queue: games any worker may lease (``game.store.work``).
        self.work = WorkRecords(runner)

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
            await store._index_old_games()
        except BaseException:
            await store.close()
            raise
        return store

    async def _index_old_games(self) -> None:
        # IntegrityError: another server opening this database indexed them first.
        with contextlib.suppress(IntegrityError):
            await self._runner.write(_index_players)

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
            {"game_id": game_id, "idx": i, "data": _move_json(move), "latency_ms": None}
            for i, move in enumerate(record.moves)
        ]
        try:
            names = (record.player_x.name, record.player_o.name)
            bot_urls = (record.player_x.bot_url, record.player_o.bot_url)
            await self._runner.write_new_game(game, moves, names, bot_urls)
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
        rows = _move_rows(game_id, first_index, moves)
        if rows:
            await self._runner.write_moves(game_id, first_index, rows)

    async def finish_game(
        self,
        game_id: str,
        result: GameResult,
        *,
        ended_at: datetime,
        moves_from: int = 0,
        moves: Sequence[tuple[RecordedMove, int | None]] = (),
    ) -> None:
        """Record how a running game ended. A result with ``cause=ABORTED`` marks the
        game aborted rather than finished. With ``moves``, its last moves
        ``(move, latency_ms)`` from index ``moves_from`` on are recorded in the same
        transaction, as ``add_moves`` would record them: a game's end is one commit, and
        a failure records neither.

        Recording the same result again does nothing. Raises UnknownGameError, or
        GameNotRunningError if the game already has a different result; for the moves,
        what ``add_moves`` raises.
        """
        status = RecordStatus.of_result(result)
        rows = _move_rows(game_id, moves_from, moves)
        await self._runner.write_result(
            game_id, status, _to_json(result), ended_at, moves_from, rows
        )

    async def abort_running(self, *, ended_at: datetime) -> int:
        """Mark every running game aborted, keeping its moves; for server startup.

        Returns how many games were aborted.
        """
        return await self._runner.write(_abort_running, ended_at)

    async def abort_games(
        self, game_ids: list[str], result: GameResult, *, ended_at: datetime
    ) -> list[str]:
        """Mark the games of ``game_ids`` that are still running aborted with ``result``
        (whose ``cause`` must be ``ABORTED``), keeping their moves; for the games of a
        worker of a cluster that died (``game.cluster_sweep``). Returns the ids of those
        it aborted: one over already (or unknown) keeps its record. Aborting them again
        changes nothing."""
        if result.cause is not EndCause.ABORTED:
            raise ValueError(f"abort_games records an aborted result, got cause {result.cause}")
        if not game_ids:
            return []
        return await self._runner.write(_abort_games, list(game_ids), _to_json(result), ended_at)

    # ------------------------------------------------------------------ reading

    async def get_game(self, game_id: str) -> GameRecord | None:
        """The full record of a game, moves in order; None if there is no such game.

        Rebuilding a record of thousands of moves takes a while: it never runs on the
        event loop (on PostgreSQL, only the query does).
        """
        return await self._read_game(game_id, _build_record)

    async def game_status(self, game_id: str) -> RecordStatus | None:
        """The game's status alone (running, finished, aborted); None if there is no
        such game. Reads one row, not the moves."""
        status = await self._runner.read(_game_status, game_id)
        return None if status is None else RecordStatus(status)

    async def get_game_json(self, game_id: str) -> RecordJson | None:
        """The full record of a game as the JSON of ``GameRecord``, with the game's
        status; None if there is no such game.

        For serving: each move's stored JSON goes in as it is, without being rebuilt
        into a model and encoded again, which for a long game is most of the work of a
        read (and of the garbage collector's).
        """
        return await self._read_game(game_id, _record_json)

    async def _read_game(self, game_id: str, build: Callable[[_StoredGame | None], _T]) -> _T:
        # The query, then ``build``, both off the event loop (on PostgreSQL only the
        # query runs on it, in run_sync's greenlet).
        if self._runner.reads_on_loop:
            stored = await self._runner.read(_fetch_game, game_id)
            return await asyncio.to_thread(build, stored)
        return await self._runner.read(_fetch_and_build, game_id, build)

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
        player: str | None = None,
        bot_url: str | None = None,
        limit: int = 50,
        before: str | None = None,
        decided: Mapping[str, RecordStatus] | None = None,
    ) -> GamePage:
        """Games newest first (by creation), optionally only those with ``status``, only
        those where either seat's name is ``player``, compared case-insensitively
        (``str.casefold``; otherwise exact: no prefix, no trimming), and only those
        where either seat's ``bot_url`` is ``bot_url``, exactly as the seat gave it.

        ``decided`` maps games whose end a server knows but has not committed yet to the
        status they are about to have; ``status`` filters them by that status, not by the
        stored ``running``. So a game that a client has seen end is never listed as
        running, and the pages stay full and exact.

        Pagination is by cursor: pass a page's ``next_cursor`` as ``before`` to get
        the games created before the last one on it. Unlike an offset, this neither
        skips nor repeats games while new ones are being created.
        Raises InvalidPageSizeError, InvalidCursorError, InvalidPlayerFilterError or
        InvalidBotUrlFilterError.
        """
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise InvalidPageSizeError(f"limit must be between 1 and {MAX_PAGE_SIZE}, got {limit}")
        if player is not None and not 1 <= len(player) <= MAX_PLAYER_FILTER:
            raise InvalidPlayerFilterError(
                f"player must be a name of 1 to {MAX_PLAYER_FILTER} characters, "
                f"got {len(player)} characters"
            )
        if bot_url is not None and not 1 <= len(bot_url) <= MAX_BOT_URL_FILTER:
            raise InvalidBotUrlFilterError(
                f"bot_url must be a URL of 1 to {MAX_BOT_URL_FILTER} characters, "
                f"got {len(bot_url)} characters"
            )
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
            query = query.where(_status_is(RecordStatus(status), decided or {}))
        if before is not None:
            query = query.where(_games.c.seq < _parse_cursor(before))
        if player is not None:
            key = player_key(player)
            if key is None:  # a name that is never indexed (too long once case-folded)
                return GamePage()
            seats = select(_game_players.c.seq).where(_game_players.c.name_key == key)
            query = query.where(_games.c.seq.in_(seats))
        if bot_url is not None:
            bots = select(_game_bots.c.seq).where(_game_bots.c.url_key == bot_url_key(bot_url))
            query = query.where(_games.c.seq.in_(bots))
        # One row more than asked tells whether there is a next page.
        query = query.order_by(_games.c.seq.desc()).limit(limit + 1)
        return await self._runner.read(_list_games, query, limit)

    async def count_games(self, *, status: RecordStatus | None = None) -> int:
        """How many games are stored, optionally only those with ``status``."""
        query = select(func.count()).select_from(_games)
        if status is not None:
            query = query.where(_games.c.status == RecordStatus(status).value)
        return await self._runner.read(_count_games, query)


def _move_rows(
    game_id: str, first_index: int, moves: Sequence[tuple[RecordedMove, int | None]]
) -> list[dict[str, Any]]:
    """The ``moves`` rows of ``moves`` from ``first_index`` on. Serialised here, on the
    caller's side: the rows are a snapshot of the moves as they were when handed over."""
    return [
        {"game_id": game_id, "idx": first_index + i, "data": _move_json(move), "latency_ms": ms}
        for i, (move, ms) in enumerate(moves)
    ]

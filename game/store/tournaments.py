"""Tournaments in the store: the settings, the status, and the result of every game played.

Three tables next to ``games`` (created with them)::

    tournaments       seq            integer, primary key      creation order
                      tournament_id  text, unique
                      name           text, nullable
                      status         running | stopped | interrupted | finished | failed
                      created_at     ISO 8601 text
                      ended_at       ISO 8601 text, nullable
                      request        JSON text                 the TournamentRequest
                      reason         text, nullable            why it stopped or failed
                      games_total    integer                   games in the schedule
                      games_done     integer                   games with a result
    tournament_games  tournament_id  text, references tournaments  primary key
                      idx            integer                   game number in the schedule
                      game_id        text                      the game in ``games``
                      status         running | done
                      outcome        JSON text, nullable       winner and failures
    tournament_controls
                      tournament_id  text, primary key, references tournaments
                      token_hash     text                      sha256 hex of the
                                                               creator's control token

The schedule itself is not stored: it is a function of the request (see
``game.tournament_schedule``). A ``tournament_games`` row is written when a game of the
schedule starts, with its ``game_id``, and completed in one transaction with the
tournament's ``games_done`` when its result is known; so after a crash, the rows say
exactly which games counted and which were cut short. The primary key makes a result
unique per game number: a game is never counted twice.

``tournament_controls`` holds the hash of the secret token whoever created the
tournament (or series) over REST got, written in the same transaction as the
tournament: the token itself is never stored. A tournament has no row there when it
was created without one (by ``htttx-tournament``, or before the table existed); what
that means for stopping and resuming it is ``game.tournament_routes``'s rule. The
token is a table of its own, not a column of ``tournaments``, so ``create_all`` adds
it to a database made before it (there are no migrations) and nothing else changes
there; and no query that reads tournaments ever reads it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    and_,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Connection

from game.store.runners import _Runner
from game.store.schema import (
    MAX_GAME_ID_LENGTH,
    RecordStatus,
    _columns_of,
    _from_nullable_json,
    _from_row,
    _games,
    _IsoDateTime,
    _metadata,
)

__all__ = ["StoredTournament", "TournamentGameRow", "TournamentRecords"]

_tournaments = Table(
    "tournaments",
    _metadata,
    Column("seq", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("tournament_id", String(MAX_GAME_ID_LENGTH), nullable=False, unique=True),
    Column("name", Text(), nullable=True),
    Column("status", String(16), nullable=False),
    Column("created_at", _IsoDateTime(), nullable=False),
    Column("ended_at", _IsoDateTime(), nullable=True),
    Column("request", Text(), nullable=False),
    Column("reason", Text(), nullable=True),
    Column("games_total", Integer(), nullable=False),
    Column("games_done", Integer(), nullable=False, default=0),
)

_controls = Table(
    "tournament_controls",
    _metadata,
    Column(
        "tournament_id",
        String(MAX_GAME_ID_LENGTH),
        ForeignKey("tournaments.tournament_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("token_hash", String(64), nullable=False),
)

_tournament_games = Table(
    "tournament_games",
    _metadata,
    Column(
        "tournament_id",
        String(MAX_GAME_ID_LENGTH),
        ForeignKey("tournaments.tournament_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("idx", Integer(), primary_key=True),
    Column("game_id", String(MAX_GAME_ID_LENGTH), nullable=False),
    Column("status", String(16), nullable=False),
    Column("outcome", Text(), nullable=True),
)


@dataclass(frozen=True)
class StoredTournament:
    """A ``tournaments`` row; ``request`` is the request's JSON data."""

    tournament_id: str
    name: str | None
    status: str
    created_at: datetime
    ended_at: datetime | None
    request: dict[str, Any]
    reason: str | None
    games_total: int
    games_done: int


@dataclass(frozen=True)
class TournamentGameRow:
    """A game of a tournament that was started: ``outcome`` once it counted (JSON data),
    and for a game cut short, the status and result of its record in ``games``."""

    idx: int
    game_id: str
    status: str
    outcome: dict[str, Any] | None
    game_status: str | None
    game_result: dict[str, Any] | None


_COLUMNS = _columns_of(StoredTournament, _tournaments)


def _row_to_tournament(row: Any) -> StoredTournament:
    return _from_row(StoredTournament, row, request=json.loads(row.request))


def _new_tournament(
    tournament_id: str,
    name: str | None,
    request_json: str,
    games_total: int,
    created_at: datetime,
) -> dict[str, Any]:
    """The ``tournaments`` row of a tournament just created: running, no game done (a
    series' tournament too: ``game.store.series``)."""
    return {
        "tournament_id": tournament_id,
        "name": name,
        "status": "running",
        "created_at": created_at,
        "request": request_json,
        "games_total": games_total,
        "games_done": 0,
    }


def _create(conn: Connection, values: dict[str, Any], control_hash: str | None) -> None:
    """Store a new tournament's row and, when it has one, its control token's hash:
    one transaction, so a tournament never exists without the token it was given."""
    conn.execute(insert(_tournaments).values(**values))
    if control_hash is not None:
        conn.execute(
            insert(_controls).values(tournament_id=values["tournament_id"], token_hash=control_hash)
        )


def _control_hash(conn: Connection, tournament_id: str) -> str | None:
    row = conn.execute(
        select(_controls.c.token_hash).where(_controls.c.tournament_id == tournament_id)
    ).first()
    return None if row is None else str(row.token_hash)


def _get(conn: Connection, tournament_id: str) -> StoredTournament | None:
    row = conn.execute(
        select(*_COLUMNS).where(_tournaments.c.tournament_id == tournament_id)
    ).first()
    return None if row is None else _row_to_tournament(row)


def _list(conn: Connection, limit: int) -> list[StoredTournament]:
    rows = conn.execute(select(*_COLUMNS).order_by(_tournaments.c.seq.desc()).limit(limit))
    return [_row_to_tournament(row) for row in rows]


def _starting_with(conn: Connection, prefix: str, limit: int) -> list[StoredTournament]:
    query = (
        select(*_COLUMNS)
        .where(_tournaments.c.tournament_id.startswith(prefix, autoescape=True))
        .order_by(_tournaments.c.seq.desc())
        .limit(limit)
    )
    return [_row_to_tournament(row) for row in conn.execute(query)]


def _set_status(
    conn: Connection,
    tournament_id: str,
    status: str,
    reason: str | None,
    ended_at: datetime | None,
) -> None:
    conn.execute(
        update(_tournaments)
        .where(_tournaments.c.tournament_id == tournament_id)
        .values(status=status, reason=reason, ended_at=ended_at)
    )


def _running_ids(conn: Connection) -> list[str]:
    return [
        row.tournament_id
        for row in conn.execute(
            select(_tournaments.c.tournament_id)
            .where(_tournaments.c.status == "running")
            .order_by(_tournaments.c.seq)
        )
    ]


def _interrupt_running(conn: Connection, reason: str) -> list[str]:
    ids = [
        row.tournament_id
        for row in conn.execute(
            select(_tournaments.c.tournament_id).where(_tournaments.c.status == "running")
        )
    ]
    if ids:
        conn.execute(
            update(_tournaments)
            .where(_tournaments.c.tournament_id.in_(ids))
            .values(status="interrupted", reason=reason)
        )
    return ids


def _started(tournament_id: str, idx: int) -> Any:
    """The row of game ``idx`` while it is started and not counted."""
    return and_(
        _tournament_games.c.tournament_id == tournament_id,
        _tournament_games.c.idx == idx,
        _tournament_games.c.status == "running",
    )


def _start_game(conn: Connection, tournament_id: str, idx: int, game_id: str) -> None:
    # A game cut short before (its row still "running") is replaced by the new one.
    conn.execute(delete(_tournament_games).where(_started(tournament_id, idx)))
    conn.execute(
        insert(_tournament_games).values(
            tournament_id=tournament_id, idx=idx, game_id=game_id, status="running"
        )
    )


def _finish_game(
    conn: Connection, tournament_id: str, idx: int, outcome: str, *, game_id: str | None = None
) -> bool:
    started = _started(tournament_id, idx)
    if game_id is not None:  # that game's row, not one a replay put in its place
        started = and_(started, _tournament_games.c.game_id == game_id)
    done = conn.execute(
        update(_tournament_games).where(started).values(status="done", outcome=outcome)
    ).rowcount
    if done:
        conn.execute(
            update(_tournaments)
            .where(_tournaments.c.tournament_id == tournament_id)
            .values(games_done=_tournaments.c.games_done + 1)
        )
    return bool(done)


def _counted(conn: Connection, tournament_id: str, idx: int) -> dict[str, Any] | None:
    """The stored outcome of game ``idx`` of the tournament once it is counted."""
    row = conn.execute(
        select(_tournament_games.c.outcome).where(
            _tournament_games.c.tournament_id == tournament_id,
            _tournament_games.c.idx == idx,
            _tournament_games.c.status == "done",
        )
    ).first()
    return None if row is None else _from_nullable_json(row.outcome)


def _drop_game(conn: Connection, tournament_id: str, idx: int) -> None:
    conn.execute(delete(_tournament_games).where(_started(tournament_id, idx)))


def _live_games(conn: Connection, tournament_id: str) -> dict[int, str]:
    query = (
        select(_tournament_games.c.idx, _tournament_games.c.game_id)
        .select_from(
            _tournament_games.join(_games, _games.c.game_id == _tournament_games.c.game_id)
        )
        .where(
            _tournament_games.c.tournament_id == tournament_id,
            _tournament_games.c.status == "running",
            _games.c.status == RecordStatus.RUNNING.value,
        )
        .order_by(_tournament_games.c.idx)
    )
    return {int(row.idx): str(row.game_id) for row in conn.execute(query)}


def _games_of(
    conn: Connection, tournament_id: str, offset: int = 0, limit: int | None = None
) -> list[TournamentGameRow]:
    query = (
        select(
            _tournament_games.c.idx,
            _tournament_games.c.game_id,
            _tournament_games.c.status,
            _tournament_games.c.outcome,
            _games.c.status.label("game_status"),
            _games.c.result.label("game_result"),
        )
        .select_from(
            _tournament_games.outerjoin(_games, _games.c.game_id == _tournament_games.c.game_id)
        )
        .where(_tournament_games.c.tournament_id == tournament_id)
        .order_by(_tournament_games.c.idx)
        .offset(offset)
        .limit(limit)
    )
    return [
        _from_row(
            TournamentGameRow,
            row,
            outcome=_from_nullable_json(row.outcome),
            game_result=_from_nullable_json(row.game_result),
        )
        for row in conn.execute(query)
    ]


class TournamentRecords:
    """The tournament tables of one ``GameStore`` (``store.tournaments``)."""

    def __init__(self, runner: _Runner) -> None:
        self._runner = runner

    async def create(
        self,
        tournament_id: str,
        *,
        name: str | None,
        request_json: str,
        games_total: int,
        created_at: datetime,
        control_hash: str | None = None,
    ) -> None:
        """Store a new tournament, running; ``control_hash``: the hash of the token its
        creator got (``game.secret_tokens.hash_token``), None for none."""
        await self._runner.write(
            _create,
            _new_tournament(tournament_id, name, request_json, games_total, created_at),
            control_hash,
        )

    async def control_hash(self, tournament_id: str) -> str | None:
        """The hash of the control token the tournament (or series) was created with;
        None when it has none, or there is no such tournament."""
        return await self._runner.read(_control_hash, tournament_id)

    async def get(self, tournament_id: str) -> StoredTournament | None:
        return await self._runner.read(_get, tournament_id)

    async def recent(self, limit: int = 100) -> list[StoredTournament]:
        """The newest ``limit`` tournaments, newest first."""
        return await self._runner.read(_list, limit)

    async def starting_with(self, prefix: str, limit: int = 10) -> list[StoredTournament]:
        """The tournaments whose id starts with ``prefix`` (``%`` and ``_`` are plain
        characters), newest first, ``limit`` at most: an id given by its start."""
        return await self._runner.read(_starting_with, prefix, limit)

    async def set_status(
        self,
        tournament_id: str,
        status: str,
        *,
        reason: str | None = None,
        ended_at: datetime | None = None,
    ) -> None:
        await self._runner.write(_set_status, tournament_id, status, reason, ended_at)

    async def running_ids(self) -> list[str]:
        """The ids of the tournaments that are running, oldest first."""
        return await self._runner.read(_running_ids)

    async def interrupt_running(self, reason: str) -> list[str]:
        """Mark the tournaments a previous run left running as ``interrupted``; their ids."""
        return await self._runner.write(_interrupt_running, reason)

    async def start_game(self, tournament_id: str, idx: int, game_id: str) -> None:
        await self._runner.write(_start_game, tournament_id, idx, game_id)

    async def finish_game(self, tournament_id: str, idx: int, outcome: dict[str, Any]) -> bool:
        """Count game ``idx``'s ``outcome``; False if it was not running (never twice)."""
        text = json.dumps(outcome, separators=(",", ":"))
        return await self._runner.write(_finish_game, tournament_id, idx, text)

    async def counted(self, tournament_id: str, idx: int) -> dict[str, Any] | None:
        """The outcome game ``idx`` was counted with; None while it is not counted."""
        return await self._runner.read(_counted, tournament_id, idx)

    async def drop_game(self, tournament_id: str, idx: int) -> None:
        """Forget a started game that will not count (void, to be played again)."""
        await self._runner.write(_drop_game, tournament_id, idx)

    async def live_games(self, tournament_id: str) -> dict[int, str]:
        """The games of the tournament in flight as the store has them, by game number:
        started, not counted, and their records still running (whichever worker of a
        cluster plays them)."""
        return await self._runner.read(_live_games, tournament_id)

    async def games(
        self, tournament_id: str, *, offset: int = 0, limit: int | None = None
    ) -> list[TournamentGameRow]:
        """The started games of the tournament in game order (all of them, or ``limit``
        from the ``offset``-th), with their records' status and result."""
        return await self._runner.read(_games_of, tournament_id, offset, limit)

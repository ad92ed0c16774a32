"""Ratings in the store: each player's rating and record, its history, the rated games.

Three tables next to ``games`` (created with them)::

    ratings         key          text, primary key   the name case-folded (player_key)
                    name         text                as last played
                    kind         'bot' | 'human'
                    mu, sigma    float               game.ratings.Rating
                    games, wins, losses, draws   integer
                    failures     JSON text           {EndCause value: count} of forfeits
                    think_ms     bigint              thinking_ms summed over its moves
                    think_moves  integer             the moves that had a thinking_ms
                    last_seen    ISO 8601 text       when its last rated game ended
    rating_history  seq          integer, primary key
                    key          text                indexed with seq
                    game_id      text
                    at           ISO 8601 text
                    mu, sigma    float               the rating after the game
                    opponent     text                the opponent's name
                    score        float               1, 0.5 or 0
    rated_games     game_id      text, primary key   a game declared rated (track)
                    x_key, o_key, x_name, o_name
                    status       'pending' | 'rated' | 'void'
                    created_at   ISO 8601 text
                    settled_at   ISO 8601 text, nullable
                    score_x      float, nullable     X's score once rated

Exactly once: ``settle`` moves a game's ``rated_games`` row from ``pending`` to
``rated`` and updates both ratings and the history in one transaction, and does
nothing when the row is not pending; ``void`` moves it to ``void`` (an aborted game).
The two ratings rows are read ``FOR UPDATE`` on PostgreSQL, so two games of one player
settling at once queue up (two that both insert a new player's first row: one fails
on the primary key, is rolled back whole and tried again); SQLite has one writer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Index,
    Integer,
    String,
    Table,
    Text,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from game.ratings import Rating, rate
from game.store.runners import _Runner
from game.store.schema import (
    MAX_GAME_ID_LENGTH,
    MAX_PLAYER_FILTER,
    _from_row,
    _games,
    _IsoDateTime,
    _metadata,
)

__all__ = [
    "RATED_GAME_STATUSES",
    "HistoryRow",
    "PendingGame",
    "RatingRecords",
    "RatingRow",
    "SideOutcome",
]

#: What a ``rated_games`` row's ``status`` may be.
RATED_GAME_STATUSES: Final = ("pending", "rated", "void")

# Tries of a settlement that raced another one to a new player's first row.
_SETTLE_ATTEMPTS: Final = 3

_ratings = Table(
    "ratings",
    _metadata,
    Column("key", String(MAX_PLAYER_FILTER), primary_key=True),
    Column("name", Text(), nullable=False),
    Column("kind", String(8), nullable=False),
    Column("mu", Float(), nullable=False),
    Column("sigma", Float(), nullable=False),
    Column("games", Integer(), nullable=False),
    Column("wins", Integer(), nullable=False),
    Column("losses", Integer(), nullable=False),
    Column("draws", Integer(), nullable=False),
    Column("failures", Text(), nullable=False),
    Column("think_ms", BigInteger(), nullable=False),
    Column("think_moves", Integer(), nullable=False),
    Column("last_seen", _IsoDateTime(), nullable=True),
)

_history = Table(
    "rating_history",
    _metadata,
    Column("seq", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("key", String(MAX_PLAYER_FILTER), nullable=False),
    Column("game_id", String(MAX_GAME_ID_LENGTH), nullable=False),
    Column("at", _IsoDateTime(), nullable=False),
    Column("mu", Float(), nullable=False),
    Column("sigma", Float(), nullable=False),
    Column("opponent", Text(), nullable=False),
    Column("score", Float(), nullable=False),
    Index("ix_rating_history_key_seq", "key", "seq"),
)

_rated_games = Table(
    "rated_games",
    _metadata,
    Column("game_id", String(MAX_GAME_ID_LENGTH), primary_key=True),
    Column("x_key", String(MAX_PLAYER_FILTER), nullable=False),
    Column("o_key", String(MAX_PLAYER_FILTER), nullable=False),
    Column("x_name", Text(), nullable=False),
    Column("o_name", Text(), nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", _IsoDateTime(), nullable=False),
    Column("settled_at", _IsoDateTime(), nullable=True),
    Column("score_x", Float(), nullable=True),
    Index("ix_rated_games_status", "status"),
)


@dataclass(frozen=True)
class RatingRow:
    """A ``ratings`` row: a player's rating and record."""

    key: str
    name: str
    kind: str
    rating: Rating
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    think_ms: int = 0
    think_moves: int = 0
    last_seen: datetime | None = None

    @property
    def avg_think_ms(self) -> int | None:
        """Mean thinking time of its moves, None before any move had one."""
        return None if self.think_moves == 0 else round(self.think_ms / self.think_moves)


@dataclass(frozen=True)
class HistoryRow:
    """A ``rating_history`` row: a player's rating after one game."""

    game_id: str
    at: datetime
    rating: Rating
    opponent: str
    score: float


@dataclass(frozen=True)
class PendingGame:
    """A tracked game not settled yet, with the status of its record (None: no record)."""

    game_id: str
    x_name: str
    o_name: str
    game_status: str | None


@dataclass(frozen=True)
class SideOutcome:
    """What one side's game adds to its player's row: ``score`` 1, 0.5 or 0; the
    forfeit ``failure`` (an EndCause value) it lost by, if any; its thinking time."""

    key: str
    name: str
    kind: str
    score: float
    failure: str | None = None
    think_ms: int = 0
    think_moves: int = 0


def _row_to_rating(row: Any) -> RatingRow:
    return _from_row(
        RatingRow, row, rating=Rating(row.mu, row.sigma), failures=json.loads(row.failures)
    )


def _track(conn: Connection, values: dict[str, Any]) -> bool:
    found = conn.execute(
        select(_rated_games.c.game_id).where(_rated_games.c.game_id == values["game_id"])
    ).first()
    if found is not None:
        return False
    conn.execute(insert(_rated_games).values(**values))
    return True


def _claim_pending(conn: Connection, game_id: str, status: str, at: datetime, score: Any) -> bool:
    return bool(
        conn.execute(
            update(_rated_games)
            .where(_rated_games.c.game_id == game_id, _rated_games.c.status == "pending")
            .values(status=status, settled_at=at, score_x=score)
        ).rowcount
    )


def _updated(row: RatingRow | None, side: SideOutcome, rating: Rating, at: datetime) -> RatingRow:
    old = row if row is not None else RatingRow(side.key, side.name, side.kind, Rating())
    failures = dict(old.failures)
    if side.failure is not None:
        failures[side.failure] = failures.get(side.failure, 0) + 1
    return RatingRow(
        key=side.key,
        name=side.name,
        kind=side.kind,
        rating=rating,
        games=old.games + 1,
        wins=old.wins + (side.score == 1.0),
        losses=old.losses + (side.score == 0.0),
        draws=old.draws + (side.score == 0.5),
        failures=failures,
        think_ms=old.think_ms + side.think_ms,
        think_moves=old.think_moves + side.think_moves,
        last_seen=at,
    )


def _rating_values(row: RatingRow) -> dict[str, Any]:
    return {
        "name": row.name,
        "kind": row.kind,
        "mu": row.rating.mu,
        "sigma": row.rating.sigma,
        "games": row.games,
        "wins": row.wins,
        "losses": row.losses,
        "draws": row.draws,
        "failures": json.dumps(row.failures, separators=(",", ":"), sort_keys=True),
        "think_ms": row.think_ms,
        "think_moves": row.think_moves,
        "last_seen": row.last_seen,
    }


def _settle(
    conn: Connection, game_id: str, x: SideOutcome, o: SideOutcome, at: datetime | None
) -> tuple[Rating, Rating] | None:
    if not _claim_pending(conn, game_id, "rated", at or datetime.now(UTC), x.score):
        return None
    query = select(_ratings).where(_ratings.c.key.in_([x.key, o.key])).with_for_update()
    current = {row.key: _row_to_rating(row) for row in conn.execute(query)}
    # Read once the players' rows are this transaction's: games rated at once are
    # written one after the other, and each one's time must follow the last one's, as
    # its history row (``seq``) does. A time read before the write could be earlier
    # than a game written first, and the history, newest first, out of time order.
    at = at or datetime.now(UTC)
    old_x, old_o = current.get(x.key), current.get(o.key)
    new_x, new_o = rate(
        old_x.rating if old_x else Rating(), old_o.rating if old_o else Rating(), x.score
    )
    for side, old, new, opponent in ((x, old_x, new_x, o), (o, old_o, new_o, x)):
        row = _updated(old, side, new, at)
        if old is None:
            conn.execute(insert(_ratings).values(key=side.key, **_rating_values(row)))
        else:
            conn.execute(
                update(_ratings).where(_ratings.c.key == side.key).values(**_rating_values(row))
            )
        conn.execute(
            insert(_history).values(
                key=side.key,
                game_id=game_id,
                at=at,
                mu=new.mu,
                sigma=new.sigma,
                opponent=opponent.name,
                score=side.score,
            )
        )
    return new_x, new_o


def _void(conn: Connection, game_id: str, at: datetime) -> bool:
    return _claim_pending(conn, game_id, "void", at, None)


def _get(conn: Connection, key: str) -> RatingRow | None:
    row = conn.execute(select(_ratings).where(_ratings.c.key == key)).first()
    return None if row is None else _row_to_rating(row)


def _all(conn: Connection) -> list[RatingRow]:
    return [_row_to_rating(row) for row in conn.execute(select(_ratings))]


def _history_of(conn: Connection, key: str, limit: int) -> list[HistoryRow]:
    rows = conn.execute(
        select(_history).where(_history.c.key == key).order_by(_history.c.seq.desc()).limit(limit)
    )
    return [_from_row(HistoryRow, row, rating=Rating(row.mu, row.sigma)) for row in rows]


def _pending(conn: Connection) -> list[PendingGame]:
    query = (
        select(
            _rated_games.c.game_id,
            _rated_games.c.x_name,
            _rated_games.c.o_name,
            _games.c.status.label("game_status"),
        )
        .select_from(_rated_games.outerjoin(_games, _games.c.game_id == _rated_games.c.game_id))
        .where(_rated_games.c.status == "pending")
        # In the order the games ended, as a live server rates them (the model is
        # order-dependent); games not ended (no ended_at) are voided or skipped anyway.
        .order_by(_games.c.ended_at, _rated_games.c.created_at, _rated_games.c.game_id)
    )
    return [_from_row(PendingGame, row) for row in conn.execute(query)]


def _status(conn: Connection, game_id: str) -> str | None:
    row = conn.execute(
        select(_rated_games.c.status).where(_rated_games.c.game_id == game_id)
    ).first()
    return None if row is None else str(row.status)


class RatingRecords:
    """The rating tables of one ``GameStore`` (``store.ratings``). The rules of what
    a game is worth are ``game.rating_book``'s; this only keeps them exactly once."""

    def __init__(self, runner: _Runner) -> None:
        self._runner = runner

    async def track(
        self, game_id: str, x: tuple[str, str], o: tuple[str, str], created_at: datetime
    ) -> bool:
        """Declare ``game_id`` rated, pending; ``x`` and ``o`` are (key, name). False if
        it already was (nothing changes)."""
        values = {
            "game_id": game_id,
            "x_key": x[0],
            "x_name": x[1],
            "o_key": o[0],
            "o_name": o[1],
            "status": "pending",
            "created_at": created_at,
        }
        try:
            return await self._runner.write(_track, values)
        except IntegrityError:
            return False

    async def status(self, game_id: str) -> str | None:
        """``pending``, ``rated`` or ``void``; None for a game never tracked."""
        return await self._runner.read(_status, game_id)

    async def settle(
        self, game_id: str, x: SideOutcome, o: SideOutcome, at: datetime | None = None
    ) -> tuple[Rating, Rating] | None:
        """Rate a pending game: both players' new ratings, or None if it was not
        pending (already settled, void, or never tracked: nothing changes). ``at``: when
        it was rated; by default the moment of the write, so that the history's order
        and its times agree."""
        for _attempt in range(_SETTLE_ATTEMPTS - 1):
            try:
                return await self._runner.write(_settle, game_id, x, o, at)
            except IntegrityError:
                # A player's first ratings row, inserted by another game settling at
                # the same moment (PostgreSQL): the whole transaction was rolled back,
                # and now the row is there to lock.
                continue
        return await self._runner.write(_settle, game_id, x, o, at)

    async def void(self, game_id: str, at: datetime) -> bool:
        """Mark a pending game void (it counts for nobody); False if it was not pending."""
        return await self._runner.write(_void, game_id, at)

    async def get(self, key: str) -> RatingRow | None:
        return await self._runner.read(_get, key)

    async def all(self) -> list[RatingRow]:
        """Every rated player, in no particular order."""
        return await self._runner.read(_all)

    async def history(self, key: str, limit: int) -> list[HistoryRow]:
        """A player's ratings after each game, newest first, at most ``limit``."""
        return await self._runner.read(_history_of, key, limit)

    async def pending(self) -> list[PendingGame]:
        """The tracked games not settled yet, in the order they ended (then declared)."""
        return await self._runner.read(_pending)

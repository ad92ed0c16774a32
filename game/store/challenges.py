"""Open challenges in the store: a person's game with an open seat, shared by its link
(``game.challenges``). One table next to ``games`` (created with them)::

    challenges    seq           integer, primary key      creation order
                  challenge_id  text, unique
                  creator       text                      the person's name as given
                  creator_key   text                      ``player_key(creator)``
                  time_control  text                      canonical (``TimeControl.text``)
                  side          x | o | random            the creator's
                  status        open | accepted | expired | cancelled
                  created_at    ISO 8601 text
                  expires_at    ISO 8601 text
                  accepted_by   text, nullable
                  game_id       text, nullable            the game, once accepted

A challenge is accepted at most once: ``accept`` changes the row from ``open`` to
``accepted`` in one conditional update, and only the caller whose update changed it
creates the game. Rows stay (a link keeps saying what became of its challenge).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Integer,
    String,
    Table,
    Text,
    and_,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Connection

from game.store.runners import _Runner
from game.store.schema import MAX_GAME_ID_LENGTH, _IsoDateTime, _metadata

__all__ = ["ChallengeRecords", "StoredChallenge"]

_challenges = Table(
    "challenges",
    _metadata,
    Column("seq", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("challenge_id", String(MAX_GAME_ID_LENGTH), nullable=False, unique=True),
    Column("creator", Text(), nullable=False),
    Column("creator_key", Text(), nullable=False),
    Column("time_control", String(64), nullable=False),
    Column("side", String(8), nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", _IsoDateTime(), nullable=False),
    Column("expires_at", _IsoDateTime(), nullable=False),
    Column("accepted_by", Text(), nullable=True),
    Column("game_id", String(MAX_GAME_ID_LENGTH), nullable=True),
)

_COLUMNS = [column for column in _challenges.c if column.name != "seq"]


@dataclass(frozen=True)
class StoredChallenge:
    """One row of ``challenges``."""

    challenge_id: str
    creator: str
    creator_key: str
    time_control: str
    side: str
    status: str
    created_at: datetime
    expires_at: datetime
    accepted_by: str | None
    game_id: str | None


def _row(row: Any) -> StoredChallenge:
    return StoredChallenge(**{column.name: getattr(row, column.name) for column in _COLUMNS})


def _create(conn: Connection, values: dict[str, Any]) -> None:
    conn.execute(insert(_challenges).values(**values))


def _get(conn: Connection, challenge_id: str) -> StoredChallenge | None:
    found = conn.execute(
        select(*_COLUMNS).where(_challenges.c.challenge_id == challenge_id)
    ).first()
    return None if found is None else _row(found)


def _take(conn: Connection, challenge_id: str, accepted_by: str, now: datetime) -> bool:
    """Mark an open, unexpired challenge accepted; whether this call did."""
    return bool(
        conn.execute(
            update(_challenges)
            .where(
                and_(
                    _challenges.c.challenge_id == challenge_id,
                    _challenges.c.status == "open",
                    _challenges.c.expires_at > now,
                )
            )
            .values(status="accepted", accepted_by=accepted_by)
        ).rowcount
    )


def _set_game(conn: Connection, challenge_id: str, game_id: str) -> None:
    conn.execute(
        update(_challenges)
        .where(_challenges.c.challenge_id == challenge_id)
        .values(game_id=game_id)
    )


def _reopen(conn: Connection, challenge_id: str) -> None:
    conn.execute(
        update(_challenges)
        .where(_challenges.c.challenge_id == challenge_id)
        .values(status="open", accepted_by=None, game_id=None)
    )


def _cancel(conn: Connection, challenge_id: str) -> bool:
    """Mark an open challenge cancelled; whether this call did."""
    return bool(
        conn.execute(
            update(_challenges)
            .where(and_(_challenges.c.challenge_id == challenge_id, _challenges.c.status == "open"))
            .values(status="cancelled")
        ).rowcount
    )


def _expire(conn: Connection, now: datetime) -> int:
    return conn.execute(
        update(_challenges)
        .where(and_(_challenges.c.status == "open", _challenges.c.expires_at <= now))
        .values(status="expired")
    ).rowcount


def _open_of(conn: Connection, creator_key: str, now: datetime) -> int:
    rows = conn.execute(
        select(_challenges.c.challenge_id).where(
            and_(
                _challenges.c.creator_key == creator_key,
                _challenges.c.status == "open",
                _challenges.c.expires_at > now,
            )
        )
    )
    return len(rows.all())


class ChallengeRecords:
    """The ``challenges`` table of one ``GameStore`` (``store.challenges``)."""

    def __init__(self, runner: _Runner) -> None:
        self._runner = runner

    async def create(self, challenge: StoredChallenge) -> None:
        values = {column.name: getattr(challenge, column.name) for column in _COLUMNS}
        await self._runner.write(_create, values)

    async def get(self, challenge_id: str) -> StoredChallenge | None:
        return await self._runner.read(_get, challenge_id)

    async def take(self, challenge_id: str, accepted_by: str, now: datetime) -> bool:
        """Accept the challenge if it is still open and unexpired at ``now``: True for
        the one caller that did (it then creates the game)."""
        return await self._runner.write(_take, challenge_id, accepted_by, now)

    async def set_game(self, challenge_id: str, game_id: str) -> None:
        await self._runner.write(_set_game, challenge_id, game_id)

    async def reopen(self, challenge_id: str) -> None:
        """Open a taken challenge again (its game could not be created)."""
        await self._runner.write(_reopen, challenge_id)

    async def cancel(self, challenge_id: str) -> bool:
        """Withdraw the challenge if it is still open: True for the one caller that did
        (an accept that took it first wins, and this answers False)."""
        return await self._runner.write(_cancel, challenge_id)

    async def expire(self, now: datetime) -> int:
        """Mark open challenges past ``expires_at`` expired; how many."""
        return await self._runner.write(_expire, now)

    async def open_count(self, creator_key: str, now: datetime) -> int:
        """How many open, unexpired challenges the person of ``creator_key`` has."""
        return await self._runner.read(_open_of, creator_key, now)

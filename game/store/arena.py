"""Players of the arena in the store: one namespace of names, and the registered bots.

Two tables next to ``games`` (created with them)::

    arena_players  key           text, primary key    the name case-folded (player_key)
                   name          text                 as first claimed
                   kind          'bot' | 'human'
                   token_hash    text, nullable       sha256 hex of the owner's secret
                                                      token (null: owned by the server)
                   created_at    ISO 8601 text
    bots           key           text, primary key, references arena_players
                   url           text                 the bot's URL (as for POST /game/new)
                   ladder        boolean              opted in to the ladder
                   description   text, nullable
                   status        'active' | 'unreachable' | 'retired'
                   check_error   text, nullable       why the last check failed
                   checked_at    ISO 8601 text, nullable
                   meta          JSON text, nullable  the capabilities' meta at the last check
                   registered_at ISO 8601 text
                   retired_at    ISO 8601 text, nullable
                   failures_in_row integer            ladder games failed in a row
                   backoff_until ISO 8601 text, nullable  not scheduled before this
                   backoff_reason text, nullable
                   last_game_at  ISO 8601 text, nullable  last ladder game ended

The primary key of ``arena_players`` is what makes a name one player's: a bot and a
person can never share a name, whatever the case. A token itself is never stored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import (
    Boolean,
    Column,
    ForeignKey,
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

from game.store.runners import _Runner
from game.store.schema import (
    MAX_PLAYER_FILTER,
    _columns_of,
    _from_nullable_json,
    _from_row,
    _IsoDateTime,
    _metadata,
)

__all__ = ["BOT_STATUSES", "ArenaPlayer", "ArenaRecords", "StoredBot"]

#: What a registered bot's ``status`` may be.
BOT_STATUSES: Final = ("active", "unreachable", "retired")

_players = Table(
    "arena_players",
    _metadata,
    Column("key", String(MAX_PLAYER_FILTER), primary_key=True),
    Column("name", Text(), nullable=False),
    Column("kind", String(8), nullable=False),
    Column("token_hash", String(64), nullable=True),
    Column("created_at", _IsoDateTime(), nullable=False),
)

_bots = Table(
    "bots",
    _metadata,
    Column(
        "key",
        String(MAX_PLAYER_FILTER),
        ForeignKey("arena_players.key", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("url", Text(), nullable=False),
    Column("ladder", Boolean(), nullable=False),
    Column("description", Text(), nullable=True),
    Column("status", String(16), nullable=False),
    Column("check_error", Text(), nullable=True),
    Column("checked_at", _IsoDateTime(), nullable=True),
    Column("meta", Text(), nullable=True),
    Column("registered_at", _IsoDateTime(), nullable=False),
    Column("retired_at", _IsoDateTime(), nullable=True),
    Column("failures_in_row", Integer(), nullable=False, default=0),
    Column("backoff_until", _IsoDateTime(), nullable=True),
    Column("backoff_reason", Text(), nullable=True),
    Column("last_game_at", _IsoDateTime(), nullable=True),
)


@dataclass(frozen=True)
class ArenaPlayer:
    """An ``arena_players`` row."""

    key: str
    name: str
    kind: str
    token_hash: str | None
    created_at: datetime


@dataclass(frozen=True)
class StoredBot:
    """A registered bot: its ``bots`` row with its player's name and token hash."""

    key: str
    name: str
    token_hash: str | None
    url: str
    ladder: bool
    description: str | None
    status: str
    check_error: str | None
    checked_at: datetime | None
    meta: dict[str, Any] | None
    registered_at: datetime
    retired_at: datetime | None
    failures_in_row: int
    backoff_until: datetime | None
    backoff_reason: str | None
    last_game_at: datetime | None


_BOT_COLUMNS = _columns_of(StoredBot, _bots, _players)

#: The columns of ``bots`` that ``update_bot`` may set.
_UPDATABLE: Final = frozenset(
    {
        "url",
        "ladder",
        "description",
        "status",
        "check_error",
        "checked_at",
        "meta",
        "retired_at",
        "failures_in_row",
        "backoff_until",
        "backoff_reason",
        "last_game_at",
    }
)


def _row_to_bot(row: Any) -> StoredBot:
    return _from_row(StoredBot, row, ladder=bool(row.ladder), meta=_from_nullable_json(row.meta))


def _bot_query() -> Any:
    return select(*_BOT_COLUMNS).select_from(_bots.join(_players, _players.c.key == _bots.c.key))


def _claim(conn: Connection, player: dict[str, Any], bot: dict[str, Any] | None) -> bool:
    taken = conn.execute(select(_players.c.key).where(_players.c.key == player["key"])).first()
    if taken is not None:
        return False
    conn.execute(insert(_players).values(**player))
    if bot is not None:
        conn.execute(insert(_bots).values(key=player["key"], **bot))
    return True


def _player(conn: Connection, key: str) -> ArenaPlayer | None:
    row = conn.execute(select(_players).where(_players.c.key == key)).first()
    return None if row is None else _from_row(ArenaPlayer, row)


def _players_of(conn: Connection, keys: list[str]) -> dict[str, ArenaPlayer]:
    if not keys:
        return {}
    rows = conn.execute(select(_players).where(_players.c.key.in_(keys)))
    return {row.key: _from_row(ArenaPlayer, row) for row in rows}


def _bot(conn: Connection, key: str) -> StoredBot | None:
    row = conn.execute(_bot_query().where(_bots.c.key == key)).first()
    return None if row is None else _row_to_bot(row)


def _all_bots(conn: Connection) -> list[StoredBot]:
    return [_row_to_bot(row) for row in conn.execute(_bot_query().order_by(_bots.c.key))]


def _update_bot(conn: Connection, key: str, values: dict[str, Any]) -> bool:
    return bool(conn.execute(update(_bots).where(_bots.c.key == key).values(**values)).rowcount)


def _played_properly(conn: Connection, keys: list[str], at: datetime) -> int:
    values = {
        "last_game_at": at,
        "failures_in_row": 0,
        "backoff_until": None,
        "backoff_reason": None,
    }
    return int(conn.execute(update(_bots).where(_bots.c.key.in_(keys)).values(**values)).rowcount)


def _set_token(conn: Connection, key: str, token_hash: str | None) -> None:
    conn.execute(update(_players).where(_players.c.key == key).values(token_hash=token_hash))


class ArenaRecords:
    """The arena's player tables of one ``GameStore`` (``store.arena``).

    Keys are ``game.store.schema.player_key`` of the names; the callers make them.
    """

    def __init__(self, runner: _Runner) -> None:
        self._runner = runner

    async def claim(
        self,
        key: str,
        name: str,
        kind: str,
        token_hash: str | None,
        created_at: datetime,
        *,
        bot: dict[str, Any] | None = None,
    ) -> bool:
        """Make ``name`` (``key``) a player of ``kind``; with ``bot`` (the ``bots``
        columns but ``key``), register the bot in the same transaction. False if the
        name is already someone's (nothing is written)."""
        player = {
            "key": key,
            "name": name,
            "kind": kind,
            "token_hash": token_hash,
            "created_at": created_at,
        }
        if bot is not None and bot.get("meta") is not None:
            bot = {**bot, "meta": json.dumps(bot["meta"], separators=(",", ":"))}
        try:
            return await self._runner.write(_claim, player, bot)
        except IntegrityError:  # claimed at the same moment by another server
            return False

    async def player(self, key: str) -> ArenaPlayer | None:
        return await self._runner.read(_player, key)

    async def players(self, keys: list[str]) -> dict[str, ArenaPlayer]:
        """The players among ``keys``, by key."""
        return await self._runner.read(_players_of, sorted(set(keys)))

    async def bot(self, key: str) -> StoredBot | None:
        return await self._runner.read(_bot, key)

    async def bots(self) -> list[StoredBot]:
        """Every registered bot, retired ones too, by key."""
        return await self._runner.read(_all_bots)

    async def update_bot(self, key: str, **values: Any) -> bool:
        """Set some columns of a bot's row (see ``_UPDATABLE``); False if no such bot."""
        unknown = set(values) - _UPDATABLE
        if unknown:
            raise ValueError(f"not columns a bot's update may set: {sorted(unknown)}")
        if "meta" in values and values["meta"] is not None:
            values["meta"] = json.dumps(values["meta"], separators=(",", ":"))
        return await self._runner.write(_update_bot, key, values)

    async def played_properly(self, keys: list[str], at: datetime) -> int:
        """Bots that played a ladder game properly at ``at``: their last game, and no
        failures in a row nor backoff any more; in one transaction. How many rows there
        were."""
        return await self._runner.write(_played_properly, keys, at)

    async def set_token(self, key: str, token_hash: str | None) -> None:
        """Replace a player's token hash (None: owned by the server)."""
        await self._runner.write(_set_token, key, token_hash)

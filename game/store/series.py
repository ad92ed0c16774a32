"""Series in the store: which tournaments are series, in creation order.

A series is played as a tournament (``game.store.tournaments`` holds its settings,
status and games); one more table lists the series among them, so ``GET /series``
pages through series only::

    series  seq        integer, primary key      creation order
            series_id  text, unique, references tournaments.tournament_id

``create`` writes the tournament's row (and its control token's hash) and the series'
row in one transaction: a series is never half created. ``create_all`` adds the table
to a database made before it, and nothing else changes there.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Column, ForeignKey, Integer, String, Table, insert, select
from sqlalchemy.engine import Connection

from game.store.runners import _Runner
from game.store.schema import MAX_GAME_ID_LENGTH, _metadata
from game.store.tournaments import (
    _COLUMNS,
    StoredTournament,
    _create,
    _new_tournament,
    _row_to_tournament,
    _tournaments,
)

__all__ = ["SeriesRecords"]

_series = Table(
    "series",
    _metadata,
    Column("seq", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column(
        "series_id",
        String(MAX_GAME_ID_LENGTH),
        ForeignKey("tournaments.tournament_id", ondelete="CASCADE"),
        nullable=False,
        unique=True,
    ),
)


def _create_series(conn: Connection, values: dict[str, Any], control_hash: str | None) -> None:
    _create(conn, values, control_hash)
    conn.execute(insert(_series).values(series_id=values["tournament_id"]))


def _recent(conn: Connection, limit: int) -> list[StoredTournament]:
    query = (
        select(*_COLUMNS)
        .select_from(
            _series.join(_tournaments, _tournaments.c.tournament_id == _series.c.series_id)
        )
        .order_by(_series.c.seq.desc())
        .limit(limit)
    )
    return [_row_to_tournament(row) for row in conn.execute(query)]


def _interrupted(conn: Connection) -> list[str]:
    query = (
        select(_series.c.series_id)
        .select_from(
            _series.join(_tournaments, _tournaments.c.tournament_id == _series.c.series_id)
        )
        .where(_tournaments.c.status == "interrupted")
        .order_by(_series.c.seq)
    )
    return [row.series_id for row in conn.execute(query)]


def _is_series(conn: Connection, series_id: str) -> bool:
    query = select(_series.c.seq).where(_series.c.series_id == series_id)
    return conn.execute(query).first() is not None


class SeriesRecords:
    """The series table of one ``GameStore`` (``store.series``)."""

    def __init__(self, runner: _Runner) -> None:
        self._runner = runner

    async def create(
        self,
        series_id: str,
        *,
        name: str | None,
        request_json: str,
        games_total: int,
        created_at: datetime,
        control_hash: str | None = None,
    ) -> None:
        """Store a new series: its tournament (status ``running``, with its creator's
        ``control_hash`` as ``TournamentRecords.create`` takes it) and its row here."""
        await self._runner.write(
            _create_series,
            _new_tournament(series_id, name, request_json, games_total, created_at),
            control_hash,
        )

    async def recent(self, limit: int = 100) -> list[StoredTournament]:
        """The newest ``limit`` series (their tournaments' rows), newest first."""
        return await self._runner.read(_recent, limit)

    async def interrupted(self) -> list[str]:
        """The ids of the series whose status is ``interrupted``, oldest first."""
        return await self._runner.read(_interrupted)

    async def is_series(self, series_id: str) -> bool:
        return await self._runner.read(_is_series, series_id)

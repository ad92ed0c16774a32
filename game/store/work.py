"""The cluster's work queue in the store: games to play, leased by the workers.

A tournament's coordinator (``game.tournament_runner`` on a cluster) puts each game
of its schedule here as a row; any worker of the cluster leases it, plays it and
writes its result back; the coordinator counts it. One table::

    work_items  item_id      integer, primary key     queue order
                source       text                     "tournament:<id>"
                idx          integer                  game number in the source
                             (source, idx) unique: a game is queued once
                request      JSON text                the game's NewGameRequest
                rated        boolean                  declare it to the ratings
                status       queued | leased | done | failed | cancelled
                             (``enqueue`` answers ``counted``, never stored, for a
                             tournament game a coordinator counted already)
                worker       text, nullable           the lease holder
                lease_until  float, nullable          epoch seconds
                game_id      text, nullable           the game being played for it
                attempts     integer                  leases taken so far
                result       JSON text, nullable      the GameResult, once done
                error        text, nullable           why it failed

Leasing is ``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL: two workers leasing
at once never get the same row and never wait for each other. An item whose lease
expired (its worker died, or lost the database for longer than a lease) is leased
again like a queued one (or forgotten, if it was cancelled meanwhile); the game the
old holder was playing for it, if still running, is recorded aborted in the same
transaction, with the cause. The holder itself never takes over the items it still
plays (``playing``: stalled past a lease, it renews them next), but does take back one
it gave up unsettled (it could not write its end or hand it back before the store
came back). Every later write of the old holder
is guarded by ``worker`` and ``status``, so it changes nothing: a game counts once.

The times are the workers' clocks (epoch seconds): hosts of a cluster keep them in
step (NTP), a skew of a second against a lease of ten is harmless. SQLite takes the
same statements (without ``SKIP LOCKED``, which it does not need: one writer).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    and_,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection

from game.store.queries import _abort_games
from game.store.runners import _Runner
from game.store.schema import (
    MAX_GAME_ID_LENGTH,
    _columns_of,
    _from_nullable_json,
    _from_row,
    _metadata,
    _to_json,
    lease_lapsed_result,
    unsettled_result,
)
from game.store.tournaments import _counted, _finish_game, _start_game

__all__ = ["COUNTED", "LADDER_SOURCE", "UNSETTLED", "WorkItem", "WorkRecords", "tournament_source"]


_work_items = Table(
    "work_items",
    _metadata,
    Column("item_id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("source", String(MAX_GAME_ID_LENGTH + 16), nullable=False),
    Column("idx", Integer(), nullable=False),
    Column("request", Text(), nullable=False),
    Column("rated", Boolean(), nullable=False, default=False),
    Column("status", String(16), nullable=False),
    Column("worker", String(128), nullable=True),
    Column("lease_until", Float(), nullable=True),
    Column("game_id", String(MAX_GAME_ID_LENGTH), nullable=True),
    Column("attempts", Integer(), nullable=False, default=0),
    Column("result", Text(), nullable=True),
    Column("error", Text(), nullable=True),
    UniqueConstraint("source", "idx", name="uq_work_items_source_idx"),
    Index("ix_work_items_status", "status", "item_id"),
)

_TOURNAMENT: Final = "tournament:"

#: How the ``error`` of an item starts that a worker failed because it could not be
#: settled, the store refusing the same write lease after lease (the tournament's
#: reason quotes it: not "could not start").
UNSETTLED: Final = "could not be settled"

#: The status ``enqueue`` answers for a tournament game counted already (never stored).
COUNTED: Final = "counted"


#: Each ladder game is a source of its own: ``LADDER_SOURCE`` and a random id.
LADDER_SOURCE: Final = "ladder:"


def tournament_source(tournament_id: str) -> str:
    """The ``source`` of a tournament's games.

    >>> tournament_source("4f2a")
    'tournament:4f2a'
    """
    return _TOURNAMENT + tournament_id


@dataclass(frozen=True)
class WorkItem:
    """A ``work_items`` row; ``result`` is the GameResult's JSON data once done."""

    item_id: int
    source: str
    idx: int
    request: str
    rated: bool
    status: str
    worker: str | None
    game_id: str | None
    attempts: int
    result: dict[str, Any] | None
    error: str | None

    @property
    def tournament_id(self) -> str | None:
        """The tournament the game belongs to, if a tournament's."""
        if self.source.startswith(_TOURNAMENT):
            return self.source[len(_TOURNAMENT) :]
        return None


_ITEM_COLUMNS = _columns_of(WorkItem, _work_items)


def _item(row: Any) -> WorkItem:
    return _from_row(WorkItem, row, rated=bool(row.rated), result=_from_nullable_json(row.result))


def _held(item_id: int, worker: str) -> Any:
    """Item ``item_id`` while ``worker`` holds its lease."""
    return and_(
        _work_items.c.item_id == item_id,
        _work_items.c.worker == worker,
        _work_items.c.status == "leased",
    )


def _enqueue(conn: Connection, source: str, idx: int, request: str, rated: bool) -> WorkItem:
    # The coordinator that queued it before (and died) may have: the row stands.
    existing = conn.execute(
        select(*_ITEM_COLUMNS).where(_work_items.c.source == source, _work_items.c.idx == idx)
    ).first()
    if existing is not None:
        return _item(existing)
    tournament_id = source[len(_TOURNAMENT) :] if source.startswith(_TOURNAMENT) else None
    if tournament_id is not None and _counted(conn, tournament_id, idx) is not None:
        # Counted by the coordinator before this one (which had not yet learnt it lost
        # its lease), its item removed with the count: not played again.
        return WorkItem(0, source, idx, request, rated, COUNTED, None, None, 0, None, None)
    conn.execute(
        insert(_work_items).values(
            source=source, idx=idx, request=request, rated=rated, status="queued", attempts=0
        )
    )
    row = conn.execute(
        select(*_ITEM_COLUMNS).where(_work_items.c.source == source, _work_items.c.idx == idx)
    ).one()
    return _item(row)


def _lease(
    conn: Connection,
    worker: str,
    limit: int,
    now: float,
    until: float,
    ended_at: datetime,
    playing: list[int],
) -> list[WorkItem]:
    expired = and_(
        _work_items.c.status.in_(("leased", "cancelled")), _work_items.c.lease_until < now
    )
    if playing:
        # Not the games it plays: a worker whose lease ran out while it stalled is still
        # playing them (and renews them next). One it no longer plays (it could not
        # write the end: the store was out of reach) it takes back like anyone else.
        expired = and_(expired, _work_items.c.item_id.not_in(playing))
    free = or_(_work_items.c.status == "queued", expired)
    rows = conn.execute(
        select(*_ITEM_COLUMNS)
        .where(free)
        .order_by(_work_items.c.item_id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    ).all()
    for row in rows:
        if row.game_id is not None and row.worker is not None:
            # Its worker died or lost the store while it played (or, this one, gave it
            # up unsettled): that game is over, with the cause.
            cause = lease_lapsed_result if row.worker != worker else unsettled_result
            lost = _to_json(cause(row.worker))
            _abort_games(conn, [row.game_id], lost, ended_at)
    # A cancelled game whose worker died is not played again: only forgotten.
    gone = [row.item_id for row in rows if row.status == "cancelled"]
    if gone:
        conn.execute(delete(_work_items).where(_work_items.c.item_id.in_(gone)))
    taken = [row for row in rows if row.status != "cancelled"]
    if taken:
        conn.execute(
            update(_work_items)
            .where(_work_items.c.item_id.in_([row.item_id for row in taken]))
            .values(
                status="leased",
                worker=worker,
                lease_until=until,
                game_id=None,
                attempts=_work_items.c.attempts + 1,
            )
        )
    return [_item(row) for row in taken]


def _started(
    conn: Connection, item_id: int, worker: str, game_id: str, tournament_id: str | None, idx: int
) -> bool:
    held = conn.execute(
        update(_work_items).where(_held(item_id, worker)).values(game_id=game_id)
    ).rowcount
    if held and tournament_id is not None:
        _start_game(conn, tournament_id, idx, game_id)
    return bool(held)


def _renew(conn: Connection, worker: str, item_ids: list[int], until: float) -> list[int]:
    conn.execute(
        update(_work_items)
        .where(
            _work_items.c.worker == worker,
            _work_items.c.status == "leased",
            _work_items.c.item_id.in_(item_ids),
        )
        .values(lease_until=until)
    )
    still = {
        row.item_id
        for row in conn.execute(
            select(_work_items.c.item_id).where(
                _work_items.c.item_id.in_(item_ids),
                _work_items.c.worker == worker,
                _work_items.c.status == "leased",
            )
        )
    }
    return [item_id for item_id in item_ids if item_id not in still]


def _settle(
    conn: Connection, item_id: int, worker: str, status: str, result: str | None, error: str | None
) -> bool:
    values: dict[str, Any] = {"status": status, "result": result, "error": error}
    if status == "queued":  # handed back: whoever leases it next plays it afresh
        values.update(worker=None, lease_until=None, game_id=None)
    return bool(
        conn.execute(update(_work_items).where(_held(item_id, worker)).values(**values)).rowcount
    )


def _drop_cancelled(conn: Connection, item_id: int) -> None:
    conn.execute(
        delete(_work_items).where(
            _work_items.c.item_id == item_id, _work_items.c.status == "cancelled"
        )
    )


def _items(conn: Connection, item_ids: list[int]) -> list[WorkItem]:
    return [
        _item(row)
        for row in conn.execute(select(*_ITEM_COLUMNS).where(_work_items.c.item_id.in_(item_ids)))
    ]


def _count(
    conn: Connection, item_id: int, tournament_id: str, idx: int, game_id: str, outcome: str
) -> bool:
    counted = _finish_game(conn, tournament_id, idx, outcome, game_id=game_id)
    conn.execute(delete(_work_items).where(_work_items.c.item_id == item_id))
    return counted


def _forget(conn: Connection, item_id: int) -> None:
    conn.execute(delete(_work_items).where(_work_items.c.item_id == item_id))


def _sourced(conn: Connection, prefix: str) -> list[WorkItem]:
    query = (
        select(*_ITEM_COLUMNS)
        .where(_work_items.c.source.startswith(prefix, autoescape=True))
        .order_by(_work_items.c.item_id)
    )
    return [_item(row) for row in conn.execute(query)]


def _cancel(conn: Connection, source: str) -> int:
    base = _work_items.c.source == source
    conn.execute(delete(_work_items).where(base, _work_items.c.status.in_(("queued", "failed"))))
    return int(
        conn.execute(
            update(_work_items)
            .where(base, _work_items.c.status == "leased")
            .values(status="cancelled")
        ).rowcount
    )


def _clear(conn: Connection) -> int:
    return int(conn.execute(delete(_work_items).where(_work_items.c.status != "done")).rowcount)


def _counts(conn: Connection) -> dict[str, int]:
    rows = conn.execute(
        select(_work_items.c.status, func.count()).group_by(_work_items.c.status)
    ).all()
    return {str(row[0]): int(row[1]) for row in rows}


class WorkRecords:
    """The work queue of one ``GameStore`` (``store.work``). See the module docstring."""

    def __init__(self, runner: _Runner) -> None:
        self._runner = runner

    async def enqueue(self, source: str, idx: int, request: str, *, rated: bool) -> WorkItem:
        """Queue game ``idx`` of ``source`` (its ``NewGameRequest`` as JSON); the row
        that stands for it, new or queued before (then as it is now: maybe done), or
        for a tournament game counted already, an item of status ``COUNTED`` (not
        stored: the count removed its row)."""
        return await self._runner.write(_enqueue, source, idx, request, rated)

    async def lease(
        self,
        worker: str,
        limit: int,
        *,
        now: float,
        until: float,
        ended_at: datetime,
        playing: Collection[int] = (),
    ) -> list[WorkItem]:
        """Lease up to ``limit`` queued (or abandoned) items for ``worker`` until epoch
        ``until``; the items as they were (``game_id``/``worker``: the abandoned game,
        now recorded aborted at ``ended_at``). ``playing``: the items ``worker`` plays
        now, never taken over even if their leases expired (it renews them next); an
        expired one of its own that it no longer plays is taken back."""
        return await self._runner.write(
            _lease, worker, limit, now, until, ended_at, sorted(playing)
        )

    async def started(self, item: WorkItem, worker: str, game_id: str) -> bool:
        """Note the game created for ``item`` (and start its tournament game row);
        False if ``worker`` no longer holds the lease."""
        return await self._runner.write(
            _started, item.item_id, worker, game_id, item.tournament_id, item.idx
        )

    async def renew(self, worker: str, item_ids: list[int], until: float) -> list[int]:
        """Extend ``worker``'s leases of ``item_ids``; those it no longer holds (taken
        after its lease expired, or cancelled by the coordinator)."""
        if not item_ids:
            return []
        return await self._runner.write(_renew, worker, item_ids, until)

    async def complete(self, item_id: int, worker: str, result: str) -> bool:
        """The game ended with ``result`` (GameResult JSON); False if the lease was lost."""
        return await self._runner.write(_settle, item_id, worker, "done", result, None)

    async def hand_back(self, item_id: int, worker: str) -> bool:
        """Put a leased item back in the queue (its game was aborted here: a worker
        shutting down); another worker plays it."""
        return await self._runner.write(_settle, item_id, worker, "queued", None, None)

    async def fail(self, item_id: int, worker: str, error: str) -> bool:
        """The game could not be created (``error``, one line); its coordinator decides."""
        return await self._runner.write(_settle, item_id, worker, "failed", None, error)

    async def drop_cancelled(self, item_id: int) -> None:
        """Forget an item its coordinator cancelled, once its game is aborted."""
        await self._runner.write(_drop_cancelled, item_id)

    async def items(self, item_ids: list[int]) -> list[WorkItem]:
        """The items among ``item_ids`` that still exist, as they are now."""
        if not item_ids:
            return []
        return await self._runner.read(_items, item_ids)

    async def count(
        self, item: WorkItem, tournament_id: str, game_id: str, outcome: dict[str, Any]
    ) -> bool:
        """Count a done item's ``outcome`` in its tournament and forget the item, in one
        transaction; False if that game was counted already."""
        text = json.dumps(outcome, separators=(",", ":"))
        return await self._runner.write(
            _count, item.item_id, tournament_id, item.idx, game_id, text
        )

    async def forget(self, item_id: int) -> None:
        """Remove an item whose outcome its coordinator has taken (not a tournament's:
        ``count`` does that in the same transaction as the count)."""
        await self._runner.write(_forget, item_id)

    async def sourced(self, prefix: str) -> list[WorkItem]:
        """Every item whose source starts with ``prefix`` (``"ladder:"``), queue order:
        what a coordinator taking over from a dead one finds in flight."""
        return await self._runner.read(_sourced, prefix)

    async def cancel(self, source: str) -> int:
        """Drop ``source``'s queued items and cancel its leased ones (their workers abort
        the games on their next renewal); the number cancelled."""
        return await self._runner.write(_cancel, source)

    async def clear(self) -> int:
        """At a cluster's cold start: forget every item not done (no worker holds one;
        results already in stay, to be counted when their tournament resumes)."""
        return await self._runner.write(_clear)

    async def counts(self) -> dict[str, int]:
        """How many items are in each status."""
        return await self._runner.read(_counts)

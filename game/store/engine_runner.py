"""PostgreSQL's runner: the store's transaction functions through SQLAlchemy's asyncio
engine (asyncpg), with the moves of different games committed together.

Group commit across games: each game's recorder commits at most once per interval
(``--commit-interval``), but with many games at once those were as many transactions,
each a commit that PostgreSQL makes durable on its own (the database's first limit on
a cluster: README, "Scaling"). Here one task writes moves: whatever games' moves wait
when it starts a transaction go in it, and those that come meanwhile go in the next.
A write that is not the usual case (``queries._add_usual_moves``: the game is not
running, the index is not the next one, moves sent again) changed nothing in the group
and goes on its own afterwards, through ``_add_moves``, which raises the store's error
for it; a group whose transaction fails sends each of its writes on its own, each to
raise its own error. A cancelled caller waits for its write all the same
(``_to_completion``), as for every write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from game.store.queries import _add_moves, _add_usual_moves, _create_game, _finish_with_moves
from game.store.runners import _to_completion
from game.store.schema import RecordStatus

__all__ = ["_AsyncEngineRunner"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


@dataclass(eq=False)  # each is itself: ``in`` a group means this very write
class _WaitingMoves:
    """One game's next moves, waiting for the moves' writer task."""

    game_id: str
    first_index: int
    rows: list[dict[str, Any]]
    done: asyncio.Future[None]


def _write_usual_moves(conn: Connection, group: list[_WaitingMoves]) -> list[_WaitingMoves]:
    """The usual cases of ``group`` in this transaction; those left to go on their own."""
    return [
        write
        for write in group
        if not _add_usual_moves(conn, write.game_id, write.first_index, write.rows)
    ]


class _AsyncEngineRunner:
    """PostgreSQL (asyncpg): the same functions, run through the asyncio engine."""

    # run_sync runs the function in a greenlet on the event loop's thread.
    reads_on_loop = True

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._writes: set[asyncio.Task[Any]] = set()  # under way, for close()
        self._moves_waiting: list[_WaitingMoves] = []
        self._moves_writer: asyncio.Task[None] | None = None

    async def write(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        write = asyncio.ensure_future(self.read(fn, *args, **kwargs))
        self._track(write)
        return await _to_completion(write)

    async def write_new_game(
        self,
        game: dict[str, Any],
        moves: list[dict[str, Any]],
        names: tuple[str | None, str | None],
        bot_urls: tuple[str | None, str | None],
    ) -> None:
        await self.write(_create_game, game, moves, names, bot_urls)

    async def write_moves(self, game_id: str, first_index: int, rows: list[dict[str, Any]]) -> None:
        loop = asyncio.get_running_loop()
        write = _WaitingMoves(game_id, first_index, rows, loop.create_future())
        self._moves_waiting.append(write)
        if self._moves_writer is None:
            self._moves_writer = loop.create_task(
                self._write_waiting_moves(), name="htttx: store moves"
            )
            self._track(self._moves_writer)
        await _to_completion(write.done)

    async def write_result(
        self,
        game_id: str,
        status: RecordStatus,
        result: str,
        ended_at: datetime,
        first_index: int = 0,
        rows: Sequence[dict[str, Any]] = (),
    ) -> None:
        await self.write(
            _finish_with_moves, game_id, status, result, ended_at, first_index, list(rows)
        )

    async def read(
        self, fn: Callable[Concatenate[Connection, _P], _T], /, *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        async with self._engine.begin() as conn:
            return await conn.run_sync(fn, *args, **kwargs)

    async def close(self) -> None:
        while self._writes:
            await asyncio.wait(list(self._writes))
        await self._engine.dispose()

    def _track(self, write: asyncio.Task[Any]) -> None:
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)

    async def _write_waiting_moves(self) -> None:
        """The moves' writer: a group per transaction while moves wait (see the module
        docstring); every write handed to it is settled, whatever happens."""
        group: list[_WaitingMoves] = []
        try:
            while self._moves_waiting:
                group, self._moves_waiting = self._moves_waiting, []
                alone = group
                if len(group) > 1:
                    try:
                        alone = await self.read(_write_usual_moves, group)
                    except Exception:
                        alone = group  # rolled back: each on its own, with its own error
                    for write in group:
                        if write not in alone:
                            write.done.set_result(None)
                for write in alone:
                    try:
                        await self.read(_add_moves, write.game_id, write.first_index, write.rows)
                    except Exception as exc:  # the caller's to see, as from any write
                        write.done.set_exception(exc)
                    else:
                        write.done.set_result(None)
                group = []
        finally:
            # Only if the writer itself was cancelled (the loop shutting down) is a write
            # left unsettled here: its caller sees the cancel.
            self._moves_writer = None
            left, self._moves_waiting = [*group, *self._moves_waiting], []
            for write in left:
                write.done.cancel()

"""Dead-worker recovery: the games of a worker of a cluster that died (``kill -9``, a
lost host) are recorded aborted, with the cause, by a worker still alive.

Each worker process is a *run* (``WorkerInfo.run``, random per process) and keeps in
Redis the set of the live games it plays (``games-of:<run>``, no lease) and its entry
in the ``runs`` hash (``game.cluster``). A run is over when its worker's lease is gone
(or holds for a newer run of the same worker id); a worker that closes cleanly deletes
both itself. Every heartbeat each worker's ``Sweeper`` looks for runs that are over and
have not cleaned up; for each one, the worker that wins the lock ``sweep:<run>``
(``SET NX PX``: one sweeper per run):

1. records the run's games that are still running aborted
   (``GameStore.abort_games``), the result's detail saying why: ``the worker w3
   running it stopped (its lease expired)``;
2. settles their pending ratings (``RatingBook.settle_pending``): an aborted game is
   void; a game that finished before its worker died and was not rated yet is rated;
3. sends the game's ``end`` (aborted, from the record) to its spectators on every
   worker (one publish on its channel: their relays end), if it has any;
4. deletes the run's set and its entry.

A worker taken for dead while it still runs (its lease lapsed: a pause longer than
the lease, Redis out of reach) finds at its next heartbeat that its run was swept
(``swept_here``): it ends the games recorded aborted with that same result and keeps
the others, whose moves the store still takes.

Every step may be done twice (another worker may sweep again once the lock expires if
this one dies halfway): aborting and settling change nothing the second time.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from redis.exceptions import RedisError

from game.cluster import (
    Message,
    WorkerInfo,
    dead_runs,
    games_of_key,
    runs_key,
    spectate_channel,
    sweep_key,
    worker_key,
)
from game.cluster_redis import raise_if_cancelled
from game.reads import snapshot_of
from game.store import GameStore, RecordStatus
from game.store.schema import worker_lost_result
from models import dump_packet

if TYPE_CHECKING:
    from game.cluster_redis import ClusterNode
    from game.rating_book import RatingBook

__all__ = ["SWEEP_LOCK_LEASES", "Sweeper"]

log = logging.getLogger("game.cluster")

#: How long a sweeper holds a dead run's lock, in leases: should it die halfway,
#: another worker sweeps the run again after that.
SWEEP_LOCK_LEASES: Final = 3


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Sweeper:
    """Records the games of the cluster's dead workers aborted (the module docstring)."""

    def __init__(
        self, node: ClusterNode, store: GameStore, ratings: RatingBook | None = None
    ) -> None:
        self.node = node
        self.store = store
        self.ratings = ratings
        self.swept = 0  # games this worker recorded aborted (for tests and logs)

    async def run(self) -> None:
        """Sweep every heartbeat, until cancelled or the node stops; a failure is logged
        and retried."""
        while not self.node.stopping.is_set():
            await asyncio.sleep(self.node.leases.heartbeat)
            raise_if_cancelled()
            try:
                await self.sweep()
            except (RedisError, OSError) as error:
                raise_if_cancelled(error)
                log.warning("sweeping the cluster's dead workers failed: %s", error)
            except Exception as error:  # the store's (or a bug): the next heartbeat tries
                raise_if_cancelled(error)
                log.exception("sweeping the cluster's dead workers failed")

    async def sweep(self) -> int:
        """One look for runs that are over; the number of games recorded aborted."""
        redis = self.node.redis
        runs = {_text(k): _text(v) for k, v in (await redis.hgetall(runs_key())).items()}
        if not runs.keys() - {self.node.run}:
            return 0
        ids = sorted(set(runs.values()))
        values = await redis.mget([worker_key(worker_id) for worker_id in ids])
        workers = {
            worker_id: None if value is None else WorkerInfo.from_json(value)
            for worker_id, value in zip(ids, values, strict=True)
        }
        lock_ms = SWEEP_LOCK_LEASES * self.node.leases.lease_ms
        aborted = 0
        for run, worker_id in dead_runs(runs, workers, self.node.run):
            if await redis.set(sweep_key(run), self.node.worker_id, nx=True, px=lock_ms):
                aborted += await self._sweep_run(run, worker_id)
        return aborted

    async def _sweep_run(self, run: str, worker_id: str) -> int:
        redis = self.node.redis
        game_ids = sorted(_text(m) for m in await redis.smembers(games_of_key(run)))
        aborted = await self.store.abort_games(
            game_ids, worker_lost_result(worker_id), ended_at=datetime.now(UTC)
        )
        if game_ids and self.ratings is not None:
            await self.ratings.settle_pending(game_ids)
        await self._end_spectators(aborted)
        pipe = redis.pipeline(transaction=False)
        pipe.delete(games_of_key(run))
        pipe.hdel(runs_key(), run)
        await pipe.execute()
        self.swept += len(aborted)
        if game_ids:
            log.warning(
                "worker %s (run %s) is gone: recorded %d of its %d live game(s) aborted",
                worker_id,
                run,
                len(aborted),
                len(game_ids),
            )
        return len(aborted)

    async def swept_here(self) -> None:
        """This worker's own run was swept: its lease lapsed while it still ran (a pause
        longer than the lease, Redis out of reach), and another worker took it for dead.
        The live games that worker recorded aborted end here too, with the same result
        (the players and spectators get that ``end``; the store keeps the record as it
        is); the others go back into this run's set."""
        try:
            await self._rejoin()
        except Exception:  # Redis or the store failed: logged, the games play on here
            log.exception("this worker's run was swept; rejoining the cluster failed")

    async def _rejoin(self) -> None:
        manager = self.node.manager
        assert manager is not None
        # Not only the manager's live games: one whose record was being written as the
        # run was swept is this run's as well once it is.
        live = self.node.registered_games()
        ended = []
        for game_id in live:
            if await self.store.game_status(game_id) is RecordStatus.ABORTED:
                ended.append(game_id)
        detail = worker_lost_result(self.node.worker_id).detail
        assert detail is not None
        for game_id in ended:
            manager.abort_game(game_id, detail)
        others = [game_id for game_id in live if game_id not in ended]
        if others:
            await self.node.redis.sadd(games_of_key(self.node.run), *others)
        log.warning(
            "this worker's lease lapsed and another worker took it for dead: ended %d "
            "game(s) it recorded aborted, kept %d",
            len(ended),
            len(others),
        )

    async def _end_spectators(self, game_ids: list[str]) -> None:
        """The ``end`` of each game that has spectators on some worker, on its channel."""
        if not game_ids:
            return
        counts = await self.node.redis.pubsub_numsub(*map(spectate_channel, game_ids))
        watched = [game_id for game_id, (_, n) in zip(game_ids, counts, strict=True) if n]
        for game_id in watched:
            record = await self.store.get_game(game_id)
            if record is None:
                continue
            _setup, end = snapshot_of(record)
            if end is not None:
                text = dump_packet(end).decode()
                self.node.publish(game_id, Message("e", len(record.moves), text))

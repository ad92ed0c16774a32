"""The ladder's pause shared by a cluster's workers (``ClusterLadderSwitch``, the
``game.ladder_switch.LadderSwitch`` of a worker). Imported only with ``--redis``.

One worker schedules the cluster's ladder (the one holding its lease:
``game.ladder_games``), but a pause or a resume may reach any worker (whichever the
load balancer picked). So the pause is kept where the scheduler reads it: the key
``htttx:ladder-paused`` (``game.cluster``) is there while the ladder is paused, holding
the id of the worker it was paused through. ``POST /ladder/pause`` through any worker
sets it and ``/resume`` deletes it; the scheduler reads it before each pairing
(``game.ladder``), so it stops pairing at once through its own worker and at its next
pairing through another (a game being started as the pause arrives may still start),
and starts again within ``game.ladder.REFRESH_S`` of a resume through another. A worker
that takes the ladder over reads it before it pairs anyone: the ladder stays paused.

The key has no lease, so a worker's restart keeps the pause; a cluster started afresh
(its first worker finds no other: ``reset``) runs its ladder again, as a restarted
single server does.

Redis out of reach (the cluster's rule: never crash, refuse what cannot be decided):
``pause`` and ``resume`` raise ``LadderSwitchUnknown`` and change nothing (the routes
answer 503), and ``read`` raises it too, after which the scheduler pairs nobody until
Redis answers; ``paused`` keeps what was last known, for ``GET /ladder``.
"""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from game.cluster import ladder_paused_key
from game.cluster_redis import raise_if_cancelled
from game.ladder_switch import LadderSwitchUnknown

__all__ = ["ClusterLadderSwitch"]


class ClusterLadderSwitch:
    """The cluster's ladder pause, in Redis (see the module docstring). ``worker_id``:
    this worker's, written as who paused."""

    def __init__(self, client: aioredis.Redis, worker_id: str) -> None:
        self.redis = client
        self.worker_id = worker_id
        #: As last read or set here.
        self.paused = False
        # Counts the pauses and resumes made here: a read under way as one is made
        # may answer what was there before it, which must not undo it here.
        self._changes = 0

    async def read(self) -> bool:
        changes = self._changes
        try:
            there = await self.redis.exists(ladder_paused_key())
        except (RedisError, OSError) as error:
            raise_if_cancelled(error)
            raise LadderSwitchUnknown(f"the cluster's Redis: {error}") from error
        if changes == self._changes:
            self.paused = bool(there)
        return self.paused

    async def pause(self) -> None:
        await self._set(paused=True)

    async def resume(self) -> None:
        await self._set(paused=False)

    async def reset(self) -> None:
        """The cluster starts afresh: a pause its previous run left is forgotten (Redis
        errors as they come: the worker cannot start without Redis anyway)."""
        await self.redis.delete(ladder_paused_key())
        self.paused = False

    async def _set(self, *, paused: bool) -> None:
        try:
            if paused:
                await self.redis.set(ladder_paused_key(), self.worker_id)
            else:
                await self.redis.delete(ladder_paused_key())
        except (RedisError, OSError) as error:
            raise_if_cancelled(error)
            raise LadderSwitchUnknown(f"the cluster's Redis: {error}") from error
        self._changes += 1
        self.paused = paused

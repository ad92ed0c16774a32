"""The people's queue (``/queue``) of a cluster: one worker leads it, the others relay
their ``/queue`` sockets to it (``QueueLeadership``). Imported only with ``--redis``.

Why one leader rather than a queue shared in Redis: pairing is a decision over everyone
waiting (the longest waiter first, rating windows that widen with time, a bot after a
person's chosen wait: ``game.queue_match``); one process that sees them all makes it as
the single server does, with the same pure matchmaker, and no lock is taken per pair.
The people are few next to the games (a person waits seconds, then plays minutes), so
one worker pairs them all easily; the games it starts run on it, and each person's
``/ws?token=`` reaches it from any worker (``game.cluster_relay``).

* The leader holds ``htttx:queue-leader`` (its worker id), taken with ``SET NX PX`` and
  renewed every heartbeat while the value is still its own (a compare-and-renew script),
  like a worker's lease. Every worker tries to take it at startup and every heartbeat,
  and a ``/queue`` socket arriving when nobody holds it takes it at once.
* A ``/queue`` socket on another worker is relayed to the leader's ``/queue``
  (``route``; the frames pumped by ``game.cluster_relay.relay_socket``) until either
  side closes, or the leader no longer leads (``leads``, asked every heartbeat): then
  the person gets 1011 and joins again, through any worker.
* A leader that stops gives the key up first (compare-and-delete) and closes its
  waiting people with 1001; the next ``/queue`` socket, anywhere, makes its worker the
  leader. A leader that dies loses the key with its lease. A leader that finds the key
  no longer its own (it missed its renewals) closes its waiting people with 1011: they
  join again, at the new leader.

Open challenges are rows of the shared database, so any worker takes
``POST /challenges/{id}/accept`` and runs the game; ``ClusterChallenges`` tells the
creator's queue socket, wherever it waits (the ``challenge-accepted`` channel, then the
creator's seat fetched from the game's worker with the creator's person token).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import aiohttp
from pydantic import ValidationError
from redis.exceptions import RedisError
from starlette.websockets import WebSocket

from game.challenges import Challenges
from game.cluster import challenge_channel, queue_leader_key
from game.cluster_redis import raise_if_cancelled
from game.cluster_relay import relay_socket
from game.queue_hub import QueueHub
from game.relay import QUEUE, LeaderChanging, queue_route
from game.sockets import _close
from models import CLOSE_INTERNAL_ERROR, CLOSE_TRY_AGAIN_LATER, MatchedPacket

if TYPE_CHECKING:
    from game.cluster_redis import ClusterNode

__all__ = ["ClusterChallenges", "QueueLeadership"]

log = logging.getLogger("game.cluster")

#: Renew the key only while it is ours: 1 renewed, 0 someone else's (or gone).
_RENEW: Final = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
#: Give the key up only if it is ours.
_RELEASE: Final = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


def _text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


class QueueLeadership:
    """Whether this worker leads the cluster's queue, and where the others' sockets go
    (see the module docstring)."""

    def __init__(self, node: ClusterNode, hub: QueueHub) -> None:
        self.node = node
        self.hub = hub
        #: This worker holds the key (as of its last look).
        self.leading = False
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    async def start(self) -> None:
        """Try to lead now, then renew (or try again) every heartbeat."""
        with contextlib.suppress(RedisError, OSError):
            await self._step()
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name="htttx: queue leadership"
        )

    async def close(self) -> None:
        """Stop; give the key up if it is ours (before the hub closes its people, so
        their next socket finds no leader and makes one)."""
        if self._closed:
            return
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self.leading:
            self.leading = False
            with contextlib.suppress(RedisError, OSError):
                await self.node.redis.eval(_RELEASE, 1, queue_leader_key(), self.node.worker_id)

    async def leader(self) -> str | None:
        """The id of the worker leading the queue, if any."""
        return _text(await self.node.redis.get(queue_leader_key()))

    async def leads(self, worker_id: str) -> bool:
        """Whether ``worker_id`` still leads the queue (a relay's watch)."""
        return await self.leader() == worker_id

    async def route(self) -> tuple[str, str] | None:
        """Where a ``/queue`` socket arriving here goes: None to serve it here (this
        worker leads, or has just become the leader), else the leader's id and
        ``/queue`` URL (``game.relay.queue_route``). ``LeaderChanging`` when the
        named leader's lease is gone; Redis errors as they come."""
        if self._closed:
            return None  # shutting down: the hub refuses it
        leader = await self.leader()
        if leader is None and await self._take():
            return None
        leader = leader or await self.leader()
        if leader is None or leader == self.node.worker_id:
            self.leading = leader is not None
            return None
        info = await self.node.worker(leader)
        url = queue_route(leader, self.node.worker_id, None if info is None else info.url)
        return None if url is None else (leader, url)

    async def relay(self, websocket: WebSocket) -> bool:
        """Relay ``websocket`` (a ``/queue`` socket, not accepted yet) to the leader
        while it leads, if another worker does: True once it is over; False to serve it
        here. Refused with 1013 while the leader changes or Redis cannot be asked."""
        try:
            target = await self.route()
        except (LeaderChanging, RedisError, OSError) as error:
            await websocket.accept()
            why = str(error) if isinstance(error, LeaderChanging) else "the cluster's Redis"
            await _close(websocket, CLOSE_TRY_AGAIN_LATER, f"cannot reach the queue: {why}")
            return True
        if target is None:
            return False
        leader, url = target

        async def leads() -> bool:
            return await self.leads(leader)

        await relay_socket(self.node, websocket, url, leads, QUEUE, same_host=True)
        return True

    # ------------------------------------------------------------- the task

    async def _run(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.node.leases.heartbeat)
            raise_if_cancelled()
            try:
                await self._step()
            except (RedisError, OSError) as error:
                raise_if_cancelled(error)
                log.warning("queue leadership: %s", error)

    async def _step(self) -> None:
        """Renew the key if ours; see it lost; else take it if nobody holds it."""
        if self.leading:
            renewed = await self.node.redis.eval(
                _RENEW, 1, queue_leader_key(), self.node.worker_id, self.node.leases.lease_ms
            )
            if renewed or await self._take():  # lapsed and taken back: still ours
                return
            self.leading = False
            evicted = self.hub.evict(
                CLOSE_INTERNAL_ERROR, "the queue moved to another worker: join again"
            )
            log.warning("queue: no longer its leader; %d waiting told to join again", evicted)
        await self._take()

    async def _take(self) -> bool:
        """Lead the queue if nobody does (``SET NX PX``)."""
        taken = await self.node.redis.set(
            queue_leader_key(), self.node.worker_id, nx=True, px=self.node.leases.lease_ms
        )
        if taken and not self.leading:
            log.info("queue: this worker (%s) leads the queue now", self.node.worker_id)
        self.leading = self.leading or bool(taken)
        return bool(taken)


#: How long asking another worker for a creator's seat may take.
SEAT_TIMEOUT: Final = 10.0


class ClusterChallenges:
    """Challenges taken on one worker, their creators waiting on another (the
    ``game.challenges.ChallengePeers`` of a cluster's worker)."""

    def __init__(self, node: ClusterNode, challenges: Challenges) -> None:
        self.node = node
        self.challenges = challenges
        self._pubsub: Any = node.redis.pubsub()
        self._reader: asyncio.Task[None] | None = None
        self._http: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Listen to the acceptances announced; be ``challenges.peers``."""
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=SEAT_TIMEOUT))
        await self._pubsub.subscribe(challenge_channel())
        self._reader = asyncio.get_running_loop().create_task(
            self._read(), name="htttx: challenges of the cluster"
        )
        self.challenges.peers = self

    async def close(self) -> None:
        self.challenges.peers = None
        tasks = [*self._tasks, *([self._reader] if self._reader is not None else [])]
        self._reader = None
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(RedisError, OSError):
            await self._pubsub.aclose()
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def announce(self, challenge_id: str) -> None:
        try:
            await self.node.redis.publish(challenge_channel(), challenge_id)
        except (RedisError, OSError) as error:  # its creator asks GET /challenges/{id}
            log.warning("challenge %s: announcing its acceptance failed: %s", challenge_id, error)

    async def seat(self, challenge_id: str, game_id: str, token: str) -> MatchedPacket | None:
        owner = await self.node.owner(game_id)
        if owner is None or owner == self.node.worker_id or self._http is None:
            return None
        info = await self.node.worker(owner)
        if info is None:
            return None
        url = f"{info.url}/challenges/{quote(challenge_id, safe='')}?token={quote(token, safe='')}"
        try:
            async with self._http.get(url) as response:
                if response.status != 200:
                    return None
                answer = await response.json()
            matched = answer.get("matched")
            return None if matched is None else MatchedPacket.model_validate(matched)
        except (aiohttp.ClientError, TimeoutError, ValueError, ValidationError) as error:
            log.warning("challenge %s: its seat from %s failed: %r", challenge_id, owner, error)
            return None

    async def _read(self) -> None:
        while self._reader is not None:  # close() clears it (see QueueLeadership._run)
            raise_if_cancelled()
            try:
                async for item in self._pubsub.listen():
                    if item["type"] == "message":
                        self._spawn(_text(item["data"]) or "")
            except (RedisError, OSError) as error:
                raise_if_cancelled(error)
                log.warning("challenges of the cluster: %s; listening again", error)
                await asyncio.sleep(self.node.leases.heartbeat)

    def _spawn(self, challenge_id: str) -> None:
        async def tell() -> None:
            try:
                await self.challenges.accepted_elsewhere(challenge_id)
            except Exception:  # one creator's seat, never the listener
                log.exception("challenge %s: telling its creator failed", challenge_id)

        task = asyncio.get_running_loop().create_task(tell(), name="htttx: challenge taken")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

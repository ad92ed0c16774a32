"""The bots in a game, shared by a cluster's workers in Redis (``ClusterBotsInPlay``):
the ladder's scheduler and the queue's leader may be two workers, and a bot is to play
one game at a time all the same (``game.bots_in_play``). Imported only with ``--redis``.

Every hold is in one sorted set, ``htttx:bots-in-play`` (``game.cluster``): a member
``<hold id> <bot>`` per bot held, scored with the moment it lapses (Redis's clock, so
the workers' clocks need not agree). A bot's games are its members that have not
lapsed. Each operation is one step in Redis:

* ``take``: a Lua script drops the lapsed members, counts the bots' games and adds the
  hold's members only if each bot may have another (``GAMES_AT_ONCE``): no two workers
  both get a bot's last game, and a pair is held whole or not at all.
* ``busy``: a script drops the lapsed members and answers the others.
* ``keep`` and the renewal: ``ZADD`` of the members with a new lapse (added if they
  were gone, so a ladder's scheduler that takes over holds its predecessor's games
  whether or not their holds lapsed meanwhile); ``release``: ``ZREM``.

Holds belong to the worker process that made them: it renews them every heartbeat, and
``HOLD_LEASES`` leases after its last renewal they lapse. A worker that dies (or is cut
off from Redis) frees its bots so, as its leases end; a ladder's scheduler taking over
keeps its predecessor's games held (``game.ladder``: ``keep`` as it adopts them).

Redis out of reach (the cluster's rule: never crash, try again at the next heartbeat,
refuse what cannot be decided rather than guess): ``busy`` and ``take`` raise
``BotsInPlayUnknown``, and the schedulers give nobody a bot until Redis answers again;
``keep``, ``release`` and the renewals are queued and written in order by one task,
whose failures are logged: a release that did not get through lapses with its hold
(the bot sits out a little longer, never plays two games), a hold that did not get
through is written again by the next renewal. A ``take`` cut short (cancelled, or its
answer lost) is undone, in case it went through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import Any, Final

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from game.bots_in_play import GAMES_AT_ONCE, BotsInPlayUnknown, Holds, check_hold_id
from game.cluster import HOLD_LEASES, Leases, bots_in_play_key
from game.cluster_redis import raise_if_cancelled

__all__ = ["ClusterBotsInPlay", "bots_of", "members_of"]

log = logging.getLogger("game.cluster")

#: How long closing waits for the queued writes (the last releases) to go out.
CLOSE_FLUSH: Final = 5.0

# Redis's clock in milliseconds; the lapsed members dropped.
_NOW_AND_PRUNE = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
"""
#: ARGV: the most games a bot plays, the hold's lapse (ms), the hold's members.
#: 1 if held, 0 if a bot may not have another game (then nothing is held).
_TAKE: Final = (
    _NOW_AND_PRUNE
    + """
local games = {}
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local bot = string.match(member, '^%S+ (.*)$')
  if bot then games[bot] = (games[bot] or 0) + 1 end
end
local most = tonumber(ARGV[1])
for i = 3, #ARGV do
  local bot = string.match(ARGV[i], '^%S+ (.*)$')
  if (games[bot] or 0) >= most then return 0 end
end
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[i])
end
return 1
"""
)
#: The members that have not lapsed.
_HELD: Final = _NOW_AND_PRUNE + "return redis.call('ZRANGE', KEYS[1], 0, -1)\n"
#: ARGV: the lapse (ms), the members to hold (added, or renewed).
_KEEP: Final = """
local time = redis.call('TIME')
local lapse = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], lapse, ARGV[i])
end
return #ARGV - 1
"""


def members_of(hold: str, bots: Iterable[str]) -> list[str]:
    """The sorted set's members of a hold on ``bots`` (casefolded names).

    >>> members_of("ladder:9f", ["alpha", "beta two"])
    ['ladder:9f alpha', 'ladder:9f beta two']
    """
    check_hold_id(hold)
    return [f"{hold} {bot}" for bot in bots]


def bots_of(members: Iterable[bytes | str]) -> dict[str, int]:
    """Each bot's games, from the members held (a member that is not ``<hold> <bot>``
    is no game).

    >>> bots_of([b"ladder:1 alpha", "queue:2 alpha", b"ladder:1 beta two", b"junk"])
    {'alpha': 2, 'beta two': 1}
    """
    games: dict[str, int] = {}
    for member in members:
        text = member.decode() if isinstance(member, bytes) else member
        _hold, space, bot = text.partition(" ")
        if space and bot:
            games[bot] = games.get(bot, 0) + 1
    return games


class ClusterBotsInPlay:
    """``game.bots_in_play.BotsInPlay`` shared by a cluster's workers (the module
    docstring). ``start`` begins the renewals and the writes; ``close`` flushes the
    writes queued and stops."""

    def __init__(self, client: aioredis.Redis, leases: Leases) -> None:
        self.redis = client
        self.leases = leases
        #: The holds of this worker process, renewed every heartbeat.
        self.holds = Holds()
        self._lapse_ms = HOLD_LEASES * leases.lease_ms
        self._take = client.register_script(_TAKE)
        self._held = client.register_script(_HELD)
        #: Members to hold (True) or release (False), written in order.
        self._writes: asyncio.Queue[tuple[bool, list[str]]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._write(), name="htttx: bots in play, writes"),
            loop.create_task(self._renew(), name="htttx: bots in play, renewals"),
        ]

    async def close(self) -> None:
        if self._tasks:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._writes.join(), CLOSE_FLUSH)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    # ------------------------------------------------------------ BotsInPlay

    async def busy(self) -> frozenset[str]:
        try:
            members = await self._held(keys=[bots_in_play_key()])
        except (RedisError, OSError) as error:
            raise_if_cancelled(error)
            raise BotsInPlayUnknown(f"the cluster's Redis: {error}") from error
        return frozenset(bot for bot, games in bots_of(members).items() if games >= GAMES_AT_ONCE)

    async def take(self, hold: str, *names: str) -> bool:
        bots = list(dict.fromkeys(name.casefold() for name in names))
        members = members_of(hold, bots)
        try:
            taken = await self._take(
                keys=[bots_in_play_key()], args=[GAMES_AT_ONCE, self._lapse_ms, *members]
            )
        except (RedisError, OSError, asyncio.CancelledError) as error:
            # It may have gone through, its answer lost: undone, to be sure.
            self._writes.put_nowait((False, members))
            if isinstance(error, asyncio.CancelledError):
                raise
            raise_if_cancelled(error)
            raise BotsInPlayUnknown(f"the cluster's Redis: {error}") from error
        if not taken:
            return False
        self.holds.add(hold, bots)
        return True

    def keep(self, hold: str, *names: str) -> None:
        bots = [name.casefold() for name in names]
        self.holds.add(hold, bots)
        self._writes.put_nowait((True, members_of(hold, bots)))

    def release(self, hold: str) -> None:
        bots = self.holds.remove(hold)
        if bots:
            self._writes.put_nowait((False, members_of(hold, bots)))

    def hand_over(self, hold: str) -> None:
        self.holds.remove(hold)  # not renewed here any more: kept by the next scheduler

    def playing(self) -> frozenset[str]:
        return self.holds.playing()

    # ------------------------------------------------------------- the tasks

    async def _renew(self) -> None:
        """Every heartbeat: this worker's holds, renewed (or written again)."""
        while True:
            await asyncio.sleep(self.leases.heartbeat)
            members = [m for hold, bots in self.holds.items() for m in members_of(hold, bots)]
            if members:
                self._writes.put_nowait((True, members))

    async def _write(self) -> None:
        """The queued holds and releases, in order, as many per round trip as are queued."""
        key = bots_in_play_key()
        while True:
            batch = [await self._writes.get()]
            batch += [self._writes.get_nowait() for _ in range(self._writes.qsize())]
            pipe: Any = self.redis.pipeline(transaction=False)
            for hold, members in batch:
                if hold:  # added, or renewed
                    pipe.eval(_KEEP, 1, key, self._lapse_ms, *members)
                else:
                    pipe.zrem(key, *members)
            try:
                await pipe.execute()
            except (RedisError, OSError) as error:
                raise_if_cancelled(error)
                log.warning("bots in play: writing %d hold(s) failed: %s", len(batch), error)
            finally:
                for _ in batch:
                    self._writes.task_done()

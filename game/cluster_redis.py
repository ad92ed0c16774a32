"""A worker of a cluster: its leases in Redis and the spectator fan-out through Redis
pub/sub (``ClusterNode``). Imported only when the server runs with ``--redis``.

The keys, the lease arithmetic and the messages are ``game.cluster``'s. What this adds:

* ``start`` registers the worker (``worker:<id>``, leased) and renews it, with the keys
  of its live games and of their seat tokens, every ``Leases.heartbeat`` seconds;
  ``close`` deletes them.
* ``game_started`` / ``game_ended``: the manager's calls, as a game starts and ends;
  they keep this run's set of live games (``games-of:<run>``), which outlives a worker
  that dies: ``start_sweeping`` runs a ``game.cluster_sweep.Sweeper``, which records
  the games of dead workers aborted.
* ``publish``: the owner's one publish per packet for a game's spectators, only while
  another worker relays the game (``watched_remotely``: from its fetch of the setup on,
  until ``PUBSUB NUMSUB`` finds no subscriber left). Publishes and
  key deletions go through one queue and one task, in order, pipelined: the game never
  waits on Redis.
* ``spectate``: a spectator, on this worker, of a game another worker runs. The first
  one subscribes to the game's channel (one subscription per game per worker, shared by
  all its spectators here: a ``_Mirror`` with a ``game.fanout.Fanout`` of its own, so
  the writes are coalesced as on the owner); each then fetches the game's setup from
  the owner (``GET /cluster/games/<id>/setup``, which says how many updates the setup
  already shows) and gets the updates after it from the channel.
* ``seat_route``: whether a person's seat socket here is relayed to the worker that
  runs its game (``game.cluster_relay`` pumps it, over ``relay_http``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

import aiohttp
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from game.cluster import (
    ENDED_HEADER,
    SETUP_HEADER,
    Leases,
    Message,
    WorkerInfo,
    compact_text,
    decode_message,
    encode_message,
    game_key,
    games_of_key,
    new_run_id,
    runs_key,
    spectate_channel,
    token_key,
    worker_key,
    worker_pattern,
)
from game.cluster_redis_connect import ClusterUnavailable, connect_redis
from game.fanout import Fanout, Spectator, Update
from game.relay import CONNECT_TIMEOUT, route
from game.spectating import serve_spectator

if TYPE_CHECKING:
    from game.cluster_sweep import Sweeper
    from game.manager import GameManager
    from game.seats import InboundConnection

__all__ = ["ClusterNode", "ClusterUnavailable"]

log = logging.getLogger("game.cluster")

#: Messages a mirror keeps for late joiners whose setup is older than the stream.
HISTORY = 512
#: How long closing waits for the queued publishes to go out.
CLOSE_FLUSH = 5.0
#: How long fetching a setup from the owner may take.
FETCH_TIMEOUT = 10.0

_Command = Callable[[Any], None]


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def raise_if_cancelled(error: BaseException | None = None) -> None:
    """Raise ``CancelledError`` (from ``error``) if the current task is being cancelled.

    redis-py may turn the cancellation of a command under way into a
    ``ConnectionError``, or swallow it and return: a loop that catches Redis errors to
    try again would then outlive whoever cancelled it (``ClusterNode.close`` waited for
    the sweeper until the server's shutdown gave up on it, 30 s later). Such a loop
    calls this first in its ``except``, and once a turn outside it.

    >>> import asyncio
    >>> async def cancelled_mid_command() -> str:
    ...     async def command() -> None:
    ...         try:
    ...             await asyncio.sleep(10)
    ...         except asyncio.CancelledError:
    ...             raise ConnectionError("the connection was closed") from None
    ...     async def loop() -> None:
    ...         while True:
    ...             try:
    ...                 await command()
    ...             except ConnectionError as error:
    ...                 raise_if_cancelled(error)
    ...     task = asyncio.create_task(loop())
    ...     await asyncio.sleep(0)
    ...     task.cancel()
    ...     await asyncio.gather(task, return_exceptions=True)
    ...     return "cancelled" if task.cancelled() else "still running"
    >>> asyncio.run(cancelled_mid_command())
    'cancelled'
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError from error


class ClusterNode:
    """This worker's part in the cluster (see the module docstring)."""

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        worker_id: str,
        url: str,
        leases: Leases,
        max_games: int,
    ) -> None:
        self.redis = client
        self.worker_id = worker_id
        self.url = url.rstrip("/")
        self.leases = leases
        self.max_games = max_games
        self.started = _now_iso()
        #: This process's run id: its set of live games is ``games-of:<run>``.
        self.run = new_run_id()
        self._registered = False  # after the first heartbeat
        self._sweeper: Sweeper | None = None
        self.manager: GameManager | None = None
        self._tokens: dict[str, list[str]] = {}  # live game -> its token keys
        self._commands: asyncio.Queue[_Command] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._mirrors: dict[str, _Mirror] = {}
        #: Live games of this worker whose setup another worker fetched: followed there.
        self._remote: set[str] = set()
        self._setups: dict[str, int] = {}  # setups fetched of each game in _remote
        self._mirror_lock = asyncio.Lock()
        self._spawned: set[asyncio.Task[None]] = set()
        self._http: aiohttp.ClientSession | None = None
        self._relay_http: aiohttp.ClientSession | None = None
        #: Set as this worker closes: its seat relays end (``game.cluster_relay``).
        self.stopping = asyncio.Event()
        self.published = 0  # messages published (for tests and benchmarks)

    @classmethod
    async def open(
        cls, redis_url: str, *, worker_id: str, url: str, leases: Leases, max_games: int
    ) -> ClusterNode:
        """Connect and PING; ``ClusterUnavailable`` with the reason if that fails
        (``game.cluster_redis_connect``)."""
        client = await connect_redis(redis_url)
        return cls(client, worker_id=worker_id, url=url, leases=leases, max_games=max_games)

    # ------------------------------------------------------------ registry

    def _info(self) -> WorkerInfo:
        live = len(self.manager.live_game_ids()) if self.manager is not None else 0
        return WorkerInfo(
            id=self.worker_id,
            url=self.url,
            started=self.started,
            heartbeat=_now_iso(),
            live_games=live,
            max_games=self.max_games,
            run=self.run,
        )

    async def start(self, manager: GameManager) -> None:
        """Register this worker and start renewing its leases and publishing."""
        self.manager = manager
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=FETCH_TIMEOUT))
        await self._heartbeat()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._renew(), name="htttx: cluster heartbeat"),
            loop.create_task(self._send(), name="htttx: cluster publisher"),
        ]

    def start_sweeping(self, sweeper: Sweeper) -> None:
        """Sweep the games of dead workers every heartbeat (``game.cluster_sweep``)
        until this worker closes."""
        self._sweeper = sweeper
        task = asyncio.get_running_loop().create_task(sweeper.run(), name="htttx: cluster sweep")
        self._tasks.append(task)

    async def close(self) -> None:
        """Stop renewing; drop this worker's keys (its games are over: recorded by the
        manager's shutdown, so there is nothing to sweep); close the connections."""
        self.stopping.set()
        for mirror in list(self._mirrors.values()):
            await mirror.close()
        if self._tasks:  # what the games published last (their `end`) goes out first
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._commands.join(), CLOSE_FLUSH)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(RedisError, OSError):
            keys = [worker_key(self.worker_id), games_of_key(self.run)]
            for game_id, tokens in self._tokens.items():
                keys += [game_key(game_id), *tokens]
            pipe = self.redis.pipeline(transaction=False)
            pipe.delete(*keys)
            pipe.hdel(runs_key(), self.run)
            await pipe.execute()
        if self._http is not None:
            await self._http.close()
        if self._relay_http is not None:
            await self._relay_http.close()
        await self.redis.aclose()

    async def _heartbeat(self) -> None:
        pipe = self.redis.pipeline(transaction=False)
        lease = self.leases.lease_ms
        pipe.hexists(runs_key(), self.run)  # gone: another worker swept this run
        pipe.set(worker_key(self.worker_id), self._info().to_json(), px=lease)
        pipe.hset(runs_key(), self.run, self.worker_id)  # after the key: never seen dead
        for game_id, tokens in list(self._tokens.items()):
            for key in (game_key(game_id), *tokens):
                pipe.set(key, self.worker_id, px=lease)
        registered, *_ = await pipe.execute()
        if self._registered and not registered and self._sweeper is not None:
            # This worker's lease lapsed while it ran (stopped, or cut off from Redis).
            self.spawn(self._sweeper.swept_here(), "rejoin after a sweep")
        self._registered = True

    async def _renew(self) -> None:
        while not self.stopping.is_set():
            await asyncio.sleep(self.leases.heartbeat)
            raise_if_cancelled()
            try:
                await self._heartbeat()
                await self._still_watched()
            except (RedisError, OSError) as error:
                raise_if_cancelled(error)
                log.warning("cluster heartbeat failed: %s", error)

    def watched_remotely(self, game_id: str) -> None:
        """Another worker relays ``game_id`` (run here) to spectators: until no worker
        is subscribed to its channel (looked at every heartbeat), it is published and
        analysed for them (``RunningGame.watch_remote``)."""
        self._remote.add(game_id)
        self._setups[game_id] = self._setups.get(game_id, 0) + 1

    async def _still_watched(self) -> None:
        """The games no other worker relays any more (no subscriber left on their
        channel) are unwatched: one ``PUBSUB NUMSUB`` per heartbeat. A game whose setup
        was fetched while the count was on its way stays watched: that worker had
        subscribed first (``_Mirror.open``), the count may not show it."""
        games = list(self._remote)
        if not games or self.manager is None:
            return
        setups = {game_id: self._setups.get(game_id) for game_id in games}
        counts = await self.redis.pubsub_numsub(*map(spectate_channel, games))
        for game_id, (_channel, subscribers) in zip(games, counts, strict=True):
            if subscribers or game_id not in self._remote:
                continue
            if self._setups.get(game_id) == setups[game_id]:
                self._remote.discard(game_id)
                self._setups.pop(game_id, None)
                self.manager.unwatched_remotely(game_id)

    async def workers(self) -> list[WorkerInfo]:
        """Every worker whose lease holds, oldest first."""
        keys = [key async for key in self.redis.scan_iter(match=worker_pattern(), count=500)]
        values = await self.redis.mget(keys) if keys else []
        found = [WorkerInfo.from_json(value) for value in values if value is not None]
        return sorted(found, key=lambda info: (info.started, info.id))

    async def games_of(self, workers: list[WorkerInfo]) -> dict[str, list[str]]:
        """The live games of each of ``workers`` (by worker id), from their runs' sets
        (``games-of:<run>``): one pipelined ``SMEMBERS`` each."""
        pipe = self.redis.pipeline(transaction=False)
        for info in workers:
            pipe.smembers(games_of_key(info.run))
        found = await pipe.execute() if workers else []
        return {
            info.id: sorted(m.decode() if isinstance(m, bytes) else m for m in members)
            for info, members in zip(workers, found, strict=True)
        }

    async def others(self) -> int:
        """Workers other than this one whose lease holds."""
        return sum(info.id != self.worker_id for info in await self.workers())

    async def worker(self, worker_id: str) -> WorkerInfo | None:
        value = await self.redis.get(worker_key(worker_id))
        return None if value is None else WorkerInfo.from_json(value)

    # -------------------------------------------------------------- games

    async def game_started(self, game_id: str, tokens: list[str]) -> None:
        """The manager started ``game_id`` here: its keys and its place in this run's set,
        before anyone is told of it and before its record is written (the sweeper finds
        it if this worker dies in between)."""
        keys = [token_key(token) for token in tokens]
        self._tokens[game_id] = keys
        pipe = self.redis.pipeline(transaction=False)
        for key in (game_key(game_id), *keys):
            pipe.set(key, self.worker_id, px=self.leases.lease_ms)
        pipe.sadd(games_of_key(self.run), game_id)
        await pipe.execute()

    def registered_games(self) -> list[str]:
        """The games ``game_started`` registered here and ``game_ended`` did not end yet:
        the manager's live games, and any whose record is still being written."""
        return list(self._tokens)

    def game_ended(self, game_id: str) -> None:
        """``game_id`` is over and forgotten here: its keys go (after what it published)."""
        keys = [game_key(game_id), *self._tokens.pop(game_id, [])]
        games = games_of_key(self.run)
        self._remote.discard(game_id)
        self._setups.pop(game_id, None)

        def forget(pipe: Any) -> None:
            pipe.delete(*keys)
            pipe.srem(games, game_id)

        self._commands.put_nowait(forget)

    def publish(self, game_id: str, message: Message) -> None:
        """One packet to the game's spectators on other workers (queued, in order)."""
        data = encode_message(message)
        channel = spectate_channel(game_id)
        self.published += 1
        self._commands.put_nowait(lambda pipe: pipe.publish(channel, data))

    async def owner(self, game_id: str) -> str | None:
        value = await self.redis.get(game_key(game_id))
        return None if value is None else value.decode() if isinstance(value, bytes) else value

    async def seat_route(self, token: str) -> tuple[str, str] | None:
        """Where a seat socket for ``token`` is relayed (``game.relay.route``): the
        owner's id and URL when another worker whose lease holds runs its game; None
        to seat (or refuse) it here."""
        owner = await self.redis.get(token_key(token))
        owner_id = None if owner is None else owner.decode() if isinstance(owner, bytes) else owner
        info = None if owner_id in (None, self.worker_id) else await self.worker(str(owner_id))
        url = None if info is None else info.url
        if route(owner_id, self.worker_id, url) is None:
            return None
        assert owner_id is not None and url is not None
        return owner_id, url

    def relay_http(self) -> aiohttp.ClientSession:
        """The client session of the seat relays (``game.cluster_relay``): no total
        timeout, a relay lasts as long as its game."""
        if self._relay_http is None:
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT)
            self._relay_http = aiohttp.ClientSession(timeout=timeout)
        return self._relay_http

    @property
    def relay_frame_cap(self) -> int:
        """The largest frame a seat relay carries: the hard cap on any frame of the
        workers' own sockets (uvicorn's ``ws_max_size``, ``bot.serve.uvicorn_config``)."""
        from bot.connection import MAX_FRAME_BYTES

        return 2 * MAX_FRAME_BYTES

    async def _send(self) -> None:
        """Carry out the queued commands in order, as many per round trip as are queued."""
        while True:
            command = await self._commands.get()
            pipe = self.redis.pipeline(transaction=False)
            command(pipe)
            taken = 1
            for _ in range(self._commands.qsize()):
                self._commands.get_nowait()(pipe)
                taken += 1
            try:
                await pipe.execute()
            except (RedisError, OSError) as error:
                raise_if_cancelled(error)
                log.warning("publishing to the cluster failed: %s", error)
            finally:
                for _ in range(taken):
                    self._commands.task_done()

    # -------------------------------------------------------- spectators

    async def spectate(self, game_id: str, connection: InboundConnection, *, compact: bool) -> bool:
        """Show ``connection`` a game another worker runs, to its end; False when no
        other worker runs it (then the caller looks for its record)."""
        manager = self.manager
        assert manager is not None and self._http is not None
        owner = await self.owner(game_id)
        if owner is None or owner == self.worker_id:
            return False
        info = await self.worker(owner)
        if info is None:
            return False
        async with self._mirror_lock:
            mirror = self._mirrors.get(game_id)
            if mirror is None or mirror.closed:
                mirror = await _Mirror.open(self, game_id, manager.spectator_flush)
                self._mirrors[game_id] = mirror
        if mirror.watchers >= manager.max_spectators:
            from game.manager import TooManySpectators

            raise TooManySpectators(
                f"game {game_id} already has {mirror.watchers} spectators on this worker, "
                "the most it allows; try again later"
            )
        spectator = Spectator(manager.spectator_queue, _writer(connection), compact=compact)
        mirror.joining += 1
        try:
            fetched = await self._fetch_setup(info.url, game_id)
        finally:
            mirror.joining -= 1
        if fetched is None:
            await mirror.close_if_idle()
            return False
        mirror.join(spectator, fetched)
        await serve_spectator(game_id, spectator, connection, mirror.drop)
        return True

    async def _fetch_setup(self, base: str, game_id: str) -> _Setup | None:
        assert self._http is not None
        try:
            async with self._http.get(f"{base}/cluster/games/{game_id}/setup") as response:
                if response.status != 200:
                    return None
                seen = int(response.headers[SETUP_HEADER])
                ended = response.headers.get(ENDED_HEADER) == "1"
                return _Setup(seen, (await response.text()).split("\n"), ended)
        except (aiohttp.ClientError, TimeoutError, KeyError, ValueError) as error:
            log.warning("game %s: its setup from %s failed: %r", game_id, base, error)
            return None

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        """A short task of this node's, kept until done (closing waits for none)."""
        task = asyncio.get_running_loop().create_task(coro, name=f"htttx: {name}")
        self._spawned.add(task)
        task.add_done_callback(self._spawned.discard)

    def forget_mirror(self, mirror: _Mirror) -> None:
        if self._mirrors.get(mirror.game_id) is mirror:
            del self._mirrors[mirror.game_id]


def _writer(connection: InboundConnection) -> Any:
    from game.outboxes import FramedConnection

    return connection.frame_writer() if isinstance(connection, FramedConnection) else None


class _Setup(NamedTuple):
    """What the owner of a game answers for a spectator joining on another worker."""

    seen: int  # the updates its setup shows
    packets: list[str]  # the setup, the analysis so far, the end if it went out
    ended: bool


class _Mirror:
    """The spectators on this worker of one game another worker runs: one subscription
    to its channel, one ``Fanout``."""

    def __init__(self, node: ClusterNode, game_id: str, pubsub: Any, flush_s: float) -> None:
        self.node = node
        self.game_id = game_id
        self.pubsub = pubsub
        self.fanout = Fanout(self.drop, flush_s=flush_s)
        self.history: deque[Message] = deque(maxlen=HISTORY)
        self.last_update = -1  # seq of the last update received
        #: Spectators whose setup shows updates not received yet (``seen``: the first
        #: update their setup lacks): each such update is left out for them as it comes.
        #: They get the analyses and the end meanwhile.
        self.pending: dict[Spectator, int] = {}
        self.joining = 0
        self.closed = False
        self.reader: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, node: ClusterNode, game_id: str, flush_s: float) -> _Mirror:
        pubsub = node.redis.pubsub()
        await pubsub.subscribe(spectate_channel(game_id))
        # Subscribed once Redis confirms: from here on nothing published is missed.
        deadline = time.monotonic() + FETCH_TIMEOUT
        while time.monotonic() < deadline:
            confirmation = await pubsub.get_message(timeout=1.0)
            if confirmation is not None and confirmation["type"] == "subscribe":
                break
        mirror = cls(node, game_id, pubsub, flush_s)
        mirror.reader = asyncio.get_running_loop().create_task(
            mirror._read(), name=f"htttx: relay {game_id}"
        )
        return mirror

    @property
    def watchers(self) -> int:
        return len(self.fanout.spectators)

    async def _read(self) -> None:
        try:
            async for item in self.pubsub.listen():
                if item["type"] != "message":
                    continue
                try:
                    message = decode_message(item["data"])
                except ValueError as error:
                    log.warning("game %s: a bad spectator message: %s", self.game_id, error)
                    continue
                self._receive(message)
                if message.kind == "e":
                    break
        except (RedisError, OSError) as error:
            log.warning("game %s: the relay from its owner failed: %s", self.game_id, error)
        finally:
            self._end()
        # Over (not cancelled: close() closes it then): the subscription goes now.
        with contextlib.suppress(RedisError, OSError):
            await self.pubsub.aclose()

    def _receive(self, message: Message) -> None:
        self.history.append(message)
        text = message.text
        if message.kind == "u":
            self.last_update = message.seq
            for spectator, seen in list(self.pending.items()):
                if message.seq < seen:
                    self.fanout.skip_next(spectator)  # its setup shows this move
                else:
                    del self.pending[spectator]
            full = text.encode()
            self.fanout.publish(Update(full, lambda: compact_text(text).encode()), skippable=True)
        elif message.kind == "a":
            self.fanout.publish(Update(text.encode()))
        else:  # the end: to everyone
            self.pending.clear()
            self.fanout.publish(Update(text.encode()), urgent=True)

    def join(self, spectator: Spectator, setup: _Setup) -> None:
        """Add ``spectator`` with the owner's packets (the setup, the analysis so far,
        the end if it went out), whose setup shows ``setup.seen`` updates; the updates
        and analyses received here already and not in it follow them. (An analysis
        published as the owner answered and received after this may come twice: a
        spectator keeps the latest per ply anyway.)"""
        end = next((m.text for m in self.history if m.kind == "e"), None)
        shown = set(setup.packets)
        later = [
            m.text
            for m in self.history
            if (m.kind == "u" and m.seq >= setup.seen) or (m.kind == "a" and m.text not in shown)
        ]
        if end is not None and not setup.ended:
            later.append(end)
        packets = [*setup.packets, *later]
        if spectator.compact:
            packets = [compact_text(text) for text in packets]
        spectator.backlog = packets
        if setup.ended or end is not None or self.closed:
            spectator.close()
            return
        self.fanout.add(spectator)
        if self.last_update + 1 < setup.seen:
            self.pending[spectator] = setup.seen

    def drop(self, spectator: Spectator) -> None:
        self.pending.pop(spectator, None)
        self.fanout.remove(spectator)
        spectator.dropped.set()
        if not self.watchers and not self.joining and not self.closed:
            self.node.spawn(self.close_if_idle(), f"close relay {self.game_id}")

    async def close_if_idle(self) -> None:
        if not self.watchers and not self.joining:
            await self.close()

    def _end(self) -> None:
        if not self.closed:
            self.closed = True
            self.node.forget_mirror(self)
            self.pending.clear()
            self.fanout.close()

    async def close(self) -> None:
        self._end()
        if self.reader is not None and self.reader is not asyncio.current_task():
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)
        with contextlib.suppress(RedisError, OSError):
            await self.pubsub.aclose()

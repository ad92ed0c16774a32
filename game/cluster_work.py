"""Tournament games played by any worker of a cluster: the work queue's two ends.

Imported only when the server runs with ``--redis``. The queue itself is a table in
PostgreSQL (``game.store.work``), leased with ``SELECT ... FOR UPDATE SKIP LOCKED``:
the database that already holds the tournaments holds their games to play, so a
game's result and its tournament's count are written in one transaction, and no
second system (a Redis queue library) has to agree with it. Redis only wakes the
idle workers when work is queued, and holds the coordinators' leases.

* ``WorkPlayer`` (every worker): leases queued games while it has room, plays each
  with ``GameManager.create_game`` like any other game, renews its leases every
  heartbeat and writes the result back. A game it cannot start is handed back (a full
  or closing server) or failed with the reason (a bot that does not answer). A lease
  it lost (the coordinator cancelled the game, or the worker stalled for longer than a
  lease and another took the game over) aborts the game here. A write of a game's
  settlement (its start, its result, handing it back) is tried again only while the
  store is out of reach (``game.store.outages``); one the store refused goes no further
  here: it is logged, the game aborted if it still runs, the item left to its lease;
  at its ``UNSETTLED_TRIES``-th lease ended so, the item is failed with the cause.
* ``Coordinators`` (every worker): the coordinators' side. A tournament (and the
  ladder's scheduler) is coordinated by one worker at a time, the one holding its Redis
  lease (``htttx:coordinator:<id>``, ``htttx:coordinator:ladder``). A tournament's
  coordinator (``game.tournament_runner``) queues ``concurrency`` games at a time and
  counts each as it is done; the ladder's (``game.ladder_games``) queues its pairings.
  Every heartbeat each worker renews the leases it holds and adopts the running
  tournaments nobody holds: a coordinator that died (or shut down) is replaced within
  a lease, and the new one goes on from the store, the games in flight included.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from redis.exceptions import RedisError
from sqlalchemy.exc import SQLAlchemyError

from game.cluster import PREFIX, Leases
from game.cluster_redis import raise_if_cancelled
from game.discovery import DiscoveryError
from game.manager import GameManager, ManagerClosed, TooManyGames
from game.rating_book import RatingBook, UnratableGame
from game.store.outages import is_outage
from game.store.work import UNSETTLED, WorkItem, WorkRecords
from game.tournament_runner import CREATE_ATTEMPTS, CREATE_BACKOFF
from models import EndCause, NewGameRequest

if TYPE_CHECKING:
    import redis.asyncio as aioredis

__all__ = ["Coordinators", "WorkPlayer", "coordinator_key"]

log = logging.getLogger("game.cluster")

#: The channel a coordinator publishes on as it queues games: idle workers lease at once.
WORK_CHANNEL: Final = PREFIX + "work"
#: How often a worker with room looks for work: at once after a lease, backing off to
#: ``POLL_MAX`` while the queue stays empty (a publish on ``WORK_CHANNEL`` wakes it).
POLL_MIN: Final = 0.02
POLL_MAX: Final = 1.0
#: How often a coordinator reads the state of the games it queued.
WATCH_INTERVAL: Final = 0.1
#: How long a worker keeps trying to write a game's settlement (its result, or handing
#: it back) while the store is out of reach, the waits doubling from
#: ``SETTLE_RETRY_MIN`` up to ``SETTLE_RETRY_MAX`` seconds.
SETTLE_PATIENCE: Final = 120.0
SETTLE_RETRY_MIN: Final = 0.2
SETTLE_RETRY_MAX: Final = 5.0
#: How many leases of one item may end with a write the store refused (or a bug) before
#: the item is failed: the same write would fail on every lease, forever.
UNSETTLED_TRIES: Final = 3

# A lease is renewed or released only by its holder (the usual single-instance lock).
_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
)
_RELEASE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('del', KEYS[1]) else return 0 end"
)


def coordinator_key(tournament_id: str) -> str:
    """The Redis key of a tournament's coordinator lease.

    >>> coordinator_key("4f2a")
    'htttx:coordinator:4f2a'
    """
    return f"{PREFIX}coordinator:{tournament_id}"


class WorkPlayer:
    """Plays the queue's games on this worker (see the module docstring): at most
    ``slots`` at once, and never more than the manager's ``max_games`` allow."""

    def __init__(
        self,
        manager: GameManager,
        work: WorkRecords,
        redis: aioredis.Redis,
        *,
        worker_id: str,
        leases: Leases,
        slots: int,
        ratings: RatingBook | None = None,
    ) -> None:
        self.manager = manager
        self.work = work
        self.redis = redis
        self.worker_id = worker_id
        self.leases = leases
        self.slots = slots
        self.ratings = ratings
        self.playing: dict[int, str | None] = {}  # item id -> its game, once created
        self.played = 0  # games played to the end here (for tests and benchmarks)
        self._lost: set[int] = set()
        self._wake = asyncio.Event()
        self._closing = False
        self._tasks: list[asyncio.Task[None]] = []
        self._games: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._lease_loop(), name="htttx: work leasing"),
            loop.create_task(self._renew_loop(), name="htttx: work leases"),
            loop.create_task(self._listen(), name="htttx: work wake-ups"),
        ]

    async def close(self) -> None:
        """Take no more work. The games in flight end with the manager (aborted, so
        handed back to the queue for another worker)."""
        self._closing = True
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def drain(self) -> None:
        """Wait for the games in flight to be settled (after the manager closed)."""
        if self._games:
            await asyncio.gather(*self._games, return_exceptions=True)

    # ------------------------------------------------------------- leasing

    def _room(self) -> int:
        manager = self.manager
        free_here = manager.max_games - len(manager.live_game_ids())
        return min(self.slots - len(self.playing), free_here)

    async def _lease_loop(self) -> None:
        delay = POLL_MIN
        failing = _Failing("leasing work")
        while not self._closing:
            leased: list[WorkItem] = []
            if self._room() > 0:
                now = time.time()
                try:
                    # One at a time: the workers polling side by side share the work.
                    leased = await self.work.lease(
                        self.worker_id,
                        1,
                        now=now,
                        until=now + self.leases.lease,
                        ended_at=datetime.now(UTC),
                        playing=list(self.playing),
                    )
                except (SQLAlchemyError, OSError) as error:
                    failing.failed(error)
                else:
                    failing.worked()
            for item in leased:
                if item.worker == self.worker_id:
                    log.warning(
                        "game %s of %s: this worker could not settle it before its lease "
                        "expired; playing it again",
                        item.idx + 1,
                        item.source,
                    )
                elif item.game_id is not None:
                    log.warning(
                        "game %s of %s: its worker %s is gone; playing it again here",
                        item.idx + 1,
                        item.source,
                        item.worker,
                    )
                self.playing[item.item_id] = None
                task = asyncio.get_running_loop().create_task(
                    self._play(item), name=f"htttx: work item {item.item_id}"
                )
                self._games.add(task)
                task.add_done_callback(self._games.discard)
            delay = POLL_MIN if leased else min(2 * delay, POLL_MAX)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)
            # Woken together, the workers would race for each game, and whichever is
            # nearest the database would win them all: a random head start, shorter
            # for a worker playing fewer games, spreads them.
            await asyncio.sleep(random.uniform(0, POLL_MIN) * (1 + len(self.playing)))

    async def _listen(self) -> None:
        """Wake the leasing loop when a coordinator queues games (or a slot frees)."""
        while True:
            raise_if_cancelled()
            pubsub: Any = self.redis.pubsub()
            try:
                await pubsub.subscribe(WORK_CHANNEL)
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        self._wake.set()
            except (RedisError, OSError) as error:
                raise_if_cancelled(error)
                log.warning("work wake-ups: %s; polling meanwhile", error)
                await asyncio.sleep(self.leases.heartbeat)
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await pubsub.aclose()

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.leases.heartbeat)
            raise_if_cancelled()
            try:
                lost = await self.work.renew(
                    self.worker_id, list(self.playing), time.time() + self.leases.lease
                )
            except (SQLAlchemyError, OSError) as error:
                raise_if_cancelled(error)
                log.warning("renewing work leases failed: %s", error)
                continue
            for item_id in lost:
                self._lost.add(item_id)
                game_id = self.playing.get(item_id)
                if game_id is not None:
                    self.manager.abort_game(game_id, "its tournament stopped it")

    # ------------------------------------------------------------- playing

    async def _settling(
        self, item: WorkItem, what: str, write: Callable[[], Awaitable[bool]]
    ) -> bool:
        """``write``, a write of ``item`` to the queue (``what`` it does, for the log):
        while the store is out of reach (``is_outage``) it is tried again, the waits
        doubling, for up to ``SETTLE_PATIENCE`` seconds (not while this worker shuts
        down); then the error goes up (``_play``), the item is left to its lease, and
        whoever leases it after that, this worker included, plays it again. Any other
        error goes up at once, the same way: the store refused the write (a constraint,
        a bad statement), or a bug, and the same write would fail again."""
        wait = SETTLE_RETRY_MIN
        give_up = time.monotonic() + SETTLE_PATIENCE
        while True:
            try:
                return await write()
            except Exception as error:
                if not is_outage(error) or self._closing or time.monotonic() + wait > give_up:
                    raise
                log.warning(
                    "game %d of %s: %s failed (%s); trying again in %g s",
                    item.idx + 1,
                    item.source,
                    what,
                    error,
                    wait,
                )
                await asyncio.sleep(wait)
                wait = min(2 * wait, SETTLE_RETRY_MAX)

    async def _hand_back(self, item: WorkItem) -> bool:
        return await self._settling(
            item, "handing it back", lambda: self.work.hand_back(item.item_id, self.worker_id)
        )

    async def _fail(self, item: WorkItem, error: str) -> bool:
        return await self._settling(
            item, "failing it", lambda: self.work.fail(item.item_id, self.worker_id, error)
        )

    async def _create(self, item: WorkItem, request: NewGameRequest) -> str | None:
        """The game's id; None if it was handed back or failed (done here)."""
        wait = CREATE_BACKOFF
        for attempt in range(1, CREATE_ATTEMPTS + 1):
            try:
                return (await self.manager.create_game(request)).game_id
            except (TooManyGames, ManagerClosed):
                await self._hand_back(item)
                return None
            except DiscoveryError as error:
                if attempt == CREATE_ATTEMPTS or item.item_id in self._lost:
                    # The error as it is: it names the seat (the ladder blames that bot).
                    await self._fail(item, str(error))
                    return None
                log.warning("game %d: %s; trying again in %g s", item.idx + 1, error, wait)
                await asyncio.sleep(wait)
                wait *= 2
        return None

    async def _play(self, item: WorkItem) -> None:
        try:
            await self._play_item(item)
        except Exception as error:
            # The store out of reach for longer than ``_settling`` waits, a write it
            # refused, or a bug: the lease expires, and whoever leases the item next
            # (this worker too: it plays it no more) records its game aborted and plays
            # it again (another worker may write what this one could not: a newer
            # version of the server, with the store's newer schema).
            cause = _cause(error)
            log.exception("work item %d failed here (%s); left to its lease", item.item_id, cause)
            game_id = self.playing.get(item.item_id)
            if game_id is not None:  # not left playing with nobody to settle it
                self.manager.abort_game(game_id, f"its worker could not keep its record: {cause}")
            tries = item.attempts + 1  # ``attempts``: the leases before this one
            if not is_outage(error) and tries >= UNSETTLED_TRIES:
                await self._give_up(
                    item, f"{UNSETTLED} after {tries} tries: {cause} ({_summary(error)})"
                )
        finally:
            self.playing.pop(item.item_id, None)
            self._lost.discard(item.item_id)
            self._wake.set()  # a slot is free

    async def _give_up(self, item: WorkItem, error: str) -> None:
        """Fail ``item`` with ``error``: its coordinator fails the tournament (or the
        ladder drops the pairing) with that cause, instead of the item being played
        again every lease period, forever. One write: if the store refuses this one
        too, the item is left to its lease as before."""
        log.error("game %d of %s: %s; failed", item.idx + 1, item.source, error)
        try:
            await self.work.fail(item.item_id, self.worker_id, error)
        except Exception:
            log.exception("game %d of %s: failing it failed too", item.idx + 1, item.source)

    async def _play_item(self, item: WorkItem) -> None:
        request = NewGameRequest.model_validate_json(item.request)
        game_id = await self._create(item, request)
        if game_id is None:
            return
        ended = self.manager.end_of(game_id)  # looked up now: a quick game is not missed
        self.playing[item.item_id] = game_id
        started = await self._settling(
            item, "noting its game", lambda: self.work.started(item, self.worker_id, game_id)
        )
        if not started:
            self.manager.abort_game(game_id, "its tournament stopped it")
        elif item.rated and self.ratings is not None:
            x, o = request.player_x.name or "X", request.player_o.name or "O"
            try:
                await self.ratings.track(game_id, x, o)
            except UnratableGame as error:
                self._lost.add(item.item_id)  # failed below: never played again
                self.manager.abort_game(game_id, f"it cannot be rated: {error}")
                await self._fail(item, f"rated: {error}")
        result = await ended
        if item.item_id in self._lost:  # cancelled, or taken over: not ours to settle
            await self.work.drop_cancelled(item.item_id)
        elif result is None or result.cause is EndCause.ABORTED:
            # Aborted (this worker shuts down, the store was out of reach, or it was taken
            # for dead and the record says aborted: ``end_of`` gives the recorded result):
            # queued again, for any worker to play.
            await self._hand_back(item)
        elif await self._settling(
            item,
            "writing its result",
            lambda: self.work.complete(item.item_id, self.worker_id, result.model_dump_json()),
        ):
            self.played += 1


def _cause(error: BaseException) -> str:
    """Why a queued game could not be settled here, for the log and its record.

    >>> _cause(ConnectionRefusedError(111, "Connection refused"))
    'the store was unreachable'
    >>> _cause(KeyError("a bug"))
    'an internal error'
    """
    if is_outage(error):
        return "the store was unreachable"
    if isinstance(error, SQLAlchemyError):
        return "the store refused it"
    return "an internal error"


class _Failing:
    """The log of a read tried again and again (ten times a second, a coordinator's
    watch) while it fails: its first failure and its recovery, not every try, so an
    outage of the store is a few lines, not thousands; each names the store.

    >>> failing = _Failing("reading the queued games")
    >>> failing.failed(ConnectionRefusedError(111, "Connection refused"))
    >>> failing.failed(ConnectionRefusedError(111, "Connection refused"))
    >>> failing.tries
    2
    >>> failing.worked(); failing.tries
    0
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self.tries = 0

    def failed(self, error: BaseException) -> None:
        self.tries += 1
        if self.tries == 1:
            log.warning(
                "%s failed: %s (%s); trying again, quietly until it works",
                self.what,
                _cause(error),
                _summary(error),
            )

    def worked(self) -> None:
        if self.tries:
            log.warning("%s works again, after %d failed tries", self.what, self.tries)
        self.tries = 0


def _summary(error: BaseException) -> str:
    """The error's first line, for an item's ``error`` (a SQLAlchemy error's is the
    driver's, without the statement and its parameters).

    >>> _summary(ValueError("bad value\\nmore"))
    'ValueError: bad value'
    """
    inner = getattr(error, "orig", None) or error
    lines = str(inner).strip().splitlines()
    return f"{type(inner).__name__}: {lines[0][:300] if lines else ''}"


class Coordinators:
    """The coordinators' side of the queue, and their leases (see the module
    docstring). ``adopt``: the director's call to coordinate a running tournament
    nobody holds; ``lost``: its call when a tournament's lease held here went to
    another worker (``claim`` may name another call for another lease); ``stopped``:
    its call when a tournament coordinated here is no longer running in the store
    (stopped through another worker)."""

    def __init__(
        self,
        redis: aioredis.Redis,
        work: WorkRecords,
        *,
        worker_id: str,
        leases: Leases,
        running_ids: Callable[[], Awaitable[list[str]]],
        adopt: Callable[[str], Awaitable[None]],
        lost: Callable[[str], None],
        stopped: Callable[[str], Awaitable[None]],
    ) -> None:
        self.redis = redis
        self.work = work
        self.worker_id = worker_id
        self.leases = leases
        self._running_ids = running_ids
        self._adopt = adopt
        self._lost = lost
        self._stopped = stopped
        self.held: set[str] = set()
        self._on_lost: dict[str, Callable[[str], None]] = {}
        self.adopted: list[str] = []  # tournaments adopted here, oldest first
        self._watched: dict[int, tuple[asyncio.Future[WorkItem | None], Callable[[str], None]]] = {}
        self._watcher: asyncio.Task[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(
            self._keep(), name="htttx: tournament coordinators"
        )

    async def close(self, *, release: bool = True) -> None:
        """Stop renewing and adopting; hand the tournaments held here to the others."""
        for task in (self._task, self._watcher):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if release:
            for tournament_id in list(self.held):
                await self.release(tournament_id)

    # ------------------------------------------------------------- leases

    async def claim(
        self, tournament_id: str, *, on_lost: Callable[[str], None] | None = None
    ) -> bool:
        """Take a tournament's (or ``"ladder"``'s) coordinator lease; False if another
        worker holds it. ``on_lost``: called if the lease goes to another worker (else
        the ``lost`` given at construction)."""
        taken = await self.redis.set(
            coordinator_key(tournament_id), self.worker_id, nx=True, px=self.leases.lease_ms
        )
        if taken:
            self.held.add(tournament_id)
            if on_lost is not None:
                self._on_lost[tournament_id] = on_lost
        return bool(taken)

    async def release(self, tournament_id: str) -> None:
        self.held.discard(tournament_id)
        self._on_lost.pop(tournament_id, None)
        with contextlib.suppress(RedisError, OSError):
            await self._release(keys=[coordinator_key(tournament_id)], args=[self.worker_id])

    async def _keep(self) -> None:
        while True:
            raise_if_cancelled()
            try:
                await self._renew_held()
                await self._adopt_orphans()
            except (RedisError, OSError, SQLAlchemyError) as error:
                raise_if_cancelled(error)
                log.warning("tournament coordination: %s", error)
            await asyncio.sleep(self.leases.heartbeat)

    async def _renew_held(self) -> None:
        for tournament_id in list(self.held):
            kept = await self._renew(
                keys=[coordinator_key(tournament_id)],
                args=[self.worker_id, self.leases.lease_ms],
            )
            if not kept and tournament_id in self.held:
                log.warning("%s: another worker coordinates it now", tournament_id)
                self.held.discard(tournament_id)
                self._on_lost.pop(tournament_id, self._lost)(tournament_id)

    async def _adopt_orphans(self) -> None:
        running = await self._running_ids()
        # Not the leases claimed with a call of their own (the ladder's): no tournaments.
        for tournament_id in self.held - set(running) - set(self._on_lost):
            await self._stopped(tournament_id)  # checks the store: maybe not made yet
        for tournament_id in running:
            if tournament_id in self.held or not await self.claim(tournament_id):
                continue
            log.warning("tournament %s has no coordinator: coordinating it here", tournament_id)
            self.adopted.append(tournament_id)
            try:
                await self._adopt(tournament_id)
            except Exception:
                log.exception("tournament %s: adopting it failed", tournament_id)
                await self.release(tournament_id)

    # ------------------------------------------------------------- games

    async def enqueue(self, source: str, idx: int, request: str, *, rated: bool) -> WorkItem:
        """Queue a game (or find it queued before) and wake the idle workers."""
        item = await self.work.enqueue(source, idx, request, rated=rated)
        if item.status == "queued":
            with contextlib.suppress(RedisError, OSError):
                await self.redis.publish(WORK_CHANNEL, b"")
        return item

    async def outcome(self, item: WorkItem, on_game: Callable[[str], None]) -> WorkItem | None:
        """Wait until ``item`` is done or failed (the item then), or gone (None: it was
        cancelled). ``on_game`` is called with the id of the game played for it, each
        time a worker starts one."""
        if item.status in ("done", "failed"):
            return item
        future: asyncio.Future[WorkItem | None] = asyncio.get_running_loop().create_future()
        self._watched[item.item_id] = (future, on_game)
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.get_running_loop().create_task(
                self._watch(), name="htttx: queued games"
            )
        try:
            return await future
        finally:
            self._watched.pop(item.item_id, None)

    async def _watch(self) -> None:
        """One read for every game this worker's coordinators wait on."""
        seen: dict[int, str] = {}
        failing = _Failing("reading the queued games")
        while self._watched:
            await asyncio.sleep(WATCH_INTERVAL)
            ids = list(self._watched)
            try:
                items = {item.item_id: item for item in await self.work.items(ids)}
            except (SQLAlchemyError, OSError) as error:
                failing.failed(error)
                continue
            failing.worked()
            for item_id in ids:
                entry = self._watched.get(item_id)
                if entry is None:
                    continue
                future, on_game = entry
                item = items.get(item_id)
                if item is None or item.status in ("done", "failed"):
                    if not future.done():
                        future.set_result(item)
                    seen.pop(item_id, None)
                elif item.game_id is not None and seen.get(item_id) != item.game_id:
                    seen[item_id] = item.game_id
                    on_game(item.game_id)

    async def cancel(self, source: str) -> None:
        """Stop ``source``'s games: the queued ones are dropped, the ones being played
        are aborted by their workers."""
        cancelled = await self.work.cancel(source)
        if cancelled:
            log.info("%s: %d game(s) in play cancelled", source, cancelled)

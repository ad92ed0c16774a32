"""Where a bot server's bots think: ``BotPool`` (threads, ``bot.threads``, or worker
processes) and the per-session queue that runs one session's calls into its bot one at
a time, in order.

What the adapter asks of a bot travels as picklable values (``ThinkCall``, and the
session's ``Configure`` and ``Reset``), so the same calls run in a thread or in a worker
process. See ``bot.serve`` for what a ``Deadline`` can and cannot do across processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import itertools
import logging
import math
import multiprocessing
import os
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeAlias

from bot.bot import BaseBot, Deadline, MoveDecision
from bot.jobs import Configure, Reset, ThinkJob
from bot.threads import Finished, PoolShutDownError, WorkerThreads
from game.rules import Position
from models import CLOSE_GOING_AWAY, Match, Player, PositionEvaluation

if TYPE_CHECKING:
    from bot.connection import Connection

__all__ = [
    "CLOSE_TIMEOUT",
    "MAX_QUEUED_CALLS",
    "SKIPPED",
    "BotPool",
    "Call",
    "SessionCalls",
    "ThinkCall",
    "TooManyCallsError",
    "has_warm_up",
    "warm_up_bots",
]

# One logger for the whole bot server.
log = logging.getLogger("bot.serve")

#: Calls (config, setup, jobs) queued for one session's bot. A client can only cause
#: this many by flooding the socket with packets the bot must see; it is closed then.
MAX_QUEUED_CALLS = 64
#: How long shutting down waits for sessions to close after telling them to.
CLOSE_TIMEOUT = 5.0


# -------------------------------------------------------------------- bot calls
#
# What the adapter asks of a bot, as picklable values so that the same calls run in a
# thread or in a worker process.


class ThinkCall(NamedTuple):
    """A move or evaluation for the bot. (A tuple: one is made a move, and pickled for
    a worker process.)"""

    kind: Literal["move", "eval"]
    position: Position
    side: Player
    match: Match


# The session's Configure and Reset actions travel as they are; a think job travels
# without the session's private copy of the position.
Call: TypeAlias = Configure | Reset | ThinkCall


def _perform(bot: BaseBot, call: Call, deadline: Deadline) -> Any:
    """Carry out one call on ``bot`` (in a worker thread or process)."""
    if not isinstance(call, ThinkCall):
        if isinstance(call, Configure):
            bot.on_config(call.depth, dict(call.extras))
        else:
            bot.on_setup(call.position)
        return None
    # Bots that override play() but read self.deadline elsewhere see this request's.
    bot.deadline = deadline
    if call.kind == "move":
        return MoveDecision.of(bot.play(call.position, call.side, call.match, deadline))
    evaluation = bot.evaluate_position(call.position, call.side, call.match, deadline)
    if isinstance(evaluation, PositionEvaluation):
        return evaluation
    # A dict such as {"heuristic": 0.3} is a readable answer too (validated here, in the
    # worker, so a bad one is the bot's failure).
    return PositionEvaluation.model_validate(evaluation)


@dataclass(eq=False)
class _BotSlot:
    """Where one session's bot lives: its class, and the instance (threads) or the
    worker process it is pinned to (processes)."""

    bot_class: type[BaseBot]
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    keep: bool = True  # False for a one-shot (stateless) call: nothing to remember
    shard: int = 0
    instance: BaseBot | None = None


def _call_in_thread(slot: _BotSlot, call: Call, deadline: Deadline) -> Any:
    # Created here, not on the event loop: a bot's constructor may load something big.
    if slot.instance is None:
        slot.instance = slot.bot_class()
    return _perform(slot.instance, call, deadline)


def _call_here(slot: _BotSlot, call: Call, deadline: Deadline) -> tuple[BaseException | None, Any]:
    """Carry out ``call`` on this thread (a bot that answers on the loop): its error
    (None if it returned) and result."""
    try:
        return None, _call_in_thread(slot, call, deadline)
    except Exception as error:
        return error, None


# The bots of the sessions pinned to this worker process, oldest first. Sessions forget
# theirs when they end; the bound only guards against a leak if that message is lost.
_worker_bots: OrderedDict[str, BaseBot] = OrderedDict()
_WORKER_BOTS_MAX = 10_000


def _call_in_worker(
    key: str, bot_class: type[BaseBot], call: Call, seconds: float | None, keep: bool
) -> Any:
    """Run in a worker process: the session's bot (created on first use) does ``call``."""
    bot = _worker_bots.get(key)
    if bot is None:
        bot = bot_class()
        if keep:
            _worker_bots[key] = bot
            while len(_worker_bots) > _WORKER_BOTS_MAX:
                _worker_bots.popitem(last=False)
    return _perform(bot, call, Deadline(seconds))


def _warm_up_in_worker(bot_class: type[BaseBot]) -> None:
    bot_class.warm_up()


def has_warm_up(bot_class: type[BaseBot]) -> bool:
    """Whether ``bot_class`` overrides ``BaseBot.warm_up`` (the default does nothing:
    no need to start a worker for it).

    >>> class Compiled(BaseBot):
    ...     @classmethod
    ...     def warm_up(cls) -> None: ...
    >>> has_warm_up(BaseBot), has_warm_up(Compiled)
    (False, True)
    """
    default = getattr(BaseBot.warm_up, "__func__", None)
    return getattr(bot_class.warm_up, "__func__", None) is not default


async def warm_up_bots(pool: BotPool, bot_classes: Iterable[type[BaseBot]]) -> None:
    """Warm up each of ``bot_classes`` that has a ``warm_up`` of its own in ``pool``, one
    after the other (they would share the cores), each with a line in the log before and
    after: a first start may take a while (SearchBot compiles its kernels).

    In a process that froze its startup heap (``gc.freeze``: ``game.serve.tune_gc``),
    what the warm-ups made is frozen too: it lives as long as the process (numba's
    compiled kernels are hundreds of thousands of objects), and left to the collector
    every full collection would walk it again. A game server that loaded SearchBot's
    kernels this way spent a quarter more CPU a move late in 1000-move games
    (bench/server.py) until they were frozen."""
    warmed = False
    for bot_class in dict.fromkeys(bot_classes):
        if not has_warm_up(bot_class):
            continue
        name = bot_class.name or bot_class.__name__
        log.info("%s: warming up before it plays (a first start may take a while)", name)
        started = time.monotonic()
        await pool.warm_up(bot_class)
        warmed = True
        log.info("%s: ready after %.1f s of warm-up", name, time.monotonic() - started)
    if warmed and gc.get_freeze_count():
        gc.collect()  # what the warm-ups threw away goes first, as in tune_gc
        gc.freeze()


def _forget_in_worker(key: str) -> None:
    _worker_bots.pop(key, None)


def _hand_back(loop: asyncio.AbstractEventLoop, finished: Finished, done: Future[Any]) -> None:
    """In the worker process's result thread: hand ``done``'s outcome to the loop."""
    if done.cancelled():  # dropped from the executor's queue at shutdown
        outcome: tuple[BaseException | None, Any] = (PoolShutDownError(), None)
    elif (error := done.exception()) is not None:
        outcome = (error, None)
    else:
        outcome = (None, done.result())
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
        loop.call_soon_threadsafe(finished, *outcome)


# ------------------------------------------------------------------------ pools


class BotPool:
    """Where bots think: a thread pool (default) or ``workers`` processes.

    A pool also keeps the live WebSocket sessions, so that shutting down can close them
    with 1001. Whoever creates a pool closes it: ``close_sessions()``, then ``shutdown()``
    (``create_app`` does both for a pool it created itself).

    Threads run any bot and keep ``Deadline`` fully working. Processes run bots in
    parallel beyond the GIL; each session is pinned to one worker process (round robin),
    which keeps the session's bot instance between calls. See the module docstring for
    what a ``Deadline`` can and cannot do across processes.
    """

    def __init__(
        self,
        workers: int | None = None,
        *,
        processes: bool = False,
        mp_context: str = "spawn",
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.processes = processes
        self.closing = False
        self._connections: set[Connection] = set()
        self._thread_pool: WorkerThreads | None = None
        self._shards: list[ProcessPoolExecutor] = []
        # Spawned, not forked: forking a process that runs an event loop and threads can
        # copy a held lock into the child and hang it.
        self._mp_context = multiprocessing.get_context(mp_context)
        if processes:
            count = workers or multiprocessing.cpu_count()
            self._shards = [self._new_shard() for _ in range(count)]
        else:
            # As many as ThreadPoolExecutor would start, by default.
            count = workers or min(32, (os.cpu_count() or 1) + 4)
            self._thread_pool = WorkerThreads(count, name="bot")
        self._next_shard = itertools.count()

    def __repr__(self) -> str:
        kind = f"{len(self._shards)} processes" if self.processes else "threads"
        return f"<BotPool {kind}, {len(self._connections)} sessions>"

    @property
    def sessions(self) -> int:
        """Number of live WebSocket sessions."""
        return len(self._connections)

    def add_session(self, connection: Connection) -> None:
        """Keep ``connection`` until ``remove_session``: shutting down closes it."""
        self._connections.add(connection)

    def remove_session(self, connection: Connection) -> None:
        self._connections.discard(connection)

    # ------------------------------------------------------------- running calls

    def _new_shard(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=1, mp_context=self._mp_context)

    def _slot(self, bot_class: type[BaseBot], *, keep: bool = True) -> _BotSlot:
        shard = next(self._next_shard) % len(self._shards) if self._shards else 0
        return _BotSlot(bot_class, keep=keep, shard=shard)

    def _start(self, slot: _BotSlot, call: Call, deadline: Deadline) -> asyncio.Future[Any]:
        """Start ``call`` (off the event loop, but see ``BaseBot.answers_on_loop``); the
        future gives its result."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def finished(error: BaseException | None, result: Any) -> None:
            if future.done():
                return
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)

        self._launch(slot, call, deadline, finished)
        return future

    def _launch(self, slot: _BotSlot, call: Call, deadline: Deadline, finished: Finished) -> None:
        """Start ``call``; ``finished(error, result)`` runs on the event loop once it is
        over (``error`` is a ``PoolShutDownError``, a ``RuntimeError``, if the pool dropped
        it at shutdown).

        One loop callback per call, straight from the worker: not ``run_in_executor``,
        whose future would take one more loop iteration to reach its waiter (threads:
        ``bot.threads``, with no future at all). A bot that
        declares ``answers_on_loop`` is called here and now when the pool has threads, and
        ``finished`` runs before this returns.
        """
        if self._thread_pool is not None and slot.bot_class.answers_on_loop:
            finished(*_call_here(slot, call, deadline))
            return
        loop = asyncio.get_running_loop()
        if self._thread_pool is not None:
            self._thread_pool.submit(_call_in_thread, (slot, call, deadline), loop, finished)
            return
        remaining = deadline.remaining()
        seconds = None if math.isinf(remaining) else remaining
        args = (slot.key, slot.bot_class, call, seconds, slot.keep)
        done = self._submit(slot.shard, _call_in_worker, *args)
        done.add_done_callback(functools.partial(_hand_back, loop, finished))

    def _submit(self, shard: int, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return self._shards[shard].submit(fn, *args)
        except BrokenProcessPool:
            # A worker died (a bot crashed the interpreter, or was killed): replace it.
            # The sessions pinned to it get fresh bot instances on their next call.
            log.error("bot worker process %d died; starting a new one", shard)
            self._shards[shard].shutdown(wait=False, cancel_futures=True)
            self._shards[shard] = self._new_shard()
            return self._shards[shard].submit(fn, *args)

    def _forget(self, slot: _BotSlot) -> None:
        """The session is over: drop its bot."""
        slot.instance = None
        if self._shards and not self.closing:
            # Queued behind the session's own calls on the same single worker, so it
            # cannot overtake them. Nobody waits for it.
            with contextlib.suppress(RuntimeError):  # the pool is shutting down
                self._submit(slot.shard, _forget_in_worker, slot.key)

    async def run_once(self, bot_class: type[BaseBot], job: ThinkJob, deadline: Deadline) -> Any:
        """One call on a fresh bot (the stateless API). Waits for the result; cancelling
        the caller abandons the call (its deadline should be cancelled first)."""
        call = ThinkCall(job.kind, job.position, job.side, job.match)
        return await self._start(self._slot(bot_class, keep=False), call, deadline)

    # ------------------------------------------------------------------ warming up

    async def warm_up(self, bot_class: type[BaseBot]) -> None:
        """``bot_class.warm_up()`` where the bot's calls run, never on the event loop: in
        a worker thread, or in every worker process (the first alone, then the others at
        once, so that a disk cache the first fills, numba's say, the others only load).
        Its error, if any, is raised here."""
        if self._thread_pool is not None:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

            def finished(error: BaseException | None, result: Any) -> None:
                if not future.done():
                    if error is None:
                        future.set_result(result)
                    else:
                        future.set_exception(error)

            self._thread_pool.submit(bot_class.warm_up, (), asyncio.get_running_loop(), finished)
            await future
            return
        shards = range(len(self._shards))
        for batch in (shards[:1], shards[1:]):
            warming = [self._submit(shard, _warm_up_in_worker, bot_class) for shard in batch]
            await asyncio.gather(*map(asyncio.wrap_future, warming))

    # ------------------------------------------------------------------ closing

    async def close_sessions(
        self, code: int = CLOSE_GOING_AWAY, reason: str = "the bot server is shutting down"
    ) -> None:
        """Close every live session with ``code`` (and refuse new ones); waits up to
        ``CLOSE_TIMEOUT`` for them to wind down."""
        self.closing = True
        connections = list(self._connections)
        if not connections:
            return
        log.info("closing %d bot sessions: %s", len(connections), reason)
        closing = [asyncio.ensure_future(c.close(code, reason)) for c in connections]
        _, pending = await asyncio.wait(closing, timeout=CLOSE_TIMEOUT)
        for task in pending:
            task.cancel()
        await asyncio.gather(*closing, return_exceptions=True)

    def shutdown(self) -> None:
        """Stop the workers. Queued calls are dropped; deadlines of running ones were
        cancelled when their sessions closed, so polling bots return promptly. A thread
        cannot be killed: a bot that never returns keeps its thread, but not the
        interpreter (the worker threads are daemons)."""
        self.closing = True
        for connection in self._connections:
            connection.cancel_deadlines()
        if self._thread_pool is not None:
            self._thread_pool.shutdown()
        for shard in self._shards:
            # A worker stuck in a bot would block the interpreter's exit; they hold
            # nothing worth finishing once the sessions are closed. Taken before
            # ``shutdown``, which forgets them: after it, the workers were left running
            # when the server exited, orphans, two more for each restart.
            processes: dict[int, Any] = getattr(shard, "_processes", None) or {}
            workers = list(processes.values())
            shard.shutdown(wait=False, cancel_futures=True)
            for process in workers:
                with contextlib.suppress(Exception):
                    process.terminate()


# ------------------------------------------------------------ per-session calls


def _tell(then: Then | None, future: asyncio.Future[Any]) -> None:
    if then is None:
        return
    try:
        then(future)
    except Exception:  # the caller's bug must not stop the session's next calls
        log.exception("a bot call's continuation failed")


class TooManyCallsError(Exception):
    """More calls queued for one session's bot than ``MAX_QUEUED_CALLS``."""


#: The result of a call skipped because its deadline was cancelled before it started.
SKIPPED: Any = object()


#: Told, on the event loop, that a submitted call's future has its outcome.
Then: TypeAlias = Callable[[asyncio.Future[Any]], None]


class SessionCalls:
    """The calls into one session's bot, run one at a time in submission order.

    ``submit`` is synchronous, so the order of calls is exactly the order of the
    session's actions; an idle bot starts at once, and each finished call starts the
    next (no task of its own: one loop iteration less per move). A call whose deadline
    was cancelled before it started is skipped: its future gives ``SKIPPED``.
    """

    def __init__(self, pool: BotPool, bot_class: type[BaseBot]) -> None:
        self._pool = pool
        self._slot = pool._slot(bot_class)
        # Fixed for the session: the pool's kind and the bot's class do not change.
        self._on_loop = pool._thread_pool is not None and bot_class.answers_on_loop
        self._waiting: deque[tuple[Call, Deadline, asyncio.Future[Any], Then | None]] = deque()
        self._busy = False
        self._closed = False

    @property
    def on_loop(self) -> bool:
        """Whether calls run on the event loop (``BaseBot.answers_on_loop``, threads):
        then a submitted call has its outcome when ``submit`` returns, if the bot was idle."""
        return self._on_loop

    def call_now(self, call: Call, deadline: Deadline) -> tuple[BaseException | None, Any] | None:
        """For a bot that answers on the loop (``on_loop``), idle: make ``call`` here and
        now and give its error (None if it returned) and result, without a future or a
        queue. None when that cannot be: calls are queued or running (``submit`` then)."""
        if self._busy or self._waiting or self._closed or not self._on_loop:
            return None
        self._busy = True
        try:
            return _call_here(self._slot, call, deadline)
        finally:
            self._busy = False

    def submit(
        self, call: Call, deadline: Deadline | None = None, then: Then | None = None
    ) -> asyncio.Future[Any]:
        """Queue ``call``; raises ``TooManyCallsError`` if too many are waiting.

        ``then(future)``, if given, runs as soon as the future has its outcome (not if
        it is cancelled), in the same loop callback: one iteration sooner than a done
        callback or a task awaiting the future."""
        if len(self._waiting) >= MAX_QUEUED_CALLS:
            raise TooManyCallsError
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append((call, deadline or Deadline(None), future, then))
        if not self._busy:
            self._start_next()
        return future

    def _start_next(self) -> None:
        while self._waiting and not self._closed:
            call, deadline, future, then = self._waiting.popleft()
            if future.done() or deadline.cancelled:
                if not future.done():
                    future.set_result(SKIPPED)
                    _tell(then, future)
                continue
            # The next call starts only once this one has returned from the bot, even
            # if its requester gave up on it meanwhile: calls never overlap. Busy before
            # the launch: a bot that answers on the loop has finished when it returns.
            self._busy = True
            try:
                self._pool._launch(
                    self._slot, call, deadline, functools.partial(self._finished, future, then)
                )
            except Exception as error:  # the pool is shut down
                self._busy = False
                future.set_exception(error)
                _tell(then, future)
                continue
            return

    def _finished(
        self,
        future: asyncio.Future[Any],
        then: Then | None,
        error: BaseException | None,
        result: Any,
    ) -> None:
        self._busy = False
        if not future.done():
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)
            _tell(then, future)
        self._start_next()

    def close(self) -> None:
        """The session is over: drop waiting calls and the bot."""
        self._closed = True
        for _, _, future, _ in self._waiting:
            future.cancel()
        self._waiting.clear()
        self._pool._forget(self._slot)

"""Serve bots over HTTP and WebSocket: ``python -m bot.serve`` (also ``htttx-bot``).

One port serves, for every hosted bot (at ``/`` or under a prefix such as ``/random``):

* ``GET <prefix>/capabilities.json`` — the bot's ``capabilities()``, with the
  ``api_root`` of both APIs replaced when ``--api-root`` is given;
* the WebSocket ``<prefix>/<bws api_root>/game``, and ``.../game/game`` too, because the
  prototype's game server dials that doubled path (``protocol.md``, "Known quirks"); a
  plain ``GET`` there answers 426 with a hint instead of a bare 404;
* ``POST <prefix>/<stateless api_root>/turn`` when the bot declares the stateless API.

The socket handler is a thin adapter around the pure state machine
``bot.session.BotSession``: it feeds it frames, finished jobs and due answers, and
carries out the actions it returns. Every session gets its own bot instance; calls into
one bot never overlap (a per-session queue runs them one at a time, in order) and never
run on the event loop, so heartbeats and other games keep flowing while a bot thinks.

Where bots think is a ``BotPool``:

* threads (the default): one bot instance per session in this process; ``Deadline``
  works fully (``report``, cancellation);
* processes (``--process-pool``): ``--workers`` worker processes, each session pinned to
  one of them (round robin), its bot instance living in that worker for the whole
  session and forgotten when the session ends. The bot class must be importable by its
  ``module:Class`` (workers are spawned fresh), and arguments and results are pickled.
  Across the process boundary a bot gets its remaining time as a fresh ``Deadline``, but
  ``Deadline.report`` and cancellation do not come back: when time runs out the session
  sends its legal fallback move instead of the bot's best so far, and an interrupted bot
  runs until it returns or its time is up.

The game server hosts the example bots on its own port with ``mount_bot`` (or
``bot_routes``) and a ``BotPool`` it owns and closes.

Programmatic use::

    app = create_app({"/random": RandomBot, "/center": CenterBot})
    async with serving(app) as server:      # uvicorn on 127.0.0.1, an ephemeral port
        print(server.url)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib
import importlib.util
import itertools
import logging
import math
import multiprocessing
import re
import sys
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.websockets import WebSocket

from bot.bot import BaseBot, Deadline, MoveDecision
from bot.session import (
    Action,
    BotSession,
    Cancel,
    Close,
    Configure,
    Reset,
    Send,
    Think,
    ThinkJob,
)
from bot.stateless import stateless_answer, stateless_job, stateless_problem
from game.rules import Position
from models import (
    CLOSE_GOING_AWAY,
    CLOSE_INTERNAL_ERROR,
    CLOSE_MESSAGE_TOO_BIG,
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    MATCH_CONFIG_KEY,
    BwsConfigCapability,
    BwsV1Alpha,
    Capabilities,
    Match,
    Player,
    PositionEvaluation,
    ProtocolError,
    StatelessMoveRequest,
    StatelessV1Alpha,
    clip_close_reason,
    dump_packet,
    parse_body,
)

__all__ = [
    "DEFAULT_BOT",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "MAX_BODY_BYTES",
    "MAX_FRAME_BYTES",
    "BotPool",
    "BotServer",
    "BotSpecError",
    "bot_routes",
    "create_app",
    "load_bot",
    "main",
    "mount_bot",
    "served_capabilities",
    "serving",
    "uvicorn_config",
]

log = logging.getLogger("bot.serve")

DEFAULT_BOT = "bot.bots:CenterBot"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8002  # the prototype's bot server port

#: Largest frame a client may send; a bigger one closes the session with 1009.
MAX_FRAME_BYTES = 1 << 20
#: Largest stateless request body; a bigger one is refused with 413.
MAX_BODY_BYTES = 1 << 20
#: Calls (config, setup, jobs) queued for one session's bot. A client can only cause
#: this many by flooding the socket with packets the bot must see; it is closed then.
MAX_QUEUED_CALLS = 64
#: How long shutting down waits for sessions to close after telling them to.
CLOSE_TIMEOUT = 5.0


# ------------------------------------------------------------------ loading bots


class BotSpecError(ValueError):
    """A ``module:Class`` that does not name a ``BaseBot`` subclass; the message says why."""


def load_bot(spec: str) -> type[BaseBot]:
    """The bot class named by ``"module:Class"`` (``Class`` may be dotted).

    >>> load_bot("bot.bot:BaseBot").__name__
    'BaseBot'
    >>> load_bot("bot.bot")
    Traceback (most recent call last):
    ...
    bot.serve.BotSpecError: 'bot.bot' is not module:Class (e.g. bot.bots:CenterBot)
    >>> load_bot("bot.bot:Deadline")
    Traceback (most recent call last):
    ...
    bot.serve.BotSpecError: 'bot.bot:Deadline' is not a BaseBot subclass (it is a class)
    """
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise BotSpecError(f"{spec!r} is not module:Class (e.g. bot.bots:CenterBot)")
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):  # a parent package is missing, or a bad name
        found = None
    if found is None:
        raise BotSpecError(f"{spec!r}: no module named {module_name!r}")
    try:
        target: object = importlib.import_module(module_name)
    except Exception as exc:  # the bot's own module is broken: say how, in one line
        raise BotSpecError(
            f"{spec!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    for name in attribute.split("."):
        try:
            target = getattr(target, name)
        except AttributeError:
            raise BotSpecError(f"{spec!r}: module {module_name!r} has no {attribute!r}") from None
    if not (isinstance(target, type) and issubclass(target, BaseBot)):
        kind = "a class" if isinstance(target, type) else f"a {type(target).__name__}"
        raise BotSpecError(f"{spec!r} is not a BaseBot subclass (it is {kind})")
    return target


# -------------------------------------------------------------------- bot calls
#
# What the adapter asks of a bot, as picklable values so that the same calls run in a
# thread or in a worker process.


@dataclass(frozen=True)
class _ThinkCall:
    kind: Literal["move", "eval"]
    position: Position
    side: Player
    match: Match


# The session's Configure and Reset actions travel as they are; a think job travels
# without the session's private copy of the position.
_Call: TypeAlias = Configure | Reset | _ThinkCall


def _perform(bot: BaseBot, call: _Call, deadline: Deadline) -> Any:
    """Carry out one call on ``bot`` (in a worker thread or process)."""
    if isinstance(call, Configure):
        bot.on_config(call.depth, dict(call.extras))
        return None
    if isinstance(call, Reset):
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


def _call_in_thread(slot: _BotSlot, call: _Call, deadline: Deadline) -> Any:
    # Created here, not on the event loop: a bot's constructor may load something big.
    if slot.instance is None:
        slot.instance = slot.bot_class()
    return _perform(slot.instance, call, deadline)


# The bots of the sessions pinned to this worker process, oldest first. Sessions forget
# theirs when they end; the bound only guards against a leak if that message is lost.
_worker_bots: OrderedDict[str, BaseBot] = OrderedDict()
_WORKER_BOTS_MAX = 10_000


def _call_in_worker(
    key: str, bot_class: type[BaseBot], call: _Call, seconds: float | None, keep: bool
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


def _forget_in_worker(key: str) -> None:
    _worker_bots.pop(key, None)


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
        self._connections: set[_Connection] = set()
        self._thread_pool: ThreadPoolExecutor | None = None
        self._shards: list[ProcessPoolExecutor] = []
        # Spawned, not forked: forking a process that runs an event loop and threads can
        # copy a held lock into the child and hang it.
        self._mp_context = multiprocessing.get_context(mp_context)
        if processes:
            count = workers or multiprocessing.cpu_count()
            self._shards = [self._new_shard() for _ in range(count)]
        else:
            self._thread_pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bot")
        self._next_shard = itertools.count()

    def __repr__(self) -> str:
        kind = f"{len(self._shards)} processes" if self.processes else "threads"
        return f"<BotPool {kind}, {len(self._connections)} sessions>"

    @property
    def sessions(self) -> int:
        """Number of live WebSocket sessions."""
        return len(self._connections)

    # ------------------------------------------------------------- running calls

    def _new_shard(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=1, mp_context=self._mp_context)

    def _slot(self, bot_class: type[BaseBot], *, keep: bool = True) -> _BotSlot:
        shard = next(self._next_shard) % len(self._shards) if self._shards else 0
        return _BotSlot(bot_class, keep=keep, shard=shard)

    def _start(self, slot: _BotSlot, call: _Call, deadline: Deadline) -> asyncio.Future[Any]:
        """Start ``call`` off the event loop; the future gives its result."""
        loop = asyncio.get_running_loop()
        if self._thread_pool is not None:
            return loop.run_in_executor(self._thread_pool, _call_in_thread, slot, call, deadline)
        remaining = deadline.remaining()
        seconds = None if math.isinf(remaining) else remaining
        args = (slot.key, slot.bot_class, call, seconds, slot.keep)
        return asyncio.wrap_future(self._submit(slot.shard, _call_in_worker, *args), loop=loop)

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
        call = _ThinkCall(job.kind, job.position, job.side, job.match)
        return await self._start(self._slot(bot_class, keep=False), call, deadline)

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
        cannot be killed: a bot that never returns keeps the interpreter from exiting."""
        self.closing = True
        for connection in self._connections:
            connection.cancel_deadlines()
        if self._thread_pool is not None:
            self._thread_pool.shutdown(wait=False, cancel_futures=True)
        for shard in self._shards:
            shard.shutdown(wait=False, cancel_futures=True)
            # A worker stuck in a bot would block the interpreter's exit; they hold
            # nothing worth finishing once the sessions are closed.
            processes: dict[int, Any] = getattr(shard, "_processes", None) or {}
            for process in list(processes.values()):
                with contextlib.suppress(Exception):
                    process.terminate()


# ------------------------------------------------------------ per-session calls


class _TooManyCalls(Exception):
    """More calls queued for one session's bot than ``MAX_QUEUED_CALLS``."""


#: The result of a call skipped because its deadline was cancelled before it started.
_SKIPPED: Any = object()


class _SessionCalls:
    """The calls into one session's bot, run one at a time in submission order.

    ``submit`` is synchronous, so the order of calls is exactly the order of the
    session's actions; an idle bot starts at once, and each finished call starts the
    next (no task of its own: one loop iteration less per move). A call whose deadline
    was cancelled before it started is skipped: its future gives ``_SKIPPED``.
    """

    def __init__(self, pool: BotPool, bot_class: type[BaseBot]) -> None:
        self._pool = pool
        self._slot = pool._slot(bot_class)
        self._waiting: deque[tuple[_Call, Deadline, asyncio.Future[Any]]] = deque()
        self._busy = False
        self._closed = False

    def submit(self, call: _Call, deadline: Deadline | None = None) -> asyncio.Future[Any]:
        """Queue ``call``; raises ``_TooManyCalls`` if too many are waiting."""
        if len(self._waiting) >= MAX_QUEUED_CALLS:
            raise _TooManyCalls
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append((call, deadline or Deadline(None), future))
        if not self._busy:
            self._start_next()
        return future

    def _start_next(self) -> None:
        while self._waiting and not self._closed:
            call, deadline, future = self._waiting.popleft()
            if future.done() or deadline.cancelled:
                if not future.done():
                    future.set_result(_SKIPPED)
                continue
            try:
                running = self._pool._start(self._slot, call, deadline)
            except Exception as error:  # the pool is shut down
                future.set_exception(error)
                continue
            # The next call starts only once this one has returned from the bot, even
            # if its requester gave up on it meanwhile: calls never overlap.
            self._busy = True
            running.add_done_callback(functools.partial(self._finished, future))
            return

    def _finished(self, future: asyncio.Future[Any], running: asyncio.Future[Any]) -> None:
        self._busy = False
        if not future.done():
            if running.cancelled():  # dropped from the executor's queue at shutdown
                future.set_exception(RuntimeError("the bot pool was shut down"))
            elif (error := running.exception()) is not None:
                future.set_exception(error)
            else:
                future.set_result(running.result())
        self._start_next()

    def close(self) -> None:
        """The session is over: drop waiting calls and the bot."""
        self._closed = True
        for _, _, future in self._waiting:
            future.cancel()
        self._waiting.clear()
        self._pool._forget(self._slot)


# ------------------------------------------------------------------- WebSocket


class _Connection:
    """Carries out a ``BotSession``'s actions on one WebSocket.

    Tasks: the reader (frames in) and one task per think job (waits for the bot,
    answers in time). ``run`` owns them and cancels them when the socket closes.
    """

    _ids = itertools.count(1)

    def __init__(
        self, websocket: WebSocket, session: BotSession, calls: _SessionCalls, bot_name: str
    ) -> None:
        self._ws = websocket
        self._session = session
        self._calls = calls
        self._name = f"{bot_name}#{next(self._ids)}"
        self._jobs: set[asyncio.Task[None]] = set()
        self._deadlines: dict[int, Deadline] = {}
        # Sends of one batch of actions stay together and batches go out in the order
        # the session produced them (asyncio.Lock is FIFO).
        self._out = asyncio.Lock()
        self._closed = False
        self._reader: asyncio.Task[None] | None = None

    async def run(self) -> None:
        self._reader = asyncio.create_task(self._read(), name=f"{self._name} reader")
        try:
            await asyncio.wait({self._reader})
            if not self._reader.cancelled() and (error := self._reader.exception()):
                log.error("%s: reader failed", self._name, exc_info=error)
        finally:
            self._closed = True
            self._reader.cancel()
            for action in self._feed(self._session.connection_lost, time.monotonic()):
                if isinstance(action, Cancel):
                    self._cancel(action.job_id)
            self.cancel_deadlines()
            tasks = [self._reader, *self._jobs]
            for task in tasks:
                task.cancel()
            # Prompt: none of them waits on a bot directly (only on futures).
            await asyncio.gather(*tasks, return_exceptions=True)
            self._calls.close()

    async def close(self, code: int, reason: str) -> None:
        """Close the socket with ``code`` and ``reason`` (once) and stop reading."""
        if self._closed:
            return
        self._closed = True
        level = logging.INFO if code in (CLOSE_NORMAL, CLOSE_GOING_AWAY) else logging.WARNING
        log.log(level, "%s: closing (%d): %s", self._name, code, reason)
        # The peer may be gone already; there is nobody left to tell then.
        with contextlib.suppress(Exception):
            await self._ws.close(code, clip_close_reason(reason))
        self._stop_reading()

    def cancel_deadlines(self) -> None:
        for deadline in self._deadlines.values():
            deadline.cancel()

    # ------------------------------------------------------------------ inputs

    async def _read(self) -> None:
        while not self._closed:
            message = await self._ws.receive()
            if message["type"] == "websocket.disconnect":
                log.info("%s: client disconnected (%s)", self._name, message.get("code"))
                self._closed = True
                return
            text: str | None = message.get("text")
            now = time.monotonic()
            if text is None:  # a binary frame: the session says why it cannot take it
                size = len(message.get("bytes") or b"")
                await self._apply(self._feed(self._session.receive_binary, size, now), now)
                return
            if len(text) > MAX_FRAME_BYTES:
                await self.close(
                    CLOSE_MESSAGE_TOO_BIG, f"frame of {len(text)} bytes; at most {MAX_FRAME_BYTES}"
                )
                return
            await self._apply(self._feed(self._session.receive, text, now), now)

    def _feed(self, step: Callable[..., list[Action]], *args: Any) -> list[Action]:
        """One step of the session; a bug in it closes this session, not the server."""
        try:
            return step(*args)
        except Exception:
            log.exception("%s: session failed in %s", self._name, step.__name__)
            return [Close(CLOSE_INTERNAL_ERROR, "internal error in the bot framework")]

    def _start_job(self, job: ThinkJob, received: float) -> bool:
        """Queue ``job`` for the bot at once, in the order of the session's actions, and
        start the task that answers it; False if too many calls are queued."""
        elapsed = time.monotonic() - received
        limit = None if job.time_limit is None else max(0.0, job.time_limit - elapsed)
        deadline = Deadline(limit)
        call = _ThinkCall(job.kind, job.position, job.side, job.match)
        try:
            future = self._calls.submit(call, deadline)
        except _TooManyCalls:
            return False
        # Registered now, so that a Cancel right behind the Think reaches it.
        self._deadlines[job.job_id] = deadline
        task = asyncio.create_task(
            self._think(job, future, deadline, received), name=f"{self._name} job"
        )
        self._jobs.add(task)
        # A callback, not a ``finally``: it also runs for a task cancelled before it began.
        task.add_done_callback(functools.partial(self._job_over, job.job_id, future))
        return True

    def _job_over(self, job_id: int, future: asyncio.Future[Any], task: asyncio.Task[None]) -> None:
        self._jobs.discard(task)
        self._deadlines.pop(job_id, None)
        future.cancel()  # nobody waits for it any more

    async def _think(
        self, job: ThinkJob, future: asyncio.Future[Any], deadline: Deadline, received: float
    ) -> None:
        """Wait for the bot's answer to ``job`` (answering for it when its time is due)
        and hand it to the session."""
        if job.answer_within is not None:
            wait = job.answer_within - (time.monotonic() - received)
            await asyncio.wait({future}, timeout=max(0.0, wait))
            if not future.done():
                best = deadline.best
                # Answered for the bot: whatever it finds now is void, so tell a
                # polling bot to stop (the next job waits for it to return).
                deadline.cancel()
                now = time.monotonic()
                await self._apply(self._feed(self._session.answer_due, job.job_id, best, now))
        try:
            result = await future
        except Exception as error:
            log.error("%s: the bot failed on job %d", self._name, job.job_id, exc_info=error)
            actions = self._feed(self._session.job_failed, job.job_id, error, time.monotonic())
        else:
            if result is _SKIPPED:  # cancelled before the bot started
                return
            actions = self._feed(self._session.job_done, job.job_id, result, time.monotonic())
        await self._apply(actions)

    # ----------------------------------------------------------------- actions

    async def _apply(self, actions: Sequence[Action], received: float | None = None) -> None:
        if not actions:
            return
        received = time.monotonic() if received is None else received
        async with self._out:
            for action in actions:
                if isinstance(action, Send):
                    await self._send(action)
                elif isinstance(action, Think):
                    if not self._start_job(action.job, received):
                        await self.close(
                            CLOSE_POLICY_VIOLATION, "too many requests queued for the bot"
                        )
                elif isinstance(action, Cancel):
                    self._cancel(action.job_id)
                elif isinstance(action, Configure):
                    await self._submit(action)
                elif isinstance(action, Reset):
                    # A copy: the session keeps using its own position.
                    await self._submit(Reset(action.position.copy()))  # the bot's own copy
                elif isinstance(action, Close):
                    await self.close(action.code, action.reason)

    async def _send(self, action: Send) -> None:
        if action.warning is not None:
            log.warning("%s: %s", self._name, action.warning)
        if self._closed:
            return
        text = action.data().decode()
        try:
            await self._ws.send_text(text)
        except Exception as exc:  # uvicorn, starlette and websockets each raise their own
            log.info("%s: send failed, the client is gone: %r", self._name, exc)
            self._closed = True
            self._stop_reading()

    async def _submit(self, call: _Call) -> None:
        try:
            future = self._calls.submit(call)
        except _TooManyCalls:
            await self.close(CLOSE_POLICY_VIOLATION, "too many requests queued for the bot")
            return
        future.add_done_callback(self._report_hook_failure)

    def _report_hook_failure(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and (error := future.exception()) is not None:
            log.error("%s: the bot's on_config/on_setup failed", self._name, exc_info=error)

    def _cancel(self, job_id: int) -> None:
        deadline = self._deadlines.get(job_id)
        if deadline is not None:
            deadline.cancel()

    def _stop_reading(self) -> None:
        """End the reader, which ends the session (unless we are the reader: it then
        sees ``_closed`` and returns)."""
        if self._reader is not None and self._reader is not asyncio.current_task():
            self._reader.cancel()


async def _socket_endpoint(
    websocket: WebSocket, bot_class: type[BaseBot], capabilities: BwsV1Alpha, pool: BotPool
) -> None:
    await websocket.accept()
    if pool.closing:
        await websocket.close(CLOSE_GOING_AWAY, "the bot server is shutting down")
        return
    connection = _Connection(
        websocket, BotSession(capabilities), _SessionCalls(pool, bot_class), bot_class.__name__
    )
    pool._connections.add(connection)
    try:
        await connection.run()
    finally:
        pool._connections.discard(connection)


async def _not_a_socket(request: Request) -> Response:
    """A plain GET on the socket path: say what the path is, instead of a bare 404."""
    return PlainTextResponse(
        f"{request.url.path} is the bot's WebSocket (basic_websocket v1-alpha): "
        "connect with a WebSocket client",
        status_code=426,
        headers={"Upgrade": "websocket", "Connection": "Upgrade"},
    )


# ------------------------------------------------------------------- stateless

_stateless_job_ids = itertools.count(1)


async def read_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None if it is over ``limit`` bytes (a declared length over it
    is refused before reading; otherwise reading stops at the limit). The game server
    reads its REST bodies with it too."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdecimal() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


async def _client_gone(request: Request) -> None:
    """Returns when the HTTP client disconnects (after the body has been read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _stateless_turn(
    request: Request,
    bot_class: type[BaseBot],
    capabilities: StatelessV1Alpha,
    pool: BotPool,
    free_setup: bool,
) -> Response:
    """``POST .../turn``: one move from a fresh bot, answered within the time limit."""
    body = await read_body(request, MAX_BODY_BYTES)
    if body is None:
        return PlainTextResponse(f"request body over {MAX_BODY_BYTES} bytes", status_code=413)
    try:
        turn = parse_body(StatelessMoveRequest, body)
    except ProtocolError as error:
        status = 400 if str(error).startswith("not valid JSON") else 422
        return PlainTextResponse(str(error), status_code=status)
    try:
        job = stateless_job(
            turn, capabilities, Match(), next(_stateless_job_ids), free_setup=free_setup
        )
    except ValueError as error:  # a position no game can reach, a finished game, ...
        return PlainTextResponse(str(error), status_code=422)

    deadline = Deadline(job.time_limit)
    thinking = asyncio.ensure_future(pool.run_once(bot_class, job, deadline))
    # Without a time limit the client may wait forever (the spec allows it), but not
    # after it has hung up.
    watcher = asyncio.ensure_future(_client_gone(request))
    try:
        await asyncio.wait(
            {thinking, watcher}, timeout=job.answer_within, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        watcher.cancel()
    decision: MoveDecision | None = None
    if not thinking.done():
        decision = deadline.best
        deadline.cancel()
        thinking.cancel()  # abandons the call; the bot's late answer is not wanted
        if watcher.done() and not watcher.cancelled():
            log.info("%s: the stateless client went away", bot_class.__name__)
            return Response(status_code=499)  # nobody reads it; for the access log
    elif (failure := thinking.exception()) is not None:
        log.error("%s: the bot failed on a stateless turn", bot_class.__name__, exc_info=failure)
    else:
        decision = thinking.result()
    if (problem := stateless_problem(job, decision)) is not None:
        log.warning("%s: stateless turn: %s; sent the fallback move", bot_class.__name__, problem)
    answer = stateless_answer(job, decision)  # None or illegal: the fallback move
    return Response(dump_packet(answer), media_type="application/json")


# ---------------------------------------------------------------------- routes


def _root(api_root: str) -> str:
    """``api_root`` as a path segment without slashes ('' for the bot's base)."""
    return api_root.strip("/")


def _path(*segments: str) -> str:
    return "/" + "/".join(segment for segment in segments if segment)


def served_capabilities(bot_class: type[BaseBot], api_root: str | None = None) -> Capabilities:
    """The capabilities document served for ``bot_class``: its own, with the
    ``api_root`` of both APIs set to ``api_root`` when given.

    >>> from bot.bot import BaseBot
    >>> caps = served_capabilities(BaseBot, "api/v1")
    >>> caps.bws_v1_alpha.api_root, caps.stateless_v1_alpha.api_root
    ('api/v1', 'api/v1')

    A bot that declares ``config`` is also said to accept the game's settings
    (``MATCH_CONFIG_KEY``), which its ``BotSession`` reads for it.
    """
    capabilities = bot_class.capabilities().model_copy(deep=True)
    if (bws := capabilities.bws_v1_alpha) is not None and bws.config is not None:
        # BotSession reads the game's settings from this key for every bot that takes
        # config: say so, so that game servers may send it.
        flagged = {**bws.config.model_dump(by_alias=True), MATCH_CONFIG_KEY: True}
        bws.config = BwsConfigCapability.model_validate(flagged)
    if api_root is not None:
        if (bws := capabilities.bws_v1_alpha) is not None:
            bws.api_root = _root(api_root)
        if (stateless := capabilities.stateless_v1_alpha) is not None:
            stateless.api_root = _root(api_root)
    return capabilities


def bot_routes(
    bot_class: type[BaseBot], pool: BotPool, *, api_root: str | None = None
) -> list[BaseRoute]:
    """The routes of one bot, relative to its base URL: mount them under a prefix
    (``Mount("/random", routes=...)``, or ``mount_bot``) or put them at the root.

    ``pool`` runs the bot's calls and keeps its sessions; its owner closes it.
    """
    capabilities = served_capabilities(bot_class, api_root)
    document = dump_packet(capabilities)

    async def capabilities_json(request: Request) -> Response:
        return Response(document, media_type="application/json")

    routes: list[BaseRoute] = [Route("/capabilities.json", capabilities_json, methods=["GET"])]
    if (bws := capabilities.bws_v1_alpha) is not None:
        features = bws

        async def game(websocket: WebSocket) -> None:
            await _socket_endpoint(websocket, bot_class, features, pool)

        socket = _path(_root(bws.api_root), "game")
        # The prototype's game server dials the doubled path (protocol.md, known quirks).
        for path in (socket, socket + "/game"):
            routes += [WebSocketRoute(path, game), Route(path, _not_a_socket, methods=["GET"])]
    if (stateless := capabilities.stateless_v1_alpha) is not None:
        declared = stateless
        # The stateless API has no free_setup of its own: a bot that plays any board on
        # its socket plays any board here too.
        free_setup = bool(capabilities.bws_v1_alpha and capabilities.bws_v1_alpha.free_setup)

        async def turn(request: Request) -> Response:
            return await _stateless_turn(request, bot_class, declared, pool, free_setup)

        routes.append(Route(_path(_root(stateless.api_root), "turn"), turn, methods=["POST"]))
    if capabilities.bws_v1_alpha is None and capabilities.stateless_v1_alpha is None:
        log.warning("%s declares neither API: no game server can seat it", bot_class.__name__)
    return routes


def mount_bot(
    prefix: str, bot_class: type[BaseBot], pool: BotPool, *, api_root: str | None = None
) -> Mount:
    """``bot_class`` served under ``prefix`` (e.g. ``"/random"``): its capabilities at
    ``<prefix>/capabilities.json``. For the game server to host bots on its own port."""
    return Mount(_path(_root(prefix)), routes=bot_routes(bot_class, pool, api_root=api_root))


def create_app(
    bots: Mapping[str, type[BaseBot]] | type[BaseBot],
    *,
    api_root: str | None = None,
    pool: BotPool | None = None,
    workers: int | None = None,
    processes: bool = False,
) -> Starlette:
    """A Starlette app serving one bot at ``/``, or several under prefixes
    (``{"/random": RandomBot, "/center": CenterBot}``; ``"/"`` puts one at the root).

    Without ``pool``, the app makes one (``workers``, ``processes``) and closes it on
    shutdown; a given ``pool`` stays its owner's to close. ``app.state.bot_pool`` is the
    pool either way.
    """
    table = {"/": bots} if isinstance(bots, type) else dict(bots)
    if not table:
        raise ValueError("no bots to serve")
    own_pool = pool is None
    bot_pool = pool if pool is not None else BotPool(workers, processes=processes)
    routes: list[BaseRoute] = []
    seen: set[str] = set()
    for prefix, bot_class in table.items():
        segment = _root(prefix)
        if segment in seen:
            raise ValueError(f"two bots under the prefix {prefix!r}")
        seen.add(segment)
        if segment:
            routes.append(mount_bot(segment, bot_class, bot_pool, api_root=api_root))
        else:
            routes.extend(bot_routes(bot_class, bot_pool, api_root=api_root))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if own_pool:
                await bot_pool.close_sessions()
                bot_pool.shutdown()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.bot_pool = bot_pool
    return app


# ---------------------------------------------------------------------- server


def uvicorn_config(
    app: Starlette, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, log_level: str = "info"
) -> uvicorn.Config:
    """uvicorn settings for a bot server: the fastest installed stack, frames bounded."""
    ws = "websockets-sansio" if "websockets-sansio" in uvicorn.config.WS_PROTOCOLS else "websockets"
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        ws=ws,
        # The handler refuses frames over MAX_FRAME_BYTES with a reason (1009); this is
        # the hard stop for anything far bigger, before it is buffered whole.
        ws_max_size=2 * MAX_FRAME_BYTES,
        ws_per_message_deflate=False,  # small JSON frames: compression costs more than it saves
        loop="uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        http="httptools" if importlib.util.find_spec("httptools") else "h11",
        lifespan="on",
        log_level=log_level,
        timeout_graceful_shutdown=math.ceil(CLOSE_TIMEOUT),
    )


class ListeningServer(uvicorn.Server):
    """uvicorn's server that tells where it listens (``port``, ``url``; useful with port
    0) and calls ``on_started`` once it does. The game server extends it too."""

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        on_started: Callable[[Any], None] | None = None,
    ) -> None:
        super().__init__(config)
        self._on_started = on_started

    @property
    def port(self) -> int:
        """The port bound (useful with port 0)."""
        return int(self.servers[0].sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://{self.config.host}:{self.port}"

    async def startup(self, sockets: list[Any] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self._on_started is not None:
            self._on_started(self)


class BotServer(ListeningServer):
    """uvicorn's server, closing bot sessions with 1001 "going away" on shutdown
    (uvicorn itself would drop them with 1012) before it stops."""

    def __init__(
        self,
        config: uvicorn.Config,
        pool: BotPool,
        *,
        on_started: Callable[[BotServer], None] | None = None,
    ) -> None:
        super().__init__(config, on_started=on_started)
        self.pool = pool

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        await self.pool.close_sessions(CLOSE_GOING_AWAY, "the bot server is shutting down")
        await super().shutdown(sockets)


@contextlib.asynccontextmanager
async def serving(
    app: Starlette, *, host: str = DEFAULT_HOST, port: int = 0, log_level: str = "warning"
) -> AsyncIterator[BotServer]:
    """Run ``app`` (from ``create_app``) on this event loop while the block runs; port 0
    picks a free port (``server.port``, ``server.url``). For tests and benchmarks."""
    pool: BotPool = app.state.bot_pool
    server = BotServer(uvicorn_config(app, host=host, port=port, log_level=log_level), pool)
    # In-process: signals stay with whoever runs the loop.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve(), name="bot server")
    try:
        while not server.started:
            if task.done():
                task.result()  # the startup error, e.g. the port is taken
                raise RuntimeError("the bot server stopped during startup")
            await asyncio.sleep(0.01)
        yield server
    finally:
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=3 * CLOSE_TIMEOUT)
        except TimeoutError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


# ------------------------------------------------------------------------- CLI

_PREFIX = re.compile(r"^[A-Za-z0-9._-]+$")


def _parse_bots(specs: Sequence[str]) -> dict[str, type[BaseBot]]:
    """``--bot`` values -> prefix -> class. One bot is served at the root; several under
    ``/<name>``, where ``name`` is given as ``name=module:Class`` or is the class name in
    lower case."""
    named: list[tuple[str | None, type[BaseBot]]] = []
    for spec in specs:
        name, equals, target = spec.rpartition("=")
        if equals and not _PREFIX.match(name):
            raise BotSpecError(f"{spec!r}: the name before '=' may use letters, digits, . _ -")
        named.append((name or None, load_bot(target)))
    if len(named) == 1:
        only_name, only_class = named[0]
        return {only_name or "/": only_class}
    table: dict[str, type[BaseBot]] = {}
    for given, bot_class in named:
        prefix = given or bot_class.__name__.lower()
        if prefix in table:
            raise BotSpecError(f"two bots under /{prefix}: name them with --bot name=module:Class")
        table[prefix] = bot_class
    return table


def _print_urls(
    server: BotServer, table: Mapping[str, type[BaseBot]], api_root: str | None
) -> None:
    base = f"http://{server.config.host}:{server.port}"
    for prefix, bot_class in table.items():
        home = base + (_path(_root(prefix)) if _root(prefix) else "")
        capabilities = served_capabilities(bot_class, api_root)
        lines = [f"{bot_class.__name__}: {home}/capabilities.json"]
        if (bws := capabilities.bws_v1_alpha) is not None:
            socket = "ws" + home[4:] + _path(_root(bws.api_root), "game")
            lines.append(f"  socket     {socket}")
        if (stateless := capabilities.stateless_v1_alpha) is not None:
            lines.append(f"  stateless  {home}{_path(_root(stateless.api_root), 'turn')}")
        print("\n".join(lines), flush=True)


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="htttx-bot",
        description="Serve HTTTX bots: capabilities, WebSocket and stateless API on one port.",
        epilog=(
            "One --bot is served at the root; several are served under /<name> "
            "(name=module:Class, or the class name in lower case)."
        ),
    )
    parser.add_argument(
        "--bot",
        action="append",
        metavar="[NAME=]MODULE:CLASS",
        help=f"a BaseBot subclass to serve (repeatable; default {DEFAULT_BOT})",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="interface (default %(default)s)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default %(default)s)")
    parser.add_argument(
        "--api-root",
        metavar="PATH",
        help="api_root of both APIs, relative to capabilities.json (default: the bot's own)",
    )
    parser.add_argument(
        "--workers", type=int, metavar="N", help="threads (or processes) the bots think in"
    )
    parser.add_argument(
        "--process-pool",
        action="store_true",
        help="think in N worker processes instead of threads (bots must be importable)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="default %(default)s",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``htttx-bot`` / ``python -m bot.serve``; returns the exit status."""
    parser = _arguments()
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        print(f"{parser.prog}: error: --workers must be at least 1", file=sys.stderr)
        return 2
    try:
        table = _parse_bots(args.bot or [DEFAULT_BOT])
    except BotSpecError as error:
        print(f"{parser.prog}: error: --bot {error}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # The app owns the pool and shuts it down in its lifespan: after a SIGTERM uvicorn
    # re-raises the signal once it has shut down, so nothing after run() would run.
    app = create_app(
        table, api_root=args.api_root, workers=args.workers, processes=args.process_pool
    )
    server = BotServer(
        uvicorn_config(app, host=args.host, port=args.port, log_level=args.log_level),
        app.state.bot_pool,
        on_started=lambda started: _print_urls(started, table, args.api_root),
    )
    # uvicorn handles SIGINT/SIGTERM: it stops accepting, BotServer closes the sessions
    # with 1001, the lifespan stops the workers, and then uvicorn re-raises the signal
    # (SIGINT arrives here as KeyboardInterrupt).
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    return 0


if __name__ == "__main__":
    # Through the package module, so worker processes and pickles name bot.serve, not
    # __main__.
    from bot.serve import main as _main

    sys.exit(_main())

"""The WebSocket end of a bot server: ``Connection`` carries out a ``BotSession``'s
actions on one socket (frames in, packets out, jobs to the session's bot and their
answers back), and ``socket_endpoint`` is the Starlette handler that runs one.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine, Generator, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.websockets import WebSocket

from bot.bot import BaseBot, Deadline
from bot.jobs import Action, Cancel, Close, Configure, Reset, Send, Think, ThinkJob, time_left
from bot.pool import SKIPPED, BotPool, Call, SessionCalls, ThinkCall, TooManyCallsError
from bot.session import BotSession
from models import (
    CLOSE_GOING_AWAY,
    CLOSE_INTERNAL_ERROR,
    CLOSE_MESSAGE_TOO_BIG,
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    BwsV1Alpha,
    clip_close_reason,
)
from wire.frames import text_frame
from wire.inbound_ws import frame_writer, refusal, set_frame_reader

__all__ = [
    "MAX_FRAME_BYTES",
    "Connection",
    "Turns",
    "not_a_socket",
    "socket_endpoint",
    "start_eagerly",
]

# One logger for the whole bot server.
log = logging.getLogger("bot.serve")

#: Largest frame a client may send; a bigger one closes the session with 1009.
MAX_FRAME_BYTES = 1 << 20


# ------------------------------------------------------------------- WebSocket


class Connection:
    """Carries out a ``BotSession``'s actions on one WebSocket.

    Tasks: the reader (frames in) and one task per think job with a time to answer by
    (waits for the bot, answers in time). A job without one has no task: its answer is
    sent from the loop callback that brings it (``start_eagerly``; a task finishes a
    send that must wait), and a bot that answers on the loop is called by the reader
    itself (``SessionCalls.call_now``). ``run`` owns the tasks and cancels them when the
    socket closes.

    Under ``GuardedWebSocketProtocol`` (what ``bot.serve`` runs) a frame that arrives
    while nothing is under way (no send of ours waiting, nothing queued before it) is
    not queued for the reader at all: ``_take_frame`` handles it in the protocol's
    callback as it is read, so an on-loop bot's answer is written before that callback
    returns, with no task woken and the socket never paused. Anything else goes to the
    reader, in order.
    """

    _ids = itertools.count(1)

    def __init__(
        self, websocket: WebSocket, session: BotSession, calls: SessionCalls, bot_name: str
    ) -> None:
        self._ws = websocket
        self._session = session
        self._calls = calls
        self._name = f"{bot_name}#{next(self._ids)}"
        self._answer_name = f"{self._name} answer"  # made once, not once a move
        # Fixed for the session (the pool's kind, the bot's class).
        self._on_loop = calls.on_loop
        self._jobs: set[asyncio.Task[None]] = set()
        self._deadlines: dict[int, Deadline] = {}
        #: The timers of jobs with a time to answer by (``_answer_due``), by job id.
        self._due: dict[int, asyncio.TimerHandle] = {}
        # Sends of one batch of actions stay together and batches go out in the order
        # the session produced them.
        self._out = Turns()
        self._closed = False
        self._reader: asyncio.Task[None] | None = None
        # Under ``GuardedWebSocketProtocol`` (what ``bot.serve`` runs), a packet is
        # written as one whole frame at once, skipping the ASGI send's layers (about 3
        # µs a packet; docs/performance.md); under another server, None: ASGI sends.
        self._write_frame = frame_writer(websocket.scope)

    async def run(self) -> None:
        self._reader = asyncio.create_task(self._read(), name=f"{self._name} reader")
        set_frame_reader(self._ws.scope, self._take_frame)
        try:
            await asyncio.wait({self._reader})
            if not self._reader.cancelled() and (error := self._reader.exception()):
                log.error("%s: reader failed", self._name, exc_info=error)
        finally:
            self._closed = True
            set_frame_reader(self._ws.scope, None)
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
            # A task cancelled from outside (the reader, when a frame read in the
            # protocol's callback closed the socket) keeps its CancelledError, whose
            # traceback holds this connection: let go of the tasks, or the connection
            # and its session wait for the cyclic GC.
            self._reader = None
            self._jobs.clear()

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
        for due in self._due.values():
            due.cancel()
        self._due.clear()

    # ------------------------------------------------------------------ inputs

    async def _read(self) -> None:
        while not self._closed:
            message = await self._ws.receive()
            if message["type"] == "websocket.disconnect":
                if (refused := refusal(self._ws.scope)) is not None:
                    # Closed by the protocol (wire.inbound_ws), which sent the reason.
                    log.warning("%s: closed the connection: %s", self._name, refused)
                else:
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

    def _take_frame(self, text: str) -> bool:
        """``FrameReader`` (``wire.inbound_ws``): handle ``text`` now, in the protocol's
        callback, if nothing is under way: the session's step, then its actions, up to
        their first wait (a task finishes what must wait, holding the turn to send, so
        the frames after it go to the reader and queue behind it). False, and the reader
        takes it from the queue, when a batch of ours holds the turn or for what only
        the reader does (a frame over the limit)."""
        if self._closed or not self._out.free or len(text) > MAX_FRAME_BYTES:
            return False
        now = time.monotonic()
        actions = self._feed(self._session.receive, text, now)
        if actions:
            self._apply_eagerly(actions, now)
        return True

    def _apply_eagerly(self, actions: Sequence[Action], received: float | None = None) -> None:
        """Carry out ``actions`` from a loop callback, here and now up to their first
        wait; a task of ``_jobs`` finishes what must wait (``start_eagerly``)."""
        turns = self._out
        if not turns.take_free():  # a batch of ours holds the turn: these go after it
            coro = self._apply(actions, received)
        else:
            try:
                rest = self._apply_at_once(actions, received)
            except BaseException:
                turns.give()
                raise
            if not rest:
                turns.give()
                return
            coro = self._apply_holding(rest, received)
        task = start_eagerly(coro, name=self._answer_name)
        if task is not None:
            self._jobs.add(task)
            task.add_done_callback(self._jobs.discard)

    def _apply_at_once(self, actions: Sequence[Action], received: float | None) -> list[Action]:
        """Carry out, with plain calls, the actions at the front of ``actions`` that
        need no wait: sends the socket takes whole at once (``_written_at_once``), jobs
        for the bot (and the answer of one that answers on the loop) and cancels. What
        is left, from the first action that may wait, is returned (``_apply_waiting``).
        Only for the holder of the turn: sends go out in the order of their batches.

        For an on-loop bot's move these calls are all there is to do: no coroutine is
        made and driven for them, which cost more than the rest of the answer."""
        todo = list(actions)
        for index, action in enumerate(todo):  # grows when a bot answers on the loop
            if isinstance(action, Send):
                if not self._written_at_once(action):
                    return todo[index:]
            elif isinstance(action, Think):
                if received is None:
                    received = time.monotonic()
                answered = self._start_job(action.job, received)
                if answered is None:  # too many calls queued
                    return todo[index:]
                todo += answered
            elif isinstance(action, Cancel):
                self._cancel(action.job_id)
            else:
                return todo[index:]
        return []

    def _feed(self, step: Callable[..., list[Action]], *args: Any) -> list[Action]:
        """One step of the session; a bug in it closes this session, not the server."""
        try:
            return step(*args)
        except Exception:
            log.exception("%s: session failed in %s", self._name, step.__name__)
            return [Close(CLOSE_INTERNAL_ERROR, "internal error in the bot framework")]

    def _start_job(self, job: ThinkJob, received: float) -> list[Action] | None:
        """Queue ``job`` for the bot at once, in the order of the session's actions:
        its answer is handed on by a callback (``_answered``), and if it has a time to
        answer by, a timer answers for the bot when that comes (``_answer_due``). None
        if too many calls are queued. A bot that answers on the loop
        (``BaseBot.answers_on_loop``) may have answered already: the result is then the
        session's actions for that answer; if it has not, a task waits for it."""
        deadline = Deadline(time_left(job.time_limit, time.monotonic() - received))
        call = ThinkCall(job.kind, job.position, job.side, job.match)
        if self._on_loop:
            outcome = self._calls.call_now(call, deadline)
            if outcome is not None:  # answered already: no future, no task
                return self._outcome(job, *outcome)
        else:
            # No task until the answer is in (``_answered``); a job with a time to answer
            # by has a timer for it (``_answer_due``): a task awaiting the answer with a
            # timeout cost the bot server a loop iteration and tens of µs a move.
            self._deadlines[job.job_id] = deadline
            if job.answer_within is not None:
                self._due[job.job_id] = asyncio.get_running_loop().call_later(
                    _due_in(job, received), self._answer_due, job, deadline
                )
            try:
                self._calls.submit(call, deadline, functools.partial(self._answered, job))
            except TooManyCallsError:
                self._deadlines.pop(job.job_id, None)
                self._forget_due(job.job_id)
                return None
            return []
        try:
            future = self._calls.submit(call, deadline)
        except TooManyCallsError:
            return None
        if future.done():
            return self._job_answered(job, future)
        # Registered now, so that a Cancel right behind the Think reaches it.
        self._deadlines[job.job_id] = deadline
        task = asyncio.create_task(
            self._think(job, future, deadline, received), name=f"{self._name} job"
        )
        self._jobs.add(task)
        # A callback, not a ``finally``: it also runs for a task cancelled before it began.
        task.add_done_callback(functools.partial(self._job_over, job.job_id, future))
        return []

    def _answered(self, job: ThinkJob, future: asyncio.Future[Any]) -> None:
        """The bot's call for ``job`` is over: hand its outcome to the session, and send
        what it says (a task finishes what must wait)."""
        self._deadlines.pop(job.job_id, None)
        self._forget_due(job.job_id)
        if self._closed:
            return
        actions = self._job_answered(job, future)
        if actions:
            # Sent from this loop callback, not from a task's first step an iteration
            # later; a send that must wait is finished by a task.
            self._apply_eagerly(actions)

    def _answer_due(self, job: ThinkJob, deadline: Deadline) -> None:
        """The time to answer ``job`` by has come, and the bot has not: the session
        answers for it (its best move reported so far, else a fallback), and the bot is
        told to stop (a polling bot returns; whatever it returns is void)."""
        self._due.pop(job.job_id, None)
        if self._closed:
            return
        actions = self._answer_for(job, deadline)
        if actions:
            self._apply_eagerly(actions)

    def _answer_for(self, job: ThinkJob, deadline: Deadline) -> list[Action]:
        """The session's answer for the bot to ``job``, whose time is due: its best move
        so far. Whatever the bot finds now is void, so a polling bot is told to stop
        (the next job waits for it to return)."""
        best = deadline.best
        deadline.cancel()
        return self._feed(self._session.answer_due, job.job_id, best, time.monotonic())

    def _forget_due(self, job_id: int) -> None:
        due = self._due.pop(job_id, None)
        if due is not None:
            due.cancel()

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
            await asyncio.wait({future}, timeout=_due_in(job, received))
            if not future.done():
                await self._apply(self._answer_for(job, deadline))
        with contextlib.suppress(Exception):  # read below, by _job_answered
            await future
        await self._apply(self._job_answered(job, future))

    def _job_answered(self, job: ThinkJob, future: asyncio.Future[Any]) -> list[Action]:
        """The session's actions for the finished ``future`` of ``job``."""
        error = future.exception()
        return self._outcome(job, error, None if error is not None else future.result())

    def _outcome(self, job: ThinkJob, error: BaseException | None, result: Any) -> list[Action]:
        """The session's actions for the bot's call for ``job``, which raised ``error``
        or returned ``result``."""
        if error is not None:
            log.error("%s: the bot failed on job %d", self._name, job.job_id, exc_info=error)
            return self._feed(self._session.job_failed, job.job_id, error, time.monotonic())
        if result is SKIPPED:  # cancelled before the bot started
            return []
        return self._feed(self._session.job_done, job.job_id, result, time.monotonic())

    # ----------------------------------------------------------------- actions

    async def _apply(self, actions: Sequence[Action], received: float | None = None) -> None:
        if not actions:
            return
        if not self._out.take_free():
            await self._out.take()
        await self._apply_holding(actions, received)

    async def _apply_holding(self, actions: Sequence[Action], received: float | None) -> None:
        """``_apply`` once the turn is taken; gives it back at the end."""
        received = time.monotonic() if received is None else received
        try:
            todo = self._apply_at_once(actions, received)
            while todo:
                await self._apply_waiting(todo[0])
                todo = self._apply_at_once(todo[1:], received)
        finally:
            self._out.give()

    async def _apply_waiting(self, action: Action) -> None:
        """Carry out an action that ``_apply_at_once`` left: one that may wait."""
        if isinstance(action, Send):  # one the socket would not take at once
            await self._send(action)
        elif isinstance(action, Think):  # refused by _start_job
            await self.close(CLOSE_POLICY_VIOLATION, "too many requests queued for the bot")
        elif isinstance(action, Configure):
            await self._submit(action)
        elif isinstance(action, Reset):
            # A copy: the session keeps using its own position.
            await self._submit(Reset(action.position.copy()))  # the bot's own copy
        elif isinstance(action, Close):
            await self.close(action.code, action.reason)

    def _written_at_once(self, action: Send) -> bool:
        """Whether ``action`` needs nothing more (its warning, if any, logged): its
        packet written whole into the socket now (the common case), or the socket
        closed. False if it must go through ASGI, which waits for room (``_send``)."""
        if action.warning is not None:
            log.warning("%s: %s", self._name, action.warning)
        if self._closed:
            return True
        write = self._write_frame
        return write is not None and write(text_frame(action.data()))

    async def _send(self, action: Send) -> None:
        """Send what ``_written_at_once`` could not write: through ASGI, in the turn
        that keeps it in order with the packets written at once."""
        data = action.data()
        try:
            await self._ws.send_text(data.decode())
        except Exception as exc:  # uvicorn, starlette and websockets each raise their own
            log.info("%s: send failed, the client is gone: %r", self._name, exc)
            self._closed = True
            self._stop_reading()

    async def _submit(self, call: Call) -> None:
        try:
            future = self._calls.submit(call)
        except TooManyCallsError:
            await self.close(CLOSE_POLICY_VIOLATION, "too many requests queued for the bot")
            return
        future.add_done_callback(self._report_hook_failure)

    def _report_hook_failure(self, future: asyncio.Future[Any]) -> None:
        if not future.cancelled() and (error := future.exception()) is not None:
            log.error("%s: the bot's on_config/on_setup failed", self._name, exc_info=error)

    def _cancel(self, job_id: int) -> None:
        self._forget_due(job_id)  # nobody waits for its answer now
        deadline = self._deadlines.get(job_id)
        if deadline is not None:
            deadline.cancel()

    def _stop_reading(self) -> None:
        """End the reader, which ends the session (unless we are the reader: it then
        sees ``_closed`` and returns)."""
        if self._reader is not None and self._reader is not asyncio.current_task():
            self._reader.cancel()


def _due_in(job: ThinkJob, received: float) -> float:
    """Seconds until ``job``, received at ``received``, must be answered (0 if past)."""
    due = time_left(job.answer_within, time.monotonic() - received)
    assert due is not None
    return due


# ------------------------------------------------------------------ turns to send


class Turns:
    """Whose turn it is to send: what ``asyncio.Lock`` gives (one holder, the others
    served in the order they asked), but a free turn is taken with a plain call,
    ``take_free``, instead of awaiting a coroutine: the reader of an on-loop bot takes
    one a move, and nearly always finds it free.

    Invariant: whoever waits, waits behind a holder (a waiter that gives up leaves the
    queue; a waiter handed the turn as it gave up passes it on).
    """

    __slots__ = ("_held", "_waiting")

    def __init__(self) -> None:
        self._held = False
        self._waiting: deque[asyncio.Future[None]] = deque()

    @property
    def free(self) -> bool:
        """Whether nobody holds the turn (and so nobody waits for it)."""
        return not self._held

    def take_free(self) -> bool:
        """Take the turn if nobody holds it; False (and nothing taken) otherwise."""
        if self._held:
            return False
        self._held = True
        return True

    async def take(self) -> None:
        """Take the turn, after everyone who asked before."""
        if self.take_free():
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.give()  # handed the turn, but gone: the next one has it
            else:  # (``give`` may have dropped it already, done as it is)
                with contextlib.suppress(ValueError):
                    self._waiting.remove(waiter)
            raise

    def give(self) -> None:
        """Hand the turn to the longest waiter, or free it."""
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)  # held still: by the waiter now
                return
        self._held = False


# ------------------------------------------------------------------ eager start


def start_eagerly(coro: Coroutine[Any, None, None], *, name: str) -> asyncio.Task[None] | None:
    """Run ``coro`` here and now, up to the point where it first waits: None if it
    finished, else the task (named ``name``) that runs the rest. What Python 3.12's eager
    task factory does for every task, for one coroutine on 3.11: a send that finds the
    socket ready (nearly always) goes out without a task and a loop iteration.

    ``coro`` must not raise before it waits: an error there is logged, as a task's
    would be.
    """
    try:
        waiting_on = coro.send(None)
    except StopIteration:
        return None
    except Exception:
        log.exception("%s failed", name)
        return None
    return asyncio.create_task(_resume(coro, waiting_on), name=name)


class _Wait:
    """Awaiting it yields ``what`` (what a coroutine yielded: the future it waits on, or
    None for a bare yield) to the task, which wakes when that future is done."""

    __slots__ = ("_what",)

    def __init__(self, what: Any) -> None:
        self._what = what

    def __await__(self) -> Generator[Any, None, None]:
        yield self._what


async def _resume(coro: Coroutine[Any, None, None], waiting_on: Any) -> None:
    """Drive ``coro``, which waits on ``waiting_on``, to its end; a cancellation of this
    task is passed into it, as if it were the task's own coroutine."""
    while True:
        try:
            await _Wait(waiting_on)
        except BaseException as error:  # cancelled (or thrown in): it is coro's to handle
            try:
                waiting_on = coro.throw(error)
            except StopIteration:
                return
            continue
        try:
            waiting_on = coro.send(None)
        except StopIteration:
            return


async def socket_endpoint(
    websocket: WebSocket, bot_class: type[BaseBot], capabilities: BwsV1Alpha, pool: BotPool
) -> None:
    await websocket.accept()
    if pool.closing:
        await websocket.close(CLOSE_GOING_AWAY, "the bot server is shutting down")
        return
    connection = Connection(
        websocket,
        BotSession(capabilities, lend_positions=not bot_class.keeps_positions),
        SessionCalls(pool, bot_class),
        bot_class.__name__,
    )
    pool.add_session(connection)
    try:
        await connection.run()
    finally:
        pool.remove_session(connection)


async def not_a_socket(request: Request) -> Response:
    """A plain GET on the socket path: say what the path is, instead of a bare 404."""
    return PlainTextResponse(
        f"{request.url.path} is the bot's WebSocket (basic_websocket v1-alpha): "
        "connect with a WebSocket client",
        status_code=426,
        headers={"Upgrade": "websocket", "Connection": "Upgrade"},
    )

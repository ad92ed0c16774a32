"""The bot server's socket adapter (``bot.connection``) and the per-session calls of
``bot.pool``, on a real event loop: what happens where, and in which order.

Served games over real sockets are in ``test_bot_serve.py``.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, ClassVar

from bot.bot import BaseBot, Deadline
from bot.connection import start_eagerly
from bot.pool import BotPool, SessionCalls, ThinkCall
from game.rules import Position
from models import Match, Player

# ------------------------------------------------------------------ start_eagerly


async def test_a_coroutine_that_never_waits_runs_to_its_end_before_start_eagerly_returns() -> None:
    done: list[str] = []

    async def send() -> None:
        done.append("sent")

    assert start_eagerly(send(), name="send") is None
    assert done == ["sent"]


async def test_a_coroutine_that_waits_is_finished_by_the_task_start_eagerly_returns() -> None:
    gate: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    steps: list[str] = []

    async def send() -> None:
        steps.append("before")
        steps.append(await gate)
        await asyncio.sleep(0)  # a bare yield, too
        steps.append("after")

    task = start_eagerly(send(), name="send")
    assert task is not None and steps == ["before"]
    gate.set_result("woken")
    await asyncio.wait_for(task, 5)
    assert steps == ["before", "woken", "after"]


async def test_an_error_after_the_wait_is_the_tasks() -> None:
    gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def send() -> None:
        await gate

    task = start_eagerly(send(), name="send")
    assert task is not None
    gate.set_exception(ConnectionResetError("gone"))
    try:
        await asyncio.wait_for(task, 5)
    except ConnectionResetError as error:
        assert str(error) == "gone"
    else:
        raise AssertionError("the error was lost")


async def test_cancelling_the_task_cancels_the_coroutine_where_it_waits() -> None:
    gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    seen: list[str] = []

    async def send() -> None:
        try:
            await gate
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    task = start_eagerly(send(), name="send")
    assert task is not None
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled() and seen == ["cancelled"] and gate.cancelled()


async def test_a_coroutine_may_handle_its_cancellation_and_finish() -> None:
    gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def send() -> str:
        try:
            await gate
        except asyncio.CancelledError:
            return "cleaned up"
        return "sent"

    task = start_eagerly(send(), name="send")  # type: ignore[arg-type]
    assert task is not None
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert not task.cancelled() and task.exception() is None


# ---------------------------------------------------------------------- call_now


class _OnLoop(BaseBot):
    answers_on_loop: ClassVar[bool] = True
    threads: ClassVar[list[int]] = []

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        self.threads.append(threading.get_ident())
        if position.stones_left == 0:
            raise RuntimeError("no stones left")
        return (1, 0), (2, 0)


def _call() -> ThinkCall:
    return ThinkCall("move", Position(), Player.O, Match())


async def test_call_now_answers_an_idle_on_loop_bot_here_and_now() -> None:
    pool = BotPool()
    try:
        calls = SessionCalls(pool, _OnLoop)
        outcome = calls.call_now(_call(), Deadline(None))
        assert outcome is not None
        error, decision = outcome
        assert error is None and [p.as_tuple() for p in decision.pieces] == [(1, 0), (2, 0)]
        assert _OnLoop.threads[-1] == threading.get_ident()
    finally:
        pool.shutdown()


async def test_call_now_gives_the_bots_error_as_a_value() -> None:
    class Failing(_OnLoop):
        def play(self, *args: Any) -> Any:
            raise ValueError("no idea")

    pool = BotPool()
    try:
        outcome = SessionCalls(pool, Failing).call_now(_call(), Deadline(None))
        assert outcome is not None
        error, result = outcome
        assert isinstance(error, ValueError) and result is None
    finally:
        pool.shutdown()


async def test_call_now_declines_a_bot_that_thinks_in_threads_or_processes() -> None:
    class InThreads(BaseBot):
        pass

    threads, processes = BotPool(), BotPool(1, processes=True)
    try:
        assert SessionCalls(threads, InThreads).call_now(_call(), Deadline(None)) is None
        # answers_on_loop is ignored with worker processes: the call goes to the worker.
        assert SessionCalls(processes, _OnLoop).call_now(_call(), Deadline(None)) is None
    finally:
        threads.shutdown()
        processes.shutdown()


async def test_call_now_declines_once_the_session_is_over() -> None:
    pool = BotPool()
    try:
        calls = SessionCalls(pool, _OnLoop)
        calls.close()
        assert calls.call_now(_call(), Deadline(None)) is None
    finally:
        pool.shutdown()

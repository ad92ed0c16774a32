"""The bot server's socket adapter (``bot.connection``) and the per-session calls of
``bot.pool``, on a real event loop: what happens where, and in which order.

Served games over real sockets are in ``test_bot_serve.py``.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, ClassVar

from bot.bot import BaseBot, Deadline
from bot.connection import Turns, start_eagerly
from bot.pool import BotPool, SessionCalls, ThinkCall
from game.rules import Position
from models import Match, Player

# ------------------------------------------------------------------------ Turns


async def _holder(turns: Turns, name: str, log: list[str], gate: asyncio.Event) -> None:
    """Take the turn (the plain way when free, as ``Connection._apply`` does), note it,
    hold it until ``gate`` opens, give it back."""
    if not turns.take_free():
        await turns.take()
    try:
        log.append(name)
        await gate.wait()
    finally:
        turns.give()


async def test_turns_go_one_at_a_time_in_the_order_they_were_asked() -> None:
    turns, gate = Turns(), asyncio.Event()
    log: list[str] = []
    tasks = [asyncio.create_task(_holder(turns, name, log, gate)) for name in "abcd"]
    await asyncio.sleep(0)
    assert log == ["a"]  # the others wait behind the holder
    gate.set()
    await asyncio.gather(*tasks)
    assert log == ["a", "b", "c", "d"]
    assert turns.take_free()  # and it is free again


async def test_a_free_turn_is_taken_without_waiting_and_a_held_one_is_not() -> None:
    turns = Turns()
    assert turns.take_free()
    assert not turns.take_free()
    turns.give()
    assert turns.take_free()


async def test_a_waiter_that_gives_up_leaves_the_queue() -> None:
    turns, gate = Turns(), asyncio.Event()
    log: list[str] = []
    first = asyncio.create_task(_holder(turns, "a", log, gate))
    quitter = asyncio.create_task(_holder(turns, "b", log, gate))
    last = asyncio.create_task(_holder(turns, "c", log, gate))
    await asyncio.sleep(0)
    quitter.cancel()
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(first, last)
    assert quitter.cancelled() and log == ["a", "c"]
    assert turns.take_free()


async def test_a_waiter_handed_the_turn_as_it_gives_up_passes_it_on() -> None:
    turns, gate = Turns(), asyncio.Event()
    log: list[str] = []
    assert turns.take_free()  # held here
    quitter = asyncio.create_task(_holder(turns, "b", log, gate))
    last = asyncio.create_task(_holder(turns, "c", log, gate))
    await asyncio.sleep(0)
    turns.give()  # to the quitter, which is cancelled before it runs
    quitter.cancel()
    gate.set()
    await asyncio.gather(last, quitter, return_exceptions=True)
    assert quitter.cancelled() and log == ["c"]
    assert turns.take_free()


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

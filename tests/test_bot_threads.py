"""The bot server's worker threads (``bot.threads``): calls run off the loop, their
outcomes come back on it, and shutting down drops what no thread has taken."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from bot.threads import PoolShutDownError, WorkerThreads

TIMEOUT = 10.0  # only against hangs


class Outcomes:
    """Collects ``finished(error, result)`` calls on the loop, with the thread they ran on."""

    def __init__(self) -> None:
        self.seen: list[tuple[BaseException | None, Any, int]] = []
        self._changed = asyncio.Event()

    def finished(self, error: BaseException | None, result: Any) -> None:
        self.seen.append((error, result, threading.get_ident()))
        self._changed.set()

    async def wait_for(self, count: int) -> None:
        async with asyncio.timeout(TIMEOUT):
            while len(self.seen) < count:
                self._changed.clear()
                await self._changed.wait()


async def test_a_call_runs_in_a_worker_thread_and_its_result_comes_back_on_the_loop() -> None:
    threads = WorkerThreads(2, name="test")
    outcomes = Outcomes()
    ran_on: list[str] = []

    def work(a: int, b: int) -> int:
        ran_on.append(threading.current_thread().name)
        return a + b

    try:
        threads.submit(work, (2, 3), asyncio.get_running_loop(), outcomes.finished)
        await outcomes.wait_for(1)
    finally:
        threads.shutdown()
    [(error, result, loop_thread)] = outcomes.seen
    assert (error, result) == (None, 5)
    assert loop_thread == threading.get_ident()  # finished runs on the loop's thread
    assert ran_on[0].startswith("test_") and ran_on[0] != threading.current_thread().name


async def test_an_exception_is_the_calls_outcome() -> None:
    threads = WorkerThreads(1, name="test")
    outcomes = Outcomes()

    def fail() -> None:
        raise ValueError("no move")

    try:
        threads.submit(fail, (), asyncio.get_running_loop(), outcomes.finished)
        await outcomes.wait_for(1)
    finally:
        threads.shutdown()
    [(error, result, _)] = outcomes.seen
    assert isinstance(error, ValueError) and str(error) == "no move" and result is None


async def test_no_more_threads_than_workers_and_calls_wait_their_turn_in_order() -> None:
    threads = WorkerThreads(2, name="test")
    outcomes = Outcomes()
    release = threading.Event()
    names: set[str] = set()

    def work(index: int) -> int:
        names.add(threading.current_thread().name)
        release.wait(TIMEOUT)
        return index

    loop = asyncio.get_running_loop()
    try:
        for index in range(6):
            threads.submit(work, (index,), loop, outcomes.finished)
        await asyncio.sleep(0.05)  # two calls run, four wait
        assert outcomes.seen == []
        release.set()
        await outcomes.wait_for(6)
    finally:
        threads.shutdown()
    assert sorted(result for _, result, _ in outcomes.seen) == list(range(6))
    assert len(names) <= 2


async def test_shutdown_drops_the_calls_no_thread_took_and_lets_the_running_one_finish() -> None:
    threads = WorkerThreads(1, name="test")
    outcomes = Outcomes()
    started, release = threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        release.wait(TIMEOUT)
        return "finished"

    loop = asyncio.get_running_loop()
    threads.submit(slow, (), loop, outcomes.finished)
    threads.submit(str, ("never",), loop, outcomes.finished)
    threads.submit(str, ("nor this",), loop, outcomes.finished)
    assert await asyncio.to_thread(started.wait, TIMEOUT)
    threads.shutdown()
    release.set()
    await outcomes.wait_for(3)
    first, *dropped = outcomes.seen
    assert first[:2] == (None, "finished")
    for error, result, _ in dropped:
        assert isinstance(error, PoolShutDownError) and isinstance(error, RuntimeError)
        assert result is None
    with pytest.raises(PoolShutDownError):
        threads.submit(str, (), loop, outcomes.finished)


async def test_the_threads_stop_after_shutdown() -> None:
    before = set(threading.enumerate())
    threads = WorkerThreads(3, name="test")
    outcomes = Outcomes()
    loop = asyncio.get_running_loop()
    for index in range(3):
        threads.submit(str, (index,), loop, outcomes.finished)
    await outcomes.wait_for(3)
    threads.shutdown()
    started = [thread for thread in threading.enumerate() if thread not in before]
    for thread in started:
        await asyncio.to_thread(thread.join, TIMEOUT)
        assert not thread.is_alive()


def test_workers_must_be_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        WorkerThreads(0, name="test")


async def test_a_call_never_waits_for_another_while_a_thread_may_still_be_started() -> None:
    # Two calls submitted together while one thread is idle: the second gets a thread
    # of its own instead of waiting for the first (a bot that thinks for long).
    threads = WorkerThreads(4, name="test")
    outcomes = Outcomes()
    loop = asyncio.get_running_loop()
    try:
        threads.submit(str, ("warm",), loop, outcomes.finished)
        await outcomes.wait_for(1)  # one thread, idle now
        both_running = threading.Barrier(2, timeout=TIMEOUT)
        for _ in range(2):
            threads.submit(both_running.wait, (), loop, outcomes.finished)
        await outcomes.wait_for(3)
    finally:
        threads.shutdown()
    assert [error for error, _, _ in outcomes.seen] == [None, None, None]

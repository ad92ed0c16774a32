"""SendWatchdog: one timer bounds every send of a writer task (game/watchdog.py)."""

from __future__ import annotations

import asyncio

import pytest

from game.watchdog import SendWatchdog

TIMEOUT = 30.0  # only against hangs


async def test_quick_sends_pass_and_a_stuck_one_times_out() -> None:
    watchdog = SendWatchdog(0.1)
    sent: list[int] = []

    async def send(n: int) -> None:
        sent.append(n)

    for n in range(100):
        await watchdog.send(send(n))
    with pytest.raises(TimeoutError, match=r"^the send took 0.1 s or more$"):
        await watchdog.send(asyncio.sleep(TIMEOUT))
    # The task was not left cancelled: it goes on sending.
    await watchdog.send(send(100))
    assert sent == list(range(101))
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]
    watchdog.close()


async def test_a_timer_set_by_an_earlier_send_does_not_cut_a_later_one_short() -> None:
    # The first send sets the timer for 1 s later; the second starts 0.7 s in and takes
    # 0.6 s, so it is under way when that timer fires, but has not been for 1 s.
    watchdog = SendWatchdog(1.0)
    await watchdog.send(asyncio.sleep(0))
    await asyncio.sleep(0.7)
    await watchdog.send(asyncio.sleep(0.6))
    watchdog.close()


async def test_a_cancel_from_outside_stays_a_cancel() -> None:
    watchdog = SendWatchdog(TIMEOUT)
    started = asyncio.Event()

    async def stuck() -> None:
        started.set()
        await asyncio.sleep(TIMEOUT)

    task = asyncio.create_task(watchdog.send(stuck()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    watchdog.close()


async def test_an_error_of_the_send_passes_through() -> None:
    watchdog = SendWatchdog(TIMEOUT)

    async def broken() -> None:
        raise ConnectionResetError("gone")

    with pytest.raises(ConnectionResetError, match="gone"):
        await watchdog.send(broken())
    watchdog.close()


@pytest.mark.parametrize("timeout", [0, -1.0, float("nan")])
def test_the_timeout_must_be_positive(timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout must be more than 0 seconds"):
        SendWatchdog(timeout)

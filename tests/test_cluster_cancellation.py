"""The cluster's background loops end when cancelled, even when redis-py turns the
cancellation of a command under way into a ``ConnectionError``, or swallows it and
returns (it may do either): they catch Redis errors to try again at the next
heartbeat, and must not lose their own cancellation with them, or ``ClusterNode.close``
waits for them until the server's shutdown gives up (30 s). No Redis here: the commands
are stand-ins that behave as redis-py does when cancelled."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from game.cluster_queue import QueueLeadership
from game.cluster_redis import raise_if_cancelled
from game.cluster_sweep import Sweeper

TIMEOUT = 10.0  # only against hangs


class CancelledMidCommand:
    """A Redis command that waits and, when its task is cancelled the first time,
    raises redis-py's ``ConnectionError`` (``swallow``: returns as if it had answered);
    a loop that lost the cancellation can still be stopped by a second one. ``started``
    is set once it waits."""

    def __init__(self, swallow: bool) -> None:
        self.swallow = swallow
        self.started = asyncio.Event()
        self.calls = 0

    async def __call__(self, *_args: Any, **_kwargs: Any) -> Any:
        self.calls += 1
        self.started.set()
        try:
            await asyncio.sleep(TIMEOUT * 3)
        except asyncio.CancelledError:
            if self.calls > 1:
                raise
            if self.swallow:
                return None
            raise RedisConnectionError("Connection closed by server.") from None


async def cancelled_mid_command(task: asyncio.Task[None], command: CancelledMidCommand) -> None:
    """Cancel ``task`` while ``command`` waits: it must end as cancelled, without
    sending the command again."""
    await asyncio.wait_for(command.started.wait(), TIMEOUT)
    task.cancel()
    try:
        async with asyncio.timeout(TIMEOUT):
            while not task.done() and command.calls == 1:
                await asyncio.sleep(0.01)
        assert task.done() and task.cancelled(), "the loop went on after its cancellation"
        assert command.calls == 1
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def node(**fields: Any) -> Any:
    leases = SimpleNamespace(heartbeat=0.0, lease_ms=1000)
    return SimpleNamespace(leases=leases, stopping=asyncio.Event(), **fields)


@pytest.mark.parametrize("swallow", [False, True], ids=["as an error", "swallowed"])
async def test_the_sweeper_ends_when_cancelled_mid_command(swallow: bool) -> None:
    sweeper = Sweeper(node(), store=None)  # type: ignore[arg-type]  # never reached
    command = CancelledMidCommand(swallow)
    sweeper.sweep = command  # type: ignore[method-assign]
    await cancelled_mid_command(asyncio.create_task(sweeper.run()), command)


@pytest.mark.parametrize("swallow", [False, True], ids=["as an error", "swallowed"])
async def test_the_queue_leadership_ends_when_cancelled_mid_command(swallow: bool) -> None:
    command = CancelledMidCommand(swallow)
    leadership = QueueLeadership(node(), hub=None)  # type: ignore[arg-type]
    leadership._step = command  # type: ignore[method-assign]
    await cancelled_mid_command(asyncio.create_task(leadership._run()), command)


async def test_an_error_outside_a_cancellation_is_left_to_the_caller() -> None:
    """Outside a cancellation the error is the loop's to log and retry: nothing raised."""
    raise_if_cancelled(RedisConnectionError("Connection reset by peer"))

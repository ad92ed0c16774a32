"""A time limit on the sends of one writer task, with one timer for all of them.

Every packet a game sends (a move request to a bot, an update to each spectator) is
written by a task of its own connection, and a send must not hang for ever on a peer
that stopped reading. ``asyncio.timeout`` around each send bounds it, but costs a
``Timeout`` object, a timer in the loop's heap and its cancellation per send, several
microseconds each time, where nearly every send is over before it could ever expire:
with 1000 spectators, that is 1000 timers per move.

``SendWatchdog`` keeps one timer per writer instead: a send only notes when it began
(``loop.time()``) and that it ended. The timer fires at the earliest moment the send
under way could be overdue; if that send is still running, the writer task is
cancelled and the send raises ``TimeoutError``, as under ``asyncio.timeout``;
otherwise the timer is set again for the send under way, or not at all while the writer
is idle.

>>> import asyncio
>>> async def demo() -> str:
...     watchdog = SendWatchdog(0.05)
...     await watchdog.send(asyncio.sleep(0))  # quick: nothing happens
...     try:
...         await watchdog.send(asyncio.sleep(10))  # stuck: stopped after 0.05 s
...     except TimeoutError as error:
...         return str(error)
...     return "not stopped"
>>> asyncio.run(demo())
'the send took 0.05 s or more'
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

__all__ = ["SendWatchdog"]


class SendWatchdog:
    """Bounds each ``send`` awaited by one task to ``timeout`` seconds.

    One send at a time (a writer's sends follow each other); ``close`` stops the timer.
    """

    __slots__ = ("_expired", "_handle", "_loop", "_since", "_task", "timeout")

    def __init__(self, timeout: float) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be more than 0 seconds, got {timeout!r}")
        self.timeout = timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[object] | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._since: float | None = None  # when the send under way began
        self._expired = False

    async def send(self, send: Awaitable[None]) -> None:
        """Await ``send``; ``TimeoutError`` if it is not over within ``timeout`` seconds
        (it is then cancelled, like the body of ``asyncio.timeout``)."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._since = since = loop.time()
        if self._handle is None:
            self._handle = loop.call_at(since + self.timeout, self._check)
        try:
            await send
        except asyncio.CancelledError:
            # Ours only if we cancelled, and nobody else asked for a cancel too.
            if self._expired:
                self._expired = False
                assert self._task is not None
                if self._task.uncancel() == 0:
                    raise TimeoutError(f"the send took {self.timeout:g} s or more") from None
            raise
        finally:
            self._since = None

    def close(self) -> None:
        """Stop the timer (a send under way is no longer bounded)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _check(self) -> None:
        self._handle = None
        since = self._since
        if since is None or self._task is None or self._task.done():
            return  # idle: the next send sets the timer again
        assert self._loop is not None
        due = since + self.timeout
        if self._loop.time() >= due:
            self._expired = True
            self._task.cancel()
        else:
            self._handle = self._loop.call_at(due, self._check)

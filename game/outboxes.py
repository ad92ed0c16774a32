"""What a game sends never waits on a peer: an ``Outbox`` per seat connection, a
``SpectatorQueue`` per spectator.

An outbox is a bounded queue written to its connection by a task of its own and closed
in order, after the packets before the close; a peer that does not read fills it, and
its owner learns of it. A spectator's queue is bounded too: a full one drops that
spectator (1008 "too slow"), never the game.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from game.seats import DEFAULT_SEND_TIMEOUT, TextSink
from game.watchdog import SendWatchdog
from models import CLOSE_GOING_AWAY

__all__ = ["CLOSE_WAIT", "OUTBOX_SIZE", "Outbox", "SpectatorQueue"]

log = logging.getLogger("game.manager")

OUTBOX_SIZE = 64
#: How long a close may take (the closing handshake of a socket).
CLOSE_WAIT = 5.0


@dataclass(frozen=True)
class CloseItem:
    code: int
    reason: str


class Outbox:
    """Packets to one connection, written in order by its own task; then the close.

    ``send`` never waits: it returns False when the connection is closed or ``size``
    packets are already waiting (a peer that does not read). ``on_failed`` is awaited
    (with why) when a send fails, so the owner learns of a connection that cannot take
    packets even if its reader has not noticed.
    """

    def __init__(
        self,
        sink: TextSink,
        name: str,
        *,
        on_failed: Callable[[str], Awaitable[None]] | None = None,
        size: int = OUTBOX_SIZE,
        send_timeout: float = DEFAULT_SEND_TIMEOUT,
    ) -> None:
        self._sink = sink
        self._on_failed = on_failed
        self._send_timeout = send_timeout
        self._queue: asyncio.Queue[str | CloseItem] = asyncio.Queue(size)
        self._closing = False
        self._task = asyncio.get_running_loop().create_task(
            self._write(), name=f"htttx: write {name}"
        )

    def send(self, text: str) -> bool:
        if self._closing:
            return False
        try:
            self._queue.put_nowait(text)
        except asyncio.QueueFull:
            return False
        return True

    def close(self, code: int, reason: str) -> None:
        """Close after the packets already queued (at once if the queue is full)."""
        if self._closing:
            return
        self._closing = True
        try:
            self._queue.put_nowait(CloseItem(code, reason))
        except asyncio.QueueFull:
            self._task.cancel()
            self._task = asyncio.get_running_loop().create_task(
                self._close_sink(code, reason), name=self._task.get_name()
            )

    async def wait_closed(self, timeout: float) -> None:
        """Wait for the writer to finish (up to ``timeout``), then stop it anyway."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._task), timeout)
        if not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            await self._close_sink(CLOSE_GOING_AWAY, "closing")

    async def _write(self) -> None:
        watchdog = SendWatchdog(self._send_timeout)
        try:
            while True:
                item = await self._queue.get()
                if isinstance(item, CloseItem):
                    await self._close_sink(item.code, item.reason)
                    return
                await watchdog.send(self._sink.send_text(item))
        except Exception as exc:  # the peer is gone or does not read: its reader decides
            self._closing = True
            why = f"sending failed: {exc!r}"
            log.debug("%s", why)
            await self._close_sink(CLOSE_GOING_AWAY, "sending failed")
            if self._on_failed is not None:
                await self._on_failed(why)
        finally:
            watchdog.close()

    async def _close_sink(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CLOSE_WAIT):
                await self._sink.close(code, reason)


class SpectatorQueue:
    """A spectator's bounded queue of encoded packets; ``None`` means close."""

    def __init__(self, size: int) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(size)
        self.dropped = asyncio.Event()
        #: The setup of a big game, being encoded off the loop: sent before the queue.
        self.setup: asyncio.Future[bytes] | None = None
        #: Updates to leave out: their moves were already in this spectator's setup.
        self.skip = 0

    def offer(self, text: str | None) -> bool:
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            return False
        return True

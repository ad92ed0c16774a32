"""What a game sends to a seat never waits on a peer: an ``Outbox`` per seat connection
(the spectators have ``game.fanout``).

An outbox is a bounded queue written to its connection by a task of its own and closed
in order, after the packets before the close; a peer that does not read fills it, and
its owner learns of it. When nothing is waiting, a packet is written at once by the
caller (``send`` runs the send up to its first wait: a write into the socket's buffer,
which never waits on the peer), without a hop through the writer task; a send that has
to wait (a full socket buffer, a slow peer) is finished by the writer task, under its
time limit, and the packets after it queue behind it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Generator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from game.mailbox import Mailbox
from game.seats import DEFAULT_SEND_TIMEOUT, TextSink
from game.watchdog import SendWatchdog
from models import CLOSE_GOING_AWAY
from wire.frames import FrameWriter

__all__ = [
    "CLOSE_WAIT",
    "OUTBOX_SIZE",
    "FramedConnection",
    "Outbox",
]

log = logging.getLogger("game.manager")

OUTBOX_SIZE = 64
#: How long a close may take (the closing handshake of a socket).
CLOSE_WAIT = 5.0


@dataclass(frozen=True)
class CloseItem:
    code: int
    reason: str


@dataclass(frozen=True)
class FailedItem:
    """A send begun by the caller failed at once: the writer reports it, in order."""

    error: Exception


class Resumed:
    """The rest of a send that the caller began and that had to wait (``yielded`` is
    what it waits for): awaiting this carries it on in the awaiting task."""

    __slots__ = ("_coro", "_yielded")

    def __init__(self, coro: Coroutine[Any, Any, None], yielded: Any) -> None:
        self._coro = coro
        self._yielded = yielded

    def __await__(self) -> Generator[Any, Any, None]:
        coro, yielded = self._coro, self._yielded
        while True:
            try:
                sent = yield yielded
            except BaseException as exc:  # a cancel (the time limit) goes to the send
                try:
                    yielded = coro.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    yielded = coro.send(sent)
                except StopIteration:
                    return

    def close(self) -> None:
        """Give up the send (never awaited: the outbox closed first)."""
        self._coro.close()


_Item = str | CloseItem | FailedItem | Resumed


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
        self._queue: Mailbox[_Item] = Mailbox(size)
        self._closing = False
        self._busy = False  # the writer task is carrying out a send
        self._task = asyncio.get_running_loop().create_task(
            self._write(), name=f"htttx: write {name}"
        )

    @property
    def pending(self) -> bool:
        """Whether packets wait for the writer task (not yet all written)."""
        return self._busy or not self._queue.empty()

    def send(self, text: str) -> bool:
        if self._closing:
            return False
        if not self._busy and self._queue.empty():
            self._send_now(text)
            return True
        try:
            self._queue.put_nowait(text)
        except asyncio.QueueFull:
            return False
        return True

    def _send_now(self, text: str) -> None:
        """Begin the send here and now; what cannot finish at once (or fails) goes to
        the writer task, first in its queue (it is empty)."""
        coro = self._sink.send_text(text)
        try:
            yielded = coro.send(None)
        except StopIteration:
            return  # written (into the socket's buffer)
        except Exception as exc:
            self._queue.put_nowait(FailedItem(exc))
            return
        self._queue.put_nowait(Resumed(coro, yielded))

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
                self._busy = True
                if isinstance(item, CloseItem):
                    await self._close_sink(item.code, item.reason)
                    return
                if isinstance(item, FailedItem):
                    raise item.error
                send = item if isinstance(item, Resumed) else self._sink.send_text(item)
                await watchdog.send(send)
                self._busy = False
        except Exception as exc:  # the peer is gone or does not read: its reader decides
            self._closing = True
            why = f"sending failed: {exc!r}"
            log.debug("%s", why)
            await self._close_sink(CLOSE_GOING_AWAY, "sending failed")
            if self._on_failed is not None:
                await self._on_failed(why)
        finally:
            watchdog.close()
            self._drop_resumed()

    def _drop_resumed(self) -> None:
        """Close sends begun and never finished (their coroutines would warn)."""
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if isinstance(item, Resumed):
                item.close()

    async def _close_sink(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CLOSE_WAIT):
                await self._sink.close(code, reason)


@runtime_checkable
class FramedConnection(Protocol):
    """A connection that can take a prebuilt frame (``game.sockets._Inbound``)."""

    def frame_writer(self) -> FrameWriter | None: ...

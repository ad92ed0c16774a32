"""One WebSocket of the client, run on the network worker thread.

``SocketLink`` is what ``Network.open_socket`` returns: its signals carry the frames
and the end of one WebSocket to the GUI thread, and ``send``/``close`` may be called
from any thread. The link is created by the GUI thread and lives there; its coroutine
runs on the worker's event loop (see ``ui.net``), which only emits its signals.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import aiohttp
from PyQt5.QtCore import QObject, pyqtSignal

from models import CLOSE_GOING_AWAY, CLOSE_NORMAL, clip_close_reason
from ui.connection_errors import connection_error

if TYPE_CHECKING:
    from ui.net import Network

__all__ = ["CLOSE_ABNORMAL", "CLOSE_TIMEOUT_S", "SocketLink"]

# All of the client's network I/O logs under one name, sockets and calls alike.
log = logging.getLogger("ui.net")

#: The close code reported when a socket ended without a close frame (RFC 6455).
CLOSE_ABNORMAL: Final = 1006
#: How long closing a socket waits for the server's close frame.
CLOSE_TIMEOUT_S: Final = 3.0
#: Largest frame a socket accepts: a spectator's ``setup`` carries the whole game.
_MAX_FRAME_BYTES: Final = 64 * 1024 * 1024


class SocketLink(QObject):
    """One WebSocket. ``opened`` once connected; ``message`` for each text frame;
    ``failed`` with a sentence when the connection cannot be made or breaks; ``closed``
    with the close code and reason exactly once, at the very end, whatever happened
    (1006 when the connection ended without a close frame)."""

    opened = pyqtSignal()
    message = pyqtSignal(str)
    closed = pyqtSignal(int, str)
    failed = pyqtSignal(str)
    _done = pyqtSignal(object)

    def __init__(self, network: Network, url: str) -> None:
        super().__init__()
        self.url = url
        self._network = network
        self._loop = network._loop_for_links()
        # Frames to send, then None to stop the writer. Bound to the worker's loop on
        # first use; only ever touched there.
        self._outbox: asyncio.Queue[str | None] = asyncio.Queue()
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._task: asyncio.Task[None] | None = None
        self._close_request: tuple[int, str] | None = None
        self._ending = False
        self._finished = False

    def connect_handlers(
        self,
        *,
        opened: Callable[[], None],
        message: Callable[[str], None],
        lost: Callable[[int, str], None],
    ) -> None:
        """Connect the signals; ``lost`` gets the close code and the best sentence for
        why: ``failed`` (with the better sentence) comes before ``closed``, which always
        ends a link, so the sentence is remembered and acted on once, on ``closed``."""
        failure: list[str] = []
        self.opened.connect(opened)
        self.message.connect(message)
        self.failed.connect(failure.append)
        self.closed.connect(lambda code, reason: lost(code, failure[-1] if failure else reason))

    def send(self, text: str) -> None:
        """Send one text frame (in order with earlier ones). Thread-safe; frames sent
        before the socket opens wait for it, frames after it closed are dropped."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: the link is over
            self._loop.call_soon_threadsafe(self._outbox.put_nowait, text)

    def close(self, code: int = CLOSE_NORMAL, reason: str = "") -> None:
        """Close the socket with ``code`` and ``reason`` (sent to the server; trimmed to
        the 123 bytes a close frame holds). Thread-safe; ``closed`` follows."""
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._request_close, code, reason)

    @property
    def is_finished(self) -> bool:
        """True once the link has ended (``closed`` has been emitted)."""
        return self._finished

    # -- in the worker thread

    def _request_close(self, code: int, reason: str) -> None:
        # Cancelling the link's task interrupts whatever it waits for (the connection,
        # a frame); its handler then closes the socket with this code and reason.
        if self._close_request is not None or self._ending:
            return
        self._close_request = (code, reason)
        if self._task is not None:
            self._task.cancel()

    async def _run(self, session: aiohttp.ClientSession) -> None:
        code, reason = CLOSE_ABNORMAL, "the connection was lost"
        writer: asyncio.Task[None] | None = None
        try:
            if self._close_request is not None:  # closed before it could start
                code, reason = self._close_request
                return
            try:
                ws = await session.ws_connect(
                    self.url,
                    max_msg_size=_MAX_FRAME_BYTES,
                    timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=CLOSE_TIMEOUT_S),
                    autoping=True,
                )
            except asyncio.CancelledError:
                code, reason = self._close_request or (CLOSE_GOING_AWAY, "the client is closing")
                raise
            except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
                reason = connection_error(self.url, exc, "connect to")
                self.failed.emit(reason)
                return
            self._ws = ws
            self.opened.emit()
            writer = asyncio.create_task(self._write(ws), name=f"ui.net: write {self.url}")
            code, reason = await self._read(ws)
        except asyncio.CancelledError:
            if self._ws is not None and not self._ws.closed:
                going = self._close_request or (CLOSE_GOING_AWAY, "the client is closing")
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(
                        self._ws.close(code=going[0], message=clip_close_reason(going[1]).encode()),
                        CLOSE_TIMEOUT_S,
                    )
                code, reason = going
            elif self._close_request is not None:
                code, reason = self._close_request
        finally:
            self._ending = True  # a close requested from now on changes nothing
            try:
                await self._clean_up(writer)
            except asyncio.CancelledError:
                pass  # cancelled again (the network is closing): the session drops it
            finally:
                self._finished = True
                self.closed.emit(code, reason)
                self._done.emit(self)

    async def _clean_up(self, writer: asyncio.Task[None] | None) -> None:
        if writer is not None:
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)
        if self._ws is not None and not self._ws.closed:
            with contextlib.suppress(Exception):
                await self._ws.close()

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> tuple[int, str]:
        """Emit each frame until the socket closes; the close code and reason."""
        while True:
            message = await ws.receive()
            kind = message.type
            if kind is aiohttp.WSMsgType.TEXT:
                self.message.emit(message.data)
            elif kind is aiohttp.WSMsgType.BINARY:
                self.message.emit(bytes(message.data).decode("utf-8", errors="replace"))
            elif kind is aiohttp.WSMsgType.CLOSE:
                # The server closed: its code and reason (aiohttp has answered it).
                return int(message.data), str(message.extra or "")
            elif kind is aiohttp.WSMsgType.ERROR:
                reason = connection_error(self.url, message.data, "read from")
                self.failed.emit(reason)
                return ws.close_code or CLOSE_ABNORMAL, reason
            else:  # CLOSED: the connection dropped
                return ws.close_code or CLOSE_ABNORMAL, "the connection was lost"

    async def _write(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        while True:
            text = await self._outbox.get()
            if text is None or ws.closed:
                return
            try:
                await ws.send_str(text)
            except (aiohttp.ClientError, ConnectionError, RuntimeError) as exc:
                log.info("could not send to %s: %s", self.url, exc)
                return

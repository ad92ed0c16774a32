"""Adapters that move a seat's bytes, and nothing else: no rules, no clocks, no decisions.

``game.manager`` owns one of these per seat and feeds what they report into the pure
``game.session.GameSession``:

* ``BotSocketSeat`` dials a bot's WebSocket (``BotEndpoint.socket_url``) over the
  server's shared aiohttp session (``AddressPolicy.client_session``: checked addresses,
  no redirects), forwards every text frame and reports the end of the connection the
  moment aiohttp sees it (not at the next heartbeat). What the protocol forbids is
  reported as a ``RefusedFrame`` with the reason (``wire.frames``), which the session
  forfeits for ``protocol_error``: a binary frame, text that is not UTF-8, pings or
  pongs beyond a token bucket's rate. It yields to the event loop after each frame,
  so a bot whose frames arrive faster than they are handled cannot starve the loop. It pings the
  bot every ``ping_interval`` seconds and reports each round trip, which the session
  subtracts from the time charged, so network jitter never costs a game. A connection
  that died without a word (a host gone, a cable pulled: no FIN ever comes) is found
  by its pings: a bot that owes a pong for ``pong_timeout`` seconds while it has no
  request to think about is reported closed. While it thinks it owes none, since a bot
  may compute on its event loop (the prototype's did) and answer pings only afterwards;
  its clock, or the stall limit, bounds that time instead.
* ``StatelessSeat`` (``game.stateless_seat``) plays a stateless-only bot, one
  ``POST .../turn`` a move.
* ``InboundConnection`` is what the server hands the manager for a human or a
  spectator: a WebSocket it accepted (Starlette's, wrapped), reduced to three calls.

Frames too large for aiohttp's hard cap (``4 * max_frame_bytes``) never reach Python
whole; the seat reports them as an ``OversizedFrame`` so the session can still record
a ``protocol_error`` (frames between the session's limit and the cap are judged by the
session itself, with their exact size).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

import aiohttp

from game.discovery_errors import DiscoveryError
from models import (
    MAX_CLOSE_REASON_BYTES,
    clip_close_reason,
)
from wire.frames import (
    BINARY_FRAME_REFUSED,
    CONTROL_FLOOD_REFUSED,
    CONTROL_FRAME_BURST,
    INVALID_UTF8_REFUSED,
    MAX_CONTROL_FRAMES_PER_SECOND,
    RefusedFrame,
)
from wire.names import display_text
from wire.ratelimit import TokenBucket

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_PING_INTERVAL",
    "DEFAULT_PONG_TIMEOUT",
    "DEFAULT_SEND_TIMEOUT",
    "BotSocketSeat",
    "ConnectionClosed",
    "InboundConnection",
    "OversizedFrame",
    "SeatConnectError",
    "TextSink",
]

log = logging.getLogger("game.seats")

DEFAULT_CONNECT_TIMEOUT = 5.0
#: A socket's reader lets the rest of the event loop run after this many frames in a row.
FRAMES_BETWEEN_YIELDS = 16
DEFAULT_PING_INTERVAL = 2.0
#: How long an idle bot may leave a ping unanswered (websockets' default ping_timeout).
DEFAULT_PONG_TIMEOUT = 20.0
DEFAULT_SEND_TIMEOUT = 10.0


# ------------------------------------------------------------------------- errors


class ConnectionClosed(Exception):
    """The peer's connection ended (``InboundConnection.receive_text`` raises it)."""


class SeatConnectError(Exception):
    """A bot's WebSocket could not be opened: refused, timed out, not a WebSocket. The
    message names the URL, for the log; ``reason`` says what happened in words, for the
    record, and ``status`` is the HTTP status the handshake was answered with (other
    than 101), if it was."""

    def __init__(self, message: str, *, reason: str, status: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.status = status


class OversizedFrame(bytes):
    """Stands in for a frame aiohttp refused as too big: ``len`` is the cap + 1.

    Only its length matters: the session refuses any frame over its limit before
    looking inside, and records ``protocol_error``.
    """


# --------------------------------------------------------------- inbound sockets


class TextSink(Protocol):
    """Anything the manager writes packets to: a bot's socket or an inbound one."""

    async def send_text(self, data: str) -> None: ...

    async def close(self, code: int, reason: str) -> None: ...


class InboundConnection(TextSink, Protocol):
    """A WebSocket someone opened to the server (a human's seat or a spectator),
    already accepted. The server wraps Starlette's ``WebSocket`` in this.

    ``receive_text`` raises (``ConnectionClosed`` or any exception) once the connection
    is gone; it returns a text frame, or a ``RefusedFrame`` (``wire.frames``) for one
    the protocol forbids, which the session refuses with its reason. ``close`` must be
    harmless on a closed connection.
    """

    async def receive_text(self) -> str | bytes: ...


# -------------------------------------------------------------- WebSocket bots


def _closed_by_bot(code: int, reason: object) -> str:
    """Why a bot's socket ended, when the bot closed it: its close code and the reason
    it gave (often the whole story: ``1008: impossible board: ...``), made fit to
    record.

    >>> _closed_by_bot(1008, "bad board"), _closed_by_bot(1000, "")
    ('the bot closed the connection (1008: bad board)', 'the bot closed the connection (1000)')
    """
    text = display_text(reason, MAX_CLOSE_REASON_BYTES) if isinstance(reason, str) else ""
    return f"the bot closed the connection ({code}{': ' + text if text else ''})"


class BotSocketSeat:
    """One game's WebSocket to a bot.

    ``await connect()`` opens it (``SeatConnectError`` if it cannot); ``start()`` then
    runs the reader and the pinger: ``on_frame`` gets each data frame, ``on_rtt`` each
    measured ping round trip (seconds), ``on_closed`` once, with why, when the
    connection ends for any reason other than our own ``close`` (a pong owed for
    ``pong_timeout`` seconds while ``thinking()`` is false counts as an end). ``close``
    ends the connection and both tasks; it is the owner's to call, always.
    """

    def __init__(
        self,
        url: str,
        http: aiohttp.ClientSession,
        *,
        on_frame: Callable[[str | bytes], Awaitable[None]],
        on_closed: Callable[[str], Awaitable[None]],
        on_rtt: Callable[[float], None],
        max_frame_bytes: int,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        ping_interval: float = DEFAULT_PING_INTERVAL,
        pong_timeout: float = DEFAULT_PONG_TIMEOUT,
        thinking: Callable[[], bool] = lambda: False,
        send_timeout: float = DEFAULT_SEND_TIMEOUT,
        name: str = "bot",
    ) -> None:
        self.url = url
        self._http = http
        self._on_frame = on_frame
        self._on_closed = on_closed
        self._on_rtt = on_rtt
        # aiohttp's own cap: frames up to it reach the session, which judges them
        # against its limit with their exact size; beyond it, nothing is buffered.
        self._cap = 4 * max_frame_bytes
        self._connect_timeout = connect_timeout
        self._ping_interval = ping_interval
        self._pong_timeout = pong_timeout
        self._thinking = thinking
        self._owes_pong_since: float | None = None
        self._reported = False
        self._send_timeout = send_timeout
        self._name = name
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closing = False
        self._pings: dict[bytes, float] = {}
        self._ping_count = 0

    async def connect(self) -> None:
        try:
            async with asyncio.timeout(self._connect_timeout):
                self._ws = await self._http.ws_connect(
                    self.url,
                    autoping=False,  # we answer pings ourselves and see every pong
                    autoclose=True,
                    max_msg_size=self._cap,
                )
        except TimeoutError:
            reason = f"no WebSocket within {self._connect_timeout:g} s"
            raise SeatConnectError(f"{self.url}: {reason}", reason=reason) from None
        except DiscoveryError as exc:  # a forbidden address, a redirect (address_policy)
            raise SeatConnectError(
                f"{self.url}: cannot open the WebSocket: {exc}",
                reason=f"cannot open the bot's socket: {exc}",
            ) from None
        except aiohttp.WSServerHandshakeError as exc:
            # 101 with wrong headers is no WebSocket either, but no status to report.
            status = None if exc.status == 101 else exc.status
            reason = (
                f"the bot's socket answered the handshake with HTTP {status}"
                if status is not None
                else f"the bot's socket broke the handshake ({exc.message})"
            )
            raise SeatConnectError(
                f"{self.url}: cannot open the WebSocket: {exc!r}", reason=reason, status=status
            ) from None
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            raise SeatConnectError(
                f"{self.url}: cannot open the WebSocket: {exc!r}",
                reason=f"cannot open the bot's socket: {exc or type(exc).__name__}",
            ) from None

    def start(self) -> None:
        assert self._ws is not None, "connect() first"
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._read(), name=f"htttx: read {self._name}"),
            loop.create_task(self._ping(), name=f"htttx: ping {self._name}"),
        ]

    async def send_text(self, data: str) -> None:
        """Send one text frame. Not bounded here: the game's outbox, its only caller,
        bounds every send of a connection (``game.watchdog``)."""
        ws = self._ws
        if ws is None or ws.closed:
            raise ConnectionClosed(f"{self.url}: the socket is closed")
        await ws.send_str(data)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        self._closing = True
        current = asyncio.current_task()
        for task in self._tasks:
            if task is not current:
                task.cancel()
        ws = self._ws
        if ws is not None and not ws.closed:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(self._send_timeout):
                    await ws.close(code=code, message=clip_close_reason(reason).encode())
        await asyncio.gather(*(t for t in self._tasks if t is not current), return_exceptions=True)
        # A cancelled task keeps its CancelledError, whose traceback holds the task's
        # frames and so this seat: let go of them, or the seat (and its owner, through
        # the callbacks) waits for the cyclic GC.
        self._tasks = [current] if current in self._tasks else []

    async def _read(self) -> None:
        ws = self._ws
        assert ws is not None
        loop = asyncio.get_running_loop()
        control = TokenBucket(
            rate=MAX_CONTROL_FRAMES_PER_SECOND, burst=CONTROL_FRAME_BURST, now=loop.time()
        )
        why = "the bot closed the connection"
        burst = 0
        try:
            while True:
                msg = await ws.receive()
                kind = msg.type
                if kind is aiohttp.WSMsgType.TEXT:
                    await self._on_frame(msg.data)
                elif kind is aiohttp.WSMsgType.BINARY:
                    await self._on_frame(RefusedFrame(BINARY_FRAME_REFUSED))
                    return  # the session forfeits the seat; the game closes the socket
                elif kind is aiohttp.WSMsgType.PING or kind is aiohttp.WSMsgType.PONG:
                    if not control.take(loop.time()):
                        await self._on_frame(RefusedFrame(CONTROL_FLOOD_REFUSED))
                        return
                    if kind is aiohttp.WSMsgType.PING:
                        await ws.pong(msg.data)
                    else:
                        self._owes_pong_since = None  # any pong: the connection lives
                        sent = self._pings.pop(bytes(msg.data or b""), None)
                        if sent is not None:
                            self._on_rtt(loop.time() - sent)
                elif kind is aiohttp.WSMsgType.ERROR:
                    error = msg.data
                    code = error.code if isinstance(error, aiohttp.WebSocketError) else None
                    if code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG:
                        await self._on_frame(OversizedFrame(self._cap + 1))
                        return
                    if code == aiohttp.WSCloseCode.INVALID_TEXT:
                        await self._on_frame(RefusedFrame(INVALID_UTF8_REFUSED))
                        return
                    why = f"the connection failed: {error!r}"
                    break
                else:  # CLOSE, CLOSING, CLOSED
                    if ws.close_code is not None:
                        why = _closed_by_bot(ws.close_code, msg.extra)
                    break
                # While frames are queued, receive() returns without suspending: let the
                # rest of the loop run now and then, so no bot can starve it. Not after
                # every frame: that is one more trip through the loop per move.
                burst += 1
                if burst == FRAMES_BETWEEN_YIELDS:
                    burst = 0
                    await asyncio.sleep(0)
        except (aiohttp.ClientError, OSError) as exc:
            why = f"the connection failed: {exc!r}"
        await self._report_closed(why)

    async def _report_closed(self, why: str) -> None:
        if not self._closing and not self._reported:
            self._reported = True
            await self._on_closed(why)

    async def _ping(self) -> None:
        ws = self._ws
        assert ws is not None
        loop = asyncio.get_running_loop()
        while not ws.closed:
            if self._pong_overdue(loop.time()):
                why = f"no pong for {self._pong_timeout:g} s while idle: the connection is dead"
                await self._report_closed(why)
                return
            self._ping_count += 1
            payload = self._ping_count.to_bytes(8, "big")
            # Only the latest ping is kept: a pong that never comes must not pile up.
            self._pings = {payload: loop.time()}
            try:
                await ws.ping(payload)
            except (aiohttp.ClientError, OSError, RuntimeError):
                return  # the reader sees the end of the connection and reports it
            await asyncio.sleep(self._ping_interval)

    def _pong_overdue(self, now: float) -> bool:
        """Whether a pong has been owed for ``pong_timeout`` seconds of not thinking
        (checked before each ping: a ping still unanswered by then is owed)."""
        if not self._pings or self._thinking():
            self._owes_pong_since = None
            return False
        if self._owes_pong_since is None:
            self._owes_pong_since = now
        return now - self._owes_pong_since >= self._pong_timeout

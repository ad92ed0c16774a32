"""uvicorn's WebSocket protocol, with the limits the ASGI app cannot enforce itself, for
the sockets others open to us: to the game server (human seats, spectators) and to a bot
server (``bot.serve``: the game servers that seat its bots).

uvicorn answers pings inside its protocol object, as frames arrive: the app never sees
them. So a client could flood pings (or pongs) without limit, each costing a frame's
work and a pong queued for a client that may never read it. ``GuardedWebSocketProtocol``
gives each connection a token bucket for its control frames; past it, the connection is
closed with 1008 and a reason. A text frame that is not UTF-8 is closed with 1007.

Either way the app learns why: the refusal is noted in the connection's ASGI scope, under
``extensions[REFUSED_EXTENSION]["reason"]``, before the ``websocket.disconnect``, so the
human seat's adapter (``game.sockets``) can forfeit the seat for ``protocol_error`` with
that reason rather than treat the close as a mere disconnect, and a bot server's
connection (``bot.connection``) logs it.

It also offers the app a ``FrameWriter`` (``wire.frames``), under
``extensions[FRAME_WRITER_EXTENSION]`` (``frame_writer``): a frame built once is written
to the socket at once, where a send through ASGI would frame the same text again per
connection and await its turn in a task. The spectators' fan-out uses it
(``game.fanout.Fanout``): with 500 spectators, per move, that work was most
of what a spectator cost besides the write itself. So does a bot server for its answers
(``bot.connection.Connection``).

It lives in ``wire`` because both servers use it and the bot framework must not import
the game server.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.frames import Frame
from websockets.protocol import State

from wire.basics import CLOSE_INVALID_DATA, CLOSE_POLICY_VIOLATION, clip_close_reason
from wire.frames import (
    CONTROL_FLOOD_REFUSED,
    CONTROL_FRAME_BURST,
    INVALID_UTF8_REFUSED,
    MAX_CONTROL_FRAMES_PER_SECOND,
    FrameWriter,
)
from wire.ratelimit import TokenBucket

__all__ = [
    "FRAME_WRITER_EXTENSION",
    "REFUSED_EXTENSION",
    "GuardedWebSocketProtocol",
    "frame_writer",
    "refusal",
]

#: The ASGI scope extension where a refusal's reason is noted.
REFUSED_EXTENSION = "htttx.refused"
#: The ASGI scope extension holding the connection's ``FrameWriter``.
FRAME_WRITER_EXTENSION = "htttx.frame_writer"


def frame_writer(scope: Any) -> FrameWriter | None:
    """The connection's ``FrameWriter``; None under another server or protocol."""
    extensions = scope.get("extensions") or {}
    writer = extensions.get(FRAME_WRITER_EXTENSION)
    return None if writer is None else writer["write"]


def refusal(scope: Any) -> str | None:
    """The reason a ``GuardedWebSocketProtocol`` closed this connection, if it did."""
    extensions = scope.get("extensions") or {}
    refused = extensions.get(REFUSED_EXTENSION)
    return None if refused is None else str(refused["reason"])


class GuardedWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O WebSocket protocol, refusing control-frame floods and text
    that is not UTF-8 (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._control = TokenBucket(
            rate=MAX_CONTROL_FRAMES_PER_SECOND, burst=CONTROL_FRAME_BURST, now=self.loop.time()
        )

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"][FRAME_WRITER_EXTENSION] = {"write": self._write_frame}

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        # The scope holds the writer, a method of this protocol, which holds the scope:
        # once the connection is gone, the writer stops holding it (nothing can be
        # written now anyway), so reference counting frees the connection's objects.
        scope = getattr(self, "scope", None)
        if scope is not None and FRAME_WRITER_EXTENSION in scope["extensions"]:
            scope["extensions"][FRAME_WRITER_EXTENSION] = {"write": _gone}

    def _write_frame(self, frame: bytes) -> bool:
        """``FrameWriter``: write ``frame`` now, as ``send`` would write the frame of
        its text, if ``send`` would write at once: accepted, open, no close sent or
        received, no pause (the transport's buffer over its high-water mark: the usual
        send then waits for room), no extension that would change the frame."""
        if (
            not self.handshake_complete
            or self.initial_response is not None
            or self.close_sent
            or self.disconnected
            or not self.writable.is_set()
            or self.transport.is_closing()
            or self.conn.state is not State.OPEN
            or self.conn.extensions
        ):
            return False
        self.transport.write(frame)
        return True

    def handle_ping(self) -> None:
        if self._control_allowed():
            super().handle_ping()

    def handle_pong(self, event: Frame) -> None:
        if self._control_allowed():
            super().handle_pong(event)

    def send_receive_event_to_app(self) -> None:
        if self.curr_msg_data_type == "text" and not self.close_sent:
            data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
            try:
                data.decode()
            except UnicodeDecodeError:
                self.frames = []
                self._refuse(CLOSE_INVALID_DATA, INVALID_UTF8_REFUSED)
                return
        super().send_receive_event_to_app()

    def _control_allowed(self) -> bool:
        if self.close_sent:
            return False  # closing: nothing more is answered
        if self._control.take(self.loop.time()):
            return True
        self._refuse(CLOSE_POLICY_VIOLATION, CONTROL_FLOOD_REFUSED)
        return False

    def _refuse(self, code: int, reason: str) -> None:
        """Note why in the scope, send a close frame, tell the app, drop the connection."""
        scope = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"][REFUSED_EXTENSION] = {"reason": reason}
        try:
            self.conn.send_close(code, clip_close_reason(reason))
        except InvalidState:  # not open (yet, or any more): just hang up
            self.close_sent = True
            self.transport.close()
            return
        self.handle_parser_exception()  # queues websocket.disconnect, writes, closes


def _gone(_frame: bytes) -> bool:
    """The ``FrameWriter`` of a lost connection: writes nothing."""
    return False

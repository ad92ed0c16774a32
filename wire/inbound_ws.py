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

And it lets the app read text frames as they arrive (``set_frame_reader``, a
``FrameReader`` under ``extensions[FRAME_READER_EXTENSION]``): uvicorn queues every
message for the app's ``receive``, pauses reading the socket until the app has taken it
and resumes then, and the app's task wakes an iteration of the loop later to take it;
a reader is called from the protocol's own callback instead, while nothing else is
queued (order is kept: a frame that comes behind queued messages, or that the reader
declines, is queued as before). A bot server's connection uses it
(``bot.connection.Connection``): a request is answered within the callback that reads
it, where nothing else is waiting (docs/performance.md).

While a frame reader is set, a read of the socket that is exactly one whole text frame
(what a client that writes each frame at once sends: a request) is read here, in a few
byte comparisons, rather than through websockets' generator-based parser and uvicorn's
event dispatch (about 8 µs of a 35 µs request of an on-loop bot); only when the
parser waits between frames with nothing buffered, so it would read that frame the
same way and keep no state of it. Anything else (a frame split across reads, several
in one, control frames, text that is not UTF-8) goes through the parser as before.

It lives in ``wire`` because both servers use it and the bot framework must not import
the game server.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.frames import Frame
from websockets.protocol import State
from websockets.streams import StreamReader

from wire.basics import (
    CLOSE_INTERNAL_ERROR,
    CLOSE_INVALID_DATA,
    CLOSE_POLICY_VIOLATION,
    clip_close_reason,
)
from wire.frames import (
    CONTROL_FLOOD_REFUSED,
    CONTROL_FRAME_BURST,
    INVALID_UTF8_REFUSED,
    MAX_CONTROL_FRAMES_PER_SECOND,
    FrameReader,
    FrameWriter,
)
from wire.ratelimit import TokenBucket

__all__ = [
    "FRAME_READER_EXTENSION",
    "FRAME_WRITER_EXTENSION",
    "READER_FAILED",
    "REFUSED_EXTENSION",
    "GuardedWebSocketProtocol",
    "frame_writer",
    "refusal",
    "set_frame_reader",
]

log = logging.getLogger("wire.inbound_ws")

try:  # websockets' C unmasking, as its parser uses it
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover (a build of websockets without its C extension)
    from websockets.utils import apply_mask

#: The ASGI scope extension where a refusal's reason is noted.
REFUSED_EXTENSION = "htttx.refused"
#: The ASGI scope extension holding the connection's ``FrameWriter``.
FRAME_WRITER_EXTENSION = "htttx.frame_writer"
#: The ASGI scope extension that takes the connection's ``FrameReader``.
FRAME_READER_EXTENSION = "htttx.frame_reader"
#: The reason of the close when a ``FrameReader`` broke its promise and raised.
READER_FAILED = "internal error while reading a frame"


def frame_writer(scope: Any) -> FrameWriter | None:
    """The connection's ``FrameWriter``; None under another server or protocol."""
    extensions = scope.get("extensions") or {}
    writer = extensions.get(FRAME_WRITER_EXTENSION)
    return None if writer is None else writer["write"]


def set_frame_reader(scope: Any, reader: FrameReader | None) -> bool:
    """Have the connection's text frames handed to ``reader`` as they arrive (see the
    module docstring), or no longer (None); False under another server or protocol,
    where every frame comes through ``receive`` as usual."""
    extensions = scope.get("extensions") or {}
    entry = extensions.get(FRAME_READER_EXTENSION)
    if entry is None:
        return False
    entry["set"](reader)
    return True


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
        self._frame_reader: FrameReader | None = None

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"][FRAME_WRITER_EXTENSION] = {"write": self._write_frame}
            scope["extensions"][FRAME_READER_EXTENSION] = {"set": self._set_frame_reader}

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        # The scope holds the writer, a method of this protocol, which holds the scope:
        # once the connection is gone, the writer stops holding it (nothing can be
        # written now anyway), so reference counting frees the connection's objects.
        scope = getattr(self, "scope", None)
        if scope is not None and FRAME_WRITER_EXTENSION in scope["extensions"]:
            scope["extensions"][FRAME_WRITER_EXTENSION] = {"write": _gone}
            scope["extensions"][FRAME_READER_EXTENSION] = {"set": _ignored}
        self._frame_reader = None  # it holds the app's connection, which holds the scope

    def _set_frame_reader(self, reader: FrameReader | None) -> None:
        self._frame_reader = reader

    def data_received(self, data: bytes) -> None:
        """A chunk of the socket. The usual one, while a frame reader is set, is one
        whole small text frame (a request): read here (``_one_text_frame``), its text
        straight to the reader; anything else goes through websockets' parser."""
        text = self._one_text_frame(data) if self._frame_reader is not None else None
        if text is None:
            super().data_received(data)
        else:
            self._text_received(text)

    def _one_text_frame(self, data: bytes) -> str | None:
        """The text of ``data`` if it is exactly one whole, unfragmented, masked text
        frame of at most 64 KiB, the connection open with no extension and websockets'
        parser between frames with nothing buffered (so it would read this frame just
        so, and keep no state of it: a final text frame changes none); else None, and
        websockets reads it as usual (frames split across reads, several in one read,
        control frames, a text that is not UTF-8, all come that way)."""
        size = len(data)
        if size < 6 or data[0] != _FIN_TEXT or not data[1] & _MASKED:
            return None
        length = data[1] & 0x7F
        if length == 126:
            length = int.from_bytes(data[2:4], "big")
            start = 8
        elif length == 127:
            return None
        else:
            start = 6
        conn = self.conn
        if (
            start + length != size
            or conn.state is not State.OPEN
            or conn.extensions
            or conn.cur_size is not None
            or conn.reader.buffer
            or (conn.max_size is not None and length > conn.max_size)
            or not _between_frames(conn.parser)
            or self.close_sent
        ):
            return None
        try:
            return apply_mask(data[start:], data[start - 4 : start]).decode()
        except UnicodeDecodeError:
            return None  # websockets' parser reads it, and it is refused as usual

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
        """A whole message has come: a binary one goes to uvicorn's queue; a text one
        that is not UTF-8 is refused, and a valid one goes to the app's frame reader
        when it has one and nothing is queued before it (and takes it), else to the
        queue as uvicorn queues it (reading paused until the app has taken it)."""
        if self.curr_msg_data_type != "text" or self.close_sent:
            super().send_receive_event_to_app()
            return
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        try:
            text = data.decode()
        except UnicodeDecodeError:
            self._refuse(CLOSE_INVALID_DATA, INVALID_UTF8_REFUSED)
            return
        self._text_received(text)

    def _text_received(self, text: str) -> None:
        """A whole text message: to the frame reader, or queued for ``receive``."""
        reader = self._frame_reader
        if reader is not None and self.queue.empty():
            try:
                if reader(text):
                    return  # taken as it came: nothing queued, reading goes on
            except Exception:  # a broken promise: this connection ends, not the server
                log.exception("the frame reader failed")
                self._frame_reader = None
                self._refuse(CLOSE_INTERNAL_ERROR, READER_FAILED)
                return
        self.queue.put_nowait({"type": "websocket.receive", "text": text})
        if not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()

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


#: The first byte of a final text frame with no extension bits; the mask bit of the second.
_FIN_TEXT = 0x81
_MASKED = 0x80
#: Where websockets' parser waits between frames (``Protocol.parse``).
_BETWEEN_FRAMES = StreamReader.at_eof.__code__


def _between_frames(parser: Generator[None]) -> bool:
    """Whether websockets' parser waits between two frames: the generator it delegates
    to, innermost, is ``StreamReader.at_eof`` (``ServerProtocol.parse`` delegates to
    ``Protocol.parse`` after the handshake, which delegates to it between frames)."""
    inner: Any = parser
    while (deeper := inner.gi_yieldfrom) is not None:
        inner = deeper
    return inner.gi_code is _BETWEEN_FRAMES


def _gone(_frame: bytes) -> bool:
    """The ``FrameWriter`` of a lost connection: writes nothing."""
    return False


def _ignored(_reader: FrameReader | None) -> None:
    """The frame-reader setter of a lost connection: no frame will come."""

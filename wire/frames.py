"""What a seat's adapter reports in place of a frame it refused to read.

The session (``game.session``) judges frames; the adapters (``game.seats``,
``game.server``) only move bytes. Some frames break the protocol before there is
anything to judge: a binary frame (the protocol is text JSON), a text frame that is not
UTF-8, a flood of control frames. The adapter then hands the session a ``RefusedFrame``
carrying why, and the session forfeits the seat for ``protocol_error`` with that reason,
as for any malformed packet. And the frames a server builds itself (``text_frame``): a
spectator's update, framed once for all, and a bot server's answers. Pure: no I/O, so
the session may import it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TypeAlias

__all__ = [
    "BINARY_FRAME_REFUSED",
    "CONTROL_FLOOD_REFUSED",
    "CONTROL_FRAME_BURST",
    "INVALID_UTF8_REFUSED",
    "MAX_CONTROL_FRAMES_PER_SECOND",
    "FrameReader",
    "FrameWriter",
    "RefusedFrame",
    "text_frame",
]

#: Control frames (pings and pongs) a peer may send: this many a second on average, up
#: to ``CONTROL_FRAME_BURST`` at once. A well-behaved peer sends a pong per ping of ours
#: (one every 2 s) and a keepalive ping of its own now and then; a flood of them costs
#: the server a frame's work each, on its event loop, and answers none of its questions.
MAX_CONTROL_FRAMES_PER_SECOND = 10.0
CONTROL_FRAME_BURST = 50


BINARY_FRAME_REFUSED = "a binary frame: the protocol is text frames of JSON"
INVALID_UTF8_REFUSED = "a text frame that is not valid UTF-8"
CONTROL_FLOOD_REFUSED = (
    f"a flood of control frames: over {CONTROL_FRAME_BURST} pings or pongs at once, or "
    f"{MAX_CONTROL_FRAMES_PER_SECOND:g} a second"
)


class RefusedFrame(bytes):
    """An empty frame standing for one the adapter refused; ``reason`` says why.

    A ``bytes`` so that it travels wherever a frame does; empty, so that anything
    reading it as a packet refuses it as not JSON.

    >>> frame = RefusedFrame("a binary frame: the protocol is text JSON")
    >>> frame.reason, len(frame)
    ('a binary frame: the protocol is text JSON', 0)
    """

    reason: str

    def __new__(cls, reason: str) -> RefusedFrame:
        frame = super().__new__(cls, b"")
        frame.reason = reason
        return frame


#: Writes whole frames built by ``text_frame`` (one, or several joined: one write for
#: them all) on a connection at once, if nothing stands in the way (True); False:
#: nothing was written, send the texts the usual way.
#: ``GuardedWebSocketProtocol`` offers one per connection (``wire.inbound_ws``).
FrameWriter: TypeAlias = Callable[[bytes], bool]


#: Takes a text frame's text as it arrives, on the protocol's own callback (no task, no
#: queue): True if it took it; False, and the frame goes the usual way (an ASGI
#: ``websocket.receive``, after the messages already queued). It must not raise.
#: ``GuardedWebSocketProtocol`` takes one per connection (``wire.inbound_ws``).
FrameReader: TypeAlias = Callable[[str], bool]


def text_frame(data: bytes) -> bytes:
    """A server's WebSocket text frame of ``data`` (RFC 6455: FIN, opcode 1, no mask,
    no extension), whole: one encoding for every spectator of a move, where each send
    through the ASGI server would frame the same text again.

    >>> text_frame(b'{"a":1}')
    b'\\x81\\x07{"a":1}'
    >>> text_frame(bytes(200))[:4], text_frame(bytes(70000))[:10]
    (b'\\x81~\\x00\\xc8', b'\\x81\\x7f\\x00\\x00\\x00\\x00\\x00\\x01\\x11p')
    """
    size = len(data)
    if size < 126:
        head = struct.pack("!BB", 0x81, size)
    elif size < 1 << 16:
        head = struct.pack("!BBH", 0x81, 126, size)
    else:
        head = struct.pack("!BBQ", 0x81, 127, size)
    return head + data

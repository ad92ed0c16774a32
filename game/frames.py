"""What a seat's adapter reports in place of a frame it refused to read.

The session (``game.session``) judges frames; the adapters (``game.seats``,
``game.server``) only move bytes. Some frames break the protocol before there is
anything to judge: a binary frame (the protocol is text JSON), a text frame that is not
UTF-8, a flood of control frames. The adapter then hands the session a ``RefusedFrame``
carrying why, and the session forfeits the seat for ``protocol_error`` with that reason,
as for any malformed packet. Pure: no I/O, so the session may import it.
"""

from __future__ import annotations

__all__ = [
    "BINARY_FRAME_REFUSED",
    "CONTROL_FLOOD_REFUSED",
    "CONTROL_FRAME_BURST",
    "INVALID_UTF8_REFUSED",
    "MAX_CONTROL_FRAMES_PER_SECOND",
    "RefusedFrame",
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

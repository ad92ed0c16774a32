"""Reading one frame from the server for the client's protocol state machines.

``HumanSeat`` (``ui.seat``) and ``QueueClient`` (``ui.queue_client``) both treat a
frame they cannot read as the server breaking the protocol: ``read_frame`` parses it
against the packet types the machine accepts and, when that fails, raises
``UnreadableFrame`` with the sentence the machine's violation event carries. No I/O.
"""

from __future__ import annotations

from typing import TypeVar

from models import JsonInput, PacketSet, ProtocolError, parse_packet

__all__ = ["UnreadableFrame", "read_frame"]

P = TypeVar("P")


class UnreadableFrame(Exception):
    """A frame that is not one of the packets expected; the message says why."""


def read_frame(text: JsonInput, allowed: PacketSet[P], sender: str) -> P:
    """The packet in ``text``, one of ``allowed``; ``sender`` names who sent it in the
    message of ``UnreadableFrame`` ("the server", "the queue").

    >>> from models import SERVER_PACKETS
    >>> read_frame('{"type": "heartbeat", "waiting": true}', SERVER_PACKETS, "the server").type
    'heartbeat'
    >>> read_frame(b"\\xff", SERVER_PACKETS, "the queue")
    Traceback (most recent call last):
    ...
    ui.frames.UnreadableFrame: bad packet from the queue: ...
    """
    try:
        return parse_packet(text, allowed=allowed)
    except ProtocolError as error:
        raise UnreadableFrame(f"bad packet from {sender}: {error}") from None
    except Exception as error:  # not a frame at all
        raise UnreadableFrame(f"unreadable frame from {sender}: {error!r}") from None

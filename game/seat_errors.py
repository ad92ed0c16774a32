"""How a seat fails: one exception class per ``EndCause`` a seat can forfeit with.

``game.session.GameSession`` raises them inside and turns each into a forfeit of
``side``; the message is the ``nope`` reason. Re-exported by ``game.session``.
"""

from __future__ import annotations

from typing import ClassVar

from models import EndCause, Player

__all__ = [
    "SeatDisconnectError",
    "SeatError",
    "SeatIllegalMoveError",
    "SeatNoShowError",
    "SeatProtocolError",
    "SeatStallError",
    "SeatTimeoutError",
    "stateless_failure",
]


class SeatError(Exception):
    """A seat failed; the message says how and is the ``nope`` reason."""

    cause: ClassVar[EndCause]
    #: Whether the seat is told why with a ``nope`` (not when it is gone or never came).
    tells_seat: ClassVar[bool] = True

    def __init__(self, side: Player, message: str) -> None:
        super().__init__(message)
        self.side = side


class SeatTimeoutError(SeatError):
    """The seat's clock ran out before its answer came."""

    cause = EndCause.TIMEOUT


class SeatStallError(SeatError):
    """No answer within the stall limit, whatever the clock."""

    cause = EndCause.STALL


class SeatIllegalMoveError(SeatError):
    """The answer puts a stone where the rules do not allow it."""

    cause = EndCause.ILLEGAL_MOVE


class SeatProtocolError(SeatError):
    """A frame that is malformed, unsolicited or out of order."""

    cause = EndCause.PROTOCOL_ERROR


class SeatDisconnectError(SeatError):
    """The seat's connection dropped (for a human: and did not come back in time)."""

    cause = EndCause.DISCONNECT
    tells_seat = False


class SeatNoShowError(SeatError):
    """The seat never connected within the no-show limit."""

    cause = EndCause.NO_SHOW
    tells_seat = False


def stateless_failure(side: Player, error: BaseException) -> SeatError:
    """The forfeit of a stateless turn that ended with ``error`` (what the adapter
    caught): a timeout, a failed connection, or anything else as a protocol error."""
    what = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    if isinstance(error, TimeoutError):
        return SeatTimeoutError(side, f"the stateless turn timed out ({what})")
    if isinstance(error, ConnectionError | OSError):
        return SeatDisconnectError(side, f"the stateless turn lost its connection ({what})")
    return SeatProtocolError(side, f"the stateless turn failed: {what}")

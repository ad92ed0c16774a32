"""How a seat fails: one exception class per ``EndCause`` a seat can forfeit with.

``game.session.GameSession`` raises them inside and turns each into a forfeit of
``side``; the message is the ``nope`` reason. Re-exported by ``game.session``, as is
``DialFailure``: how a dial of a bot's socket failed, which the adapter reports and the
session judges (a refusal for good ends the seat as a no-show at once). ``FailedTries``
is the like of a stateless turn: the tries the adapter makes again, which a flag's
reason names (the bot was not reached).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final

from models import EndCause, Player

__all__ = [
    "RETRIABLE_HANDSHAKE_STATUSES",
    "DialFailure",
    "FailedTries",
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
    """The seat never connected: not within the no-show limit, or its bot's server
    refused the connection for good (``DialFailure.final``)."""

    cause = EndCause.NO_SHOW
    tells_seat = False


#: HTTP 4xx answers to a WebSocket handshake that say "not now" rather than "never".
RETRIABLE_HANDSHAKE_STATUSES: Final = frozenset({408, 425, 429})


@dataclass(frozen=True)
class DialFailure:
    """One failed dial of a websocket bot's socket, as the adapter reports it to the
    session (``GameSession.dial_failed``): ``reason`` says what happened in words (it
    goes into the record of a no-show), ``status`` is the HTTP status the handshake was
    answered with, if it was.

    >>> DialFailure("the bot's socket answered the handshake with HTTP 404", 404).final
    True
    >>> DialFailure("the bot's socket answered the handshake with HTTP 503", 503).final
    False
    """

    reason: str
    status: int | None = None

    @property
    def final(self) -> bool:
        """Whether dialling again cannot help: the bot's server refused the handshake
        with an HTTP 4xx that does not say "later" (``RETRIABLE_HANDSHAKE_STATUSES``).
        A refused connection, a timeout or a 5xx may pass: those are retried."""
        status = self.status
        return (
            status is not None
            and 400 <= status < 500
            and status not in RETRIABLE_HANDSHAKE_STATUSES
        )


@dataclass(frozen=True)
class FailedTries:
    """The tries of a stateless turn that failed and were made again, as the adapter
    reports them (``GameSession.stateless_try_failed``): how many, and the last one's
    failure in words. A seat that flags or stalls with some, and no answer, was not
    reached: its forfeit says so, its cause (``timeout``, ``stall``) kept.

    >>> tries = FailedTries.first(ConnectionRefusedError("refused")).then(TimeoutError())
    >>> tries
    FailedTries(count=2, last='TimeoutError')
    >>> str(tries.explain(SeatTimeoutError(Player.O, "o ran out of time")))
    'o ran out of time; its bot was not reached (2 failed tries, the last: TimeoutError)'
    """

    count: int
    last: str

    @classmethod
    def first(cls, error: BaseException) -> FailedTries:
        """A turn's first failed try, which failed with ``error``."""
        return cls(1, _in_words(error))

    def then(self, error: BaseException) -> FailedTries:
        """These tries and one more, which failed with ``error``."""
        return FailedTries(self.count + 1, _in_words(error))

    def explain(self, flag: SeatError) -> SeatError:
        """``flag`` (the seat's clock or stall limit ran out during the turn) saying
        that its bot was not reached, and how the last try failed."""
        tries = "1 failed try" if self.count == 1 else f"{self.count} failed tries"
        why = f"{flag}; its bot was not reached ({tries}, the last: {self.last})"
        return type(flag)(flag.side, why)


def _in_words(error: BaseException) -> str:
    """An exception the adapter caught, for a record: its class, and its message if
    it has one.

    >>> _in_words(ConnectionRefusedError("refused")), _in_words(TimeoutError())
    ('ConnectionRefusedError: refused', 'TimeoutError')
    """
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def stateless_failure(side: Player, error: BaseException) -> SeatError:
    """The forfeit of a stateless turn that ended with ``error`` (what the adapter
    caught): a timeout, a failed connection, or anything else as a protocol error."""
    what = _in_words(error)
    if isinstance(error, TimeoutError):
        return SeatTimeoutError(side, f"the stateless turn timed out ({what})")
    if isinstance(error, ConnectionError | OSError):
        return SeatDisconnectError(side, f"the stateless turn lost its connection ({what})")
    return SeatProtocolError(side, f"the stateless turn failed: {what}")

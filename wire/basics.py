"""Basics of the wire: sides, coordinates, cells, game status, WebSocket close codes."""

from __future__ import annotations

from enum import Enum
from typing import Final

from pydantic import BaseModel, ConfigDict, StrictInt

# --------------------------------------------------------------------------- basics


class Player(str, Enum):
    """A side of the game. ``x`` (cross) opens at (0, 0); ``o`` (circle) moves first."""

    X = "x"
    O = "o"  # noqa: E741 - the name of the side, as in the spec

    @property
    def other(self) -> Player:
        """The opponent: ``Player.X.other is Player.O``."""
        return Player.O if self is Player.X else Player.X


class Coord(BaseModel):
    """Axial hex coordinate: +q goes right, +r goes top-right (s = -q - r).

    Coordinates are strict integers: ``"0"``, ``0.5`` and ``true`` are rejected (the
    wire's ``1.0`` is read as 1 by ``parse_packet``: JSON Schema's integer).

    >>> Coord(q=1, r=-2)
    Coord(q=1, r=-2)
    """

    model_config = ConfigDict(frozen=True)

    q: StrictInt
    r: StrictInt

    def as_tuple(self) -> tuple[int, int]:
        """The plain ``(q, r)`` pair the pure game core works with."""
        return (self.q, self.r)


class Cell(BaseModel):
    """A stone on the board: coordinate plus the side that owns it."""

    model_config = ConfigDict(frozen=True)

    q: StrictInt
    r: StrictInt
    p: Player

    @property
    def coord(self) -> Coord:
        return Coord(q=self.q, r=self.r)


class GameStatus(str, Enum):
    """Coarse state of a game, as the prototype's REST API and helpers report it."""

    WAITING = "waiting"
    IN_PROGRESS = "in_progress"
    X_WINS = "x_wins"
    O_WINS = "o_wins"
    DRAW = "draw"


# ------------------------------------------------------------- WebSocket close codes
# RFC 6455 codes both ends of the protocol close with.
CLOSE_NORMAL = 1000  # the game is over
CLOSE_GOING_AWAY = 1001  # a server shutting down
CLOSE_PROTOCOL_ERROR = 1002  # a malformed, undeclared or out-of-order packet
CLOSE_UNSUPPORTED_DATA = 1003  # a binary frame: the protocol is JSON in text frames
CLOSE_INVALID_DATA = 1007  # a text frame that is not UTF-8
CLOSE_POLICY_VIOLATION = 1008  # a valid packet that breaks the rules of the session
CLOSE_MESSAGE_TOO_BIG = 1009
CLOSE_INTERNAL_ERROR = 1011
CLOSE_TRY_AGAIN_LATER = 1013  # a limit of the server, not a fault of the peer
#: Longest close reason a close frame carries (RFC 6455: 125 bytes of payload, 2 of code).
MAX_CLOSE_REASON_BYTES: Final = 123


def clip_close_reason(reason: str) -> str:
    """``reason`` cut to fit a close frame (UTF-8, ``...`` marking the cut), whole when
    it fits.

    >>> clip_close_reason("game over")
    'game over'
    >>> len(clip_close_reason("é" * 100).encode()) <= MAX_CLOSE_REASON_BYTES
    True
    """
    data = reason.encode()
    if len(data) <= MAX_CLOSE_REASON_BYTES:
        return reason
    return data[: MAX_CLOSE_REASON_BYTES - 3].decode(errors="ignore") + "..."

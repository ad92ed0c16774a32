"""What the controller holds about the shown game: the session, its human seats and
the position on the board. Plain data; ``ui.controller.GameController`` acts on it.

A ``Session`` is replaced wholesale when another game is shown, so a late packet of the
previous game can never touch the new one: every socket callback checks that its session
is still the shown one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from game.hexgrid import Hex
from models import NewGameRequest
from ui.game_model import GameModel
from ui.net import ArenaClient, SocketLink
from ui.seat import HumanSeat, MoveRequested

__all__ = ["SeatLink", "Session", "ShownPosition"]


@dataclass(frozen=True)
class ShownPosition:
    """What the controller last put on the board (the board keeps it privately)."""

    index: int = 0
    stones: dict[Hex, str] = field(default_factory=dict)
    last_move: tuple[Hex, ...] = ()
    winning_line: tuple[Hex, ...] = ()
    legal: frozenset[Hex] | None = None
    interactive_side: str | None = None


@dataclass
class SeatLink:
    """One human seat: its protocol state machine and its socket."""

    side: str
    token: str
    seat: HumanSeat
    link: SocketLink | None = None
    request: MoveRequested | None = None
    attempts: int = 0
    connected: bool = False


@dataclass
class Session:
    """Everything tied to the shown game; replaced wholesale when another is shown, so
    a late packet of the previous game can never touch the new one."""

    model: GameModel
    client: ArenaClient | None = None
    request: NewGameRequest | None = None
    seats: list[SeatLink] = field(default_factory=list)
    spectator: SocketLink | None = None
    spectator_attempts: int = 0
    spectator_connected: bool = False
    closed: bool = False

"""What the controller holds about the shown game: the session, its human seats and
the position on the board, and what follows from them alone (the connection in words,
the stones to show); ``ui.controller.GameController`` acts on it.

A ``Session`` is replaced wholesale when another game is shown, so a late packet of the
previous game can never touch the new one: every socket callback checks that its session
is still the shown one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from game.hexgrid import Hex
from models import NewGameRequest
from ui.arena_client import ArenaClient
from ui.game_model import GameModel
from ui.seat import HumanSeat, MoveRequested
from ui.socket_link import SocketLink

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

    def connection_state(
        self, *, reconnecting: bool = False, lost: bool = False
    ) -> tuple[str, bool]:
        """The connection in words for the panel and the status bar, and whether all is
        well: "Connected as O", "Watching live", "Reconnecting…", "Disconnected"..."""
        if reconnecting:
            return "Reconnecting\u2026", False
        if lost:
            return "Disconnected", False
        if self.model.result is not None:
            return "Game over \u00b7 connection closed", True
        if self.seats:
            connected = [e.side.upper() for e in self.seats if e.connected]
            if connected:
                return f"Connected as {' and '.join(connected)}", True
            return "Connecting\u2026", True
        if self.spectator_connected:
            return "Watching live", True
        return "Connecting\u2026", True

    def position_at(self, index: int) -> tuple[dict[Hex, str], tuple[Hex, ...]]:
        """The stones to show after ``index`` moves (clamped to the latest) and the
        last move's stones. At the latest position of a running game, a human seat's
        board is shown when it is ahead of the spectator stream (a ``move_request``
        arrived first, or the person's own answer is on its way)."""
        model = self.model
        latest = len(model.moves)
        index = min(index, latest)
        stones = model.stones_at(index)
        last = model.last_move_at(index)
        if index == latest and model.result is None:
            for entry in self.seats:
                seat_stones = entry.seat.stones
                if not entry.seat.over and len(seat_stones) > len(stones):
                    new = tuple(cell for cell in seat_stones if cell not in stones)
                    stones, last = seat_stones, new or last
        return stones, last

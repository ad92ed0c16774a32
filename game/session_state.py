"""The per-request bookkeeping of a game session: what each seat knows, the stones
placed so far by move, and the answer being waited for. Mutable state private to
``game.session.GameSession``; no logic of the game here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from game.session_config import SeatInfo
from models import Coord, Move, Player

__all__ = ["PendingRequest", "PlacedStone", "SeatState", "moves_since"]


@dataclass
class SeatState:
    """A seat as the session tracks it."""

    info: SeatInfo
    connected: bool
    ever_connected: bool
    rtt: float = 0.0
    rtt_known: bool = False  # a ping has measured ``rtt`` (it is 0.0 until then)
    # When a dropped human forfeits unless it is back.
    reconnect_by: float | None = None
    # Stones of the game (``GameSession._stones``) this seat has been told about.
    told: int = 0
    # It answered and nothing was asked since: another answer is a second answer.
    answered: bool = False
    # How its connection last ended, as " (why)" for forfeit messages ("" if unknown).
    dropped_because: str = ""


@dataclass(frozen=True)
class PlacedStone:
    """A stone placed in the game, with the move (0-based) it belongs to."""

    move_index: int
    side: Player
    coord: Coord


@dataclass
class PendingRequest:
    """The answer being waited for (a human's split move owes one answer, however many
    requests it takes)."""

    side: Player
    stones_wanted: int  # 2, or 1 for the second stone of a human's split move
    placed: list[Coord] = field(default_factory=list)  # the split move's first stone


def moves_since(stones: Sequence[PlacedStone], told: int) -> list[Move]:
    """The stones from index ``told`` on, grouped by move (``move_request.previous``)."""
    groups: dict[int, tuple[Player, list[Coord]]] = {}
    for stone in stones[told:]:
        groups.setdefault(stone.move_index, (stone.side, []))[1].append(stone.coord)
    return [Move(side=side, pieces=pieces) for side, pieces in groups.values()]

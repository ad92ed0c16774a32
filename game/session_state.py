"""The per-request bookkeeping of a game session: what each seat knows and the answer
being waited for (the stones are ``game.session_board``'s). Mutable state private to
``game.session.GameSession``; no logic of the game here."""

from __future__ import annotations

from dataclasses import dataclass, field

from game.seat_errors import DialFailure, FailedTries
from game.session_config import SeatInfo
from models import Coord, Player

__all__ = ["PendingRequest", "SeatState"]


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
    # How the last dial of its bot's socket failed, while it has never connected.
    dial_failure: DialFailure | None = None
    # The failed tries of its stateless turn (made again), while it has no answer.
    failed_tries: FailedTries | None = None


@dataclass
class PendingRequest:
    """The answer being waited for (a human's split move owes one answer, however many
    requests it takes)."""

    side: Player
    stones_wanted: int  # 2, or 1 for the second stone of a human's split move
    placed: list[Coord] = field(default_factory=list)  # the split move's first stone

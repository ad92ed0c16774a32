"""What a running game's task (``game.running.RunningGame``) takes in: the events of
its inbox, in the order they happened (a seat attaching, a frame read, a drop, a
stateless answer, an abort), and the seats as the adapter holds them (``Slot``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from game.discovery import BotEndpoint
from game.outboxes import Outbox
from game.seats import BotSocketSeat
from game.session import SeatInfo
from models import Player, StatelessMoveResponse

__all__ = ["Abort", "Answer", "Attach", "Detach", "Frame", "GameEvent", "Slot"]


@dataclass(frozen=True)
class Attach:
    """A connection became the seat's (a bot's socket opened, a human came)."""

    side: Player
    conn: object
    outbox: Outbox


@dataclass(frozen=True)
class Frame:
    side: Player
    conn: object
    data: str | bytes
    at: float


@dataclass(frozen=True)
class Detach:
    side: Player
    conn: object
    why: str
    at: float


@dataclass(frozen=True)
class Answer:
    side: Player
    turn: int
    answer: StatelessMoveResponse | BaseException
    at: float


@dataclass(frozen=True)
class Abort:
    reason: str


GameEvent: TypeAlias = Attach | Frame | Detach | Answer | Abort


@dataclass
class Slot:
    """One seat of a running game, as the adapter sees it."""

    info: SeatInfo
    endpoint: BotEndpoint | None = None
    token: str | None = None
    conn: object | None = None  # identity of the current connection
    outbox: Outbox | None = None
    socket: BotSocketSeat | None = None

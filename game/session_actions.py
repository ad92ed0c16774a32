"""What a game session asks its adapters to do: the ``Action`` values
``game.session.GameSession`` returns (frozen dataclasses, re-exported by
``game.session``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from pydantic import BaseModel

from models import GameRecord, GameResult, Player, RecordedMove, StatelessMoveRequest

__all__ = [
    "Action",
    "Broadcast",
    "CloseSeat",
    "GameOver",
    "RecordMove",
    "RequestStatelessTurn",
    "SendTo",
]


@dataclass(frozen=True)
class SendTo:
    """Send ``packet`` to the seat of ``side``."""

    side: Player
    packet: BaseModel


@dataclass(frozen=True)
class Broadcast:
    """Send ``packet`` to every spectator (the same object to all: encode it once)."""

    packet: BaseModel


@dataclass(frozen=True)
class RequestStatelessTurn:
    """``POST .../turn`` to the stateless bot of ``side``; answer with
    ``stateless_answer``. ``time_limit`` is the seconds until the side flags (the HTTP
    timeout to use), or None."""

    side: Player
    request: StatelessMoveRequest
    time_limit: float | None


@dataclass(frozen=True)
class CloseSeat:
    """Close the seat's socket with a WebSocket close ``code`` and ``reason``."""

    side: Player
    code: int
    reason: str


@dataclass(frozen=True)
class RecordMove:
    """Write move ``index`` (0-based) of the game to the store."""

    index: int
    move: RecordedMove


@dataclass(frozen=True)
class GameOver:
    """The game ended: store ``record`` (which holds ``result``); ``detail`` is for the
    log."""

    result: GameResult
    record: GameRecord
    detail: str


Action: TypeAlias = SendTo | Broadcast | RequestStatelessTurn | CloseSeat | RecordMove | GameOver

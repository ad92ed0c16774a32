"""What a running game's task (``game.running.RunningGame``) takes in: the events of
its inbox, in the order they happened (a seat attaching, a frame read, a drop, a
failed dial, a stateless answer or a try of it that failed, an abort, the store's word
that the game is over already), and the seats as the adapter holds them (``Slot``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from game.discovery import BotEndpoint
from game.outboxes import Outbox
from game.seats import BotSocketSeat
from game.session import DialFailure, SeatInfo, SendBoardPolicy, resolve_send_board
from models import GameResult, Player, PlayerConfig, StatelessMoveResponse

__all__ = [
    "Abort",
    "Answer",
    "Attach",
    "Detach",
    "DialFailed",
    "Frame",
    "GameEvent",
    "RecordedOver",
    "Slot",
    "TryFailed",
]


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
class DialFailed:
    """A dial of the seat's bot failed (``GameSession.dial_failed``)."""

    side: Player
    failure: DialFailure
    at: float


@dataclass(frozen=True)
class Answer:
    side: Player
    turn: int
    answer: StatelessMoveResponse | BaseException
    at: float


@dataclass(frozen=True)
class TryFailed:
    """A try of the stateless turn ``turn`` failed with ``error`` and is made again
    (``GameSession.stateless_try_failed``)."""

    side: Player
    turn: int
    error: BaseException
    at: float


@dataclass(frozen=True)
class Abort:
    reason: str


@dataclass(frozen=True)
class RecordedOver:
    """The store has the game over already, with ``result`` and ``moves`` moves (its
    recorder found out): ``GameSession.recorded_over``."""

    result: GameResult
    moves: int


GameEvent: TypeAlias = (
    Attach | Frame | Detach | DialFailed | Answer | TryFailed | Abort | RecordedOver
)


@dataclass
class Slot:
    """One seat of a running game, as the adapter sees it."""

    info: SeatInfo
    endpoint: BotEndpoint | None = None
    token: str | None = None
    conn: object | None = None  # identity of the current connection
    outbox: Outbox | None = None
    socket: BotSocketSeat | None = None

    @classmethod
    def for_player(
        cls, player: PlayerConfig, endpoint: BotEndpoint | None, send_board: SendBoardPolicy
    ) -> Slot:
        """The seat of ``player`` as ``POST /game/new`` configured it: a person's when
        ``endpoint`` is None, else the bot's behind its discovered ``endpoint`` (by its
        socket or its stateless API); whether its requests carry the board follows
        ``player.send_board``, else the server's ``send_board`` policy."""
        if endpoint is None:
            return cls(
                SeatInfo(
                    "human",
                    name=player.name,
                    time_control=player.time_control,
                    send_board=resolve_send_board("human", player.send_board, send_board),
                )
            )
        name = player.name or endpoint.name
        if endpoint.transport == "websocket":
            info = SeatInfo(
                "bot_ws",
                name=name,
                declares=endpoint.capabilities.bws_v1_alpha,
                config=player.config_packet(),
                url=player.bot_url,
                meta=endpoint.capabilities.meta,
                time_control=player.time_control,
                send_board=resolve_send_board("bot_ws", player.send_board, send_board),
            )
        else:
            info = SeatInfo(
                "bot_stateless",
                name=name,
                declares=endpoint.capabilities.stateless_v1_alpha,
                url=player.bot_url,
                meta=endpoint.capabilities.meta,
                time_control=player.time_control,
            )
        return cls(info, endpoint=endpoint)

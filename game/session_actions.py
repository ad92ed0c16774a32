"""What a game session asks its adapters to do: the ``Action`` values
``game.session.GameSession`` returns (frozen dataclasses, re-exported by
``game.session``)."""

from __future__ import annotations

from collections.abc import Callable
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


class Broadcast:
    """Send ``packet`` to every spectator (the same object to all: encode it once).

    A move's ``board_update`` is built on first read of ``packet`` (``Broadcast.later``),
    from values the session took when it made the action: a game nobody watches never
    builds one (it would copy the whole board, every move). ``ends`` tells the `end`
    apart without building anything.

    >>> from models import NopePacket
    >>> built = []
    >>> action = Broadcast.later(lambda: built.append(1) or NopePacket(reason="r"))
    >>> action.ends, built
    (False, [])
    >>> action.packet.reason, action.packet is action.packet, built
    ('r', True, [1])
    """

    __slots__ = ("_build", "_build_compact", "_packet", "ends")
    __match_args__ = ("packet",)

    def __init__(self, packet: BaseModel, *, ends: bool | None = None) -> None:
        self._packet: BaseModel | None = packet
        self._build: Callable[[], BaseModel] | None = None
        self._build_compact: Callable[[], BaseModel] | None = None
        #: Whether this is the `end` (never skipped, always kept for latecomers).
        self.ends = getattr(packet, "type", None) == "end" if ends is None else ends

    @classmethod
    def later(
        cls, build: Callable[[], BaseModel], compact: Callable[[], BaseModel] | None = None
    ) -> Broadcast:
        """An update (not the `end`) whose packet ``build`` makes when first read;
        ``compact`` makes the compact stream's variant (``compact_packet``)."""
        action = cls.__new__(cls)
        action._packet, action._build, action.ends = None, build, False
        action._build_compact = compact
        return action

    @property
    def has_compact(self) -> bool:
        """Whether the compact stream gets a packet of its own (else ``packet``)."""
        return self._build_compact is not None

    def compact_packet(self) -> BaseModel:
        """The compact stream's packet (a ``board_update`` without ``board``), built
        anew on each call: the adapter encodes it once."""
        return self.packet if self._build_compact is None else self._build_compact()

    @property
    def packet(self) -> BaseModel:
        if self._packet is None:
            assert self._build is not None
            self._packet, self._build = self._build(), None
        return self._packet

    @property
    def built(self) -> bool:
        """Whether ``packet`` exists yet (read, or given)."""
        return self._packet is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Broadcast):
            return NotImplemented
        return self.packet == other.packet

    def __hash__(self) -> int:
        return hash(self.packet)

    def __repr__(self) -> str:
        return f"Broadcast(packet={self.packet!r})"


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

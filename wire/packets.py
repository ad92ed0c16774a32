"""Every packet of the protocol, and the packet sets a receiver accepts."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Final, Generic, Literal, TypeAlias, TypeVar, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    TypeAdapter,
    model_validator,
)

from wire.basics import GameStatus, Player
from wire.board import Board, Milliseconds, Move, Seconds
from wire.errors import _describe
from wire.match import Match
from wire.records import (
    EndCause,
    HumanMoveOption,
    MoveAnswer,
    MoveOption,
    PositionEvaluation,
    RecordedMove,
    RecordPlayer,
    ResultReason,
)

# ------------------------------------------------------- packets: server to a seat
#
# A seat is a bot (we dial its socket) or a human client (it dials ours); both speak the
# same packets. Packets are frozen: one instance may be sent to many receivers.
# Unknown fields are ignored, as the spec asks of bots, except where noted.


class ConfigPacket(BaseModel):
    """Bot settings, sent before ``setup`` to bots that declare ``config``.

    Unknown fields are kept, so extensions (``x-`` prefixed, per spec) reach the bot;
    ``extensions()`` returns just those.

    >>> from models import parse_packet
    >>> packet = parse_packet('{"type": "config", "depth": 3, "x-seed": 7}')
    >>> packet.depth, packet.extensions()
    (3, {'x-seed': 7})
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    type: Literal["config"] = "config"
    depth: StrictInt | None = None

    def extensions(self) -> dict[str, Any]:
        """The ``x-`` prefixed settings, which the spec reserves for bot-specific use."""
        return {k: v for k, v in (self.model_extra or {}).items() if k.startswith("x-")}


class SetupPacket(BaseModel):
    """The position to start from; for spectators, the whole game so far.

    A seat gets only ``board`` (when it is missing, which the spec allows, the standard
    start is assumed). A spectator's ``setup`` also carries the history and the state of
    the game, so a late joiner misses nothing; seats never receive those fields, and a
    seat that did would ignore them. One model for both keeps ``setup`` a single member
    of the packet union.
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["setup"] = "setup"
    board: Board = Field(default_factory=Board.standard)
    # Spectator fields: absent for seats.
    game_id: str | None = None
    moves: list[RecordedMove] | None = None
    player_x: RecordPlayer | None = None
    player_o: RecordPlayer | None = None
    match: Match | None = None
    to_move: Player | None = None
    status: GameStatus | None = None
    clock_x_ms: Milliseconds | None = None
    clock_o_ms: Milliseconds | None = None
    #: Extension: the game record's tags (``GameRecord.tags``), absent when it has
    #: none; a series' game carries ``Series``, ``SeriesRule`` and ``SeriesScore``.
    tags: dict[str, str] | None = None
    #: Extension: the record's ``name`` and ``started_at`` (absent when it has none), so
    #: a spectator's copy of the game (the desktop client's export) carries them too.
    name: str | None = None
    started_at: datetime | None = None


class MoveRequestPacket(BaseModel):
    """Asks a seat for a move.

    ``previous`` holds the moves made since this seat's last request (protocol.md);
    ``board`` is our extension, the full board after them; ``move_time_limit`` (seconds)
    is sent only to bots that declare ``move_time_limit``. ``clock_x_ms``/``clock_o_ms``
    (extension) are both sides' remaining time when the game has a clock.

    >>> from models import parse_packet
    >>> parse_packet('{"type":"move_request","side":"o","previous":[]}').side
    <Player.O: 'o'>
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["move_request"] = "move_request"
    side: Player
    previous: list[Move]
    board: Board | None = None
    move_time_limit: Seconds | None = None
    clock_x_ms: Milliseconds | None = None
    clock_o_ms: Milliseconds | None = None


class HeartbeatPacket(BaseModel):
    """Sent every ``heartbeat`` ms; ``waiting`` is true exactly when the server awaits
    an answer from this seat."""

    model_config = ConfigDict(frozen=True)

    type: Literal["heartbeat"] = "heartbeat"
    waiting: StrictBool


class EvalRequestPacket(BaseModel):
    """Asks a bot that declares ``evaluation`` to judge the position, ``side`` to move."""

    model_config = ConfigDict(frozen=True)

    type: Literal["eval_request"] = "eval_request"
    side: Player
    evaluation_time_limit: Seconds | None = None


class InterruptPacket(BaseModel):
    """Tells a bot that declares ``interruptible`` to drop its pending request."""

    model_config = ConfigDict(frozen=True)

    type: Literal["interrupt"] = "interrupt"


def _end_detail(value: object) -> object:
    """Known causes become ``EndCause``; other strings stay text (a newer server may
    name causes we do not know, and the last packet of a game is no reason to fail)."""
    if not isinstance(value, str):
        raise ValueError(f"expected a string naming the cause, got {_describe(value)}")
    try:
        return EndCause(value)
    except ValueError:
        return value


_CAUSES_BY_NAME: Final = {cause.value: cause for cause in EndCause}

_EndDetail = Annotated[
    EndCause | StrictStr, Field(union_mode="left_to_right"), BeforeValidator(_end_detail)
]


class EndPacket(BaseModel):
    """The game is over; sent to both seats and every spectator, then the socket closes.

    ``winner`` is ``None`` for a draw and is always written (``null`` is meaningful).
    ``detail`` is an ``EndCause`` when it names a known cause and the raw text otherwise;
    our server writes the cause then the reason in words (``"stall: o forfeits: ..."``,
    ``GameResult.end_detail``). ``cause`` gives the ``EndCause`` or ``None``.

    >>> from models import parse_packet
    >>> parse_packet('{"type":"end","winner":null,"reason":"draw"}')
    EndPacket(type='end', winner=None, reason=<ResultReason.DRAW: 'draw'>, detail=None, board=None)
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["end"] = "end"
    winner: Player | None
    reason: ResultReason
    detail: _EndDetail | None = None
    board: Board | None = None

    @model_validator(mode="after")
    def _winner_matches_reason(self) -> EndPacket:
        if (self.reason is ResultReason.DRAW) != (self.winner is None):
            raise ValueError("a draw has no winner, and every other result has one")
        return self

    @property
    def cause(self) -> EndCause | None:
        """The known ``EndCause`` that ``detail`` names (alone, or before ``": "`` and the
        reason in words), else ``None``."""
        if self.detail is None or isinstance(self.detail, EndCause):
            return self.detail
        named, _, _reason = self.detail.partition(": ")
        return _CAUSES_BY_NAME.get(named)

    @property
    def cause_detail(self) -> str | None:
        """The reason in words after a known cause (``GameResult.detail``), else None."""
        if self.cause is None or isinstance(self.detail, EndCause) or self.detail is None:
            return None
        return self.detail.partition(": ")[2] or None


class OpponentStatusPacket(BaseModel):
    """Our extension for human seats: the opponent, a person, dropped or came back.

    Sent only to a connected human seat whose opponent is a human seat too (bots never
    get it): ``connected`` false when the opponent's connection dropped, with
    ``reconnect_by_ms``, the milliseconds left before it forfeits with ``disconnect``
    unless it is back; ``connected`` true (and no ``reconnect_by_ms``) when it is back.

    >>> from models import dump_packet
    >>> dump_packet(OpponentStatusPacket(side=Player.O, connected=False, reconnect_by_ms=60000))
    b'{"type":"opponent_status","side":"o","connected":false,"reconnect_by_ms":60000}'
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["opponent_status"] = "opponent_status"
    side: Player
    connected: StrictBool
    reconnect_by_ms: Milliseconds | None = None


class NopePacket(BaseModel):
    """Sent to a seat that broke the protocol, just before its socket closes."""

    model_config = ConfigDict(frozen=True)

    type: Literal["nope"] = "nope"
    reason: str


# ------------------------------------------------------- packets: seat to server


class MoveResponsePacket(BaseModel):
    """A bot's move: 2 pieces (1 when it wins), best-first ``considerations`` optional."""

    model_config = ConfigDict(frozen=True)

    type: Literal["move_response"] = "move_response"
    move: MoveAnswer
    considerations: list[MoveOption] | None = None


class HumanMoveResponsePacket(BaseModel):
    """A human's move: like ``MoveResponsePacket`` but 1 piece is allowed.

    It shares the tag ``move_response``, so it is not in ``Packet``; a server reads a
    human seat with ``parse_packet(data, allowed=HUMAN_CLIENT_PACKETS)``.
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["move_response"] = "move_response"
    move: HumanMoveOption
    considerations: list[MoveOption] | None = None


class EvalResponsePacket(BaseModel):
    """A bot's answer to ``eval_request``."""

    model_config = ConfigDict(frozen=True)

    type: Literal["eval_response"] = "eval_response"
    evaluation: PositionEvaluation


class ResignPacket(BaseModel):
    """Our extension for human seats: the person gives the game up. The game ends at
    once: the opponent wins by forfeit, cause ``resign``. A bot may not send it (its
    seat reads ``CLIENT_PACKETS``)."""

    model_config = ConfigDict(frozen=True)

    type: Literal["resign"] = "resign"


# ------------------------------------------------------------ packets: spectators


class BoardUpdatePacket(BaseModel):
    """One move, as spectators see it: the board after it and the state of the game.

    ``to_move`` is ``None`` once the game is over and is always written. Clocks are the
    remaining milliseconds, absent without a clock; ``evaluation`` and
    ``considerations`` are present when the mover gave them. ``board`` is absent in the
    compact stream (``/spectate/<id>?board=0``, our extension to protocol.md's
    Spectators section): a client rebuilds the board from the ``setup`` and the moves,
    and each update stays O(1) in the game's length. protocol.md's stream always has it.
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["board_update"] = "board_update"
    board: Board | None = None
    move: Move
    to_move: Player | None
    status: GameStatus
    clock_x_ms: Milliseconds | None = None
    clock_o_ms: Milliseconds | None = None
    evaluation: PositionEvaluation | None = None
    considerations: list[MoveOption] | None = None


class AnalysisPacket(BaseModel):
    """An analysis bot's evaluation of one position of a watched game (our extension to
    protocol.md's Spectators section; ``game.analysis``). Spectators only: seats never
    get it, and it is not part of the game record.

    ``ply`` is the number of recorded moves played when the position arose (0: the start
    position); ``bot`` names the analysis bot (its ``meta.name``, else its URL).

    >>> from models import parse_packet
    >>> packet = parse_packet(
    ...     '{"type":"analysis","ply":3,"evaluation":{"heuristic":0.25},"bot":"ThreatBot"}'
    ... )
    >>> packet.ply, packet.evaluation.heuristic, packet.bot
    (3, 0.25, 'ThreatBot')
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["analysis"] = "analysis"
    ply: Annotated[StrictInt, Field(ge=0)]
    evaluation: PositionEvaluation
    bot: StrictStr


# ------------------------------------------------------------------ packet sets

Packet: TypeAlias = Annotated[
    ConfigPacket
    | SetupPacket
    | MoveRequestPacket
    | HeartbeatPacket
    | EvalRequestPacket
    | InterruptPacket
    | EndPacket
    | NopePacket
    | OpponentStatusPacket
    | MoveResponsePacket
    | EvalResponsePacket
    | ResignPacket
    | BoardUpdatePacket
    | AnalysisPacket,
    Field(discriminator="type"),
]
"""Every packet, told apart by ``type`` (a human's 1-stone answer aside)."""

ServerPacket: TypeAlias = Annotated[
    ConfigPacket
    | SetupPacket
    | MoveRequestPacket
    | HeartbeatPacket
    | EvalRequestPacket
    | InterruptPacket
    | EndPacket
    | NopePacket
    | OpponentStatusPacket,
    Field(discriminator="type"),
]
"""What a seat (bot or human client) may receive from the server (``opponent_status``
only ever goes to a human seat)."""

ClientPacket: TypeAlias = Annotated[
    MoveResponsePacket | EvalResponsePacket, Field(discriminator="type")
]
"""What the server may receive from a bot."""

HumanClientPacket: TypeAlias = Annotated[
    HumanMoveResponsePacket | EvalResponsePacket | ResignPacket, Field(discriminator="type")
]
"""What the server may receive from a human seat: a move may have 1 stone; ``resign``."""

SpectatorPacket: TypeAlias = Annotated[
    SetupPacket | BoardUpdatePacket | AnalysisPacket | EndPacket | NopePacket,
    Field(discriminator="type"),
]
"""What a spectator may receive (``nope`` when it is refused, ``analysis`` when the
server has an analysis bot)."""

P = TypeVar("P", covariant=True)


class PacketSet(Generic[P]):
    """The packets a receiver accepts, and the models that read them.

    Pass one to ``parse_packet(..., allowed=...)``: other packet types are refused with
    a message naming what was expected, and the result is typed as the set's union.
    ``HUMAN_CLIENT_PACKETS`` reads ``move_response`` with the 1-stone human model.
    """

    def __init__(self, name: str, union: Any) -> None:
        self.name = name
        self._adapter: TypeAdapter[Any] = TypeAdapter(union)
        members, _discriminator = get_args(union)
        self.models: Mapping[str, type[BaseModel]] = {
            model.model_fields["type"].default: model for model in get_args(members)
        }
        self.tags: frozenset[str] = frozenset(self.models)

    def expected(self) -> str:
        return ", ".join(self.models)

    def __repr__(self) -> str:
        return f"PacketSet({self.name!r}: {self.expected()})"


PACKETS: PacketSet[Packet] = PacketSet("any packet", Packet)
SERVER_PACKETS: PacketSet[ServerPacket] = PacketSet("server to seat", ServerPacket)
CLIENT_PACKETS: PacketSet[ClientPacket] = PacketSet("bot to server", ClientPacket)
HUMAN_CLIENT_PACKETS: PacketSet[HumanClientPacket] = PacketSet("human to server", HumanClientPacket)
SPECTATOR_PACKETS: PacketSet[SpectatorPacket] = PacketSet("to spectator", SpectatorPacket)

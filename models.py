"""Shared wire types of htttx-arena: coordinates, boards, packets, capabilities, REST bodies.

Every packet of the HTTTX Bot API (``../shared/spec``) and of our protocol
(``../shared/protocol.md``) is a pydantic model here. Names stay compatible with the
original prototype (``Coord``, ``Cell``, ``Player``, ``Match``, ``PlayerConfig``,
``NewGameRequest``, ``GameStatus``), so code written for it imports unchanged.

The pure game core (``game.rules``) does not import this module; conversion between
plain ``(q, r)`` tuples and these models happens at the boundary.

Reading and writing the wire goes through three functions, never through
``json`` + ``model_validate`` / ``model_dump_json`` by hand:

- ``parse_packet(data, allowed=...)`` turns one WebSocket frame into a packet model;
- ``parse_body(Model, data)`` does the same for HTTP bodies (stateless API,
  capabilities, REST requests);
- ``dump_packet(model)`` encodes either, leaving optional fields out instead of
  writing ``null`` (the spec's optional fields must be absent).

Anything malformed raises ``ProtocolError`` (a ``ValueError``) whose message names the
field and what was expected, e.g. ``move_response.move.pieces[0].q: expected an
integer, got '0'``.

Sections: basics, match settings, evaluation and moves, game records, boards and moves
on the wire, packets (server to seat, seat to server, spectators), packet sets, the
stateless API, names, capabilities, REST bodies, errors, the codec.
"""

from __future__ import annotations

import json
import math
import secrets
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import datetime
from enum import Enum
from functools import cache
from types import NoneType, UnionType
from typing import (
    Annotated,
    Any,
    ClassVar,
    Final,
    Generic,
    Literal,
    TypeAlias,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    overload,
)

import msgspec
import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

__all__ = [
    "CLIENT_PACKETS",
    "DEFAULT_TURN_LIMIT",
    "HUMAN_CLIENT_PACKETS",
    "MAX_CLOCK_SECONDS",
    "MAX_CONFIG_BYTES",
    "MAX_ECHO_CHARS",
    "MAX_HEARTBEAT_MS",
    "MAX_HOSTED_CLOCK_SECONDS",
    "MAX_HOSTED_INCREMENT_SECONDS",
    "MAX_HOSTED_VIEW_DISTANCE",
    "MAX_NAME_LENGTH",
    "MAX_TURN_LIMIT",
    "MAX_URL_LENGTH",
    "PACKETS",
    "SERVER_PACKETS",
    "SPECTATOR_PACKETS",
    "BasicWebsocketCapability",
    "BasicWebsocketVersions",
    "Board",
    "BoardUpdatePacket",
    "BwsConfigCapability",
    "BwsV1Alpha",
    "Capabilities",
    "Cell",
    "ClientPacket",
    "ClockType",
    "ConfigPacket",
    "Coord",
    "EndCause",
    "EndPacket",
    "EvalRequestPacket",
    "EvalResponsePacket",
    "GameRecord",
    "GameResult",
    "GameStatus",
    "HeartbeatPacket",
    "HostedBot",
    "HostedBots",
    "HumanClientPacket",
    "HumanMoveOption",
    "HumanMoveResponsePacket",
    "InterruptPacket",
    "Match",
    "Meta",
    "Move",
    "MoveAnswer",
    "MoveOption",
    "MoveRequestPacket",
    "MoveResponsePacket",
    "Name",
    "NewGameRequest",
    "NewGameResponse",
    "NopePacket",
    "Packet",
    "PacketSet",
    "Player",
    "PlayerConfig",
    "PlayerType",
    "PositionEvaluation",
    "ProtocolError",
    "RecordPlayer",
    "RecordedMove",
    "ResultReason",
    "ServerPacket",
    "SetupPacket",
    "SpectatorPacket",
    "StatelessBoard",
    "StatelessCapability",
    "StatelessMove",
    "StatelessMoveRequest",
    "StatelessMoveResponse",
    "StatelessV1Alpha",
    "StatelessVersions",
    "clip_close_reason",
    "clip_text",
    "dump_packet",
    "parse_body",
    "parse_packet",
]

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

    Coordinates are strict integers: ``"0"``, ``0.5`` and ``true`` are rejected.

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


# ------------------------------------------------------------------ match settings

ClockType = Literal["none", "turn", "match", "incremental"]

# Bounds of a Match, any game's settings: what the rules can play (distances, as in
# game.rules) and what every tool can represent (times and counts fit a signed 32-bit
# integer, in ms for times). Records, notation and bots' settings are read within these.
MIN_HEARTBEAT_MS: Final = 100
MAX_INT32: Final = 2**31 - 1
#: Clock and increment bound: their milliseconds fit a signed 32-bit integer (24.8 days).
MAX_CLOCK_SECONDS: Final = MAX_INT32 / 1000

# What this server hosts: POST /game/new applies these tighter bounds (NewGameRequest),
# so that every game it runs ends and costs a bounded amount. They are figures, measured
# with bench/game_lengths.py and bench/match_settings.py (the README says more).
#: Turn limit of a game that sets none. The longest game ended by a line between the
#: example bots (RandomBot, CenterBot, ThreatBot, every pairing; bench/game_lengths.py,
#: 200 games each) took 29 moves; the community plays longer games, so 17 times that.
#: RandomBot against RandomBot hardly ever makes a line (none of 8 games within 1000
#: moves): this is what ends such games.
DEFAULT_TURN_LIMIT: Final = 500
#: The most moves a hosted game may last: twice the default, 2000 stones (the largest
#: board bench/rules.py measures). A simple bot's cost per move grows with the board:
#: two hosted RandomBots (view and win distance 20) use 27 s of CPU for 500 moves and
#: 112 s for 1000; at view distance 50, over 190 s without reaching 500.
MAX_TURN_LIMIT: Final = 1000
#: Legal cells (the memory of every position of a game, the server's and each bot's)
#: and a simple bot's time per move grow with the square of the view distance: at 200
#: stones of random play, 2.6x the default's at 12, 5x at 20, 43x at 50
#: (bench/match_settings.py). The most one client may start (16 games of two hosted
#: RandomBots, bench/hosted_load.py) stays within 2x of the default's at 12 (wall time,
#: /health latency, RSS) and not at 20 (5x the time, 3x the latency, 2.2x the memory).
MAX_HOSTED_VIEW_DISTANCE: Final = 12
#: A heartbeat is how a bot tells a live server from a dead one: a minute at most.
MAX_HEARTBEAT_MS: Final = 60_000
#: A day per side (or per turn); an increment of at most an hour.
MAX_HOSTED_CLOCK_SECONDS: Final = 86_400.0
MAX_HOSTED_INCREMENT_SECONDS: Final = 3_600.0


class Match(BaseModel):
    """Settings of one game. Defaults are the prototype's.

    ``clock`` is in seconds: per move for ``turn``, per side for ``match`` and the base of
    ``incremental`` (which adds ``increment`` seconds after each move).

    >>> Match().view_distance, Match().win_distance
    (8, 6)
    >>> Match(clock_type="match")
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for Match
    ...
    """

    model_config = ConfigDict(frozen=True)

    heartbeat: Annotated[
        StrictInt, Field(ge=MIN_HEARTBEAT_MS, le=MAX_INT32, description="heartbeat interval in ms")
    ] = 5000
    view_distance: Annotated[StrictInt, Field(ge=1, le=50)] = 8
    win_distance: Annotated[StrictInt, Field(ge=2, le=20)] = 6
    turn_limit: Annotated[StrictInt, Field(ge=1, le=MAX_INT32)] | None = None
    clock_type: ClockType = "none"
    # StrictFloat still takes JSON integers ("clock": 60) but not "60" or true.
    clock: Annotated[StrictFloat, Field(gt=0, le=MAX_CLOCK_SECONDS, allow_inf_nan=False)] | None = (
        None
    )
    increment: Annotated[StrictFloat, Field(ge=0, le=MAX_CLOCK_SECONDS, allow_inf_nan=False)] = 0.0

    @model_validator(mode="after")
    def _clock_is_consistent(self) -> Match:
        if self.clock_type != "none" and self.clock is None:
            raise ValueError(
                f"clock_type {self.clock_type!r} needs 'clock' (seconds, greater than 0)"
            )
        if self.increment and self.clock_type != "incremental":
            raise ValueError("'increment' only applies to clock_type 'incremental'")
        return self


# ------------------------------------------------------------ evaluation and moves


class PositionEvaluation(BaseModel):
    """A bot's opinion of a position. Positive favours X.

    ``heuristic`` is nominally in [-1, 1] but may be any real number; ``win_in`` is the
    number of moves to a forced win (positive for X, negative for O). Extra fields are
    kept, as the spec allows.
    """

    model_config = ConfigDict(extra="allow")

    # Strict: a bot sending "heuristic": true or "0.5" is sending a wrong type.
    heuristic: StrictFloat | None = None
    win_in: StrictInt | None = None


class MoveAnswer(BaseModel):
    """The move of a bot's answer (``move_response``, the stateless response): 2 pieces,
    or 1 when that stone wins the game, since the rules end a move on a winning stone.

    The spec's prose says 2 pieces but its schemas do not enforce it, and public engines
    answer a winning stone alone; whether a lone stone wins is the referee's to judge
    (``game.session``), not the parser's.
    """

    pieces: Annotated[list[Coord], Field(min_length=1, max_length=2)]
    evaluation: PositionEvaluation | None = None


class MoveOption(MoveAnswer):
    """A complete move a bot considered: 2 pieces plus an optional evaluation."""

    pieces: Annotated[list[Coord], Field(min_length=2, max_length=2)]


class HumanMoveOption(BaseModel):
    """A human's answer to a ``move_request``: 2 pieces, or 1 in stone-by-stone mode.

    The prototype's desktop client sends one stone at a time; the server places it and
    asks again for the second stone (protocol.md, "Humans"). Only human seats may use
    it, so it is a separate type instead of a looser ``MoveOption``.
    """

    pieces: Annotated[list[Coord], Field(min_length=1, max_length=2)]
    evaluation: PositionEvaluation | None = None


# ------------------------------------------------------------------- game records


class PlayerType(str, Enum):
    BOT = "bot"
    HUMAN = "human"


class RecordPlayer(BaseModel):
    """Who sat in a seat of a recorded game; ``meta`` is a bot's capabilities meta."""

    name: str | None = None
    type: PlayerType | None = None
    bot_url: str | None = None
    meta: Meta | None = None


class RecordedMove(BaseModel):
    """One move of a game record.

    ``pieces`` has 2 stones, or 1 when the first stone of the move won the game.
    ``clock_ms`` is the mover's remaining clock after the move; ``thinking_ms`` the time
    the mover was charged for it; ``latency_ms`` the mover's network round trip last
    measured before it (a WebSocket ping), which was not charged.
    """

    side: Player
    pieces: Annotated[list[Coord], Field(min_length=1, max_length=2)]
    evaluation: PositionEvaluation | None = None
    considerations: list[MoveOption] = Field(default_factory=list)
    clock_ms: Annotated[StrictInt, Field(ge=0)] | None = None
    thinking_ms: Annotated[StrictInt, Field(ge=0)] | None = None
    latency_ms: Annotated[StrictInt, Field(ge=0)] | None = None


class ResultReason(str, Enum):
    WIN = "win"
    DRAW = "draw"
    FORFEIT = "forfeit"


class EndCause(str, Enum):
    """Why a game ended other than by a line: the ``detail`` of an ``end`` packet."""

    TIMEOUT = "timeout"
    ILLEGAL_MOVE = "illegal_move"
    PROTOCOL_ERROR = "protocol_error"
    DISCONNECT = "disconnect"
    NO_SHOW = "no_show"
    STALL = "stall"
    RESIGN = "resign"
    ABORTED = "aborted"
    TURN_LIMIT = "turn_limit"


#: Longest ``GameResult.detail`` kept, in characters; longer text is cut, ``...`` marking it.
MAX_RESULT_DETAIL_CHARS: Final = 300


def _clip_result_detail(text: str | None) -> str | None:
    if text is None or len(text) <= MAX_RESULT_DETAIL_CHARS:
        return text
    return text[: MAX_RESULT_DETAIL_CHARS - 3] + "..."


class GameResult(BaseModel):
    """How a game ended: ``winner`` (None for a draw), ``reason`` and, unless the game was
    won by a line, the ``cause`` and its ``detail`` in words (what the seat did wrong,
    say), clipped to ``MAX_RESULT_DETAIL_CHARS``.

    >>> GameResult(winner=Player.X, reason=ResultReason.FORFEIT, cause=EndCause.STALL,
    ...            detail="o forfeits: no answer within the stall limit of 300 s").end_detail
    'stall: o forfeits: no answer within the stall limit of 300 s'
    """

    winner: Player | None
    reason: ResultReason
    cause: EndCause | None = None
    detail: Annotated[str | None, AfterValidator(_clip_result_detail)] = None

    @property
    def end_detail(self) -> str | None:
        """The ``end`` packet's ``detail``: the cause, then ``": "`` and the detail."""
        if self.cause is None:
            return None
        return self.cause.value if self.detail is None else f"{self.cause.value}: {self.detail}"

    @model_validator(mode="after")
    def _consistent(self) -> GameResult:
        if (self.reason is ResultReason.DRAW) != (self.winner is None):
            raise ValueError("a draw has no winner, and every other result has one")
        if self.reason is ResultReason.FORFEIT and self.cause is None:
            raise ValueError("a forfeit needs a cause")
        return self


def _standard_setup() -> list[Cell]:
    return [Cell(q=0, r=0, p=Player.X)]


class GameRecord(BaseModel):
    """Everything worth keeping about one game, shared by the server, the client and
    ``game.notation``.

    ``setup`` is the position before the first move (X at the origin in a standard game)
    and ``first_to_move`` the side that makes move 1. ``tags`` holds notation tags that
    have no field of their own, so records read from other tools keep them.
    """

    game_id: str | None = None
    name: str | None = None
    player_x: RecordPlayer = Field(default_factory=RecordPlayer)
    player_o: RecordPlayer = Field(default_factory=RecordPlayer)
    match: Match = Field(default_factory=Match)
    started_at: datetime | None = None
    setup: list[Cell] = Field(default_factory=_standard_setup)
    first_to_move: Player = Player.O
    moves: list[RecordedMove] = Field(default_factory=list)
    result: GameResult | None = None
    tags: dict[str, str] = Field(default_factory=dict)


# ------------------------------------------------------ boards and moves on the wire

# Time limits travel as JSON numbers of seconds; JSON has no NaN or infinity.
Seconds = Annotated[StrictFloat, Field(gt=0, allow_inf_nan=False)]
Milliseconds = Annotated[StrictInt, Field(ge=0)]


class Board(BaseModel):
    """The stones on the board, in any order (the spec's ``Board``).

    >>> Board.standard()
    Board(cells=[Cell(q=0, r=0, p=<Player.X: 'x'>)])
    """

    model_config = ConfigDict(frozen=True)

    cells: list[Cell]

    @staticmethod
    def standard() -> Board:
        """The start of a standard game: one X at (0, 0)."""
        return Board(cells=_standard_setup())


# Where a GrowingBoard leaves the JSON of its cells on the boards it makes. Not a field
# (pydantic's equality and dumps ignore it): dump_packet reads it, and only while the
# board still holds the very list it was made with, at the same length.
_ENCODED_CELLS = "_encoded_cells"


class GrowingBoard:
    """The board of a game in progress, where stones are only ever added.

    It keeps the JSON of its cells as it grows, so a packet carrying the board (a
    ``move_request`` to each seat, a ``board_update`` to spectators: twice per move)
    costs one copy of those bytes in ``dump_packet`` instead of encoding every stone
    again: the board of a 500-move game is 1000 stones.

    >>> board = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
    >>> board.extend([Cell(q=1, r=0, p=Player.O)])
    >>> dump_packet(board.board())
    b'{"cells":[{"q":0,"r":0,"p":"x"},{"q":1,"r":0,"p":"o"}]}'
    >>> board.board() == Board(cells=board.cells)
    True
    """

    __slots__ = ("_board", "_cells", "_json")

    def __init__(self, cells: Iterable[Cell] = ()) -> None:
        self._cells: list[Cell] = []
        self._json = bytearray()
        self._board: Board | None = None  # board() until the next stone
        self.extend(cells)

    def __len__(self) -> int:
        return len(self._cells)

    @property
    def cells(self) -> list[Cell]:
        """The stones in the order placed (a copy)."""
        return list(self._cells)

    def extend(self, cells: Iterable[Cell]) -> None:
        """Add stones (their cells must be empty: the caller checked the rules)."""
        self._board = None
        for cell in cells:
            if self._json:
                self._json += b","
            self._json += orjson.dumps(_cells_json((cell,))[0])
            self._cells.append(cell)

    def board(self) -> Board:
        """A ``Board`` holding the stones so far: the same (frozen) one until the next
        ``extend``, so the move's request and its spectators' update share it.

        >>> board = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
        >>> board.board() is board.board()
        True
        """
        if self._board is None:
            self._board = self.board_as(Board)
        return self._board

    def board_as(self, model: type[B], **fields: Any) -> B:
        """A board of type ``model`` (a ``Board`` subclass) with the stones so far and
        its other ``fields``, e.g. a stateless board's ``to_move``."""
        cells = list(self._cells)
        board = cast(B, model.model_construct(cells=cells, **fields))
        # Bypasses the frozen model on purpose: see _ENCODED_CELLS.
        object.__setattr__(board, _ENCODED_CELLS, (cells, len(cells), bytes(self._json)))
        return board


B = TypeVar("B", bound=Board)


class Move(BaseModel):
    """A move already made, as listed in ``move_request.previous`` and ``board_update``.

    The spec says exactly 2 pieces; we accept 1 or 2 because our server sends 1-stone
    moves in two legitimate cases: the first stone of a move won the game (the second is
    never placed), and a human seat in stone-by-stone mode, whose first stone comes back
    in ``previous`` of the second ``move_request`` (protocol.md, "Humans").
    """

    model_config = ConfigDict(frozen=True)

    side: Player
    pieces: Annotated[list[Coord], Field(min_length=1, max_length=2)]


# ------------------------------------------------------- packets: server to a seat
#
# A seat is a bot (we dial its socket) or a human client (it dials ours); both speak the
# same packets. Packets are frozen: one instance may be sent to many receivers.
# Unknown fields are ignored, as the spec asks of bots, except where noted.


class ConfigPacket(BaseModel):
    """Bot settings, sent before ``setup`` to bots that declare ``config``.

    Unknown fields are kept, so extensions (``x-`` prefixed, per spec) reach the bot;
    ``extensions()`` returns just those.

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


class MoveRequestPacket(BaseModel):
    """Asks a seat for a move.

    ``previous`` holds the moves made since this seat's last request (protocol.md);
    ``board`` is our extension, the full board after them; ``move_time_limit`` (seconds)
    is sent only to bots that declare ``move_time_limit``. ``clock_x_ms``/``clock_o_ms``
    (extension) are both sides' remaining time when the game has a clock.

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


# ------------------------------------------------------------ packets: spectators


class BoardUpdatePacket(BaseModel):
    """One move, as spectators see it: the board after it and the state of the game.

    ``to_move`` is ``None`` once the game is over and is always written. Clocks are the
    remaining milliseconds, absent without a clock; ``evaluation`` and
    ``considerations`` are present when the mover gave them.
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["board_update"] = "board_update"
    board: Board
    move: Move
    to_move: Player | None
    status: GameStatus
    clock_x_ms: Milliseconds | None = None
    clock_o_ms: Milliseconds | None = None
    evaluation: PositionEvaluation | None = None
    considerations: list[MoveOption] | None = None


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
    | MoveResponsePacket
    | EvalResponsePacket
    | BoardUpdatePacket,
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
    | NopePacket,
    Field(discriminator="type"),
]
"""What a seat (bot or human client) may receive from the server."""

ClientPacket: TypeAlias = Annotated[
    MoveResponsePacket | EvalResponsePacket, Field(discriminator="type")
]
"""What the server may receive from a bot."""

HumanClientPacket: TypeAlias = Annotated[
    HumanMoveResponsePacket | EvalResponsePacket, Field(discriminator="type")
]
"""What the server may receive from a human seat: a move may have 1 stone."""

SpectatorPacket: TypeAlias = Annotated[
    SetupPacket | BoardUpdatePacket | EndPacket | NopePacket, Field(discriminator="type")
]
"""What a spectator may receive (``nope`` when it is refused)."""

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

# ------------------------------------------------------------- stateless API v1-alpha


class StatelessBoard(Board):
    """The stateless API's board: the stones plus the side to move."""

    to_move: Player


class StatelessMoveRequest(BaseModel):
    """Body of ``POST <api_root>/turn``; ``time_limit`` in seconds, absent = unlimited."""

    model_config = ConfigDict(frozen=True)

    board: StatelessBoard
    time_limit: Annotated[StrictFloat, Field(ge=0, allow_inf_nan=False)] | None = None


class StatelessMove(MoveOption):
    """A move in the stateless API: 2 pieces and an optional evaluation."""


class StatelessMoveResponse(BaseModel):
    """The answer to ``POST <api_root>/turn``: 2 pieces (1 when it wins), like a
    ``move_response``."""

    model_config = ConfigDict(frozen=True)

    move: MoveAnswer
    considerations: list[StatelessMove] | None = None


# ----------------------------------------------------------------------------- names

#: Names of games and seats: short enough for a list of games to stay small.
MAX_NAME_LENGTH: Final = 64

# Characters a name may not hold: they would reach records, notation, logs and other
# people's screens. C0 and C1 controls (NUL, escape sequences, newlines), line and
# paragraph separators, lone surrogates, and the bidirectional controls that can make
# a name read as something else on screen ("Trojan Source", CVE-2021-42574).
_BIDI_CONTROLS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_FORBIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cs", "Zl", "Zp"})


def _printable_name(name: str) -> str:
    """``name`` unchanged, or ``ValueError`` naming its first control character."""
    for index, char in enumerate(name):
        if _is_control(char):
            raise ValueError(
                f"expected a name without control characters, got U+{ord(char):04X} at "
                f"position {index}"
            )
    return name


Name = Annotated[StrictStr, Field(max_length=MAX_NAME_LENGTH), AfterValidator(_printable_name)]
"""A game's or a seat's name: at most ``MAX_NAME_LENGTH`` characters, no controls."""


def _is_control(char: str) -> bool:
    return char in _BIDI_CONTROLS or unicodedata.category(char) in _FORBIDDEN_CATEGORIES


def _display_name(value: object) -> object:
    r"""A name a bot gives itself, made fit to show: control characters dropped, cut to
    ``MAX_NAME_LENGTH``. Cleaned rather than refused: it is the bot's label, and a bot
    is not turned away for it (a name the client gives is refused instead: ``Name``).

    >>> _display_name("Evil\u202eBot\x00" + "!" * 80)[:12], len(_display_name("b" * 99))
    ('EvilBot!!!!!', 64)
    """
    if not isinstance(value, str):
        return value  # the type check says what is wrong
    cleaned = "".join(char for char in value if not _is_control(char))
    return cleaned if len(cleaned) <= MAX_NAME_LENGTH else cleaned[: MAX_NAME_LENGTH - 3] + "..."


# ---------------------------------------------------------------------- capabilities
#
# Unknown fields, versions and capabilities are kept (extra="allow"): the spec lets
# bots add fields, and a document read and written back should not lose them.
# Flags default to False, so "declared as {}" reads as "base features only".


class _Capability(BaseModel):
    model_config = ConfigDict(extra="allow", validate_by_name=True, serialize_by_alias=True)


class Meta(_Capability):
    """Who the bot is; not a capability. Tags are short lower-case words with dashes;
    ``name`` becomes a seat's name in records, so it is cleaned (``_display_name``)."""

    name: Annotated[str, BeforeValidator(_display_name)] | None = None
    description: str | None = None
    authors: list[str] | None = None
    version: str | None = None
    tags: list[Annotated[str, Field(pattern=r"^[a-z0-9-]+$")]] | None = None


class StatelessV1Alpha(_Capability):
    """``stateless.versions["v1-alpha"]``: where the routes are, which limits it honours."""

    DEFAULT_API_ROOT: ClassVar[str] = "stateless/v1-alpha"

    api_root: str = DEFAULT_API_ROOT
    move_time_limit: StrictBool = False


class StatelessVersions(_Capability):
    v1_alpha: StatelessV1Alpha | None = Field(default=None, alias="v1-alpha")


class StatelessCapability(_Capability):
    """The stateless HTTP API. A missing ``versions`` (required by the spec) is read
    as no versions, so one sloppy entry does not hide the bot's other capabilities."""

    versions: StatelessVersions = Field(default_factory=StatelessVersions)


#: Extension: the ``config`` key under which a game's ``Match`` is sent to a bot, and the
#: flag of a declared ``config`` capability saying the bot understands that key (the spec
#: lets a client send an ``x-`` key only to a bot it knows supports it). Bots served by
#: ``bot.serve`` set the flag whenever they declare ``config``.
MATCH_CONFIG_KEY = "x-match"


class BwsConfigCapability(_Capability):
    """The bot accepts ``config`` packets; ``dynamic``: also after any turn.

    >>> BwsConfigCapability.model_validate({"x-match": True}).accepts_match_settings
    True
    """

    dynamic: StrictBool = False

    @property
    def accepts_match_settings(self) -> bool:
        """Whether the bot reads the game's settings from ``MATCH_CONFIG_KEY``."""
        return (self.model_extra or {}).get(MATCH_CONFIG_KEY) is True


class BwsV1Alpha(_Capability):
    """``basic_websocket.versions["v1-alpha"]``: the optional features the bot supports."""

    DEFAULT_API_ROOT: ClassVar[str] = "bws/v1-alpha"

    api_root: str = DEFAULT_API_ROOT
    move_time_limit: StrictBool = False
    evaluation_time_limit: StrictBool = False
    config: BwsConfigCapability | None = None
    free_setup: StrictBool = False
    move_skips: StrictBool = False
    dual_sided: StrictBool = False
    free_move_order: StrictBool = False
    evaluation: StrictBool = False
    resettable_state: StrictBool = False
    interruptible: StrictBool = False


class BasicWebsocketVersions(_Capability):
    v1_alpha: BwsV1Alpha | None = Field(default=None, alias="v1-alpha")


class BasicWebsocketCapability(_Capability):
    """The basic WebSocket API; see ``StatelessCapability`` about missing ``versions``."""

    versions: BasicWebsocketVersions = Field(default_factory=BasicWebsocketVersions)


class Capabilities(_Capability):
    """A bot's ``capabilities.json``. Version keys are ``"v1-alpha"`` in JSON and
    ``v1_alpha`` in Python; both are accepted when building one.

    >>> caps = parse_body(Capabilities, '{"basic_websocket": {"versions": {"v1-alpha": {}}}}')
    >>> caps.bws_v1_alpha.api_root
    'bws/v1-alpha'
    >>> dump_packet(caps)  # doctest: +ELLIPSIS
    b'{"basic_websocket":{"versions":{"v1-alpha":{"api_root":"bws/v1-alpha",...}}}}'
    """

    meta: Meta | None = None
    stateless: StatelessCapability | None = None
    basic_websocket: BasicWebsocketCapability | None = None

    @property
    def bws_v1_alpha(self) -> BwsV1Alpha | None:
        """The basic WebSocket v1-alpha features, or ``None`` if not declared."""
        return self.basic_websocket.versions.v1_alpha if self.basic_websocket else None

    @property
    def stateless_v1_alpha(self) -> StatelessV1Alpha | None:
        """The stateless v1-alpha features, or ``None`` if not declared."""
        return self.stateless.versions.v1_alpha if self.stateless else None


# ----------------------------------------------------------------------- REST bodies

#: Bot URLs: the de facto limit of browsers and servers.
MAX_URL_LENGTH: Final = 2048
#: A seat's ``config`` as JSON; its integers (``depth``, ``x-`` values) fit 64 bits.
MAX_CONFIG_BYTES: Final = 4096
MIN_INT64: Final = -(2**63)
MAX_INT64: Final = 2**63 - 1


def _out_of_int64(value: object, path: str = "") -> str | None:
    """The path of the first integer in JSON data ``value`` outside 64 bits, or None.

    Iterative: the data came from a peer and may be nested as deep as its body allows.
    """
    stack: list[tuple[str, object]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool):
            if not MIN_INT64 <= item <= MAX_INT64:
                return where
        elif isinstance(item, Mapping):
            for key, v in item.items():
                key_text = clip_text(str(key), MAX_ECHO_CHARS)  # the peer chose the key
                stack.append((f"{where}.{key_text}" if where else key_text, v))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(item))
    return None


class PlayerConfig(BaseModel):
    """One seat of ``POST /game/new``: a bot (by URL) or a human (who gets a token).

    ``config`` holds the settings sent to a bot in its ``config`` packet (``depth``,
    ``x-`` keys); it is checked here so a bad value is refused at creation: a valid
    packet, at most ``MAX_CONFIG_BYTES`` of JSON, every integer within 64 bits.
    """

    type: PlayerType
    bot_url: Annotated[StrictStr, Field(max_length=MAX_URL_LENGTH)] | None = None
    name: Name | None = None
    config: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _bot_has_url(self) -> PlayerConfig:
        if self.type is PlayerType.BOT and not self.bot_url:
            raise ValueError("a bot seat needs 'bot_url', the address of the bot")
        return self

    @field_validator("config")
    @classmethod
    def _config_is_a_valid_packet(cls, config: dict[str, Any] | None) -> dict[str, Any] | None:
        if config is None:
            return None
        if (where := _out_of_int64(config)) is not None:
            raise ValueError(f"{where}: expected an integer within 64 bits (-2^63 to 2^63-1)")
        try:
            size = str(len(orjson.dumps(config)))
        except orjson.JSONEncodeError:
            size = "over 255 levels of nesting"
        if not size.isdecimal() or int(size) > MAX_CONFIG_BYTES:
            raise ValueError(f"expected at most {MAX_CONFIG_BYTES} bytes of JSON, got {size}")
        try:
            ConfigPacket.model_validate({**config, "type": "config"})
        except ValidationError as exc:
            raise ValueError("; ".join(_problems(exc))) from None
        return config

    def config_packet(self) -> ConfigPacket | None:
        """The ``config`` packet for this seat, or ``None`` if it has no settings."""
        if self.config is None:
            return None
        return ConfigPacket.model_validate({**self.config, "type": "config"})


class NewGameRequest(BaseModel):
    """Body of ``POST /game/new``.

    ``match_config`` is held to what the server hosts, tighter than any ``Match``: see
    ``MAX_HOSTED_VIEW_DISTANCE`` and the other hosting bounds. A game without a
    ``turn_limit`` gets ``DEFAULT_TURN_LIMIT``, so every game ends.

    >>> request = parse_body(NewGameRequest, '{"player_x": {"type": "human"}, '
    ...                      '"player_o": {"type": "human"}}')
    >>> request.match_config.turn_limit == DEFAULT_TURN_LIMIT
    True
    """

    player_x: PlayerConfig
    player_o: PlayerConfig
    match_config: Match = Field(
        default_factory=Match,
        description=(
            f"Held to what the server hosts: view_distance at most {MAX_HOSTED_VIEW_DISTANCE}, "
            f"turn_limit at most {MAX_TURN_LIMIT} (absent or null: {DEFAULT_TURN_LIMIT}), "
            f"heartbeat at most {MAX_HEARTBEAT_MS} ms, clock at most "
            f"{MAX_HOSTED_CLOCK_SECONDS:g} s, increment at most "
            f"{MAX_HOSTED_INCREMENT_SECONDS:g} s."
        ),
    )
    name: Name | None = None

    @model_validator(mode="after")
    def _hosted_settings(self) -> NewGameRequest:
        match = self.match_config
        bounds: list[tuple[str, float | None, float]] = [
            ("view_distance", match.view_distance, MAX_HOSTED_VIEW_DISTANCE),
            ("turn_limit", match.turn_limit, MAX_TURN_LIMIT),
            ("heartbeat", match.heartbeat, MAX_HEARTBEAT_MS),
            ("clock", match.clock, MAX_HOSTED_CLOCK_SECONDS),
            ("increment", match.increment, MAX_HOSTED_INCREMENT_SECONDS),
        ]
        problems = [
            f"match_config.{name}: expected at most {_bound(bound)} on this server, "
            f"got {_describe(value)}"
            for name, value, bound in bounds
            if value is not None and value > bound
        ]
        if problems:
            raise ValueError("; ".join(problems))
        if match.turn_limit is None:
            self.match_config = match.model_copy(update={"turn_limit": DEFAULT_TURN_LIMIT})
        return self


class NewGameResponse(BaseModel):
    """Answer to ``POST /game/new``: the game and a token for each human seat."""

    game_id: str
    token_x: str | None = None
    token_o: str | None = None


class HostedBot(BaseModel):
    """A bot the game server hosts on its own port: ``url`` is what ``POST /game/new``
    takes as ``bot_url``; ``meta`` comes from the bot's capabilities."""

    name: str
    url: str
    meta: Meta | None = None


class HostedBots(BaseModel):
    """Answer to ``GET /bots``: the hosted bots, in a stable order."""

    bots: list[HostedBot]


# ---------------------------------------------------------------------------- errors


class ProtocolError(ValueError):
    """Input that does not follow the wire contract; the message says what and where.

    ``problems`` lists each problem as ``"<path>: <what was expected>, got <what>"``;
    the message joins the first few.
    """

    MAX_REPORTED: ClassVar[int] = 5

    def __init__(self, *problems: str) -> None:
        self.problems: tuple[str, ...] = problems
        shown = "; ".join(problems[: self.MAX_REPORTED])
        hidden = len(problems) - self.MAX_REPORTED
        super().__init__(shown + (f" (and {hidden} more)" if hidden > 0 else ""))


#: Longest text a received value is echoed as in an error message.
MAX_ECHO_CHARS: Final = 40


def clip_text(text: str, limit: int) -> str:
    """``text`` whole when it has at most ``limit`` characters, else its start and end
    around ``...`` (the end often says the most: a reason after a long URL).

    >>> clip_text("http://example.com/" + "a" * 100 + ": connection refused", 40)
    'http://example.com/...connection refused'
    """
    if len(text) <= limit:
        return text
    tail = (limit - 3) // 2
    return f"{text[: limit - 3 - tail]}...{text[len(text) - tail :]}"


def _describe(value: object) -> str:
    """A short, JSON-flavoured description of a received value, at most
    ``MAX_ECHO_CHARS`` characters whatever was received.

    >>> _describe(10**400)
    'an integer of about 401 digits'
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value.bit_length() > 128:
        # Its digits say nothing more, and str() refuses integers of over 4300 digits.
        digits = math.floor(value.bit_length() * math.log10(2)) + 1
        return f"an integer of about {digits} digits"
    if isinstance(value, str | int | float):
        text = repr(value)  # '0' for a string, 0 for a number: the two read differently
        if len(text) <= MAX_ECHO_CHARS:
            return text
        return f"{text[: MAX_ECHO_CHARS - 4]}...{text[-1]}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


def _path(loc: tuple[int | str, ...]) -> str:
    """``("move_response", "move", "pieces", 0, "q")`` -> ``move_response.move.pieces[0].q``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def _bound(limit: object) -> str:
    """A bound from a constraint, as written in a schema: ``0``, not ``0.0``."""
    if isinstance(limit, float) and limit.is_integer():
        return str(int(limit))
    return str(limit)


def _items(count: object) -> str:
    return f"{count} item" if count == 1 else f"{count} items"


# Error types of pydantic-core, in the words of the wire contract.
_EXPECTED = {
    "int_type": "expected an integer",
    "int_parsing": "expected an integer",
    "int_from_float": "expected an integer",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "finite_number": "expected a finite number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "string_type": "expected a string",
    "list_type": "expected a list",
    "dict_type": "expected an object",
    "model_type": "expected an object",
    "model_attributes_type": "expected an object",
    "none_required": "expected null",
}


def _problem(error: ErrorDetails) -> str:
    kind = error["type"]
    ctx = error.get("ctx", {})
    got = f", got {_describe(error['input'])}"
    if kind == "missing":
        what = "missing required field"
    elif kind in ("value_error", "assertion_error"):
        what = str(ctx.get("error", error["msg"]))
    elif kind == "too_short":
        what = f"expected at least {_items(ctx['min_length'])}, got {ctx['actual_length']}"
    elif kind == "string_too_long":
        length = len(error["input"]) if isinstance(error["input"], str) else "more"
        what = f"expected at most {ctx['max_length']} characters, got {length}"
    elif kind == "too_long":
        what = f"expected at most {_items(ctx['max_length'])}, got {ctx['actual_length']}"
    elif kind in ("enum", "literal_error"):
        what = f"expected {ctx['expected']}{got}"
    elif kind == "greater_than":
        what = f"expected more than {_bound(ctx['gt'])}{got}"
    elif kind == "greater_than_equal":
        what = f"expected at least {_bound(ctx['ge'])}{got}"
    elif kind == "less_than":
        what = f"expected less than {_bound(ctx['lt'])}{got}"
    elif kind == "less_than_equal":
        what = f"expected at most {_bound(ctx['le'])}{got}"
    elif kind == "string_pattern_mismatch":
        what = f"expected text matching {ctx['pattern']!r}{got}"
    elif kind in _EXPECTED:
        what = _EXPECTED[kind] + got
    else:
        message = error["msg"]
        what = message[:1].lower() + message[1:] + got
    where = _path(error["loc"])
    return f"{where}: {what}" if where else what


def _problems(exc: ValidationError) -> list[str]:
    return [_problem(error) for error in exc.errors(include_url=False)]


# ----------------------------------------------------------------------------- codec
#
# Speed. Decoding a 500-stone board into 500 pydantic models costs more than parsing
# the JSON, and a server sends one such board per move to each seat and spectator. So:
#
# - one msgspec pass reads the packet into an "envelope" (its fields as plain JSON
#   values, the board as msgspec structs, type-checked);
# - the board's Cell objects come from an intern table: Cells are frozen, and a game
#   resends the same stones with every move, so nearly every lookup hits;
# - pydantic then validates the packet, the board already built.
#
# Anything the fast path does not take (a malformed frame, a board with a wrong type,
# a ``config`` packet whose unknown keys must be kept) goes the careful way: pydantic
# validates plain JSON values and produces the error messages. The fast path only ever
# accepts what pydantic would accept; it never explains a refusal.

JsonInput: TypeAlias = str | bytes | bytearray | memoryview
M = TypeVar("M", bound=BaseModel)


class _WireCell(msgspec.Struct, frozen=True, gc=False):
    """A cell as msgspec reads it (the same checks as ``Cell``); hashable, so it keys
    the intern table."""

    q: int
    r: int
    p: Player


class _WireBoard(msgspec.Struct, gc=False):
    cells: list[_WireCell]


class _CellInterner:
    """Frozen ``Cell`` objects shared between boards; bounded, cleared when full.

    Safe across threads: a race can only build an equal Cell twice.
    """

    LIMIT = 1 << 16

    def __init__(self) -> None:
        self._cells: dict[_WireCell, Cell] = {}
        self._build = TypeAdapter(list[Cell]).validate_python

    def board(self, wire: _WireBoard) -> Board:
        return Board.model_construct(cells=self.cells(wire.cells))

    def cells(self, wire_cells: list[_WireCell]) -> list[Cell]:
        known = self._cells
        get = known.get
        holes: list[tuple[int, _WireCell]] = []
        remember = holes.append  # returns None: a stone not seen before leaves a hole
        cells = [get(wire) or remember((i, wire)) for i, wire in enumerate(wire_cells)]
        if holes:
            # A game adds a few stones per move; a board never seen adds them all.
            unique = list(dict.fromkeys(wire for _, wire in holes))
            built = self._build([{"q": w.q, "r": w.r, "p": w.p} for w in unique])
            fresh = dict(zip(unique, built, strict=True))
            if len(known) + len(fresh) > self.LIMIT:
                known.clear()
            known.update(fresh)
            for i, wire in holes:  # from ``fresh``: another thread may clear ``known``
                cells[i] = fresh[wire]
        return cast(list[Cell], cells)  # no holes left

    def clear(self) -> None:
        self._cells.clear()

    def __len__(self) -> int:
        return len(self._cells)


_cell_interner = _CellInterner()


def _envelopes() -> dict[type[msgspec.Struct], str]:
    """One msgspec struct per packet type, told apart by ``type`` like the pydantic union.

    ``config`` has none: it keeps unknown keys, which an envelope would drop.
    """
    fields_by_tag: dict[str, dict[str, Any]] = {}
    for packets in (PACKETS, HUMAN_CLIENT_PACKETS):
        for tag, model in packets.models.items():
            if model.model_config.get("extra") == "allow":
                continue
            fields = fields_by_tag.setdefault(tag, {})
            for name, field in model.model_fields.items():
                if name != "type":
                    fields[field.alias or name] = _WireBoard if name == "board" else Any
    return {
        msgspec.defstruct(
            f"_{tag}_envelope",
            [(name, kind, msgspec.UNSET) for name, kind in fields.items()],
            tag_field="type",
            tag=tag,
            gc=False,
        ): tag
        for tag, fields in fields_by_tag.items()
    }


_ENVELOPE_TAGS = _envelopes()
_decode_envelope = msgspec.json.Decoder(Union[tuple(_ENVELOPE_TAGS)]).decode  # noqa: UP007
_decode_members = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_decode_board = msgspec.json.Decoder(_WireBoard).decode
_decode_any = msgspec.json.Decoder().decode
_BOARD_CARRIERS = frozenset(
    tag for tag, model in PACKETS.models.items() if "board" in model.model_fields
)


def _fast_fields(data: JsonInput, allowed: PacketSet[Any]) -> dict[str, Any] | None:
    """The packet's fields through the envelope, or None to take the careful path."""
    try:
        envelope = _decode_envelope(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    tag = _ENVELOPE_TAGS[type(envelope)]
    if tag not in allowed.tags:
        return None
    fields: dict[str, Any] = {"type": tag}
    for name in envelope.__struct_fields__:
        value = getattr(envelope, name)
        if value is msgspec.UNSET:
            continue
        fields[name] = _cell_interner.board(value) if isinstance(value, _WireBoard) else value
    return fields


def _careful_fields(data: JsonInput, allowed: PacketSet[Any]) -> dict[str, Any]:
    """The packet's fields as plain JSON values (a board that reads cleanly aside), or
    ``ProtocolError`` when the frame is not an object with an accepted ``type``."""
    members = _json_members(data)
    tag = _packet_tag(members, allowed)
    return {
        name: _board_field(raw) if name == "board" and tag in _BOARD_CARRIERS else _decode_any(raw)
        for name, raw in members.items()
    }


def _board_field(raw: msgspec.Raw) -> Any:
    """A ``Board`` through the intern table, or plain JSON values for pydantic to judge."""
    try:
        return _cell_interner.board(_decode_board(raw))
    except msgspec.ValidationError:
        return _decode_any(raw)


def _json_members(data: JsonInput) -> dict[str, msgspec.Raw]:
    try:
        return _decode_members(data)
    except msgspec.ValidationError:
        pass  # not an object; below, tell whether it is JSON at all
    except msgspec.DecodeError as exc:
        raise ProtocolError(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise ProtocolError("JSON nested too deeply") from None
    try:
        kind = _describe(_decode_any(data))
    except msgspec.DecodeError as exc:
        raise ProtocolError(f"not valid JSON: {exc}") from None
    except RecursionError:
        kind = "a list"
    raise ProtocolError(f"expected a JSON object with a 'type' field, got {kind}")


def _packet_tag(members: Mapping[str, msgspec.Raw], allowed: PacketSet[Any]) -> str:
    if "type" not in members:
        raise ProtocolError(f"type: missing; expected one of: {allowed.expected()}")
    tag = _decode_any(members["type"])
    if not isinstance(tag, str):
        raise ProtocolError(
            f"type: expected a string, got {_describe(tag)}; expected one of: {allowed.expected()}"
        )
    if tag not in allowed.tags:
        known = tag in PACKETS.tags or tag in HUMAN_CLIENT_PACKETS.tags
        what = f"{tag!r} packets are not accepted here" if known else f"unknown type {tag!r}"
        raise ProtocolError(f"type: {what}; expected one of: {allowed.expected()}")
    return tag


@overload
def parse_packet(data: JsonInput) -> Packet: ...


@overload
def parse_packet(data: JsonInput, *, allowed: PacketSet[P]) -> P: ...


def parse_packet(data: JsonInput, *, allowed: PacketSet[Any] | None = None) -> Any:
    """Read one packet from a WebSocket frame (text or bytes).

    ``allowed`` restricts the packet types the caller accepts and types the result:
    ``SERVER_PACKETS`` for a bot reading the server, ``CLIENT_PACKETS`` for the server
    reading a bot, ``HUMAN_CLIENT_PACKETS`` for a human seat (1-stone moves allowed),
    ``SPECTATOR_PACKETS`` for a spectator. Unknown fields are ignored, except in
    ``config`` and evaluations, which keep them.

    Raises ``ProtocolError`` naming the field and what was expected.

    >>> parse_packet('{"type": "heartbeat", "waiting": true}')
    HeartbeatPacket(type='heartbeat', waiting=True)
    >>> parse_packet('{"type":"move_response","move":{"pieces":[{"q":"0","r":1},{"q":1,"r":1}]}}')
    Traceback (most recent call last):
    ...
    models.ProtocolError: move_response.move.pieces[0].q: expected an integer, got '0'
    >>> parse_packet('{"type": "setup"}', allowed=CLIENT_PACKETS)
    Traceback (most recent call last):
    ...
    models.ProtocolError: type: 'setup' packets are not accepted here; expected one of: \
move_response, eval_response
    """
    accepted = PACKETS if allowed is None else allowed
    try:
        fields = _fast_fields(data, accepted) or _careful_fields(data, accepted)
        return accepted._adapter.validate_python(fields)
    except ValidationError as exc:
        raise ProtocolError(*_problems(exc)) from None
    except RecursionError:
        raise ProtocolError("JSON nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ProtocolError(_not_utf8(exc)) from None


def _not_utf8(exc: UnicodeDecodeError) -> str:
    """msgspec checks UTF-8 inside strings with Python's error, whose position is
    within the string: only the byte is worth naming."""
    byte = exc.object[exc.start : exc.start + 1].hex()
    return f"not valid JSON: a string holds invalid UTF-8 (byte 0x{byte}); JSON text is UTF-8"


def parse_body(model: type[M], data: JsonInput) -> M:
    """Read an HTTP body (stateless request or response, capabilities, REST request).

    Raises ``ProtocolError`` like ``parse_packet``; paths start at the body's fields.

    >>> parse_body(NewGameRequest, '{"player_x": {"type": "human"}, '
    ...            '"player_o": {"type": "human"}, "match_config": {"heartbeat": 99}}')
    Traceback (most recent call last):
    ...
    models.ProtocolError: match_config.heartbeat: expected at least 100, got 99
    """
    try:
        value = _decode_any(data)
    except msgspec.DecodeError as exc:
        raise ProtocolError(f"not valid JSON: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ProtocolError(_not_utf8(exc)) from None
    except RecursionError:
        raise ProtocolError("JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"expected a JSON object, got {_describe(value)}")
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise ProtocolError(*_problems(exc)) from None
    except RecursionError:
        raise ProtocolError("JSON nested too deeply") from None


def _cells_json(cells: Iterable[Cell]) -> list[dict[str, object]]:
    # A Cell's __dict__ is exactly {"q", "r", "p"} (tests/test_models.py checks it), and
    # handing it to orjson is several times faster than building a dict per stone;
    # orjson writes the Player enum as its value. Subclasses may hold more: spell out.
    return [
        cell.__dict__ if type(cell) is Cell else {"q": cell.q, "r": cell.r, "p": cell.p}
        for cell in cells
    ]


@cache
def _json_names(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(
        field.serialization_alias or field.alias or name
        for name, field in model.model_fields.items()
    )


@cache
def _always_written(model: type[BaseModel]) -> frozenset[str]:
    """Required fields that may be None: their ``null`` means something."""
    return frozenset(
        json_name
        for json_name, field in zip(_json_names(model), model.model_fields.values(), strict=True)
        if field.is_required() and _allows_none(field.annotation)
    )


def _with_meaningful_nulls(packet: BaseModel, data: dict[str, Any]) -> dict[str, Any]:
    """Put back the ``null``s that ``exclude_none`` dropped but that carry meaning: required
    fields that may be None, and extra settings (``config``) explicitly set to null.

    Only the top level needs this: no nested wire model has such a field.
    """
    extras = packet.model_extra or {}
    nulls = _always_written(type(packet)) | {name for name, v in extras.items() if v is None}
    if nulls <= data.keys():
        return data
    order = [*_json_names(type(packet)), *extras]
    return {name: data.get(name) for name in order if name in data or name in nulls}


def _allows_none(annotation: object) -> bool:
    if annotation is None or annotation is NoneType:
        return True
    if get_origin(annotation) in (Union, UnionType):
        return any(_allows_none(arg) for arg in get_args(annotation))
    if get_origin(annotation) is Annotated:
        return _allows_none(get_args(annotation)[0])
    return False


def dump_packet(packet: BaseModel) -> bytes:
    """Encode a packet or any wire body as compact JSON bytes.

    Optional fields that are ``None`` are left out, as the spec requires (a bot that
    does not declare ``move_time_limit`` must not see one). Required fields that may be
    ``None`` — ``end.winner`` for a draw, ``board_update.to_move`` after the end — are
    always written, as are ``null`` settings of a ``config`` packet. Capabilities use
    their JSON names (``"v1-alpha"``).

    >>> dump_packet(MoveRequestPacket(side=Player.O, previous=[]))
    b'{"type":"move_request","side":"o","previous":[]}'
    >>> dump_packet(EndPacket(winner=None, reason=ResultReason.DRAW))
    b'{"type":"end","winner":null,"reason":"draw"}'
    """
    nested = getattr(packet, "board", None)
    board = packet if isinstance(packet, Board) else nested
    encoded = _encoded_cells(board) if isinstance(board, Board) else None
    # Cells a GrowingBoard already encoded go in as a placeholder, replaced at the end.
    cells = _CELLS_PLACEHOLDER if encoded is not None else None
    if isinstance(board, Board) and board is not packet:
        data = packet.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"board"})
        data["board"] = _board_json(board, cells)
    elif isinstance(board, Board):
        data = _board_json(board, cells)
    else:
        data = packet.model_dump(mode="json", by_alias=True, exclude_none=True)
    data = _with_meaningful_nulls(packet, data)
    try:
        text = orjson.dumps(data)
    except orjson.JSONEncodeError:
        # orjson stops at 64-bit integers and 255 levels of nesting; json does not.
        text = json.dumps(data, separators=(",", ":"), allow_nan=False).encode()
    if encoded is not None:
        text = text.replace(_CELLS_PLACEHOLDER_JSON, b"[" + encoded + b"]", 1)
    return text


# Random per process, so no string a peer sends (a name, a reason) can be mistaken for
# it; both JSON encoders write it the same way (control characters as \u00XX).
_CELLS_PLACEHOLDER: Final = f"\x00cells-{secrets.token_hex(8)}\x00"
_CELLS_PLACEHOLDER_JSON: Final = orjson.dumps(_CELLS_PLACEHOLDER)


def _encoded_cells(board: Board) -> bytes | None:
    """The JSON a ``GrowingBoard`` left on ``board``, if its cells are still those."""
    cached: tuple[list[Cell], int, bytes] | None = board.__dict__.get(_ENCODED_CELLS)
    if cached is None:
        return None
    cells, count, encoded = cached
    return encoded if board.cells is cells and len(cells) == count else None


def _board_json(board: Board, cells: str | None) -> dict[str, Any]:
    """A board as JSON data, with ``cells`` standing for its cells when given."""
    cells_data: object = _cells_json(board.cells) if cells is None else cells
    if type(board) is Board:
        return {"cells": cells_data}
    data = board.model_dump(mode="json", exclude_none=True, exclude={"cells"})
    data["cells"] = cells_data
    return data

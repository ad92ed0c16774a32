"""Evaluations, moves and the record of a game (``GameRecord``, ``GameResult``)."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Final

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    model_validator,
)

from wire.basics import Cell, Coord, Player
from wire.capabilities import Meta
from wire.match import Match, TimeControl

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
    """Who sat in a seat of a recorded game; ``meta`` is a bot's capabilities meta,
    ``time_control`` the seat's own clock (``None``: the game's ``match`` clock)."""

    name: str | None = None
    type: PlayerType | None = None
    bot_url: str | None = None
    meta: Meta | None = None
    time_control: TimeControl | None = None


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
    """Why a game ended other than by a line: the ``detail`` of an ``end`` packet.

    ``ADJUDICATION`` ends a game the server decided on the bots' evaluations
    (``game.adjudication``); its reason stays ``win``, so clients that only read
    win/draw/forfeit still read it right.
    """

    TIMEOUT = "timeout"
    ILLEGAL_MOVE = "illegal_move"
    PROTOCOL_ERROR = "protocol_error"
    DISCONNECT = "disconnect"
    NO_SHOW = "no_show"
    STALL = "stall"
    RESIGN = "resign"
    ABORTED = "aborted"
    TURN_LIMIT = "turn_limit"
    ADJUDICATION = "adjudication"


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

    @property
    def void(self) -> bool:
        """Whether nobody played the game: the server aborted it, or neither seat ever
        connected (a draw with cause ``no_show``). Such a game counts for nothing (no
        rating moves, no tournament points); a no-show is still each absent bot's
        failure where failures are kept.

        >>> GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.NO_SHOW).void
        True
        >>> GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.TURN_LIMIT).void
        False
        """
        if self.cause is EndCause.ABORTED:
            return True
        return self.winner is None and self.cause is EndCause.NO_SHOW

    @model_validator(mode="after")
    def _consistent(self) -> GameResult:
        if (self.reason is ResultReason.DRAW) != (self.winner is None):
            raise ValueError("a draw has no winner, and every other result has one")
        if self.reason is ResultReason.FORFEIT and self.cause is None:
            raise ValueError("a forfeit needs a cause")
        return self


#: The tags HTTTX notation writes from a record's own fields, in the order written
#: (``platform`` has no field but stands among them, where the notation specs list it).
#: A value kept in ``GameRecord.tags`` under one of these keys replaces the derived one.
NOTATION_FIELD_TAGS: Final = (
    "name",
    "platform",
    "utcdatetime",
    "playercross",
    "playercircle",
    "timecontrol",
    "timecontrolcross",
    "timecontrolcircle",
    "endreason",
    "winner",
    "cause",
    "viewdistance",
    "windistance",
    "turnlimit",
    "turnclock",
)

#: The tag of a game that started from an opening (``NewGameRequest.opening``): how
#: many of the record's first moves were the opening's, played by nobody (no clock, no
#: evaluation), so a reader knows where the players took over. Absent without an
#: opening. The server sets it; a request cannot (``NewGameRequest.tags``).
OPENING_MOVES_TAG: Final = "opening_moves"


def _standard_setup() -> list[Cell]:
    return [Cell(q=0, r=0, p=Player.X)]


class GameRecord(BaseModel):
    """Everything worth keeping about one game, shared by the server, the client and
    ``game.notation``.

    ``setup`` is the position before the first move (X at the origin in a standard game)
    and ``first_to_move`` the side that makes move 1. ``tags`` holds notation tags that
    have no field of their own, so records read from other tools keep them; a game
    created with ``tags`` (``NewGameRequest.tags``) keeps them here, and one started from
    an opening has ``OPENING_MOVES_TAG`` (its first moves are the opening's).
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

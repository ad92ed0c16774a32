"""What the window shows of one game, fed by spectator packets or a record (pure, no Qt).

A ``GameModel`` holds one game as the client knows it: players, match settings, the
moves, the result, the clocks. It is fed either by the spectator stream of a live game
(``apply`` the ``setup``, each ``board_update``, the ``end``) or by a finished
``GameRecord`` (``from_record``, also for a ``.htttx`` file read with
``game.notation.loads``), and answers what the board and the side panel draw: the stones
after any number of moves, that move's stones, the legal cells, the winning line, the
clocks, the latest evaluation, the move list's labels.

>>> from game import notation
>>> model = GameModel.from_record(notation.loads("version[2]; 1. [1,0] [2,0]; 2. [0,1] [0,2];"))
>>> model.stones_at(1)
{(0, 0): 'x', (1, 0): 'o', (2, 0): 'o'}
>>> model.last_move_at(2), model.move_label(2), model.to_move
(((0, 1), (0, 2)), '2. X [0,1] [0,2]', 'o')

Scrubbing stays fast in long games: the stones are one list in the order placed, with
the number of stones after each move, so ``stones_at(i)`` is one slice; positions (for
``legal_at``) are rebuilt from a copy kept every ``CHECKPOINT_EVERY`` moves, and the
last few asked for are cached.

*Clocks.* The server reports both sides' remaining time with every update; the model
keeps the last report and when it came (``now``, monotonic seconds) and counts down
the side to move from there while the game is live, never below 0. A record, and the
``setup`` of a finished game (which reports no clocks), give each side's time after
its last move, so a finished game shows the same clocks however it is opened. The clocks stop at
the game's end, and when the client gives up on the stream (``lose_stream``): the game
may go on on the server, but this window no longer knows how.

*Analysis.* A server with an analysis bot sends spectators ``analysis`` packets: that
bot's evaluation of the position after ``ply`` moves. The model keeps the latest per
ply (``MAX_ANALYSES`` at most, like the server) and ``analysis_at`` answers for the
position in view.

*Split moves.* A person playing with the prototype's client may send one stone at a
time; spectators then see a ``board_update`` with the first stone and the same side
still to move. That stone is shown on the latest board (``pending_stones``) and joins
the move when its second stone arrives. (A game that ends before the second keeps
the first in its record, as a last move of one stone.)

A stream that contradicts itself (a stone on a taken cell, a move out of turn) raises
``InconsistentGameError``: the client should drop the stream and reload the game.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from game.hexgrid import Hex
from game.rules import IllegalMoveError, InvalidSetupError, Position, Side, Termination
from models import (
    SPECTATOR_PACKETS,
    AnalysisPacket,
    BoardUpdatePacket,
    Cell,
    Coord,
    EndCause,
    EndPacket,
    GameRecord,
    GameResult,
    GameStatus,
    Match,
    Player,
    PositionEvaluation,
    ProtocolError,
    RecordedMove,
    RecordPlayer,
    ResultReason,
    SetupPacket,
    SpectatorPacket,
    parse_packet,
)

__all__ = [
    "CHECKPOINT_EVERY",
    "MAX_ANALYSES",
    "Analysis",
    "GameModel",
    "InconsistentGameError",
    "read_spectator_packet",
]

#: A copy of the position is kept every this many moves, for ``legal_at``.
CHECKPOINT_EVERY = 32
#: Positions built for ``legal_at`` that are kept, for scrubbing back and forth.
_POSITION_CACHE_SIZE = 8
#: Analysis packets kept (the latest plies), as many as the server keeps per game.
MAX_ANALYSES = 2000


@dataclass(frozen=True)
class Analysis:
    """The analysis bot's evaluation of the position after ``ply`` moves."""

    ply: int
    bot: str
    evaluation: PositionEvaluation


def read_spectator_packet(text: str | bytes) -> SpectatorPacket | None:
    """A spectator packet, or None for a type this client does not know (a newer
    server's extension: ignored, not an error). A known packet that is broken, or text
    that is not a packet at all, raises ``ProtocolError``.

    >>> read_spectator_packet('{"type": "x-replay-speed", "factor": 2}') is None
    True
    >>> read_spectator_packet('{"type":"analysis","ply":0,"evaluation":{},"bot":"b"}').bot
    'b'
    """
    try:
        return parse_packet(text, allowed=SPECTATOR_PACKETS)
    except ProtocolError:
        if _packet_type(text) not in (None, *SPECTATOR_PACKETS.tags):
            return None
        raise


def _packet_type(text: str | bytes) -> str | None:
    """The ``type`` of a JSON object, None if there is none to read."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    kind = data.get("type") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


class InconsistentGameError(ValueError):
    """Moves that cannot be played in order: a taken cell, a stone out of view or out
    of turn. The message names the move."""


class GameModel:
    """One game as the client shows it. Change it only through ``apply`` (or build it
    with ``from_record``): ``moves`` and the other attributes are for reading."""

    def __init__(
        self,
        match: Match | None = None,
        *,
        setup: list[Cell] | None = None,
        first_to_move: str = "o",
    ) -> None:
        self.game_id: str | None = None
        self.name: str | None = None
        self.started_at: datetime | None = None
        self.tags: dict[str, str] = {}
        self.player_x = RecordPlayer()
        self.player_o = RecordPlayer()
        #: The ``detail`` of the ``end`` packet, as text (the cause of a forfeit).
        self.end_detail: str | None = None
        #: True while a spectator stream feeds the game and it has not ended.
        self.live = False
        #: True once the client gave up on the game's stream before its end arrived
        #: (``lose_stream``): the game is stopped here and its result unknown.
        self.stream_lost = False
        self._reset(match or Match(), setup, Player(first_to_move).value)

    # ------------------------------------------------------------ construction

    @classmethod
    def from_record(cls, record: GameRecord) -> GameModel:
        """The model of a recorded game (finished, or as far as it went)."""
        model = cls(record.match, setup=record.setup, first_to_move=record.first_to_move.value)
        model.game_id = record.game_id
        model.name = record.name
        model.started_at = record.started_at
        model.tags = dict(record.tags)
        model.player_x = record.player_x
        model.player_o = record.player_o
        for move in record.moves:
            model._append(move)
        model._clocks = _recorded_clocks(record.moves)
        model._finish(record.result)
        return model

    def to_record(self) -> GameRecord:
        """The game as a ``GameRecord`` (for ``game.notation.dumps``); stones of a split
        move still in progress are left out, as the server's record does."""
        return GameRecord(
            game_id=self.game_id,
            name=self.name,
            player_x=self.player_x,
            player_o=self.player_o,
            match=self.match,
            started_at=self.started_at,
            setup=list(self.setup),
            first_to_move=Player(self.first_to_move),
            moves=list(self.moves),
            result=self.result,
            tags=dict(self.tags),
        )

    # ------------------------------------------------------------------ input

    def apply(
        self, packet: SetupPacket | BoardUpdatePacket | AnalysisPacket | EndPacket, now: float
    ) -> None:
        """One spectator packet; ``now`` is ``time.monotonic()`` when it arrived."""
        if isinstance(packet, SetupPacket):
            self._apply_setup(packet, now)
        elif isinstance(packet, BoardUpdatePacket):
            self._apply_update(packet, now)
        elif isinstance(packet, AnalysisPacket):
            self._analyses[packet.ply] = Analysis(packet.ply, packet.bot, packet.evaluation)
            if len(self._analyses) > MAX_ANALYSES:
                del self._analyses[min(self._analyses)]
        else:
            self._apply_end(packet, now)

    def lose_stream(self, now: float) -> None:
        """The client gave up reaching the server (``now``: monotonic seconds): nothing
        more of the game will arrive, so it is no longer live and its clocks stop where
        they stood rather than run down a game this window cannot follow."""
        self._freeze_clocks(now)
        self.live = False
        self.stream_lost = True

    def analysis_at(self, index: int) -> Analysis | None:
        """The analysis bot's latest evaluation of a position up to move ``index`` (of
        that very position when it has one; ``Analysis.ply`` says which)."""
        if index in self._analyses:
            return self._analyses[index]
        earlier = [ply for ply in self._analyses if ply <= index]
        return self._analyses[max(earlier)] if earlier else None

    # ---------------------------------------------------------------- queries

    @property
    def pending_stones(self) -> tuple[Hex, ...]:
        """Stones of a split move in progress: on the latest board, not yet a move."""
        return tuple(self._pending)

    def stones_at(self, index: int) -> dict[Hex, str]:
        """The stones after ``index`` moves (0: the setup; ``len(moves)``: the latest
        board, with ``pending_stones``)."""
        self._check_index(index)
        stones: dict[Hex, str] = dict(self._stones[: self._offsets[index]])
        if index == len(self.moves):
            stones.update((cell, self._pending_side) for cell in self._pending)
        return stones

    def last_move_at(self, index: int) -> tuple[Hex, ...]:
        """The stones of the move that led to position ``index`` (() for the setup)."""
        self._check_index(index)
        if index == len(self.moves) and self._pending:
            return tuple(self._pending)
        if index == 0:
            return ()
        return tuple(piece.as_tuple() for piece in self.moves[index - 1].pieces)

    def legal_at(self, index: int) -> frozenset[Hex]:
        """The cells the side to move could play after ``index`` moves (empty once the
        game is over there)."""
        self._check_index(index)
        return frozenset(self._position_at(index).legal_cells())

    def winning_line(self) -> tuple[Hex, ...]:
        """The cells of the line that won the game, in order; () unless it ended so."""
        if self.result is None or self.result.reason is not ResultReason.WIN:
            return ()
        outcome = self._position.outcome
        if outcome is None or outcome.termination is not Termination.LINE:
            return ()
        return outcome.line

    def clock_remaining_ms(self, side: str, now: float) -> int | None:
        """``side``'s remaining time at ``now`` (monotonic seconds) in ms, None without a
        clock. The side to move's clock counts down from the last report while the game
        is live."""
        reported = self._clocks.get(Player(side).value)
        if reported is None:
            return None
        running = (
            self.live
            and self.status is GameStatus.IN_PROGRESS
            and self.to_move == side
            and self._clocks_at is not None
        )
        if not running or self._clocks_at is None:
            return reported
        elapsed_ms = max(0.0, now - self._clocks_at) * 1000
        return max(0, int(reported - elapsed_ms))

    def evaluation_at(self, index: int) -> PositionEvaluation | None:
        """The last evaluation a player gave up to move ``index``, if any."""
        self._check_index(index)
        for move in reversed(self.moves[:index]):
            if move.evaluation is not None:
                return move.evaluation
        return None

    def latest_evaluation(self) -> PositionEvaluation | None:
        """The last evaluation a player gave, if any."""
        return self.evaluation_at(len(self.moves))

    def move_label(self, index: int) -> str:
        """The move list's line for move ``index`` (1-based, as numbered in notation: the
        move that led to position ``index``), e.g. ``"7. O [3,-1] [2,0]"``; ``"Start"``
        for 0, the setup."""
        self._check_index(index)
        if index == 0:
            return "Start"
        move = self.moves[index - 1]
        stones = " ".join(f"[{piece.q},{piece.r}]" for piece in move.pieces)
        return f"{index}. {move.side.value.upper()} {stones}"

    @property
    def over(self) -> bool:
        return self.result is not None

    # ------------------------------------------------------------ internals

    def _reset(self, match: Match, setup: list[Cell] | None, first_to_move: str) -> None:
        self.match = match
        self.setup: list[Cell] = list(setup) if setup is not None else [Cell(q=0, r=0, p=Player.X)]
        self.first_to_move = first_to_move
        self.moves: list[RecordedMove] = []
        self.result: GameResult | None = None
        self.status = GameStatus.WAITING
        self.to_move: str | None = first_to_move
        self._stones: list[tuple[Hex, Side]] = [
            ((cell.q, cell.r), cell.p.value) for cell in self.setup
        ]
        self._offsets = [len(self._stones)]
        try:
            self._position = Position(
                match.view_distance,
                match.win_distance,
                setup=[(cell.q, cell.r, cell.p.value) for cell in self.setup],
                to_move=first_to_move,
                turn_limit=match.turn_limit,
            )
        except InvalidSetupError as exc:
            raise InconsistentGameError(f"the start position is impossible: {exc}") from None
        self._checkpoints: dict[int, Position] = {0: self._position.copy()}
        self._cache: OrderedDict[int, Position] = OrderedDict()
        self._pending: list[Hex] = []
        self._pending_side: Side = self._position.to_move
        self._clocks: dict[str, int | None] = {"x": None, "o": None}
        self._clocks_at: float | None = None
        # A setup resends everything, the analysis so far included.
        self._analyses: dict[int, Analysis] = {}

    def _append(self, move: RecordedMove) -> None:
        """Play a complete move on the latest position (its first ``already`` stones are
        the pending ones, already placed) and remember it."""
        number = len(self.moves) + 1
        side: Side = move.side.value
        pieces = [piece.as_tuple() for piece in move.pieces]
        already = len(self._pending) if self._pending and self._pending_side == side else 0
        if pieces[:already] != self._pending[:already]:
            raise InconsistentGameError(
                f"move {number} does not start with the stone {self._pending[0]} already shown"
            )
        if self._pending and not already:
            raise InconsistentGameError(
                f"move {number} is by {side}, but {self._pending_side} has a stone pending"
            )
        position = self._position
        if position.to_move != side and position.outcome is None:
            raise InconsistentGameError(f"move {number} is by {side}, but {position.to_move} moves")
        placed = 0
        try:
            for cell in pieces[already:]:
                position.place(*cell)
                placed += 1
        except IllegalMoveError as exc:
            for _ in range(placed):
                position.undo()
            raise InconsistentGameError(f"move {number} cannot be played: {exc}") from None
        self._pending.clear()
        self.moves.append(move)
        self._stones.extend((cell, side) for cell in pieces)
        self._offsets.append(len(self._stones))
        if len(self.moves) % CHECKPOINT_EVERY == 0:
            self._checkpoints[len(self.moves)] = position.copy()
        self.to_move = None if position.outcome is not None else position.to_move

    def _place_pending(self, side: str, cells: list[Hex]) -> None:
        position = self._position
        if position.to_move != side or position.stones_left < 2 - len(self._pending):
            raise InconsistentGameError(f"a stone by {side}, but {position.to_move} moves")
        for cell in cells:
            try:
                position.place(*cell)
            except IllegalMoveError as exc:
                raise InconsistentGameError(f"the stone {cell} cannot be played: {exc}") from None
            self._pending.append(cell)
            self._pending_side = position.to_move

    def _position_at(self, index: int) -> Position:
        if index == len(self.moves):
            return self._position
        cached = self._cache.get(index)
        if cached is not None:
            self._cache.move_to_end(index)
            return cached
        start = index - index % CHECKPOINT_EVERY
        position = self._checkpoints[start].copy()
        for move in self.moves[start:index]:
            for piece in move.pieces:
                position.place(piece.q, piece.r)
        self._cache[index] = position
        if len(self._cache) > _POSITION_CACHE_SIZE:
            self._cache.popitem(last=False)
        return position

    def _check_index(self, index: int) -> None:
        if not 0 <= index <= len(self.moves):
            raise IndexError(f"move index {index} is not in 0..{len(self.moves)}")

    def _finish(self, result: GameResult | None) -> None:
        self.result = result
        if result is not None:
            self.status = _status_of(result)
            self.to_move = None
            self.live = False
        elif self.moves:
            self.status = GameStatus.IN_PROGRESS

    def _report_clocks(self, clock_x_ms: int | None, clock_o_ms: int | None, now: float) -> None:
        self._clocks = {"x": clock_x_ms, "o": clock_o_ms}
        self._clocks_at = now

    def _apply_setup(self, packet: SetupPacket, now: float) -> None:
        moves = packet.moves or []
        match = packet.match or self.match
        setup, pending = _split_board(packet, moves)
        self._reset(match, setup, "o" if not setup or _standard(setup) else _first_mover(setup))
        self.game_id = packet.game_id
        # The record's name, start and tags (our extensions): an export of the game
        # watched here carries them, as the server's own notation does.
        self.name = packet.name
        self.started_at = packet.started_at
        self.tags = dict(packet.tags or {})
        self.end_detail = None
        self.player_x = packet.player_x or RecordPlayer()
        self.player_o = packet.player_o or RecordPlayer()
        for move in moves:
            self._append(move)
        if pending:
            self._place_pending(pending[0][1], [cell for cell, _ in pending])
        self.status = packet.status or (GameStatus.IN_PROGRESS if moves else GameStatus.WAITING)
        self.to_move = packet.to_move.value if packet.to_move is not None else self.to_move
        self.live = self.status in (GameStatus.WAITING, GameStatus.IN_PROGRESS)
        if not self.live:
            self.to_move = None
        # A finished game's setup is its record and reports no clocks: each side's
        # time is then what it had after its last move, as a replay shows it.
        recorded = _recorded_clocks(moves)
        self._report_clocks(
            packet.clock_x_ms if packet.clock_x_ms is not None else recorded["x"],
            packet.clock_o_ms if packet.clock_o_ms is not None else recorded["o"],
            now,
        )

    def _apply_update(self, packet: BoardUpdatePacket, now: float) -> None:
        move = packet.move
        side = move.side.value
        cells = [piece.as_tuple() for piece in move.pieces]
        first_half = (
            packet.to_move is move.side
            and packet.status is GameStatus.IN_PROGRESS
            and not self._pending
            and len(cells) == 1
        )
        if first_half:
            self._place_pending(side, cells)
        else:
            pieces = [*self._pending, *cells] if self._pending else cells
            clock = packet.clock_x_ms if move.side is Player.X else packet.clock_o_ms
            self._append(
                RecordedMove(
                    side=move.side,
                    pieces=[Coord(q=q, r=r) for q, r in pieces],
                    evaluation=packet.evaluation,
                    considerations=packet.considerations or [],
                    clock_ms=clock,
                )
            )
        self.status = packet.status
        self.to_move = None if packet.to_move is None else packet.to_move.value
        self._report_clocks(packet.clock_x_ms, packet.clock_o_ms, now)

    def _freeze_clocks(self, now: float) -> None:
        """Keep the running clock where it stands at ``now`` (before ``live`` goes off)."""
        for side in ("x", "o"):
            self._clocks[side] = self.clock_remaining_ms(side, now)
        self._clocks_at = now

    def _apply_end(self, packet: EndPacket, now: float) -> None:
        # Freeze the running clock where it stood when the game ended.
        self._freeze_clocks(now)
        if self._pending:
            # The game ended between a split move's two stones (a resignation, a flag):
            # the server keeps the first as the record's last move, of that stone alone
            # (notation "[/]"), and so does the model: in the move list, in an export.
            side = self._pending_side
            self._append(
                RecordedMove(
                    side=Player(side),
                    pieces=[Coord(q=q, r=r) for q, r in self._pending],
                    clock_ms=self._clocks[side],
                )
            )
        detail = packet.detail
        self.end_detail = detail.value if isinstance(detail, EndCause) else detail
        cause = packet.cause
        if packet.reason is ResultReason.FORFEIT and cause is None:
            # A cause this client does not know: keep the text, call it a protocol error
            # so the result stays valid (a forfeit needs a cause).
            cause = EndCause.PROTOCOL_ERROR
        self._finish(
            GameResult(
                winner=packet.winner, reason=packet.reason, cause=cause, detail=packet.cause_detail
            )
        )


def _recorded_clocks(moves: list[RecordedMove]) -> dict[str, int | None]:
    """Each side's remaining time after its last move that recorded one (None: none).

    >>> move = RecordedMove(side=Player.O, pieces=[Coord(q=1, r=0)], clock_ms=900)
    >>> _recorded_clocks([move])
    {'x': None, 'o': 900}
    """
    clocks: dict[str, int | None] = {"x": None, "o": None}
    for move in moves:
        if move.clock_ms is not None:
            clocks[move.side.value] = move.clock_ms
    return clocks


def _status_of(result: GameResult) -> GameStatus:
    if result.winner is None:
        return GameStatus.DRAW
    return GameStatus.X_WINS if result.winner is Player.X else GameStatus.O_WINS


def _standard(setup: list[Cell]) -> bool:
    return setup == [Cell(q=0, r=0, p=Player.X)]


def _first_mover(setup: list[Cell]) -> str:
    crosses = sum(1 for cell in setup if cell.p is Player.X)
    return "o" if crosses > len(setup) - crosses else "x"


def _split_board(
    packet: SetupPacket, moves: list[RecordedMove]
) -> tuple[list[Cell], list[tuple[Hex, Side]]]:
    """A spectator ``setup``'s board split into the start position and the stones of a
    split move in progress (the board lists stones in the order placed: the start, the
    moves, then at most one pending stone of the side to move)."""
    in_moves = {piece.as_tuple() for move in moves for piece in move.pieces}
    rest = [cell for cell in packet.board.cells if (cell.q, cell.r) not in in_moves]
    pending: list[tuple[Hex, Side]] = []
    last = packet.board.cells[-1] if packet.board.cells else None
    if (
        last is not None
        and rest
        and rest[-1] == last
        and packet.status is GameStatus.IN_PROGRESS
        and packet.to_move is last.p
        and len(rest) > 1  # the start position keeps at least its first stone
    ):
        pending = [((last.q, last.r), last.p.value)]
        rest = rest[:-1]
    return rest, pending

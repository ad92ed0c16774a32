"""The board of a game session: the rules' ``Position``, the board as it is sent, and
every stone with the move it belongs to (for ``move_request.previous``).

An answer's stones are placed here one at a time under ``game.rules``, and under the
protocol's rules for answers: at most the stones asked for, and fewer only when a stone
wins (a bot may answer a winning first stone alone) or when the seat may split its move
(a human's stone-by-stone mode). An answer that breaks a rule is taken back whole and
raises the seat's forfeit, so the board holds only what was accepted.

A game may start from an opening: its moves are placed first (``game.opening_rules``
checks them), as moves 0, 1, ... of the game, so ``previous`` can list them to a seat
that learns the opening that way.

>>> board = SessionBoard(Match(), opening=[Move(side=Player.O, pieces=[Coord(q=1, r=0),
...                                                               Coord(q=2, r=0)])])
>>> board.stone_count, board.to_move.value
(2, 'x')
>>> [(m.side.value, len(m.pieces)) for m in board.previous(0)]
[('o', 2)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple, TypeVar

from game.opening_rules import play_opening
from game.rules import IllegalMoveError, Outcome, Position
from game.seat_errors import SeatIllegalMoveError, SeatProtocolError
from models import Board, Cell, Coord, GrowingBoard, Match, Move, Player

__all__ = ["PlacedStone", "SessionBoard", "moves_since"]

B = TypeVar("B", bound=Board)


class PlacedStone(NamedTuple):
    """A stone placed in the game, with the move (0-based) it belongs to. (A named
    tuple: two are made every move, and a frozen dataclass costs three times as much.)"""

    move_index: int
    side: Player
    coord: Coord


#: A run of stones of one move: (index of its first stone, index after its last).
Group = tuple[int, int]


def moves_since(
    stones: Sequence[PlacedStone], told: int, made: Mapping[Group, Move] | None = None
) -> tuple[list[Move], dict[Group, Move]]:
    """The stones from index ``told`` on, grouped by move (``move_request.previous``),
    and each group's ``Move`` by its run of stones; a run already in ``made`` reuses its
    ``Move`` there (each move is in the next request of both seats: made once).

    >>> o, x = Player.O, Player.X
    >>> stones = [PlacedStone(0, o, Coord(q=1, r=0)), PlacedStone(0, o, Coord(q=2, r=0)),
    ...           PlacedStone(1, x, Coord(q=0, r=1))]
    >>> moves, made = moves_since(stones, 1)
    >>> [(m.side.value, len(m.pieces)) for m in moves], sorted(made)
    ([('o', 1), ('x', 1)], [(1, 2), (2, 3)])
    >>> again, _ = moves_since(stones, 2, made)
    >>> again[0] is moves[1]
    True
    """
    moves: list[Move] = []
    runs: dict[Group, Move] = {}
    end = len(stones)
    start = told
    # A move's stones are placed together, so they are next to each other here.
    while start < end:
        first = stones[start]
        stop = start + 1
        while stop < end and stones[stop].move_index == first.move_index:
            stop += 1
        run = (start, stop)
        move = made.get(run) if made else None
        if move is None:
            move = Move(side=first.side, pieces=[stone.coord for stone in stones[start:stop]])
        runs[run] = move
        moves.append(move)
        start = stop
    return moves, runs


class SessionBoard:
    """The stones of one game, X at the origin to start, then the ``opening``'s.

    Raises ``game.opening_rules.InvalidOpeningError`` for an opening that cannot be
    played under ``match`` (``NewGameRequest`` refuses those before a game exists).
    """

    def __init__(self, match: Match, opening: Sequence[Move] = ()) -> None:
        self._position = Position(
            match.view_distance, match.win_distance, turn_limit=match.turn_limit
        )
        play_opening(
            self._position, [(m.side.value, [p.as_tuple() for p in m.pieces]) for m in opening]
        )
        self._stones = [
            PlacedStone(index, move.side, coord)
            for index, move in enumerate(opening)
            for coord in move.pieces
        ]
        # Makes its cells and their JSON only when a board is asked for (a setup, a
        # bot that reads the board, a spectator), then keeps them as it grows.
        self._board = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
        # The moves of the last ``previous``: the next one (the other seat's) repeats one.
        self._last_moves: dict[Group, Move] = {}
        self._board.extend(Cell(q=s.coord.q, r=s.coord.r, p=s.side) for s in self._stones)

    @property
    def outcome(self) -> Outcome | None:
        return self._position.outcome

    @property
    def to_move(self) -> Player:
        return Player(self._position.to_move)

    @property
    def stone_count(self) -> int:
        """Stones placed by moves, the opening's included (X's first stone is not one)."""
        return len(self._stones)

    def board(self) -> Board:
        """Every stone on the board, in the order placed."""
        return self._board.board()

    def mark(self) -> int:
        """Where the board stands now (O(1)), for ``board_at``."""
        return self._board.mark()

    def board_at(self, mark: int) -> Board:
        """The board as it stood at ``mark``."""
        return self._board.board_at(mark)

    def board_as(self, kind: type[B], *, to_move: Player) -> B:
        return self._board.board_as(kind, to_move=to_move)

    def previous(self, told: int) -> list[Move]:
        """The stones placed since a seat was told of ``told`` of them, by move."""
        moves, self._last_moves = moves_since(self._stones, told, self._last_moves)
        return moves

    def place_answer(
        self,
        side: Player,
        pieces: Sequence[Coord],
        *,
        move_index: int,
        wanted: int,
        may_split: bool,
        stateless: bool,
    ) -> list[Coord]:
        """Place an answer of ``side`` (``wanted`` stones were asked for) as stones of
        move ``move_index``; the stones placed (a winning stone ends the answer).

        Raises ``SeatProtocolError`` for more stones than asked, or for fewer without a
        win when the seat may not split its move (``may_split``: a human), and
        ``SeatIllegalMoveError`` for a stone the rules refuse. ``stateless`` names the
        answer as the stateless API does in messages.
        """
        answer = "the stateless response" if stateless else "move_response"
        if len(pieces) > wanted:
            raise SeatProtocolError(
                side,
                f"{answer} with {len(pieces)} pieces; the move_request asked for the "
                "second stone only (1 piece)",
            )
        # The field's path, as a ProtocolError names it (a body's from its fields).
        placed = self._place(side, pieces, path="move" if stateless else "move_response.move")
        if len(placed) < wanted and self.outcome is None and not may_split:
            self._take_back(placed)
            stones = " ".join(f"[{coord.q},{coord.r}]" for coord in placed)
            raise SeatProtocolError(
                side,
                f"{answer} with {len(placed)} piece ({stones}) that does not win: a move "
                "has 2 pieces, or 1 only when that stone wins",
            )
        for coord in placed:
            self._stones.append(PlacedStone(move_index, side, coord))
            self._board.add(coord.q, coord.r, side)
        return placed

    def _place(self, side: Player, pieces: Sequence[Coord], path: str) -> list[Coord]:
        placed: list[Coord] = []
        for index, coord in enumerate(pieces):
            try:
                self._position.place(coord.q, coord.r)
            except IllegalMoveError as exc:
                self._take_back(placed)
                raise SeatIllegalMoveError(
                    side, f"illegal move: {path}.pieces[{index}]: {exc}"
                ) from None
            placed.append(coord)
            if self._position.outcome is not None:
                break
        return placed

    def _take_back(self, placed: list[Coord]) -> None:
        for _ in placed:
            self._position.undo()

"""The board of a game session: the rules' ``Position``, the board as it is sent, and
every move made so far (``move_request.previous`` is the tail of that list).

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

from bisect import bisect_right
from collections.abc import Sequence
from typing import TypeVar

from game.opening_rules import play_opening
from game.rules import IllegalMoveError, Outcome, Position
from game.seat_errors import SeatIllegalMoveError, SeatProtocolError
from models import Board, Cell, Coord, GrowingBoard, Match, Move, Player

__all__ = ["SessionBoard"]

B = TypeVar("B", bound=Board)


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
        # Every move so far as ``previous`` lists it, by its number in the game (the
        # opening's first), made once as its stones are placed (each is in the next
        # request of both seats), with the index of its first stone among all the
        # stones placed: a ``previous`` is then the tail of this list, whatever the
        # game's length.
        self._moves: list[Move] = []
        self._move_starts: list[int] = []
        self._stone_count = 0
        # Makes its cells and their JSON only when a board is asked for (a setup, a
        # bot that reads the board, a spectator), then keeps them as it grows.
        self._board = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
        for index, move in enumerate(opening):
            self._note_move(index, move.side, list(move.pieces))
            self._board.extend(Cell(q=c.q, r=c.r, p=move.side) for c in move.pieces)

    @property
    def outcome(self) -> Outcome | None:
        return self._position.outcome

    @property
    def to_move(self) -> Player:
        return Player(self._position.to_move)

    @property
    def stone_count(self) -> int:
        """Stones placed by moves, the opening's included (X's first stone is not one)."""
        return self._stone_count

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
        """The stones placed since a seat was told of ``told`` of them, by move: the
        moves made since, the first of them cut to its stones after ``told`` when the
        seat was told of part of it (a human's first stone, in stone-by-stone mode).

        >>> board = SessionBoard(Match())
        >>> board.place_answer(Player.O, [Coord(q=1, r=0)], move_index=0, wanted=2,
        ...                    may_split=True, stateless=False)
        [Coord(q=1, r=0)]
        >>> board.place_answer(Player.O, [Coord(q=2, r=0)], move_index=0, wanted=1,
        ...                    may_split=True, stateless=False)
        [Coord(q=2, r=0)]
        >>> [[(c.q, c.r) for c in move.pieces] for move in board.previous(0)]
        [[(1, 0), (2, 0)]]
        >>> [[(c.q, c.r) for c in move.pieces] for move in board.previous(1)]
        [[(2, 0)]]
        >>> board.previous(2)
        []
        """
        if told >= self._stone_count:
            return []
        # The move that holds stone number ``told``: the last to start at or before it.
        first = bisect_right(self._move_starts, told) - 1
        start = self._move_starts[first]
        if start == told:
            return self._moves[first:]
        cut = self._moves[first]
        rest = Move(side=cut.side, pieces=cut.pieces[told - start :])
        return [rest, *self._moves[first + 1 :]]

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
        move ``move_index``; the stones placed (a winning stone ends the answer). Moves
        are numbered in the game's order, the opening's first: the number of the move
        begun last continues it (a human's second stone), the next one starts a move.

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
        if placed:
            self._note_move(move_index, side, placed)
        for coord in placed:
            self._board.add(coord.q, coord.r, side)
        return placed

    def _note_move(self, move_index: int, side: Player, stones: list[Coord]) -> None:
        """Keep ``stones``, just placed, as (the rest of) move ``move_index``."""
        if move_index < len(self._moves):
            # The rest of a move whose first stone came alone (a human's): the move
            # is made again with all its stones.
            made = self._moves[-1]
            self._moves[-1] = Move(side=side, pieces=[*made.pieces, *stones])
        else:
            self._moves.append(Move(side=side, pieces=stones))
            self._move_starts.append(self._stone_count)
        self._stone_count += len(stones)

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

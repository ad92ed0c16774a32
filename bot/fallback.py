"""Checking a bot's move, and the legal move the framework plays when a bot has none.

Both ends of the bot framework — the WebSocket session (``bot.session``) and the
stateless HTTP API (``bot.stateless``) — must answer every request with a legal move,
even when the bot raised, overran its time or answered with an illegal move: a bad
answer forfeits the game, a weak one only loses a tempo.

>>> from game.rules import Position
>>> start = Position()
>>> fallback_move(start).pieces
(Coord(q=-1, r=0), Coord(q=-2, r=0))
>>> move_problem(start, MoveDecision.of([(0, 0), (1, 0)]))
'first stone: (0, 0) is already taken by x'
>>> move_problem(start, MoveDecision.of([(1, 0), (2, 0)])) is None
True
"""

from __future__ import annotations

from bot.bot import MoveDecision
from game.hexgrid import Hex, distance
from game.rules import Position
from models import Coord

__all__ = ["NoLegalMoveError", "fallback_move", "move_problem"]


class NoLegalMoveError(ValueError):
    """The position leaves no 2 legal stones to play (the game is already over)."""


def move_problem(position: Position, decision: MoveDecision) -> str | None:
    """Why ``decision`` is not a legal move in ``position`` (side to move, 2 stones
    left), or None when it is. ``position`` is not changed.

    Each stone is checked in order, as the server does: the second stone may rely on
    the first for being in view. A first stone that wins ends the game, and the second
    is then never placed; it only has to be a distinct cell that was playable before.
    """
    pieces = decision.pieces
    # A bot may build a MoveDecision by hand: check what it holds before using it.
    if not isinstance(pieces, tuple | list) or not all(isinstance(p, Coord) for p in pieces):
        return f"a move is 2 Coord stones, got {pieces!r}"
    if len(pieces) != 2:
        return f"a move is 2 stones, got {len(pieces)}"
    first, second = (piece.as_tuple() for piece in pieces)
    if first == second:
        return f"both stones are on {first}"
    reason = position.why_illegal(*first)
    if reason is not None:
        return f"first stone: {reason}"
    # Place the first stone to judge the second, then take it back: undo restores the
    # exact state, and costs far less than copying the position.
    position.place(*first)
    try:
        if position.is_game_over():
            position.undo()
            reason = position.why_illegal(*second)
            position.place(*first)
        else:
            reason = position.why_illegal(*second)
    finally:
        position.undo()
    return None if reason is None else f"second stone: {reason}"


def fallback_move(position: Position) -> MoveDecision:
    """A legal move for the side to move, chosen without thought but deterministically:
    the empty cell nearest to the last stone placed (the origin on an empty board),
    then the empty cell nearest to that one; ties go to the smallest ``(q, r)``.

    Near the last stone is where the game is being played, so the filler move at least
    stands in the way. ``position`` is not changed; raises ``NoLegalMoveError`` if the
    game is over.

    >>> fallback_move(Position(setup=[], to_move="x")).pieces
    (Coord(q=0, r=0), Coord(q=-1, r=0))
    """
    stones = position.stones
    anchor: Hex = (stones[-1][0], stones[-1][1]) if stones else (0, 0)
    first = _nearest(list(position.legal_cells()), anchor)
    if first is None:
        raise NoLegalMoveError(f"no legal stone in {position!r}")
    trial = position.copy()
    trial.place(*first)
    # A winning first stone ends the game: any other playable cell will do as the second.
    candidates = position.legal_cells() if trial.is_game_over() else trial.legal_cells()
    second = _nearest([cell for cell in candidates if cell != first], first)
    if second is None:
        raise NoLegalMoveError(f"no legal second stone after {first} in {position!r}")
    return MoveDecision(pieces=(Coord(q=first[0], r=first[1]), Coord(q=second[0], r=second[1])))


def _nearest(cells: list[Hex], anchor: Hex) -> Hex | None:
    return min(cells, key=lambda cell: (distance(cell, anchor), cell), default=None)

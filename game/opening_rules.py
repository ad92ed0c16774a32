"""An opening as the rules see it: the moves played after X's stone at (0, 0) before
the players take over, replayed stone by stone and checked.

A game created with an opening (``NewGameRequest.opening``) starts from the position
these moves reach. ``play_opening`` is the one check both ends use: the REST boundary
refuses a bad opening with its message (a 422), and the game session places the stones
with it, so the two can never disagree. Pure: plain tuples in, ``game.rules`` only, no
pydantic (``wire`` imports this module).

An opening is playable when its moves alternate from O (who moves first after X's
stone), each places exactly 2 stones, every stone is legal, and the game is still
undecided after the last one: no line, and the turn limit (which counts every move of
the game, the opening's included) not yet reached.

>>> position = Position()
>>> play_opening(position, [("o", [(1, 0), (2, 0)]), ("x", [(-1, 0), (-2, 0)])])
>>> position.to_move, len(position)
('o', 5)
>>> play_opening(Position(), [("o", [(1, 0), (20, 0)])])
Traceback (most recent call last):
...
game.opening_rules.OpeningIllegalStoneError: opening[0].pieces[1]: (20, 0) is farther \
than view_distance 8 from every stone
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from game.hexgrid import Hex
from game.rules import IllegalMoveError, Position, Termination

__all__ = [
    "MAX_OPENING_MOVES",
    "InvalidOpeningError",
    "OpeningDecidedError",
    "OpeningIllegalStoneError",
    "OpeningMoveSizeError",
    "OpeningOrderError",
    "OpeningTooLongError",
    "play_opening",
]

#: The most moves an opening may hold. A book opening is a few moves (the shipped book's
#: are 2 or 3): 40 moves (80 stones) is far past any book line, yet small enough that
#: replaying it when a request is read costs nothing worth counting, and that the
#: players always have a game of their own to play under any sensible turn limit.
MAX_OPENING_MOVES: Final = 40

#: An opening move, as plain values: the side (``"x"`` or ``"o"``) and its stones.
OpeningMove = tuple[str, Sequence[Hex]]


class InvalidOpeningError(ValueError):
    """An opening a game cannot start from; the message names the move and the stone."""


class OpeningTooLongError(InvalidOpeningError):
    """More than ``MAX_OPENING_MOVES`` moves."""


class OpeningOrderError(InvalidOpeningError):
    """A move by the wrong side: the moves alternate, O first."""


class OpeningMoveSizeError(InvalidOpeningError):
    """A move that does not place exactly 2 stones."""


class OpeningIllegalStoneError(InvalidOpeningError):
    """A stone the rules refuse (a taken cell, or out of view of every stone)."""


class OpeningDecidedError(InvalidOpeningError):
    """An opening after which the game is already over: a line, or the turn limit."""


def play_opening(position: Position, moves: Sequence[OpeningMove]) -> None:
    """Place the opening ``moves`` on ``position`` (a fresh standard position: X at the
    origin, O to move), checking each as the module docstring says.

    Raises an ``InvalidOpeningError`` subclass naming the move (``opening[i]``) and the
    stone; the position is then left part-way and should be thrown away.

    >>> play_opening(Position(), [("x", [(1, 0), (2, 0)])])
    Traceback (most recent call last):
    ...
    game.opening_rules.OpeningOrderError: opening[0].side: expected 'o' (the moves \
alternate, O first), got 'x'
    >>> play_opening(Position(win_distance=3), [("o", [(1, 0), (2, 0)]), ("x", [(0, 1), (0, 2)])])
    Traceback (most recent call last):
    ...
    game.opening_rules.OpeningDecidedError: opening[1].pieces[1]: (0, 2) makes 3 in a row \
for x: an opening must leave the game undecided
    """
    if len(moves) > MAX_OPENING_MOVES:
        raise OpeningTooLongError(
            f"opening: expected at most {MAX_OPENING_MOVES} moves, got {len(moves)}"
        )
    for index, (side, stones) in enumerate(moves):
        where = f"opening[{index}]"
        if side != position.to_move:
            raise OpeningOrderError(
                f"{where}.side: expected {position.to_move!r} (the moves alternate, O first), "
                f"got {side!r}"
            )
        if len(stones) != 2:
            raise OpeningMoveSizeError(
                f"{where}.pieces: expected 2 stones (every move of an opening places 2), "
                f"got {len(stones)}"
            )
        for number, (q, r) in enumerate(stones):
            try:
                position.place(q, r)
            except IllegalMoveError as exc:
                raise OpeningIllegalStoneError(f"{where}.pieces[{number}]: {exc}") from None
            outcome = position.outcome
            if outcome is not None and outcome.termination is Termination.LINE:
                raise OpeningDecidedError(
                    f"{where}.pieces[{number}]: ({q}, {r}) makes {len(outcome.line)} in a row "
                    f"for {side}: an opening must leave the game undecided"
                )
            if outcome is not None:
                raise OpeningDecidedError(
                    f"{where}: reaches the turn limit of {position.turn_limit} moves: the "
                    f"players would have no move left (the limit counts the opening's moves)"
                )

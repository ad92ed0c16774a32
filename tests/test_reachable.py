"""The screen for positions no game from the standard opening can reach."""

from __future__ import annotations

import pytest

from game.reachable import UnreachablePositionError, check_reachable
from game.rules import InvalidSetupError
from tests.random_games import unfinished_game


def test_every_position_of_a_random_legal_game_passes() -> None:
    for seed in range(5):
        game = unfinished_game(301, seed, reach=8, view_distance=8)
        stones = game.stones
        for end in range(1, len(stones) + 1, 2):  # between moves: X, XOO, XOOXX, ...
            to_move = "o" if end % 4 == 1 else "x"
            check_reachable(stones[:end], to_move, view_distance=8)


def test_the_opening_alone_passes_with_o_to_move() -> None:
    check_reachable([(0, 0, "x")], "o", view_distance=8)


@pytest.mark.parametrize(
    ("stones", "to_move", "message"),
    [
        ([], "o", r"the board is empty; every game starts with X's stone at \(0, 0\)"),
        ([(1, 0, "x")], "o", r"no X stone on \(0, 0\)"),
        ([(0, 0, "o"), (1, 0, "x")], "x", r"no X stone on \(0, 0\)"),
        ([(0, 0, "x")], "x", "1 X and 0 O stones with X to move; .* O has one stone more"),
        (
            [(0, 0, "x"), (1, 0, "o"), (2, 0, "o")],
            "o",
            "1 X and 2 O stones with O to move; .* X has one stone more",
        ),
        (
            [(0, 0, "x"), (1, 0, "o"), (2, 0, "o"), (3, 0, "x")],
            "o",
            "2 X and 2 O stones",
        ),
        (
            [(0, 0, "x"), (1, 0, "o"), (-17, 9, "o")],
            "x",
            r"\(-17, 9\) is 17 from the origin, but 3 stones reach at most 16",
        ),
        (
            # Within reach of the origin, but no chain of stones leads there.
            [(0, 0, "x"), (1, 0, "o"), (2, 0, "o"), (3, 0, "x"), (30, 0, "x")],
            "o",
            r"\(30, 0\) is cut off from X's opening stone",
        ),
    ],
)
def test_an_unreachable_position_is_refused_with_the_reason(
    stones: list[tuple[int, int, str]], to_move: str, message: str
) -> None:
    with pytest.raises(UnreachablePositionError, match=message):
        check_reachable(stones, to_move, view_distance=8)


def test_counts_may_be_anything_when_moves_need_not_alternate() -> None:
    check_reachable([(0, 0, "x"), (1, 0, "x"), (2, 0, "x")], "o", 8, alternating=False)


def test_an_unreachable_position_is_an_invalid_setup() -> None:
    """Callers that already refuse invalid setups refuse these the same way."""
    assert issubclass(UnreachablePositionError, InvalidSetupError)


def test_stones_far_apart_are_refused_before_any_work_per_cell() -> None:
    """The hostile board: thousands of stones, one per row at |q| near 2**19."""
    stones = [(0, 0, "x")] + [
        ((2**19 - 10) * (1 if r % 2 else -1), r, "o" if r % 4 in (1, 2) else "x")
        for r in range(1, 4001)
    ]
    with pytest.raises(UnreachablePositionError, match="from the origin, but 4001 stones"):
        check_reachable(stones, "o", view_distance=8)

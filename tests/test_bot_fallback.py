"""Checking a bot's move, and the fallback move the framework plays instead."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.bot import MoveDecision
from bot.fallback import NoLegalMoveError, fallback_move, move_problem
from game.rules import Position
from models import Coord

Hex = tuple[int, int]


def decision(*pieces: Hex) -> MoveDecision:
    return MoveDecision.of(list(pieces))


def test_the_fallback_plays_next_to_the_last_stone() -> None:
    position = Position(setup=[(0, 0, "x"), (5, 5, "o")], to_move="x")
    first, second = (piece.as_tuple() for piece in fallback_move(position).pieces)
    assert first == (4, 5) and second == (3, 5)


def test_the_fallback_is_deterministic() -> None:
    assert fallback_move(Position()) == fallback_move(Position())


def test_the_fallback_does_not_change_the_position() -> None:
    position = Position()
    fallback_move(position)
    assert position.stones == [(0, 0, "x")] and position.stones_left == 2


def test_the_fallback_on_an_empty_board_starts_at_the_origin() -> None:
    first, _ = fallback_move(Position(setup=[], to_move="x")).pieces
    assert first == Coord(q=0, r=0)


def test_the_fallback_after_a_winning_first_stone_is_still_two_distinct_cells() -> None:
    # O's last stone is next to five in a row: the nearest cell wins at once.
    row = [(q, 0, "o") for q in range(1, 6)]
    position = Position(setup=[(0, 1, "x"), *row], to_move="o")
    answer = fallback_move(position)
    assert answer.pieces[0] != answer.pieces[1]
    assert move_problem(position, answer) is None


def test_there_is_no_fallback_once_the_game_is_over() -> None:
    position = Position(view_distance=2, win_distance=2)
    position.place(1, 0)
    position.place(2, 0)  # two in a row wins
    with pytest.raises(NoLegalMoveError):
        fallback_move(position)


def test_a_legal_move_has_no_problem() -> None:
    assert move_problem(Position(), decision((1, 0), (2, 0))) is None


def test_the_second_stone_may_rely_on_the_first_for_view() -> None:
    assert move_problem(Position(view_distance=1), decision((1, 0), (2, 0))) is None


@pytest.mark.parametrize(
    ("pieces", "problem"),
    [
        (((0, 0), (1, 0)), "first stone: (0, 0) is already taken by x"),
        (((1, 0), (0, 0)), "second stone: (0, 0) is already taken by x"),
        (((1, 0), (1, 0)), "both stones are on (1, 0)"),
        (((9, 0), (1, 0)), "first stone: (9, 0) is farther than view_distance 8"),
    ],
)
def test_an_illegal_move_has_its_problem_named(pieces: tuple[Hex, Hex], problem: str) -> None:
    found = move_problem(Position(), decision(*pieces))
    assert found is not None and found.startswith(problem)


def test_a_hand_built_decision_with_wrong_stones_has_a_problem() -> None:
    broken = MoveDecision(pieces=((1, 0), (2, 0)))  # type: ignore[arg-type]
    assert "Coord" in (move_problem(Position(), broken) or "")


def test_a_move_problem_leaves_the_position_unchanged() -> None:
    position = Position()
    move_problem(position, decision((1, 0), (2, 0)))
    assert len(position) == 1


@settings(max_examples=100, deadline=None)
@given(
    moves=st.lists(st.tuples(st.integers(-4, 4), st.integers(-4, 4)), max_size=30),
    view=st.integers(1, 4),
)
def test_the_fallback_is_always_legal(moves: list[Hex], view: int) -> None:
    position = Position(view_distance=view)
    for cell in moves:
        if position.is_game_over():
            break
        if position.is_legal(*cell):
            position.place(*cell)
    if position.is_game_over() or position.stones_left != 2:
        return
    assert move_problem(position, fallback_move(position)) is None

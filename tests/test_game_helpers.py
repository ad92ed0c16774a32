"""The prototype's helper functions keep their behaviour on top of the engine."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from game.game import (
    check_win,
    evaluate_status,
    hex_distance,
    is_valid_placement,
    place_piece,
    valid_placement_cells,
)
from models import Cell, Coord, GameStatus, Player
from tests.reference import NaivePosition


def cells_of(*stones: tuple[int, int, Player]) -> list[Cell]:
    return [Cell(q=q, r=r, p=p) for q, r, p in stones]


def test_hex_distance_matches_the_prototype_formula() -> None:
    assert hex_distance(0, 0, 3, -1) == 3
    assert hex_distance(-2, 5, -2, 5) == 0


def test_an_empty_board_allows_only_the_origin() -> None:
    assert valid_placement_cells([], 8) == [Coord(q=0, r=0)]
    assert is_valid_placement([], Coord(q=0, r=0), 8) == (True, "")
    assert is_valid_placement([], Coord(q=1, r=0), 8)[0] is False


def test_valid_placement_cells_are_sorted_nearest_the_origin_first() -> None:
    cells = valid_placement_cells(cells_of((0, 0, Player.X)), 2)
    assert len(cells) == 18
    assert [hex_distance(0, 0, c.q, c.r) for c in cells] == sorted(
        hex_distance(0, 0, c.q, c.r) for c in cells
    )


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(-6, 6), st.integers(-6, 6)), max_size=15), st.integers(1, 4))
def test_valid_placement_cells_agree_with_the_reference(
    extra: list[tuple[int, int]], view: int
) -> None:
    cells = cells_of((0, 0, Player.X), *[(q, r, Player.O) for q, r in set(extra) - {(0, 0)}])
    reference = NaivePosition(view, setup=[(c.q, c.r, c.p.value) for c in cells])
    assert {(c.q, c.r) for c in valid_placement_cells(cells, view)} == reference.legal_cells()


def test_helpers_accept_a_board_that_already_has_a_line() -> None:
    line = cells_of(*[(q, 0, Player.X) for q in range(7)])
    assert evaluate_status(line, 6) is GameStatus.X_WINS
    assert Coord(q=7, r=0) in valid_placement_cells(line, 1)


def test_is_valid_placement_gives_the_prototype_reasons() -> None:
    board = cells_of((0, 0, Player.X))
    assert is_valid_placement(board, Coord(q=0, r=0), 8) == (False, "(0,0) already occupied")
    assert is_valid_placement(board, Coord(q=9, r=0), 8) == (False, "(9,0) out of view range")
    assert is_valid_placement(board, Coord(q=8, r=0), 8) == (True, "")


def test_place_piece_returns_a_new_list() -> None:
    board = cells_of((0, 0, Player.X))
    after = place_piece(board, Coord(q=1, r=0), Player.O)
    assert len(board) == 1
    assert after[-1] == Cell(q=1, r=0, p=Player.O)


def test_check_win_needs_the_full_distance_on_one_axis() -> None:
    five = cells_of(*[(0, r, Player.O) for r in range(5)])
    assert not check_win(five, Player.O, 6)
    assert check_win(five, Player.O, 5)
    assert not check_win(five, Player.X, 5)
    bent = cells_of(*[(q, 0, Player.X) for q in range(3)], *[(2, r, Player.X) for r in (1, 2, 3)])
    assert not check_win(bent, Player.X, 6)


def test_evaluate_status_reports_each_side() -> None:
    o_line = cells_of(*[(q, -q, Player.O) for q in range(6)])
    assert evaluate_status(o_line, 6) is GameStatus.O_WINS
    assert evaluate_status(cells_of((0, 0, Player.X)), 6) is GameStatus.IN_PROGRESS

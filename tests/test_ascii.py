"""Plain-text board rendering."""

from __future__ import annotations

from game.ascii import render


def test_rows_run_from_the_highest_r_down_shifted_half_a_cell() -> None:
    text = render([(0, 0, "x"), (1, 0, "o"), (0, 1, "o"), (0, -1, "x")], margin=0)
    assert text.splitlines() == ["r= 1    o", "r= 0   x o", "r=-1  x"]


def test_a_winning_line_is_drawn_in_capitals_and_empty_cells_as_dots() -> None:
    text = render([(0, 0, "x"), (1, 0, "x"), (5, 5, "o")], highlight=[(0, 0), (1, 0)])
    row_zero = next(line for line in text.splitlines() if line.startswith("r= 0"))
    assert "X X" in row_zero
    assert "." in row_zero
    assert "o" in text


def test_an_empty_board_says_so() -> None:
    assert render([]) == "(empty board)"

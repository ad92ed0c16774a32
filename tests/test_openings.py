"""Opening books: the shipped book, reading a book, errors that name the opening, order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from game.hexgrid import distance
from game.openings import (
    STANDARD_SETUP,
    BookFormatError,
    EmptyBookError,
    FinishedOpeningError,
    IllegalOpeningError,
    Opening,
    OpeningBook,
    OpeningError,
    default_book,
    load_book,
    symmetries,
)
from game.rules import O, X

ROOT = Path(__file__).resolve().parent.parent
BOOK_FILE = ROOT / "game" / "books" / "openings.htttx"
TOOL = ROOT / "tools" / "make_openings.py"

TWO_OPENINGS = """\
version[2]
name[First];
1. [1,0] [0,1];
2. [-1,0] [0,-1];

version[2]
name[Second];
1. [2,-1] [1,1];
"""

# O makes six in a row on turn 5: a game that is over, not an opening.
WON = """\
version[2]
name[Already won];
1. [1,0] [2,0];
2. [0,5] [0,6];
3. [3,0] [4,0];
4. [0,-5] [0,-6];
5. [5,0] [6,0];
"""


def _transformed(opening: Opening, matrix: tuple[tuple[int, int], tuple[int, int]]) -> Opening:
    (a, b), (c, d) = matrix
    moves = tuple(tuple((a * q + b * r, c * q + d * r) for q, r in move) for move in opening.moves)
    return Opening(opening.name, moves=moves)


# ------------------------------------------------------------------ shipped book


def test_the_shipped_book_has_at_least_50_openings() -> None:
    assert len(default_book()) >= 50


def test_the_default_book_is_the_shipped_file_read_as_package_data() -> None:
    assert default_book().openings == load_book(BOOK_FILE).openings


def test_every_shipped_opening_is_legal_not_over_and_two_or_three_turns_deep() -> None:
    for opening in default_book():
        position = opening.position()  # raises IllegalMoveError if a stone is illegal
        assert position.outcome is None, opening.name
        assert opening.setup == STANDARD_SETUP and opening.first_to_move == O
        assert len(opening.moves) in (2, 3), opening.name
        assert all(len(move) == 2 for move in opening.moves)


def test_the_shipped_book_has_both_depths() -> None:
    depths = [len(opening.moves) for opening in default_book()]
    assert depths.count(2) >= 20 and depths.count(3) >= 20


def test_no_shipped_opening_gives_either_side_an_open_four() -> None:
    for opening in default_book():
        for side in (X, O):
            assert opening.most_in_window(side) <= 3, (opening.name, side)


def test_shipped_openings_stay_near_the_centre() -> None:
    for opening in default_book():
        assert all(distance((q, r), (0, 0)) <= 3 for q, r, _ in opening.stones()), opening.name


def test_no_two_shipped_openings_are_rotations_or_mirror_images_of_each_other() -> None:
    book = default_book()
    forms = {opening.canonical() for opening in book}
    assert len(forms) == len(book)


def test_shipped_opening_names_are_unique() -> None:
    names = [opening.name for opening in default_book()]
    assert len(set(names)) == len(names)


def test_the_tool_reproduces_the_shipped_book_byte_for_byte(tmp_path: Path) -> None:
    output = tmp_path / "book.htttx"
    subprocess.run(
        [sys.executable, str(TOOL), "--output", str(output)],
        check=True,
        capture_output=True,
        cwd=tmp_path,  # the tool finds the package from its own place
    )
    assert output.read_bytes() == BOOK_FILE.read_bytes()


def test_the_tool_help_says_how_it_chooses_the_openings() -> None:
    shown = subprocess.run(
        [sys.executable, str(TOOL), "--help"], check=True, capture_output=True, text=True
    ).stdout
    for words in ("seed", "symmetry", "open four", "within", "--count"):
        assert words in shown


def test_the_tool_refuses_a_radius_too_small_for_three_turns() -> None:
    done = subprocess.run(
        [sys.executable, str(TOOL), "--radius", "1", "--output", "-"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "--radius at least 2" in done.stderr


def test_another_seed_makes_another_book(tmp_path: Path) -> None:
    shown = subprocess.run(
        [sys.executable, str(TOOL), "--seed", "12", "--count", "10", "--output", "-"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    book = OpeningBook.from_text(shown)
    assert len(book) == 10
    assert shown not in BOOK_FILE.read_text(encoding="utf-8")


# --------------------------------------------------------------------- symmetry


def test_the_twelve_symmetries_keep_distances_from_the_centre() -> None:
    cells = [(1, 0), (2, -1), (-3, 1), (0, 2)]
    images = set()
    for (a, b), (c, d) in symmetries():
        moved = [(a * q + b * r, c * q + d * r) for q, r in cells]
        assert [distance(cell, (0, 0)) for cell in moved] == [1, 2, 3, 2]
        images.add(tuple(moved))
    assert len(images) == 12


def test_every_image_of_an_opening_has_the_same_canonical_form() -> None:
    opening = Opening("o", moves=(((1, 0), (2, -1)), ((0, 1), (-2, 1)), ((1, 1), (3, -2))))
    for matrix in symmetries():
        assert _transformed(opening, matrix).canonical() == opening.canonical()


def test_the_same_stones_in_another_order_have_the_same_canonical_form() -> None:
    a = Opening("a", moves=(((1, 0), (2, 0)), ((0, 1), (0, 2))))
    b = Opening("b", moves=(((2, 0), (1, 0)), ((0, 2), (0, 1))))
    assert a.canonical() == b.canonical()


def test_different_positions_have_different_canonical_forms() -> None:
    a = Opening("a", moves=(((1, 0), (2, 0)),))
    b = Opening("b", moves=(((1, 0), (3, 0)),))
    line = Opening("line", moves=(((1, 0), (2, 0)), ((0, 1), (0, 2))))
    bent = Opening("bent", moves=(((1, 0), (2, 0)), ((0, 1), (-1, 2))))
    assert a.canonical() != b.canonical()
    assert line.canonical() != bent.canonical()


def test_an_open_four_counts_only_windows_free_of_the_other_side() -> None:
    four = Opening("four", moves=(((1, 1), (2, 1)), ((0, 3), (0, 4)), ((3, 1), (4, 1))))
    assert four.most_in_window(O) == 4
    blocked = Opening("blocked", moves=(((1, 0), (2, 0)), ((5, 0), (-3, 0)), ((3, 0), (4, 0))))
    # O's four lie between X's (0, 0) and (5, 0): every six-cell window along that row
    # holds an X stone, so each O stone counts alone on its other two axes.
    assert blocked.most_in_window(O) == 1


# ------------------------------------------------------------------- reading


def test_a_book_keeps_the_files_order_names_and_lines() -> None:
    book = OpeningBook.from_text(TWO_OPENINGS)
    assert [(opening.name, opening.line) for opening in book] == [("First", 1), ("Second", 6)]
    assert book[0].moves == (((1, 0), (0, 1)), ((-1, 0), (0, -1)))


def test_the_start_position_has_every_stone_and_the_right_side_to_move() -> None:
    first, second = OpeningBook.from_text(TWO_OPENINGS)
    position = first.position()
    assert position.to_move == first.to_move == O
    assert sorted(position.stones) == sorted(first.stones())
    assert second.position().to_move == second.to_move == X


def test_recorded_moves_are_what_the_runner_replays() -> None:
    first = OpeningBook.from_text(TWO_OPENINGS)[0]
    recorded = first.recorded_moves()
    assert [move.side.value for move in recorded] == [O, X]
    assert [[(c.q, c.r) for c in move.pieces] for move in recorded] == [
        [(1, 0), (0, 1)],
        [(-1, 0), (0, -1)],
    ]


def test_an_opening_written_and_read_back_is_the_same_opening() -> None:
    for opening in default_book().openings[:5]:
        assert OpeningBook.from_text(opening.dumps())[0] == opening


def test_a_setup_opening_is_read_with_its_stones_and_first_mover() -> None:
    text = "version[2]\nname[Setup];\nx [0,0] [1,1] : o [-1,0];\n1. [2,0] [3,0];\n"
    opening = OpeningBook.from_text(text)[0]
    assert opening.setup == ((-1, 0, O), (0, 0, X), (1, 1, X))
    assert opening.first_to_move == X
    assert opening.to_move == O
    assert opening.position().piece_at(3, 0) == X


def test_a_book_may_start_with_a_byte_order_mark() -> None:
    assert [opening.name for opening in OpeningBook.from_text("\ufeff" + TWO_OPENINGS)] == [
        "First",
        "Second",
    ]


def test_a_record_without_a_name_is_named_by_its_place() -> None:
    book = OpeningBook.from_text("version[2];\n1. [1,0] [0,1];\n")
    assert book[0].name == "opening 1"


def test_load_book_reads_a_file_and_names_it_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "mine.htttx"
    path.write_text(TWO_OPENINGS + "\n" + WON, encoding="utf-8")
    with pytest.raises(FinishedOpeningError) as raised:
        load_book(path)
    assert str(raised.value).startswith(f"{path} line 10: opening 'Already won': ")


# -------------------------------------------------------------------- errors


def test_an_illegal_opening_names_the_opening_and_its_line() -> None:
    text = TWO_OPENINGS + "\nversion[2]\nname[Bad];\n1. [1,0] [2,0];\n2. [0,0] [3,3];\n"
    with pytest.raises(IllegalOpeningError) as raised:
        OpeningBook.from_text(text, source="book.htttx")
    error = raised.value
    assert (error.name, error.line, error.column) == ("Bad", 13, 4)
    assert str(error) == (
        "book.htttx line 13, column 4: opening 'Bad': "
        "turn 2: X cannot play [0,0]: (0, 0) is already taken by x"
    )


def test_a_stone_out_of_view_is_an_illegal_opening() -> None:
    with pytest.raises(IllegalOpeningError, match=r"opening 'Far'.*farther than view_distance"):
        OpeningBook.from_text("version[2] name[Far]; 1. [9,0] [1,0];")


def test_text_that_is_not_notation_is_an_illegal_opening_naming_it() -> None:
    with pytest.raises(IllegalOpeningError, match=r"line 2, column \d+: opening 'Broken'"):
        OpeningBook.from_text("version[2]\nname[Broken]; 1. [1,0 [2,0];")


def test_a_won_opening_is_refused_naming_the_winner() -> None:
    with pytest.raises(FinishedOpeningError, match=r"line 1: opening 'Already won': .*O won"):
        OpeningBook.from_text(WON)


def test_an_opening_with_a_result_tag_is_refused() -> None:
    text = "version[2]\nname[Resigned]\nendreason[resign]\nwinner[cross];\n1. [1,0] [2,0];\n"
    with pytest.raises(FinishedOpeningError, match="opening 'Resigned'"):
        OpeningBook.from_text(text)


def test_a_one_stone_turn_is_an_illegal_opening() -> None:
    with pytest.raises(IllegalOpeningError, match="turn 1 has one stone"):
        OpeningBook.from_text("version[2] name[Half]; 1. [1,0] [/];")


def test_text_before_the_first_record_is_a_format_error() -> None:
    with pytest.raises(BookFormatError, match="line 2: expected a record"):
        OpeningBook.from_text("\n# my openings\nversion[2]; 1. [1,0] [2,0];")


def test_a_book_without_openings_is_an_error() -> None:
    with pytest.raises(EmptyBookError):
        OpeningBook.from_text("\n\n")


def test_every_book_error_is_an_opening_error_and_a_value_error() -> None:
    for kind in (IllegalOpeningError, FinishedOpeningError, BookFormatError, EmptyBookError):
        assert issubclass(kind, OpeningError) and issubclass(kind, ValueError)


def test_checking_under_other_settings_names_a_stone_out_of_view() -> None:
    book = OpeningBook.from_text(TWO_OPENINGS, source="two.htttx")
    book.check()  # the defaults: what loading already checked
    with pytest.raises(IllegalOpeningError) as raised:
        book.check(view_distance=1)
    assert str(raised.value).startswith("two.htttx line 6: opening 'Second': with view_distance 1")


def test_checking_under_a_shorter_win_distance_finds_a_won_opening() -> None:
    book = OpeningBook.from_text(TWO_OPENINGS)
    with pytest.raises(FinishedOpeningError, match="opening 'First': with win_distance 2"):
        book.check(win_distance=2)


def test_the_shipped_book_passes_its_own_check() -> None:
    default_book().check()


# --------------------------------------------------------------------- order


def test_sequential_order_is_the_files_order() -> None:
    book = default_book()
    assert book.order() == list(book.openings)


def test_a_seeded_order_is_reproducible_and_a_permutation() -> None:
    book = default_book()
    shuffled = book.order(seed=42)
    assert shuffled == book.order(seed=42)
    assert sorted(o.name for o in shuffled) == sorted(o.name for o in book)
    assert shuffled != list(book.openings)


def test_different_seeds_give_different_orders() -> None:
    book = default_book()
    assert book.order(seed=1) != book.order(seed=2)


def test_ordering_does_not_change_the_book() -> None:
    book = default_book()
    before = list(book.openings)
    book.order(seed=3)
    assert list(book.openings) == before

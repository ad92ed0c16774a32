"""The rules engine: table tests of the edges, and properties against a naive reference."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from game.hexgrid import AXES, hexagon, hexagon_size, ring
from game.rules import (
    GameOverError,
    IllegalMoveError,
    NothingToUndoError,
    OccupiedCellError,
    Outcome,
    OutOfViewError,
    Position,
    Termination,
)
from tests.reference import NaivePosition

Hex = tuple[int, int]


def play(position: Position, *cells: Hex) -> Position:
    for q, r in cells:
        position.place(q, r)
    return position


def board_with(stones: list[tuple[int, int, str]], **kwargs: object) -> Position:
    """A position set up with ``stones`` (X at the origin added), X to move."""
    return Position(setup=[(0, 0, "x"), *stones], to_move="x", **kwargs)  # type: ignore[arg-type]


# ------------------------------------------------------------------- start state


def test_standard_start_has_x_at_origin_and_o_to_move_with_two_stones() -> None:
    pos = Position()
    assert pos.stones == [(0, 0, "x")]
    assert pos.to_move == "o"
    assert pos.stones_left == 2
    assert pos.outcome is None
    assert pos.moves_played == 0


def test_legal_cells_at_start_are_the_hexagon_around_the_origin() -> None:
    pos = Position(view_distance=8)
    assert set(pos.legal_cells()) == set(hexagon((0, 0), 8)) - {(0, 0)}
    assert len(pos.legal_cells()) == 216


def test_sides_alternate_every_two_stones() -> None:
    pos = Position()
    seen = []
    for cell in [(1, 0), (2, 0), (-1, 0), (-2, 0), (0, 1), (0, 2)]:
        seen.append((pos.to_move, pos.stones_left))
        pos.place(*cell)
    assert seen == [("o", 2), ("o", 1), ("x", 2), ("x", 1), ("o", 2), ("o", 1)]
    assert pos.moves_played == 3
    assert [side for _, _, side in pos.stones] == ["x", "o", "o", "x", "x", "o", "o"]


# -------------------------------------------------------------------- legality


@pytest.mark.parametrize("cell", list(ring((0, 0), 8)))
def test_a_stone_exactly_at_the_view_distance_is_legal(cell: Hex) -> None:
    assert Position(view_distance=8).is_legal(*cell)


@pytest.mark.parametrize("cell", list(ring((0, 0), 9)))
def test_a_stone_one_beyond_the_view_distance_is_illegal(cell: Hex) -> None:
    pos = Position(view_distance=8)
    assert not pos.is_legal(*cell)
    with pytest.raises(OutOfViewError, match="farther than view_distance 8"):
        pos.place(*cell)


def test_the_first_stone_of_a_move_extends_the_view_for_the_second() -> None:
    pos = Position(view_distance=2)
    assert not pos.is_legal(4, 0)
    pos.place(2, 0)
    assert pos.is_legal(4, 0)
    pos.place(4, 0)
    assert pos.stones[-1] == (4, 0, "o")


def test_view_is_measured_from_any_stone_far_left_included() -> None:
    pos = play(Position(view_distance=3), (-3, 0), (-6, 0))
    assert pos.is_legal(-9, 0)
    assert not pos.is_legal(-10, 0)
    play(pos, (-9, 0), (-12, 0))  # keeps growing left past the engine's bit bias
    assert pos.is_legal(-15, 0)
    assert not pos.is_legal(-16, 0)


def test_an_occupied_cell_is_illegal_with_the_reason() -> None:
    pos = Position()
    with pytest.raises(OccupiedCellError, match=r"\(0, 0\) is already taken by x"):
        pos.place(0, 0)
    assert pos.why_illegal(0, 0) == "(0, 0) is already taken by x"
    assert pos.why_illegal(1, 0) is None


@pytest.mark.parametrize("bad", [(0.5, 0), ("1", 0), (True, 0), (1, None)])
def test_non_integer_coordinates_are_rejected(bad: tuple[object, object]) -> None:
    with pytest.raises(IllegalMoveError, match="coordinates must be integers"):
        Position().place(*bad)  # type: ignore[arg-type]


def test_an_illegal_stone_leaves_the_position_unchanged() -> None:
    pos = play(Position(), (1, 0))
    before = (pos.stones, pos.to_move, pos.stones_left, set(pos.legal_cells()))
    with pytest.raises(IllegalMoveError):
        pos.place(20, 20)
    assert (pos.stones, pos.to_move, pos.stones_left, set(pos.legal_cells())) == before


# ------------------------------------------------------------------------ wins


@pytest.mark.parametrize("axis", AXES)
def test_six_in_a_row_wins_on_every_axis(axis: Hex) -> None:
    dq, dr = axis
    # X's stones at 1..5 along the axis (plus the origin) would be 6; give X 5 of them.
    line = [(dq * i, dr * i) for i in range(1, 6)]
    pos = board_with([(q, r, "x") for q, r in line[:4]])
    assert pos.outcome is None
    pos.place(*line[4])
    assert pos.outcome == Outcome(Termination.LINE, "x", ((0, 0), *line))
    assert pos.outcome is not None and pos.outcome.result() == "1-0"


def test_five_in_a_row_does_not_win() -> None:
    pos = board_with([(1, 0, "x"), (2, 0, "x"), (3, 0, "x")])
    pos.place(4, 0)
    assert pos.outcome is None


def test_a_line_of_seven_joining_two_runs_wins_with_all_seven_cells() -> None:
    pos = board_with([(q, 0, "x") for q in (1, 2, 4, 5, 6)])
    pos.place(3, 0)
    assert pos.outcome is not None
    assert pos.outcome.line == tuple((q, 0) for q in range(7))


def test_opponent_stones_break_a_line() -> None:
    pos = board_with([(1, 0, "x"), (2, 0, "x"), (3, 0, "o"), (4, 0, "x"), (5, 0, "x")])
    pos.place(6, 0)
    pos.place(7, 0)
    assert pos.outcome is None


def test_a_winning_first_stone_ends_the_game_before_the_second() -> None:
    pos = board_with([(q, 0, "x") for q in (1, 2, 3, 4)])
    pos.place(5, 0)
    assert pos.outcome is not None and pos.outcome.winner == "x"
    assert pos.stones_left == 2  # the move ended after one stone
    assert pos.moves_played == 1
    with pytest.raises(GameOverError, match="the game is over"):
        pos.place(6, 1)
    assert not pos.is_legal(6, 1)
    assert list(pos.legal_cells()) == []


def test_a_winning_second_stone_ends_the_game() -> None:
    pos = board_with([(q, 0, "x") for q in (1, 2, 3)])
    pos.place(4, 0)
    assert pos.outcome is None
    pos.place(5, 0)
    assert pos.outcome is not None and pos.outcome.winner == "x"


def test_win_distance_is_configurable() -> None:
    pos = play(Position(win_distance=2), (5, 0), (5, 1))
    assert pos.outcome is not None
    assert pos.outcome.winner == "o"
    assert pos.outcome.line == ((5, 0), (5, 1))


# -------------------------------------------------------------------- draws


def test_turn_limit_draws_after_that_many_moves() -> None:
    pos = Position(turn_limit=2)
    play(pos, (1, 0), (2, 0), (-1, 0))
    assert pos.outcome is None
    pos.place(-2, 0)
    assert pos.outcome == Outcome(Termination.TURN_LIMIT, None)
    assert pos.outcome is not None and pos.outcome.result() == "1/2-1/2"


def test_a_win_on_the_last_allowed_move_is_a_win_not_a_draw() -> None:
    pos = board_with([(q, 0, "x") for q in (1, 2, 3)], turn_limit=1)
    play(pos, (4, 0), (5, 0))
    assert pos.outcome is not None and pos.outcome.winner == "x"


# ---------------------------------------------------------------------- setup


def test_a_free_setup_sets_the_stones_and_the_side_to_move() -> None:
    pos = Position(setup=[(0, 0, "o"), (3, 3, "x")], to_move="x")
    assert pos.piece_at(0, 0) == "o" and pos.piece_at(3, 3) == "x"
    assert pos.to_move == "x"
    with pytest.raises(NothingToUndoError):
        pos.undo()


def test_an_empty_setup_allows_only_the_origin() -> None:
    pos = Position(setup=[], to_move="x")
    assert set(pos.legal_cells()) == {(0, 0)}
    assert not pos.is_legal(1, 0)
    pos.place(0, 0)
    assert pos.is_legal(1, 0)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ([(0, 0, "x"), (0, 0, "o")], "two stones on"),
        ([(q, 0, "o") for q in range(6)], "already has 6 in a row for o"),
        ([(0, 0, "y")], "a side is 'x' or 'o'"),
    ],
)
def test_an_impossible_setup_is_rejected(setup: list[tuple[int, int, str]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Position(setup=setup)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"view_distance": 0}, "view_distance must be 1..50"),
        ({"view_distance": 51}, "view_distance must be 1..50"),
        ({"win_distance": 1}, "win_distance must be 2..20"),
        ({"win_distance": 21}, "win_distance must be 2..20"),
        ({"turn_limit": 0}, "turn_limit must be at least 1"),
    ],
)
def test_out_of_range_settings_are_rejected(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Position(**kwargs)  # type: ignore[arg-type]


# ----------------------------------------------------------------- undo, copy


def test_undo_restores_side_stones_left_and_moves_played() -> None:
    pos = play(Position(), (1, 0), (2, 0), (-1, 0))
    assert pos.undo() == (-1, 0, "x")
    assert (pos.to_move, pos.stones_left, pos.moves_played) == ("x", 2, 1)
    assert pos.undo() == (2, 0, "o")
    assert (pos.to_move, pos.stones_left, pos.moves_played) == ("o", 1, 0)


def test_undo_of_a_win_reopens_the_game() -> None:
    pos = board_with([(q, 0, "x") for q in (1, 2, 3, 4)])
    pos.place(5, 0)
    pos.undo()
    assert pos.outcome is None
    assert pos.is_legal(5, 0)
    assert (pos.to_move, pos.stones_left) == ("x", 2)


def test_undo_of_a_turn_limit_draw_reopens_the_game() -> None:
    pos = play(Position(turn_limit=1), (1, 0), (2, 0))
    pos.undo()
    assert pos.outcome is None and pos.stones_left == 1


def test_a_copy_is_independent() -> None:
    pos = play(Position(), (1, 0))
    clone = pos.copy()
    clone.place(2, 0)
    assert len(pos) == 2 and len(clone) == 3
    assert (2, 0) in pos.legal_cells() and (2, 0) not in clone.legal_cells()


# ------------------------------------------------- properties against the reference

settings.register_profile("rules", max_examples=60, deadline=None)

game_settings = st.tuples(st.integers(1, 4), st.integers(2, 5))
#: A game script: candidate cells near the origin (many illegal), plus when to undo.
game_scripts = st.lists(
    st.tuples(st.integers(-9, 9), st.integers(-9, 9), st.booleans()), min_size=1, max_size=70
)


def snapshot(pos: Position) -> tuple[object, ...]:
    outcome = pos.outcome
    return (
        pos.stones,
        pos.to_move,
        pos.stones_left,
        pos.moves_played,
        outcome,
        frozenset(pos.legal_cells()),
    )


@settings(max_examples=150, deadline=None)
@given(game_settings, game_scripts)
def test_engine_agrees_with_the_naive_reference_on_every_answer(
    distances: tuple[int, int], script: list[tuple[int, int, bool]]
) -> None:
    view, win = distances
    engine = Position(view, win)
    reference = NaivePosition(view, win)
    for q, r, probe_everything in script:
        assert engine.is_legal(q, r) == reference.is_legal(q, r), (q, r)
        if probe_everything:
            assert set(engine.legal_cells()) == reference.legal_cells()
        if reference.is_legal(q, r):
            engine.place(q, r)
            reference.place(q, r)
        else:
            with pytest.raises(IllegalMoveError):
                engine.place(q, r)
        outcome = engine.outcome
        assert (outcome.winner if outcome else None) == reference.winner
        assert (outcome is not None and outcome.winner is None) == reference.drawn
        if reference.winner:
            assert outcome is not None and set(outcome.line) == set(reference.line)
        assert (engine.to_move, engine.stones_left) == (reference.to_move, reference.stones_left)
        if engine.outcome:
            break


@settings(max_examples=150, deadline=None)
@given(game_settings, game_scripts, st.integers(0, 10_000))
def test_undo_restores_the_exact_state(
    distances: tuple[int, int], script: list[tuple[int, int, bool]], seed: int
) -> None:
    view, win = distances
    pos = Position(view, win, turn_limit=None if seed % 3 else 12)
    states = [snapshot(pos)]
    for q, r, look in script:
        if look:
            pos.legal_cells()  # fold coverage in at arbitrary points
        if pos.outcome or not pos.is_legal(q, r):
            continue
        pos.place(q, r)
        states.append(snapshot(pos))
    while len(states) > 1:
        assert snapshot(pos) == states.pop()
        pos.undo()
    assert snapshot(pos) == states[0]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 50), st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), max_size=12))
def test_legal_cells_match_the_reference_for_any_view_distance(view: int, steps: list[Hex]) -> None:
    engine = Position(view, 20)
    reference = NaivePosition(view, 20)
    q = r = 0
    for dq, dr in steps:  # a walk of hops, each within view of the last stone
        q, r = q + dq * max(1, view // 3), r + dr * max(1, view // 3)
        if reference.is_legal(q, r):
            engine.place(q, r)
            reference.place(q, r)
    assert set(engine.legal_cells()) == reference.legal_cells()


def test_play_far_from_the_origin_follows_the_same_rules() -> None:
    far = 300_000
    pos = Position(setup=[(far, -far, "x")], to_move="o")
    assert pos.is_legal(far + 8, -far)
    assert not pos.is_legal(far + 9, -far)
    play(pos, (far + 1, -far), (far + 2, -far))
    assert pos.piece_at(far + 2, -far) == "o"


def test_coordinates_beyond_the_engine_limit_are_out_of_view() -> None:
    pos = Position()
    assert not pos.is_legal(0, 2**19)
    assert not pos.is_legal(-(2**40), 0)
    with pytest.raises(OutOfViewError, match="too far from the origin"):
        pos.place(0, 2**19)


# ------------------------------------------------------------------------ rebase


def test_rebase_makes_the_stones_the_setup() -> None:
    pos = play(Position(turn_limit=3), (1, 0), (2, 0), (-1, 0), (-2, 0))
    pos.rebase()
    built = Position(setup=pos.stones, to_move="o", turn_limit=3)
    assert (pos.setup, pos.moves_played, pos.to_move) == (built.setup, 0, "o")
    with pytest.raises(NothingToUndoError):
        pos.undo()
    play(pos, (3, 0), (4, 0), (-3, 0), (-4, 0))
    assert pos.outcome is None  # the turn limit counts from the rebase
    play(pos, (5, 1), (6, 1))
    assert pos.outcome == Outcome(Termination.TURN_LIMIT, None)


def test_rebase_mid_move_or_after_the_end_raises() -> None:
    with pytest.raises(ValueError, match="between moves"):
        play(Position(), (1, 0)).rebase()
    won = play(Position(win_distance=2), (1, 0), (2, 0))
    with pytest.raises(ValueError, match="between moves"):
        won.rebase()


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_rebased_position_equals_the_one_built_from_its_stones(data: st.DataObject) -> None:
    pos = Position(view_distance=2, win_distance=4)
    for _ in range(data.draw(st.integers(0, 12))):
        pos.place(*data.draw(st.sampled_from(sorted(pos.legal_cells()))))
        if pos.is_game_over():
            return
        if pos.stones_left == 2 and data.draw(st.booleans()):
            pos.rebase()
    if pos.stones_left != 2:
        return
    pos.rebase()
    built = Position(view_distance=2, win_distance=4, setup=pos.stones, to_move=pos.to_move)
    assert (pos.stones, pos.setup, pos.to_move, pos.stones_left, pos.moves_played) == (
        built.stones,
        built.setup,
        built.to_move,
        built.stones_left,
        built.moves_played,
    )
    assert list(pos.legal_cells()) == list(built.legal_cells())
    cell = sorted(built.legal_cells())[0]
    pos.place(*cell)
    built.place(*cell)
    assert (pos.outcome, pos.to_move, pos.stones_left) == (
        built.outcome,
        built.to_move,
        built.stones_left,
    )


# --------------------------------------------------- cost wherever the stones are


@settings(max_examples=60, deadline=None)
@given(
    game_settings,
    game_scripts,
    st.integers(-(2**19) + 100, 2**19 - 100),
    st.integers(-(2**19) + 100, 2**19 - 100),
)
def test_engine_agrees_with_the_reference_around_any_opening_cell(
    distances: tuple[int, int], script: list[tuple[int, int, bool]], far_q: int, far_r: int
) -> None:
    """The row masks are cut in chunks: a game anywhere, across chunk ends included,
    plays by the same rules as near the origin."""
    view, win = distances
    engine = Position(view, win, setup=[(far_q, far_r, "x")])
    reference = NaivePosition(view, win, setup=[(far_q, far_r, "x")])
    for q, r, look in script:
        q, r = far_q + q, far_r + r
        assert engine.is_legal(q, r) == reference.is_legal(q, r), (q, r)
        if look:
            assert set(engine.legal_cells()) == reference.legal_cells()
        if not reference.is_legal(q, r):
            continue
        engine.place(q, r)
        reference.place(q, r)
        if reference.winner:
            break
    while len(engine) > 1:
        engine.undo()
    assert set(engine.legal_cells()) == set(hexagon((far_q, far_r), view)) - {(far_q, far_r)}


def allocated_bytes(build: Callable[[], Position]) -> int:
    """Bytes still allocated by what ``build`` made, once it returns (the position)."""
    gc.collect()
    tracemalloc.start()
    try:
        kept = build()
        allocated, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del kept
    return allocated


def columns_of_stones(columns: tuple[int, ...], count: int) -> Position:
    """``count`` stones one above the other at each of ``columns``, alternating sides
    in pairs (so no line), with their legal cells worked out."""
    setup = [(q, r, "x" if r % 4 < 2 else "o") for q in columns for r in range(count)]
    position = Position(setup=setup, to_move="x")
    position.legal_cells()
    return position


@pytest.mark.parametrize(
    ("near", "far"),
    [
        ((0,), (2**19 - 100,)),
        ((0,), (-(2**19) + 100,)),
        ((-200, 200), (-(2**19) + 100, 2**19 - 100)),
    ],
)
def test_stones_far_from_the_origin_cost_the_memory_they_cost_near_it(
    near: tuple[int, ...], far: tuple[int, ...]
) -> None:
    near_bytes = allocated_bytes(lambda: columns_of_stones(near, 300))
    far_bytes = allocated_bytes(lambda: columns_of_stones(far, 300))
    assert far_bytes < 1.5 * near_bytes


def chain_of_stones(count: int) -> Position:
    """A legal game of ``count`` stones after the opening that walks away from the origin
    up and to the left, each stone at the view distance from the one before, with the
    legal cells worked out after every move."""
    position = Position(8, 6)
    for index in range(1, count + 1):
        # Along the s axis (q - 8, r + 8): sides alternate in pairs, and stones 8 apart
        # never make a line.
        position.place(-8 * index, 8 * index)
        if index % 2 == 0:
            position.legal_cells()
    return position


def test_a_legal_game_far_from_the_origin_costs_the_same_per_stone_as_near_it() -> None:
    """Memory per stone is bounded by the view area: it does not grow as the game's
    stones get farther apart (2000 stones reach 16000 cells away)."""
    short_bytes = allocated_bytes(lambda: chain_of_stones(250)) / 250
    long_bytes = allocated_bytes(lambda: chain_of_stones(2000)) / 2000
    assert long_bytes < 1.2 * short_bytes
    assert long_bytes < 200 * hexagon_size(8)

"""SearchBot: wins, blocks, the tactics suite, its budget, the pure fallback, what it
reports, and a real game through the game server against ThreatBot."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bot.bot import Deadline, MoveDecision
from bot.bots import LatticeBot, RandomBot, ThreatBot, search_bot, threat_bot
from bot.bots.search import kernels
from bot.bots.search import layout as L
from bot.bots.search.backend import PURE, backend, compiled_backend, numba_available
from bot.bots.search.engine import Cell, Engine, Line, SearchResult
from bot.bots.search.solver import Board, forced_win_length, win_in_1
from bot.bots.search_bot import SearchBot
from bot.bots.threat_bot import WindowCensus
from game.openings import default_book
from game.rules import Position, Side
from models import EndCause, Match, Player
from tests.test_server import arena
from wire.match import TimeControl

TACTICS = json.loads((Path(L.__file__).parent / "tactics.json").read_text())


def suite(k: int) -> list[Position]:
    return [
        Position(setup=[tuple(stone) for stone in entry["stones"]], to_move=entry["to_move"])
        for entry in TACTICS[str(k)]
    ]


def play(bot: SearchBot, position: Position, seconds: float | None = 5.0) -> MoveDecision:
    answer = bot.play(position.copy(), Player(position.to_move), Match(), Deadline(seconds))
    return MoveDecision.of(answer)


def after(position: Position, decision: MoveDecision) -> Position:
    moved = position.copy()
    for stone in decision.pieces:
        if not moved.is_game_over():
            moved.place(stone.q, stone.r)
    return moved


def test_it_wins_in_one_when_it_can() -> None:
    position = Position(setup=[(0, 0, "x"), (5, 5, "o"), *((q, 2, "x") for q in range(4))])
    position = Position(setup=position.stones, to_move="x")
    decision = play(SearchBot(pure=True), position)
    assert after(position, decision).outcome.winner == "x"  # type: ignore[union-attr]
    assert decision.evaluation is not None and decision.evaluation.win_in == 1


def test_it_blocks_an_open_four() -> None:
    stones = [(0, 0, "x"), (0, 3, "x"), *((q, 0, "o") for q in range(1, 5))]
    position = Position(setup=stones, to_move="x")
    decision = play(SearchBot(pure=True, max_nodes=20_000), position)
    board = Board(after(position, decision))
    assert not win_in_1(board, 1)  # O can no longer complete a window


@pytest.mark.parametrize("k", [1, 2])
def test_the_tactics_suite_is_what_the_solver_says(k: int) -> None:
    positions = suite(k)
    assert len(positions) >= 5
    assert all(forced_win_length(position, k) == k for position in positions)


def test_a_win_in_three_of_the_suite_is_checked_exhaustively() -> None:
    position = suite(3)[0]
    assert forced_win_length(position, 3) == 3


@pytest.mark.parametrize("k", [1, 2])
def test_it_solves_every_win_in_one_and_two_of_the_suite(k: int) -> None:
    compiled_backend()  # compiled (or loaded) before the clock of a search starts
    bot = SearchBot(wait_for_compiler=True, max_nodes=2_000_000)
    for position in suite(k):
        decision = play(bot, position)
        moved = after(position, decision)
        if k == 1:
            assert moved.outcome is not None and moved.outcome.winner == position.to_move
            continue
        board = Board(moved)
        mover = L.side_index(position.to_move)
        assert not win_in_1(board, 1 - mover) and not board.blockable(mover)
        assert decision.evaluation is not None and decision.evaluation.win_in is not None


def test_the_search_stops_at_its_node_budget() -> None:
    position = suite(2)[0]
    engine = Engine(pure=True)
    budget = 3_000
    found = engine.search(position, seconds=1e9, max_nodes=budget, threats=False)
    assert found is not None
    # The budget is checked at every node; a node's ordering evaluates at most MAXM moves.
    assert found.nodes <= budget + 2 * L.MAXM
    assert found.depth < 6


def test_the_pure_fallback_plays_legal_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTTX_SEARCH_PURE", "1")
    assert backend() is PURE
    position = Position()
    bots = {"o": SearchBot(max_nodes=4_000), "x": RandomBot(seed=3)}
    for _ in range(8):
        if position.is_game_over():
            break
        side = position.to_move
        answer = bots[side].play(position.copy(), Player(side), Match(), Deadline(None))
        for stone in MoveDecision.of(answer).pieces:
            if not position.is_game_over():
                position.place(stone.q, stone.r)  # raises on an illegal stone
    assert bots["o"].last is not None and bots["o"].last.backend == "python"  # type: ignore[attr-defined]


def test_it_reports_an_evaluation_and_considerations() -> None:
    position = Position(setup=[(0, 0, "x"), (1, 0, "o"), (1, 1, "o")], to_move="x")
    # One complete iteration: its other root moves are searched again for exact scores.
    decision = play(SearchBot(pure=True, max_depth=1), position)
    assert decision.evaluation is not None
    assert decision.evaluation.heuristic is not None or decision.evaluation.win_in is not None
    assert decision.considerations
    assert all(option.evaluation is not None for option in decision.considerations)
    assert decision.pieces not in [tuple(option.pieces) for option in decision.considerations]


def test_it_reports_its_best_move_so_far_to_the_deadline() -> None:
    deadline = Deadline(None)
    position = Position(setup=[(0, 0, "x"), (1, 0, "o"), (1, 1, "o")], to_move="x")
    SearchBot(pure=True, max_nodes=20_000).play(position.copy(), Player.X, Match(), deadline)
    assert deadline.best is not None


async def test_it_beats_threatbot_through_the_game_server(tmp_path: Path) -> None:
    turn = TimeControl.parse("turn=0.5").model_dump()
    async with arena(tmp_path) as a:
        created = await a.new_game(
            {
                "player_x": {**a.bot("search"), "time_control": turn},
                "player_o": {**a.bot("threat"), "time_control": turn},
            }
        )
        record = await a.finished_record(created["game_id"])
    assert record.result is not None and record.result.cause is not EndCause.ILLEGAL_MOVE
    assert record.result.winner is Player.X
    ours = [move for move in record.moves if move.side is Player.X]
    assert all(move.evaluation is not None for move in ours)
    assert any(move.considerations for move in ours)


def test_threatbot_is_the_fallback_for_rules_it_does_not_search() -> None:
    position = Position(win_distance=10)
    decision = play(SearchBot(pure=True), position)
    assert after(position, decision).moves_played == 1
    assert ThreatBot.name == "ThreatBot"


def test_a_game_clock_is_spent_a_twelfth_at_a_time_not_at_a_fixed_floor() -> None:
    # A frozen clock: remaining() is exactly what was given.
    now = 100.0
    bot = SearchBot(pure=True)
    ten_second_clock = Match(clock_type="incremental", clock=10.0, increment=0.1)
    game_clock = bot._seconds(Deadline(10.0, clock=lambda: now), ten_second_clock)
    move_limit = bot._seconds(Deadline(5.0, clock=lambda: now), Match(clock_type="turn", clock=5.0))
    assert game_clock == pytest.approx(10.0 / 12 + 0.08)
    assert move_limit == pytest.approx(1.35)


@pytest.mark.parametrize(
    ("limit", "seconds"),
    [(None, 5.0), (300.0, 5.0), (60.0, 5.0), (30.0, 2.5), (2.0, 0.9)],
    ids=["no_limit", "default_stall_limit", "long_stall_limit", "stall=30", "stall=2"],
)
def test_a_clockless_games_stall_limit_caps_the_search_but_does_not_stretch_it(
    limit: float | None, seconds: float
) -> None:
    # Without a clock the server sends its stall limit as move_time_limit: the bot thinks
    # as long as it does without a limit (5 s), less only when the limit is short.
    now = 100.0
    bot = SearchBot(pure=True)
    assert bot._seconds(Deadline(limit, clock=lambda: now), Match()) == pytest.approx(seconds)


def test_a_per_move_clock_is_still_a_budget_not_a_cap() -> None:
    now = 100.0
    turn = Match(clock_type="turn", clock=300.0)
    assert SearchBot(pure=True)._seconds(Deadline(300.0, clock=lambda: now), turn) == 25.0


def lattice_position(moves: int) -> Position:
    """A long game without a line: LatticeBot against itself."""
    position = Position()
    bots = {"x": LatticeBot(), "o": LatticeBot()}
    for _ in range(moves):
        side = position.to_move
        answer = bots[side].play(position.copy(), Player(side), Match(), Deadline(None))
        position.place_move(*(MoveDecision.of(answer).pieces[i].as_tuple() for i in (0, 1)))
    return position


def test_a_move_places_only_the_stones_played_since_its_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The per-move setup must not grow with the board: no census of every window to
    # find a win, no memory rebuilt stone by stone.
    censuses: list[Position] = []

    def census(position: Position, me: Side) -> WindowCensus:
        censuses.append(position)
        return WindowCensus(position, me)

    monkeypatch.setattr(search_bot, "WindowCensus", census)
    position = lattice_position(60)
    bot = SearchBot(pure=True, max_nodes=500)
    play(bot, position)
    assert censuses == []  # the win is looked for in the engine's counts
    assert bot.engine.stones_loaded == len(position)  # the first move loads the board
    position = after(position, play(bot, position))
    reply = ThreatBot().play(position.copy(), Player(position.to_move), Match(), Deadline(None))
    position = after(position, MoveDecision.of(reply))
    loaded = bot.engine.stones_loaded
    decision = play(bot, position)  # O wins: (-4, -1) .. (1, -1)
    assert after(position, decision).outcome.winner == "o"  # type: ignore[union-attr]
    assert bot.engine.stones_loaded == loaded + 4  # the 4 stones played since
    assert censuses == []


def test_a_win_is_reported_to_the_deadline_not_only_returned() -> None:
    # The framework sends the reported move when the time runs out before the bot
    # returns: a win must be in it.
    position = Position(setup=[(0, 0, "x"), (0, 5, "o"), *((q, 2, "x") for q in range(4))])
    position = Position(setup=position.stones, to_move="x")
    deadline = Deadline(None)
    SearchBot(pure=True).play(position.copy(), Player.X, Match(), deadline)
    assert deadline.best is not None
    assert after(position, deadline.best).outcome.winner == "x"  # type: ignore[union-attr]


def test_the_block_is_reported_before_the_search_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    # A search that overruns (a thread starved of the CPU, a slow start) still leaves a
    # move that blocks an open four for the framework to send, not its fallback.
    stones = [(0, 0, "x"), (0, 3, "x"), *((q, 0, "o") for q in range(1, 5))]
    position = Position(setup=stones, to_move="x")
    deadline = Deadline(0.4)
    reported: list[MoveDecision | None] = []

    def search(*args: object, **kwargs: object) -> None:
        reported.append(deadline.best)  # what would be sent if the search never returned

    bot = SearchBot(pure=True)
    monkeypatch.setattr(bot.engine, "search", search)
    decision = MoveDecision.of(bot.play(position.copy(), Player.X, Match(), deadline))
    assert reported and reported[0] is not None
    for move in (reported[0], decision):  # the search found nothing: the block is played
        assert not win_in_1(Board(after(position, move)), 1)
        assert move.evaluation is not None


def test_the_pure_kernels_stop_at_the_clock_whatever_their_node_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Late:
        """A clock read by a thread that got the CPU back too late: past every stop."""

        @staticmethod
        def monotonic_ns() -> int:
            return 1 << 62

    monkeypatch.setattr(kernels, "time", Late, raising=False)
    position = Position(setup=[(0, 0, "x"), (1, 0, "o"), (1, 1, "o")], to_move="x")
    found = Engine(pure=True).search(position, seconds=100.0, max_depth=3)
    # Stopped at its first node; nothing finished, so no move (the bot plays its safe one).
    assert found is None


def test_the_root_moves_it_reports_carry_exact_scores_not_bounds() -> None:
    # Null-window searches only bound the moves no better than the best so far: the
    # scores reported (the considerations) are full-window scores at the same depth.
    position = default_book()[30].position()
    depth = 2
    found = Engine(pure=True).search(position, 1e9, max_depth=depth, threats=False)
    assert found is not None and found.depth == depth
    others = [line for line in found.alternatives if line.move != found.move]
    assert len(others) >= 3
    for line in [Line(found.move, found.score), *others]:
        assert line.score == full_window_score(position, line.move, depth), line.move


def full_window_score(position: Position, move: tuple[Cell, Cell], depth: int) -> int:
    """A root move's score for the side to move, searched on its own with a full window
    and a fresh table (the reply ``depth - 1`` deep at ply 1, as the root search does)."""
    child = position.copy()
    child.place_move(*move)
    mem = Engine(pure=True).load(child)
    mem[L.BUDGET] = 1 << 60
    mv, ms = PURE.move_buffers()
    return -int(kernels.negamax(mem, PURE.table(), mv, ms, depth - 1, -L.INF, L.INF, 1))


@pytest.mark.parametrize(
    "pure",
    [True, pytest.param(False, marks=pytest.mark.skipif(not numba_available(), reason="no numba"))],
    ids=["python", "numba"],
)
def test_a_move_an_unfinished_iteration_found_is_reported_with_that_iterations_scores(
    pure: bool,
) -> None:
    # Book opening 0: depth 1 plays (1, 2) (1, 0), depth 2 another move. A node budget
    # that runs out half-way through the second iteration, after it found that move: the
    # move is played, so its score and the considerations must be the second
    # iteration's, the move first (they were the first's, without it).
    if not pure:
        compiled_backend()  # compiled (or loaded) before the search
    position = default_book()[0].position()
    complete: list[SearchResult] = []

    def keep(found: SearchResult) -> None:
        complete.append(replace(found, alternatives=list(found.alternatives)))

    Engine(pure=pure).search(position, 1e9, max_depth=2, threats=False, report=keep)
    first, second = complete
    assert first.move != second.move
    budget = (first.nodes + second.nodes) // 2
    found = Engine(pure=pure).search(position, 1e9, max_depth=2, max_nodes=budget, threats=False)
    assert found is not None and found.nodes < second.nodes  # the second iteration was cut
    assert found.move == second.move
    assert found.alternatives[0] == Line(found.move, found.score)
    assert found.depth == 2
    for line in found.alternatives:
        assert line in second.alternatives
        assert line.score == full_window_score(position, line.move, 2), line.move


def test_a_lost_position_blocks_the_most_without_a_census_of_the_board(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Four O's on r=0 that X's (0, 0) closes (one threat window, q 1..6), four open
    # ones on r=5 (three: q -1..4, 0..5, 1..6): no pair spoils all four windows, so X
    # loses next move. It says so, and spoils three, from the windows the engine keeps.
    def census(position: Position, me: Side) -> WindowCensus:
        raise AssertionError("a census of the board")

    monkeypatch.setattr(search_bot, "WindowCensus", census)
    monkeypatch.setattr(threat_bot, "WindowCensus", census)
    fours = [(q, r, "o") for q in range(1, 5) for r in (0, 5)]
    position = Position(setup=[(0, 0, "x"), (0, 2, "x"), (0, 3, "x"), *fours], to_move="x")
    decision = play(SearchBot(pure=True, max_nodes=5_000), position)
    assert decision.evaluation is not None and decision.evaluation.win_in == -2
    blocked = {stone.as_tuple() for stone in decision.pieces}
    windows = [{(q, 0) for q in range(1, 7)}]
    windows += [{(q, 5) for q in range(start, start + 6)} for start in (-1, 0, 1)]
    assert sum(bool(window & blocked) for window in windows) == 3

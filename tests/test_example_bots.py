"""The example bots (``bot.bots``), played through the pure engine: no sockets."""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Iterable

import pytest

from bot.bot import BaseBot, Deadline, MoveDecision
from bot.bots import CenterBot, LatticeBot, RandomBot, ThreatBot
from bot.bots.mix_bot import MixBot
from bot.bots.search_bot import SearchBot
from bot.capabilities import Capabilities
from game.hexgrid import distance, hexagon
from game.rules import Position, Side, Termination
from models import Match, Player, dump_packet, parse_body

#: A safety net: a game that reaches it is a draw, which every match test rejects.
MATCH = Match(turn_limit=200)
GAMES_PER_MATCH = 20


# ------------------------------------------------------------------------ helpers


def ask(bot: BaseBot, position: Position, match: Match = MATCH) -> MoveDecision:
    """The bot's move for the side to move, as the framework asks for it: on a copy."""
    # Bring the legal-cell set up to date before copying, so that each copy need not
    # fold in the whole board again (a RandomBot move costs twice as much without it).
    position.legal_cells()
    side = Player(position.to_move)
    return MoveDecision.of(bot.play(position.copy(), side, match, Deadline(None)))


def apply(position: Position, decision: MoveDecision) -> None:
    """Play the decision's stones one by one, checking each is legal; a winning first
    stone ends the game and the second is not placed."""
    first, second = decision.pieces
    assert first != second, f"two stones on one cell: {decision.pieces}"
    for stone in decision.pieces:
        assert position.is_legal(stone.q, stone.r), (
            f"{stone} is illegal: {position.why_illegal(stone.q, stone.r)}"
        )
        position.place(stone.q, stone.r)
        if position.is_game_over():
            return


def play_game(x_bot: BaseBot, o_bot: BaseBot, match: Match = MATCH) -> Position:
    """A whole game from the standard start; the finished position."""
    position = Position(match.view_distance, match.win_distance, turn_limit=match.turn_limit)
    while not position.is_game_over():
        bot = x_bot if position.to_move == "x" else o_bot
        apply(position, ask(bot, position, match))
    return position


def play_match(opponent_for_game: Iterable[BaseBot]) -> list[tuple[Side, int]]:
    """ThreatBot against each opponent, colours alternating (ThreatBot is X in the even
    games); asserts ThreatBot wins every game by a line. Returns (colour, moves played)."""
    games = []
    for game, opponent in enumerate(opponent_for_game):
        threat_side: Side = "x" if game % 2 == 0 else "o"
        x_bot, o_bot = (ThreatBot(), opponent) if threat_side == "x" else (opponent, ThreatBot())
        final = play_game(x_bot, o_bot)
        assert final.outcome is not None
        assert final.outcome.termination is Termination.LINE, f"game {game}: {final.outcome}"
        assert final.outcome.winner == threat_side, (
            f"game {game}: ThreatBot as {threat_side} lost to {type(opponent).__name__}: "
            f"{final.stones}"
        )
        games.append((threat_side, final.moves_played))
    return games


def o_can_win_next(position: Position) -> bool:
    """Whether O, to move, has a winning move: every pair of legal cells near O's
    stones, tried with the engine (a brute force independent of ThreatBot's counting)."""
    assert position.to_move == "o" and position.stones_left == 2
    o_stones = [(q, r) for q, r, side in position.stones if side == "o"]
    near = {cell for stone in o_stones for cell in hexagon(stone, 2)}
    cells = sorted(cell for cell in near if position.is_legal(*cell))
    for first, second in itertools.permutations(cells, 2):
        position.place(*first)
        won = position.is_game_over()
        if not won and position.is_legal(*second):
            position.place(*second)
            won = position.is_game_over()
            position.undo()
        position.undo()
        if won:
            return True
    return False


def longest_run_on_row(position: Position, side: str, r: int) -> int:
    """The longest run of ``side`` along +q on row ``r``, near the origin."""
    best = run = 0
    for q in range(-12, 13):
        run = run + 1 if position.piece_at(q, r) == side else 0
        best = max(best, run)
    return best


def random_position(stones: int) -> Position:
    """A game between two RandomBots that reached ``stones`` stones with nobody winning."""
    for seed in itertools.count():
        position = Position()
        x_bot, o_bot = RandomBot(seed=seed), RandomBot(seed=seed + 1)
        while len(position) < stones and not position.is_game_over():
            apply(position, ask(x_bot if position.to_move == "x" else o_bot, position))
        if not position.is_game_over():
            return position
    raise AssertionError("unreachable")


# -------------------------------------------------------------------- the matches


def test_threat_bot_beats_random_bot_in_every_game_of_a_20_game_match() -> None:
    games = play_match(RandomBot(seed=game) for game in range(GAMES_PER_MATCH))
    assert [side for side, _ in games] == ["x", "o"] * (GAMES_PER_MATCH // 2)


def test_threat_bot_beats_center_bot_in_every_game_of_a_20_game_match() -> None:
    games = play_match(CenterBot() for _ in range(GAMES_PER_MATCH))
    assert [side for side, _ in games] == ["x", "o"] * (GAMES_PER_MATCH // 2)


# ---------------------------------------------------------------------- RandomBot


def test_random_bot_replays_a_game_from_its_seed() -> None:
    def game(x_seed: int, o_seed: int) -> list[tuple[int, int, Side]]:
        bots = RandomBot(seed=x_seed), RandomBot(seed=o_seed)
        return play_game(*bots, Match(turn_limit=30)).stones

    assert game(1, 2) == game(1, 2)
    assert game(1, 2) != game(1, 3)


def test_random_bot_takes_its_seed_from_the_x_seed_config_key() -> None:
    configured = RandomBot(seed=99)
    configured.on_config(None, {"x-seed": 5})
    assert configured.seed == 5
    assert ask(configured, Position()) == ask(RandomBot(seed=5), Position())


def test_random_bot_rejects_a_seed_that_is_not_an_integer() -> None:
    with pytest.raises(ValueError, match="x-seed must be an integer"):
        RandomBot().on_config(None, {"x-seed": "7"})
    with pytest.raises(ValueError, match="x-seed must be an integer"):
        RandomBot().on_config(None, {"x-seed": True})


def test_random_bot_without_a_seed_draws_a_fresh_one() -> None:
    assert RandomBot().seed != RandomBot().seed
    bot = RandomBot(seed=1)
    bot.on_config(None, {"x-seed": None})
    assert bot.seed != 1


def test_random_bot_starts_its_sequence_again_at_each_setup() -> None:
    bot = RandomBot(seed=11)
    first_game = [ask(bot, Position()) for _ in range(3)]
    bot.on_setup(Position())
    assert [ask(bot, Position()) for _ in range(3)] == first_game


def test_random_bot_picks_every_legal_cell_about_equally_often() -> None:
    match = Match(view_distance=3)
    opening = Position(match.view_distance, match.win_distance)
    legal = set(opening.legal_cells())
    bot = RandomBot(seed=2024)
    draws = 2000
    picks = Counter(ask(bot, opening, match).pieces[0].as_tuple() for _ in range(draws))
    assert picks.keys() == legal
    expected = draws / len(legal)
    assert all(expected / 2 < count < expected * 2 for count in picks.values()), picks


def test_random_bot_draws_its_second_stone_after_placing_the_first() -> None:
    # With view_distance 1 only the origin's neighbours are legal at first; cells two
    # steps out come into view through the first stone, and only the second can use them.
    match = Match(view_distance=1)
    opening = Position(match.view_distance, match.win_distance)
    bot = RandomBot(seed=3)
    moves = [ask(bot, opening, match) for _ in range(300)]
    assert all(distance(move.pieces[0].as_tuple(), (0, 0)) == 1 for move in moves)
    assert any(distance(move.pieces[1].as_tuple(), (0, 0)) == 2 for move in moves)


# ---------------------------------------------------------------------- CenterBot


def test_center_bot_plays_the_two_legal_cells_nearest_the_origin() -> None:
    position = random_position(40)
    move = ask(CenterBot(), position)
    first, second = (stone.as_tuple() for stone in move.pieces)
    nearest = min(distance(cell, (0, 0)) for cell in position.legal_cells())
    assert distance(first, (0, 0)) == nearest
    position.place(*first)
    assert distance(second, (0, 0)) == min(distance(c, (0, 0)) for c in position.legal_cells())


def test_center_bot_breaks_ties_by_q_then_r() -> None:
    # Ring 1 in (q, r) order: (-1, 0), (-1, 1), (0, -1), ...
    assert [stone.as_tuple() for stone in ask(CenterBot(), Position()).pieces] == [
        (-1, 0),
        (-1, 1),
    ]


def test_center_bot_is_written_against_the_prototype_api_and_plays_a_full_game() -> None:
    assert "choose_move" in vars(CenterBot) and "play" not in vars(CenterBot)
    final = play_game(CenterBot(), RandomBot(seed=8))
    assert final.outcome is not None and len(final) > 3


def test_center_bot_starts_an_empty_board_at_the_origin() -> None:
    empty = Position(setup=[], to_move="x")
    assert [stone.as_tuple() for stone in ask(CenterBot(), empty).pieces] == [(0, 0), (-1, 0)]


# ---------------------------------------------------------------------- ThreatBot


def test_threat_bot_completes_a_line_with_both_stones() -> None:
    # X has four in a row with room; O threatens too, but winning comes first.
    position = Position(
        setup=[
            *((q, 0, "x") for q in range(4)),
            *((q, 3, "o") for q in range(4)),
        ],
        to_move="x",
    )
    decision = ask(ThreatBot(), position)
    apply(position, decision)
    assert position.outcome is not None and position.outcome.winner == "x"
    assert decision.evaluation is not None and decision.evaluation.win_in == 1


def test_threat_bot_wins_with_one_stone_and_plays_it_second() -> None:
    # Five of O's with a gap, both ends taken by X: only (3, 0) wins. The winning stone
    # comes second, so the answer is a valid two-stone move for place_move.
    position = Position(
        setup=[(0, 0, "x"), (7, 0, "x"), *((q, 0, "o") for q in (1, 2, 4, 5, 6))],
        to_move="o",
    )
    decision = ask(ThreatBot(), position)
    first, second = (stone.as_tuple() for stone in decision.pieces)
    assert second == (3, 0)
    position.place_move(first, second)
    assert position.outcome is not None and position.outcome.winner == "o"
    assert decision.evaluation is not None and decision.evaluation.win_in == -1


@pytest.mark.parametrize("bot", [ThreatBot, SearchBot])
def test_at_win_distance_2_a_side_without_stones_sees_its_win(bot: type[BaseBot]) -> None:
    # Every window without a stone is two stones from a win: any two neighbours win,
    # though no window holds a stone of O's yet (SearchBot defers to ThreatBot here).
    position = Position(win_distance=2, setup=[(0, 0, "x")], to_move="o")
    decision = ask(bot(), position)
    position.place_move(*(stone.as_tuple() for stone in decision.pieces))
    assert position.outcome is not None and position.outcome.winner == "o"
    assert decision.evaluation is not None and decision.evaluation.win_in == -1


def test_threat_bot_blocks_an_open_four() -> None:
    stones = [(0, 0, "x"), *((q, 3, "o") for q in range(1, 5))]
    assert o_can_win_next(Position(setup=stones, to_move="o"))
    position = Position(setup=stones, to_move="x")
    apply(position, ask(ThreatBot(), position))
    assert not o_can_win_next(position)


def test_threat_bot_blocks_a_threat_rather_than_extending_its_own_line() -> None:
    # X's two open threes meet at (3, 0), its best cell by far; but O's open four takes
    # both stones to block, and would win first.
    stones = [
        *((q, 0, "x") for q in range(3)),
        *((3, r, "x") for r in range(-3, 0)),
        *((q, 4, "o") for q in range(1, 5)),
    ]
    assert o_can_win_next(Position(setup=stones, to_move="o"))
    position = Position(setup=stones, to_move="x")
    decision = ask(ThreatBot(), position)
    assert all(stone.r == 4 for stone in decision.pieces), decision.pieces
    apply(position, decision)
    assert not o_can_win_next(position)


def test_threat_bot_sees_a_double_threat_it_cannot_block() -> None:
    # Two open fours of O's on different lines: four cells to block, two stones to do it.
    position = Position(
        setup=[
            (0, 0, "x"),
            *((q, 3, "o") for q in range(1, 5)),
            *((q, -3, "o") for q in range(1, 5)),
        ],
        to_move="x",
    )
    decision = ask(ThreatBot(), position)
    assert decision.evaluation is not None and decision.evaluation.win_in == -2
    apply(position, decision)  # still a legal move


def test_threat_bot_extends_its_longest_open_line() -> None:
    position = Position(
        setup=[*((q, 0, "x") for q in range(3)), (0, 4, "o"), (-4, 3, "o"), (5, -4, "o")],
        to_move="x",
    )
    decision = ask(ThreatBot(), position)
    stones = [stone.as_tuple() for stone in decision.pieces]
    assert all(r == 0 for _, r in stones), stones
    apply(position, decision)
    assert longest_run_on_row(position, "x", 0) == 5


def test_threat_bot_reports_a_heuristic_in_range_when_nothing_is_forced() -> None:
    decision = ask(ThreatBot(), Position())
    assert decision.evaluation is not None and decision.evaluation.win_in is None
    assert decision.evaluation.heuristic is not None
    assert -1.0 <= decision.evaluation.heuristic <= 1.0


def test_threat_bot_evaluates_positions_without_moving() -> None:
    bot = ThreatBot()
    four = Position(setup=[(0, 0, "x"), *((q, 3, "o") for q in range(1, 5))], to_move="o")
    assert bot.evaluate_position(four, Player.O, MATCH, Deadline(None)).win_in == -1
    opening = bot.evaluate_position(Position(), Player.O, MATCH, Deadline(None))
    assert opening.heuristic is not None and -1.0 <= opening.heuristic <= 1.0
    # Three open fours of X's: O cannot block them all, X wins on the second move.
    fours = Position(setup=[(q, r, "x") for r in (-4, 0, 4) for q in range(4)], to_move="o")
    assert bot.evaluate_position(fours, Player.O, MATCH, Deadline(None)).win_in == 2


def test_threat_bot_answers_legally_when_its_time_is_already_up() -> None:
    position = Position(setup=[(0, 0, "x"), *((q, 3, "o") for q in range(1, 5))], to_move="x")
    expired = Deadline(0)
    answer = MoveDecision.of(ThreatBot().play(position.copy(), Player.X, MATCH, expired))
    apply(position, answer)


def test_threat_bot_moves_fast_in_a_500_stone_position() -> None:
    position = random_position(500)
    bot = ThreatBot()
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        apply(position.copy(), ask(bot, position))
        timings.append(time.perf_counter() - start)
    # About 15 ms on a developer machine; the bound leaves room for a busy CI runner.
    assert min(timings) < 0.1, timings


# ------------------------------------------------------------------- capabilities


@pytest.mark.parametrize(
    ("bot", "tag"),
    [(RandomBot, "random"), (CenterBot, "baseline"), (ThreatBot, "threat-search")],
)
def test_each_bot_declares_its_name_tags_and_time_limits(bot: type[BaseBot], tag: str) -> None:
    document = parse_body(Capabilities, dump_packet(bot.capabilities()))
    assert document.meta is not None and document.meta.name == bot.__name__
    assert document.meta.tags is not None and tag in document.meta.tags
    assert document.bws_v1_alpha is not None and document.bws_v1_alpha.move_time_limit
    assert document.stateless_v1_alpha is not None
    assert document.stateless_v1_alpha.move_time_limit


def test_every_example_bot_takes_config_and_only_threat_bot_evaluates() -> None:
    bots = (RandomBot, CenterBot, ThreatBot, LatticeBot)
    features = {bot: bot.capabilities().bws_v1_alpha for bot in bots}
    # config, so a game server can send the game's settings (x-match); only RandomBot
    # also takes a new seed mid-game.
    assert all(caps and caps.config for caps in features.values())
    dynamic = {
        bot for bot, caps in features.items() if caps and caps.config and caps.config.dynamic
    }
    assert dynamic == {RandomBot}
    assert {bot for bot, caps in features.items() if caps and caps.evaluation} == {ThreatBot}


# ---------------------------------------------------------------------- LatticeBot


@pytest.mark.parametrize(("view", "win"), [(8, 6), (2, 2), (3, 2), (50, 2)])
def test_lattice_bots_never_make_a_line_so_games_reach_the_turn_limit(view: int, win: int) -> None:
    match = Match(view_distance=view, win_distance=win, turn_limit=150)
    position = play_game(LatticeBot(), LatticeBot(), match)
    assert position.outcome is not None
    assert position.outcome.termination is Termination.TURN_LIMIT
    assert position.moves_played == 150


def test_lattice_bot_keeps_to_its_own_cells() -> None:
    position = play_game(LatticeBot(), LatticeBot(), Match(turn_limit=40))
    for q, r, side in position.stones:
        parity = 0 if side == "x" else 1
        assert (q % 2, r % 2) == (parity, parity), (q, r, side)


def test_lattice_bot_starts_over_when_given_a_new_position() -> None:
    bot = LatticeBot()
    play_game(bot, LatticeBot(), Match(turn_limit=20))
    fresh = ask(LatticeBot(), Position(), Match())
    assert ask(bot, Position(), Match()).pieces == fresh.pieces


def test_lattice_bot_with_a_view_distance_of_one_still_plays_legally() -> None:
    position = play_game(LatticeBot(), LatticeBot(), Match(view_distance=1, turn_limit=30))
    assert position.outcome is not None


# ------------------------------------------------- the position lent again (keeps_positions)


def _bots_that_keep_no_position() -> list[BaseBot]:
    return [
        RandomBot(seed=5),
        CenterBot(),
        LatticeBot(),
        ThreatBot(),
        MixBot(seed=5),
        SearchBot(pure=True, max_nodes=1_500),
    ]


@pytest.mark.parametrize("bot", _bots_that_keep_no_position(), ids=lambda bot: type(bot).__name__)
def test_a_bot_that_keeps_no_position_leaves_the_one_it_is_lent_as_it_got_it(
    bot: BaseBot,
) -> None:
    """What the bot server counts on to lend a bot with ``keeps_positions`` False the same
    position with the next request (``bot.lent_positions``): after each call it is as
    the bot got it, tried stones taken back. The bot is handed the game's own position
    every move here, as the lender hands it over."""
    assert not type(bot).keeps_positions
    match = Match(turn_limit=24)
    position = Position(match.view_distance, match.win_distance, turn_limit=match.turn_limit)
    while not position.is_game_over():
        mark, stones = position.change_mark(), position.stones
        side = Player(position.to_move)
        decision = MoveDecision.of(bot.play(position, side, match, Deadline(None)))
        assert position.change_mark() == mark, f"{type(bot).__name__} changed the position"
        assert position.stones == stones
        apply(position, decision)
    assert position.moves_played > 0

"""Standings folded from results in schedule order: pairs, SPRT, failures, ratings."""

from __future__ import annotations

import json
import math
import random

import pytest

from game.elo import Pentanomial
from game.openapi import _openapi
from game.series_score import SeriesRule
from game.sprt import Sprt
from game.tournament_report import pair_lines
from game.tournament_schedule import Schedule
from game.tournament_standings import GameOutcome, Standings, outcome_of
from models import EndCause, GameResult, Player, ResultReason
from tests.json_schema import schema_problems
from wire.tournaments import PairStanding


def _results(schedule: Schedule, seed: int) -> list[GameOutcome]:
    rng = random.Random(seed)
    outcomes = []
    for index in range(len(schedule)):
        game = schedule.game(index)
        roll = rng.random()
        winner = game.x if roll < 0.45 else game.o if roll < 0.8 else None
        outcomes.append(GameOutcome(winner))
    return outcomes


def test_the_order_results_arrive_in_does_not_change_the_standings() -> None:
    schedule = Schedule(["a", "b", "c"], "round_robin", rounds=20, openings=4)
    outcomes = _results(schedule, seed=1)
    in_order = Standings(schedule)
    for index, outcome in enumerate(outcomes):
        in_order.add(index, outcome)
    shuffled = Standings(schedule)
    indices = list(range(len(outcomes)))
    random.Random(2).shuffle(indices)
    for index in indices:
        shuffled.add(index, outcomes[index])
    assert in_order.counted_games == shuffled.counted_games == len(schedule)
    assert in_order.bot_standings() == shuffled.bot_standings()
    assert in_order.pair_standings() == shuffled.pair_standings()


def test_a_pair_counts_only_when_it_and_every_pair_before_it_are_complete() -> None:
    schedule = Schedule(["a", "b"], "round_robin", rounds=3, openings=1)
    standings = Standings(schedule)
    standings.add(2, GameOutcome("a"))
    standings.add(3, GameOutcome("a"))
    standings.add(0, GameOutcome("b"))
    assert standings.counted_games == 0
    standings.add(1, GameOutcome(None))
    assert standings.counted_games == 4
    assert standings.pair("a", "b").pairs == Pentanomial(ll=0, ld=1, wl_dd=0, wd=0, ww=1)


def test_a_result_given_twice_is_counted_once() -> None:
    standings = Standings(Schedule(["a", "b"], "round_robin", rounds=1, openings=1))
    for _ in range(3):
        standings.add(0, GameOutcome("a"))
        standings.add(1, GameOutcome("a"))
    assert standings.bot("a").wins == 2 and standings.counted_games == 2


def test_pair_statistics_are_from_the_first_bot_side_with_pentanomial_counts() -> None:
    standings = Standings(Schedule(["a", "b"], "round_robin", rounds=4, openings=1))
    winners = ["a", "b", "a", None, None, None, "a", "a"]
    for index, winner in enumerate(winners):
        standings.add(index, GameOutcome(winner))
    [line] = standings.pair_standings()
    assert (line.bot, line.wins, line.draws, line.losses) == ("a", 4, 3, 1)
    assert line.pentanomial == (0, 0, 2, 1, 1)  # pair scores 1, 1.5, 1 and 2
    assert line.score == pytest.approx(5.5 / 8)
    assert line.draw_ratio == pytest.approx(3 / 8)
    assert line.elo is not None and line.elo > 0 and line.los is not None and line.los > 0.5


def test_the_sprt_stops_counting_once_it_decides() -> None:
    schedule = Schedule(["strong", "weak"], "round_robin", rounds=1000, openings=1)
    standings = Standings(schedule, Sprt(elo0=0, elo1=10))
    index = 0
    while not standings.complete:
        standings.add(index, GameOutcome("strong"))
        index += 1
    result = standings.sprt_result
    assert result is not None and result.decision.value == "H1"
    assert result.llr >= result.upper
    counted = standings.counted_games
    assert counted < len(schedule)
    standings.add(index, GameOutcome("weak"))
    standings.add(index + 1, GameOutcome("weak"))
    assert standings.counted_games == counted  # after the decision nothing counts


def test_failures_are_counted_against_the_bot_that_forfeited() -> None:
    forfeit = GameResult(winner=Player.X, reason=ResultReason.FORFEIT, cause=EndCause.TIMEOUT)
    outcome = outcome_of(forfeit, "fast", "slow")
    assert outcome == GameOutcome("fast", {"slow": "time"})
    standings = Standings(Schedule(["fast", "slow"], "round_robin", rounds=1, openings=1))
    standings.add(0, outcome)
    standings.add(1, GameOutcome("fast"))
    line = next(line for line in standings.bot_standings() if line.name == "slow")
    assert line.failures.time == 1 and line.losses == 2


def test_a_game_neither_bot_came_to_counts_their_failures_and_no_points() -> None:
    nobody = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.NO_SHOW)
    outcome = outcome_of(nobody, "a", "b")
    standings = Standings(Schedule(["a", "b"], "round_robin", rounds=1, openings=1))
    standings.add(0, outcome)
    standings.add(1, GameOutcome("a"))
    lines = {line.name: line for line in standings.bot_standings()}
    assert (lines["a"].wins, lines["a"].draws, lines["a"].losses, lines["a"].points) == (
        1,
        0,
        0,
        1.0,
    )
    assert lines["b"].draws == 0 and lines["b"].points == 0.0
    assert lines["a"].failures.no_show == 1 and lines["b"].failures.no_show == 1
    pair = standings.pair("a", "b")
    assert (pair.games.wins, pair.games.draws, pair.games.losses) == (1, 0, 0)
    assert sum(pair.pairs.counts) == 0  # no whole pair was played


def test_a_series_game_neither_bot_came_to_leaves_the_score_alone() -> None:
    nobody = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.NO_SHOW)
    standings = Standings(
        Schedule(["a", "b"], "round_robin", rounds=2, openings=0), series=SeriesRule(best_of=3)
    )
    standings.add(0, outcome_of(nobody, "a", "b"))
    score = standings.series_score
    assert score is not None and score.text == "a 0-0 b" and standings.counted_games == 1


@pytest.mark.parametrize(
    ("cause", "failure"),
    [
        (EndCause.ILLEGAL_MOVE, "illegal"),
        (EndCause.PROTOCOL_ERROR, "protocol"),
        (EndCause.DISCONNECT, "disconnect"),
        (EndCause.NO_SHOW, "no_show"),
        (EndCause.STALL, "time"),
    ],
)
def test_each_forfeit_cause_has_its_failure(cause: EndCause, failure: str) -> None:
    result = GameResult(winner=Player.O, reason=ResultReason.FORFEIT, cause=cause)
    assert outcome_of(result, "a", "b").failures == {"a": failure}


def test_a_local_program_that_died_crashed_rather_than_disconnected() -> None:
    result = GameResult(winner=Player.O, reason=ResultReason.FORFEIT, cause=EndCause.DISCONNECT)
    assert outcome_of(result, "a", "b", crashed=frozenset({"a"})).failures == {"a": "crash"}


def test_a_line_or_a_turn_limit_is_no_failure() -> None:
    line = GameResult(winner=Player.X, reason=ResultReason.WIN)
    limit = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.TURN_LIMIT)
    assert outcome_of(line, "a", "b") == GameOutcome("a")
    assert outcome_of(limit, "a", "b") == GameOutcome(None)


def test_round_robin_standings_rank_by_rating_with_intervals() -> None:
    schedule = Schedule(["weak", "middle", "strong"], "round_robin", rounds=30, openings=1)
    strength = {"weak": 0, "middle": 1, "strong": 2}
    rng = random.Random(5)
    standings = Standings(schedule)
    for index in range(len(schedule)):
        game = schedule.game(index)
        better = game.x if strength[game.x] > strength[game.o] else game.o
        worse = game.o if better == game.x else game.x
        standings.add(index, GameOutcome(better if rng.random() < 0.8 else worse))
    lines = standings.bot_standings()
    assert [line.name for line in lines] == ["strong", "middle", "weak"]
    assert all(line.elo is not None and line.elo_error is not None for line in lines)
    assert sum(line.elo or 0 for line in lines) == pytest.approx(0, abs=1e-6)
    assert "strong" in standings.crosstable().render()


def _one_sided(rounds: int, winner: str) -> Standings:
    standings = Standings(Schedule(["a", "b"], "round_robin", rounds=rounds, openings=1))
    for index in range(2 * rounds):
        standings.add(index, GameOutcome(winner))
    return standings


def test_a_match_lost_every_time_has_an_elo_of_minus_infinity() -> None:
    (pair,) = _one_sided(rounds=5, winner="b").pair_standings()
    assert pair.bot == "a" and pair.losses == 10
    assert pair.elo == -math.inf and pair.nelo == -math.inf
    assert pair.elo_error == math.inf


def test_the_report_prints_a_total_loss_as_minus_inf_as_fastchess_does() -> None:
    (pair,) = _one_sided(rounds=5, winner="b").pair_standings()
    assert pair_lines(pair)[1] == "Elo: -inf +/- inf, nElo: -inf +/- inf"
    (won,) = _one_sided(rounds=5, winner="a").pair_standings()
    assert pair_lines(won)[1] == "Elo: inf +/- inf, nElo: inf +/- inf"


def test_the_report_prints_figures_without_a_value_as_n_a_not_inf() -> None:
    standings = Standings(Schedule(["a", "b"], "round_robin", rounds=2, openings=1))
    (pair,) = standings.pair_standings()
    lines = pair_lines(pair)
    assert lines[1] == "Elo: n/a +/- n/a, nElo: n/a +/- n/a"
    assert lines[2] == "LOS: n/a, DrawRatio: n/a, PairsRatio: n/a"


def test_json_keeps_the_sign_of_an_infinite_elo_and_reads_it_back() -> None:
    (lost,) = _one_sided(rounds=3, winner="b").pair_standings()
    (empty,) = Standings(Schedule(["a", "b"], "round_robin", rounds=1, openings=1)).pair_standings()
    body = json.loads(lost.model_dump_json())
    assert body["elo"] == "-Infinity" and body["nelo"] == "-Infinity"
    assert body["elo_error"] == "Infinity"
    assert PairStanding.model_validate_json(lost.model_dump_json()).elo == -math.inf
    assert json.loads(empty.model_dump_json())["elo"] is None


def test_an_infinite_elo_of_either_sign_fits_the_openapi_schema_of_a_pair() -> None:
    document = _openapi(hosted=False)
    schema = document["components"]["schemas"]["PairStanding"]
    for winner in ("a", "b"):
        (pair,) = _one_sided(rounds=3, winner=winner).pair_standings()
        body = json.loads(pair.model_dump_json())
        assert body["nelo"] in ("Infinity", "-Infinity")
        assert schema_problems(body, schema, document) == []

"""A series' score and stop rule (pure), and a series' standings, counted game by game."""

from __future__ import annotations

import random
from itertools import product

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.series_score import SeriesRule, SeriesRuleError, SeriesScore
from game.tournament_schedule import Schedule
from game.tournament_standings import GameOutcome, Standings

RESULTS = ("a", "b", None)  # a wins, b wins, a draw


def _final(rule: SeriesRule, games: list[str | None]) -> SeriesScore:
    score = SeriesScore(rule, "a", "b")
    for winner in games:
        score.add(winner)
    return score


def _could_still_change(score: SeriesScore) -> bool:
    """Whether some way of playing on gives another winner (or a draw) than now."""
    now = (score.points_a > score.points_b) - (score.points_a < score.points_b)
    left = score.rule.max_games - score.games
    for rest in product(RESULTS, repeat=left):
        later = _final(score.rule, [])
        later.points_a, later.points_b, later.games = score.points_a, score.points_b, score.games
        for winner in rest:
            later.add(winner)
        if (later.points_a > later.points_b) - (later.points_a < later.points_b) != now:
            return True
    return False


@given(
    best_of=st.integers(min_value=1, max_value=7),
    games=st.lists(st.sampled_from(RESULTS), max_size=7),
)
def test_best_of_stops_exactly_when_playing_on_cannot_change_the_outcome(
    best_of: int, games: list[str | None]
) -> None:
    score = SeriesScore(SeriesRule(best_of=best_of), "a", "b")
    for winner in games:
        if score.decided:
            break
        assert _could_still_change(score)  # not decided: still open
        score.add(winner)
    if score.decided and score.games < best_of:
        assert not _could_still_change(score)  # stopped early: nothing could change it
    assert score.games <= best_of


@given(
    first_to=st.integers(min_value=1, max_value=6),
    games=st.lists(st.sampled_from(RESULTS), min_size=12, max_size=12),
)
def test_first_to_ends_when_a_bot_has_k_points_within_2k_games(
    first_to: int, games: list[str | None]
) -> None:
    score = SeriesScore(SeriesRule(first_to=first_to), "a", "b")
    for winner in games:
        score.add(winner)  # ignored once decided
    assert score.decided and score.games <= 2 * first_to
    assert max(score.points_a, score.points_b) >= first_to
    if score.winner is not None:
        loser = score.points_b if score.winner == "a" else score.points_a
        assert loser < first_to


def test_a_series_can_be_drawn() -> None:
    even = _final(SeriesRule(best_of=2), ["a", "b"])
    assert even.decided and even.winner is None
    assert even.verdict() == "the series is drawn, a 1-1 b (best of 2, 2 games)"
    both = _final(SeriesRule(first_to=2), [None, "a", "b", None])
    assert both.decided and both.winner is None and both.text == "a 2-2 b"


def test_a_result_from_neither_bot_is_refused() -> None:
    with pytest.raises(ValueError, match="'c' does not play"):
        SeriesScore(SeriesRule(best_of=3), "a", "b").add("c")


@pytest.mark.parametrize("rule", [{}, {"best_of": 3, "first_to": 2}, {"best_of": 0}])
def test_a_rule_is_exactly_one_of_best_of_and_first_to(rule: dict[str, int]) -> None:
    with pytest.raises(SeriesRuleError):
        SeriesRule(**rule)


def _series_standings(best_of: int) -> Standings:
    rounds = (best_of + 1) // 2
    return Standings(
        Schedule(["a", "b"], "round_robin", rounds=rounds, openings=0),
        series=SeriesRule(best_of=best_of),
    )


def test_a_series_counts_game_by_game_and_stops_mid_pair() -> None:
    standings = _series_standings(3)
    # Game 2 arrives first: nothing counts until game 1 is in.
    standings.add(1, GameOutcome(winner="a"))  # game 2: b is X, a wins
    assert standings.counted_games == 0
    standings.add(0, GameOutcome(winner="b", failures={"a": "time"}))
    assert standings.counted_games == 2 and not standings.complete
    standings.add(2, GameOutcome(winner="a"))
    assert standings.complete and standings.counted_games == 3
    score = standings.series_view()
    assert score is not None and score.text == "a 2-1 b" and score.winner == "a"
    standings.add(3, GameOutcome(winner="b"))  # after the decision: never counted
    assert standings.counted_games == 3
    lines = {line.name: line for line in standings.bot_standings()}
    assert (lines["a"].wins, lines["a"].losses, lines["a"].games) == (2, 1, 3)
    assert lines["a"].failures.time == 1
    [pair] = standings.pair_standings()
    # Three games, one whole pair: the pentanomial counts the pair only.
    assert pair.games == 3 and sum(pair.pentanomial) == 1


def test_a_series_counted_in_any_order_ends_as_in_order() -> None:
    rng = random.Random(5)
    outcomes = [GameOutcome(winner=rng.choice(RESULTS)) for _ in range(9)]
    in_order = _series_standings(9)
    for index, outcome in enumerate(outcomes):
        in_order.add(index, outcome)
    shuffled = _series_standings(9)
    indices = list(range(9))
    rng.shuffle(indices)
    for index in indices:
        shuffled.add(index, outcomes[index])
    assert in_order.series_view() == shuffled.series_view()
    assert in_order.bot_standings() == shuffled.bot_standings()


def test_a_series_needs_two_bots_and_no_sprt() -> None:
    with pytest.raises(ValueError, match="two bots"):
        Standings(
            Schedule(["a", "b", "c"], "round_robin", rounds=1, openings=0),
            series=SeriesRule(best_of=3),
        )

"""The arena's rating model (``game.ratings``) and what a game is worth (``outcome_of``)."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.rating_book import outcome_of
from game.ratings import DEFAULT_MU, DEFAULT_SIGMA, Rating, is_provisional, rate
from models import Coord, EndCause, GameRecord, GameResult, Player, RecordedMove, ResultReason

ratings = st.builds(
    Rating, st.floats(min_value=0, max_value=3000), st.floats(min_value=30, max_value=500)
)


@given(ratings, ratings)
def test_a_win_raises_the_winner_and_lowers_the_loser(x: Rating, o: Rating) -> None:
    new_x, new_o = rate(x, o, 1.0)
    assert new_x.mu > x.mu and new_o.mu < o.mu


@given(ratings, ratings, st.sampled_from([0.0, 0.5, 1.0]))
def test_the_model_is_symmetric_in_the_sides(x: Rating, o: Rating, score: float) -> None:
    new_x, new_o = rate(x, o, score)
    swapped_o, swapped_x = rate(o, x, 1.0 - score)
    assert new_x.mu == pytest.approx(swapped_x.mu) and new_o.mu == pytest.approx(swapped_o.mu)
    assert new_x.sigma == pytest.approx(swapped_x.sigma)


def test_an_upset_moves_ratings_more_than_the_expected_result() -> None:
    strong, weak = Rating(1900.0, 100.0), Rating(1300.0, 100.0)
    expected, _ = rate(strong, weak, 1.0)
    upset, _ = rate(strong, weak, 0.0)
    assert strong.mu - upset.mu > expected.mu - strong.mu > 0


def test_a_draw_between_equals_changes_no_estimate_but_the_certainty() -> None:
    x, o = rate(Rating(), Rating(), 0.5)
    assert x.mu == pytest.approx(DEFAULT_MU) and o.mu == pytest.approx(DEFAULT_MU)
    assert x.sigma < DEFAULT_SIGMA


def test_a_new_player_settles_after_some_games_against_settled_ones() -> None:
    player, opponent = Rating(), Rating(1500.0, 100.0)
    games = 0
    while is_provisional(player, games):
        player, _ = rate(player, opponent, 1.0 if games % 2 else 0.0)
        games += 1
        assert games < 30
    assert games >= 10 and player.sigma <= 300


def test_scores_other_than_win_draw_loss_are_refused() -> None:
    with pytest.raises(ValueError, match="score_x"):
        rate(Rating(), Rating(), 0.7)


def stones(side: Player, thinking_ms: int | None) -> RecordedMove:
    return RecordedMove(
        side=side, pieces=[Coord(q=1, r=0), Coord(q=2, r=0)], thinking_ms=thinking_ms
    )


def test_what_a_game_is_worth() -> None:
    moves = [stones(Player.O, None), stones(Player.X, 500), stones(Player.O, 100)]
    win = GameRecord(moves=moves, result=GameResult(winner=Player.O, reason=ResultReason.WIN))
    outcome = outcome_of(win)
    assert outcome is not None
    assert outcome.score_x == 0.0 and outcome.failure == {}
    assert outcome.think_ms == {Player.X: 500, Player.O: 100}
    assert outcome.think_moves == {Player.X: 1, Player.O: 1}

    forfeit = GameResult(winner=Player.O, reason=ResultReason.FORFEIT, cause=EndCause.NO_SHOW)
    lost = outcome_of(GameRecord(result=forfeit))
    assert lost is not None and lost.score_x == 0.0 and lost.failure == {Player.X: "no_show"}

    resign = GameResult(winner=Player.X, reason=ResultReason.FORFEIT, cause=EndCause.RESIGN)
    resigned = outcome_of(GameRecord(result=resign))
    assert resigned is not None and resigned.score_x == 1.0 and resigned.failure == {}

    draw = outcome_of(
        GameRecord(
            result=GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.TURN_LIMIT)
        )
    )
    assert draw is not None and draw.score_x == 0.5

    aborted = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.ABORTED)
    assert outcome_of(GameRecord(result=aborted)) is None

    nobody_came = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.NO_SHOW)
    assert outcome_of(GameRecord(result=nobody_came)) is None  # void, not a draw


def test_readme_example_runs_as_shown() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Ratings and the leaderboard", 1)[1].split("\n## ", 1)[0]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    test = doctest.DocTestParser().get_doctest(example, {}, "README", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False) == (0, len(test.examples))

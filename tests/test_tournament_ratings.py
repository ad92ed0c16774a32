"""game.tournament_ratings: Bradley-Terry ratings against closed forms, Hunter's MM algorithm
and a synthetic round robin of known strengths.

The closed forms: two bots with ``n`` games and ``p`` points for the first are, at the
maximum of the likelihood, ``elo_from_score(p / n)`` apart (``(p + k/2) / (n + k)`` with
``k`` virtual draws), and the variance of that difference is ``1 / (n s (1 - s))`` in
natural units (the inverse Fisher information of a binomial proportion on the logit
scale), each rating carrying half of it when the mean is anchored at 0.
"""

from __future__ import annotations

import doctest
import itertools
import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from game.tournament_ratings import (
    Crosstable,
    DisconnectedError,
    GameScore,
    PairRecord,
    PriorError,
    RatingsError,
    SelfPairingError,
    UnboundedRatingError,
    UnknownBotError,
    rate,
)
from game.tournament_stats import Z95, GameScoreError, NoGamesError, elo_from_score

ELO_PER_NAT = 400 / math.log(10)


def games_with(
    bot: str, opponent: str, wins: int, draws: int = 0, losses: int = 0
) -> list[tuple[str, str, float]]:
    return (
        [(bot, opponent, 1.0)] * wins
        + [(bot, opponent, 0.5)] * draws
        + [(bot, opponent, 0.0)] * losses
    )


def expected_score(elo_difference: float) -> float:
    return 1 / (1 + 10 ** (-elo_difference / 400))


# ------------------------------------------------------------------------ two bots


@pytest.mark.parametrize(
    ("wins", "draws", "losses"), [(3, 0, 1), (6, 3, 1), (1, 8, 1), (2, 5, 13), (40, 20, 40)]
)
def test_without_a_prior_two_bots_are_the_elo_of_the_score_apart(
    wins: int, draws: int, losses: int
) -> None:
    n = wins + draws + losses
    s = (wins + draws / 2) / n
    ratings = rate(games_with("a", "b", wins, draws, losses), prior=0)
    assert ratings["a"].elo - ratings["b"].elo == pytest.approx(elo_from_score(s), abs=1e-6)
    assert ratings["a"].elo + ratings["b"].elo == pytest.approx(0, abs=1e-9)  # mean 0


@pytest.mark.parametrize("prior", [0.5, 1.0, 2.0, 10.0])
def test_the_prior_adds_its_virtual_draws_to_the_score_of_two_bots(prior: float) -> None:
    wins, draws, losses = 6, 3, 1
    n, points = 10, 7.5
    ratings = rate(games_with("a", "b", wins, draws, losses), prior=prior)
    difference = ratings["a"].elo - ratings["b"].elo
    assert difference == pytest.approx(elo_from_score((points + prior / 2) / (n + prior)))
    assert 0 < difference < elo_from_score(points / n)  # pulled toward 0, never past it


def test_the_prior_matters_less_the_more_games_there_are() -> None:
    gaps = []
    for scale in (1, 10, 100):
        games = games_with("a", "b", 6 * scale, 3 * scale, 1 * scale)
        with_prior = rate(games)["a"].elo - rate(games)["b"].elo
        without = rate(games, prior=0)["a"].elo - rate(games, prior=0)["b"].elo
        gaps.append(without - with_prior)
    assert gaps[0] > gaps[1] > gaps[2] > 0
    assert gaps[2] < 1.0  # Elo


@pytest.mark.parametrize(("wins", "draws", "losses"), [(3, 0, 1), (6, 3, 1), (2, 5, 13)])
def test_two_bots_intervals_are_the_inverse_fisher_information(
    wins: int, draws: int, losses: int
) -> None:
    n = wins + draws + losses
    s = (wins + draws / 2) / n
    sd_difference = ELO_PER_NAT / math.sqrt(n * s * (1 - s))
    ratings = rate(games_with("a", "b", wins, draws, losses), prior=0)
    assert ratings["a"].error == pytest.approx(Z95 * sd_difference / 2)
    assert ratings["b"].error == pytest.approx(Z95 * sd_difference / 2)
    difference = ratings.difference("a", "b")
    assert difference.error == pytest.approx(Z95 * sd_difference)
    assert difference.los == pytest.approx(
        0.5 * (1 + math.erf(difference.elo / sd_difference / math.sqrt(2)))
    )


def test_a_bot_that_won_every_game_gets_a_finite_rating_with_the_prior() -> None:
    ratings = rate(games_with("a", "b", 10))
    assert math.isfinite(ratings["a"].elo) and math.isfinite(ratings["a"].error)
    assert ratings["a"].elo - ratings["b"].elo == pytest.approx(elo_from_score(10.5 / 11))


def test_a_bot_that_won_every_game_has_no_rating_without_a_prior() -> None:
    games = games_with("a", "b", 3, 1, 2) + games_with("c", "a", 4) + games_with("c", "b", 2)
    with pytest.raises(UnboundedRatingError, match="'c'"):
        rate(games, prior=0)
    assert math.isfinite(rate(games)["c"].elo)


def test_a_group_that_lost_every_game_against_the_rest_has_no_rating_without_a_prior() -> None:
    games = games_with("a", "b", 3, 1, 2) + games_with("c", "d", 1, 1, 1)
    games += games_with("a", "c", 2) + games_with("b", "d", 0, 0, 0) + games_with("b", "c", 1)
    with pytest.raises(UnboundedRatingError):
        rate(games, prior=0)


# ------------------------------------------------------------------------ many bots


def synthetic_round_robin(
    truth: dict[str, float], games_per_pair: int, seed: int
) -> list[tuple[str, str, float]]:
    """Games drawn from the model: expected score from the Elo difference, with draws."""
    rng = random.Random(seed)
    games = []
    for a, b in itertools.combinations(truth, 2):
        p = expected_score(truth[a] - truth[b])
        draw = min(p, 1 - p) * 0.6  # keeps the expected score p
        for _ in range(games_per_pair):
            u = rng.random()
            score = 1.0 if u < p - draw / 2 else 0.5 if u < p + draw / 2 else 0.0
            games.append((a, b, score) if rng.random() < 0.5 else (b, a, 1 - score))
    return games


TRUTH = {"strong": 180.0, "good": 60.0, "fair": -60.0, "weak": -180.0}  # mean 0


def test_a_synthetic_round_robin_recovers_the_order_and_the_ratings_within_their_intervals() -> (
    None
):
    ratings = rate(synthetic_round_robin(TRUTH, games_per_pair=600, seed=11))
    assert [r.name for r in ratings] == ["strong", "good", "fair", "weak"]
    for r in ratings:
        assert r.lower <= TRUTH[r.name] <= r.upper, r
        assert r.error < 40  # large sample: the test above is not trivially wide
    for a, b in itertools.permutations(TRUTH, 2):
        d = ratings.difference(a, b)
        assert d.lower <= TRUTH[a] - TRUTH[b] <= d.upper, d
    assert ratings.difference("strong", "good").los > 0.99


def test_the_ratings_are_transitive_a_bot_beaten_by_one_rates_below_it_via_a_third() -> None:
    # "strong" never meets "weak", and is rated above it through "middle" alone
    games = games_with("strong", "middle", 30, 10, 10) + games_with("middle", "weak", 30, 10, 10)
    ratings = rate(games, prior=0)
    step = elo_from_score(35 / 50)
    assert ratings["strong"].elo - ratings["middle"].elo == pytest.approx(step)
    assert ratings["middle"].elo - ratings["weak"].elo == pytest.approx(step)
    assert ratings.difference("strong", "weak").error > ratings.difference("strong", "middle").error


def test_intervals_shrink_with_more_games() -> None:
    few = rate(synthetic_round_robin(TRUTH, games_per_pair=50, seed=3))
    many = rate(synthetic_round_robin(TRUTH, games_per_pair=800, seed=3))
    for name in TRUTH:
        assert many[name].error < few[name].error / 2


def test_the_same_results_repeated_four_times_halve_every_interval() -> None:
    games = synthetic_round_robin(TRUTH, games_per_pair=20, seed=5)
    once, four_times = rate(games, prior=0), rate(games * 4, prior=0)
    for name in TRUTH:
        assert four_times[name].elo == pytest.approx(once[name].elo, abs=1e-6)
        assert four_times[name].error == pytest.approx(once[name].error / 2)


def test_symmetric_results_give_equal_ratings() -> None:
    # a cycle: each beats the next 7-3, with 2 draws; nobody is better
    games = games_with("a", "b", 7, 2, 3) + games_with("b", "c", 7, 2, 3)
    games += games_with("c", "a", 7, 2, 3)
    ratings = rate(games)
    for r in ratings:
        assert r.elo == pytest.approx(0, abs=1e-9)
    assert ratings["a"].error == pytest.approx(ratings["b"].error)
    assert ratings["b"].error == pytest.approx(ratings["c"].error)
    assert ratings.difference("a", "b").los == pytest.approx(0.5)


def test_the_order_of_the_games_and_of_the_sides_does_not_matter() -> None:
    games = synthetic_round_robin(TRUTH, games_per_pair=30, seed=8)
    flipped = [(b, a, 1 - s) for a, b, s in reversed(games)]
    one, other = rate(games), rate(flipped)
    for name in TRUTH:
        assert other[name].elo == pytest.approx(one[name].elo, abs=1e-6)
        assert other[name].error == pytest.approx(one[name].error)


def mm_ratings(games: list[tuple[str, str, float]], prior: float) -> dict[str, float]:
    """Hunter's (2004) MM algorithm, written apart: gamma_i <- W_i / sum_j N_ij / (g_i + g_j)."""
    bots = sorted({g[0] for g in games} | {g[1] for g in games})
    points = {b: 0.0 for b in bots}
    met: dict[frozenset[str], float] = {}
    for a, b, s in games:
        points[a] += s
        points[b] += 1 - s
        met[frozenset((a, b))] = met.get(frozenset((a, b)), 0.0) + 1
    for pair in met:
        for b in pair:
            points[b] += prior / 2
        met[pair] += prior
    gamma = {b: 1.0 for b in bots}
    for _ in range(5000):
        gamma = {
            i: points[i]
            / sum(
                n / (gamma[i] + gamma[j])
                for pair, n in met.items()
                if i in pair
                for j in pair - {i}
            )
            for i in bots
        }
    logs = {b: math.log(g) for b, g in gamma.items()}
    mean = sum(logs.values()) / len(logs)
    return {b: (x - mean) * ELO_PER_NAT for b, x in logs.items()}


@pytest.mark.parametrize("prior", [0.0, 1.0, 3.0])
def test_newton_agrees_with_hunters_mm_algorithm(prior: float) -> None:
    games = synthetic_round_robin(TRUTH, games_per_pair=12, seed=21)
    games += games_with("extra", "weak", 3, 2, 1) + games_with("strong", "extra", 2, 1, 1)
    reference = mm_ratings(games, prior)
    ratings = rate(games, prior=prior)
    for name, elo in reference.items():
        assert ratings[name].elo == pytest.approx(elo, abs=1e-4)


@settings(max_examples=60, deadline=None)
@given(
    results=st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 4), st.sampled_from([0.0, 0.5, 1.0])),
        min_size=1,
        max_size=60,
    ),
    prior=st.sampled_from([0.5, 1.0, 2.0]),
)
def test_each_bot_is_expected_to_score_what_it_scored(
    results: list[tuple[int, int, float]], prior: float
) -> None:
    """The maximum of the likelihood: each bot's expected points (virtual draws included)
    equal its points. A chain of draws keeps every random set of results connected."""
    games = [(f"b{a}", f"b{b}", s) for a, b, s in results if a != b]
    games += [(f"b{i}", f"b{i + 1}", 0.5) for i in range(4)]
    ratings = rate(games, prior=prior)
    table = ratings.crosstable
    for bot in table.bots:
        expected = actual = 0.0
        for other in table.opponents(bot):
            pair = table.pair(bot, other)
            n = pair.games + prior
            expected += n * expected_score(ratings[bot].elo - ratings[other].elo)
            actual += pair.points + prior / 2
        assert expected == pytest.approx(actual, abs=1e-6)
    assert sum(r.elo for r in ratings) == pytest.approx(0, abs=1e-6)


# ------------------------------------------------------------------------ anchoring


def test_an_anchor_bot_is_rated_zero_with_no_interval_and_the_differences_stay() -> None:
    games = synthetic_round_robin(TRUTH, games_per_pair=40, seed=2)
    mean, anchored = rate(games), rate(games, anchor="weak")
    assert anchored["weak"].elo == 0 and anchored["weak"].error == 0
    assert anchored.anchor == "weak" and mean.anchor is None
    for a, b in itertools.combinations(TRUTH, 2):
        assert anchored.difference(a, b).elo == pytest.approx(mean.difference(a, b).elo)
        assert anchored.difference(a, b).error == pytest.approx(mean.difference(a, b).error)
    # against a fixed anchor a bot's interval is that of its difference to the anchor
    assert anchored["strong"].error == pytest.approx(mean.difference("strong", "weak").error)


# ------------------------------------------------------------------------ crosstable


def test_the_crosstable_counts_each_pair_from_either_side() -> None:
    games: list[GameScore | tuple[str, str, float]] = [*games_with("a", "b", 3, 2, 1)]
    games += [("b", "a", 1.0), GameScore("c", "a", 0.5)]
    table = Crosstable.from_games(games)
    assert table.pair("a", "b") == PairRecord("a", "b", wins=3, draws=2, losses=2)
    assert table.pair("b", "a") == table.pair("a", "b").flipped()
    assert table.pair("b", "c") == PairRecord("b", "c")
    assert table.total("a") == PairRecord("a", "*", wins=3, draws=3, losses=2)
    assert table.pair("a", "b").score == pytest.approx(4 / 7)
    assert table.pair("a", "b").trinomial.elo().elo == pytest.approx(elo_from_score(4 / 7))
    assert table.games == 8
    assert table.opponents("b") == ("a",)
    with pytest.raises(NoGamesError):
        _ = table.pair("b", "c").score


def test_the_rendering_shows_every_bot_ranked_with_its_rating_and_the_crosstable() -> None:
    games = synthetic_round_robin(TRUTH, games_per_pair=20, seed=4)
    ratings = rate(games)
    text = ratings.render()
    standings, crosstable = text.split("\n\n")
    lines = standings.splitlines()
    assert lines[0].split() == ["Rank", "Name", "Elo", "+/-", "Games", "Score", "Draw"]
    assert len(lines) == 1 + len(TRUTH)
    for rank, (line, r) in enumerate(zip(lines[1:], ratings, strict=True), start=1):
        rank_text, name, elo, error, played, score, _draw = line.split()
        assert (int(rank_text), name, played) == (rank, r.name, "60")
        assert float(elo) == pytest.approx(r.elo, abs=0.05)
        assert float(error) == pytest.approx(r.error, abs=0.05)
        assert score == f"{r.score:.1%}"
    rows = crosstable.splitlines()
    assert rows[0].split() == ["bot", *[r.name for r in ratings]]
    for row, r in zip(rows[1:], ratings, strict=True):
        assert row.split()[0] == r.name and row.count("/20") == len(TRUTH) - 1


def test_a_pair_that_never_met_is_blank_in_the_crosstable() -> None:
    games = games_with("a", "b", 1) + games_with("b", "c", 1)
    rows = rate(games).render().split("\n\n")[1].splitlines()
    row_a = next(r for r in rows if r.startswith("a "))
    assert row_a.split() == ["a", "-", "1/1"]  # c's column is empty


# ------------------------------------------------------------------------ errors


def test_bots_that_never_met_even_through_others_are_a_disconnected_graph() -> None:
    games = games_with("a", "b", 2, 1) + games_with("c", "d", 1) + games_with("d", "e", 1)
    with pytest.raises(DisconnectedError, match="2 groups") as caught:
        rate(games)
    assert caught.value.groups == (("c", "d", "e"), ("a", "b"))
    assert isinstance(caught.value, RatingsError)  # one base class for the runner to catch


def test_an_entrant_that_played_nobody_is_a_disconnected_graph() -> None:
    with pytest.raises(DisconnectedError, match="late") as caught:
        rate(games_with("a", "b", 2, 1), bots=["a", "b", "late"])
    assert caught.value.groups == (("a", "b"), ("late",))


def test_no_games_is_an_error() -> None:
    with pytest.raises(NoGamesError):
        rate([])
    with pytest.raises(NoGamesError):
        rate([], bots=["a", "b"])


def test_an_unknown_bot_is_an_error_naming_the_known_ones() -> None:
    ratings = rate(games_with("a", "b", 2, 1))
    with pytest.raises(UnknownBotError, match=r"'zed'.*'a', 'b'"):
        _ = ratings["zed"]
    with pytest.raises(UnknownBotError):
        ratings.difference("a", "zed")
    with pytest.raises(UnknownBotError, match="anchor 'zed'"):
        rate(games_with("a", "b", 2, 1), anchor="zed")
    with pytest.raises(UnknownBotError):
        ratings.crosstable.pair("a", "zed")


@pytest.mark.parametrize("score", [2, -1, 0.25, "1", True, math.nan])
def test_a_score_other_than_win_draw_or_loss_is_an_error(score: object) -> None:
    with pytest.raises(GameScoreError):
        rate([("a", "b", score)])  # type: ignore[list-item]


def test_a_game_against_itself_is_an_error() -> None:
    with pytest.raises(SelfPairingError, match="'a' against itself"):
        rate([("a", "b", 1), ("a", "a", 0.5)])


@pytest.mark.parametrize("prior", [-1, math.inf, math.nan, "1", True])
def test_a_prior_that_is_not_a_count_of_virtual_draws_is_an_error(prior: object) -> None:
    with pytest.raises(PriorError):
        rate(games_with("a", "b", 2, 1), prior=prior)  # type: ignore[arg-type]


# ------------------------------------------------------------------------ README


def test_readme_example_runs_as_shown() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Tournament ratings", 1)[1].split("\n## ", 1)[0]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    test = doctest.DocTestParser().get_doctest(example, {}, "README", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False) == (0, len(test.examples))


def test_ratings_from_a_crosstable_equal_ratings_from_its_games() -> None:
    from game.tournament_ratings import rate_table

    rng = random.Random(8)
    bots = ["a", "b", "c", "d"]
    games = [
        (x, y, rng.choice([0.0, 0.5, 1.0])) for _ in range(60) for x, y in [rng.sample(bots, 2)]
    ]
    by_games = rate(games, bots=bots)
    by_table = rate_table(Crosstable.from_games(games, bots))
    for bot in bots:
        assert by_table[bot].elo == pytest.approx(by_games[bot].elo)
        assert by_table[bot].error == pytest.approx(by_games[bot].error)

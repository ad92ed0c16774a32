"""game.tournament_stats: Elo, intervals, LOS and SPRT against published and hand-derived numbers.

The published numbers come from fastchess's own test suite (github.com/Disservin/fastchess,
app/tests/elo_test.cpp and app/tests/sprt_test.cpp), which checks them to 1% relative;
fastchess's ``Stats(ll, ld, wl, dd, wd, ww)`` puts WL and DD pairs apart, and they add up
to our ``wl_dd``. Everything else is derived by hand in the comments.
"""

from __future__ import annotations

import doctest
import math
from pathlib import Path
from statistics import NormalDist

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.tournament_stats import (
    Z95,
    CountError,
    GameScoreError,
    NoGamesError,
    Pentanomial,
    Sprt,
    SprtDecision,
    SprtEloError,
    SprtError,
    SprtRiskError,
    StatsError,
    Tally,
    Trinomial,
    elo_from_score,
    los_from_wins_losses,
    score_from_elo,
)

PHI = NormalDist().cdf


def fastchess_penta(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> Pentanomial:
    """fastchess's six pair counts, in the order of its ``Stats`` constructor."""
    return Pentanomial(ll=ll, ld=ld, wl_dd=wl + dd, wd=wd, ww=ww)


# ------------------------------------------------------------------ Elo of a score


def test_elo_of_a_score_is_the_logistic_formula() -> None:
    # -400 * log10(1/0.75 - 1) = 400 * log10(3) = 190.848...
    assert elo_from_score(0.75) == pytest.approx(400 * math.log10(3))
    assert round(elo_from_score(0.75), 2) == 190.85
    assert elo_from_score(0.25) == pytest.approx(-190.848501888)


def test_a_score_of_ten_to_one_is_400_elo() -> None:
    assert elo_from_score(10 / 11) == pytest.approx(400.0)
    assert score_from_elo(400.0) == pytest.approx(10 / 11)


def test_even_score_is_zero_elo_and_certain_scores_are_infinite() -> None:
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(1.0) == math.inf
    assert elo_from_score(0.0) == -math.inf


@given(st.floats(min_value=-1500, max_value=1500))
def test_score_and_elo_convert_both_ways(elo: float) -> None:
    assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo, abs=1e-6)


# ---------------------------------------------------------------- counting results


def test_trinomial_counts_scores_and_draw_ratio() -> None:
    games = Trinomial.from_scores([1, 0.5, 0.5, 0, 1, 1, 0.5, 0])
    assert games == Trinomial(wins=3, draws=3, losses=2)
    assert games.games == 8
    assert games.points == 4.5
    assert games.score == 4.5 / 8
    assert games.draw_ratio == 3 / 8


def test_a_pair_is_counted_by_its_points_whatever_the_order() -> None:
    assert Pentanomial().add_pair(1, 0) == Pentanomial().add_pair(0, 1) == Pentanomial(wl_dd=1)
    assert Pentanomial().add_pair(0.5, 0.5) == Pentanomial(wl_dd=1)
    assert Pentanomial().add_pair(1, 0.5) == Pentanomial().add_pair(0.5, 1) == Pentanomial(wd=1)
    assert Pentanomial().add_pair(0, 0.5) == Pentanomial(ld=1)
    assert Pentanomial().add_pair(1, 1) == Pentanomial(ww=1)
    assert Pentanomial().add_pair(0, 0) == Pentanomial(ll=1)


def test_tally_keeps_games_and_pairs_in_step() -> None:
    pairs = [(1, 0), (0.5, 0.5), (1, 0.5), (0, 0), (1, 1)]
    tally = Tally()
    for first, second in pairs:
        tally = tally.add_pair(first, second)
    assert tally.games == Trinomial(wins=4, draws=3, losses=3)
    assert tally.pairs == Pentanomial(ll=1, ld=0, wl_dd=2, wd=1, ww=1)
    assert tally.games.score == tally.pairs.score == 5.5 / 10
    assert tally.elo() == tally.pairs.elo()


def test_flipping_sides_mirrors_counts_and_negates_elo() -> None:
    pairs = Pentanomial(ll=3, ld=10, wl_dd=20, wd=15, ww=4)
    games = Trinomial(wins=30, draws=40, losses=22)
    assert pairs.flipped().flipped() == pairs
    assert pairs.flipped().elo().elo == pytest.approx(-pairs.elo().elo)
    assert games.flipped().elo().elo == pytest.approx(-games.elo().elo)
    assert games.flipped().elo().los == pytest.approx(1 - games.elo().los)


def test_a_game_score_must_be_a_loss_draw_or_win() -> None:
    with pytest.raises(GameScoreError, match=r"0\.7"):
        Trinomial().add(0.7)
    with pytest.raises(GameScoreError):
        Pentanomial().add_pair(1, 2)
    with pytest.raises(GameScoreError):
        Tally().add_pair(True, 0)


def test_counts_must_be_whole_and_not_negative() -> None:
    with pytest.raises(CountError, match="losses"):
        Trinomial(wins=1, losses=-1)
    with pytest.raises(CountError, match="ww"):
        Pentanomial(ww=1.5)  # type: ignore[arg-type]
    with pytest.raises(CountError, match="5 counts"):
        Pentanomial.from_counts([1, 2, 3])


def test_no_games_has_no_score() -> None:
    with pytest.raises(NoGamesError):
        Trinomial().elo()
    with pytest.raises(NoGamesError):
        Pentanomial().elo()
    with pytest.raises(NoGamesError):
        _ = Trinomial().draw_ratio
    assert issubclass(NoGamesError, StatsError)


# --------------------------------------------------------------------- variances


def test_trinomial_variance_by_hand() -> None:
    # W=1, D=2, L=1: s = 1/2, variance = (1/4 + 0 + 0 + 1/4) / 4 = 1/8
    assert Trinomial(wins=1, draws=2, losses=1).variance == 0.125
    # W=60, L=40: s = 0.6, variance = 0.6 * 0.4² + 0.4 * 0.6² = 0.24
    assert Trinomial(wins=60, losses=40).variance == pytest.approx(0.24)


def test_pentanomial_variance_by_hand() -> None:
    # pair scores per game a = 0, 1/4, 1/2, 3/4, 1
    assert Pentanomial(ll=1, ww=1).variance == 0.25  # s = 1/2, (1/4 + 1/4) / 2
    assert Pentanomial(ld=1, wd=1).variance == 0.0625  # s = 1/2, (1/16 + 1/16) / 2
    assert Pentanomial(wl_dd=1, ww=1).variance == 0.0625  # s = 3/4, (1/16 + 1/16) / 2
    # ll=1, wl_dd=2, ww=1: s = 1/2, (1/4 + 0 + 0 + 1/4) / 4 = 1/8
    assert Pentanomial(ll=1, wl_dd=2, ww=1).variance == 0.125


def test_split_pairs_cancel_out_where_single_games_do_not() -> None:
    # 100 pairs each won once and lost once (the opening decided): as single games a
    # coin toss (variance 1/4), as pairs no spread at all, so no uncertainty either.
    games = Trinomial(wins=100, losses=100)
    pairs = Pentanomial(wl_dd=100)
    assert games.score == pairs.score == 0.5
    assert games.variance == 0.25
    assert pairs.variance == 0.0
    assert games.elo().error > 0
    assert pairs.elo().error == 0.0
    assert pairs.elo().los == 0.5


def test_interval_by_hand_from_the_pentanomial_variance() -> None:
    # 50 pairs 0.5-point, 50 pairs 1.5-point: s = 1/2, variance 1/16 per pair, so the
    # score's standard error is sqrt(1/16 / 100) = 0.025 and the interval 1/2 ± 1.96*0.025.
    estimate = Pentanomial(ld=50, wd=50).elo()
    assert estimate.samples == 100
    assert estimate.score_lower == pytest.approx(0.5 - Z95 * 0.025)
    assert estimate.score_upper == pytest.approx(0.5 + Z95 * 0.025)
    assert estimate.elo == 0.0
    assert estimate.elo_upper == pytest.approx(elo_from_score(0.5 + Z95 * 0.025))
    assert estimate.elo_lower == pytest.approx(-estimate.elo_upper)
    assert estimate.error == pytest.approx(estimate.elo_upper)
    # normalized Elo: (s - 1/2) / sqrt(2 * 1/16) per game; its error 1.96*0.025/sqrt(1/8)
    assert estimate.nelo == 0.0
    assert estimate.nelo_error == pytest.approx(Z95 * 0.025 / math.sqrt(0.125) * 800 / math.log(10))


def test_an_interval_past_certainty_is_infinite_not_nan() -> None:
    estimate = Pentanomial(ll=1, ww=1).elo()  # s = 1/2 ± 1.96 * sqrt(1/8): beyond 0 and 1
    assert estimate.elo_lower == -math.inf
    assert estimate.elo_upper == math.inf
    assert estimate.error == math.inf
    perfect = Trinomial(wins=10).elo()
    assert perfect.elo == math.inf
    assert perfect.los == 1.0
    assert not any(math.isnan(value) for value in vars(perfect).values())


# --------------------------------------------------------------------------- LOS


def test_los_of_equal_wins_and_losses_is_one_half() -> None:
    assert los_from_wins_losses(40, 40) == 0.5
    assert Trinomial(wins=40, draws=20, losses=40).elo().los == 0.5
    assert Pentanomial(ll=5, ld=7, wl_dd=9, wd=7, ww=5).elo().los == 0.5


def test_classic_los_of_60_wins_40_losses() -> None:
    # cutechess-cli / Chess Programming Wiki: Φ((W - L) / sqrt(W + L)) = Φ(2) ≈ 97.7%
    assert los_from_wins_losses(60, 40) == pytest.approx(PHI(2.0))
    assert round(los_from_wins_losses(60, 40), 3) == 0.977


def test_fastchess_los_uses_the_observed_variance() -> None:
    # fastchess: Φ((s - 1/2) / sqrt(variance / n)) = Φ(0.1 / sqrt(0.24 / 100)) ≈ 97.9%
    assert Trinomial(wins=60, losses=40).elo().los == pytest.approx(PHI(0.1 / math.sqrt(0.0024)))


def test_los_follows_the_score() -> None:
    assert Trinomial(wins=30, draws=10, losses=20).elo().los > 0.5
    assert Trinomial(wins=20, draws=10, losses=30).elo().los < 0.5


# ------------------------------------------------------- fastchess's elo_test.cpp


@pytest.mark.parametrize(
    ("games", "elo", "error", "nelo", "nelo_error", "los"),
    [
        # "EloWDL 1": Stats(wins=76, losses=89, draws=123); Elo not given there
        (Trinomial(wins=76, draws=123, losses=89), None, None, -20.76, 40.13, 0.1553),
        # "EloWDL 2": Stats(wins=136, losses=96, draws=111)
        (Trinomial(wins=136, draws=111, losses=96), 40.70, 30.43, 49.77, 36.77, 0.9960),
        # "EloWDL 3": Stats(wins=34, losses=356, draws=0)
        (Trinomial(wins=34, draws=0, losses=356), None, None, -508.44, 34.48, None),
    ],
)
def test_fastchess_trinomial_examples(
    games: Trinomial,
    elo: float | None,
    error: float | None,
    nelo: float,
    nelo_error: float,
    los: float | None,
) -> None:
    estimate = games.elo()
    assert estimate.nelo == pytest.approx(nelo, rel=0.01)
    assert estimate.nelo_error == pytest.approx(nelo_error, rel=0.01)
    if elo is not None:
        assert estimate.elo == pytest.approx(elo, rel=0.01)
        assert estimate.error == pytest.approx(error, rel=0.01)
    if los is not None:
        assert round(estimate.los, 4) == los  # fastchess prints "15.53 %"


@pytest.mark.parametrize(
    ("pairs", "elo", "error", "nelo", "nelo_error", "los"),
    [
        # "EloPentanomial 1": Stats(34, 54, 31, 32, 64, 75)
        (fastchess_penta(34, 54, 31, 32, 64, 75), 55.58, 27.65, 57.94, 28.28, 1.0),
        # "EloPentanomial 2": Stats(332, 433, 457, 41, 333, 334)
        (fastchess_penta(332, 433, 457, 41, 333, 334), -8.64, 10.33, -9.17, 10.96, 0.0505),
        # "EloPentanomial 3": Stats(7895, 8757, 5485, 200, 568, 9999)
        (fastchess_penta(7895, 8757, 5485, 200, 568, 9999), -21.04, 2.95, -19.01, 2.65, None),
    ],
)
def test_fastchess_pentanomial_examples(
    pairs: Pentanomial,
    elo: float,
    error: float,
    nelo: float,
    nelo_error: float,
    los: float | None,
) -> None:
    estimate = pairs.elo()
    assert estimate.elo == pytest.approx(elo, rel=0.01)
    assert estimate.error == pytest.approx(error, rel=0.01)
    assert estimate.nelo == pytest.approx(nelo, rel=0.01)
    assert estimate.nelo_error == pytest.approx(nelo_error, rel=0.01)
    if los is not None:
        assert round(estimate.los, 4) == los  # fastchess prints "100.00 %", "5.05 %"


# -------------------------------------------------------------------- SPRT setup


def test_sprt_bounds_for_five_percent_risks_are_ln_19() -> None:
    sprt = Sprt(elo0=0, elo1=5, alpha=0.05, beta=0.05)
    assert sprt.upper == pytest.approx(math.log(19))
    assert sprt.lower == pytest.approx(-math.log(19))
    assert round(sprt.upper, 3) == 2.944


def test_sprt_bounds_follow_alpha_and_beta() -> None:
    sprt = Sprt(elo0=0, elo1=5, alpha=0.05, beta=0.1)
    assert sprt.lower == pytest.approx(math.log(0.1 / 0.95))  # -2.251
    assert sprt.upper == pytest.approx(math.log(18))  # ln(0.9 / 0.05) = 2.890


@pytest.mark.parametrize(("elo0", "elo1"), [(5, 0), (3, 3), (0, math.inf), (math.nan, 5), ("0", 5)])
def test_sprt_needs_elo0_below_elo1(elo0: float, elo1: float) -> None:
    with pytest.raises(SprtEloError, match="elo"):
        Sprt(elo0=elo0, elo1=elo1)


@pytest.mark.parametrize(
    ("alpha", "beta"),
    [(0, 0.05), (0.05, 0), (0.5, 0.05), (0.05, 0.7), (-0.1, 0.05), (0.05, math.nan)],
)
def test_sprt_needs_risks_between_zero_and_one_half(alpha: float, beta: float) -> None:
    with pytest.raises(SprtRiskError, match=r"strictly between 0 and 0\.5"):
        Sprt(elo0=0, elo1=5, alpha=alpha, beta=beta)
    assert issubclass(SprtRiskError, SprtError)
    assert issubclass(SprtError, ValueError)


def test_sprt_decides_at_the_bounds() -> None:
    sprt = Sprt(elo0=0, elo1=5)
    assert sprt.decide(sprt.upper) is SprtDecision.H1
    assert sprt.decide(sprt.lower) is SprtDecision.H0
    assert sprt.decide(sprt.upper - 1e-9) is SprtDecision.CONTINUE
    assert sprt.decide(sprt.lower + 1e-9) is SprtDecision.CONTINUE


# ---------------------------------------------------------------------- SPRT LLR


@pytest.mark.parametrize(
    ("elo0", "elo1", "counts", "llr"),
    [
        # "logistic trinomial 1": Stats(wins=21404, losses=21184, draws=40708)
        (0.5, 2.5, Trinomial(wins=21404, draws=40708, losses=21184), -1.57),
        # "logistic trinomial 2": Stats(wins=57433, losses=57030, draws=106593)
        (0, 2, Trinomial(wins=57433, draws=106593, losses=57030), -2.59),
        # "logistic pentanomial 1": Stats(223, 9863, 20279, 1000, 10037, 246)
        (0.5, 2.5, fastchess_penta(223, 9863, 20279, 1000, 10037, 246), -3.07),
        # "logistic pentanomial 2": Stats(871, 26175, 55003, 980, 26678, 821)
        (0, 2, fastchess_penta(871, 26175, 55003, 980, 26678, 821), -4.98),
    ],
)
def test_fastchess_logistic_llr_examples(
    elo0: float, elo1: float, counts: Trinomial | Pentanomial, llr: float
) -> None:
    # app/tests/sprt_test.cpp, SPRT(alpha=0.05, beta=0.05, elo0, elo1, "logistic")
    result = Sprt(elo0=elo0, elo1=elo1).test(counts)
    assert result.llr == pytest.approx(llr, rel=0.01)
    assert result.decision is (SprtDecision.H0 if llr <= -math.log(19) else SprtDecision.CONTINUE)


def test_llr_is_zero_when_the_score_is_midway_between_symmetric_hypotheses() -> None:
    # elo0 = -elo1 puts s0 and s1 symmetric about 1/2; counts symmetric about 1/2 are
    # equally likely under both, exactly.
    sprt = Sprt(elo0=-5, elo1=5)
    assert sprt.llr(Pentanomial(ll=3, ld=10, wl_dd=30, wd=10, ww=3)) == pytest.approx(0, abs=1e-12)
    assert sprt.llr(Trinomial(wins=70, draws=50, losses=70)) == pytest.approx(0, abs=1e-12)


def test_llr_sign_follows_the_result() -> None:
    sprt = Sprt(elo0=-5, elo1=5)
    assert sprt.llr(Pentanomial(ll=3, ld=10, wl_dd=30, wd=12, ww=3)) > 0
    assert sprt.llr(Pentanomial(ll=3, ld=12, wl_dd=30, wd=10, ww=3)) < 0
    assert sprt.llr(Trinomial(wins=75, draws=50, losses=70)) > 0
    assert sprt.llr(Trinomial(wins=70, draws=50, losses=75)) < 0


def test_llr_is_zero_with_no_result() -> None:
    assert Sprt(elo0=0, elo1=5).llr(Pentanomial()) == 0.0
    assert Sprt(elo0=0, elo1=5).test(Trinomial()).decision is SprtDecision.CONTINUE


def test_llr_grows_in_proportion_to_the_evidence() -> None:
    # The same frequencies over k times the pairs: the GLR is a sum over samples.
    sprt = Sprt(elo0=0, elo1=5)
    once = sprt.llr(Pentanomial(ll=20, ld=200, wl_dd=500, wd=260, ww=20))
    thrice = sprt.llr(Pentanomial(ll=60, ld=600, wl_dd=1500, wd=780, ww=60))
    assert thrice == pytest.approx(3 * once)


def test_llr_of_the_flipped_counts_with_mirrored_hypotheses_is_negated() -> None:
    counts = Pentanomial(ll=40, ld=210, wl_dd=480, wd=250, ww=30)
    llr = Sprt(elo0=0, elo1=5).llr(counts)
    assert Sprt(elo0=-5, elo1=0).llr(counts.flipped()) == pytest.approx(-llr)


def test_llr_agrees_with_the_normal_approximation_on_many_pairs() -> None:
    # For many samples the GLR tends to N (s1 - s0)(2 s - s0 - s1) / (2 var), with var the
    # variance of one sample (here one pair's mean score per game).
    counts = Pentanomial(ll=400, ld=4000, wl_dd=11000, wd=4300, ww=450)
    sprt = Sprt(elo0=0, elo1=4)
    s0, s1 = score_from_elo(0), score_from_elo(4)
    approx = counts.pairs * (s1 - s0) * (2 * counts.score - s0 - s1) / (2 * counts.variance)
    assert sprt.llr(counts) == pytest.approx(approx, rel=0.02)


def test_a_clear_gain_accepts_h1_and_a_clear_loss_accepts_h0() -> None:
    sprt = Sprt(elo0=0, elo1=10)
    gain = Pentanomial(ll=10, ld=100, wl_dd=300, wd=160, ww=30)  # about +40 Elo
    loss = gain.flipped()
    assert sprt.test(gain).decision is SprtDecision.H1
    assert sprt.test(gain).finished
    assert sprt.test(loss).decision is SprtDecision.H0


def test_pair_by_pair_the_test_stops_once_the_llr_crosses_a_bound() -> None:
    sprt = Sprt(elo0=0, elo1=20)
    tally = Tally()
    decisions = []
    for i in range(400):
        tally = tally.add_pair(1, 0.5) if i % 3 else tally.add_pair(1, 0)  # +1.5, +1.5, +1 ...
        decisions.append(sprt.test(tally.pairs).decision)
    first_h1 = decisions.index(SprtDecision.H1)
    assert 0 < first_h1 < 400
    assert set(decisions[:first_h1]) == {SprtDecision.CONTINUE}


# ------------------------------------------------------------------------ README


def test_readme_example_runs_as_shown() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Tournament statistics", 1)[1].split("\n## ", 1)[0]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    test = doctest.DocTestParser().get_doctest(example, {}, "README", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False) == (0, len(test.examples))

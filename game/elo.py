"""Counts of games and pairs, and the Elo they give: score, 95% interval, LOS.

The counting half of ``game.tournament_stats`` (which describes the formulas): pure,
counts in, numbers out. The SPRT on these counts is ``game.sprt``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

_NORMAL = NormalDist()

#: The two-sided 95% quantile of the standard normal distribution, 1.959963984540054.
Z95 = _NORMAL.inv_cdf(0.975)

#: Elo per unit of normalized score: ``800 / ln(10)``, the slope that makes the
#: normalized Elo of fishtest and fastchess agree with the logistic Elo near 0.
_NELO_SCALE = 800.0 / math.log(10)

#: A count of 0 becomes this in the SPRT, as in fishtest's ``results_to_pdf`` and
#: fastchess's ``regularize``: the maximum-likelihood fit needs every outcome possible.
_REGULARIZE = 1e-3

_GAME_SCORES = (0.0, 0.5, 1.0)


class StatsError(Exception):
    """Statistics asked of impossible counts or parameters; subclasses say which."""


class CountError(StatsError, ValueError):
    """A count that is not a whole number >= 0."""


class NoGamesError(StatsError, ValueError):
    """A statistic of zero games (or zero pairs): there is no score to speak of."""


class GameScoreError(StatsError, ValueError):
    """A game score other than 0 (loss), 0.5 (draw) or 1 (win)."""


def elo_from_score(score: float) -> float:
    """The logistic Elo difference of a mean score per game: ``-400 * log10(1/s - 1)``.

    A score of 0 or 1 (or beyond) is an infinite difference.

    >>> round(elo_from_score(0.75), 2)
    190.85
    >>> elo_from_score(0.5), elo_from_score(1.0), elo_from_score(0.0)
    (0.0, inf, -inf)
    """
    if math.isnan(score):
        raise ValueError("a score must be a number, got nan")
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return 400.0 * math.log10(score / (1.0 - score))


def score_from_elo(elo: float) -> float:
    """The expected score per game of an Elo difference: ``1 / (1 + 10**(-elo/400))``.

    >>> score_from_elo(0.0)
    0.5
    >>> round(score_from_elo(400.0), 6)      # 10 to 1
    0.909091
    """
    if math.isnan(elo):
        raise ValueError("an Elo difference must be a number, got nan")
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def los_from_wins_losses(wins: int, losses: int) -> float:
    """The classic likelihood of superiority from decisive games alone.

    ``Φ((W - L) / sqrt(W + L))``: cutechess-cli's LOS and the one on the Chess
    Programming Wiki; draws carry no information on which side is stronger. With no
    decisive game it is 0.5. ``EloEstimate.los`` is fastchess's instead, which uses the
    variance observed in all the games.

    >>> round(los_from_wins_losses(60, 40), 4)
    0.9772
    >>> los_from_wins_losses(7, 7)
    0.5
    """
    _check_count("wins", wins)
    _check_count("losses", losses)
    if wins + losses == 0:
        return 0.5
    return _NORMAL.cdf((wins - losses) / math.sqrt(wins + losses))


def _check_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CountError(f"{name} must be a whole number >= 0, got {value!r}")


def _check_game_score(score: float) -> float:
    if isinstance(score, bool) or score not in _GAME_SCORES:
        raise GameScoreError(
            f"a game score is 0 (loss), 0.5 (draw) or 1 (win) for the tested side, got {score!r}"
        )
    return float(score)


@dataclass(frozen=True)
class EloEstimate:
    """An Elo difference with its 95% interval, as fastchess prints it.

    ``score`` is the mean points per game; ``score_lower``/``score_upper`` its 95%
    interval; ``elo_lower``/``elo_upper`` that interval in Elo, and ``error`` fastchess's
    "±" (half their distance, infinite when a bound is). ``los`` is the likelihood of
    superiority, ``nelo`` and ``nelo_error`` the normalized Elo and its "±". ``samples``
    is the number of games (trinomial) or pairs (pentanomial) it stands on.

    >>> e = Trinomial(wins=136, draws=111, losses=96).elo()   # fastchess elo_test
    >>> round(e.elo, 2), round(e.error, 2), round(e.nelo, 2), round(e.los, 4)
    (40.7, 30.43, 49.77, 0.996)
    >>> round(e.elo_lower, 2), round(e.elo_upper, 2)
    (10.59, 71.44)
    """

    score: float
    score_lower: float
    score_upper: float
    elo: float
    elo_lower: float
    elo_upper: float
    error: float
    los: float
    nelo: float
    nelo_error: float
    samples: int


def _estimate(scores: Sequence[float], counts: Sequence[int], nelo_factor: float) -> EloEstimate:
    """The estimate from counts of per-game scores ``scores`` (trinomial: 0, 1/2, 1;
    pentanomial: the pair's mean, 0, 1/4, ..., 1). ``nelo_factor`` turns the variance of
    one sample into that of one game (1 for games, 2 for pairs of games)."""
    n = sum(counts)
    if n == 0:
        raise NoGamesError("no games yet: the statistics need at least one result")
    score = sum(a * c for a, c in zip(scores, counts, strict=True)) / n
    variance = sum(c * (a - score) ** 2 for a, c in zip(scores, counts, strict=True)) / n
    sd = math.sqrt(variance / n)
    lo, hi = score - Z95 * sd, score + Z95 * sd
    elo, elo_lo, elo_hi = elo_from_score(score), elo_from_score(lo), elo_from_score(hi)
    error = (elo_hi - elo_lo) / 2.0 if math.isfinite(elo_lo + elo_hi) else math.inf

    game_sd = math.sqrt(nelo_factor * variance)
    if sd > 0.0:
        los = _NORMAL.cdf((score - 0.5) / sd)
        nelo = (score - 0.5) / game_sd * _NELO_SCALE
        nelo_error = Z95 * sd / game_sd * _NELO_SCALE
    else:  # every sample scored the same: no spread to measure
        los = 0.5 if score == 0.5 else float(score > 0.5)
        nelo = 0.0 if score == 0.5 else math.copysign(math.inf, score - 0.5)
        nelo_error = 0.0 if score == 0.5 else math.inf
    return EloEstimate(
        score=score,
        score_lower=lo,
        score_upper=hi,
        elo=elo,
        elo_lower=elo_lo,
        elo_upper=elo_hi,
        error=error,
        los=los,
        nelo=nelo,
        nelo_error=nelo_error,
        samples=n,
    )


@dataclass(frozen=True)
class Trinomial:
    """Win, draw and loss counts of single games, for the tested side.

    >>> t = Trinomial.from_scores([1, 1, 0.5, 0])
    >>> t
    Trinomial(wins=2, draws=1, losses=1)
    >>> t.games, t.points, t.score, t.draw_ratio
    (4, 2.5, 0.625, 0.25)
    >>> t.flipped()
    Trinomial(wins=1, draws=1, losses=2)
    """

    wins: int = 0
    draws: int = 0
    losses: int = 0

    def __post_init__(self) -> None:
        _check_count("wins", self.wins)
        _check_count("draws", self.draws)
        _check_count("losses", self.losses)

    @classmethod
    def from_scores(cls, scores: Iterable[float]) -> Trinomial:
        """Counts of game scores (1 win, 0.5 draw, 0 loss)."""
        result = cls()
        for score in scores:
            result = result.add(score)
        return result

    def add(self, score: float) -> Trinomial:
        """These counts with one more game of ``score`` (1, 0.5 or 0).

        >>> Trinomial().add(1).add(0.5)
        Trinomial(wins=1, draws=1, losses=0)
        """
        score = _check_game_score(score)
        if score == 1.0:
            return Trinomial(self.wins + 1, self.draws, self.losses)
        if score == 0.5:
            return Trinomial(self.wins, self.draws + 1, self.losses)
        return Trinomial(self.wins, self.draws, self.losses + 1)

    def flipped(self) -> Trinomial:
        """The same games seen from the opponent's side."""
        return Trinomial(self.losses, self.draws, self.wins)

    @property
    def counts(self) -> tuple[int, int, int]:
        """``(losses, draws, wins)``: the counts in the order of their scores 0, 1/2, 1."""
        return (self.losses, self.draws, self.wins)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """Mean points per game; raises NoGamesError with no game."""
        if self.games == 0:
            raise NoGamesError("no games yet: a score needs at least one result")
        return self.points / self.games

    @property
    def draw_ratio(self) -> float:
        """The share of games drawn, 0 to 1; raises NoGamesError with no game."""
        if self.games == 0:
            raise NoGamesError("no games yet: a draw ratio needs at least one result")
        return self.draws / self.games

    @property
    def variance(self) -> float:
        """The variance of one game's score: ``Σ p_i (a_i - s)²`` over W, D, L.

        >>> Trinomial(wins=1, draws=2, losses=1).variance   # (1/4 + 0 + 0 + 1/4) / 4
        0.125
        """
        s = self.score
        deviations = zip(_GAME_SCORES, self.counts, strict=True)
        return sum(c * (a - s) ** 2 for a, c in deviations) / self.games

    def elo(self) -> EloEstimate:
        """Elo, interval, LOS and normalized Elo from the trinomial variance (games taken
        as independent; prefer ``Pentanomial.elo`` for paired games)."""
        return _estimate(_GAME_SCORES, self.counts, nelo_factor=1.0)


#: The score per game of each pentanomial outcome: a pair's points divided by 2.
_PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class Pentanomial:
    """Counts of game pairs by the tested side's points in the pair: 0, 0.5, 1, 1.5, 2.

    ``ll`` lost both, ``ld`` lost one and drew one, ``wl_dd`` won one and lost one *or*
    drew both (1 point either way), ``wd`` won one and drew one, ``ww`` won both: the
    ``Ptnml(0-2)`` line of fastchess, in the same order.

    >>> p = Pentanomial.from_pairs([(1, 0), (0.5, 0.5), (1, 0.5), (1, 1)])
    >>> p
    Pentanomial(ll=0, ld=0, wl_dd=2, wd=1, ww=1)
    >>> p.pairs, p.counts, p.score
    (4, (0, 0, 2, 1, 1), 0.6875)
    >>> p.flipped()
    Pentanomial(ll=1, ld=1, wl_dd=2, wd=0, ww=0)
    """

    ll: int = 0
    ld: int = 0
    wl_dd: int = 0
    wd: int = 0
    ww: int = 0

    def __post_init__(self) -> None:
        for name, value in zip(("ll", "ld", "wl_dd", "wd", "ww"), self.counts, strict=True):
            _check_count(name, value)

    @classmethod
    def from_counts(cls, counts: Sequence[int]) -> Pentanomial:
        """From five counts in the order of pair points 0, 0.5, 1, 1.5, 2.

        >>> Pentanomial.from_counts([1, 2, 3, 4, 5]).wd
        4
        """
        if len(counts) != 5:
            raise CountError(f"a pentanomial has 5 counts (pair points 0 to 2), got {len(counts)}")
        return cls(*counts)

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[float, float]]) -> Pentanomial:
        """Counts of pairs given as the tested side's two game scores."""
        result = cls()
        for first, second in pairs:
            result = result.add_pair(first, second)
        return result

    def add_pair(self, first: float, second: float) -> Pentanomial:
        """These counts with one more pair whose games scored ``first`` and ``second``
        (each 1, 0.5 or 0) for the tested side, whatever the colours.

        >>> Pentanomial().add_pair(0.5, 0).add_pair(0, 0.5)
        Pentanomial(ll=0, ld=2, wl_dd=0, wd=0, ww=0)
        """
        index = round(2 * (_check_game_score(first) + _check_game_score(second)))
        counts = list(self.counts)
        counts[index] += 1
        return Pentanomial(*counts)

    def flipped(self) -> Pentanomial:
        """The same pairs seen from the opponent's side."""
        return Pentanomial(*reversed(self.counts))

    @property
    def counts(self) -> tuple[int, int, int, int, int]:
        """The five counts in the order of pair points 0, 0.5, 1, 1.5, 2."""
        return (self.ll, self.ld, self.wl_dd, self.wd, self.ww)

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def games(self) -> int:
        return 2 * self.pairs

    @property
    def points(self) -> float:
        """Total points of the tested side over every game of every pair."""
        return sum(0.5 * i * c for i, c in enumerate(self.counts))

    @property
    def score(self) -> float:
        """Mean points per game; raises NoGamesError with no pair."""
        if self.pairs == 0:
            raise NoGamesError("no pairs yet: a score needs at least one pair")
        return self.points / self.games

    @property
    def variance(self) -> float:
        """The variance of one pair's mean score per game, ``Σ p_i (a_i - s)²`` with
        ``a_i`` = 0, 1/4, 1/2, 3/4, 1 (fastchess's ``EloPentanomial::calcVariance``).

        >>> Pentanomial(ll=1, ww=1).variance            # (1/4 + 1/4) / 2
        0.25
        >>> Pentanomial(ld=1, wd=1).variance            # two pairs 1/4 from s = 1/2
        0.0625
        """
        s = self.score
        deviations = zip(_PAIR_SCORES, self.counts, strict=True)
        return sum(c * (a - s) ** 2 for a, c in deviations) / self.pairs

    def elo(self) -> EloEstimate:
        """Elo, interval, LOS and normalized Elo from the pentanomial variance, as
        fastchess's ``EloPentanomial`` (``samples`` counts pairs)."""
        return _estimate(_PAIR_SCORES, self.counts, nelo_factor=2.0)


@dataclass(frozen=True)
class Tally:
    """Both views of a paired match, kept together: the games and the pairs.

    >>> tally = Tally().add_pair(1, 0).add_pair(0.5, 1)
    >>> tally.games
    Trinomial(wins=2, draws=1, losses=1)
    >>> tally.pairs
    Pentanomial(ll=0, ld=0, wl_dd=1, wd=1, ww=0)
    """

    games: Trinomial = Trinomial()
    pairs: Pentanomial = Pentanomial()

    def add_pair(self, first: float, second: float) -> Tally:
        """This tally with one more pair of game scores (1, 0.5 or 0 each)."""
        return Tally(self.games.add(first).add(second), self.pairs.add_pair(first, second))

    def elo(self) -> EloEstimate:
        """The pentanomial estimate: the one to report for paired games."""
        return self.pairs.elo()

"""The SPRT of ``game.tournament_stats``: the generalized (logistic) sequential
probability ratio test on trinomial or pentanomial counts, as fishtest and fastchess run it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from game.elo import (
    _GAME_SCORES,
    _PAIR_SCORES,
    _REGULARIZE,
    Pentanomial,
    StatsError,
    Trinomial,
    score_from_elo,
)


class SprtError(StatsError, ValueError):
    """SPRT parameters that define no test; subclasses say which."""


class SprtEloError(SprtError):
    """The Elo hypotheses are not two finite numbers with ``elo0 < elo1``."""


class SprtRiskError(SprtError):
    """``alpha`` or ``beta`` is not a probability strictly between 0 and 0.5."""


class SprtDecision(str, Enum):
    """What an SPRT says after the counts so far."""

    H0 = "H0"
    """The LLR reached the lower bound: no gain of ``elo1`` (H0, ``elo0``, accepted)."""
    H1 = "H1"
    """The LLR reached the upper bound: the gain is there (H1, ``elo1``, accepted)."""
    CONTINUE = "continue"
    """Between the bounds: play on."""


@dataclass(frozen=True)
class SprtResult:
    """An SPRT's state: the LLR, its bounds, and the decision they give.

    >>> SprtResult(llr=3.1, lower=-2.94, upper=2.94, decision=SprtDecision.H1).finished
    True
    """

    llr: float
    lower: float
    upper: float
    decision: SprtDecision

    @property
    def finished(self) -> bool:
        return self.decision is not SprtDecision.CONTINUE


@dataclass(frozen=True)
class Sprt:
    """A sequential probability ratio test of ``elo0`` (H0) against ``elo1`` (H1).

    Elo here is logistic Elo, the one of ``elo_from_score``. ``alpha`` is the chance of
    accepting H1 when H0 holds, ``beta`` of accepting H0 when H1 holds.

    >>> sprt = Sprt(elo0=0, elo1=5)
    >>> round(sprt.lower, 4), round(sprt.upper, 4)          # ± ln 19
    (-2.9444, 2.9444)
    >>> result = sprt.test(Pentanomial(ll=30, ld=300, wl_dd=750, wd=390, ww=30))
    >>> round(result.llr, 2), result.decision
    (3.16, <SprtDecision.H1: 'H1'>)
    >>> Sprt(elo0=5, elo1=0)
    Traceback (most recent call last):
    ...
    game.sprt.SprtEloError: elo0 must be less than elo1, got elo0=5 and elo1=0
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SprtEloError(f"{name} must be a number of Elo, got {value!r}")
            if not math.isfinite(value):
                raise SprtEloError(f"{name} must be a finite number of Elo, got {value!r}")
        if not self.elo0 < self.elo1:
            raise SprtEloError(
                f"elo0 must be less than elo1, got elo0={self.elo0} and elo1={self.elo1}"
            )
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0.0 < value < 0.5
            ):
                raise SprtRiskError(
                    f"{name} must be a probability strictly between 0 and 0.5, got {value!r}"
                )

    @property
    def lower(self) -> float:
        """The LLR at or below which H0 is accepted: ``ln(beta / (1 - alpha))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """The LLR at or above which H1 is accepted: ``ln((1 - beta) / alpha)``."""
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, counts: Pentanomial | Trinomial) -> float:
        """The generalized log-likelihood ratio of H1 against H0 for these counts.

        Pentanomial counts (pairs) are the ones to test paired games with; trinomial
        counts give the older per-game test. No result at all gives 0.

        >>> symmetric = Pentanomial(ll=3, ld=10, wl_dd=30, wd=10, ww=3)   # score 1/2
        >>> abs(Sprt(elo0=-5, elo1=5).llr(symmetric)) < 1e-12
        True
        """
        if isinstance(counts, Pentanomial):
            scores: Sequence[float] = _PAIR_SCORES
        elif isinstance(counts, Trinomial):
            scores = _GAME_SCORES
        else:
            raise TypeError(f"expected Pentanomial or Trinomial counts, got {counts!r}")
        if sum(counts.counts) == 0:
            return 0.0
        return _llr_logistic(
            scores, counts.counts, score_from_elo(self.elo0), score_from_elo(self.elo1)
        )

    def decide(self, llr: float) -> SprtDecision:
        """The decision an LLR gives between this test's bounds.

        >>> sprt = Sprt(elo0=0, elo1=5)
        >>> sprt.decide(-3.0), sprt.decide(0.0), sprt.decide(2.95)
        (<SprtDecision.H0: 'H0'>, <SprtDecision.CONTINUE: 'continue'>, <SprtDecision.H1: 'H1'>)
        """
        if llr >= self.upper:
            return SprtDecision.H1
        if llr <= self.lower:
            return SprtDecision.H0
        return SprtDecision.CONTINUE

    def test(self, counts: Pentanomial | Trinomial) -> SprtResult:
        """The LLR of these counts, the bounds, and the decision."""
        llr = self.llr(counts)
        return SprtResult(llr=llr, lower=self.lower, upper=self.upper, decision=self.decide(llr))


def _llr_logistic(scores: Sequence[float], counts: Sequence[int], s0: float, s1: float) -> float:
    """``N * Σ p̂_i (ln p1_i - ln p0_i)``, where ``p̂`` is the observed distribution (zero
    counts regularized) and ``p0``/``p1`` the distributions closest to it (maximum
    likelihood) whose expected scores are ``s0``/``s1``."""
    regular = [float(c) if c > 0 else _REGULARIZE for c in counts]
    total = sum(regular)
    observed = [c / total for c in regular]
    p0 = _mle_with_mean(scores, observed, s0)
    p1 = _mle_with_mean(scores, observed, s1)
    return total * sum(
        p * (math.log(a) - math.log(b)) for p, a, b in zip(observed, p1, p0, strict=True)
    )


def _mle_with_mean(scores: Sequence[float], observed: Sequence[float], s: float) -> list[float]:
    """The maximum-likelihood distribution on ``scores`` with expectation ``s``, given the
    observed frequencies: ``p_i = p̂_i / (1 + θ (a_i - s))`` with θ the root of
    ``Σ p̂_i (a_i - s) / (1 + θ (a_i - s)) = 0`` (Van den Bergh, proposition 1.1; the
    function falls from +∞ to -∞ on the interval where every ``p_i`` is positive)."""
    deviations = [a - s for a in scores]

    def f(theta: float) -> float:
        return sum(p * d / (1.0 + theta * d) for p, d in zip(observed, deviations, strict=True))

    theta = _bisect_decreasing(f, -1.0 / max(deviations), -1.0 / min(deviations))
    return [p / (1.0 + theta * d) for p, d in zip(observed, deviations, strict=True)]


def _bisect_decreasing(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of a function that decreases from +∞ at ``lo`` to -∞ at ``hi`` (both
    excluded): 200 halvings, or fewer once a float can tell no middle apart."""
    mid = lo + (hi - lo) / 2.0
    for _ in range(200):
        mid = lo + (hi - lo) / 2.0
        if mid <= lo or mid >= hi:
            return mid
        value = f(mid)
        if value == 0.0:
            return mid
        if value > 0.0:
            lo = mid
        else:
            hi = mid
    return mid

"""Match statistics for the tournament runner: score, Elo with a 95% interval, LOS, SPRT.

The counts and the Elo they give live in ``game.elo``, the SPRT in ``game.sprt``; this
module gathers both and says how they are computed.

Pure and without I/O: counts in, numbers out. The formulas are the ones chess engine
developers already trust, so a result here reads the same as in fastchess, OpenBench or
Stockfish's fishtest:

- the score ``s`` is the mean points per game of the tested side, and its Elo difference
  is the logistic ``-400 * log10(1/s - 1)``;
- games come in **pairs** (one opening, colours swapped), so a pair scores 0, 0.5, 1,
  1.5 or 2 for the tested side. The *pentanomial* counts of those five pair scores give
  the variance that counts: the two games of a pair are correlated through their opening,
  and treating them as independent (the *trinomial* W/D/L variance) misstates the error;
- the 95% interval is ``s ± 1.96 * sqrt(variance / n)`` carried through the Elo formula
  (``n`` games for the trinomial, ``n`` pairs for the pentanomial, each pair scored as
  its mean points per game), the LOS is ``Φ((s - 0.5) / sqrt(variance / n))``, and the
  normalized Elo divides ``s - 0.5`` by the per-game standard deviation;
- the SPRT is the generalized SPRT of fishtest (``LLR_logistic``) and fastchess
  (``SPRT::getLLR``, logistic model): the log-likelihood ratio of the counts under the
  maximum-likelihood distributions whose expected scores are those of ``elo0`` and
  ``elo1`` (Van den Bergh, *Comments on Normalized Elo*, proposition 1.1), with the
  bounds ``ln(beta / (1 - alpha))`` and ``ln((1 - beta) / alpha)``.

>>> tally = Tally().add_pair(1, 0.5).add_pair(0, 1).add_pair(1, 1)
>>> tally.games, tally.pairs
(Trinomial(wins=4, draws=1, losses=1), Pentanomial(ll=0, ld=0, wl_dd=1, wd=1, ww=1))
>>> round(tally.games.score, 4), round(tally.games.draw_ratio, 4)
(0.75, 0.1667)
>>> estimate = tally.elo()                     # from the pairs
>>> round(estimate.elo, 2), round(estimate.los, 4)
(190.85, 0.9831)
>>> sprt = Sprt(elo0=0, elo1=10, alpha=0.05, beta=0.05)
>>> round(sprt.lower, 3), round(sprt.upper, 3)
(-2.944, 2.944)
>>> sprt.test(tally.pairs).decision
<SprtDecision.CONTINUE: 'continue'>
"""

from __future__ import annotations

from game.elo import (
    Z95,
    CountError,
    EloEstimate,
    GameScoreError,
    NoGamesError,
    Pentanomial,
    StatsError,
    Tally,
    Trinomial,
    elo_from_score,
    los_from_wins_losses,
    score_from_elo,
)
from game.sprt import (
    Sprt,
    SprtDecision,
    SprtEloError,
    SprtError,
    SprtResult,
    SprtRiskError,
)

__all__ = [
    "Z95",
    "CountError",
    "EloEstimate",
    "GameScoreError",
    "NoGamesError",
    "Pentanomial",
    "Sprt",
    "SprtDecision",
    "SprtEloError",
    "SprtError",
    "SprtResult",
    "SprtRiskError",
    "StatsError",
    "Tally",
    "Trinomial",
    "elo_from_score",
    "los_from_wins_losses",
    "score_from_elo",
]

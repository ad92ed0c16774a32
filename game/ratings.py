"""Ratings of the arena: OpenSkill's Plackett-Luce model on an Elo-like scale (pure).

A player's skill is a normal belief: ``mu`` (the estimate) and ``sigma`` (how unsure it
is). The model is OpenSkill's ``PlackettLuce`` with its defaults multiplied by 60, so the
numbers read like Elo ratings: a new player is 1500 +- 1000 (``mu`` 1500, ``sigma`` 500),
``beta`` (the spread of one game's performance) 250 and ``tau`` (the drift added before
each game, so a rating never freezes) 5.

The leaderboard sorts by ``Rating.conservative``, ``mu - 2 * sigma``: a player is ranked
by what they are at least, about 97% sure, so a lucky newcomer does not top the board
after one win. A rating is *provisional* (``is_provisional``) until the player has played
``PROVISIONAL_GAMES`` rated games and ``sigma`` is at most ``PROVISIONAL_SIGMA``: in
practice about ten games against settled opponents, more against new ones.

Why OpenSkill rather than a Glicko-2 library: it is maintained and typed (Python source,
shipped compiled by mypyc where a wheel exists, pure Python otherwise), updates one game
at a time with no rating periods (Glicko-2 batches games into periods, awkward for a
ladder that plays around the clock), and its ``tau`` drift plays the part of Glicko's
volatility. Elo (``game.elo``) has no uncertainty, so it cannot say "provisional" nor
rank newcomers fairly.

>>> x, o = rate(Rating(), Rating(), 1.0)
>>> x.mu > 1500 > o.mu, x.sigma < 500
(True, True)
>>> a, b = rate(Rating(), Rating(), 0.5)
>>> round(a.mu) == round(b.mu) == 1500
True
>>> Rating().conservative
500.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from openskill.models import PlackettLuce

__all__ = [
    "BETA",
    "DEFAULT_MU",
    "DEFAULT_SIGMA",
    "PROVISIONAL_GAMES",
    "PROVISIONAL_SIGMA",
    "TAU",
    "Rating",
    "is_provisional",
    "rate",
]

#: OpenSkill's defaults (25, 25/3, 25/6, 25/300) times 60.
DEFAULT_MU: Final = 1500.0
DEFAULT_SIGMA: Final = 500.0
BETA: Final = 250.0
TAU: Final = 5.0

#: A rating is provisional below this many rated games...
PROVISIONAL_GAMES: Final = 10
#: ...or while its sigma is above this (the first game starts at DEFAULT_SIGMA).
PROVISIONAL_SIGMA: Final = 300.0

_MODEL: Final = PlackettLuce(mu=DEFAULT_MU, sigma=DEFAULT_SIGMA, beta=BETA, tau=TAU)


@dataclass(frozen=True)
class Rating:
    """A player's skill on the displayed scale: estimate ``mu``, uncertainty ``sigma``."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA

    @property
    def conservative(self) -> float:
        """``mu - 2 * sigma``: the leaderboard's sort key.

        >>> Rating(1700.0, 100.0).conservative
        1500.0
        """
        return self.mu - 2 * self.sigma


def rate(x: Rating, o: Rating, score_x: float) -> tuple[Rating, Rating]:
    """Both ratings after one game that ``x`` scored ``score_x`` in: 1 a win, 0.5 a
    draw, 0 a loss. Raises ValueError for any other score.

    >>> x, o = rate(Rating(), Rating(1500.0, 100.0), 0.0)
    >>> x.mu < 1500, abs(1500 - o.mu) < abs(1500 - x.mu)
    (True, True)
    """
    if score_x not in (0.0, 0.5, 1.0):
        raise ValueError(f"score_x must be 1, 0.5 or 0, got {score_x!r}")
    ranks = [0.0, 0.0] if score_x == 0.5 else ([0.0, 1.0] if score_x == 1.0 else [1.0, 0.0])
    teams = [[_MODEL.create_rating([x.mu, x.sigma])], [_MODEL.create_rating([o.mu, o.sigma])]]
    [[new_x], [new_o]] = _MODEL.rate(teams, ranks=ranks)
    return Rating(float(new_x.mu), float(new_x.sigma)), Rating(float(new_o.mu), float(new_o.sigma))


def is_provisional(rating: Rating, games: int) -> bool:
    """Whether ``rating`` after ``games`` rated games is still a first guess.

    >>> is_provisional(Rating(), 0), is_provisional(Rating(1600.0, 250.0), 12)
    (True, False)
    >>> is_provisional(Rating(1600.0, 250.0), 9), is_provisional(Rating(1600.0, 350.0), 40)
    (True, True)
    """
    return games < PROVISIONAL_GAMES or rating.sigma > PROVISIONAL_SIGMA

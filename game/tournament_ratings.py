"""Round-robin ratings for the tournament runner: one Elo per bot from all games, a crosstable.

Pure and without I/O: results in, ratings out. The model is the one of BayesElo's
simplest form and of Ordo, the Bradley-Terry model on the Elo scale:

- bot ``i`` of rating ``r_i`` scores ``1 / (1 + 10**((r_j - r_i) / 400))`` per game
  against bot ``j`` on average; a draw counts as half a win and half a loss;
- the ratings are the maximum of the likelihood of every game played, found by Newton's
  method on the natural scale (the log-likelihood is concave, so a step that does not
  climb is halved); only differences are determined, so the ratings are then shifted to
  a mean of 0, or to 0 for a named ``anchor`` bot;
- the *prior* adds ``prior`` virtual draws to every pair of bots that met (1 by default,
  in the spirit of BayesElo's virtual draws): a bot that won or lost every game still
  gets a finite rating, pulled in a little toward its opponents. Two bots with ``n``
  games and ``p`` points for the first differ by exactly
  ``elo_from_score((p + prior/2) / (n + prior))``; with ``prior=0`` that is the plain
  ``elo_from_score(p / n)``;
- the 95% interval of each rating is ``±1.96`` standard deviations from the observed
  Fisher information (the inverse of the negated Hessian of the log-likelihood, taken
  with the same anchoring as the ratings), so the ``±`` of a mean-anchored table is
  the uncertainty of a bot against the field. ``Ratings.difference`` gives the interval
  and the likelihood of superiority of one bot over another from the same matrix.
  Draws make a game's score vary less than a win-or-loss game's, which this information
  does not see, so with many draws the intervals are a little wide (covering the true
  ratings 97-98% of the time in a seeded check with about 30% draws) rather than narrow.

Ratings need a connected comparison graph: bots that never met, directly or through
others, have no rating relative to each other (``DisconnectedError``). Without a prior
they also need every group of bots to have scored against the rest
(``UnboundedRatingError``), Zermelo's and Hunter's condition for a finite maximum.

>>> games = [("threat", "center", 1)] * 6 + [("threat", "center", 0.5)] * 2
>>> games += [("center", "random", 1)] * 5 + [("random", "center", 1)] * 3
>>> games += [("threat", "random", 1)] * 4 + [("threat", "random", 0.5)] * 4
>>> ratings = rate(games)
>>> [(r.name, round(r.elo), round(r.error)) for r in ratings]
[('threat', 145, 129), ('center', -58, 116), ('random', -87, 119)]
>>> ratings["center"].games, ratings["center"].points
(16, 6.0)
>>> d = ratings.difference("threat", "center")
>>> round(d.elo), round(d.error), round(d.los, 3)
(204, 215, 0.968)
>>> ratings.crosstable.pair("threat", "center")
PairRecord(bot='threat', opponent='center', wins=6, draws=2, losses=0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from game.crosstable import (
    Crosstable,
    GameScore,
    PairRecord,
    RatingsError,
    SelfPairingError,
    UnknownBotError,
)
from game.elo import Z95, NoGamesError

__all__ = [
    "Crosstable",
    "Difference",
    "DisconnectedError",
    "GameScore",
    "PairRecord",
    "PriorError",
    "Rating",
    "Ratings",
    "RatingsError",
    "SelfPairingError",
    "UnboundedRatingError",
    "UnknownBotError",
    "rate",
    "rate_table",
]

_NORMAL = NormalDist()

#: Elo per unit of natural log-strength: the model is ``sigmoid((r_i - r_j) * ln(10) / 400)``.
_ELO_PER_NAT = 400.0 / math.log(10.0)

#: Newton stops when no rating moves by more than this many Elo.
_TOLERANCE_ELO = 1e-9
_MAX_ITERATIONS = 200


class PriorError(RatingsError, ValueError):
    """A prior that is not a finite number of virtual draws >= 0."""


class DisconnectedError(RatingsError, ValueError):
    """Bots in groups that never met, directly or through others: no common scale.

    ``groups`` holds the connected groups of bot names, the largest first.
    """

    def __init__(self, message: str, groups: Sequence[Sequence[str]]) -> None:
        super().__init__(message)
        self.groups = tuple(tuple(g) for g in groups)


class UnboundedRatingError(RatingsError, ValueError):
    """Without a prior, a group of bots that won (or lost) every game against the rest:
    its maximum-likelihood rating is infinitely far from theirs."""


class _Interval:
    """The 95% interval ``elo ± error`` of a rating or of a difference of two."""

    elo: float
    error: float

    @property
    def lower(self) -> float:
        return self.elo - self.error

    @property
    def upper(self) -> float:
        return self.elo + self.error


@dataclass(frozen=True)
class Rating(_Interval):
    """One bot's rating: ``elo`` with its 95% interval ``elo ± error``, and its games.

    ``games`` and ``points`` are the real games (the prior's virtual draws are not in
    them); ``score`` is the mean points per game.
    """

    name: str
    elo: float
    error: float
    games: int
    points: float

    @property
    def score(self) -> float:
        return self.points / self.games


@dataclass(frozen=True)
class Difference(_Interval):
    """The rating difference of ``bot`` over ``opponent``, its 95% ``error`` and the
    likelihood of superiority ``los = Φ(elo / sd)`` (BayesElo's LOS under the normal
    approximation)."""

    bot: str
    opponent: str
    elo: float
    error: float
    los: float


class Ratings:
    """Ratings of every bot, best first, with their covariance and the crosstable.

    Iterating gives the ``Rating`` values from the highest rated (ties by name);
    ``ratings[name]`` one of them. Made by ``rate``.
    """

    __slots__ = ("_by_name", "_covariance", "_index", "_order", "anchor", "crosstable", "prior")

    def __init__(
        self,
        ratings: Sequence[Rating],
        covariance: Sequence[Sequence[float]],
        crosstable: Crosstable,
        prior: float,
        anchor: str | None,
    ) -> None:
        self._order = tuple(sorted(ratings, key=lambda r: (-r.elo, r.name)))
        self._by_name = {r.name: r for r in ratings}
        self._index = {r.name: i for i, r in enumerate(ratings)}
        self._covariance = tuple(tuple(row) for row in covariance)
        self.crosstable = crosstable
        self.prior = prior
        self.anchor = anchor

    def __iter__(self) -> Iterator[Rating]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, name: str) -> Rating:
        if name not in self._by_name:
            known = ", ".join(repr(b) for b in self._by_name)
            raise UnknownBotError(f"no bot named {name!r} in the ratings (bots: {known})")
        return self._by_name[name]

    def covariance(self, bot: str, other: str) -> float:
        """The covariance of two ratings in Elo² (a variance when ``bot == other``)."""
        self[bot], self[other]  # raises UnknownBotError
        return self._covariance[self._index[bot]][self._index[other]]

    def difference(self, bot: str, opponent: str) -> Difference:
        """``bot``'s rating minus ``opponent``'s, with its own interval and LOS.

        The interval of a difference is not the sum of the two ``±``: the two ratings
        are correlated through the games between them and the anchoring.
        """
        elo = self[bot].elo - self[opponent].elo
        variance = (
            self.covariance(bot, bot)
            + self.covariance(opponent, opponent)
            - 2.0 * self.covariance(bot, opponent)
        )
        sd = math.sqrt(max(variance, 0.0))
        los = _NORMAL.cdf(elo / sd) if sd > 0.0 else 0.5 if elo == 0.0 else float(elo > 0.0)
        return Difference(bot, opponent, elo, Z95 * sd, los)

    def render(self) -> str:
        """The standings as cutechess and Ordo print them, then the crosstable.

        >>> print(rate([("a", "b", 1), ("a", "b", 0.5), ("b", "a", 0)]).render())
        Rank  Name  Elo    +/-    Games  Score  Draw
           1  a      95.4  196.6      3  83.3%  33.3%
           2  b     -95.4  196.6      3  16.7%  33.3%
        <BLANKLINE>
        bot  a      b
        a    -      2.5/3
        b    0.5/3  -
        """
        header = ["Rank", "Name", "Elo", "+/-", "Games", "Score", "Draw"]
        rows = [header]
        for rank, r in enumerate(self._order, start=1):
            total = self.crosstable.total(r.name)
            rows.append(
                [
                    str(rank),
                    r.name,
                    f"{r.elo:.1f}",
                    f"{r.error:.1f}",
                    str(r.games),
                    f"{r.score:.1%}",
                    f"{total.draws / total.games:.1%}",
                ]
            )
        widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
        left = {1}  # the name column reads left-aligned, numbers right-aligned
        lines = [
            "  ".join(
                cell.ljust(w) if c in left or row is header else cell.rjust(w)
                for c, (cell, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
            for row in rows
        ]
        table = self.crosstable.render([r.name for r in self._order])
        return "\n".join(lines) + "\n\n" + table


def _check_prior(prior: float) -> float:
    if isinstance(prior, bool) or not isinstance(prior, int | float) or not math.isfinite(prior):
        raise PriorError(f"the prior is a finite number of virtual draws >= 0, got {prior!r}")
    if prior < 0:
        raise PriorError(f"the prior is a finite number of virtual draws >= 0, got {prior!r}")
    return float(prior)


def _check_bounded(table: Crosstable) -> None:
    """Every bot reaches every other through "scored at least a draw against" links."""
    bots = table.bots
    for start in bots:
        seen, stack = {start}, [start]
        while stack:
            bot = stack.pop()
            for other in table.opponents(bot):
                if other not in seen and table.pair(bot, other).points > 0:
                    seen.add(other)
                    stack.append(other)
        if len(seen) < len(bots):
            never = sorted(set(bots) - seen)
            raise UnboundedRatingError(
                f"without a prior, {start!r} and the bots it scored against (directly or "
                f"through others) never scored against {', '.join(map(repr, never))}: "
                "their ratings would be infinitely apart; use a prior > 0"
            )


def _solve(matrix: list[list[float]]) -> list[list[float]]:
    """The inverse of a small symmetric positive definite matrix (Gauss-Jordan)."""
    n = len(matrix)
    a = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        p = a[col][col]
        a[col] = [x / p for x in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0.0:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
    return [row[n:] for row in a]


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def rate(
    games: Iterable[GameScore | tuple[str, str, float]],
    *,
    prior: float = 1.0,
    anchor: str | None = None,
    bots: Iterable[str] = (),
) -> Ratings:
    """The maximum-likelihood Bradley-Terry ratings of ``games`` on the Elo scale.

    ``games`` are ``GameScore`` or ``(bot, opponent, score_of_bot)``; ``prior`` the
    virtual draws added to every pair that met; ``anchor`` a bot fixed at 0 (else the mean
    rating is 0); ``bots`` names that must be rated even if they played no game (the
    entrants of a tournament), so that a bot that played nobody is an error, not absent.

    Raises ``NoGamesError`` (no game), ``GameScoreError``, ``SelfPairingError``,
    ``PriorError``, ``UnknownBotError`` (the anchor), ``DisconnectedError`` (bots that
    never met, even through others) and, with ``prior=0``, ``UnboundedRatingError``.

    >>> r = rate([("a", "b", 1)] * 3 + [("a", "b", 0)], prior=0)  # 75%: 190.85 Elo apart
    >>> round(r["a"].elo - r["b"].elo, 2), r["a"].elo + r["b"].elo
    (190.85, 0.0)
    >>> r = rate([("a", "b", 1)] * 3 + [("a", "b", 0)], anchor="b")  # + a virtual draw: 70%
    >>> round(r["a"].elo, 2), r["b"].elo, round(r["a"].error, 1), r["b"].error
    (147.19, 0.0, 332.3, 0.0)
    """
    return rate_table(Crosstable.from_games(games, bots), prior=prior, anchor=anchor)


def rate_table(table: Crosstable, *, prior: float = 1.0, anchor: str | None = None) -> Ratings:
    """``rate`` from a crosstable's counts: the same ratings, in time that depends on
    the number of bots only, not of games (a live tournament's standings use it).

    >>> table = Crosstable.from_games([("a", "b", 1)] * 3 + [("a", "b", 0)])
    >>> round(rate_table(table, prior=0)["a"].elo, 2)
    95.42
    """
    prior = _check_prior(prior)
    if table.games == 0:
        raise NoGamesError("no games yet: ratings need at least one result")
    if anchor is not None and anchor not in table.bots:
        raise UnknownBotError(
            f"the anchor {anchor!r} played no game (bots: {', '.join(map(repr, table.bots))})"
        )
    groups = table.groups()
    if len(groups) > 1:
        described = "; ".join("{" + ", ".join(g) + "}" for g in groups)
        raise DisconnectedError(
            f"the bots fall into {len(groups)} groups that never met, directly or through "
            f"others: {described}; every bot needs a path of games to every other",
            groups,
        )
    if prior == 0.0:
        _check_bounded(table)

    names = table.bots
    n = len(names)
    # pairs (i, j, points of i, games) with the prior's virtual draws in them
    pairs: list[tuple[int, int, float, float]] = []
    for i in range(n):
        for j in range(i + 1, n):
            p = table.pair(names[i], names[j])
            if p.games:
                pairs.append((i, j, p.points + prior / 2.0, p.games + prior))

    def log_likelihood(theta: Sequence[float]) -> float:
        total = 0.0
        for i, j, w, g in pairs:
            d = theta[i] - theta[j]
            # w log sigmoid(d) + (g - w) log sigmoid(-d), written to stay finite for large |d|
            total += -w * math.log1p(math.exp(-d)) if d > -30 else w * (d - math.log1p(math.exp(d)))
            total += (
                -(g - w) * math.log1p(math.exp(d))
                if d < 30
                else (g - w) * (-d - math.log1p(math.exp(-d)))
            )
        return total

    def derivatives(theta: Sequence[float]) -> tuple[list[float], list[list[float]]]:
        gradient = [0.0] * n
        information = [[0.0] * n for _ in range(n)]  # the negated Hessian
        for i, j, w, g in pairs:
            s = _sigmoid(theta[i] - theta[j])
            gradient[i] += w - g * s
            gradient[j] -= w - g * s
            f = g * s * (1.0 - s)
            information[i][i] += f
            information[j][j] += f
            information[i][j] -= f
            information[j][i] -= f
        return gradient, information

    # Newton on theta[0..n-2], theta[n-1] held at 0 (only differences are determined).
    theta = [0.0] * n
    m = n - 1
    for _ in range(_MAX_ITERATIONS):
        gradient, information = derivatives(theta)
        inverse = _solve([row[:m] for row in information[:m]])
        step = [sum(inverse[i][k] * gradient[k] for k in range(m)) for i in range(m)] + [0.0]
        base = log_likelihood(theta)
        scale = 1.0
        while True:
            candidate = [t + scale * s for t, s in zip(theta, step, strict=True)]
            if log_likelihood(candidate) >= base - 1e-12 or scale < 1e-6:
                break
            scale /= 2.0
        theta = candidate
        if max((abs(scale * s) for s in step), default=0.0) * _ELO_PER_NAT < _TOLERANCE_ELO:
            break

    # Covariance of theta with theta[n-1] fixed, then carried to the chosen anchoring:
    # r = G theta with G = I - 1 w^T (w uniform for the mean, the anchor's unit vector).
    _, information = derivatives(theta)
    reduced = _solve([row[:m] for row in information[:m]])
    sigma = [[reduced[i][j] if i < m and j < m else 0.0 for j in range(n)] for i in range(n)]
    if anchor is None:
        weights = [1.0 / n] * n
    else:
        weights = [1.0 if name == anchor else 0.0 for name in names]
    g_rows = [[(1.0 if i == j else 0.0) - weights[j] for j in range(n)] for i in range(n)]
    g_sigma = [
        [sum(g_rows[i][k] * sigma[k][j] for k in range(n)) for j in range(n)] for i in range(n)
    ]
    covariance = [
        [sum(g_sigma[i][k] * g_rows[j][k] for k in range(n)) * _ELO_PER_NAT**2 for j in range(n)]
        for i in range(n)
    ]
    centre = sum(w * t for w, t in zip(weights, theta, strict=True))
    ratings = []
    for i, name in enumerate(names):
        total = table.total(name)
        ratings.append(
            Rating(
                name=name,
                elo=(theta[i] - centre) * _ELO_PER_NAT,
                error=Z95 * math.sqrt(max(covariance[i][i], 0.0)),
                games=total.games,
                points=total.points,
            )
        )
    return Ratings(ratings, covariance, table, prior, anchor)

"""The score of a series between two bots, and when it is decided. Pure.

A series is a two-bot match with a stop rule: **best of N** (at most N games; decided as
soon as one bot has more than N/2 points) or **first to K** (decided as soon as a bot
has K points). A win is 1 point, a draw half a point to each. Either series is bounded:
best of N plays at most N games, first to K at most 2K (the points of all games add up
to the number of games, so after 2K - 1 games someone has K, or both have K - 1/2 and
the next game decides or draws it). A series can end drawn: best of an even N at N/2
each, or first to K reached by both bots in one drawn game.

A void game (neither bot came: ``GameResult.void``) gives nobody a point but is one of
the games (``add_void``), as it is one of a tournament's: the schedule has room for
``max_games`` games and no more, so a series counts its voids against that bound and is
always decided by the end of its schedule. Best of N is therefore decided as soon as the
leader's lead is more than the games left (without a void game: more than N/2 points).

>>> rule = SeriesRule(best_of=3)
>>> score = SeriesScore(rule, "alice", "bob")
>>> score.add("alice"); score.add(None)
>>> score.text, score.decided
('alice 1.5-0.5 bob', False)
>>> score.add("alice")
>>> score.decided, score.winner, score.text
(True, 'alice', 'alice 2.5-0.5 bob')
>>> drawn = SeriesScore(SeriesRule(first_to=1), "a", "b")
>>> drawn.add(None); drawn.add(None)
>>> drawn.decided, drawn.winner, drawn.games
(True, None, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SeriesRule", "SeriesRuleError", "SeriesScore", "points_text"]


class SeriesRuleError(ValueError):
    """A stop rule that is not exactly one of best of N (N >= 1) and first to K (K >= 1)."""


@dataclass(frozen=True)
class SeriesRule:
    """Best of ``best_of`` games, or first to ``first_to`` points: exactly one is given."""

    best_of: int | None = None
    first_to: int | None = None

    def __post_init__(self) -> None:
        if (self.best_of is None) == (self.first_to is None):
            raise SeriesRuleError("give exactly one of best_of and first_to")
        value = self.best_of if self.best_of is not None else self.first_to
        if value is None or value < 1:
            raise SeriesRuleError(f"best_of and first_to must be at least 1, got {value}")

    @property
    def max_games(self) -> int:
        """The most games the series can take.

        >>> SeriesRule(best_of=7).max_games, SeriesRule(first_to=4).max_games
        (7, 8)
        """
        if self.best_of is not None:
            return self.best_of
        assert self.first_to is not None
        return 2 * self.first_to

    def describe(self) -> str:
        """``best of 7`` or ``first to 4``."""
        if self.best_of is not None:
            return f"best of {self.best_of}"
        return f"first to {self.first_to}"

    def decided(self, points_a: float, points_b: float, games: int) -> bool:
        """Whether a series standing at these points after ``games`` games is over.

        >>> SeriesRule(best_of=7).decided(4, 2, 6), SeriesRule(best_of=7).decided(3, 3, 6)
        (True, False)
        >>> SeriesRule(best_of=2).decided(1, 1, 2)
        True
        >>> SeriesRule(best_of=4).decided(2, 0, 3)   # one void game: 1 left, 2 ahead
        True
        """
        if games >= self.max_games:
            return True
        if self.best_of is not None:
            # Uncatchable: more ahead than there are games left. Without a void game
            # (points add up to games) that is more than N/2 points.
            return abs(points_a - points_b) > self.best_of - games
        assert self.first_to is not None
        return max(points_a, points_b) >= self.first_to


def points_text(points: float) -> str:
    """Points as a score shows them: ``2``, ``2.5``.

    >>> points_text(2.0), points_text(0.5)
    ('2', '0.5')
    """
    return f"{points:g}"


class SeriesScore:
    """The running score of a series of ``a`` against ``b`` under ``rule``: results are
    added in game order (``add``) and stop counting once the series is decided."""

    def __init__(self, rule: SeriesRule, a: str, b: str) -> None:
        self.rule = rule
        self.a = a
        self.b = b
        self.points_a = 0.0
        self.points_b = 0.0
        self.games = 0

    def add(self, winner: str | None) -> None:
        """One more game: won by ``winner`` (``a`` or ``b``), or a draw (``None``).
        Ignored once the series is decided."""
        if self.decided:
            return
        if winner is None:
            self.points_a += 0.5
            self.points_b += 0.5
        elif winner == self.a:
            self.points_a += 1
        elif winner == self.b:
            self.points_b += 1
        else:
            raise ValueError(f"{winner!r} does not play in this series ({self.a}, {self.b})")
        self.games += 1

    def add_void(self) -> None:
        """One more game that nobody played (void): no point for either bot, but one of
        the series' games. Ignored once the series is decided.

        >>> score = SeriesScore(SeriesRule(best_of=2), "a", "b")
        >>> score.add_void(); score.add("a")
        >>> score.decided, score.winner, score.text
        (True, 'a', 'a 1-0 b')
        """
        if not self.decided:
            self.games += 1

    @property
    def decided(self) -> bool:
        return self.rule.decided(self.points_a, self.points_b, self.games)

    @property
    def winner(self) -> str | None:
        """The winner of a decided series; ``None`` while it runs or when it is drawn."""
        if not self.decided or self.points_a == self.points_b:
            return None
        return self.a if self.points_a > self.points_b else self.b

    @property
    def text(self) -> str:
        """``alice 2-1 bob``: the record tag ``SeriesScore``."""
        return f"{self.a} {points_text(self.points_a)}-{points_text(self.points_b)} {self.b}"

    def verdict(self) -> str:
        """One line for the series' status reason.

        >>> score = SeriesScore(SeriesRule(best_of=1), "a", "b"); score.add("b")
        >>> score.verdict()
        'b wins the series, a 0-1 b (best of 1, 1 game)'
        """
        games = f"{self.games} game{'s' if self.games != 1 else ''}"
        tail = f"{self.text} ({self.rule.describe()}, {games})"
        if not self.decided:
            return f"undecided, {tail}"
        if self.winner is None:
            return f"the series is drawn, {tail}"
        return f"{self.winner} wins the series, {tail}"

"""The crosstable of a round robin: every pair's games, W/D/L and score, as text too.

Pure: game scores in (``GameScore`` or ``(bot, opponent, score)``), tables out. The
ratings of ``game.tournament_ratings`` are computed from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from game.elo import Trinomial

__all__ = [
    "Crosstable",
    "GameScore",
    "PairRecord",
    "RatingsError",
    "SelfPairingError",
    "UnknownBotError",
]


class RatingsError(Exception):
    """Ratings asked of results that cannot give them; subclasses say why."""


class UnknownBotError(RatingsError, KeyError):
    """A bot name that is in none of the games (a lookup or an anchor)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class SelfPairingError(RatingsError, ValueError):
    """A game of a bot against itself: it says nothing about its rating."""


@dataclass(frozen=True)
class GameScore:
    """One game for the ratings: ``bot`` scored ``score`` (1, 0.5 or 0) against ``opponent``.

    Colours do not enter the model. Plain ``(bot, opponent, score)`` tuples are accepted
    wherever games are.

    >>> GameScore("a", "b", 0.5)
    GameScore(bot='a', opponent='b', score=0.5)
    """

    bot: str
    opponent: str
    score: float


@dataclass(frozen=True)
class PairRecord:
    """The games of ``bot`` against ``opponent``, counted from ``bot``'s side.

    >>> p = PairRecord("a", "b", wins=3, draws=2, losses=1)
    >>> p.games, p.points, round(p.score, 4)
    (6, 4.0, 0.6667)
    >>> p.flipped()
    PairRecord(bot='b', opponent='a', wins=1, draws=2, losses=3)
    """

    bot: str
    opponent: str
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def trinomial(self) -> Trinomial:
        """The W/D/L counts as ``game.tournament_stats`` reads them (Elo, LOS, ...)."""
        return Trinomial(self.wins, self.draws, self.losses)

    @property
    def games(self) -> int:
        return self.trinomial.games

    @property
    def points(self) -> float:
        return self.trinomial.points

    @property
    def score(self) -> float:
        """Mean points per game; raises ``NoGamesError`` if the two never met."""
        return self.trinomial.score

    def flipped(self) -> PairRecord:
        """The same games from the opponent's side."""
        return PairRecord(self.opponent, self.bot, self.losses, self.draws, self.wins)


def _as_score(game: GameScore | tuple[str, str, float]) -> GameScore:
    record = game if isinstance(game, GameScore) else GameScore(*game)
    if record.bot == record.opponent:
        raise SelfPairingError(
            f"a game of {record.bot!r} against itself: a game needs two different bots"
        )
    Trinomial().add(record.score)  # raises GameScoreError for anything but 0, 0.5, 1
    return record


class Crosstable:
    """W/D/L of every pair of bots, and each bot's totals; immutable.

    ``bots`` keeps the order of first appearance (or the ``bots`` given, which may add
    bots without games). ``pair(a, b)`` is the record of ``a`` against ``b``.

    >>> table = Crosstable.from_games([("a", "b", 1), ("b", "a", 0.5), ("a", "c", 0)])
    >>> table.bots
    ('a', 'b', 'c')
    >>> table.pair("b", "a")
    PairRecord(bot='b', opponent='a', wins=0, draws=1, losses=1)
    >>> table.total("a")
    PairRecord(bot='a', opponent='*', wins=1, draws=1, losses=1)
    >>> table.pair("b", "c").games, table.games
    (0, 3)
    """

    __slots__ = ("_bots", "_counts", "_games")

    def __init__(
        self, bots: Sequence[str], counts: dict[tuple[str, str], tuple[int, int, int]]
    ) -> None:
        self._bots = tuple(bots)
        self._counts = dict(counts)  # (a, b) with a before b in ``bots``: a's W, D, L
        self._games = sum(sum(c) for c in self._counts.values())

    @classmethod
    def from_games(
        cls,
        games: Iterable[GameScore | tuple[str, str, float]],
        bots: Iterable[str] = (),
    ) -> Crosstable:
        """Count ``games`` (``GameScore`` or ``(bot, opponent, score)``).

        Raises ``GameScoreError`` for a score other than 0, 0.5, 1 and
        ``SelfPairingError`` for a bot against itself.
        """
        order: dict[str, int] = {}
        for name in bots:
            order.setdefault(name, len(order))
        counts: dict[tuple[str, str], list[int]] = {}
        for game in games:
            record = _as_score(game)
            for name in (record.bot, record.opponent):
                order.setdefault(name, len(order))
            a, b, score = record.bot, record.opponent, float(record.score)
            if order[a] > order[b]:
                a, b, score = b, a, 1.0 - score
            wdl = counts.setdefault((a, b), [0, 0, 0])
            wdl[0 if score == 1.0 else 1 if score == 0.5 else 2] += 1
        return cls(list(order), {k: (v[0], v[1], v[2]) for k, v in counts.items()})

    @property
    def bots(self) -> tuple[str, ...]:
        return self._bots

    @property
    def games(self) -> int:
        """The number of games in the table."""
        return self._games

    def _check(self, name: str) -> None:
        if name not in self._bots:
            known = ", ".join(repr(b) for b in self._bots) or "none"
            raise UnknownBotError(f"no bot named {name!r} in the results (bots: {known})")

    def pair(self, bot: str, opponent: str) -> PairRecord:
        """The games of ``bot`` against ``opponent`` from ``bot``'s side (maybe none).

        Raises ``UnknownBotError`` for a name not in the table.
        """
        self._check(bot)
        self._check(opponent)
        if (bot, opponent) in self._counts:
            return PairRecord(bot, opponent, *self._counts[(bot, opponent)])
        if (opponent, bot) in self._counts:
            return PairRecord(opponent, bot, *self._counts[(opponent, bot)]).flipped()
        return PairRecord(bot, opponent)

    def total(self, bot: str) -> PairRecord:
        """All games of ``bot``, against any opponent (written ``'*'``)."""
        self._check(bot)
        wins = draws = losses = 0
        for other in self._bots:
            if other != bot:
                p = self.pair(bot, other)
                wins, draws, losses = wins + p.wins, draws + p.draws, losses + p.losses
        return PairRecord(bot, "*", wins, draws, losses)

    def opponents(self, bot: str) -> tuple[str, ...]:
        """The bots ``bot`` played at least once, in table order."""
        self._check(bot)
        return tuple(o for o in self._bots if o != bot and self.pair(bot, o).games)

    def groups(self) -> tuple[tuple[str, ...], ...]:
        """The connected groups of the comparison graph (who met whom), largest first."""
        seen: set[str] = set()
        groups: list[tuple[str, ...]] = []
        for start in self._bots:
            if start in seen:
                continue
            group, stack = [start], [start]
            seen.add(start)
            while stack:
                for other in self.opponents(stack.pop()):
                    if other not in seen:
                        seen.add(other)
                        group.append(other)
                        stack.append(other)
            groups.append(tuple(b for b in self._bots if b in set(group)))
        return tuple(sorted(groups, key=len, reverse=True))

    def render(self, order: Sequence[str] | None = None) -> str:
        """The table as text: a row per bot, its points/games against each column.

        >>> print(Crosstable.from_games([("a", "b", 1), ("a", "b", 0.5)]).render())
        bot  a      b
        a    -      1.5/2
        b    0.5/2  -
        """
        bots = list(self._bots if order is None else order)
        for name in bots:
            self._check(name)
        header = ["bot", *bots]
        rows = [header]
        for bot in bots:
            cells = [bot]
            for other in bots:
                p = self.pair(bot, other) if other != bot else None
                cells.append("-" if p is None else f"{p.points:g}/{p.games}" if p.games else "")
            rows.append(cells)
        widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
        return "\n".join(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows
        )

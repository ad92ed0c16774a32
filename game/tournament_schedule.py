"""The schedule of a tournament: which bots play game *k*, with which colours and opening.

Pure and computed on demand: game ``k`` of a schedule is a function of ``k``, so a
tournament of a million games holds no list of them, and a resumed run finds the same
games under the same numbers. Games come in **pairs** (``k`` and ``k + 1`` for even
``k``): one opening, each bot once as X and once as O. A round meets every pairing once,
pairing after pairing; round robin pairings are every two bots in entry order, a
gauntlet's the first bot against each of the others. Meeting ``m`` (counted over the
whole schedule) plays opening ``m`` of the book's order, wrapping round.

>>> schedule = Schedule(["a", "b", "c"], "round_robin", rounds=2, openings=4)
>>> len(schedule), schedule.pairings
(12, [('a', 'b'), ('a', 'c'), ('b', 'c')])
>>> [(g.x, g.o, g.round, g.opening) for g in map(schedule.game, range(4))]
[('a', 'b', 0, 0), ('b', 'a', 0, 0), ('a', 'c', 0, 1), ('c', 'a', 0, 1)]
>>> schedule.game(11)
ScheduledGame(index=11, round=1, pair=5, x='c', o='b', opening=1)
>>> Schedule(["a", "b", "c"], "gauntlet", rounds=1, openings=0).pairings
[('a', 'b'), ('a', 'c')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Schedule", "ScheduleError", "ScheduledGame"]


class ScheduleError(ValueError):
    """A schedule that cannot be made (too few bots, no rounds, a game out of range)."""


@dataclass(frozen=True)
class ScheduledGame:
    """Game ``index`` of a schedule: ``x`` against ``o`` in ``round``, the ``pair``-th
    pair of games, from opening ``opening`` of the book's order (``None``: no book)."""

    index: int
    round: int
    pair: int
    x: str
    o: str
    opening: int | None

    @property
    def leg(self) -> int:
        """0 for the first game of its pair, 1 for the colours-swapped second."""
        return self.index % 2


class Schedule:
    """Every game of a round robin or gauntlet, by number. See the module docstring."""

    def __init__(
        self,
        bots: Sequence[str],
        format: Literal["round_robin", "gauntlet"],
        *,
        rounds: int,
        openings: int,
    ) -> None:
        if len(bots) < 2:
            raise ScheduleError(f"a schedule needs at least 2 bots, got {len(bots)}")
        if len(set(bots)) != len(bots):
            raise ScheduleError("bot names must be unique")
        if rounds < 1:
            raise ScheduleError(f"rounds must be at least 1, got {rounds}")
        if openings < 0:
            raise ScheduleError(f"openings must be 0 or more, got {openings}")
        self.bots = tuple(bots)
        self.format = format
        self.rounds = rounds
        self.openings = openings
        if format == "round_robin":
            self.pairings = [(a, b) for i, a in enumerate(self.bots) for b in self.bots[i + 1 :]]
        elif format == "gauntlet":
            self.pairings = [(self.bots[0], b) for b in self.bots[1:]]
        else:
            raise ScheduleError(f"format must be round_robin or gauntlet, got {format!r}")

    def __len__(self) -> int:
        return self.rounds * len(self.pairings) * 2

    @property
    def pairs(self) -> int:
        """Pairs of games in the whole schedule."""
        return len(self) // 2

    def game(self, index: int) -> ScheduledGame:
        """Game ``index`` (0-based); ``ScheduleError`` out of range."""
        if not 0 <= index < len(self):
            raise ScheduleError(f"game {index} is not in a schedule of {len(self)} games")
        pair = index // 2
        first, second = self.pairings[pair % len(self.pairings)]
        x, o = (first, second) if index % 2 == 0 else (second, first)
        opening = pair % self.openings if self.openings else None
        return ScheduledGame(index, pair // len(self.pairings), pair, x, o, opening)

    def pair_bots(self, pair: int) -> tuple[str, str]:
        """The bots of pair ``pair``: the first is X in its first game."""
        return self.pairings[pair % len(self.pairings)]

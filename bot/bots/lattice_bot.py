"""``LatticeBot``: a bot that never makes a line, for load tests and benchmarks."""

from __future__ import annotations

from typing import Any

from bot.bot import BaseBot, Deadline
from bot.bots._features import position_bot_capabilities
from bot.capabilities import Capabilities, Meta
from game.hexgrid import Hex, ring
from game.rules import Position
from models import Match, Player


class LatticeBot(BaseBot):
    """Fills its own lattice outward from the origin: X plays only cells whose q and r
    are both even, O only cells whose q and r are both odd.

    Two cells of one lattice are never neighbours on any axis (each step along an axis
    changes the parity of q, of r, or of both), so neither side ever has two stones in a
    row: games between LatticeBots last until the turn limit, whatever its length. That
    makes it the trivial opponent for load tests. A cell of its lattice is at most 2 from
    the last one, so it needs a view distance of at least 2; with 1 it takes the nearest
    legal cell instead (and may then form lines).

    >>> from game.rules import Position
    >>> LatticeBot().play(Position(), Player.O, Match(), Deadline(None))
    [(-1, 1), (1, -1)]
    """

    #: It keeps no position after answering: the server may lend it the same one again.
    keeps_positions = False

    name = "LatticeBot"

    def __init__(self) -> None:
        super().__init__()
        # Where the search for an empty cell resumes: a lattice is only ever filled by
        # its own side, in this ring order, so in the same game the cells before the
        # cursor are taken. A new game (setup, or a board with fewer stones) resets it.
        self._radius = 0
        self._stones = 0

    def on_setup(self, position: Position) -> None:
        self._radius = 0

    @classmethod
    def capabilities(cls) -> Capabilities:
        return position_bot_capabilities(
            Meta(
                name="LatticeBot",
                description="Never makes a line: fills its own lattice of cells outward.",
                tags=["baseline", "deterministic", "load-test"],
            )
        )

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        parity = 0 if player is Player.X else 1
        if len(position) < self._stones:
            self._radius = 0
        self._stones = len(position) + 2
        stones = []
        try:
            for _ in range(2):
                cell = self._next_cell(position, parity)
                position.place(*cell)
                stones.append(cell)
        finally:
            # Taken back: the position is left as it came (what keeps_positions False
            # promises the server, which may then lend it again with the next request).
            for _ in stones:
                position.undo()
        return stones

    def _next_cell(self, position: Position, parity: int) -> Hex:
        if position.view_distance < 2:
            return min(position.legal_cells(), key=lambda c: (abs(c[0]) + abs(c[1]), c))
        # Rings far beyond the stones hold no legal cell: stop there and start over from
        # the origin (a new setup, a reconnect) rather than walking outward forever.
        limit = max(max(abs(q), abs(r), abs(q + r)) for q, r, _ in position.stones)
        limit += position.view_distance
        for start in (self._radius, 0):
            for radius in range(start, limit + 1):
                for q, r in ring((0, 0), radius):
                    if q % 2 == parity and r % 2 == parity and position.is_legal(q, r):
                        self._radius = radius
                        return q, r
        return min(position.legal_cells())  # the whole lattice in view is taken

"""Seeded random games for tests and benchmarks: legal, clustered, and never won."""

from __future__ import annotations

import random

from game.hexgrid import Hex, hexagon
from game.rules import Position


def unfinished_game(
    stones: int,
    seed: int,
    *,
    reach: int = 8,
    view_distance: int = 8,
    recent: int | None = None,
) -> Position:
    """A legal game of ``stones`` stones (the opening X included) that nobody has won.

    Each stone lands within ``reach`` of an earlier one; with ``recent``, four times in
    five of one of the last ``recent`` stones, which clusters the game like real play.
    A stone that would complete a line is taken back, so the game lasts its full length.

    >>> game = unfinished_game(50, seed=1, reach=2)
    >>> len(game), game.outcome
    (50, None)
    """
    rng = random.Random(seed)
    position = Position(view_distance)
    placed: list[Hex] = [(0, 0)]
    offsets = [cell for cell in hexagon((0, 0), reach) if cell != (0, 0)]
    while len(position) < stones:
        pool = placed[-recent:] if recent is not None and rng.random() < 0.8 else placed
        q, r = rng.choice(pool)
        dq, dr = rng.choice(offsets)
        cell = (q + dq, r + dr)
        if not position.is_legal(*cell):
            continue
        position.place(*cell)
        if position.outcome is not None:
            position.undo()
            continue
        placed.append(cell)
    return position

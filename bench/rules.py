"""Benchmark: the cost of one stone in the rules engine, against a naive reference.

Random legal games are played (view distance 8, win distance 6; stones that would end
the game are skipped, so games reach any length). With 50, 200, 800 and 2000 stones on
the board, the next 100 stones of the game are timed doing what a game server does per
stone: ``is_legal`` + ``place`` (which checks legality again, places the stone and checks
the three lines through it). The same stones are timed, in the same run, on
``tests.reference.NaivePosition``, which rescans the whole board for every answer.

It prints the median time per stone at each board size, and the targets' figures:

* the engine's cost per stone at 2000 stones (target: at most 5 µs);
* its cost at 2000 stones relative to 50 (target: within 1.5x);
* how many times faster than the naive reference it is at 800 stones (target: 200x).

Two more lines show what ``legal_cells()`` costs when a bot asks for it after every
move, and that a view distance of 50 (7651 cells around each stone) stays cheap.

Run: ``.venv/bin/python bench/rules.py`` (under a minute).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, Self

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from game.rules import Position
from tests.random_games import unfinished_game
from tests.reference import NaivePosition

Hex = tuple[int, int]
BOARD_SIZES = (50, 200, 800, 2000)
TIMED_STONES = 100


class Rules(Protocol):
    def is_legal(self, q: int, r: int) -> bool: ...
    def place(self, q: int, r: int) -> None: ...
    def copy(self) -> Self: ...


def random_game(stones: int, seed: int, view_distance: int = 8) -> list[Hex]:
    """The cells of a random legal game of ``stones`` stones after the opening X."""
    game = unfinished_game(stones + 1, seed, reach=view_distance, view_distance=view_distance)
    return [(q, r) for q, r, _ in game.stones[1:]]


def at_board_size(make: Callable[[], Rules], game: list[Hex], size: int) -> Rules:
    """A position holding the opening X and the first ``size`` stones of ``game``."""
    position = make()
    for q, r in game[:size]:
        position.place(q, r)
    return position


def per_stone_us(start: Rules, stones: list[Hex], repeats: int) -> list[float]:
    """Microseconds per stone to check and place ``stones`` on copies of ``start``."""
    samples = []
    for _ in range(repeats):
        position = start.copy()
        gc.disable()  # as timeit does: a collection pass is not the engine's cost
        started = time.perf_counter()
        for q, r in stones:
            if position.is_legal(q, r):
                position.place(q, r)
        elapsed = time.perf_counter() - started
        gc.enable()
        samples.append(elapsed / len(stones) * 1e6)
    return samples


def median_at(make: Callable[[], Rules], games: list[list[Hex]], size: int, repeats: int) -> float:
    samples = []
    for game in games:
        start = at_board_size(make, game, size)
        samples += per_stone_us(start, game[size : size + TIMED_STONES], repeats)
    return statistics.median(samples)


def legal_cells_every_move_us(game: list[Hex], repeats: int) -> float:
    """Microseconds per stone over a whole game when ``legal_cells()`` follows each move."""
    samples = []
    for _ in range(repeats):
        position = Position(8)
        started = time.perf_counter()
        for index, (q, r) in enumerate(game):
            position.place(q, r)
            if index % 2:
                len(position.legal_cells())
        samples.append((time.perf_counter() - started) / len(game) * 1e6)
    return statistics.median(samples)


def main() -> None:
    # No options: --help says what it measures, and a mistyped option is refused
    # rather than ignored by a run that looks like the one asked for.
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    print(__doc__.split("\n\n")[0])
    print()
    longest = max(BOARD_SIZES) + TIMED_STONES
    games = [random_game(longest, seed) for seed in range(3)]
    engine: dict[int, float] = {}
    naive: dict[int, float] = {}
    header = ("stones on board", "engine µs/stone", "naive µs/stone", "naive/engine")
    print(f"{header[0]:>15} {header[1]:>16} {header[2]:>15} {header[3]:>13}")
    for size in BOARD_SIZES:
        engine[size] = median_at(lambda: Position(8, 6), games, size, repeats=15)
        naive[size] = median_at(lambda: NaivePosition(8, 6), games[:1], size, repeats=3)
        ratio = naive[size] / engine[size]
        print(f"{size:>15} {engine[size]:>16.2f} {naive[size]:>15.1f} {ratio:>12.0f}x")
    print()
    growth = engine[2000] / engine[50]
    speedup = naive[800] / engine[800]
    print(f"engine at 2000 stones:        {engine[2000]:.2f} µs/stone  (target <= 5 µs)")
    print(f"cost at 2000 vs cost at 50:   {growth:.2f}x            (target <= 1.5x)")
    print(f"naive / engine at 800 stones: {speedup:.0f}x             (target >= 200x)")
    print()
    with_cells = legal_cells_every_move_us(games[0][:2000], repeats=5)
    whole_game = statistics.median(per_stone_us(Position(8, 6), games[0][:2000], repeats=5))
    print(
        f"whole 2000-stone game with legal_cells() after every move: {with_cells:.2f} µs/stone "
        f"({with_cells / whole_game:.1f}x the game without it)"
    )
    wide_game = random_game(800 + TIMED_STONES, seed=99, view_distance=50)
    wide = median_at(lambda: Position(50, 6), [wide_game], 800, repeats=15)
    print(
        f"view distance 50 (7651 cells per stone), 800 stones: {wide:.2f} µs/stone "
        f"({wide / engine[800]:.2f}x view distance 8)"
    )


if __name__ == "__main__":
    main()

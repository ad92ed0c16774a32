"""Benchmark: what the view and win distances cost a game, against the default 8 and 6.

For the caps of ``models.Match``. A game costs the server the rules' work per stone and,
with hosted bots, the bots' work per move; both grow with the settings. With the board at
200 stones (a random legal game, as in ``bench/rules.py``), it times:

* per view distance: the legal cells the position holds (memory: every position of a
  game, the server's and each bot's, holds them) and the hosted ``RandomBot`` choosing
  a move (it draws from every legal cell, as do ``CenterBot`` and many simple bots);
  the game spreads as random play does, each stone within view of an earlier one;
* per win distance: the hosted ``ThreatBot`` choosing a move (its windows grow with it).

Each figure is printed as a ratio to the default settings in the same run, because
machines are shared and noisy. Run: ``.venv/bin/python bench/match_settings.py`` (about
a minute).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.bot import Deadline
from bot.bots import RandomBot, ThreatBot
from game.rules import Position
from models import Match, Player
from tests.random_games import unfinished_game

BOARD = 200
VIEW_DISTANCES = (8, 12, 16, 20, 30, 50)
WIN_DISTANCES = (6, 8, 10, 12, 16, 20)


def spread_game(stones: int, view_distance: int, seed: int) -> Position:
    """A random legal game of ``stones`` stones, each within view of an earlier one."""
    game = unfinished_game(stones, seed, reach=view_distance, view_distance=view_distance)
    position = Position(view_distance)
    for q, r, _ in game.stones[1:]:
        position.place(q, r)
    return position


def random_bot_ms_per_move(position: Position, match: Match, repeats: int = 5) -> float:
    """Median milliseconds for RandomBot to choose a move in ``position``."""
    side = Player(position.to_move)
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        RandomBot(seed=1).play(position.copy(), side, match, Deadline(None))
        samples.append((time.perf_counter() - started) * 1e3)
    return statistics.median(samples)


def threat_ms_per_move(view_distance: int, win_distance: int, repeats: int = 5) -> float:
    """Median milliseconds for ThreatBot to choose a move at ``BOARD`` stones."""
    game = unfinished_game(BOARD, 2, reach=8, view_distance=view_distance)
    position = Position(view_distance, win_distance)
    for q, r, _ in game.stones[1:]:
        position.place(q, r)
    match = Match(view_distance=view_distance, win_distance=win_distance)
    side = Player(position.to_move)
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        ThreatBot().play(position.copy(), side, match, Deadline(None))
        samples.append((time.perf_counter() - started) * 1e3)
    return statistics.median(samples)


def main() -> int:
    # No options: --help says what it measures, and a mistyped option is refused
    # rather than ignored by a run that looks like the one asked for.
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    print(f"at {BOARD} stones of random play: legal cells, RandomBot per move")
    base_cells = base_ms = 0.0
    for view in VIEW_DISTANCES:
        position = spread_game(BOARD, view, seed=1)
        cells = len(position.legal_cells())
        ms = random_bot_ms_per_move(position, Match(view_distance=view))
        base_cells, base_ms = (cells, ms) if view == 8 else (base_cells, base_ms)
        print(
            f"  view distance {view:>2}: {cells:7} cells {cells / base_cells:6.1f}x, "
            f"{ms:8.2f} ms {ms / base_ms:6.1f}x the default"
        )
    base_bot = threat_ms_per_move(8, 6)
    print(f"ThreatBot, per move at {BOARD} stones, view distance 8:")
    for win in WIN_DISTANCES:
        cost = threat_ms_per_move(8, win)
        print(f"  win distance {win:>2}: {cost:8.2f} ms  {cost / base_bot:5.1f}x the default")
    return 0


if __name__ == "__main__":
    sys.exit(main())

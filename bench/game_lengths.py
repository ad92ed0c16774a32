"""Measurement: how long games between the example bots last, for the default turn limit.

Plays seeded games between every pair of ``RandomBot``, ``CenterBot`` and ``ThreatBot``
(each as X and as O, self-play included) with the default settings (view distance 8,
win distance 6), through the bots' own ``play`` on the rules engine, in this process: no
server, no network. ``LatticeBot`` is left out, as it never makes a line.

A game that reaches ``--cap`` moves is stopped and counted as unfinished. It prints, per
pairing, the games played, how many ended by a line, and the median, 99th percentile
and longest length in moves (2-stone turns, what ``turn_limit`` counts), then the
longest game ended by a line: ``models.DEFAULT_TURN_LIMIT`` is chosen as several times
that (see its comment and the README).

RandomBot against RandomBot is the exception: two random players scatter stones over a
growing board and hardly ever make a line, and each stone costs RandomBot time in
proportion to the legal cells, so those games are fewer (``--random-games``) and
stopped sooner (``--random-cap``); they are what the turn limit is for.

Progress goes to stderr: a line as each pairing starts, and one per RandomBot self-play
game, the slow part (minutes with nothing else to show). ``--quick`` plays 4 games per
pairing and 2 RandomBot self-play games of at most 300 moves, for a smoke run.

Run: ``.venv/bin/python bench/game_lengths.py`` (a few minutes, most of it RandomBot
against RandomBot).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.bot import BaseBot, Deadline, MoveDecision
from bot.bots import CenterBot, RandomBot, ThreatBot
from game.rules import Position
from models import Match, Player

BOTS: dict[str, type[BaseBot]] = {"random": RandomBot, "center": CenterBot, "threat": ThreatBot}


def make(name: str, seed: int) -> BaseBot:
    return RandomBot(seed=seed) if name == "random" else BOTS[name]()


def game_length(x_name: str, o_name: str, seed: int, cap: int) -> tuple[int, bool]:
    """Moves played, and whether a line ended the game within ``cap`` moves."""
    match = Match()
    bots = {"x": make(x_name, seed), "o": make(o_name, seed + 1)}
    position = Position(match.view_distance, match.win_distance)
    for bot in bots.values():
        bot.on_setup(position.copy())
    while position.outcome is None and position.moves_played < cap:
        side = position.to_move
        answer = bots[side].play(position.copy(), Player(side), match, Deadline(None))
        decision = MoveDecision.of(answer)
        first, second = (stone.as_tuple() for stone in decision.pieces)
        position.place(*first)
        if position.outcome is None:
            position.place(*second)
    return position.moves_played, position.outcome is not None


def progress(text: str) -> None:
    """A progress line, on stderr: the figures on stdout stay a table."""
    print(text, file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="games per pairing")
    parser.add_argument("--cap", type=int, default=5000, help="moves before a game is stopped")
    parser.add_argument("--random-games", type=int, default=8, help="RandomBot self-play games")
    parser.add_argument("--random-cap", type=int, default=1000, help="their --cap")
    parser.add_argument(
        "--quick", action="store_true", help="4 games per pairing, 2 self-play of RandomBot"
    )
    args = parser.parse_args()
    if args.quick:
        args.games, args.random_games, args.random_cap = 4, 2, 300
    if min(args.games, args.cap, args.random_games, args.random_cap) < 1:
        parser.error("--games, --cap, --random-games and --random-cap must be at least 1")
    longest_finished = 0
    started = time.perf_counter()
    for x_name in BOTS:
        for o_name in BOTS:
            lengths: list[int] = []
            lines = 0
            random_pair = x_name == o_name == "random"
            games = args.random_games if random_pair else args.games
            cap = args.random_cap if random_pair else args.cap
            progress(f"{x_name} (x) vs {o_name} (o): {games} games of at most {cap} moves ...")
            for seed in range(games):
                moves, ended = game_length(x_name, o_name, seed * 2, cap)
                if random_pair:
                    progress(f"  game {seed + 1} of {games}: {moves} moves")
                lengths.append(moves)
                lines += ended
                if ended:
                    longest_finished = max(longest_finished, moves)
            lengths.sort()
            p99 = lengths[min(len(lengths) - 1, round(0.99 * (len(lengths) - 1)))]
            print(
                f"{x_name:>6} (x) vs {o_name:<6} (o): {len(lengths)} games, {lines} by a line, "
                f"median {statistics.median(lengths):g}, p99 {p99}, longest {lengths[-1]} moves",
                flush=True,
            )
    elapsed = time.perf_counter() - started
    print(f"longest game ended by a line: {longest_finished} moves ({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

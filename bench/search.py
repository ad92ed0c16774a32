"""Benchmark: SearchBot (issue 14). Every figure comes from this one run.

1. Speed: nodes per second of the compiled (numba) kernels and of the pure-Python
   fallback, the same fixed-depth searches on the same positions (the tactics suite's
   win-in-3 positions and the book's openings), and their ratio. Target: 200k nodes/s
   compiled (20x BeeHex's 10k positions/s). A node is a position the search made and
   looked at: an alpha-beta node, or a pair move evaluated to order the moves.
   Then the per-move setup late in a long game (2001 stones of LatticeBots): what
   ``SearchBot.play`` does before it searches, as it did (a new memory for the kernels,
   every stone placed; a census of every window to find a win) against what it does
   (the last move's memory and the stones played since; the win from its threat
   windows), and their ratio.
2. Tactics: the suite (``bot/bots/search/tactics.json``, built by
   ``tools/make_tactics.py`` from games and checked by the exhaustive solver) solved at
   1 s a move: a win in 1 must win, a win in 2 must leave threats no defence blocks, a
   win in 3 must threaten so that every defence leaves a win in 2 (checked by the
   solver). Target: 100% for wins in 1 and 2.
3. Strength ladder: ``htttx-tournament --format gauntlet`` (its own game server, each
   bot a local ``python -m bot.serve`` program), SearchBot against ThreatBot, CenterBot
   and RandomBot, ``--clock turn=1``, ``--openings default``, 20 rounds (40 games, colours
   alternating). Target: >= 95% against ThreatBot, 100% against the others.
4. Time doubling: SearchBot at t s a move against itself at 2t, in-process games from
   the book (colours alternating), for t = 0.1, 0.2, 0.4: the longer thinker's score.

``--quick``: 4 rounds in the ladder, fewer self-play games and positions. Run:
``nice -n 10 .venv/bin/python bench/search.py [--quick]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from search_games import match  # noqa: E402 (bench/, next to this script)

from bot.bot import Deadline, MoveDecision  # noqa: E402
from bot.bots.lattice_bot import LatticeBot  # noqa: E402
from bot.bots.search import layout as L  # noqa: E402
from bot.bots.search.backend import compiled_backend  # noqa: E402
from bot.bots.search.engine import Engine  # noqa: E402
from bot.bots.search.solver import Board, _defended_then_won, defences, win_in_1  # noqa: E402
from bot.bots.search_bot import SearchBot  # noqa: E402
from bot.bots.threat_bot import WindowCensus, _winning_move  # noqa: E402
from game.openings import default_book  # noqa: E402
from game.rules import Position  # noqa: E402
from models import Match, Player  # noqa: E402

TACTICS = json.loads((ROOT / "bot" / "bots" / "search" / "tactics.json").read_text())


def suite(k: int) -> list[Position]:
    return [
        Position(setup=[tuple(s) for s in entry["stones"]], to_move=entry["to_move"])
        for entry in TACTICS[str(k)]
    ]


# ------------------------------------------------------------------------ speed


def speed(positions: list[Position], depth: int, pure: bool) -> tuple[int, float]:
    nodes = 0
    seconds = 0.0
    for position in positions:
        # lines=1: the search alone, without the full-window re-searches that score the
        # alternatives it reports (they would weigh the same nodes per second anyway).
        found = Engine(pure=pure).search(position, 1e9, max_depth=depth, threats=False, lines=1)
        if found is not None:
            nodes += found.nodes
            seconds += found.seconds
    return nodes, seconds


def bench_speed(quick: bool) -> None:
    book = default_book()
    positions = [book[i].position() for i in range(0, 60, 6 if quick else 3)]
    positions += suite(3)[: 3 if quick else 8]
    print(f"== speed: {len(positions)} positions, fixed depth")
    if compiled_backend() is None:
        print("numba is not available: compiled speed not measured")
        compiled = 0.0
    else:
        nodes, seconds = speed(positions, 3, pure=False)
        compiled = nodes / seconds
        print(
            f"compiled (numba), depth 3: {nodes} nodes in {seconds:.2f}s = {compiled:,.0f} nodes/s"
        )
    few = positions[:: 4 if quick else 2]
    nodes, seconds = speed(few, 2, pure=True)
    pure = nodes / seconds
    print(f"pure Python,      depth 2: {nodes} nodes in {seconds:.2f}s = {pure:,.0f} nodes/s")
    if compiled:
        verdict = "met" if compiled >= 200_000 else "NOT met"
        print(f"ratio compiled/pure: {compiled / pure:.0f}x; target 200,000 nodes/s: {verdict}")


# ---------------------------------------------------------------------- tactics


def solved(position: Position, k: int, decision: MoveDecision) -> bool:
    moved = position.copy()
    for stone in decision.pieces:
        if not moved.is_game_over():
            moved.place(stone.q, stone.r)
    if k == 1:
        return moved.outcome is not None and moved.outcome.winner == position.to_move
    if moved.is_game_over():
        return moved.outcome is not None and moved.outcome.winner == position.to_move
    board = Board(moved)
    me = L.side_index(position.to_move)
    if win_in_1(board, 1 - me) or not win_in_1(board, me):
        return False
    if not board.blockable(me):
        return True  # a win in 2, faster than asked
    return k == 3 and all(_defended_then_won(board, me, block) for block in defences(board, me))


def bench_tactics(quick: bool) -> None:
    print("== tactics: forced wins in 1, 2, 3 of the mover's moves, 1 s a move")
    for k in (1, 2, 3):
        positions = suite(k)[: 10 if quick else None]
        good = 0
        for position in positions:
            bot = SearchBot(wait_for_compiler=True)
            answer = bot.play(position.copy(), Player(position.to_move), Match(), Deadline(1.0))
            good += solved(position, k, MoveDecision.of(answer))
        print(f"win in {k}: {good}/{len(positions)} solved ({100 * good / len(positions):.0f}%)")


# ----------------------------------------------------------------------- ladder


def bench_ladder(quick: bool) -> None:
    rounds = 4 if quick else 20
    print(f"== strength ladder: gauntlet, {2 * rounds} games a pairing, turn=1, book openings")
    serve = f"{sys.executable} -m bot.serve --port {{port}} --bot"
    bots = {
        "search": "bot.bots.search_bot:SearchBot",
        "threat": "bot.bots:ThreatBot",
        "center": "bot.bots:CenterBot",
        "random": "bot.bots:RandomBot",
    }
    # Compiled once per machine into numba's disk cache, as a deployed bot is: the bot
    # programs then load it at their start instead of playing their first moves with
    # the pure-Python kernels while it compiles.
    compiled_backend()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        argv = [sys.executable, "-m", "game.tournament_cli", "--format", "gauntlet"]
        for name, target in bots.items():
            argv += ["--bot", f"name={name},cmd={serve} {target}"]
        argv += ["--clock", "turn=1", "--openings", "default", "--rounds", str(rounds)]
        argv += ["--concurrency", "2", "--db", str(Path(tmp) / "t.sqlite")]
        argv += ["--log-dir", str(Path(tmp) / "logs"), "--report", str(report), "--quiet"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        t0 = time.monotonic()
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        print(done.stdout.strip())
        if done.returncode != 0:
            print(done.stderr[-2000:])
        print(f"({time.monotonic() - t0:.0f}s)")
        if report.exists():
            summarise(json.loads(report.read_text()))


def summarise(report: dict[str, object]) -> None:
    """SearchBot's score against each opponent, from the runner's JSON report."""
    pairs = report.get("pairs")
    targets = {"threat": 0.95, "center": 1.0, "random": 1.0}
    for pair in pairs if isinstance(pairs, list) else []:
        target = targets.get(pair["opponent"], 0.0)
        verdict = "met" if pair["score"] >= target else "NOT met"
        print(
            f"{pair['bot']} vs {pair['opponent']}: +{pair['wins']} ={pair['draws']} "
            f"-{pair['losses']}, {100 * pair['score']:.1f}% (target {100 * target:.0f}%: "
            f"{verdict})"
        )


# ------------------------------------------------------------------------ setup


def bench_setup(quick: bool) -> None:
    """What ``SearchBot.play`` does before it searches, late in a long game: load the
    position into the kernels' memory and look for a win on the board. Before: a new
    memory with every stone placed, and a census of every window (``WindowCensus``);
    now: the last move's memory with the 4 stones played since, its threat windows."""
    position = Position()
    bots = {"x": LatticeBot(), "o": LatticeBot()}
    for _ in range(1000):
        side = position.to_move
        answer = MoveDecision.of(
            bots[side].play(position.copy(), Player(side), Match(), Deadline(None))
        )
        position.place_move(*(stone.as_tuple() for stone in answer.pieces))
    stones = position.stones
    earlier = Position(setup=stones[:-4], to_move=position.to_move)
    print(f"== per-move setup at {len(stones)} stones, before the search")
    compiled_backend()
    runs = 3 if quick else 10
    rebuilt = kept = 0.0
    for _ in range(runs):
        t0 = time.perf_counter()
        Engine().load(position)
        _winning_move(position, WindowCensus(position, position.to_move))
        rebuilt += time.perf_counter() - t0
        engine = Engine()
        engine.load(earlier)
        t0 = time.perf_counter()
        engine.winning_gaps(position)
        kept += time.perf_counter() - t0
    rebuilt, kept = 1000 * rebuilt / runs, 1000 * kept / runs
    print(f"rebuilt every move: {rebuilt:.1f} ms; kept from move to move: {kept:.2f} ms")
    print(f"ratio rebuilt/kept: {rebuilt / kept:.0f}x")


# --------------------------------------------------------------------- doubling


def bench_doubling(quick: bool) -> None:
    games = 6 if quick else 16
    print(f"== time doubling: SearchBot at 2t against itself at t, {games} games each")
    print("   t      2t     score of 2t (W-L-D)")
    for t in (0.1, 0.2, 0.4):
        wins, draws, losses = match(
            functools.partial(SearchBot, seconds=2 * t, wait_for_compiler=True),
            functools.partial(SearchBot, seconds=t, wait_for_compiler=True),
            games,
            10.0,
            log=lambda line: None,
        )
        score = (wins + draws / 2) / games
        print(f"  {t:<5}  {2 * t:<5}  {100 * score:5.1f}% ({wins}-{losses}-{draws})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="4 rounds in the ladder, fewer self-play games and positions",
    )
    parser.add_argument(
        "--only",
        choices=["speed", "setup", "tactics", "ladder", "doubling"],
        action="append",
        help="run this part (repeatable; all by default)",
    )
    args = parser.parse_args()
    parts = args.only or ["speed", "setup", "tactics", "ladder", "doubling"]
    for part in parts:
        globals()[f"bench_{part}"](args.quick)
        sys.stdout.flush()


if __name__ == "__main__":
    main()

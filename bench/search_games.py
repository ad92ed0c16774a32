"""In-process games between two bots from the default book (no server): a quick check of
a search change before the tournament runner's run (bench/search.py)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.bot import BaseBot, Deadline, MoveDecision  # noqa: E402
from game.openings import default_book  # noqa: E402
from game.rules import Position  # noqa: E402
from models import Match, Player  # noqa: E402


def play_game(
    x: BaseBot, o: BaseBot, position: Position, seconds: float, turn_limit: int = 100
) -> str | None:
    """Play to the end; the winner ("x", "o") or None (a draw, the turn limit)."""
    bots = {"x": x, "o": o}
    moves = 0
    while not position.is_game_over() and moves < turn_limit:
        side = position.to_move
        deadline = Deadline(seconds)
        answer = bots[side].play(position.copy(), Player(side), Match(), deadline)
        decision = MoveDecision.of(answer)
        for stone in decision.pieces:
            if position.is_game_over():
                break
            position.place(stone.q, stone.r)
        moves += 1
    return position.outcome.winner if position.outcome else None


def match(
    make_a: Callable[[], BaseBot],
    make_b: Callable[[], BaseBot],
    games: int,
    seconds: float,
    log: Callable[[str], None] = print,
) -> tuple[int, int, int]:
    """``games`` games of A against B, colours alternating, a new book opening every
    pair: (A's wins, draws, A's losses)."""
    book = default_book()
    wins = draws = losses = 0
    for game in range(games):
        opening = book[(game // 2) % len(book)]
        a_side = "x" if game % 2 == 0 else "o"
        a, b = make_a(), make_b()
        x, o = (a, b) if a_side == "x" else (b, a)
        t0 = time.monotonic()
        winner = play_game(x, o, opening.position(), seconds)
        if winner is None:
            draws += 1
        elif winner == a_side:
            wins += 1
        else:
            losses += 1
        log(
            f"game {game + 1}: A as {a_side}, winner {winner}, "
            f"{time.monotonic() - t0:.1f}s  (+{wins} ={draws} -{losses})"
        )
    return wins, draws, losses


if __name__ == "__main__":
    from bot.bots import ThreatBot
    from bot.bots.search_bot import SearchBot

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", type=int, nargs="?", default=10, help="games (default 10)")
    parser.add_argument(
        "seconds", type=float, nargs="?", default=0.5, help="seconds a move (default 0.5)"
    )
    args = parser.parse_args()
    if args.games < 1 or not 0 < args.seconds < 3600:
        parser.error("games must be at least 1, seconds more than 0 and under 3600")
    print("A is SearchBot, B ThreatBot; the first game waits for the search's compiler")
    print(match(lambda: SearchBot(wait_for_compiler=True), ThreatBot, args.games, args.seconds))

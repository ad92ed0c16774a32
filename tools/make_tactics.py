"""Build the tactics suite (bot/bots/search/tactics.json): positions before the winner's
last, second-to-last and third-to-last moves of games between SearchBot and ThreatBot,
kept when the exhaustive solver (bot.bots.search.solver) says the side to move forces a
win in exactly that many moves. Run: .venv/bin/python tools/make_tactics.py [games]."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.bot import Deadline, MoveDecision  # noqa: E402
from bot.bots import ThreatBot  # noqa: E402
from bot.bots.search.solver import forced_win_length  # noqa: E402
from bot.bots.search_bot import SearchBot  # noqa: E402
from game.openings import default_book  # noqa: E402
from game.rules import Position  # noqa: E402
from models import Match, Player  # noqa: E402

OUT = ROOT / "bot" / "bots" / "search" / "tactics.json"


def game_moves(x: object, o: object, start: Position) -> list[tuple[tuple[int, int], ...]]:
    position = start.copy()
    bots = {"x": x, "o": o}
    moves: list[tuple[tuple[int, int], ...]] = []
    while not position.is_game_over() and len(moves) < 80:
        side = position.to_move
        answer = bots[side].play(position.copy(), Player(side), Match(), Deadline(0.3))  # type: ignore[attr-defined]
        placed = []
        for stone in MoveDecision.of(answer).pieces:
            if position.is_game_over():
                break
            position.place(stone.q, stone.r)
            placed.append((stone.q, stone.r))
        moves.append(tuple(placed))
    return moves if position.outcome and position.outcome.winner else []


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    book = default_book()
    suite: dict[str, list[dict[str, object]]] = {"1": [], "2": [], "3": []}
    seen = set()
    for g in range(games):
        start = book[g % len(book)].position()
        a, b = SearchBot(wait_for_compiler=True, seconds=0.3), ThreatBot()
        x, o = (a, b) if g % 2 == 0 else (b, a)
        moves = game_moves(x, o, start)
        for k in (1, 2, 3):
            cut = len(moves) - (2 * k - 1)
            if cut < 0:
                continue
            position = start.copy()
            for move in moves[:cut]:
                position.place_move(*move)
            key = tuple(sorted(position.stones))
            if key in seen:
                continue
            t0 = time.monotonic()
            found = forced_win_length(position, k)
            print(f"game {g} k={k}: solver says {found} ({time.monotonic() - t0:.1f}s)", flush=True)
            if found == k:
                seen.add(key)
                suite[str(k)].append(
                    {"stones": [list(s) for s in position.stones], "to_move": position.to_move}
                )
        OUT.write_text(json.dumps(suite, indent=None) + "\n")
    print({k: len(v) for k, v in suite.items()})


if __name__ == "__main__":
    main()

"""One offline game between two in-process example players, without any server.

It prints the final board and the game's HTTTX notation record. (``make run`` starts the
game server instead, which plays its demo game between two hosted bots.)

    python -m game.demo [--seed N] [--view-distance N] [--win-distance N]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

from pydantic import ValidationError

from game import notation
from game.ascii import render
from game.hexgrid import AXES, NEIGHBOURS, Hex
from game.rules import Position, Termination
from models import (
    Coord,
    GameRecord,
    GameResult,
    Match,
    Player,
    PlayerType,
    RecordedMove,
    RecordPlayer,
    ResultReason,
)
from wire.errors import _problems


class RandomPlayer:
    """An example player that puts each stone on a uniformly random legal cell (seeded)."""

    def __init__(self, name: str, seed: int) -> None:
        self.name = name
        self.rng = random.Random(seed)

    def choose_stone(self, position: Position) -> Hex:
        return self.rng.choice(sorted(position.legal_cells()))


class LinePlayer:
    """A greedy example player.

    Every empty cell next to a stone is scored by the windows of ``win_distance`` cells
    through it on the three axes: a window free of enemy stones is worth more the more
    of its own stones it holds (attack), one free of its own stones the more enemy
    stones it holds (defence). Completing a line beats everything, then stopping one.
    Scores get a few percent of seeded noise, so games differ from seed to seed.

    An enemy window two stones short of a line is urgent: the enemy could fill it with
    one move.
    """

    def __init__(self, name: str, seed: int) -> None:
        self.name = name
        self.rng = random.Random(seed)

    def choose_stone(self, position: Position) -> Hex:
        scored = [
            (self._score(position, cell) * self.rng.uniform(1.0, 1.05), cell)
            for cell in self._candidates(position)
        ]
        return max(scored)[1]

    @staticmethod
    def _candidates(position: Position) -> list[Hex]:
        # Cells touching a stone: enough for a line player, and far fewer than all legal.
        legal = position.legal_cells()
        touching = {(q + dq, r + dr) for q, r, _ in position.stones for dq, dr in NEIGHBOURS}
        return sorted(cell for cell in touching if cell in legal)

    @staticmethod
    def _score(position: Position, cell: Hex, attack: float = 2.0) -> float:
        me = position.to_move
        need = position.win_distance
        score = 0.0
        for dq, dr in AXES:
            for first in range(1 - need, 1):
                mine = theirs = 0
                for i in range(first, first + need):
                    side = position.piece_at(cell[0] + dq * i, cell[1] + dr * i)
                    if side == me:
                        mine += 1
                    elif side is not None:
                        theirs += 1
                if theirs == 0:
                    score += 1e12 if mine == need - 1 else attack * 5.0**mine
                if mine == 0:
                    score += 1e9 if theirs >= need - 2 else 5.0**theirs
        return score


class ExamplePlayer(Protocol):
    name: str

    def choose_stone(self, position: Position) -> Hex: ...


def play(players: Sequence[ExamplePlayer], match: Match, max_moves: int = 300) -> GameRecord:
    """Play one game; ``players`` are (X, O)."""
    position = Position(
        match.view_distance, match.win_distance, turn_limit=match.turn_limit or max_moves
    )
    by_side = {"x": players[0], "o": players[1]}
    record = GameRecord(
        name="htttx-arena demo",
        player_x=RecordPlayer(name=players[0].name, type=PlayerType.BOT),
        player_o=RecordPlayer(name=players[1].name, type=PlayerType.BOT),
        match=match,
        started_at=datetime.now(UTC).replace(microsecond=0),
    )
    while position.outcome is None:
        side = position.to_move
        started = time.perf_counter()
        pieces: list[Coord] = []
        while position.to_move == side and position.outcome is None and len(pieces) < 2:
            q, r = by_side[side].choose_stone(position)
            position.place(q, r)
            pieces.append(Coord(q=q, r=r))
        thinking_ms = round((time.perf_counter() - started) * 1000)
        record.moves.append(RecordedMove(side=Player(side), pieces=pieces, thinking_ms=thinking_ms))
    outcome = position.outcome
    if outcome.termination is Termination.LINE and outcome.winner is not None:
        record.result = GameResult(winner=Player(outcome.winner), reason=ResultReason.WIN)
    else:
        record.result = GameResult(winner=None, reason=ResultReason.DRAW)
    return record


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m game.demo", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    parser.add_argument(
        "--view-distance",
        type=int,
        default=8,
        metavar="N",
        help="how far from every stone a new one may go (default %(default)s)",
    )
    parser.add_argument(
        "--win-distance",
        type=int,
        default=6,
        metavar="N",
        help="stones in a row that win (default %(default)s)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _arguments()
    args = parser.parse_args(argv)
    try:
        match = Match(view_distance=args.view_distance, win_distance=args.win_distance)
    except ValidationError as error:
        parser.error("; ".join(_problems(error)))
    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    players = (LinePlayer("lines", seed), RandomPlayer("random", seed + 1))
    record = play(players, match)
    position = Position(match.view_distance, match.win_distance)
    for move in record.moves:
        for piece in move.pieces:
            position.place(piece.q, piece.r)
    line = position.outcome.line if position.outcome else ()
    print(f"htttx-arena demo (seed {seed}): {players[0].name} (x) vs {players[1].name} (o)\n")
    print(render(position.stones, highlight=line))
    print()
    result = record.result
    if result is not None and result.winner is not None:
        print(f"{result.winner.value} wins after {len(record.moves)} moves: {list(line)}\n")
    else:
        print(f"draw after {len(record.moves)} moves\n")
    print(notation.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())

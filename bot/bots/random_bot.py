"""``RandomBot``: every stone uniformly at random among the legal cells, reproducibly."""

from __future__ import annotations

import os
import random
from typing import Any

from bot.bot import BaseBot, Deadline, MoveDecision
from bot.bots._features import position_bot_capabilities
from bot.capabilities import BwsConfigCapability, Capabilities, Meta
from game.hexgrid import Hex
from game.rules import Position
from models import Coord, Match, Player

#: The ``config`` key that reseeds the bot (bot-specific keys start with ``x-``).
SEED_KEY = "x-seed"


class RandomBot(BaseBot):
    """Plays each stone uniformly at random among the cells legal for it.

    The second stone is drawn after the first is placed, from the cells legal then (the
    first stone may bring new cells into view). Given a seed — the ``seed`` argument or
    the ``x-seed`` config key — its games are reproducible: the generator restarts from
    the seed at every ``setup``, and cells are drawn from a sorted list because the
    engine's iteration order is not canonical. Without one it seeds from ``os.urandom``.

    >>> from game.rules import Position
    >>> bot = RandomBot(seed=7)
    >>> move = bot.play(Position(), Player.O, Match(), Deadline(None))
    >>> move == RandomBot(seed=7).play(Position(), Player.O, Match(), Deadline(None))
    True
    >>> all(Position().is_legal(stone.q, stone.r) for stone in move.pieces)
    True
    """

    #: It keeps no position after answering: the server may lend it the same one again.
    keeps_positions = False

    name = "RandomBot"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self.seed: int = _fresh_seed() if seed is None else _checked_seed(seed)
        self._random = random.Random(self.seed)

    @classmethod
    def capabilities(cls) -> Capabilities:
        return position_bot_capabilities(
            Meta(
                name="RandomBot",
                description="Plays every stone uniformly at random among the legal cells; "
                f"reproducible with the {SEED_KEY!r} config key.",
                tags=["random", "baseline"],
            ),
            # Reseeding is well defined at any point of a game.
            config=BwsConfigCapability(dynamic=True),
        )

    def on_config(self, depth: int | None, extras: dict[str, Any]) -> None:
        """``x-seed``: an integer seed (``null``: a fresh random one). ``depth`` is ignored:
        a random bot does not search."""
        if SEED_KEY in extras:
            seed = extras[SEED_KEY]
            self.seed = _fresh_seed() if seed is None else _checked_seed(seed)
            self._random.seed(self.seed)

    def on_setup(self, position: Position) -> None:
        # A new game from the same seed replays the same choices.
        self._random.seed(self.seed)

    def play(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> MoveDecision:
        self.deadline = deadline
        before_first = sorted(position.legal_cells())
        first = self._random.choice(before_first)
        position.place(*first)
        try:
            if position.is_game_over():
                # The first stone won, so the second is never placed; the protocol still
                # wants two distinct pieces.
                second = self._random.choice([cell for cell in before_first if cell != first])
            else:
                second = self._random.choice(sorted(position.legal_cells()))
        finally:
            # Taken back: the position is left as it came (what keeps_positions False
            # promises the server, which may then lend it again with the next request).
            position.undo()
        return MoveDecision(pieces=(_coord(first), _coord(second)))


def _fresh_seed() -> int:
    return int.from_bytes(os.urandom(8), "big")


def _checked_seed(seed: object) -> int:
    # bool is an int subclass, and `true` is no seed anyone meant.
    if type(seed) is not int:
        raise ValueError(f"{SEED_KEY} must be an integer, got {seed!r}")
    return seed


def _coord(cell: Hex) -> Coord:
    return Coord(q=cell[0], r=cell[1])

"""``MixBot``: ThreatBot's move with probability ``p``, a random one otherwise.

A bot of a strength between RandomBot's (``p = 0``) and ThreatBot's (``p = 1``), set by
one number: what a ladder's rating convergence is measured with (``bench/ladder.py``).
``p`` is the ``x-threat`` config key or the class attribute ``THREAT_P``; subclasses fix
it for serving by name (``MixBot75``, ``MixBot50``, ``MixBot25``). Reproducible with a
seed, like RandomBot.

>>> from game.rules import Position
>>> from bot.bot import Deadline
>>> from models import Match, Player
>>> move = MixBot(seed=3).play(Position(), Player.O, Match(), Deadline(None))
>>> move == MixBot(seed=3).play(Position(), Player.O, Match(), Deadline(None))
True
>>> MixBot(p=2.0)
Traceback (most recent call last):
...
ValueError: x-threat must be a number from 0 to 1, got 2.0
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from bot.bot import BaseBot, Deadline, MoveDecision
from bot.bots._features import position_bot_capabilities
from bot.bots.random_bot import RandomBot
from bot.bots.threat_bot import ThreatBot
from bot.capabilities import BwsConfigCapability, Capabilities, Meta
from game.rules import Position
from models import Match, Player

__all__ = ["MixBot", "MixBot25", "MixBot50", "MixBot75"]

#: The ``config`` key that sets the chance of ThreatBot's move.
THREAT_KEY = "x-threat"


def _checked(p: object) -> float:
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{THREAT_KEY} must be a number from 0 to 1, got {p!r}")
    return float(p)


class MixBot(BaseBot):
    """Each move: ThreatBot's with probability ``p``, else RandomBot's."""

    name = "MixBot"
    #: It keeps no position after answering, as neither of the bots it asks does.
    keeps_positions = False
    THREAT_P: ClassVar[float] = 0.5

    def __init__(self, p: float | None = None, seed: int | None = None) -> None:
        super().__init__()
        self.p = _checked(self.THREAT_P if p is None else p)
        self._threat = ThreatBot()
        self._random = RandomBot(seed=seed)
        self._coin = random.Random(self._random.seed)

    @classmethod
    def capabilities(cls) -> Capabilities:
        return position_bot_capabilities(
            Meta(
                name=cls.name,
                description=f"ThreatBot's move with probability {cls.THREAT_P:g} "
                f"({THREAT_KEY!r} config key), a random one otherwise.",
                tags=["random", "baseline"],
            ),
            config=BwsConfigCapability(dynamic=True),
        )

    def on_config(self, depth: int | None, extras: dict[str, Any]) -> None:
        if THREAT_KEY in extras:
            self.p = _checked(extras[THREAT_KEY])
        self._random.on_config(depth, extras)

    def on_setup(self, position: Position) -> None:
        self._random.on_setup(position)
        self._coin.seed(self._random.seed)

    def play(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> MoveDecision:
        self.deadline = deadline
        chosen = self._threat if self._coin.random() < self.p else self._random
        return chosen.play(position, player, match, deadline)


class MixBot75(MixBot):
    name = "MixBot75"
    THREAT_P = 0.75


class MixBot50(MixBot):
    name = "MixBot50"
    THREAT_P = 0.5


class MixBot25(MixBot):
    name = "MixBot25"
    THREAT_P = 0.25

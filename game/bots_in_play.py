"""Which registered bots are in a game now, as the server's schedulers see it: one count
for the ladder (``game.ladder``) and the people's queue (``game.queue_hub``), so a bot
the ladder has paired is not handed to a person as well, and a bot playing a person is
left out of the ladder's pairing until that game ends.

A bot plays one game at a time (``GAMES_AT_ONCE``), as a bot on lichess does unless it
says otherwise: the Bot API has no field in ``capabilities.json`` for a bot to declare
more (``spec/bot-api-v1.yaml``), so neither scheduler may assume a bot copes with two.

Pure bookkeeping, no I/O: a scheduler ``hold``s a bot's name from the moment it chooses
the bot (before the game is created: creating it takes a round trip to the bot) until
the game is over, then ``release``s it; pairing skips ``busy()``. The counts are of
this process: on a cluster they are shared only by the schedulers running on the same
worker (README, *Run a cluster*).

>>> bots = BotsInPlay()
>>> bots.hold("Alpha", "beta")
>>> sorted(bots.busy()), bots.is_free("ALPHA"), bots.is_free("gamma")
(['alpha', 'beta'], False, True)
>>> bots.release("alpha", "Beta")
>>> bots.busy()
frozenset()
"""

from __future__ import annotations

from collections import Counter
from typing import Final

__all__ = ["GAMES_AT_ONCE", "BotsInPlay"]

#: The games a bot plays at once, at most.
GAMES_AT_ONCE: Final = 1


class BotsInPlay:
    """How many games each bot is in (by casefolded name, as names compare everywhere:
    ``game.store.schema.player_key``)."""

    def __init__(self) -> None:
        self._games: Counter[str] = Counter()

    def hold(self, *names: str) -> None:
        """One more game for each of ``names``: chosen for it, or playing it. Counted
        even past ``GAMES_AT_ONCE`` (a game a scheduler took over is on, whatever the
        count), so that each ``release`` undoes one ``hold``."""
        for name in names:
            self._games[name.casefold()] += 1

    def release(self, *names: str) -> None:
        """One game fewer for each of ``names``: it is over, or was never created."""
        for name in names:
            key = name.casefold()
            self._games[key] -= 1
            if self._games[key] <= 0:
                del self._games[key]

    def is_free(self, name: str) -> bool:
        """Whether ``name`` may be given another game."""
        return self._games[name.casefold()] < GAMES_AT_ONCE

    def playing(self) -> frozenset[str]:
        """The bots in at least one game (casefolded names)."""
        return frozenset(self._games)

    def busy(self) -> frozenset[str]:
        """The bots that may not be given another game now (casefolded names)."""
        return frozenset(name for name, games in self._games.items() if games >= GAMES_AT_ONCE)

"""Which registered bots are in a game now, as the server's schedulers see it: one count
for the ladder (``game.ladder``) and the people's queue (``game.queue_hub``), so a bot
the ladder has paired is not handed to a person as well, and a bot playing a person is
left out of the ladder's pairing until that game ends.

A bot plays one game at a time (``GAMES_AT_ONCE``), as a bot on lichess does unless it
says otherwise: the Bot API has no field in ``capabilities.json`` for a bot to declare
more (``spec/bot-api-v1.yaml``), so neither scheduler may assume a bot copes with two.

A scheduler ``take``s its bots under a *hold* (an id of its own for the game, no
spaces: ``new_hold_id``) from the moment it chooses them (before the game is created:
creating it takes a round trip to the bot) until the game is over, then ``release``s
the hold; pairing skips ``busy()``. ``take`` is a check and a hold in one step: all of
the bots or none, and False if one is busy, so two schedulers never both get a bot's
last game. A scheduler that takes over another's games ``keep``s their holds, whatever
the count (the games are on); one that leaves a game to another scheduler ``hand_over``s
its hold rather than releasing it.

``BotsInPlay`` is what the schedulers use. A single server's is ``LocalBotsInPlay``:
pure bookkeeping (``Holds``), no I/O. A cluster's workers share theirs in Redis
(``game.cluster_bots_in_play``), where reading or taking may fail while Redis is out
of reach: ``BotsInPlayUnknown``, after which the scheduler gives nobody a bot until it
can tell again.

>>> import asyncio
>>> bots = LocalBotsInPlay()
>>> asyncio.run(bots.take("ladder:1", "Alpha", "beta"))
True
>>> sorted(asyncio.run(bots.busy())), asyncio.run(bots.take("queue:2", "ALPHA"))
(['alpha', 'beta'], False)
>>> bots.release("ladder:1")
>>> asyncio.run(bots.busy())
frozenset()
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable
from typing import Final, Protocol

__all__ = [
    "GAMES_AT_ONCE",
    "BotsInPlay",
    "BotsInPlayUnknown",
    "Holds",
    "LocalBotsInPlay",
    "check_hold_id",
    "new_hold_id",
]

#: The games a bot plays at once, at most.
GAMES_AT_ONCE: Final = 1


class BotsInPlayUnknown(Exception):
    """Which bots are in a game cannot be told now (a cluster's Redis is out of reach):
    the message says why. Nobody is given a bot meanwhile."""


def new_hold_id(kind: str) -> str:
    """A new hold's id: ``kind``, a colon and a random part.

    >>> new_hold_id("queue")[:6], len(new_hold_id("queue"))
    ('queue:', 38)
    """
    return f"{kind}:{uuid.uuid4().hex}"


def check_hold_id(hold: str) -> str:
    """``hold`` if it can be a hold's id (not empty, no whitespace: a cluster stores a
    hold and a bot's name in one string, split at the first space).

    >>> check_hold_id("ladder 1")
    Traceback (most recent call last):
    ValueError: a hold's id is not empty and has no whitespace, got 'ladder 1'
    """
    if not hold or any(char.isspace() for char in hold):
        raise ValueError(f"a hold's id is not empty and has no whitespace, got {hold!r}")
    return hold


class BotsInPlay(Protocol):
    """The bots in a game now, as the schedulers share them (the module docstring)."""

    async def busy(self) -> frozenset[str]:
        """The bots that may not be given another game now (casefolded names);
        ``BotsInPlayUnknown`` if that cannot be told."""
        ...

    async def take(self, hold: str, *names: str) -> bool:
        """Hold ``names`` under ``hold`` if every one may be given another game (else
        hold none: False); ``BotsInPlayUnknown`` if that cannot be told (then none is
        held)."""
        ...

    def keep(self, hold: str, *names: str) -> None:
        """Hold ``names`` under ``hold`` whatever their count: a game already on, which
        this scheduler took over. Keeping a hold already kept changes nothing."""
        ...

    def release(self, hold: str) -> None:
        """The hold's game is over (or was never created): its bots are free of it."""
        ...

    def hand_over(self, hold: str) -> None:
        """The hold's game goes on, left to another scheduler (which ``keep``s it): this
        one no longer holds it, and does not free its bots either."""
        ...

    def playing(self) -> frozenset[str]:
        """The bots this process holds now (casefolded names)."""
        ...


class Holds:
    """Holds on bots, by hold id: how many games each bot is in (by casefolded name, as
    names compare everywhere: ``game.store.schema.player_key``). Pure.

    >>> holds = Holds()
    >>> holds.add("a", ["Alpha"]); holds.add("b", ["alpha", "Beta"])
    >>> holds.games("ALPHA"), holds.free(["beta"]), holds.free(["gamma"])
    (2, False, True)
    >>> holds.remove("a"), holds.remove("a")
    (('alpha',), ())
    >>> sorted(holds.items())
    [('b', ('alpha', 'beta'))]
    """

    def __init__(self) -> None:
        self._bots: dict[str, tuple[str, ...]] = {}
        self._games: Counter[str] = Counter()

    def add(self, hold: str, names: Iterable[str]) -> None:
        """Hold ``names`` under ``hold``, whatever their count (so that each ``remove``
        undoes one ``add``); a hold already there is left as it is."""
        if check_hold_id(hold) in self._bots:
            return
        bots = tuple(dict.fromkeys(name.casefold() for name in names))
        self._bots[hold] = bots
        self._games.update(bots)

    def remove(self, hold: str) -> tuple[str, ...]:
        """Drop ``hold``: the bots it held (none if it was not there)."""
        bots = self._bots.pop(hold, ())
        for bot in bots:
            self._games[bot] -= 1
            if self._games[bot] <= 0:
                del self._games[bot]
        return bots

    def games(self, name: str) -> int:
        return self._games[name.casefold()]

    def free(self, names: Iterable[str]) -> bool:
        """Whether each of ``names`` may be given another game."""
        return all(self.games(name) < GAMES_AT_ONCE for name in names)

    def items(self) -> list[tuple[str, tuple[str, ...]]]:
        """Each hold and its bots."""
        return list(self._bots.items())

    def playing(self) -> frozenset[str]:
        """The bots in at least one game."""
        return frozenset(self._games)

    def busy(self) -> frozenset[str]:
        """The bots that may not be given another game now."""
        return frozenset(name for name, games in self._games.items() if games >= GAMES_AT_ONCE)


class LocalBotsInPlay:
    """The bots in a game on a single server: its ladder and queue are in this process,
    so the count is ``Holds`` in memory (nothing is ever unknown)."""

    def __init__(self) -> None:
        self.holds = Holds()

    async def busy(self) -> frozenset[str]:
        return self.holds.busy()

    async def take(self, hold: str, *names: str) -> bool:
        if not self.holds.free(names):
            return False
        self.holds.add(hold, names)
        return True

    def keep(self, hold: str, *names: str) -> None:
        self.holds.add(hold, names)

    def release(self, hold: str) -> None:
        self.holds.remove(hold)

    def hand_over(self, hold: str) -> None:
        self.holds.remove(hold)

    def playing(self) -> frozenset[str]:
        return self.holds.playing()

"""Which ladder bot a person who waited plays: a pure choice over the bots that may
play now (``game.registry.BotRegistry.ladder_entrants``: registered, opted in to the
ladder, reachable, not backed off).

``bot_for(bots, rating, busy)`` takes the bot nearest the person's rating among those
not ``busy`` (already playing a person from the queue); ties go to the bot with fewer
games, then by name, so the choice is the same for the same input.

>>> bots = [BotChoice("a", "http://a", 1400.0), BotChoice("b", "http://b", 1650.0)]
>>> bot_for(bots, 1600.0).name, bot_for(bots, 1600.0, busy={"b"}).name
('b', 'a')
>>> bot_for(bots, 1600.0, busy={"a", "b"}) is None
True
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

__all__ = ["BotChoice", "bot_for"]


@dataclass(frozen=True)
class BotChoice:
    """A bot a person may be paired with: its registered ``name``, ``url`` and rating."""

    name: str
    url: str
    rating: float
    games: int = 0


def bot_for(
    bots: Iterable[BotChoice], rating: float, busy: Collection[str] = ()
) -> BotChoice | None:
    """The free bot nearest ``rating`` (see the module docstring), or None."""
    free = [bot for bot in bots if bot.name not in busy]
    if not free:
        return None
    return min(free, key=lambda bot: (abs(bot.rating - rating), bot.games, bot.name))

"""Whether the names a ``POST /game/new`` gives its seats belong to someone else.

People and registered bots share one namespace (``game.registry``): a name is claimed
once, compared case-insensitively, and the leaderboard's link for a player lists the
games recorded under its name. A plain game could otherwise record anybody's name on
any bot (``"name": "SearchBot"`` on RandomBot) and put its result in that player's list.
So a seat's name that belongs to a registered player is refused (422) unless the seat
is that registered bot: a bot seat at the URL the bot is registered at. A person's
name is refused on every seat: a game seat carries no person token to prove it.
A seat without a name is named by the bot's capabilities, as before.
"""

from __future__ import annotations

from game.store import GameStore
from game.store.schema import player_key
from models import NewGameRequest, PlayerConfig, PlayerType

__all__ = ["SeatNameTaken", "check_seat_names"]


class SeatNameTaken(ValueError):
    """A seat's name belongs to a registered player that the seat is not."""


async def check_seat_names(request: NewGameRequest, store: GameStore) -> None:
    """Raise ``SeatNameTaken`` naming the first seat (X before O) whose name is another
    registered player's."""
    for seat, player in (("player_x", request.player_x), ("player_o", request.player_o)):
        problem = await _problem(player, store)
        if problem is not None:
            raise SeatNameTaken(f"{seat}.name: {problem}")


async def _problem(player: PlayerConfig, store: GameStore) -> str | None:
    if player.name is None:
        return None
    key = player_key(player.name)
    claimed = None if key is None else await store.arena.player(key)
    if claimed is None or key is None:
        return None
    if claimed.kind != "bot":
        return f"{claimed.name!r} is a registered person's name; choose another name"
    bot = await store.arena.bot(key)
    if bot is not None and player.type is PlayerType.BOT and player.bot_url == bot.url:
        return None  # the registered bot itself, under its own name
    where = "" if bot is None else f" at {bot.url}"
    return (
        f"{claimed.name!r} is the name of a bot registered{where}; a seat takes it only "
        "as that bot (its registered URL), so name this seat otherwise or leave the name out"
    )

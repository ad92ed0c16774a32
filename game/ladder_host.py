"""How a game server composes its ladder (``game.ladder``): with ``--ladder-hosted-bots``
the hosted example bots are served in the server's process on a loopback port of their
own and registered as the server's own ladder bots (``BotRegistry.register_server_bot``:
no owner token; their URL is brought up to date at every start, as the port changes),
then the scheduler starts. The composition root (``game.server``'s lifespan) calls
``open_ladder`` once and closes what it opened through its exit stack.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping

from bot.bot import BaseBot
from bot.serve import BotPool
from bot.serve import create_app as create_bot_app
from bot.serve import serving as serving_bots
from game.arena_errors import NameTaken
from game.ladder import Ladder, LadderSettings
from game.ladder_games import LadderGames
from game.manager import GameManager
from game.rating_book import RatingBook
from game.registry import BotRegistry

__all__ = ["open_ladder"]

log = logging.getLogger("game.ladder")


async def open_ladder(
    stack: contextlib.AsyncExitStack,
    *,
    manager: GameManager,
    registry: BotRegistry,
    ratings: RatingBook,
    settings: LadderSettings,
    pool: BotPool,
    hosted: Mapping[str, type[BaseBot]] | None = None,
    games: LadderGames | None = None,
) -> Ladder:
    """Serve and register ``hosted`` (ladder name -> bot class), if any, then start the
    ladder; ``stack`` stops the bot server when the server closes (after the games,
    which the runtime's drain aborts first). A hosted bot whose name someone else has
    registered stays off the ladder (logged); the others play."""
    if hosted:
        table = {f"/{name.lower()}": bot_class for name, bot_class in hosted.items()}
        server = await stack.enter_async_context(serving_bots(create_bot_app(table, pool=pool)))
        for name in hosted:
            try:
                bot = await registry.register_server_bot(
                    name,
                    f"{server.url}/{name.lower()}",
                    ladder=True,
                    description=f"the server's own {hosted[name].__name__}",
                )
            except NameTaken as error:  # someone registered it first: the ladder goes on
                log.error("ladder: the hosted bot %s is not on the ladder: %s", name, error)
                continue
            log.info("ladder: hosted bot %s at %s (%s)", bot.name, bot.url, bot.status)
    ladder = Ladder(manager, registry, ratings, settings, games=games)
    ladder.start()
    return ladder

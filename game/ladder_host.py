"""How a game server composes its ladder (``game.ladder``): with ``--ladder-hosted-bots``
the hosted example bots are served in the server's process on a loopback port of their
own and registered as the server's own ladder bots (``BotRegistry.register_server_bot``:
no owner token; their URL is brought up to date at every start, as the port changes),
then the scheduler starts. The composition root (``game.server``'s lifespan) calls
``serve_ladder_bots`` first (their port is one of the server's own, which the address
policy's ``self`` covers: it must be known before the outbound session is made), then
``open_ladder``, and closes what they opened through its exit stack.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping

from bot.bot import BaseBot
from bot.serve import BotPool
from bot.serve import create_app as create_bot_app
from bot.serve import serving as serving_bots
from game.address_policy import AddressPolicy
from game.arena_errors import NameTaken
from game.bots_in_play import BotsInPlay
from game.ladder import Ladder, LadderSettings
from game.ladder_games import LadderGames
from game.ladder_switch import LadderSwitch
from game.manager import GameManager
from game.rating_book import RatingBook
from game.registry import BotRegistry

__all__ = ["LADDER_BOTS_HOST", "ladder_bots_refusal", "open_ladder", "serve_ladder_bots"]

log = logging.getLogger("game.ladder")

#: Where the ladder's hosted bots listen (a free port of it).
LADDER_BOTS_HOST = "127.0.0.1"


def ladder_bots_refusal(policy: AddressPolicy) -> str | None:
    """Why ``policy`` would refuse the ladder's hosted bots, or ``None``: they listen on a
    loopback port of this server's own (``serving_at``), not known yet, so any port
    stands for it; ``loopback`` or ``self`` allows them."""
    unknown_port = 0
    own = policy.serving_at(LADDER_BOTS_HOST, unknown_port)
    return own.problem(LADDER_BOTS_HOST, unknown_port)


async def serve_ladder_bots(
    stack: contextlib.AsyncExitStack, *, pool: BotPool, hosted: Mapping[str, type[BaseBot]]
) -> tuple[str, int]:
    """Serve ``hosted`` (ladder name -> bot class) on a free loopback port until
    ``stack`` closes; their address and port."""
    table = {f"/{name.lower()}": bot_class for name, bot_class in hosted.items()}
    server = await stack.enter_async_context(
        serving_bots(create_bot_app(table, pool=pool), host=LADDER_BOTS_HOST)
    )
    return LADDER_BOTS_HOST, server.port


async def open_ladder(
    *,
    manager: GameManager,
    registry: BotRegistry,
    ratings: RatingBook,
    settings: LadderSettings,
    hosted: Mapping[str, type[BaseBot]] | None = None,
    hosted_at: tuple[str, int] | None = None,
    games: LadderGames | None = None,
    bots_in_play: BotsInPlay | None = None,
    switch: LadderSwitch | None = None,
) -> Ladder:
    """Register ``hosted`` (ladder name -> bot class), if any, served at ``hosted_at``
    (``serve_ladder_bots``: its stack stops them after the games, which the runtime's
    drain aborts first), then start the ladder. A hosted bot whose name someone else
    has registered stays off the ladder (logged); the others play. ``bots_in_play``:
    the bots in a game now, shared with the queue (``game.bots_in_play``); ``switch``:
    whether it is paused (``game.ladder_switch``; a cluster's is shared)."""
    if hosted:
        assert hosted_at is not None, "serve_ladder_bots first"
        host, port = hosted_at
        for name in hosted:
            try:
                bot = await registry.register_server_bot(
                    name,
                    f"http://{host}:{port}/{name.lower()}",
                    ladder=True,
                    description=f"the server's own {hosted[name].__name__}",
                )
            except NameTaken as error:  # someone registered it first: the ladder goes on
                log.error("ladder: the hosted bot %s is not on the ladder: %s", name, error)
                continue
            log.info("ladder: hosted bot %s at %s (%s)", bot.name, bot.url, bot.status)
    ladder = Ladder(
        manager,
        registry,
        ratings,
        settings,
        games=games,
        bots_in_play=bots_in_play,
        switch=switch,
    )
    ladder.start()
    return ladder

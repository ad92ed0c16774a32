"""A bot plays one game at a time, whichever scheduler gave it the game: the ladder and
the people's queue of one server count one set of bots in play (``game.bots_in_play``).
Real servers on 127.0.0.1: the game server with its ladder and ``/queue``, bot servers
registered as ladder bots, a person on the queue's WebSocket.

Every new bot and person is rated 1500, so a person waiting for a bot gets the free one
that has waited longest, then by name: ``alpha`` before ``beta`` before ``gamma``.
Timeouts only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from bot.bots import RandomBot
from bot.serve import create_app as create_bot_app
from bot.serve import serving as serving_bots
from game.ladder import Ladder, LadderSettings
from models import BotRegistration
from tests.silent_bot import silent_bot
from tests.test_queue_server import join, queue, runtime, seat
from tests.test_server import TIMEOUT, Arena, arena, until

#: Quick ladder games: no clock, bots that answer at once.
QUICK = LadderSettings(concurrency=2, rate=6000, time_control="none", seed=1)


async def eventually(done: Callable[[], bool]) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not done():
            await asyncio.sleep(0.02)


async def ladder_games_of(a: Arena, bot: str) -> list[str]:
    """The names of ``bot``'s ladder games, running or over (``ladder: x vs y``)."""
    async with a.http.get(f"{a.base}/games", params={"player": bot, "limit": "200"}) as response:
        assert response.status == 200, await response.text()
        page = await response.json()
    return [item["name"] for item in page["items"] if item["name"].startswith("ladder:")]


def the_ladder(a: Arena) -> Ladder:
    ladder = runtime(a).ladder
    assert ladder is not None
    return ladder


async def test_a_bot_playing_a_person_is_left_out_of_the_ladder_until_that_game_ends(
    tmp_path: Path,
) -> None:
    table = {"/alpha": RandomBot, "/beta": RandomBot, "/gamma": RandomBot}
    async with (
        serving_bots(create_bot_app(table)) as bots,
        arena(tmp_path, ladder=QUICK) as a,
        queue(a) as ws,
    ):
        ladder = the_ladder(a)
        await ladder.pause()  # the person is given a bot first
        for name in ("alpha", "beta", "gamma"):
            await runtime(a).registry.register(BotRegistration(name=name, url=f"{bots.url}/{name}"))
        await join(ws, "ann", bot_after_s=0, time_control="none")
        matched = await until(ws, "matched")
        assert matched["opponent"]["name"] == "alpha"
        async with await seat(a, matched) as game:  # ann sits and does not move
            await ladder.resume()
            # Two games at once may be played, but alpha is in ann's: beta and gamma
            # play, alpha (first in the ladder's line: it never played) does not.
            await eventually(lambda: ladder.games_finished >= 1)
            assert await ladder_games_of(a, "alpha") == []
            assert await ladder_games_of(a, "beta")
            await game.send_str('{"type": "resign"}')
            await until(game, "end")
        # Its game with ann over, alpha is paired again.
        async with asyncio.timeout(TIMEOUT):
            while not await ladder_games_of(a, "alpha"):
                await asyncio.sleep(0.02)


async def test_a_bot_in_a_ladder_game_is_not_given_to_a_person(tmp_path: Path) -> None:
    one_at_a_time = LadderSettings(concurrency=1, rate=6000, time_control="none", seed=1)
    with silent_bot() as silent_url:  # its ladder game lasts while the test looks
        async with (
            serving_bots(create_bot_app({"/beta": RandomBot, "/gamma": RandomBot})) as bots,
            arena(tmp_path, ladder=one_at_a_time) as a,
            queue(a) as ws,
        ):
            ladder = the_ladder(a)
            registry = runtime(a).registry
            await registry.register(BotRegistration(name="alpha", url=silent_url))
            await registry.register(BotRegistration(name="beta", url=f"{bots.url}/beta"))
            await eventually(lambda: len(ladder.live) == 1)  # alpha vs beta, and no more
            [pair] = ladder.live.values()
            assert {pair.x, pair.o} == {"alpha", "beta"}
            await registry.register(BotRegistration(name="gamma", url=f"{bots.url}/gamma"))
            await join(ws, "ann", bot_after_s=0, time_control="none")
            matched = await until(ws, "matched")
            # Not alpha nor beta, in their ladder game: gamma, the one free.
            assert matched["opponent"]["name"] == "gamma"
            assert len(ladder.live) == 1 and ladder.games_started == 1

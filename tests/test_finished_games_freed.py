"""A finished game's objects are freed by reference counting, not left to the cyclic GC.

A game holds callbacks (its recorder's ``on_failed``, its fanout's ``on_drop``, its
seats' frame handlers, an inbound socket's frame writer in the ASGI scope) that hold it
back. Left in place, those cycles keep a finished game's session, board and record
(thousands of objects in a long game) alive until a middle collection of the cyclic
GC, which walks all of it first: pauses of several milliseconds in a busy server. The
game lets go of them when it is over (``RunningGame._release`` and friends).

The games here run over real sockets: the game server and its hosted example bots on
loopback, a SQLite file. The collector is off while they play, so whatever of ours is
in a cycle is still there to be found afterwards.
"""

from __future__ import annotations

import asyncio
import gc
from collections import Counter
from pathlib import Path

import aiohttp

from game.server import create_app, serving

#: Modules whose objects may not be left to the cyclic GC after a game. ``game.limits``
#: is not among them: its HTTP protocol is uvicorn's, whose parser holds it (a cycle of
#: uvicorn's own, a few objects per connection, nothing of a game).
OURS = ("game.", "wire.", "bot.", "models")
UVICORNS = ("game.limits",)
TIMEOUT = 30.0


def ours(objects: list[object]) -> Counter[str]:
    names = (f"{type(o).__module__}.{type(o).__qualname__}" for o in objects)
    return Counter(
        name for name in names if name.startswith(OURS) and not name.startswith(UVICORNS)
    )


class SavedGarbage:
    """What a collection finds unreachable, kept for the test to look at."""

    def __enter__(self) -> list[object]:
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return gc.garbage

    def __exit__(self, *_exc: object) -> None:
        gc.set_debug(0)
        gc.garbage.clear()


async def test_a_finished_bot_game_leaves_nothing_of_ours_to_the_cyclic_gc(
    tmp_path: Path,
) -> None:
    app = create_app(db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}")
    async with serving(app) as server, aiohttp.ClientSession() as http:
        seat = {"type": "bot", "bot_url": f"{server.url}/bots/random"}
        body = {"player_x": seat, "player_o": seat, "match_config": {"turn_limit": 30}}

        async def play() -> None:
            async with http.post(f"{server.url}/game/new", json=body) as response:
                assert response.status == 200, await response.text()
                game_id = (await response.json())["game_id"]
            async with http.get(f"{server.url}/games/{game_id}?wait={TIMEOUT}") as response:
                record = await response.json()
            assert record["result"]["cause"] == "turn_limit", record["result"]
            async with asyncio.timeout(TIMEOUT):  # the game closes its sockets after `end`
                while True:
                    async with http.get(f"{server.url}/health") as response:
                        if (await response.json())["live_games"] == 0:
                            break
                    await asyncio.sleep(0.02)

        await play()  # the first game's lazy imports and caches are not a game's garbage
        await asyncio.sleep(0.1)
        gc.collect()
        gc.disable()
        try:
            for _ in range(2):
                await play()
            await asyncio.sleep(0.1)  # the bots' sockets see their close
            with SavedGarbage() as garbage:
                left = ours(garbage)
        finally:
            gc.enable()
        assert not left, f"left to the cyclic GC: {left.most_common(10)}"

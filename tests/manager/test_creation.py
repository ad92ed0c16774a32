"""Creating a game: the bots are dialled while its record is written, and a game whose
record cannot be written hangs up on them (``GameManager._start``, ``RunningGame.dial``
and ``RunningGame.abandon``).

Real parts: the store's SQLite file, which the test locks and breaks from a connection
of its own (as another process sharing the file could), a bot on a loopback aiohttp
server, the manager's own HTTP client. Nothing is timed: timeouts only stop a broken
test.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import WSMsgType, web

from game.manager import GameManager
from models import NewGameRequest
from tests.loopback_app import serving_app
from tests.manager.harness import TIMEOUT, bot, my_tasks


@dataclass
class Dialled:
    """What a bot saw of the connections made to it."""

    answered: int = 0  # connections whose dialler answered our first ping
    answering: asyncio.Event = field(default_factory=asyncio.Event)
    packets: list[str] = field(default_factory=list)
    close_codes: list[int | None] = field(default_factory=list)
    closed: asyncio.Event = field(default_factory=asyncio.Event)


@asynccontextmanager
async def watched_bot() -> AsyncIterator[tuple[str, Dialled]]:
    """A websocket bot that notes each connection, every packet and how it closed.

    It pings each connection as it opens and counts it once the pong comes back: the
    server then holds the socket and reads it. (Seeing the upgrade is not enough: a dial
    cancelled before the server has read the 101 answer is cut off, a 1006, not closed.)"""
    seen = Dialled()

    async def capabilities(_request: web.Request) -> web.Response:
        return web.json_response({"basic_websocket": {"versions": {"v1-alpha": {}}}})

    async def game(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=False)
        await ws.prepare(request)
        await ws.ping(b"there?")
        async for message in ws:
            if message.type is WSMsgType.PING:
                await ws.pong(message.data)
            elif message.type is WSMsgType.PONG:
                seen.answered += message.data == b"there?"
                seen.answering.set()
            else:
                seen.packets.append(str(message.data))
        seen.close_codes.append(ws.close_code)
        seen.closed.set()
        return ws

    app = web.Application()
    app.router.add_get("/capabilities.json", capabilities)
    app.router.add_get("/bws/v1-alpha/game", game)
    async with serving_app(app) as url:
        yield url, seen


async def test_a_game_whose_record_cannot_be_written_hangs_up_on_the_bot_it_dialled(
    manager: GameManager, store_path: Path
) -> None:
    async with watched_bot() as (bot_url, seen):
        other = sqlite3.connect(store_path, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")  # the store's write waits for this lock
            seat = bot(bot_url)
            creating = asyncio.ensure_future(
                manager.create_game(NewGameRequest(player_x=seat, player_o=seat))
            )
            async with asyncio.timeout(TIMEOUT):  # dialled while the record waits
                while seen.answered < 2:  # both seats dial the one bot
                    await seen.answering.wait()
                    seen.answering.clear()
            assert not creating.done()
            # Under the waiting write, the table goes: the write fails when it gets in.
            other.execute("ALTER TABLE games RENAME TO games_elsewhere")
            other.execute("COMMIT")
            with pytest.raises(Exception, match="games"):
                async with asyncio.timeout(TIMEOUT):
                    await creating
            async with asyncio.timeout(TIMEOUT):
                while len(seen.close_codes) < 2:  # both seats dial the one bot
                    await seen.closed.wait()
                    seen.closed.clear()
            left = my_tasks()
        finally:
            other.close()
    # The bots heard nothing but the close: the game never ran.
    assert seen.packets == [] and seen.close_codes == [1001, 1001]
    assert manager.live_game_ids() == [] and left == []

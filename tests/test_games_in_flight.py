"""Games in flight are bounded by ``--max-games`` alone, not by the outbound connection pool."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
from aiohttp import web

from game.server import create_app, serving
from tests.loopback_app import serving_app

#: More games than aiohttp's default connector limit (100 connections: 50 games of two
#: socket bots) would let start.
GAMES = 60
TIMEOUT = 60.0


async def test_more_games_than_a_default_connection_pool_allows_all_progress(
    tmp_path: Path,
) -> None:
    asked: set[str] = set()
    everyone_asked = asyncio.Event()

    async def capabilities(_request: web.Request) -> web.Response:
        return web.json_response(
            {"basic_websocket": {"versions": {"v1-alpha": {"api_root": "bws/v1-alpha"}}}}
        )

    async def game_socket(request: web.Request) -> web.WebSocketResponse:
        # Takes every packet and never answers: each game waits on O's first request.
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for message in ws:
            packet = json.loads(message.data)
            if packet["type"] == "move_request":
                asked.add(str(id(ws)))
                if len(asked) >= GAMES:
                    everyone_asked.set()
        return ws

    bot = web.Application()
    bot.router.add_get("/capabilities.json", capabilities)
    bot.router.add_get("/bws/v1-alpha/game", game_socket)
    app = create_app(
        db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}",
        max_games_per_client=GAMES,
        host_example_bots=False,
    )
    async with (
        serving_app(bot) as bot_url,
        serving(app) as server,
        aiohttp.ClientSession() as http,
    ):
        seat = {"type": "bot", "bot_url": bot_url}
        body = {"player_x": seat, "player_o": seat, "match_config": {"heartbeat": 60000}}

        async def create() -> None:
            async with http.post(f"{server.url}/game/new", json=body) as response:
                assert response.status == 200, await response.text()

        await asyncio.gather(*(create() for _ in range(GAMES)))
        async with asyncio.timeout(TIMEOUT):
            await everyone_asked.wait()  # every game has both bots seated and O asked
        async with http.get(f"{server.url}/games?status=running&limit=100") as response:
            running = (await response.json())["items"]
        assert len(running) == GAMES

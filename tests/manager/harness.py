"""What the game manager's tests share: the fakes, the scripted bots and the helpers.

The fixtures (``store``, ``http``, ``manager``, ``bots``) are in this directory's
``conftest.py``; other test modules import the helpers from here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
from aiohttp import web
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from bot.bots import RandomBot
from bot.capabilities import Meta
from bot.serve import BotPool, serving
from game.manager import GameManager
from game.rules import Position
from game.seats import ConnectionClosed
from game.session import SessionLimits
from game.store import GameStore
from models import (
    Capabilities,
    GameRecord,
    Match,
    NewGameRequest,
    PlayerConfig,
    PlayerType,
    StatelessCapability,
    StatelessV1Alpha,
    StatelessVersions,
)
from tests.loopback_app import serving_app

TIMEOUT = 30.0  # only against hangs

Json = dict[str, Any]

LIMITS = SessionLimits(no_show_s=1.0, reconnect_s=60.0)


# ------------------------------------------------------------------- fakes


class FakeConnection:
    """An accepted WebSocket, in memory: the test is the client on the other end."""

    def __init__(self, *, reads: bool = True) -> None:
        self._to_server: asyncio.Queue[str | None] = asyncio.Queue()
        self._to_client: asyncio.Queue[str | None] = asyncio.Queue()
        self._reads = reads  # a client that never reads blocks every send
        self._gone = asyncio.Event()
        self.close_code: int | None = None
        self.close_reason: str | None = None

    # The server's side (InboundConnection).
    async def send_text(self, data: str) -> None:
        if self._gone.is_set():
            raise ConnectionClosed("gone")
        if not self._reads:
            await self._gone.wait()
            raise ConnectionClosed("gone")
        await self._to_client.put(data)

    async def receive_text(self) -> str:
        data = await self._to_server.get()
        if data is None:
            raise ConnectionClosed("the client left")
        return data

    async def close(self, code: int, reason: str) -> None:
        if self.close_code is None and not self._gone.is_set():
            self.close_code, self.close_reason = code, reason
        self._gone.set()
        self._to_server.put_nowait(None)
        self._to_client.put_nowait(None)

    # The client's side.
    def say(self, packet: Json) -> None:
        self._to_server.put_nowait(json.dumps(packet))

    def hang_up(self) -> None:
        self._gone.set()
        self._to_server.put_nowait(None)

    async def next(self) -> Json | None:
        """The next packet, or None once the server closed the connection."""
        data = await asyncio.wait_for(self._to_client.get(), TIMEOUT)
        return None if data is None else dict(json.loads(data))

    async def until(self, kind: str) -> Json:
        while True:
            packet = await self.next()
            assert packet is not None, f"closed while waiting for {kind}"
            if packet["type"] == kind:
                return packet

    async def rest(self) -> list[Json]:
        """Every packet until the close."""
        packets: list[Json] = []
        while (packet := await self.next()) is not None:
            packets.append(packet)
        return packets


# ---------------------------------------------------------------- helpers


class StatelessBot(RandomBot):
    """RandomBot that declares only the stateless API."""

    @classmethod
    def capabilities(cls) -> Capabilities:
        return Capabilities(
            meta=Meta(name="StatelessBot"),
            stateless=StatelessCapability(versions=StatelessVersions(v1_alpha=StatelessV1Alpha())),
        )


Script = Callable[[WebSocket, Json], Awaitable[bool]]


@asynccontextmanager
async def scripted_bot(answer: Script | None) -> AsyncIterator[str]:
    """A bot server whose socket answers each ``move_request`` with ``answer`` (which
    returns False to stop reading); ``None``: no socket at all (unreachable)."""

    async def capabilities(request: Request) -> Response:
        return Response(
            '{"meta": {"name": "Scripted"}, "basic_websocket": {"versions": {"v1-alpha": {}}}}',
            media_type="application/json",
        )

    async def game(websocket: WebSocket) -> None:
        assert answer is not None
        await websocket.accept()
        try:
            while True:
                packet = json.loads(await websocket.receive_text())
                if packet["type"] == "move_request" and not await answer(websocket, packet):
                    return
                if packet["type"] == "end":
                    return
        except WebSocketDisconnect:
            return

    routes: list[BaseRoute] = [Route("/capabilities.json", capabilities)]
    if answer is not None:
        routes.append(WebSocketRoute("/bws/v1-alpha/game", game))
    async with serving_routes(routes) as url:
        yield url


@asynccontextmanager
async def serving_routes(routes: Sequence[BaseRoute]) -> AsyncIterator[str]:
    """A stand-in bot made of ``routes``, on 127.0.0.1 for the block (with the bot pool
    that ``bot.serve.serving`` expects of an app): its base URL."""
    app = Starlette(routes=list(routes))
    app.state.bot_pool = pool = BotPool(1)
    try:
        async with serving(app) as server:
            yield server.url
    finally:
        pool.shutdown()


@asynccontextmanager
async def pingless_bot(*, think_s: float, pongs: bool) -> AsyncIterator[str]:
    """A bot (a bare aiohttp server, which answers pings only by hand) that answers each
    move_request with the first two legal cells after ``think_s`` seconds of not reading
    its socket (like a bot computing on its event loop), and pongs each ping it reads
    if ``pongs``."""

    async def capabilities(request: web.Request) -> web.Response:
        return web.json_response({"basic_websocket": {"versions": {"v1-alpha": {}}}})

    async def game(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=False)
        await ws.prepare(request)
        stones: list[tuple[int, int, str]] = []
        async for message in ws:
            if message.type is aiohttp.WSMsgType.PING:
                if pongs:
                    await ws.pong(message.data)
                continue
            packet = json.loads(message.data)
            if packet["type"] == "setup":
                stones = [(c["q"], c["r"], c["p"]) for c in packet["board"]["cells"]]
            if packet["type"] == "move_request":
                await asyncio.sleep(think_s)
                # A spec bot: the board is setup's plus the moves of each previous.
                stones += [
                    (p["q"], p["r"], m["side"]) for m in packet["previous"] for p in m["pieces"]
                ]
                legal = sorted(Position(setup=stones, to_move=packet["side"]).legal_cells())
                await ws.send_str(json.dumps(move(*legal[:2])))
        return ws

    app = web.Application()
    app.add_routes([web.get("/capabilities.json", capabilities)])
    app.add_routes([web.get("/bws/v1-alpha/game", game)])
    async with serving_app(app) as url:
        yield url


def bot(url: str) -> PlayerConfig:
    return PlayerConfig(type=PlayerType.BOT, bot_url=url)


def human(name: str | None = None) -> PlayerConfig:
    return PlayerConfig(type=PlayerType.HUMAN, name=name)


def move(*stones: tuple[int, int]) -> Json:
    return {"type": "move_response", "move": {"pieces": [{"q": q, "r": r} for q, r in stones]}}


async def finished(manager: GameManager, store: GameStore, game_id: str) -> GameRecord:
    """The stored record once the game is over (and no longer live)."""
    async with asyncio.timeout(TIMEOUT):
        while game_id in manager.live_game_ids():
            await asyncio.sleep(0.02)
    record = await store.get_game(game_id)
    assert record is not None and record.result is not None
    return record


async def forfeit_against(
    manager: GameManager, store: GameStore, bots: str, answer: Script | None, **match: Any
) -> GameRecord:
    """O is the scripted bot, X ThreatBot; the finished record."""
    async with scripted_bot(answer) as url:
        request = NewGameRequest(
            player_x=bot(f"{bots}/threat"), player_o=bot(url), match_config=Match(**match)
        )
        created = await manager.create_game(request)
        return await finished(manager, store, created.game_id)


def my_tasks() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("htttx:")]


async def start_humans(manager: GameManager) -> tuple[str, str, str]:
    created = await manager.create_game(
        NewGameRequest(player_x=human("Xena"), player_o=human("Otto"))
    )
    assert created.token_x is not None and created.token_o is not None
    assert created.token_x != created.token_o and len(created.token_x) >= 40
    return created.game_id, created.token_x, created.token_o


async def play_until_o_wins(x: FakeConnection, o: FakeConnection) -> None:
    """O lines up (1,0) ... (6,0) in three moves while X plays up the r axis."""
    for n in range(3):
        await o.until("move_request")
        o.say(move((2 * n + 1, 0), (2 * n + 2, 0)))
        if n < 2:
            await x.until("move_request")
            x.say(move((0, 2 * n + 1), (0, 2 * n + 2)))
    await o.until("end")


def seat(manager: GameManager, token: str, connection: FakeConnection) -> asyncio.Task[None]:
    return asyncio.create_task(manager.play_human(token, connection))


async def seated_humans(
    manager: GameManager,
) -> tuple[str, FakeConnection, FakeConnection, list[asyncio.Task[None]]]:
    """A new human game with both seats taken: its id, X, O and the seats' tasks."""
    game_id, token_x, token_o = await start_humans(manager)
    x, o = FakeConnection(), FakeConnection()
    return game_id, x, o, [seat(manager, token_x, x), seat(manager, token_o, o)]

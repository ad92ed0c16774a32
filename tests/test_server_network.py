"""The game server's network edges under hostile peers, over real sockets on 127.0.0.1:
what a bot's capabilities may contain, what frames a bot, a human or a spectator may
send, how fast, and how many connections a client may hold.

Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp import web

from models import EndCause, Player
from tests.loopback_app import serving_app
from tests.ping_flood import flood
from tests.test_server import Arena, arena, closed, until
from wire.frames import (
    BINARY_FRAME_REFUSED,
    CONTROL_FLOOD_REFUSED,
    CONTROL_FRAME_BURST,
    INVALID_UTF8_REFUSED,
)

Json = dict[str, object]


@asynccontextmanager
async def raw_capabilities_server(body: bytes) -> AsyncIterator[str]:
    """A bot that serves ``body``, as is, for its capabilities."""

    async def capabilities(_request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/capabilities.json", capabilities)
    async with serving_app(app) as url:
        yield url


# ------------------------------------------------------------ capabilities


async def test_capabilities_that_are_not_utf8_are_422_with_the_reason(tmp_path: Path) -> None:
    document = b'{"meta": {"name": "\xff"}, "basic_websocket": {"versions": {"v1-alpha": {}}}}'
    async with raw_capabilities_server(document) as url, arena(tmp_path) as a:
        status, answer = await a.post(
            {"player_x": {"type": "bot", "bot_url": url}, "player_o": a.bot("random")}
        )
        health, _ = await a.get_json("/health")
    assert status == 422
    assert answer["detail"] == (
        f"player_x: {url}/capabilities.json: capabilities.json is not valid UTF-8 (byte 0xff "
        "at offset 19); JSON must be UTF-8"
    )
    assert health == 200


# ------------------------------------------------------------ bad bot frames


@dataclass
class BadBot:
    """A WebSocket bot that plays by the rules until its first move_request, then does
    ``misbehave`` instead of answering. ``received`` is every packet it got."""

    url: str
    received: list[Json] = field(default_factory=list)
    control_frames_sent: int = 0
    close_code: int | None = None


@asynccontextmanager
async def bad_bot(
    misbehave: Callable[[web.WebSocketResponse, BadBot], Coroutine[None, None, None]],
) -> AsyncIterator[BadBot]:
    async def capabilities(_request: web.Request) -> web.Response:
        return web.json_response({"basic_websocket": {"versions": {"v1-alpha": {}}}})

    async def game(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        tasks: set[asyncio.Task[None]] = set()  # misbehaving while it keeps reading
        async for message in ws:
            if message.type is not aiohttp.WSMsgType.TEXT:
                break
            packet: Json = json.loads(message.data)
            bot.received.append(packet)
            if packet["type"] == "move_request" and not tasks:
                tasks.add(asyncio.create_task(misbehave(ws, bot)))
        bot.close_code = ws.close_code
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return ws

    app = web.Application()
    app.router.add_get("/capabilities.json", capabilities)
    app.router.add_get("/bws/v1-alpha/game", game)
    async with serving_app(app) as url:
        bot = BadBot(url)  # the handlers above read it when they run
        yield bot


async def forfeit_of_bad_bot(a: Arena, bot: BadBot) -> str | None:
    """Seat ``bot`` as O (it moves first) against a hosted bot, without a clock; wait for
    the end; check the record says O forfeited for ``protocol_error``. Returns the reason
    of the ``nope`` the bad bot got, if its socket was still open to get one."""
    answer = await a.new_game(
        {"player_x": a.bot("random"), "player_o": {"type": "bot", "bot_url": bot.url}}
    )
    record = await a.finished_record(str(answer["game_id"]))
    assert record.result is not None
    assert record.result.cause is EndCause.PROTOCOL_ERROR
    assert record.result.winner is Player.X
    nopes = [str(packet["reason"]) for packet in bot.received if packet["type"] == "nope"]
    assert len(nopes) <= 1, bot.received
    return nopes[0] if nopes else None


async def send_binary(ws: web.WebSocketResponse, bot: BadBot) -> None:
    move = {"type": "move_response", "move": {"pieces": [{"q": 1, "r": 0}, {"q": 2, "r": 0}]}}
    await ws.send_bytes(json.dumps(move).encode())


async def send_invalid_utf8(ws: web.WebSocketResponse, bot: BadBot) -> None:
    await ws.send_frame(
        b'{"type": "move_response", "x-note": "\xff", '
        b'"move": {"pieces": [{"q": 1, "r": 0}, {"q": 2, "r": 0}]}}',
        aiohttp.WSMsgType.TEXT,
    )


async def flood_pings(ws: web.WebSocketResponse, bot: BadBot) -> None:
    """Pings, as fast as this loop lets the server read them, until it hangs up."""
    with contextlib.suppress(ConnectionError, RuntimeError):
        while not ws.closed and bot.control_frames_sent < 100_000:
            for _ in range(100):
                await ws.ping(b"")
                bot.control_frames_sent += 1
            await asyncio.sleep(0)


async def test_a_bot_sending_a_binary_frame_forfeits_for_protocol_error(tmp_path: Path) -> None:
    async with bad_bot(send_binary) as bot, arena(tmp_path) as a:
        assert await forfeit_of_bad_bot(a, bot) == BINARY_FRAME_REFUSED


async def test_a_bot_sending_invalid_utf8_forfeits_for_protocol_error(tmp_path: Path) -> None:
    async with bad_bot(send_invalid_utf8) as bot, arena(tmp_path) as a:
        nope = await forfeit_of_bad_bot(a, bot)
    # aiohttp fails the connection at once (1007), so the nope may not get through.
    assert nope in (INVALID_UTF8_REFUSED, None)
    assert bot.close_code == 1007


async def test_a_bot_flooding_pings_while_its_move_is_awaited_forfeits(tmp_path: Path) -> None:
    async with bad_bot(flood_pings) as bot, arena(tmp_path) as a:
        assert await forfeit_of_bad_bot(a, bot) == CONTROL_FLOOD_REFUSED
        status, health = await a.get_json("/health")
    assert status == 200 and health["status"] == "ok"
    assert bot.control_frames_sent > CONTROL_FRAME_BURST


# ------------------------------------------------------- bad human and spectator frames


async def human_game(a: Arena) -> tuple[str, aiohttp.ClientWebSocketResponse]:
    """A game with a human as O (to move first) against a hosted bot; its id and the
    human's socket, once the move is asked for."""
    answer = await a.new_game({"player_x": a.bot("random"), "player_o": {"type": "human"}})
    ws = await a.http.ws_connect(f"{a.ws_base}/ws?token={answer['token_o']}")
    await until(ws, "move_request")
    return str(answer["game_id"]), ws


async def test_a_human_sending_a_binary_frame_forfeits_for_protocol_error(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        game_id, ws = await human_game(a)
        await ws.send_bytes(b'{"type": "move_response"}')
        nope = await until(ws, "nope")
        await ws.close()
        record = await a.finished_record(game_id)
    assert nope["reason"] == BINARY_FRAME_REFUSED
    assert record.result is not None and record.result.cause is EndCause.PROTOCOL_ERROR
    assert record.result.winner is Player.X


async def test_a_human_sending_invalid_utf8_forfeits_for_protocol_error(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        game_id, ws = await human_game(a)
        await ws.send_frame(b'{"type": "\xff"}', aiohttp.WSMsgType.TEXT)
        code, reason = await closed(ws)
        record = await a.finished_record(game_id)
    assert (code, reason) == (1007, INVALID_UTF8_REFUSED)
    assert record.result is not None and record.result.cause is EndCause.PROTOCOL_ERROR


async def test_a_human_flooding_pings_is_closed_and_forfeits_for_protocol_error(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        game_id, ws = await human_game(a)
        flooding = asyncio.create_task(flood(ws))
        code, reason = await closed(ws)
        sent = await flooding
        record = await a.finished_record(game_id)
        status, _ = await a.get_json("/health")
    assert (code, reason) == (1008, CONTROL_FLOOD_REFUSED)
    assert sent > CONTROL_FRAME_BURST
    assert record.result is not None and record.result.cause is EndCause.PROTOCOL_ERROR
    assert status == 200


async def spectator(a: Arena) -> aiohttp.ClientWebSocketResponse:
    answer = await a.new_game({"player_x": {"type": "human"}, "player_o": {"type": "human"}})
    ws = await a.http.ws_connect(f"{a.ws_base}/spectate/{answer['game_id']}")
    await until(ws, "setup")
    return ws


async def test_a_spectator_sending_a_binary_frame_is_closed_with_1003(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        ws = await spectator(a)
        await ws.send_bytes(b"hello")
        code, reason = await closed(ws)
    assert code == 1003
    assert reason.startswith(BINARY_FRAME_REFUSED)


async def test_a_spectator_flooding_pings_is_closed(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        ws = await spectator(a)
        flooding = asyncio.create_task(flood(ws))
        code, reason = await closed(ws)
        await flooding
    assert (code, reason) == (1008, CONTROL_FLOOD_REFUSED)

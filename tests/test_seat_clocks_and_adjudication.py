"""Per-seat clocks (and the stall limit a clockless game is told) and resign adjudication
end to end: the game server's app over real sockets on 127.0.0.1 (uvicorn, an ephemeral
port, a real SQLite file), with scripted stand-in bots (Starlette apps on their own
loopback ports).

What a seat or a spectator was told at the end, the routes must already say: the record
is the source of truth. Timeouts only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from bot.serve import BotPool, serving
from game.server import create_app
from game.server import serving as serving_game
from game.session import SessionLimits
from models import GameRecord, Player, TimeControl

Json = dict[str, Any]
Hex = tuple[int, int]
#: A bound against hangs only; nothing here waits that long when it works.
HANG = 30

# Declares move_time_limit, so its move_request says how long it has.
CAPABILITIES = '{"basic_websocket": {"versions": {"v1-alpha": {"move_time_limit": true}}}}'


@asynccontextmanager
async def scripted_bot(
    moves: list[list[Hex]], heuristic: float | None = None, go: asyncio.Event | None = None
) -> AsyncIterator[tuple[str, list[Json]]]:
    """A WebSocket bot that answers its move requests with ``moves`` in order, each with
    ``heuristic`` as its evaluation, and then says nothing (so it runs out of time).
    With ``go``, it waits for that event before its first answer. Yields its URL and
    every packet it got."""
    script = list(moves)
    received: list[Json] = []

    async def capabilities(request: Request) -> Response:
        return Response(CAPABILITIES, media_type="application/json")

    async def game(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            while True:
                packet = json.loads(await websocket.receive_text())
                received.append(packet)
                if packet["type"] != "move_request" or not script:
                    continue
                if go is not None:
                    await go.wait()
                move: Json = {"pieces": [{"q": q, "r": r} for q, r in script.pop(0)]}
                if heuristic is not None:
                    move["evaluation"] = {"heuristic": heuristic}
                await websocket.send_text(json.dumps({"type": "move_response", "move": move}))
        except WebSocketDisconnect:
            return

    app = Starlette(
        routes=[
            Route("/capabilities.json", capabilities),
            WebSocketRoute("/bws/v1-alpha/game", game),
        ]
    )
    app.state.bot_pool = pool = BotPool(1)
    try:
        async with serving(app) as server:
            yield server.url, received
    finally:
        pool.shutdown()


@asynccontextmanager
async def game_server(tmp_path: Path) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    limits = SessionLimits(no_show_s=10.0, stall_s=60.0)
    app = create_app(
        db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}",
        limits=limits,
        host_example_bots=False,
    )
    async with serving_game(app) as server, aiohttp.ClientSession() as http:
        yield server.url, http


async def new_game(http: aiohttp.ClientSession, url: str, body: Json) -> str:
    async with http.post(f"{url}/game/new", json=body) as response:
        answer = await response.json()
        assert response.status == 200, answer
    game_id = answer["game_id"]
    assert isinstance(game_id, str)
    return game_id


async def record_of(http: aiohttp.ClientSession, url: str, game_id: str) -> GameRecord:
    async with http.get(f"{url}/games/{game_id}") as response:
        assert response.status == 200
        return GameRecord.model_validate_json(await response.read())


async def notation_of(http: aiohttp.ClientSession, url: str, game_id: str) -> str:
    async with http.get(f"{url}/games/{game_id}/notation") as response:
        assert response.status == 200
        return await response.text()


async def until_end(packets: list[Json]) -> Json:
    """The ``end`` a stand-in bot gets, once it came."""
    async with asyncio.timeout(HANG):
        while not packets or packets[-1]["type"] != "end":
            await asyncio.sleep(0.01)
    return packets[-1]


def seat(url: str, time_control: str | None = None) -> Json:
    body: Json = {"type": "bot", "bot_url": url}
    if time_control is not None:
        body["time_control"] = TimeControl.parse(time_control).model_dump(mode="json")
    return body


# --------------------------------------------------------------- seat clocks


async def test_a_seat_on_a_tiny_turn_clock_loses_on_time_on_its_own_clock(
    tmp_path: Path,
) -> None:
    # O answers its first move, then not its second: 1 s a move runs out long before
    # X's 60 s + 1 or the server's stall limit (60 s) would.
    async with (
        scripted_bot([[(-1, -1), (-2, -1)]]) as (x_url, x_got),
        scripted_bot([[(1, 1), (2, 1)]]) as (o_url, o_got),
        game_server(tmp_path) as (url, http),
    ):
        body = {"player_x": seat(x_url, "60+1"), "player_o": seat(o_url, "turn=1")}
        game_id = await new_game(http, url, body)
        end = await until_end(o_got)
        record = await record_of(http, url, game_id)
        text = await notation_of(http, url, game_id)

    assert (end["winner"], end["reason"]) == ("x", "forfeit")
    assert end["detail"] == "timeout: o forfeits: o ran out of time"
    assert o_got[-2] == {"type": "nope", "reason": "o ran out of time"}
    o_requests = [p for p in o_got if p["type"] == "move_request"]
    x_requests = [p for p in x_got if p["type"] == "move_request"]
    assert [(r["move_time_limit"], r["clock_o_ms"]) for r in o_requests] == [(1.0, 1000)] * 2
    assert o_requests[0]["clock_x_ms"] == 60_000
    [x_request] = x_requests
    assert (x_request["move_time_limit"], x_request["clock_x_ms"]) == (60.0, 60_000)

    assert record.result is not None
    assert record.result.end_detail == end["detail"]
    assert (record.result.winner, record.result.reason.value) == (Player.X, "forfeit")
    assert record.player_x.time_control == TimeControl.parse("60+1")
    assert record.player_o.time_control == TimeControl.parse("turn=1")
    assert record.match.clock_type == "none"  # the game's own clock timed nobody
    o_move, x_move = record.moves
    assert o_move.clock_ms == 1000  # a turn clock: the whole allowance for the next move
    assert x_move.thinking_ms is not None
    assert x_move.clock_ms == 60_000 - x_move.thinking_ms + 1_000
    assert "timecontrolcross[60+1]" in text
    assert "timecontrolcircle[turn=1]" in text


async def test_a_clockless_game_tells_each_bot_the_stall_limit_it_is_forfeited_by(
    tmp_path: Path,
) -> None:
    # No clock at all: X is bounded by the server's stall limit (60 s here), O by its
    # own stricter one (1 s). Each is told its own as move_time_limit, and O, silent on
    # its second request, forfeits by the limit it was told.
    async with (
        scripted_bot([[(-1, -1), (-2, -1)]]) as (x_url, x_got),
        scripted_bot([[(1, 1), (2, 1)]]) as (o_url, o_got),
        game_server(tmp_path) as (url, http),
    ):
        body = {"player_x": seat(x_url), "player_o": seat(o_url, "stall=1")}
        await new_game(http, url, body)
        end = await until_end(o_got)

    assert end["detail"] == "stall: o forfeits: no answer within the stall limit of 1 s"
    o_requests = [p for p in o_got if p["type"] == "move_request"]
    [x_request] = [p for p in x_got if p["type"] == "move_request"]
    assert [r["move_time_limit"] for r in o_requests] == [1.0, 1.0]
    assert x_request["move_time_limit"] == 60.0
    assert "clock_x_ms" not in x_request  # a limit, not a clock


# -------------------------------------------------------------- adjudication

O_MOVES: list[list[Hex]] = [[(1, 1), (2, 1)], [(-1, 2), (-2, 2)], [(3, -1), (4, -1)]]
X_MOVES: list[list[Hex]] = [[(-1, -1), (-2, -1)], [(1, -2), (2, -2)], [(-3, 1), (-4, 1)]]


async def test_two_bots_agreeing_on_the_winner_are_adjudicated(tmp_path: Path) -> None:
    go = asyncio.Event()  # O's first answer waits for the spectator to be watching
    async with (
        scripted_bot(X_MOVES, heuristic=-0.92) as (x_url, x_got),
        scripted_bot(O_MOVES, heuristic=-0.95, go=go) as (o_url, o_got),
        game_server(tmp_path) as (url, http),
    ):
        body = {
            "player_x": seat(x_url),
            "player_o": seat(o_url),
            "adjudication": {"resign": {"moves": 2, "score": 0.9}},
        }
        game_id = await new_game(http, url, body)
        ws_url = "ws" + url[len("http") :] + f"/spectate/{game_id}"
        async with asyncio.timeout(HANG), http.ws_connect(ws_url) as spectator:
            first = json.loads((await spectator.receive()).data)
            go.set()
            seen = [first] + [json.loads(message.data) async for message in spectator]
        record = await record_of(http, url, game_id)
        text = await notation_of(http, url, game_id)
        await until_end(x_got)
        await until_end(o_got)

    detail = "both bots' evaluations favoured o by at least 0.9 for 2 moves each"
    end = seen[-1]
    assert (seen[0]["type"], end["type"]) == ("setup", "end")
    assert (end["winner"], end["reason"]) == ("o", "win")
    assert end["detail"] == f"adjudication: {detail}"
    updates = [p for p in seen if p["type"] == "board_update"]
    assert [u["evaluation"]["heuristic"] for u in updates] == [-0.95, -0.92, -0.95, -0.92]
    assert updates[-1]["status"] == "o_wins"
    assert x_got[-1] == o_got[-1] == end

    assert record.result is not None
    assert record.result.end_detail == end["detail"]
    assert (record.result.winner, record.result.reason.value, record.result.detail) == (
        Player.O,
        "win",
        detail,
    )
    assert len(record.moves) == 4
    assert "endreason[win]" in text and "cause[adjudication]" in text

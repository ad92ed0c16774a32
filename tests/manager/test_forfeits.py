"""The game manager over real sockets on 127.0.0.1, with a real SQLite file:
how seats forfeit, and a failing store.

Bots are real bot servers (``bot.serve``) hosting the example bots, or small scripted
Starlette apps that misbehave in one way each. Humans and spectators are in-memory
``InboundConnection`` fakes (the server's tests cover the real ``/ws`` route).
Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.websockets import WebSocket

import game.recorder as game_recorder
import game.running as game_running
from game.manager import GameManager
from game.session import SessionLimits
from game.store import GameStore
from models import (
    EndCause,
    Match,
    NewGameRequest,
    Player,
)
from tests.manager.harness import (
    LIMITS,
    TIMEOUT,
    FakeConnection,
    Json,
    bot,
    finished,
    forfeit_against,
    human,
    move,
    pingless_bot,
    play_until_o_wins,
    seat,
    seated_humans,
    serving_routes,
)

# ------------------------------------------------------------- forfeits


async def test_illegal_move_forfeits(manager: GameManager, store: GameStore, bots: str) -> None:
    async def occupied(ws: WebSocket, request: Json) -> bool:
        await ws.send_text(json.dumps(move((0, 0), (1, 0))))
        return True

    record = await forfeit_against(manager, store, bots, occupied)

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.ILLEGAL_MOVE)


async def test_garbage_is_a_protocol_error(
    manager: GameManager, store: GameStore, bots: str
) -> None:
    async def garbage(ws: WebSocket, request: Json) -> bool:
        await ws.send_text("this is not JSON")
        return True

    record = await forfeit_against(manager, store, bots, garbage)

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.PROTOCOL_ERROR)


async def test_a_huge_frame_is_a_protocol_error(
    store: GameStore, http: aiohttp.ClientSession, bots: str
) -> None:
    async def huge(ws: WebSocket, request: Json) -> bool:
        await ws.send_text(" " * 20_000)
        return True

    games = GameManager(store, http, limits=SessionLimits(max_frame_bytes=1000))
    try:
        record = await forfeit_against(games, store, bots, huge)
    finally:
        await games.shutdown()

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.PROTOCOL_ERROR)


async def test_disconnect_mid_game_forfeits_at_once(
    manager: GameManager, store: GameStore, bots: str
) -> None:
    requests = 0

    async def one_move_then_leave(ws: WebSocket, request: Json) -> bool:
        nonlocal requests
        requests += 1
        if requests == 1:
            await ws.send_text(json.dumps(move((1, 0), (2, 0))))
            return True
        await ws.close()
        return False

    # No clock and the default 300 s stall limit: only noticing the drop ends this game.
    record = await forfeit_against(manager, store, bots, one_move_then_leave)

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.DISCONNECT)
    assert len(record.moves) == 2


async def test_a_silent_bot_in_a_game_without_a_clock_stalls(
    store: GameStore, http: aiohttp.ClientSession, bots: str
) -> None:
    async def silent(ws: WebSocket, request: Json) -> bool:
        return True

    limits = SessionLimits(no_show_s=1.0, reconnect_s=60.0, stall_s=0.5)
    games = GameManager(store, http, limits=limits, ping_interval=0.2)
    try:
        record = await forfeit_against(games, store, bots, silent)  # clock_type "none"
    finally:
        await games.shutdown()

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.STALL)


async def test_a_silent_bot_times_out(manager: GameManager, store: GameStore, bots: str) -> None:
    async def silent(ws: WebSocket, request: Json) -> bool:
        return True

    record = await forfeit_against(manager, store, bots, silent, clock_type="turn", clock=0.5)

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.TIMEOUT)


async def test_a_bot_whose_socket_cannot_be_reached_is_a_no_show(
    manager: GameManager, store: GameStore, bots: str
) -> None:
    record = await forfeit_against(manager, store, bots, None)

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.NO_SHOW)
    assert record.moves == []


async def test_a_stateless_bot_answering_http_500_forfeits_with_protocol_error(
    manager: GameManager, store: GameStore, bots: str
) -> None:
    async def capabilities(request: Request) -> Response:
        return Response('{"stateless": {"versions": {"v1-alpha": {}}}}')

    async def turn(request: Request) -> Response:
        return Response("the bot crashed", status_code=500)

    routes = [
        Route("/capabilities.json", capabilities),
        Route("/stateless/v1-alpha/turn", turn, methods=["POST"]),
    ]
    async with serving_routes(routes) as url:
        request = NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=bot(url))
        created = await manager.create_game(request)
        record = await finished(manager, store, created.game_id)

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.PROTOCOL_ERROR)


@asynccontextmanager
async def stateless_bot_behind_a_gateway_with_nothing_behind_it() -> AsyncIterator[str]:
    """A stateless-only bot whose reverse proxy answers every turn with HTTP 503, its
    bot gone: the first two tries at once, the third only when the server has hung up
    on it (the proxy waits for a bot that does not come). A bare HTTP/1.1 server, one
    request a connection. Yields its URL."""
    capabilities = b'{"stateless": {"versions": {"v1-alpha": {}}}}'
    unavailable = b"no bot behind the gateway"
    turns = 0

    def answer(status: bytes, body: bytes) -> bytes:
        return (
            b"HTTP/1.1 %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (status, len(body), body)
        )

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal turns
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            if head.startswith(b"GET /capabilities.json "):
                writer.write(answer(b"200 OK", capabilities))
                return
            turns += 1
            if turns > 2:
                await reader.read()  # until the server hangs up
            writer.write(answer(b"503 Service Unavailable", unavailable))
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def test_a_stateless_bot_never_reached_in_its_time_flags_and_the_record_says_why(
    manager: GameManager, store: GameStore, bots: str
) -> None:
    async with stateless_bot_behind_a_gateway_with_nothing_behind_it() as url:
        request = NewGameRequest(
            player_x=bot(f"{bots}/threat"),
            player_o=bot(url),
            match_config=Match(clock_type="turn", clock=1.0),
        )
        created = await manager.create_game(request)
        record = await finished(manager, store, created.game_id)

    assert record.result is not None
    # The cause is the flag's, as the protocol knows it; its words say the bot was not
    # reached: two tries answered 503 (then the third had no answer in time).
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.TIMEOUT)
    assert record.result.detail == (
        "o forfeits: o ran out of time; its bot was not reached (2 failed tries, the last: "
        f"StatelessHttpError: {url}/stateless/v1-alpha/turn: HTTP 503 (expected 200 with "
        "a move): 'no bot behind the gateway')"
    )
    assert record.result.end_detail == f"timeout: {record.result.detail}"  # `end`'s detail


async def test_a_failing_store_aborts_the_game_not_the_server(
    manager: GameManager, store: GameStore, bots: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store, "add_moves", broken)
    request = NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=bot(f"{bots}/random"))
    created = await manager.create_game(request)

    record = await finished(manager, store, created.game_id)

    assert record.result is not None and record.result.cause is EndCause.ABORTED
    assert record.moves == []
    monkeypatch.undo()  # and the manager still runs games
    again = await manager.create_game(request)
    assert (await finished(manager, store, again.game_id)).result is not None


async def test_a_store_that_cannot_record_the_end_still_ends_the_game(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store, "finish_game", broken)
    game_id, x, o, seats = await seated_humans(manager)
    await play_until_o_wins(x, o)  # O gets `end`, after the recorder gave up
    assert (await x.until("end"))["winner"] == "o"
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    async with asyncio.timeout(TIMEOUT):
        while game_id in manager.live_game_ids():
            await asyncio.sleep(0.02)
    record = await store.get_game(game_id)
    assert record is not None and len(record.moves) == 5 and record.result is None


async def test_a_store_that_hangs_delays_the_end_by_a_bounded_wait(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(game_running, "END_COMMIT_WAIT", 0.2)
    monkeypatch.setattr(game_recorder, "STORE_WAIT", 0.2)
    never = asyncio.Event()

    async def hanging(*args: Any, **kwargs: Any) -> None:
        await never.wait()

    monkeypatch.setattr(store, "finish_game", hanging)
    game_id, x, o, seats = await seated_humans(manager)
    await play_until_o_wins(x, o)
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    async with asyncio.timeout(TIMEOUT):  # and the game lets go of its recorder
        while game_id in manager.live_game_ids():
            await asyncio.sleep(0.02)


@asynccontextmanager
async def against_a_pingless_bot(
    store: GameStore, http: aiohttp.ClientSession, *, think_s: float, pongs: bool
) -> AsyncIterator[tuple[GameManager, str, FakeConnection, asyncio.Task[None]]]:
    """X is a ``pingless_bot``, O a seated human; pings every 0.05 s, pongs due in 0.3 s.
    Yields the manager, the game id, O's connection and O's seat task."""
    games = GameManager(store, http, limits=LIMITS, ping_interval=0.05, pong_timeout=0.3)
    try:
        async with pingless_bot(think_s=think_s, pongs=pongs) as url:
            created = await games.create_game(NewGameRequest(player_x=bot(url), player_o=human()))
            assert created.token_o is not None
            o = FakeConnection()
            yield games, created.game_id, o, seat(games, created.token_o, o)
    finally:
        await games.shutdown()


async def test_an_idle_bot_that_stops_answering_pings_is_disconnected(
    store: GameStore, http: aiohttp.ClientSession
) -> None:
    # O never moves: X only waits, and owes its pongs.
    async with against_a_pingless_bot(store, http, think_s=0, pongs=False) as game:
        games, game_id, o, seated = game
        end = await o.until("end")
        record = await finished(games, store, game_id)
        await asyncio.wait_for(seated, TIMEOUT)
    assert (end["winner"], end["reason"]) == ("o", "forfeit")
    assert record.result is not None and record.result.cause is EndCause.DISCONNECT


async def test_a_bot_owes_no_pong_while_it_thinks(
    store: GameStore, http: aiohttp.ClientSession
) -> None:
    # X thinks twice as long as the pong limit without reading its socket, then pongs
    # the pings that waited: it plays on.
    async with against_a_pingless_bot(store, http, think_s=0.6, pongs=True) as game:
        games, game_id, o, seated = game
        for n in range(2):
            await o.until("move_request")
            o.say(move((2 * n + 1, 3), (2 * n + 2, 3)))
        request = await o.until("move_request")  # X answered twice
        assert [m["side"] for m in request["previous"]] == ["o", "x"]
        assert game_id in games.live_game_ids()
        o.hang_up()
        await asyncio.wait_for(seated, TIMEOUT)

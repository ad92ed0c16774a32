"""The game manager over real sockets on 127.0.0.1, with a real SQLite file.

Bots are real bot servers (``bot.serve``) hosting the example bots, or small scripted
Starlette apps that misbehave in one way each. Humans and spectators are in-memory
``InboundConnection`` fakes (the server's tests cover the real ``/ws`` route).
Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

import game.recorder as game_recorder
import game.running as game_running
import game.session as game_session
import game.spectating as game_spectating
from bot.bots import RandomBot, ThreatBot
from bot.capabilities import Meta
from bot.serve import BotPool, create_app, serving
from game import notation
from game.discovery import DEFAULT_POLICY, NoUsableProtocol
from game.manager import GameManager, TooManyGames, UnknownGame, UnknownToken
from game.reads import encode_setup
from game.rules import Position
from game.running import RunningGame
from game.running_events import Slot
from game.seats import ConnectionClosed
from game.session import GameSession, SeatInfo, SessionLimits
from game.session_packets import board_update
from game.store import GameStore, RecordStatus
from models import (
    BoardUpdatePacket,
    Capabilities,
    EndCause,
    GameRecord,
    Match,
    NewGameRequest,
    Player,
    PlayerConfig,
    PlayerType,
    ResultReason,
    StatelessCapability,
    StatelessV1Alpha,
    StatelessVersions,
    dump_packet,
)
from tests.loopback_app import serving_app

TIMEOUT = 30.0  # only against hangs

Json = dict[str, Any]


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


# ---------------------------------------------------------------- fixtures


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[GameStore]:
    async with await GameStore.open(f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}") as s:
        yield s


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(connector=DEFAULT_POLICY.connector()) as session:
        yield session


LIMITS = SessionLimits(no_show_s=1.0, reconnect_s=60.0)


@pytest.fixture
async def manager(store: GameStore, http: aiohttp.ClientSession) -> AsyncIterator[GameManager]:
    games = GameManager(store, http, limits=LIMITS, ping_interval=0.2)
    yield games
    await games.shutdown()


@pytest.fixture
async def bots() -> AsyncIterator[str]:
    """The example bots and a stateless-only bot on one server: ``<url>/threat`` ..."""
    app = create_app({"/threat": ThreatBot, "/random": RandomBot, "/stateless": StatelessBot})
    async with serving(app) as server:
        yield server.url


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

    routes: list[Any] = [Route("/capabilities.json", capabilities)]
    if answer is not None:
        routes.append(WebSocketRoute("/bws/v1-alpha/game", game))
    app = Starlette(routes=routes)
    pool = BotPool(1)
    app.state.bot_pool = pool
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


# ------------------------------------------------------------- bot games


async def test_bot_game_over_websockets_is_recorded_move_by_move(
    manager: GameManager, store: GameStore, bots: str
) -> None:
    request = NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=bot(f"{bots}/random"))
    created = await manager.create_game(request)
    assert created.token_x is None and created.token_o is None

    record = await finished(manager, store, created.game_id)

    assert record.result is not None and record.result.reason is ResultReason.WIN
    assert record.player_x.name == "ThreatBot" and record.player_o.name == "RandomBot"
    assert [m.side for m in record.moves] == [
        Player.O if i % 2 == 0 else Player.X for i in range(len(record.moves))
    ]
    assert len(await store.move_latencies(created.game_id)) == len(record.moves)
    summary = (await store.list_games(status=RecordStatus.FINISHED)).items[0]
    assert summary.moves == len(record.moves)
    again = notation.loads(notation.dumps(record))
    assert [m.pieces for m in again.moves] == [m.pieces for m in record.moves]
    assert again.result == record.result


async def test_stateless_only_bot_is_played_by_posting_turns(
    manager: GameManager, store: GameStore, bots: str
) -> None:
    request = NewGameRequest(player_x=bot(f"{bots}/stateless"), player_o=bot(f"{bots}/threat"))
    created = await manager.create_game(request)

    record = await finished(manager, store, created.game_id)

    assert record.result is not None and record.result.reason is ResultReason.WIN
    assert any(m.side is Player.X for m in record.moves)
    assert record.player_x.name == "StatelessBot"


async def test_two_stateless_bots_play_without_any_socket(
    manager: GameManager, store: GameStore, bots: str
) -> None:
    url = f"{bots}/stateless"
    request = NewGameRequest(
        player_x=bot(url), player_o=bot(url), match_config=Match(turn_limit=12)
    )
    created = await manager.create_game(request)

    record = await finished(manager, store, created.game_id)

    assert record.result is not None and record.result.reason is not ResultReason.FORFEIT
    assert 0 < len(record.moves) <= 12


async def test_a_bot_that_cannot_be_seated_is_refused_with_the_seat_named(
    manager: GameManager, bots: str
) -> None:
    async def no_api(request: Request) -> Response:
        return Response("{}", media_type="application/json")

    app = Starlette(routes=[Route("/capabilities.json", no_api)])
    app.state.bot_pool = pool = BotPool(1)
    try:
        async with serving(app) as server:
            request = NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=bot(server.url))
            with pytest.raises(NoUsableProtocol, match=r"^player_o: "):
                await manager.create_game(request)
    finally:
        pool.shutdown()
    assert manager.live_game_ids() == []


async def test_one_bot_in_both_seats_is_read_once_and_refused_for_both_seats(
    manager: GameManager,
) -> None:
    fetches = 0

    async def no_api(request: Request) -> Response:
        nonlocal fetches
        fetches += 1
        return Response("{}", media_type="application/json")

    app = Starlette(routes=[Route("/capabilities.json", no_api)])
    app.state.bot_pool = pool = BotPool(1)
    try:
        async with serving(app) as server:
            request = NewGameRequest(player_x=bot(server.url), player_o=bot(server.url))
            with pytest.raises(NoUsableProtocol, match=r"^player_x and player_o: "):
                await manager.create_game(request)
    finally:
        pool.shutdown()
    assert fetches == 1
    assert manager.live_game_ids() == []


async def test_too_many_games_are_refused(store: GameStore, http: aiohttp.ClientSession) -> None:
    games = GameManager(store, http, max_games=1)
    try:
        await games.create_game(NewGameRequest(player_x=human(), player_o=human()))
        with pytest.raises(TooManyGames):
            await games.create_game(NewGameRequest(player_x=human(), player_o=human()))
    finally:
        await games.shutdown()


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
    app = Starlette(routes=routes)
    app.state.bot_pool = pool = BotPool(1)
    try:
        async with serving(app) as server:
            request = NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=bot(server.url))
            created = await manager.create_game(request)
            record = await finished(manager, store, created.game_id)
    finally:
        pool.shutdown()

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.PROTOCOL_ERROR)


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


# ------------------------------------------------------------------ humans


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


async def test_humans_play_reconnect_and_win(manager: GameManager, store: GameStore) -> None:
    game_id, token_x, token_o = await start_humans(manager)
    x, o = FakeConnection(), FakeConnection()
    seats = [seat(manager, token_x, x), seat(manager, token_o, o)]
    await x.until("setup")
    await o.until("setup")
    await o.until("move_request")
    o.say(move((1, 0), (2, 0)))
    await x.until("move_request")
    x.say(move((0, 1), (0, 2)))
    await o.until("move_request")

    # O drops and comes back with the same token: the position, then the request.
    o.hang_up()
    await asyncio.wait_for(seats[1], TIMEOUT)
    o = FakeConnection()
    seats[1] = seat(manager, token_o, o)
    setup = await o.next()
    assert setup is not None and setup["type"] == "setup"
    assert len(setup["board"]["cells"]) == 5
    request = await o.next()
    assert request is not None and request["type"] == "move_request"

    o.say(move((3, 0), (4, 0)))
    await x.until("move_request")
    x.say(move((0, 3), (0, 4)))
    await o.until("move_request")
    o.say(move((5, 0), (6, 0)))

    end_x, end_o = await x.until("end"), await o.until("end")
    assert end_x == end_o
    assert (end_o["winner"], end_o["reason"]) == ("o", "win")
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    assert x.close_code == 1000 and o.close_code == 1000
    record = await finished(manager, store, game_id)
    assert len(record.moves) == 5
    assert record.player_x.name == "Xena"


async def until_stored(store: GameStore, game_id: str, moves: int) -> None:
    """Wait until the store holds ``moves`` moves of the game."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            record = await store.get_game(game_id)
            assert record is not None
            if len(record.moves) >= moves:
                return
            await asyncio.sleep(0.01)


def count_commits(store: GameStore, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of moves of each ``add_moves`` call (each is one transaction) from now
    on; the calls still reach the real store."""
    commits: list[int] = []
    add_moves = store.add_moves

    async def counted(game_id: str, first_index: int, moves: Any) -> None:
        commits.append(len(moves))
        await add_moves(game_id, first_index, moves)

    monkeypatch.setattr(store, "add_moves", counted)
    return commits


async def test_moves_are_committed_in_groups_and_the_end_commits_at_once(
    store: GameStore, http: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    commits = count_commits(store, monkeypatch)
    # An hour between commits: only what the group commit itself decides is committed.
    games = GameManager(store, http, limits=LIMITS, commit_interval=3600)
    try:
        game_id, x, o, seats = await seated_humans(games)
        await o.until("move_request")
        o.say(move((1, 0), (2, 0)))
        # The first move after a quiet spell is committed at once...
        await until_stored(store, game_id, 1)
        # ... the next ones wait for the next commit, an hour away ...
        await x.until("move_request")
        x.say(move((0, 1), (0, 2)))
        await o.until("move_request")
        o.say(move((3, 0), (4, 0)))
        await x.until("move_request")
        x.say(move((0, 3), (0, 4)))
        await o.until("move_request")
        o.say(move((5, 0), (6, 0)))
        await o.until("end")
        # ... but the end commits them at once, all together.
        record = await finished(games, store, game_id)
        assert commits == [1, 4]
        assert len(record.moves) == 5 and record.result is not None
        assert record.result.winner is Player.O
        await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    finally:
        await games.shutdown()


async def test_without_a_commit_interval_each_move_is_committed_alone(
    store: GameStore, http: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    commits = count_commits(store, monkeypatch)
    games = GameManager(store, http, limits=LIMITS, commit_interval=0)
    try:
        game_id, x, o, seats = await seated_humans(games)
        for stored, (side, stones) in enumerate(
            [(o, ((1, 0), (2, 0))), (x, ((0, 1), (0, 2))), (o, ((3, 0), (4, 0)))], start=1
        ):
            await side.until("move_request")
            side.say(move(*stones))
            await until_stored(store, game_id, stored)
        assert commits == [1, 1, 1]
        for connection in (x, o):
            connection.hang_up()
        await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    finally:
        await games.shutdown()


async def test_a_stop_commits_the_moves_waiting_for_their_group(
    store: GameStore, http: aiohttp.ClientSession
) -> None:
    games = GameManager(store, http, limits=LIMITS, commit_interval=3600)
    game_id, x, o, seats = await seated_humans(games)
    await o.until("move_request")
    o.say(move((1, 0), (2, 0)))
    await x.until("move_request")
    x.say(move((0, 1), (0, 2)))
    await o.until("move_request")

    await asyncio.wait_for(games.shutdown(), TIMEOUT)

    record = await store.get_game(game_id)
    assert record is not None and len(record.moves) == 2
    assert record.result is not None and record.result.cause is EndCause.ABORTED
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)


@pytest.mark.parametrize(
    ("setting", "message"),
    [("commit_interval", "0 or more seconds"), ("pong_timeout", "more than 0 seconds")],
)
@pytest.mark.parametrize("value", [-0.001, float("nan"), float("inf")])
def test_the_managers_intervals_must_be_finite_numbers_of_seconds(
    store: GameStore, http: aiohttp.ClientSession, setting: str, message: str, value: float
) -> None:
    settings: dict[str, Any] = {setting: value}
    with pytest.raises(ValueError, match=f"^{setting} must be {message}, got"):
        GameManager(store, http, **settings)


def test_a_pong_timeout_of_zero_is_refused(store: GameStore, http: aiohttp.ClientSession) -> None:
    with pytest.raises(ValueError, match="pong_timeout must be more than 0 seconds"):
        GameManager(store, http, pong_timeout=0)


async def test_a_second_connection_with_the_token_takes_the_seat_over(
    manager: GameManager,
) -> None:
    _game_id, token_x, token_o = await start_humans(manager)
    x, o = FakeConnection(), FakeConnection()
    seats = [seat(manager, token_x, x), seat(manager, token_o, o)]
    await o.until("move_request")

    again = FakeConnection()
    seats.append(seat(manager, token_o, again))
    assert (await again.next() or {}).get("type") == "setup"
    assert (await again.next() or {}).get("type") == "move_request"
    await asyncio.wait_for(seats[1], TIMEOUT)
    assert o.close_code == 1008

    again.say(move((1, 0), (2, 0)))
    request = await x.until("move_request")
    assert request["previous"][-1]["pieces"] == [{"q": 1, "r": 0}, {"q": 2, "r": 0}]


async def test_a_human_who_does_not_come_back_forfeits_with_disconnect(
    store: GameStore, http: aiohttp.ClientSession
) -> None:
    games = GameManager(store, http, limits=SessionLimits(reconnect_s=0.2))
    try:
        game_id, x, o, seats = await seated_humans(games)
        await o.until("move_request")
        o.hang_up()
        end = await x.until("end")
        await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
        record = await finished(games, store, game_id)
    finally:
        await games.shutdown()
    assert (end["winner"], end["reason"], end["detail"].partition(": ")[0]) == (
        "x",
        "forfeit",
        "disconnect",
    )
    assert end["detail"].endswith("did not reconnect within 0.2 s")
    assert record.result is not None and record.result.cause is EndCause.DISCONNECT


async def test_a_human_plays_a_bot(manager: GameManager, store: GameStore, bots: str) -> None:
    created = await manager.create_game(
        NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=human())
    )
    assert created.token_o is not None and created.token_x is None
    o = FakeConnection()
    seated = seat(manager, created.token_o, o)
    await o.until("setup")
    await o.until("move_request")
    o.say(move((1, 0), (2, 0)))

    request = await o.until("move_request")

    assert [m["side"] for m in request["previous"]] == ["o", "x"]
    assert len(request["board"]["cells"]) == 5
    await manager.shutdown()
    await asyncio.wait_for(seated, TIMEOUT)
    record = await store.get_game(created.game_id)
    assert record is not None and len(record.moves) == 2


async def test_an_error_in_a_game_task_aborts_that_game_only(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(packet: BaseModel) -> bytes:
        if getattr(packet, "type", None) == "move_request":  # X's, after O's move
            raise RuntimeError("a bug")
        return dump_packet(packet)

    game_id, x, o, seats = await seated_humans(manager)
    await o.until("move_request")
    monkeypatch.setattr(game_running, "dump_packet", failing)
    o.say(move((1, 0), (2, 0)))

    end = await x.until("end")
    assert (end["winner"], end["detail"].partition(": ")[0]) == (None, "aborted")
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    record = await finished(manager, store, game_id)
    assert record.result is not None and record.result.cause is EndCause.ABORTED
    monkeypatch.undo()
    assert await manager.create_game(NewGameRequest(player_x=human(), player_o=human()))


async def test_an_unknown_token_is_refused_with_1008(manager: GameManager) -> None:
    connection = FakeConnection()
    with pytest.raises(UnknownToken):
        await manager.play_human("not-a-token", connection)
    assert connection.close_code == 1008


async def test_a_token_is_used_up_when_its_game_ends(
    manager: GameManager, store: GameStore
) -> None:
    game_id, token_x, _token_o = await start_humans(manager)
    await manager.shutdown()
    await finished(manager, store, game_id)
    with pytest.raises(UnknownToken):
        await manager.play_human(token_x, FakeConnection())


# -------------------------------------------------------------- spectators


async def test_a_late_spectator_gets_the_whole_history_then_every_move(
    manager: GameManager, store: GameStore
) -> None:
    game_id, x, o, seats = await seated_humans(manager)
    await o.until("move_request")
    o.say(move((1, 0), (2, 0)))
    await x.until("move_request")
    x.say(move((0, 1), (0, 2)))
    await o.until("move_request")

    watcher = FakeConnection()
    watching = asyncio.create_task(manager.spectate(game_id, watcher))
    setup = await watcher.next()
    assert setup is not None and setup["type"] == "setup"
    assert setup["game_id"] == game_id and len(setup["moves"]) == 2
    assert setup["player_x"]["name"] == "Xena" and setup["to_move"] == "o"

    o.say(move((3, 0), (4, 0)))
    await x.until("move_request")
    x.hang_up()  # X gives up: with a reconnect window; shutdown ends it below
    update = await watcher.next()
    assert update is not None and update["type"] == "board_update"
    assert update["move"]["pieces"] == [{"q": 3, "r": 0}, {"q": 4, "r": 0}]

    await manager.shutdown()
    rest = await watcher.rest()
    assert [p["type"] for p in rest] == ["end"]
    assert rest[0]["detail"].partition(": ")[0] == "aborted"
    await asyncio.wait_for(asyncio.gather(watching, *seats), TIMEOUT)
    assert watcher.close_code == 1000


async def test_spectators_joining_a_long_game_at_one_position_share_one_setup_encode(
    manager: GameManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every setup counts as long here, so it is encoded off the loop.
    monkeypatch.setattr(game_running, "INLINE_ENCODE_MOVES", -1)
    encodes: list[int] = []

    def counting(setup: Any) -> bytes:
        encodes.append(len(setup.moves))
        return encode_setup(setup)

    monkeypatch.setattr(game_running, "encode_setup", counting)
    game_id, _x, o, seats = await seated_humans(manager)
    await o.until("move_request")
    watchers = [FakeConnection() for _ in range(10)]
    watching = [asyncio.create_task(manager.spectate(game_id, w)) for w in watchers]
    setups = [await w.next() for w in watchers]
    assert all(s is not None and s["type"] == "setup" for s in setups)
    assert encodes == [0]

    o.say(move((1, 0), (2, 0)))  # a new position: a new setup for the next spectator
    for watcher in watchers:
        assert (await watcher.until("board_update"))["move"]["side"] == "o"
    late = FakeConnection()
    watching.append(asyncio.create_task(manager.spectate(game_id, late)))
    late_setup = await late.next()
    assert late_setup is not None and len(late_setup["moves"]) == 1
    assert encodes == [0, 1]
    await manager.shutdown()
    await asyncio.wait_for(asyncio.gather(*watching, *seats), TIMEOUT)


async def test_a_spectator_joining_while_the_end_is_committed_gets_the_end(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The game is decided, but its `end` waits for the store: a spectator joining then
    # sees the final position, then the `end` (not a close without it).
    release = asyncio.Event()
    committing = asyncio.Event()
    finish_game = store.finish_game

    async def slow(*args: Any, **kwargs: Any) -> None:
        committing.set()
        await release.wait()
        await finish_game(*args, **kwargs)

    monkeypatch.setattr(store, "finish_game", slow)
    game_id, x, o, seats = await seated_humans(manager)
    winning = asyncio.create_task(play_until_o_wins(x, o))
    await asyncio.wait_for(committing.wait(), TIMEOUT)
    watcher = FakeConnection()
    watching = asyncio.create_task(manager.spectate(game_id, watcher))
    setup = await watcher.next()
    assert setup is not None and setup["type"] == "setup" and len(setup["moves"]) == 5
    release.set()
    rest = await watcher.rest()
    assert [p["type"] for p in rest] == ["end"] and rest[0]["winner"] == "o"
    await asyncio.wait_for(asyncio.gather(winning, watching, *seats), TIMEOUT)


async def test_a_slow_spectator_is_dropped_and_the_game_goes_on(
    store: GameStore, http: aiohttp.ClientSession, bots: str
) -> None:
    games = GameManager(store, http, spectator_queue=2)
    try:
        game_id, token_x, token_o = await start_humans(games)
        slow = FakeConnection(reads=False)
        watching = asyncio.create_task(games.spectate(game_id, slow))
        x, o = FakeConnection(), FakeConnection()
        seats = [seat(games, token_x, x), seat(games, token_o, o)]
        await play_until_o_wins(x, o)
        await asyncio.wait_for(watching, TIMEOUT)
        assert slow.close_code == 1008 and slow.close_reason is not None
        assert "too slow" in slow.close_reason
        record = await finished(games, store, game_id)
        await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    finally:
        await games.shutdown()
    assert record.result is not None
    assert (record.result.winner, record.result.reason) == (Player.O, ResultReason.WIN)


async def test_a_spectator_taking_no_data_is_closed_after_the_send_limit(
    manager: GameManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(game_spectating, "DEFAULT_SEND_TIMEOUT", 0.2)
    game_id, _token_x, _token_o = await start_humans(manager)
    stuck = FakeConnection(reads=False)  # its first send (the setup) never ends

    await asyncio.wait_for(manager.spectate(game_id, stuck), TIMEOUT)

    assert stuck.close_code == 1008 and stuck.close_reason is not None
    assert stuck.close_reason.startswith("too slow: an update took 0.2 s or more")
    assert game_id in manager.live_game_ids()  # nobody has moved: the game goes on


def count_encodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The type of every packet the manager encodes from now on (still encoded)."""
    encoded: list[str] = []

    def counting(packet: BaseModel) -> bytes:
        encoded.append(getattr(packet, "type", type(packet).__name__))
        return dump_packet(packet)

    monkeypatch.setattr(game_running, "dump_packet", counting)
    return encoded


async def test_many_spectators_cost_one_encode_per_update(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded = count_encodes(monkeypatch)
    game_id, token_x, token_o = await start_humans(manager)
    watchers = [FakeConnection() for _ in range(200)]
    watching = [asyncio.create_task(manager.spectate(game_id, w)) for w in watchers]
    for watcher in watchers:
        assert (await watcher.next() or {}).get("type") == "setup"
    x, o = FakeConnection(), FakeConnection()
    seats = [seat(manager, token_x, x), seat(manager, token_o, o)]

    await play_until_o_wins(x, o)

    for watcher in watchers:
        assert [p["type"] for p in await watcher.rest()] == ["board_update"] * 5 + ["end"]
    assert encoded.count("board_update") == 5
    await asyncio.wait_for(asyncio.gather(*watching, *seats), TIMEOUT)
    await finished(manager, store, game_id)


async def test_an_unwatched_game_encodes_no_update_but_keeps_its_end_for_latecomers(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded = count_encodes(monkeypatch)
    game_id, x, o, seats = await seated_humans(manager)

    await play_until_o_wins(x, o)
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)

    assert "board_update" not in encoded
    record = await finished(manager, store, game_id)
    assert len(record.moves) == 5
    late = FakeConnection()
    await asyncio.wait_for(manager.spectate(game_id, late), TIMEOUT)
    assert [p["type"] for p in await late.rest()] == ["setup", "end"]


async def test_an_unwatched_game_builds_no_board_update(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[BoardUpdatePacket] = []

    def counting(*args: Any, **kwargs: Any) -> BoardUpdatePacket:
        built.append(board_update(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(game_session, "board_update", counting)
    game_id, x, o, seats = await seated_humans(manager)

    await play_until_o_wins(x, o)
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)

    assert built == []  # not built, so no board copied, move after move
    assert len((await finished(manager, store, game_id)).moves) == 5


async def test_spectating_a_finished_game_gives_its_snapshot_then_end(
    manager: GameManager, store: GameStore, bots: str
) -> None:
    request = NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=bot(f"{bots}/random"))
    created = await manager.create_game(request)
    record = await finished(manager, store, created.game_id)

    watcher = FakeConnection()
    await manager.spectate(created.game_id, watcher)

    packets = await watcher.rest()
    assert [p["type"] for p in packets] == ["setup", "end"]
    setup, end = packets
    assert len(setup["moves"]) == len(record.moves)
    assert len(setup["board"]["cells"]) == 1 + sum(len(m.pieces) for m in record.moves)
    assert end["reason"] == "win" and end["board"] == setup["board"]
    assert watcher.close_code == 1000


async def test_spectating_an_unknown_game_is_refused(manager: GameManager) -> None:
    watcher = FakeConnection()
    with pytest.raises(UnknownGame):
        await manager.spectate("no-such-game", watcher)
    assert watcher.close_code == 1008


# ---------------------------------------------------------------- shutdown


async def test_shutdown_aborts_running_games_and_leaves_no_task(
    manager: GameManager, store: GameStore, bots: str
) -> None:
    silent_game = NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=human())
    created = [
        await manager.create_game(NewGameRequest(player_x=human(), player_o=human())),
        await manager.create_game(silent_game),
    ]
    token = created[0].token_o
    assert token is not None
    o = FakeConnection()
    seated = seat(manager, token, o)
    await asyncio.sleep(0)

    await manager.shutdown()

    assert manager.live_game_ids() == []
    for game in created:
        record = await store.get_game(game.game_id)
        assert record is not None and record.result is not None
        assert record.result.cause is EndCause.ABORTED
    assert await store.count_games(status=RecordStatus.ABORTED) == 2
    await asyncio.wait_for(seated, TIMEOUT)
    end = (await o.rest())[-1]
    assert (end["type"], end["winner"], end["detail"].partition(": ")[0]) == (
        "end",
        None,
        "aborted",
    )
    assert o.close_code == 1001
    assert my_tasks() == []
    with pytest.raises(Exception, match="shutting down"):
        await manager.create_game(NewGameRequest(player_x=human(), player_o=human()))


async def test_a_game_sets_its_alarm_again_only_when_the_deadline_comes_earlier(
    manager: GameManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = GameSession(
        "alarm",
        Match(),
        {side: SeatInfo("human") for side in Player},
        started_at=asyncio.get_running_loop().time(),
    )
    game = RunningGame(manager, session, {side: Slot(SeatInfo("human")) for side in Player})
    now = asyncio.get_running_loop().time()

    game._set_alarm(now + 5)
    first = game._alarm
    game._set_alarm(now + 6)  # later: the alarm set rings first, that is enough
    assert game._alarm is first
    game._set_alarm(now + 0.01)  # earlier: set again
    assert game._alarm is not first and first is not None and first.cancelled()

    await asyncio.sleep(0.05)  # it rang: the game task would wake and look
    assert game._alarm is None and len(game._inbox) == 1

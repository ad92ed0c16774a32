"""The game manager over real sockets on 127.0.0.1, with a real SQLite file:
bot games, and the manager's shutdown.

Bots are real bot servers (``bot.serve``) hosting the example bots, or small scripted
Starlette apps that misbehave in one way each. Humans and spectators are in-memory
``InboundConnection`` fakes (the server's tests cover the real ``/ws`` route).
Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bot.serve import BotPool, serving
from game import notation
from game.discovery import NoUsableProtocol
from game.manager import GameManager, TooManyGames
from game.running import RunningGame
from game.running_events import Slot
from game.session import GameSession, SeatInfo
from game.store import GameStore, RecordStatus
from models import (
    EndCause,
    Match,
    NewGameRequest,
    Player,
    ResultReason,
)
from tests.manager.harness import (
    TIMEOUT,
    FakeConnection,
    bot,
    finished,
    human,
    my_tasks,
    seat,
)

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

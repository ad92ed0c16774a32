"""How games end, over real sockets on 127.0.0.1 with a real SQLite file: a bot's lone
winning stone, the reason of every forfeit, the stall limit under any clock.

The bots are scripted Starlette apps (``tests.test_manager.scripted_bot`` for the
WebSocket API, ``stateless_bot`` here for the stateless one) that play fixed moves.
Timeouts only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.websockets import WebSocket

from bot.serve import BotPool, serving
from game import notation
from game.discovery import DEFAULT_POLICY
from game.manager import GameManager
from game.session import SessionLimits
from game.store import GameStore
from models import EndCause, GameRecord, Match, NewGameRequest, Player, ResultReason
from tests.test_manager import Json, bot, finished, move, scripted_bot

Hex = tuple[int, int]

# With three in a row to win: O makes two, X plays elsewhere, O's next stone wins alone.
O_OPENING: list[Hex] = [(1, 1), (2, 1)]
X_ELSEWHERE: list[Hex] = [(-1, -1), (-2, -1)]
O_WINNING_STONE: Hex = (3, 1)
THREE_IN_A_ROW = Match(win_distance=3)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[GameStore]:
    async with await GameStore.open(f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}") as s:
        yield s


@pytest.fixture
async def manager(store: GameStore) -> AsyncIterator[GameManager]:
    async with aiohttp.ClientSession(connector=DEFAULT_POLICY.connector()) as http:
        games = GameManager(store, http, limits=SessionLimits(no_show_s=5.0), ping_interval=0.2)
        try:
            yield games
        finally:
            await games.shutdown()


def plays(*moves: list[Hex]) -> Any:
    """A scripted socket bot's answer: the given moves, one per ``move_request``."""
    script = list(moves)

    async def answer(ws: WebSocket, request: Json) -> bool:
        await ws.send_text(json.dumps(move(*script.pop(0))))
        return True  # reads on until the end: leaving would be a forfeit

    return answer


@asynccontextmanager
async def stateless_bot(*moves: list[Hex]) -> AsyncIterator[str]:
    """A stateless-only bot that answers each ``POST .../turn`` with the next move."""
    script = list(moves)

    async def capabilities(request: Request) -> Response:
        return Response('{"stateless": {"versions": {"v1-alpha": {}}}}')

    async def turn(request: Request) -> Response:
        pieces = [{"q": q, "r": r} for q, r in script.pop(0)]
        return Response(json.dumps({"move": {"pieces": pieces}}), media_type="application/json")

    routes = [
        Route("/capabilities.json", capabilities),
        Route("/stateless/v1-alpha/turn", turn, methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.state.bot_pool = pool = BotPool(1)
    try:
        async with serving(app) as server:
            yield server.url
    finally:
        pool.shutdown()


async def play(
    manager: GameManager, store: GameStore, x_url: str, o_url: str, match: Match
) -> GameRecord:
    request = NewGameRequest(player_x=bot(x_url), player_o=bot(o_url), match_config=match)
    created = await manager.create_game(request)
    return await finished(manager, store, created.game_id)


# ------------------------------------------------------------ a lone winning stone


async def test_a_socket_bot_wins_with_its_winning_first_stone_alone(
    manager: GameManager, store: GameStore
) -> None:
    async with (
        scripted_bot(plays(X_ELSEWHERE)) as x_url,
        scripted_bot(plays(O_OPENING, [O_WINNING_STONE])) as o_url,
    ):
        record = await play(manager, store, x_url, o_url, THREE_IN_A_ROW)

    assert record.result is not None
    assert (record.result.winner, record.result.reason) == (Player.O, ResultReason.WIN)
    assert [m.pieces[0].as_tuple() for m in record.moves[-1:]] == [O_WINNING_STONE]
    assert len(record.moves[-1].pieces) == 1
    assert notation.dumps(record).splitlines()[-1] == "3. [3,1] [/];"


async def test_a_stateless_bot_wins_with_its_winning_first_stone_alone(
    manager: GameManager, store: GameStore
) -> None:
    async with (
        stateless_bot(X_ELSEWHERE) as x_url,
        stateless_bot(O_OPENING, [O_WINNING_STONE]) as o_url,
    ):
        record = await play(manager, store, x_url, o_url, THREE_IN_A_ROW)

    assert record.result is not None
    assert (record.result.winner, record.result.reason) == (Player.O, ResultReason.WIN)
    assert [len(m.pieces) for m in record.moves] == [2, 2, 1]
    assert notation.dumps(record).splitlines()[-1] == "3. [3,1] [/];"


@pytest.mark.parametrize("transport", ["socket", "stateless"])
async def test_a_lone_stone_that_does_not_win_is_a_protocol_error(
    manager: GameManager, store: GameStore, transport: str
) -> None:
    o_bot = scripted_bot(plays([(1, 1)])) if transport == "socket" else stateless_bot([(1, 1)])
    async with scripted_bot(plays(X_ELSEWHERE)) as x_url, o_bot as o_url:
        record = await play(manager, store, x_url, o_url, THREE_IN_A_ROW)

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.PROTOCOL_ERROR)
    assert record.moves == []

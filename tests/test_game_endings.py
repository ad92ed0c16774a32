"""How games end, over real sockets on 127.0.0.1 with a real SQLite file: a bot's lone
winning stone, the reason of every forfeit, the stall limit under any clock, why a bot
never came.

The bots are scripted Starlette apps (``socket_bot`` for the WebSocket API,
``stateless_bot`` for the stateless one) that give fixed answers. Timeouts only stop a
broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from enum import Enum
from pathlib import Path
from typing import TypeAlias

import aiohttp
import pytest
from aiohttp import web
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from game import notation
from game.discovery import DEFAULT_POLICY, CannotLearnRules
from game.manager import GameManager
from game.server import create_app
from game.server import serving as serving_game
from game.session import SessionLimits
from game.store import GameStore
from models import (
    MAX_HOSTED_CLOCK_SECONDS,
    EndCause,
    GameRecord,
    Match,
    Move,
    NewGameRequest,
    Player,
    ResultReason,
)
from tests.loopback_app import serving_app
from tests.manager.harness import Json, bot, finished, move, serving_routes

Hex = tuple[int, int]

# With three in a row to win: O makes two, X plays elsewhere, O's next stone wins alone.
O_OPENING: list[Hex] = [(1, 1), (2, 1)]
X_ELSEWHERE: list[Hex] = [(-1, -1), (-2, -1)]
O_WINNING_STONE: Hex = (3, 1)
THREE_IN_A_ROW = Match(win_distance=3)
BWS_TOLD_THE_RULES = (
    '{"basic_websocket": {"versions": {"v1-alpha": {"config": {"x-match": true}}}}}'
)
# A stateless bot cannot be told rules (check_seats refuses it THREE_IN_A_ROW): under
# the standard ones, an opening leaves O five in a row, (1, 1) to (5, 1), and O to move.
O_FIVE = [
    Move.model_validate({"side": side, "pieces": [{"q": q, "r": r} for q, r in stones]})
    for side, stones in [
        ("o", [(1, 1), (2, 1)]),
        ("x", [(-1, -1), (-2, -1)]),
        ("o", [(3, 1), (4, 1)]),
        ("x", [(-1, -3), (-2, -3)]),
        ("o", [(5, 1), (1, 3)]),
        ("x", [(-3, -3), (-4, -3)]),
    ]
]
O_SIXTH_STONE: Hex = (6, 1)


# ------------------------------------------------------------------- helpers


class Do(Enum):
    """A bot's answer other than a move or a frame."""

    SILENT = "say nothing"
    HANG_UP = "close the socket"
    REFUSE = "close the socket with 1008 and a reason"


SocketAnswer: TypeAlias = list[Hex] | str | Do
StatelessAnswer: TypeAlias = list[Hex] | Response | Do


@asynccontextmanager
async def socket_bot(*answers: SocketAnswer) -> AsyncIterator[tuple[str, list[Json]]]:
    """A bot whose socket answers each ``move_request`` with the next of ``answers``: a
    move (its stones), a raw frame, or a ``Do``. Yields its URL and every packet it got.
    Without ``answers`` it has no socket at all (it never connects)."""
    script = list(answers)
    received: list[Json] = []

    async def capabilities(request: Request) -> Response:
        # Told the game's rules (x-match), as THREE_IN_A_ROW needs; it ignores `config`.
        return Response(BWS_TOLD_THE_RULES)

    async def game(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            while True:
                packet = json.loads(await websocket.receive_text())
                received.append(packet)
                if packet["type"] != "move_request":
                    continue
                answer = script.pop(0)
                if answer is Do.HANG_UP:
                    await websocket.close()
                    return
                if answer is Do.REFUSE:
                    await websocket.close(1008, "impossible board: \u202ea test")
                    return
                if isinstance(answer, str):
                    await websocket.send_text(answer)
                elif isinstance(answer, list):
                    await websocket.send_text(json.dumps(move(*answer)))
        except WebSocketDisconnect:
            return

    routes: list[Route | WebSocketRoute] = [Route("/capabilities.json", capabilities)]
    if script:
        routes.append(WebSocketRoute("/bws/v1-alpha/game", game))
    async with serving_routes(routes) as url:
        yield url, received


@asynccontextmanager
async def stateless_bot(*answers: StatelessAnswer) -> AsyncIterator[str]:
    """A stateless-only bot that answers each ``POST .../turn`` with the next of
    ``answers``: a move (its stones), a response as it is, or ``Do.SILENT`` (never)."""
    script = list(answers)

    async def capabilities(request: Request) -> Response:
        return Response('{"stateless": {"versions": {"v1-alpha": {}}}}')

    async def turn(request: Request) -> Response:
        answer = script.pop(0)
        if isinstance(answer, Response):
            return answer
        if isinstance(answer, Do):
            await asyncio.Event().wait()  # until the server gives up and hangs up
        assert isinstance(answer, list)
        pieces = [{"q": q, "r": r} for q, r in answer]
        return Response(json.dumps({"move": {"pieces": pieces}}), media_type="application/json")

    routes = [
        Route("/capabilities.json", capabilities),
        Route("/stateless/v1-alpha/turn", turn, methods=["POST"]),
    ]
    async with serving_routes(routes) as url:
        yield url


@asynccontextmanager
async def managed(store: GameStore, limits: SessionLimits) -> AsyncIterator[GameManager]:
    async with aiohttp.ClientSession(connector=DEFAULT_POLICY.connector()) as http:
        games = GameManager(store, http, limits=limits, ping_interval=0.2)
        try:
            yield games
        finally:
            await games.shutdown()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[GameStore]:
    async with await GameStore.open(f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}") as s:
        yield s


@pytest.fixture
async def manager(store: GameStore) -> AsyncIterator[GameManager]:
    async with managed(store, SessionLimits(no_show_s=5.0)) as games:
        yield games


async def play(
    manager: GameManager, store: GameStore, x_url: str, o_url: str, match: Match
) -> GameRecord:
    """The stored record of the game between the two bots, once it is over."""
    request = NewGameRequest(player_x=bot(x_url), player_o=bot(o_url), match_config=match)
    created = await manager.create_game(request)
    return await finished(manager, store, created.game_id)


# ------------------------------------------------------------ a lone winning stone


async def test_a_socket_bot_wins_with_its_winning_first_stone_alone(
    manager: GameManager, store: GameStore
) -> None:
    async with (
        socket_bot(X_ELSEWHERE) as (x_url, _),
        socket_bot(O_OPENING, [O_WINNING_STONE]) as (o_url, _),
    ):
        record = await play(manager, store, x_url, o_url, THREE_IN_A_ROW)

    assert record.result is not None
    assert (record.result.winner, record.result.reason) == (Player.O, ResultReason.WIN)
    assert [len(m.pieces) for m in record.moves] == [2, 2, 1]
    assert notation.dumps(record).splitlines()[-1] == "3. [3,1] [/];"


async def test_a_stateless_bot_wins_with_its_winning_first_stone_alone(
    manager: GameManager, store: GameStore
) -> None:
    async with stateless_bot() as x_url, stateless_bot([O_SIXTH_STONE]) as o_url:
        request = NewGameRequest(player_x=bot(x_url), player_o=bot(o_url), opening=O_FIVE)
        created = await manager.create_game(request)
        record = await finished(manager, store, created.game_id)

    assert record.result is not None
    assert (record.result.winner, record.result.reason) == (Player.O, ResultReason.WIN)
    assert [len(m.pieces) for m in record.moves] == [2] * len(O_FIVE) + [1]
    assert notation.dumps(record).splitlines()[-1] == "7. [6,1] [/];"


async def test_a_bot_that_cannot_be_told_the_games_rules_is_not_seated(
    manager: GameManager, store: GameStore
) -> None:
    # It would play by the standard rules, and lose by them: refused with the reason.
    async with stateless_bot() as stateless_url, socket_bot([(1, 1)]) as (told_url, _):
        request = NewGameRequest(
            player_x=bot(told_url), player_o=bot(stateless_url), match_config=THREE_IN_A_ROW
        )
        with pytest.raises(CannotLearnRules) as refused:
            await manager.create_game(request)

    assert str(refused.value) == (
        "player_o: this game's rules are not the standard ones (win_distance 3), and the "
        "bot cannot be told them: a stateless request carries no rules"
    )
    assert (await store.list_games()).items == []  # nothing written, nothing dialled


async def test_a_socket_bots_lone_stone_that_does_not_win_is_a_protocol_error(
    manager: GameManager, store: GameStore
) -> None:
    async with socket_bot(X_ELSEWHERE) as (x_url, _), socket_bot([(1, 1)]) as (o_url, _):
        record = await play(manager, store, x_url, o_url, Match())

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.PROTOCOL_ERROR)
    assert record.result.detail == (
        "o forfeits: move_response with 1 piece ([1,1]) that does not win: "
        "a move has 2 pieces, or 1 only when that stone wins"
    )
    assert record.moves == []


async def test_a_stateless_bots_lone_stone_that_does_not_win_is_a_protocol_error(
    manager: GameManager, store: GameStore
) -> None:
    async with socket_bot(X_ELSEWHERE) as (x_url, _), stateless_bot([(1, 1)]) as o_url:
        record = await play(manager, store, x_url, o_url, Match())

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.PROTOCOL_ERROR)
    assert record.result.detail == (
        "o forfeits: the stateless response with 1 piece ([1,1]) that does not win: "
        "a move has 2 pieces, or 1 only when that stone wins"
    )
    assert record.moves == []


# ------------------------------------------------------------ why a seat forfeited

QUICK = SessionLimits(no_show_s=0.5, stall_s=0.3)
TURN_CLOCK = Match(clock_type="turn", clock=0.2)  # runs out before the stall limit


@pytest.mark.parametrize(
    ("answer", "match", "cause", "detail"),
    [
        ("{not json", Match(), EndCause.PROTOCOL_ERROR, "o forfeits: bad packet: not valid JSON"),
        (
            # Valid JSON that no float holds: forfeits the sender, never aborts the game
            # (an aborted game is void: a losing seat could cancel its loss).
            '{"type":"move_response","move":{"pieces":[{"q":1,"r":0},{"q":1,"r":1}],'
            '"evaluation":{"heuristic":1e400}}}',
            Match(),
            EndCause.PROTOCOL_ERROR,
            "o forfeits: bad packet: move: a number out of range",
        ),
        (
            [(0, 0), (1, 0)],
            Match(),
            EndCause.ILLEGAL_MOVE,
            "o forfeits: illegal move: move_response.move.pieces[0]: (0, 0) is already taken by x",
        ),
        (Do.SILENT, TURN_CLOCK, EndCause.TIMEOUT, "o forfeits: o ran out of time"),
        (
            Do.SILENT,
            Match(),
            EndCause.STALL,
            "o forfeits: no answer within the stall limit of 0.3 s",
        ),
        (
            Do.HANG_UP,
            Match(),
            EndCause.DISCONNECT,
            "o forfeits: o's connection dropped (the bot closed the connection",
        ),
        (
            # The bot's reason is recorded (its controls dropped): often the whole story.
            Do.REFUSE,
            Match(),
            EndCause.DISCONNECT,
            "o forfeits: o's connection dropped (the bot closed the connection "
            "(1008: impossible board: a test))",
        ),
        (
            # Without a socket route, Starlette refuses the handshake: no retrying that.
            None,
            Match(),
            EndCause.NO_SHOW,
            "o forfeits: o could not connect: the bot's socket answered the handshake "
            "with HTTP 403",
        ),
    ],
    ids=lambda value: value.value if isinstance(value, EndCause) else "",
)
async def test_a_socket_bots_forfeit_records_and_tells_its_reason(
    store: GameStore,
    caplog: pytest.LogCaptureFixture,
    answer: SocketAnswer | None,
    match: Match,
    cause: EndCause,
    detail: str,
) -> None:
    caplog.set_level(logging.INFO, logger="game.manager")
    o_bot = socket_bot() if answer is None else socket_bot(answer)
    async with (
        managed(store, QUICK) as manager,
        socket_bot(X_ELSEWHERE) as (x_url, x_got),
        o_bot as (o_url, _),
    ):
        record = await play(manager, store, x_url, o_url, match)

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, cause)
    assert record.result.detail is not None and record.result.detail.startswith(detail)
    end = x_got[-1]
    assert (end["type"], end["detail"]) == ("end", f"{cause.value}: {record.result.detail}")
    assert record.result.detail in caplog.text


@pytest.mark.parametrize(
    ("answer", "match", "cause", "detail"),
    [
        (
            Response("the bot crashed", status_code=500),
            Match(),
            EndCause.PROTOCOL_ERROR,
            "HTTP 500 (expected 200 with a move): 'the bot crashed'",
        ),
        (
            [(0, 0), (1, 0)],
            Match(),
            EndCause.ILLEGAL_MOVE,
            "o forfeits: illegal move: move.pieces[0]: (0, 0) is already taken by x",
        ),
        (Do.SILENT, TURN_CLOCK, EndCause.TIMEOUT, "o forfeits: o ran out of time"),
        (
            Do.SILENT,
            Match(),
            EndCause.STALL,
            "o forfeits: no answer within the stall limit of 0.3 s",
        ),
    ],
    ids=lambda value: value.value if isinstance(value, EndCause) else "",
)
async def test_a_stateless_bots_forfeit_records_and_tells_its_reason(
    store: GameStore,
    caplog: pytest.LogCaptureFixture,
    answer: StatelessAnswer,
    match: Match,
    cause: EndCause,
    detail: str,
) -> None:
    caplog.set_level(logging.INFO, logger="game.manager")
    async with (
        managed(store, QUICK) as manager,
        socket_bot(X_ELSEWHERE) as (x_url, x_got),
        stateless_bot(answer) as o_url,
    ):
        record = await play(manager, store, x_url, o_url, match)

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, cause)
    assert record.result.detail is not None and detail in record.result.detail
    end = x_got[-1]
    assert (end["type"], end["detail"]) == ("end", f"{cause.value}: {record.result.detail}")
    assert record.result.detail in caplog.text


async def test_an_aborted_game_records_and_tells_why(store: GameStore) -> None:
    async with socket_bot(X_ELSEWHERE) as (x_url, x_got), socket_bot(Do.SILENT) as (o_url, o_got):
        async with managed(store, QUICK) as manager:
            request = NewGameRequest(player_x=bot(x_url), player_o=bot(o_url))
            created = await manager.create_game(request)
            async with asyncio.timeout(30):  # only against hangs
                while not any(packet["type"] == "move_request" for packet in o_got):
                    await asyncio.sleep(0.01)
        record = await store.get_game(created.game_id)  # the manager has shut down

    assert record is not None and record.result is not None
    assert (record.result.cause, record.result.detail) == (
        EndCause.ABORTED,
        "the server is shutting down",
    )
    assert x_got[-1]["detail"] == "aborted: the server is shutting down"


# ------------------------------------------------------- the stall limit, any clock

# The largest clock a new game may have: a day, far beyond the test's stall limit.
HUGE_CLOCK = Match(clock_type="match", clock=MAX_HOSTED_CLOCK_SECONDS)


async def test_a_silent_socket_bot_with_a_huge_clock_stalls(store: GameStore) -> None:
    async with (
        managed(store, QUICK) as manager,
        socket_bot(X_ELSEWHERE) as (x_url, _),
        socket_bot(Do.SILENT) as (o_url, _),
    ):
        record = await play(manager, store, x_url, o_url, HUGE_CLOCK)

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.STALL)


async def test_a_silent_stateless_bot_with_a_huge_clock_stalls(store: GameStore) -> None:
    async with (
        managed(store, QUICK) as manager,
        socket_bot(X_ELSEWHERE) as (x_url, _),
        stateless_bot(Do.SILENT) as o_url,
    ):
        record = await play(manager, store, x_url, o_url, HUGE_CLOCK)

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.STALL)


async def test_a_silent_human_with_a_huge_clock_stalls(tmp_path: Path) -> None:
    app = create_app(db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}", limits=QUICK)
    body = {
        "player_x": {"type": "human"},
        "player_o": {"type": "human"},
        "match_config": HUGE_CLOCK.model_dump(mode="json"),
    }
    async with serving_game(app) as server, aiohttp.ClientSession() as http:
        async with http.post(f"{server.url}/game/new", json=body) as response:
            created = await response.json()
        ws_base = "ws" + server.url[len("http") :]
        async with (
            http.ws_connect(f"{ws_base}/ws?token={created['token_x']}") as x,
            http.ws_connect(f"{ws_base}/ws?token={created['token_o']}") as o,
        ):
            async with asyncio.timeout(30):  # only against hangs; O says nothing
                packets = [json.loads(message.data) async for message in o]
            await x.close()

    end = packets[-1]
    assert packets[-2] == {
        "type": "nope",
        "reason": "no answer within the stall limit of 0.3 s",
    }
    assert (end["type"], end["winner"]) == ("end", "x")
    assert end["detail"] == "stall: o forfeits: no answer within the stall limit of 0.3 s"


@asynccontextmanager
async def stateless_bot_that_hangs_up() -> AsyncIterator[str]:
    """A stateless bot that serves its capabilities, then closes the connection of every
    turn without an answer: a bot process that dies in the middle of a request."""
    document = b'{"stateless": {"versions": {"v1-alpha": {}}}}'
    head = (
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        f"content-length: {len(document)}\r\nconnection: close\r\n\r\n"
    ).encode()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await reader.readline()
            if request_line.startswith(b"GET /capabilities.json "):
                while await reader.readline() not in (b"\r\n", b""):
                    pass  # the headers
                writer.write(head + document)
                await writer.drain()
        finally:  # a turn gets no answer at all
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


# The stall limit out of the way: a stateless bot's failed turn is tried again until
# it has failed for the no-show limit in a row, which then decides, not the clock.
RETRIES_BOUNDED_BY_THE_NO_SHOW_LIMIT = SessionLimits(no_show_s=0.5, stall_s=60.0)


async def test_a_stateless_bot_that_hangs_up_forfeits_for_disconnect_with_the_reason(
    store: GameStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="game.manager")
    async with (
        managed(store, RETRIES_BOUNDED_BY_THE_NO_SHOW_LIMIT) as manager,
        socket_bot(X_ELSEWHERE) as (x_url, x_got),
        stateless_bot_that_hangs_up() as o_url,
    ):
        record = await play(manager, store, x_url, o_url, Match())

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.DISCONNECT)
    assert record.result.detail is not None
    assert f"{o_url}/stateless/v1-alpha/turn" in record.result.detail
    assert "Server disconnected" in record.result.detail  # the last try's failure
    assert record.result.detail.endswith(" tries))")  # and that it was tried again
    end = x_got[-1]
    assert (end["type"], end["detail"]) == ("end", f"disconnect: {record.result.detail}")
    assert record.result.detail in caplog.text


async def test_a_stateless_bot_behind_a_proxy_answering_503_for_a_moment_plays_on(
    store: GameStore,
) -> None:
    # Its first two tries are a reverse proxy's 503 (the bot restarting behind it); the
    # third reaches the bot, whose move is illegal: that, not the 503, ends the game.
    restarting = [Response("restarting", status_code=503) for _ in range(2)]
    async with (
        managed(store, RETRIES_BOUNDED_BY_THE_NO_SHOW_LIMIT) as manager,
        socket_bot(X_ELSEWHERE) as (x_url, _),
        stateless_bot(*restarting, [(0, 0), (1, 0)]) as o_url,
    ):
        record = await play(manager, store, x_url, o_url, Match())

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.ILLEGAL_MOVE)


# ----------------------------------------------------------- why a bot never came


@asynccontextmanager
async def bot_whose_socket_answers(status: int) -> AsyncIterator[str]:
    """A bot whose capabilities send the server to a socket (``api_root`` ``sock``) that
    answers the WebSocket handshake with HTTP ``status``. Yields its URL."""

    async def capabilities(request: web.Request) -> web.Response:
        versions = {"v1-alpha": {"api_root": "sock"}}
        return web.json_response({"basic_websocket": {"versions": versions}})

    async def socket(request: web.Request) -> web.Response:
        return web.Response(status=status, text="not here")

    app = web.Application()
    app.router.add_get("/capabilities.json", capabilities)
    app.router.add_get("/sock/game", socket)
    async with serving_app(app) as url:
        yield url


async def test_a_bot_whose_socket_refuses_the_handshake_with_404_is_a_no_show_at_once(
    store: GameStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="game.manager")
    # The no-show limit is 30 s: the game must not wait for it.
    async with (
        managed(store, SessionLimits(no_show_s=30.0)) as manager,
        socket_bot(X_ELSEWHERE) as (x_url, x_got),
        bot_whose_socket_answers(404) as o_url,
    ):
        async with asyncio.timeout(10):
            record = await play(manager, store, x_url, o_url, Match())

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.NO_SHOW)
    assert record.result.detail == (
        "o forfeits: o could not connect: the bot's socket answered the handshake with HTTP 404"
    )
    end = x_got[-1]
    assert (end["type"], end["detail"]) == ("end", f"no_show: {record.result.detail}")
    assert record.moves == []


async def test_a_bot_whose_socket_answers_503_is_retried_and_the_no_show_says_why(
    store: GameStore,
) -> None:
    async with (
        managed(store, QUICK) as manager,
        socket_bot(X_ELSEWHERE) as (x_url, x_got),
        bot_whose_socket_answers(503) as o_url,
    ):
        record = await play(manager, store, x_url, o_url, Match())

    assert record.result is not None
    assert (record.result.winner, record.result.cause) == (Player.X, EndCause.NO_SHOW)
    assert record.result.detail == (
        "o forfeits: o did not connect within 0.5 s (the last try: the bot's socket "
        "answered the handshake with HTTP 503)"
    )
    assert x_got[-1]["detail"] == f"no_show: {record.result.detail}"

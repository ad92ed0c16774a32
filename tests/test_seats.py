"""The seat adapters over real sockets on 127.0.0.1: they move bytes and report.

Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from types import SimpleNamespace

import aiohttp
import pytest
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from bot.bots import CenterBot
from bot.serve import create_app, serving
from game.address_policy import DEFAULT_POLICY
from game.seats import FRAMES_BETWEEN_YIELDS, BotSocketSeat, OversizedFrame, SeatConnectError
from game.stateless_seat import (
    StatelessAnswerTooLarge,
    StatelessBadAnswer,
    StatelessConnectionFailed,
    StatelessHttpError,
    StatelessSeat,
    StatelessTimeout,
)
from models import Board, Player, StatelessBoard, StatelessMoveRequest
from tests.manager.harness import serving_routes

TIMEOUT = 20.0  # only against hangs

REQUEST = StatelessMoveRequest(
    board=StatelessBoard(cells=Board.standard().cells, to_move=Player.O), time_limit=None
)
ANSWER = b'{"move": {"pieces": [{"q": 1, "r": 0}, {"q": 2, "r": 0}]}}'


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


class Reports:
    def __init__(self) -> None:
        self.frames: asyncio.Queue[str | bytes] = asyncio.Queue()
        self.closed: asyncio.Queue[str] = asyncio.Queue()
        self.rtts: asyncio.Queue[float] = asyncio.Queue()

    def seat(
        self, url: str, http: aiohttp.ClientSession, ping_interval: float = 0.1
    ) -> BotSocketSeat:
        async def frame(data: str | bytes) -> None:
            await self.frames.put(data)

        async def closed(why: str) -> None:
            await self.closed.put(why)

        return BotSocketSeat(
            url,
            http,
            on_frame=frame,
            on_closed=closed,
            on_rtt=self.rtts.put_nowait,
            max_frame_bytes=1000,
            ping_interval=ping_interval,
        )


async def read_request(reader: asyncio.StreamReader) -> None:
    """Read one HTTP request, its head and its body (by its Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    await reader.readexactly(length)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# ------------------------------------------------------------ bot sockets


async def test_a_bot_socket_measures_round_trips(http: aiohttp.ClientSession) -> None:
    reports = Reports()
    async with serving(create_app(CenterBot)) as server:
        seat = reports.seat(server.url.replace("http", "ws") + "/bws/v1-alpha/game", http)
        await seat.connect()
        seat.start()
        try:
            rtt = await asyncio.wait_for(reports.rtts.get(), TIMEOUT)
            assert rtt >= 0
        finally:
            await seat.close(1000, "done")
    assert reports.closed.empty()  # our own close is not reported


async def test_a_bot_socket_reports_frames_and_the_close_at_once(
    http: aiohttp.ClientSession,
) -> None:
    async def game(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text("hello")
        await websocket.send_text("x" * 5000)  # over the cap of 4 * 1000
        await websocket.receive_text()

    reports = Reports()
    async with serving_routes([WebSocketRoute("/game", game)]) as url:
        # No pings: ping_interval is long, so only the bot's frames and its end arrive.
        seat = reports.seat(url.replace("http", "ws") + "/game", http, ping_interval=3600)
        await seat.connect()
        seat.start()
        try:
            assert await asyncio.wait_for(reports.frames.get(), TIMEOUT) == "hello"
            oversized = await asyncio.wait_for(reports.frames.get(), TIMEOUT)
            assert isinstance(oversized, OversizedFrame) and len(oversized) == 4001
        finally:
            await seat.close(1000, "done")


async def test_a_bot_socket_reports_when_the_bot_leaves(http: aiohttp.ClientSession) -> None:
    async def game(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.close(1000)

    reports = Reports()
    async with serving_routes([WebSocketRoute("/game", game)]) as url:
        seat = reports.seat(url.replace("http", "ws") + "/game", http)
        await seat.connect()
        seat.start()
        try:
            why = await asyncio.wait_for(reports.closed.get(), TIMEOUT)
            assert "closed" in why
        finally:
            await seat.close(1000, "done")


async def test_a_socket_that_cannot_be_opened_raises_seat_connect_error(
    http: aiohttp.ClientSession,
) -> None:
    seat = Reports().seat(f"ws://127.0.0.1:{free_port()}/game", http)
    with pytest.raises(SeatConnectError, match="cannot open"):
        await seat.connect()


# ------------------------------------------------------------ stateless


@pytest.fixture
async def turns() -> AsyncIterator[str]:
    async def ok(request: Request) -> Response:
        return Response(ANSWER, media_type="application/json")

    async def fails(request: Request) -> Response:
        return Response("boom", status_code=500)

    async def garbage(request: Request) -> Response:
        return Response("not json", media_type="application/json")

    async def big(request: Request) -> Response:
        return Response(b" " * 5000 + ANSWER, media_type="application/json")

    async def not_utf8(request: Request) -> Response:
        return Response(ANSWER[:-1] + b', "x-note": "\xff"}', media_type="application/json")

    async def slow(request: Request) -> Response:
        await asyncio.sleep(3600)
        return Response(ANSWER)

    async def moved(request: Request) -> Response:
        # As Starlette and Flask answer a path that lacks its route's trailing slash.
        return RedirectResponse(f"{request.url}/", status_code=307)

    async def late(request: Request) -> Response:
        await asyncio.sleep(0.5)  # longer than the scaled-down session timeout below
        return Response(ANSWER, media_type="application/json")

    routes = [
        Route(f"/{handler.__name__}", handler, methods=["POST"])
        for handler in (ok, fails, garbage, big, not_utf8, slow, moved, late)
    ]
    async with serving_routes(routes) as url:
        yield url


async def test_a_stateless_turn_returns_the_answer(http: aiohttp.ClientSession, turns: str) -> None:
    answer = await StatelessSeat(f"{turns}/ok", http).turn(REQUEST, 5.0)
    assert [(c.q, c.r) for c in answer.move.pieces] == [(1, 0), (2, 0)]


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("fails", StatelessHttpError),
        ("garbage", StatelessBadAnswer),
        ("big", StatelessAnswerTooLarge),
        ("not_utf8", StatelessBadAnswer),
    ],
)
async def test_a_bad_stateless_answer_raises_its_error(
    http: aiohttp.ClientSession, turns: str, path: str, error: type[Exception]
) -> None:
    seat = StatelessSeat(f"{turns}/{path}", http, max_body_bytes=1000)
    with pytest.raises(error):
        await seat.turn(REQUEST, 5.0)


async def test_a_redirected_stateless_turn_says_where_to_and_that_it_is_not_followed(
    http: aiohttp.ClientSession, turns: str
) -> None:
    with pytest.raises(StatelessHttpError) as caught:
        await StatelessSeat(f"{turns}/moved", http).turn(REQUEST, 5.0)
    message = str(caught.value)
    assert f"a redirect to '{turns}/moved/'" in message and "not followed" in message


async def test_a_stateless_turn_times_out_after_its_time_and_the_margin(
    http: aiohttp.ClientSession, turns: str
) -> None:
    seat = StatelessSeat(f"{turns}/slow", http, margin=0.05)
    with pytest.raises(StatelessTimeout) as caught:
        await seat.turn(REQUEST, 0.05)
    assert isinstance(caught.value, TimeoutError)  # the session reads it as a timeout


async def test_a_stateless_turn_is_bounded_by_its_own_time_not_the_sessions_timeout(
    turns: str,
) -> None:
    # The server's session keeps aiohttp's default timeout (300 s in all), which cut a
    # turn that a longer clock or stall limit still allowed; scaled down to 0.05 s here.
    short = aiohttp.ClientTimeout(total=0.05)
    async with DEFAULT_POLICY.client_session(timeout=short) as http:
        answer = await StatelessSeat(f"{turns}/late", http).turn(REQUEST, 30.0)
    assert [(c.q, c.r) for c in answer.move.pieces] == [(1, 0), (2, 0)]


@contextlib.asynccontextmanager
async def answering_once_per_connection() -> AsyncIterator[tuple[str, list[int]]]:
    """A bare HTTP/1.1 server that answers the first request of each connection and keeps
    it alive, then closes it when the next request comes, unanswered: what a kept-alive
    connection looks like when the server's idle timeout fires as a request goes out.
    Yields its URL and the number of requests each connection has read."""
    requests: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        requests.append(0)
        index = len(requests) - 1
        try:
            await read_request(reader)
            requests[index] += 1
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER)
            )
            await writer.drain()
            await reader.readuntil(b"\r\n\r\n")
            requests[index] += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}/turn", requests


async def test_a_stateless_turn_on_a_kept_alive_connection_the_bot_closed_is_sent_again(
    http: aiohttp.ClientSession,
) -> None:
    async with answering_once_per_connection() as (url, requests):
        seat = StatelessSeat(url, http)
        await seat.turn(REQUEST, 5.0)  # its connection is kept alive
        answer = await seat.turn(REQUEST, 5.0)  # closed under it, then sent again
    assert [(c.q, c.r) for c in answer.move.pieces] == [(1, 0), (2, 0)]
    assert requests == [2, 1]  # the second turn read twice: unanswered, then answered


async def test_a_stateless_bot_that_closes_every_request_unanswered_is_asked_until_its_time_is_up(
    http: aiohttp.ClientSession,
) -> None:
    connections = 0

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            await reader.readuntil(b"\r\n\r\n")
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        # A short turn; the margin only keeps the HTTP timeout out of the way.
        seat = StatelessSeat(f"http://127.0.0.1:{port}/turn", http, margin=TIMEOUT)
        with pytest.raises(StatelessConnectionFailed) as caught:
            await seat.turn(REQUEST, 0.5)
    # Tried more than once, and the error, the last try's, says how many tries there were.
    assert connections >= 2
    assert str(caught.value).endswith(f"({connections} tries)")
    assert caught.value.__cause__ is None


async def test_a_stateless_bot_that_is_not_there_is_a_connection_failure(
    http: aiohttp.ClientSession,
) -> None:
    seat = StatelessSeat(f"http://127.0.0.1:{free_port()}/turn", http, margin=TIMEOUT)
    with pytest.raises(StatelessConnectionFailed) as caught:
        await seat.turn(REQUEST, 0.3)
    assert isinstance(caught.value, ConnectionError)  # the session reads it as a disconnect
    assert "tries)" in str(caught.value)


def counting_failed_requests(on_failure: Callable[[int], Awaitable[None]]) -> aiohttp.TraceConfig:
    """A trace that calls ``on_failure`` with the number of requests failed so far (no
    answer: refused, reset) after each one fails."""
    failures = 0

    async def failed(
        session: aiohttp.ClientSession,
        context: SimpleNamespace,
        params: aiohttp.TraceRequestExceptionParams,
    ) -> None:
        nonlocal failures
        failures += 1
        await on_failure(failures)

    trace = aiohttp.TraceConfig()
    trace.on_request_exception.append(failed)
    return trace


async def test_a_stateless_bot_whose_server_refuses_connections_for_a_while_is_asked_again() -> (
    None
):
    # Its port is bound but not listening, so each connection is refused (a process
    # restarting), until it listens: after the third refusal.
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER)
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, start_serving=False)
    port = server.sockets[0].getsockname()[1]
    refused: list[int] = []

    async def listen_after_three(failures: int) -> None:
        refused.append(failures)
        if failures == 3:
            await server.start_serving()

    trace = counting_failed_requests(listen_after_three)
    async with server, aiohttp.ClientSession(trace_configs=[trace]) as http:
        answer_ = await StatelessSeat(f"http://127.0.0.1:{port}/turn", http).turn(REQUEST, TIMEOUT)
    assert [(c.q, c.r) for c in answer_.move.pieces] == [(1, 0), (2, 0)]
    assert refused == [1, 2, 3]


@contextlib.asynccontextmanager
async def answering_after(
    failures: int, status: int = 503, retry_after: str | None = None
) -> AsyncIterator[tuple[str, list[int]]]:
    """A bot whose first ``failures`` turns are answered with ``status`` (and a
    ``Retry-After``, if given), as a reverse proxy answers while the bot behind it
    restarts; then with a move. Yields the turn's URL and the statuses answered."""
    answered: list[int] = []

    async def turn(request: Request) -> Response:
        await request.body()
        if len(answered) < failures:
            answered.append(status)
            headers = {} if retry_after is None else {"Retry-After": retry_after}
            return Response("the bot is restarting", status_code=status, headers=headers)
        answered.append(200)
        return Response(ANSWER, media_type="application/json")

    async with serving_routes([Route("/turn", turn, methods=["POST"])]) as url:
        yield f"{url}/turn", answered


@pytest.mark.parametrize("status", [502, 503, 504])
async def test_a_stateless_turn_answered_by_a_gateway_error_is_asked_again(
    http: aiohttp.ClientSession, status: int
) -> None:
    async with answering_after(3, status) as (url, answered):
        answer = await StatelessSeat(url, http).turn(REQUEST, TIMEOUT)
    assert [(c.q, c.r) for c in answer.move.pieces] == [(1, 0), (2, 0)]
    assert answered == [status] * 3 + [200]


async def test_a_stateless_turn_waits_out_a_short_retry_after(
    http: aiohttp.ClientSession,
) -> None:
    async with answering_after(1, 503, retry_after="0") as (url, answered):
        await StatelessSeat(url, http).turn(REQUEST, TIMEOUT)
    assert answered == [503, 200]


async def test_a_stateless_turn_that_keeps_getting_503_fails_with_the_last_answer_and_its_tries(
    http: aiohttp.ClientSession,
) -> None:
    async with answering_after(10**6, 503) as (url, answered):
        seat = StatelessSeat(url, http, margin=TIMEOUT)
        with pytest.raises(StatelessHttpError) as caught:
            await seat.turn(REQUEST, 0.5)
    message = str(caught.value)
    assert "HTTP 503" in message and "the bot is restarting" in message
    assert len(answered) >= 2 and message.endswith(f"({len(answered)} tries)")


async def test_a_stateless_turn_reports_each_try_it_makes_again_and_raises_the_last(
    http: aiohttp.ClientSession,
) -> None:
    reported: list[Exception] = []

    async def failed_try(error: Exception) -> None:
        reported.append(error)

    async with answering_after(10**6, 503) as (url, answered):
        seat = StatelessSeat(url, http, margin=TIMEOUT, on_failed_try=failed_try)
        with pytest.raises(StatelessHttpError) as caught:
            await seat.turn(REQUEST, 0.5)
    # Every try but the last was made again, and reported; the last is the turn's error.
    assert len(answered) >= 2 and len(reported) == len(answered) - 1
    assert all(isinstance(error, StatelessHttpError) for error in reported)
    assert all("HTTP 503" in str(error) for error in reported)
    assert caught.value not in reported


@pytest.mark.parametrize("status", [400, 404, 422, 500, 501])
async def test_a_stateless_turn_answered_by_another_error_fails_at_once(
    http: aiohttp.ClientSession, status: int
) -> None:
    async with answering_after(1, status) as (url, answered):
        with pytest.raises(StatelessHttpError) as caught:
            await StatelessSeat(url, http).turn(REQUEST, TIMEOUT)
    assert answered == [status]
    assert "tries" not in str(caught.value)


async def test_a_stateless_turn_asked_again_carries_the_time_left_not_the_first_tries(
    http: aiohttp.ClientSession,
) -> None:
    limits: list[float] = []

    async def turn(request: Request) -> Response:
        limits.append(json.loads(await request.body())["time_limit"])
        if len(limits) < 3:
            return Response("restarting", status_code=503)
        return Response(ANSWER, media_type="application/json")

    timed = REQUEST.model_copy(update={"time_limit": 10.0})
    async with serving_routes([Route("/turn", turn, methods=["POST"])]) as url:
        await StatelessSeat(f"{url}/turn", http).turn(timed, 10.0)
    assert limits[0] == 10.0
    assert limits[0] > limits[1] > limits[2]  # the retries waited: less time is left


async def test_a_bot_socket_lets_the_loop_run_during_a_burst_of_frames(
    http: aiohttp.ClientSession,
) -> None:
    # A burst of frames already buffered must not hold the event loop: within every
    # FRAMES_BETWEEN_YIELDS frames the seat reports, another ready task gets its turn.
    async def game(websocket: WebSocket) -> None:
        await websocket.accept()
        for number in range(200):
            await websocket.send_text(str(number))
        await websocket.receive_text()

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    seen: list[int] = []
    done = asyncio.Event()

    async def frame(data: str | bytes) -> None:
        seen.append(ticks)
        if len(seen) == 200:
            done.set()

    async def closed(why: str) -> None:
        done.set()

    async with serving_routes([WebSocketRoute("/game", game)]) as url:
        seat = BotSocketSeat(
            url.replace("http", "ws") + "/game",
            http,
            on_frame=frame,
            on_closed=closed,
            on_rtt=lambda _: None,
            max_frame_bytes=1000,
            ping_interval=3600,
        )
        await seat.connect()
        await asyncio.sleep(0.2)  # let the burst arrive and queue up unread (not timed)
        running = asyncio.create_task(ticker())
        seat.start()
        try:
            await asyncio.wait_for(done.wait(), TIMEOUT)
        finally:
            running.cancel()
            await seat.close(1000, "done")
    assert len(seen) == 200
    stride = FRAMES_BETWEEN_YIELDS
    assert all(later > earlier for earlier, later in itertools.pairwise(seen[::stride]))

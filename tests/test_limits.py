"""Connection bounds of the game server (``game.limits``) over real sockets on
127.0.0.1: idle and unfinished connections are closed, one client address cannot hold
more than its share, and a normal request still works.

Loopback is exempt from the per-client cap by default, so these servers exempt nothing.
Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import resource
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from game.limits import (
    MAX_FD_LIMIT,
    ConnectionCounter,
    ConnectionLimits,
    parse_networks,
    raise_fd_limit,
)
from game.serve import main as serve_main
from game.server import GameServer, create_app, serving

TIMEOUT = 30.0  # only against hangs


@asynccontextmanager
async def limited_server(tmp_path: Path, limits: ConnectionLimits) -> AsyncIterator[GameServer]:
    app = create_app(db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}")
    async with serving(app, limits=limits) as server:
        yield server


async def read_all(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection."""
    return await asyncio.wait_for(reader.read(), TIMEOUT)


async def health(server: GameServer) -> int:
    async with aiohttp.ClientSession() as http, http.get(f"{server.url}/health") as response:
        return response.status


async def test_a_connection_that_sends_nothing_is_closed(tmp_path: Path) -> None:
    async with limited_server(tmp_path, ConnectionLimits(request_timeout=0.5, exempt=())) as s:
        reader, writer = await asyncio.open_connection("127.0.0.1", s.port)
        answer = await read_all(reader)  # returns only once the server hangs up
        writer.close()
        assert await health(s) == 200
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"did not arrive whole within 0.5 s" in answer


async def test_a_request_that_never_ends_its_headers_is_closed(tmp_path: Path) -> None:
    async with limited_server(tmp_path, ConnectionLimits(request_timeout=0.5, exempt=())) as s:
        reader, writer = await asyncio.open_connection("127.0.0.1", s.port)
        writer.write(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # and nothing more
        await writer.drain()
        answer = await read_all(reader)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408 ")


async def test_an_unfinished_websocket_handshake_is_closed(tmp_path: Path) -> None:
    async with limited_server(tmp_path, ConnectionLimits(request_timeout=0.5, exempt=())) as s:
        reader, writer = await asyncio.open_connection("127.0.0.1", s.port)
        writer.write(b"GET /spectate/x HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n")
        await writer.drain()
        answer = await read_all(reader)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408 ")


async def test_an_idle_keep_alive_connection_is_closed(tmp_path: Path) -> None:
    limits = ConnectionLimits(keep_alive_timeout=1, exempt=())
    async with limited_server(tmp_path, limits) as s:
        reader, writer = await asyncio.open_connection("127.0.0.1", s.port)
        writer.write(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        answer = await read_all(reader)  # the answer, then the close after the idle spell
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200 ")


async def test_a_client_over_its_connection_cap_is_refused_and_others_still_served(
    tmp_path: Path,
) -> None:
    limits = ConnectionLimits(max_per_client=3, request_timeout=TIMEOUT * 2, exempt=())
    async with limited_server(tmp_path, limits) as s:
        idle = [await asyncio.open_connection("127.0.0.1", s.port) for _ in range(3)]
        reader, writer = await asyncio.open_connection("127.0.0.1", s.port)
        answer = await read_all(reader)
        writer.close()
        # One idle connection goes: its place is free again (once the server notices).
        idle.pop()[1].close()
        async with asyncio.timeout(TIMEOUT):
            while True:
                try:
                    if await health(s) == 200:
                        break
                except aiohttp.ClientError:
                    await asyncio.sleep(0.05)
        for _, idle_writer in idle:
            idle_writer.close()
    assert answer.startswith(b"HTTP/1.1 429 ")
    assert b"already has 3 open connections" in answer


async def connect_when_allowed(
    http: aiohttp.ClientSession, url: str
) -> aiohttp.ClientWebSocketResponse:
    """A WebSocket to ``url``, retried while the server still counts a connection we
    just closed (it notices the close a moment later)."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            try:
                return await http.ws_connect(url)
            except aiohttp.ClientError:
                await asyncio.sleep(0.05)


async def test_websockets_count_until_they_close(tmp_path: Path) -> None:
    limits = ConnectionLimits(max_per_client=2, exempt=())
    async with limited_server(tmp_path, limits) as s:
        no_reuse = aiohttp.TCPConnector(force_close=True)  # no idle HTTP connection left
        async with aiohttp.ClientSession(connector=no_reuse) as http:
            body = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}
            async with http.post(f"{s.url}/game/new", json=body) as response:
                game_id = (await response.json())["game_id"]
            url = f"ws://127.0.0.1:{s.port}/spectate/{game_id}"
            first = await connect_when_allowed(http, url)
            second = await connect_when_allowed(http, url)
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(url)
            await first.close()
            third = await connect_when_allowed(http, url)
            for socket_ in (second, third):
                await socket_.close()
    assert refused.value.status == 429


def test_loopback_is_exempt_by_default() -> None:
    counter = ConnectionCounter(ConnectionLimits(max_per_client=1))
    assert all(counter.admit(object(), "127.0.0.1") for _ in range(5))
    assert all(counter.admit(object(), "::1") for _ in range(5))
    assert counter.admit(object(), "192.0.2.1")
    assert not counter.admit(object(), "192.0.2.1")


def test_trusted_networks_are_not_counted_like_loopback() -> None:
    # A cluster's other workers: every person's socket they relay comes from them.
    trusted = parse_networks("10.1.0.0/16, 192.0.2.9")
    counter = ConnectionCounter(ConnectionLimits(max_per_client=1, exempt=trusted))
    assert all(counter.admit(object(), "10.1.2.3") for _ in range(5))
    assert all(counter.admit(object(), "192.0.2.9") for _ in range(5))
    assert counter.admit(object(), "192.0.2.1")
    assert not counter.admit(object(), "192.0.2.1")


def test_an_ipv4_client_counts_the_same_through_a_dual_stack_socket() -> None:
    counter = ConnectionCounter(ConnectionLimits(max_per_client=1))
    assert counter.admit(object(), "::ffff:127.0.0.1")  # loopback, however written
    assert counter.admit(object(), "::ffff:127.0.0.1")
    assert counter.admit(object(), "192.0.2.1")
    assert not counter.admit(object(), "::ffff:192.0.2.1")
    assert counter.open("192.0.2.1") == 1


@pytest.mark.parametrize(
    "options",
    [{"max_per_client": 0}, {"request_timeout": 0.0}, {"request_timeout": float("inf")}],
)
def test_limits_must_be_positive(options: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be"):
        ConnectionLimits(**options)  # type: ignore[arg-type]


def test_the_soft_fd_limit_is_raised_to_the_hard_one() -> None:
    soft, hard = raise_fd_limit()
    assert (soft, hard) == resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY:
        assert soft >= min(hard, MAX_FD_LIMIT)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-connections-per-client", "0"], "--max-connections-per-client must be at least 1"),
        (["--request-timeout", "nan"], "--request-timeout must be a positive number of seconds"),
        (["--keep-alive-timeout", "0"], "--keep-alive-timeout must be at least 1, got 0"),
    ],
)
def test_bad_limits_are_one_line_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert serve_main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_bad_trusted_network_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        serve_main(["--trusted-networks", "10.0.0.0/8,10.0.0.0/33"])
    assert exited.value.code == 2
    assert "'10.0.0.0/33' is not an address or a network" in capsys.readouterr().err

"""How the game server's routes read a request's body (``game.route_bodies``), as a
client that speaks raw HTTP sees it: what the everyday answers (401, 413, 422) do not
cover. Over real sockets on 127.0.0.1; nothing is timed."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from tests.test_server import TIMEOUT, arena
from tests.test_stateless_route import records_of


async def test_a_client_that_hangs_up_mid_body_is_not_an_error_of_the_server(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="game.server")
    async with arena(tmp_path) as a:
        host, port = a.base.removeprefix("http://").split(":")
        with records_of("uvicorn.error") as uvicorn_records:
            _, writer = await asyncio.open_connection(host, int(port))
            writer.write(
                b"POST /game/new HTTP/1.1\r\nHost: arena\r\n"
                b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                b'{"player_x": '
            )
            await writer.drain()
            writer.close()  # the rest of the 1000 bytes never comes
            await writer.wait_closed()

            def handled() -> list[logging.LogRecord]:
                gone = [r for r in caplog.records if "went away" in r.getMessage()]
                errors = [r for r in uvicorn_records if r.levelno >= logging.ERROR]
                return gone + errors

            async with asyncio.timeout(TIMEOUT):
                while not handled():
                    await asyncio.sleep(0.01)
        listed, games = await a.get_json("/games")
    assert [r.levelno for r in handled()] == [logging.INFO]  # no "Exception in ASGI app"
    assert listed == 200 and games["items"] == []  # and nothing was made of it

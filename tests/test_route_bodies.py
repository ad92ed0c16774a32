"""How the game server's routes read a request's body (``game.route_bodies``), as a
client that speaks raw HTTP sees it: what the everyday answers (401, 413, 422) do not
cover. Over real sockets on 127.0.0.1; nothing is timed."""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.hang_up import logged_of_a_hang_up
from tests.test_server import TIMEOUT, arena


async def test_a_client_that_hangs_up_mid_body_is_not_an_error_of_the_server(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="game.server")
    async with arena(tmp_path) as a:
        port = urlsplit(a.base).port
        assert port is not None
        logged = await logged_of_a_hang_up(port, "/game/new", caplog, TIMEOUT)
        listed, games = await a.get_json("/games")
    assert [r.levelno for r in logged] == [logging.INFO]  # no "Exception in ASGI app"
    assert listed == 200 and games["items"] == []  # and nothing was made of it

"""The bot server's stateless route (``bot.stateless_route``) over real sockets on
127.0.0.1, as a client that speaks plain HTTP sees it.

The route's everyday answers (a move, 400/413/422 with the reason, the time limit) are in
``tests/test_bot_serve.py``; this module has what a raw client can do to it besides.
Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, ClassVar
from urllib.parse import urljoin

import aiohttp
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.bot import Deadline
from bot.bots import CenterBot
from bot.capabilities import Capabilities, StatelessV1Alpha, default_capabilities
from bot.serve import create_app, serving
from game.rules import Position
from models import Match, Player
from tests.hang_up import logged_of_a_hang_up

TIMEOUT = 20.0  # only against hangs
TURN = "/stateless/v1-alpha/turn"


async def test_a_client_that_hangs_up_mid_body_is_not_an_error_of_the_bot_server(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="bot.serve")
    async with serving(create_app(CenterBot)) as server:
        logged = await logged_of_a_hang_up(server.port, TURN, caplog, TIMEOUT)
    assert [r.levelno for r in logged] == [logging.INFO]  # no "Exception in ASGI app"


class SlashedRootBot(CenterBot):
    """Declares its stateless API's root with slashes around it, as a bot author may."""

    @classmethod
    def capabilities(cls) -> Capabilities:
        return default_capabilities(stateless=StatelessV1Alpha(api_root="/api/v1/"))


async def test_a_client_that_resolves_api_root_as_rfc_3986_does_finds_the_turn_route() -> None:
    # The spec: api_root is relative to capabilities.json. A client joins the two as any
    # URL library does; a leading slash would take it to the host's root, off the bot.
    async with serving(create_app({"/slashed": SlashedRootBot})) as server:
        base = f"{server.url}/slashed"
        document_url = f"{base}/capabilities.json"
        async with aiohttp.ClientSession() as client:
            async with client.get(document_url) as response:
                document = await response.json()
            api_root = document["stateless"]["versions"]["v1-alpha"]["api_root"]
            turn_url = urljoin(document_url, f"{api_root}/turn")
            body = {"board": {"to_move": "o", "cells": [{"q": 0, "r": 0, "p": "x"}]}}
            async with client.post(turn_url, json=body) as response:
                status = response.status
    assert (turn_url, status) == (f"{base}/api/v1/turn", 200)


class DeadlineKeeper(CenterBot):
    """Declares ``move_time_limit`` and keeps when each move's ``Deadline`` ends."""

    ends_at: ClassVar[list[float]] = []

    @classmethod
    def capabilities(cls) -> Capabilities:
        return default_capabilities(stateless=StatelessV1Alpha(move_time_limit=True))

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        self.ends_at.append(deadline.ends_at)
        return super().play(position, player, match, deadline)


class Arrivals:
    """ASGI middleware: sets ``arrived`` when a request's head has come in, in the same
    step of the event loop as the app's handler begins (nothing suspends between)."""

    def __init__(self, app: ASGIApp, arrived: asyncio.Event) -> None:
        self.app = app
        self.arrived = arrived

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.arrived.set()
        await self.app(scope, receive, send)


async def test_a_turns_time_limit_counts_from_its_head_not_from_its_whole_body() -> None:
    # A client whose body comes in slowly (a slow link, a big board): the server's clock
    # ran from its sending, so the bot's Deadline must run from the request's arrival,
    # not from when the body was all read.
    limit = 30.0
    body = json.dumps(
        {"board": {"to_move": "o", "cells": [{"q": 0, "r": 0, "p": "x"}]}, "time_limit": limit}
    ).encode()
    DeadlineKeeper.ends_at.clear()
    arrived = asyncio.Event()
    app = create_app(DeadlineKeeper)
    app.add_middleware(Arrivals, arrived=arrived)
    async with serving(app) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(
            f"POST {TURN} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body[:-1]
        )
        await writer.drain()
        async with asyncio.timeout(TIMEOUT):
            await arrived.wait()  # the route has begun, and waits for the rest
            last_byte_sent = time.monotonic()
            writer.write(body[-1:])
            await writer.drain()
            response = await reader.read()
        writer.close()
    assert response.startswith(b"HTTP/1.1 200 ")
    # The route began before the last byte went out, so its deadline ends before the
    # limit counted from then; one counted from the body's end would end after it.
    assert len(DeadlineKeeper.ends_at) == 1
    assert DeadlineKeeper.ends_at[0] < last_byte_sent + limit

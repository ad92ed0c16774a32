"""The bot server's stateless route (``bot.stateless_route``) over real sockets on
127.0.0.1, as a client that speaks plain HTTP sees it.

The route's everyday answers (a move, 400/413/422 with the reason, the time limit) are in
``tests/test_bot_serve.py``; this module has what a raw client can do to it besides.
Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import logging
from urllib.parse import urljoin

import aiohttp
import pytest

from bot.bots import CenterBot
from bot.capabilities import Capabilities, StatelessV1Alpha, default_capabilities
from bot.serve import create_app, serving
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

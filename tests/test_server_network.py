"""The game server's network edges under hostile peers, over real sockets on 127.0.0.1:
what a bot's capabilities may contain, what frames a bot, a human or a spectator may
send, how fast, and how many connections a client may hold.

Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from aiohttp import web

from tests.test_server import arena


@asynccontextmanager
async def raw_capabilities_server(body: bytes) -> AsyncIterator[str]:
    """A bot that serves ``body``, as is, for its capabilities."""

    async def capabilities(_request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/capabilities.json", capabilities)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


# ------------------------------------------------------------ capabilities


async def test_capabilities_that_are_not_utf8_are_422_with_the_reason(tmp_path: Path) -> None:
    document = b'{"meta": {"name": "\xff"}, "basic_websocket": {"versions": {"v1-alpha": {}}}}'
    async with raw_capabilities_server(document) as url, arena(tmp_path) as a:
        status, answer = await a.post(
            {"player_x": {"type": "bot", "bot_url": url}, "player_o": a.bot("random")}
        )
        health, _ = await a.get_json("/health")
    assert status == 422
    assert answer["detail"] == (
        f"player_x: {url}/capabilities.json: capabilities.json is not valid UTF-8 (byte 0xff "
        "at offset 19); JSON must be UTF-8"
    )
    assert health == 200

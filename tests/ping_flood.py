"""A client that floods a server's WebSocket with pings, for the tests of the sockets'
control-frame limits (``wire.inbound_ws``) on the game server and the bot server."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp

__all__ = ["flood"]


async def flood(ws: aiohttp.ClientWebSocketResponse) -> int:
    """Pings until the server closes the socket; how many were sent."""
    sent = 0
    with contextlib.suppress(ConnectionError, RuntimeError):
        while not ws.closed and sent < 100_000:
            for _ in range(100):
                await ws.ping()
                sent += 1
            await asyncio.sleep(0)
    return sent

"""A bot that takes its seat and never moves, on a loopback port in a thread of its own,
for the browser tests (whose Playwright runs an event loop on the test's thread).

A game it plays stays running until the server gives up on it (its stall limit, 300 s
by default) or stops, so a tournament with it in keeps games in flight for as long as a
test looks at them, with no timing to hope for::

    with silent_bot() as bot_url, game_server(tmp_path) as url:
        ...  # {"name": "silent", "url": bot_url} in a tournament's bots

The game server is to stop first (the ``with`` above does): it closes the bot's sockets.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from aiohttp import WSMsgType, web

from tests.loopback_app import serving_app

__all__ = ["silent_bot"]

#: Only against hangs: starting or stopping never takes this long.
STARTUP_TIMEOUT = 30.0

CAPABILITIES = {"basic_websocket": {"versions": {"v1-alpha": {"api_root": "bws/v1-alpha"}}}}


def _silent_app(sockets: set[web.WebSocketResponse]) -> web.Application:
    async def capabilities(_request: web.Request) -> web.Response:
        return web.json_response(CAPABILITIES)

    async def game_socket(request: web.Request) -> web.WebSocketResponse:
        # Reads every packet (the socket stays healthy) and answers none.
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        sockets.add(ws)
        try:
            async for message in ws:
                if message.type is WSMsgType.ERROR:
                    break
        finally:
            sockets.discard(ws)
        return ws

    app = web.Application()
    app.router.add_get("/capabilities.json", capabilities)
    app.router.add_get("/bws/v1-alpha/game", game_socket)
    return app


@contextmanager
def silent_bot() -> Iterator[str]:
    """Serve the silent bot while the block runs; yields its base URL."""
    ready = threading.Event()
    found: dict[str, str] = {}
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def serve() -> None:
        sockets: set[web.WebSocketResponse] = set()
        async with serving_app(_silent_app(sockets)) as url:
            found["url"] = url
            ready.set()
            await stop.wait()
            for ws in list(sockets):
                await ws.close()

    thread = threading.Thread(
        target=lambda: loop.run_until_complete(serve()), name="silent bot", daemon=True
    )
    thread.start()
    if not ready.wait(STARTUP_TIMEOUT):
        raise RuntimeError("the silent bot did not start")
    try:
        yield found["url"]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(STARTUP_TIMEOUT)
        loop.close()

"""A real game server on a loopback ephemeral port, in a background thread, for the
desktop client's tests.

The client's tests run Qt on the main thread and the client's own network worker in
another, so the server cannot share their event loop: ``game_server`` runs
``game.server.create_app`` under ``serving`` in a thread with its own loop, yields the
base URL (``http://127.0.0.1:<port>``) and shuts the server down gracefully on exit::

    def test_health(tmp_path: Path) -> None:
        with game_server(tmp_path) as url:
            ...

Keyword arguments go to ``create_app`` (``limits=``, ``max_games=``...). The SQLite file
lives in the given directory. ``restartable_game_server`` yields a ``RestartableServer``
whose ``restart()`` stops the server and starts a new one on the same port and database,
as an operator's restart would.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from game.server import create_app, serving

__all__ = ["STARTUP_TIMEOUT", "RestartableServer", "game_server", "restartable_game_server"]

#: Only against hangs: starting or stopping never takes this long.
STARTUP_TIMEOUT = 60.0


class _ServerThread(threading.Thread):
    def __init__(self, db_url: str, options: dict[str, Any], port: int = 0) -> None:
        super().__init__(name="test game server", daemon=True)
        self.db_url = db_url
        self.options = options
        self.port = port
        self.url: str | None = None
        self.error: BaseException | None = None
        self.ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None

    def run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported to the test by stop() / start_and_wait()
            self.error = exc
        finally:
            self.ready.set()

    async def _serve(self) -> None:
        app = create_app(db_url=self.db_url, **self.options)
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        async with serving(app, port=self.port) as server:
            self.url = server.url
            self.ready.set()
            await self._stop_event.wait()

    def start_and_wait(self) -> str:
        self.start()
        if not self.ready.wait(STARTUP_TIMEOUT) or self.url is None:
            raise RuntimeError(f"the test game server did not start: {self.error!r}")
        return self.url

    def stop(self) -> None:
        loop, stop = self._loop, self._stop_event
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        self.join(STARTUP_TIMEOUT)
        if self.is_alive():
            raise RuntimeError("the test game server did not stop")
        if self.error is not None:
            raise RuntimeError("the test game server failed") from self.error


@contextmanager
def game_server(directory: Path, **options: Any) -> Iterator[str]:
    """Run a game server (example bots hosted) while the block runs; yields its base
    URL. Its games are stored in ``directory / "games.sqlite"``."""
    thread = _ServerThread(f"sqlite+aiosqlite:///{directory / 'games.sqlite'}", options)
    url = thread.start_and_wait()
    try:
        yield url
    finally:
        thread.stop()


class RestartableServer:
    """A game server that can be restarted on the same port and database."""

    def __init__(self, directory: Path, options: dict[str, Any]) -> None:
        self.db_url = f"sqlite+aiosqlite:///{directory / 'games.sqlite'}"
        self.options = options
        self._thread = _ServerThread(self.db_url, options)
        self.url = self._thread.start_and_wait()

    def stop(self) -> None:
        self._thread.stop()

    def start(self) -> None:
        """Start it again on the port it had (stopped first)."""
        port = int(self.url.rsplit(":", 1)[1])
        self._thread = _ServerThread(self.db_url, self.options, port)
        url = self._thread.start_and_wait()
        assert url == self.url, (url, self.url)

    def restart(self) -> None:
        self.stop()
        self.start()


@contextmanager
def restartable_game_server(directory: Path, **options: Any) -> Iterator[RestartableServer]:
    """As ``game_server``, yielding a ``RestartableServer``."""
    server = RestartableServer(directory, options)
    try:
        yield server
    finally:
        if server._thread.is_alive():
            server._thread.stop()

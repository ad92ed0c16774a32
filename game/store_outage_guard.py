"""A request that meets the game store out of reach is answered ``503`` with
``Retry-After``, not ``500`` with a traceback in the log.

PostgreSQL restarting, a network cut between a worker and its database, a SQLite file
locked for longer than the store waits: any route that reads or writes the store then
fails with the driver's error. That is no bug of the route, and a client can do
something sensible with it (try again shortly, as HTTP's 503 says), so the answer says
so. What ``game.store.outages.is_outage`` does not call an outage (the store refusing
the statement itself, a bug) and errors that did not come out of the store stay a 500
with their traceback, as before: those need a person.

Only plain HTTP requests, and only before the answer has started: a WebSocket's
failures are its own route's to report, and an answer half sent cannot be taken back.
"""

from __future__ import annotations

import logging
import time
from types import TracebackType
from typing import Final

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from game.store.outages import is_outage

__all__ = ["RETRY_AFTER_SECONDS", "StoreOutageGuard", "raised_by_store"]

log = logging.getLogger("game.store_outage_guard")

#: What a 503 asks the client to wait before trying again.
RETRY_AFTER_SECONDS: Final = 5
#: At most one log line per this many seconds while the store stays out of reach.
_LOG_EVERY_S: Final = 10.0
#: Where a store error is raised: the store's own modules and its drivers.
_STORE_MODULES: Final = ("game.store", "sqlalchemy", "asyncpg", "aiosqlite", "sqlite3")
_DETAIL: Final = "the game store is out of reach for the moment; try again shortly"


def raised_by_store(error: BaseException) -> bool:
    """Whether ``error`` went through the store's code or its drivers on its way up (an
    ``OSError`` from a bot's socket, say, did not).

    >>> raised_by_store(ConnectionRefusedError(111, "Connection refused"))  # never raised
    False
    """
    traceback: TracebackType | None = error.__traceback__
    while traceback is not None:
        module = traceback.tb_frame.f_globals.get("__name__", "")
        if isinstance(module, str) and module.startswith(_STORE_MODULES):
            return True
        traceback = traceback.tb_next
    return False


class StoreOutageGuard:
    """ASGI middleware: a store outage met by an HTTP route becomes a 503 (see the
    module docstring); everything else passes through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._logged_at = -_LOG_EVERY_S
        self._unlogged = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched_send)
        except Exception as error:
            if started or not (is_outage(error) and raised_by_store(error)):
                raise
            self._log(scope, error)
            answer = JSONResponse(
                {"detail": _DETAIL},
                status_code=503,
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
            await answer(scope, receive, send)

    def _log(self, scope: Scope, error: Exception) -> None:
        now = time.monotonic()
        if now - self._logged_at < _LOG_EVERY_S:
            self._unlogged += 1
            return
        also = f" (and {self._unlogged} more since the last line)" if self._unlogged else ""
        log.warning(
            "%s %s answered 503: the store is out of reach: %s%s",
            scope.get("method", "?"),
            scope.get("path", "?"),
            f"{type(error).__name__}: {error}"[:300],
            also,
        )
        self._logged_at, self._unlogged = now, 0

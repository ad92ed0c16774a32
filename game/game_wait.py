"""``GET /games/{game_id}?wait=S``: a long poll that answers once a game is over, like
``docker wait`` (``game_routes.get_game`` calls ``parse_wait`` and ``wait_for_end``).

A client that made a game with ``POST /game/new`` waits here for its end instead of
spectating it or polling. ``wait_for_end`` returns at the first of:

* the game is over and its record committed. A game this process runs is waited on
  with ``GameManager.recorded_end_of`` (no polling: it returns once the record is in
  the store, as `end` goes to the seats, without waiting for their connections to
  close). A game it does not run but the store has as running (another worker of a
  cluster runs it, or a server that died left it so) is watched through its status in
  the store, every ``STORE_POLL_S``, the cheapest read there is (one row, no moves);
* ``S`` seconds have passed;
* the server began shutting down (``_Runtime.stopping``), so that a waiting request
  never holds up a graceful stop: uvicorn waits for the requests in flight before it
  closes, and ``game.server.GameServer`` (what ``game.serve`` and ``serving`` run)
  drains the runtime first, which sets it. Under a plain ``uvicorn.Server`` the
  runtime is drained by the lifespan, only after those requests: there a wait holds the
  stop up to its end or uvicorn's ``timeout_graceful_shutdown``;
* the client went away (its connection closed): nobody is left to answer.

The route then reads the record by the normal read path, so what it says is what was
committed (or, when it did not end, the record as it stands, ``result`` null).

Each wait owns its three watchers (the end, the stop, the client) and cancels and
awaits them before it returns, whatever ends it (its own cancellation included):
nothing outlives the request.
"""

from __future__ import annotations

import asyncio
import enum
import re
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Final

from starlette.requests import Request

from game.store import GameStore, RecordStatus

if TYPE_CHECKING:
    from game.server_state import _Runtime

__all__ = ["MAX_WAIT_S", "STORE_POLL_S", "WaitEnd", "parse_wait", "wait_for_end"]

#: The longest ``wait`` a client may ask for, in seconds. A long poll holds a connection
#: (and counts against ``--max-connections-per-client``); five minutes is a CI job's
#: patience, and a client that wants longer asks again.
MAX_WAIT_S: Final = 300
#: Seconds between two reads of the status of a game another process runs. The store is
#: shared by every worker of a cluster, and a read is a query (a round trip to
#: PostgreSQL): four a second per waiter tells the end within a quarter of a second,
#: close to what a spectator's coalesced updates give (``SPECTATOR_FLUSH_S``), while many
#: waiters stay cheap for the database.
STORE_POLL_S: Final = 0.25
#: The longest ``wait`` text read as a number: digits, one point, more digits. Anything
#: longer is refused before it is converted.
_MAX_WAIT_CHARS: Final = 16
_DECIMAL: Final = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")


class WaitEnd(enum.Enum):
    """Why ``wait_for_end`` returned."""

    OVER = "over"  #: the game is over, its record committed
    TIMED_OUT = "timed out"  #: the wait ran out (or was 0)
    STOPPING = "stopping"  #: the server is shutting down
    GONE = "gone"  #: the client closed its connection: nobody to answer


def parse_wait(text: str | None) -> float | None:
    """The seconds a ``wait`` query parameter asks for: 0 when absent; None when it is
    not a plain decimal number (ASCII digits and at most one point: no sign, exponent,
    ``nan`` or ``inf``) from 0 to ``MAX_WAIT_S``.

    >>> parse_wait(None), parse_wait("60"), parse_wait("0.5"), parse_wait(".25")
    (0.0, 60.0, 0.5, 0.25)
    >>> parse_wait("-1"), parse_wait("301"), parse_wait("nan"), parse_wait("1e2")
    (None, None, None, None)
    """
    if text is None:
        return 0.0
    if len(text) > _MAX_WAIT_CHARS or _DECIMAL.fullmatch(text) is None:
        return None
    seconds = float(text)
    return seconds if seconds <= MAX_WAIT_S else None


async def wait_for_end(
    runtime: _Runtime, request: Request, game_id: str, seconds: float
) -> WaitEnd:
    """Wait up to ``seconds`` for game ``game_id`` to be over; see the module docstring
    for what else ends the wait, and ``WaitEnd`` for what the answer says. The caller
    has found the game (an unknown one is its 404, at once)."""
    if runtime.closing:
        return WaitEnd.STOPPING
    if seconds <= 0:
        return WaitEnd.TIMED_OUT
    manager = runtime.manager
    # Looked up now: a game that ends between this check and the await is not missed
    # (``recorded_end_of`` holds on to the game; the store's status says it too).
    ended: Awaitable[object]
    if manager.runs(game_id):
        ended = manager.recorded_end_of(game_id)
    else:
        ended = _stored_end(manager.store, game_id)
    watchers = {
        asyncio.ensure_future(ended): WaitEnd.OVER,
        asyncio.ensure_future(runtime.stopping.wait()): WaitEnd.STOPPING,
        asyncio.ensure_future(_disconnected(request)): WaitEnd.GONE,
    }
    try:
        done, _ = await asyncio.wait(watchers, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for watcher in watchers:
            watcher.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
    # In the order above: a game that ended as the server began to stop is over.
    for watcher, why in watchers.items():
        if watcher in done:
            if (error := watcher.exception()) is not None:
                raise error  # the store failed: a 500, as any read that fails
            return why
    return WaitEnd.TIMED_OUT


async def _stored_end(store: GameStore, game_id: str) -> None:
    """Return once the store no longer has the game as running (or has it no more)."""
    while await store.game_status(game_id) is RecordStatus.RUNNING:
        await asyncio.sleep(STORE_POLL_S)


async def _disconnected(request: Request) -> None:
    """Return once the client has closed its connection. The request (a GET) has no
    body to read, so the messages before ``http.disconnect`` are its empty body; the
    server's receive then blocks until the connection is lost (or the answer is sent)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass

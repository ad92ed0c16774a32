"""The game server's own REST routes (``game_routes``): ``POST /game/new``, ``GET /games``,
``GET /games/{id}`` (with ``?wait=``, a long poll for the game's end: ``game.game_wait``)
and its notation, ``GET /health``, ``GET /openapi.json`` and
``GET /docs``; and ``http_error``, which makes every error ``{"detail": ...}`` JSON.

``game.server.create_app`` mounts them with the other concepts' routes (tournaments,
series, the arena, the queue, the ladder, the cluster, the web page).
"""

from __future__ import annotations

import re
from typing import Any, Final

from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from game.discovery import DiscoveryError
from game.game_wait import MAX_WAIT_S, WaitEnd, parse_wait, wait_for_end
from game.manager import ManagerClosed, TooManyGames
from game.openapi import _docs_page
from game.route_bodies import creation_body
from game.route_query import unknown_query
from game.seat_names import SeatNameTaken, check_seat_names
from game.server_state import _runtime, _settings, client_address
from game.store import (
    MAX_BOT_URL_FILTER,
    MAX_PAGE_SIZE,
    MAX_PLAYER_FILTER,
    InvalidCursorError,
    RecordStatus,
)
from models import (
    MAX_ECHO_CHARS,
    NewGameRequest,
    clip_text,
)

__all__ = ["MAX_ERROR_DETAIL_CHARS", "game_routes", "http_error", "notation_filename"]

#: The longest ``detail`` of a 422 from ``POST /game/new``: it may quote what the client
#: sent (keys, a URL), so it is clipped like any echo.
MAX_ERROR_DETAIL_CHARS: Final = 500
#: The longest game id kept in a notation file's name (``notation_filename``).
MAX_FILENAME_STEM: Final = 100
_UNSAFE_IN_FILENAME: Final = re.compile(r"[^A-Za-z0-9._-]")
#: What ``GET /games`` takes; any other query parameter is a 422.
LIST_GAMES_QUERY: Final = ("status", "player", "bot_url", "limit", "cursor")


# ------------------------------------------------------------------- helpers


def _error(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


def _clipped_error(status: int, detail: str) -> JSONResponse:
    """An error whose reason may quote what the client sent (a key, a URL)."""
    return _error(status, clip_text(detail, MAX_ERROR_DETAIL_CHARS))


def _json(model: BaseModel, status: int = 200) -> Response:
    return Response(model.model_dump_json(), status_code=status, media_type="application/json")


def _echo(text: str) -> str:
    """A value the client sent, quoted and clipped for an error message."""
    return clip_text(repr(text), MAX_ECHO_CHARS)


# ------------------------------------------------------------------ REST routes


async def new_game(request: Request) -> Response:
    """Create a game; the manager fetches the bots' capabilities before answering."""
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)  # ?wait=1 must not create a game as if it waited
    runtime, settings = _runtime(request), _settings(request)
    game = await creation_body(
        request,
        NewGameRequest,
        max_bytes=settings.max_body_bytes,
        closing="the server is shutting down; it takes no new games",
        error=_clipped_error,
    )
    if isinstance(game, Response):
        return game
    try:
        await check_seat_names(game, runtime.store)
    except SeatNameTaken as error:
        return _clipped_error(422, str(error))
    client = client_address(request)
    if runtime.games_of(client) >= settings.max_games_per_client:
        return _error(
            429,
            f"this client already has {_games(settings.max_games_per_client)}, the most "
            "allowed; wait for one to end",
        )
    runtime.creating[client] += 1
    try:
        created = await runtime.manager.create_game(game)
    except DiscoveryError as error:  # names the bot's URL, and may quote its answer
        return _clipped_error(422, str(error))
    except (TooManyGames, ManagerClosed) as error:
        return _error(503, str(error))
    else:
        runtime.by_client.setdefault(client, set()).add(created.game_id)
    finally:
        runtime.creating[client] -= 1
        if not runtime.creating[client]:
            del runtime.creating[client]
    return _json(created)


async def list_games(request: Request) -> Response:
    """Games newest first, live and over, optionally of one status, one player (by name)
    and one bot (by URL); cursor pagination from the store."""
    if (unknown := unknown_query(request, LIST_GAMES_QUERY)) is not None:
        return _error(422, unknown)
    params = request.query_params
    status: RecordStatus | None = None
    if (status_text := params.get("status")) is not None:
        try:
            status = RecordStatus(status_text)
        except ValueError:
            choices = ", ".join(s.value for s in RecordStatus)
            return _error(422, f"status: expected one of {choices}, got {_echo(status_text)}")
    player, bot_url = params.get("player"), params.get("bot_url")
    for name, value, what, longest in (
        ("player", player, "a name", MAX_PLAYER_FILTER),
        ("bot_url", bot_url, "a URL", MAX_BOT_URL_FILTER),
    ):
        if value is not None and not 1 <= len(value) <= longest:
            return _error(
                422,
                f"{name}: expected {what} of 1 to {longest} characters, got "
                f"{len(value)} characters",
            )
    limit_text = params.get("limit", "50")
    # ASCII digits, and few: int() refuses strings of over 4300 digits with a ValueError.
    short_number = limit_text.isascii() and limit_text.isdecimal() and len(limit_text) <= 9
    if not short_number or not 1 <= int(limit_text) <= MAX_PAGE_SIZE:
        return _error(
            422, f"limit: expected an integer from 1 to {MAX_PAGE_SIZE}, got {_echo(limit_text)}"
        )
    try:
        # Live games as they stand in memory, over the store's page.
        page = await _runtime(request).manager.records.page(
            status=status,
            player=player,
            bot_url=bot_url,
            limit=int(limit_text),
            before=params.get("cursor"),
        )
    except InvalidCursorError as error:
        return _clipped_error(422, f"cursor: {error}")
    return _json(page)


def _no_game(request: Request) -> HTTPException:
    return HTTPException(404, f"no game {_echo(request.path_params['game_id'])}")


async def get_game(request: Request) -> Response:
    """The game's record; with ``?wait=S`` (0 to ``MAX_WAIT_S`` seconds), once the game
    is over (its final record, committed) or after S seconds (the record as it stands,
    ``result`` null). An unknown game is a 404 at once, a bad ``wait`` a 422.

    A wait cut short by the server shutting down answers 200 with the record as it
    stands, not 503: reads go on being served while the server stops (only what starts
    something new is refused), and the record is a true answer; a client that sees no
    result asks again (a cluster's other workers answer it)."""
    if (unknown := unknown_query(request, ("wait",))) is not None:
        return _error(422, unknown)  # ?wiat=60 must not answer at once as if no wait
    wait_text = request.query_params.get("wait")
    seconds = parse_wait(wait_text)
    if seconds is None:
        return _error(
            422,
            f"wait: expected a number of seconds from 0 to {MAX_WAIT_S}, got "
            f"{_echo(str(wait_text))}",
        )
    runtime = _runtime(request)
    game_id = request.path_params["game_id"]
    # A live game is read from memory: it has every move broadcast so far.
    records = runtime.manager.records
    if seconds > 0:
        # Found before waiting: an unknown game is a 404 at once, not after the wait. A
        # game the store has as over already is answered at once: its status is read
        # once here, not again by the wait.
        running = runtime.manager.runs(game_id)
        if not running:
            status = await records.store.game_status(game_id)
            if status is None:
                raise _no_game(request)
            running = status is RecordStatus.RUNNING
        if running and await wait_for_end(runtime, request, game_id, seconds) is WaitEnd.GONE:
            return Response(status_code=204)  # never sent: the client has gone
    encoded = await records.record_json(game_id)
    if encoded is None:
        raise _no_game(request)
    return Response(encoded, media_type="application/json")


async def get_notation(request: Request) -> Response:
    if (unknown := unknown_query(request, ("download",))) is not None:
        return _error(422, unknown)
    download = request.query_params.get("download", "0")
    if download not in ("0", "1"):
        return _error(422, f"download: expected 0 or 1, got {_echo(download)}")
    game_id = request.path_params["game_id"]
    text = await _runtime(request).manager.records.notation(game_id)
    if text is None:
        raise _no_game(request)
    headers = None
    if download == "1":
        headers = {"content-disposition": f'attachment; filename="{notation_filename(game_id)}"'}
    return PlainTextResponse(text, headers=headers)


def notation_filename(game_id: str) -> str:
    """The file name a game's notation is saved under: ``<game_id>.htttx``, the id cut
    down to what is safe in a header and on any file system (ASCII letters, digits,
    ``.``, ``_``, ``-``; no leading dot; at most ``MAX_FILENAME_STEM`` characters).
    Stored ids are not only the server's own hex: an imported record keeps its id.

    >>> notation_filename("4f2a"), notation_filename('../a b"c/d'), notation_filename("..")
    ('4f2a.htttx', 'a_b_c_d.htttx', 'game.htttx')
    """
    stem = _UNSAFE_IN_FILENAME.sub("_", game_id).lstrip("._")[:MAX_FILENAME_STEM]
    return f"{stem or 'game'}.htttx"


async def health(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)
    runtime = _runtime(request)
    if runtime.closing:
        return JSONResponse({"status": "shutting down"}, status_code=503)
    answer: dict[str, Any] = {"status": "ok", "live_games": len(runtime.manager.live_game_ids())}
    if (node := runtime.manager.cluster) is not None:  # a worker of a cluster (--redis)
        answer["worker"] = node.worker_id
        try:
            answer["workers"] = len(await node.workers())
        except Exception as error:  # Redis down: this worker still serves
            answer["workers"] = None
            answer["cluster_error"] = clip_text(str(error), MAX_ERROR_DETAIL_CHARS)
    return JSONResponse(answer)


async def openapi_json(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)
    return JSONResponse(request.app.state.openapi)


async def docs(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)
    return HTMLResponse(_docs_page(request.app.state.openapi))


async def http_error(request: Request, exc: Exception) -> Response:
    # Every error is {"detail": ...} JSON, the unknown routes' 404 included.
    assert isinstance(exc, HTTPException)
    return _error(exc.status_code, str(exc.detail), dict(exc.headers or {}))


def game_routes() -> list[BaseRoute]:
    """The routes above, for ``create_app``."""
    return [
        Route("/game/new", new_game, methods=["POST"]),
        Route("/games", list_games, methods=["GET"]),
        Route("/games/{game_id}", get_game, methods=["GET"]),
        Route("/games/{game_id}/notation", get_notation, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", openapi_json, methods=["GET"], include_in_schema=False),
        Route("/docs", docs, methods=["GET"], include_in_schema=False),
    ]


def _games(count: int) -> str:
    """``count`` live games, in words.

    >>> _games(1), _games(16)
    ('1 live game', '16 live games')
    """
    return f"{count} live game" if count == 1 else f"{count} live games"

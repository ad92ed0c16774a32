"""The game server: a Starlette app for REST, human and spectator sockets, hosted bots.

Routes (``create_app``):

* ``POST /game/new`` — body ``NewGameRequest``; answers ``NewGameResponse`` (200), or
  ``{"detail": reason}`` with 401 (API token), 413 (body too large), 422 (anything
  invalid, a bot that cannot be seated included), 429 (per-client cap), 503 (server
  full or shutting down).
* ``GET /games`` (``status``, ``limit``, ``cursor``), ``GET /games/{id}``,
  ``GET /games/{id}/notation``, ``GET /health``, ``GET /openapi.json``, ``GET /docs``.
* WebSocket ``/ws?token=...`` (a human seat) and ``/spectate/{game_id}``.
* The example bots under ``/bots/random``, ``/bots/center``, ``/bots/threat``.

Games themselves are run by ``game.manager.GameManager``; this module only adapts HTTP
and sockets to it. ``GameServer`` is uvicorn's server with one change: on shutdown it
first aborts the running games (so everyone gets an ``end``), then lets uvicorn close
what is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import logging
import re
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import aiohttp
import uvicorn
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from bot.bot import BaseBot
from bot.bots import CenterBot, RandomBot, ThreatBot
from bot.serve import BotPool, ListeningServer, mount_bot, read_body, uvicorn_config
from game.discovery import DEFAULT_POLICY, AddressPolicy, DiscoveryError
from game.frames import BINARY_FRAME_REFUSED, CLOSE_UNSUPPORTED_DATA, RefusedFrame
from game.inbound_ws import refusal
from game.limits import ConnectionLimits, uvicorn_protocols
from game.manager import (
    DEFAULT_COMMIT_INTERVAL,
    DEFAULT_MAX_SPECTATORS,
    GameManager,
    ManagerClosed,
    TooManyGames,
    TooManySpectators,
    UnknownGame,
    UnknownToken,
    check_commit_interval,
)
from game.seats import ConnectionClosed
from game.session import SessionLimits
from game.store import (
    MAX_PAGE_SIZE,
    GamePage,
    GameStore,
    InvalidCursorError,
    RecordStatus,
)
from models import (
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    CLOSE_TRY_AGAIN_LATER,
    MAX_ECHO_CHARS,
    GameRecord,
    HostedBot,
    HostedBots,
    NewGameRequest,
    NewGameResponse,
    ProtocolError,
    clip_close_reason,
    clip_text,
    parse_body,
)

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_GAMES",
    "DEFAULT_MAX_GAMES_PER_CLIENT",
    "HOSTED_BOTS",
    "GameServer",
    "TokenRedactingFilter",
    "create_app",
    "install_token_filter",
    "redact_tokens",
    "serving",
]

log = logging.getLogger("game.server")

DEFAULT_MAX_GAMES: Final = 1000
DEFAULT_MAX_GAMES_PER_CLIENT: Final = 16
#: ``POST /game/new`` bodies are small; anything bigger is refused unread (413).
DEFAULT_MAX_BODY_BYTES: Final = 64 * 1024
#: The longest ``detail`` of a 422 from ``POST /game/new``: it may quote what the client
#: sent (keys, a URL), so it is clipped like any echo.
MAX_ERROR_DETAIL_CHARS: Final = 500
#: The example bots hosted on the server's own port, by path.
HOSTED_BOTS: Final[dict[str, type[BaseBot]]] = {
    "/bots/random": RandomBot,
    "/bots/center": CenterBot,
    "/bots/threat": ThreatBot,
}


# ------------------------------------------------------------- token redaction

_TOKEN_IN_QUERY: Final = re.compile(r"([?&]token=)[^&\s\"]*", re.IGNORECASE)


def redact_tokens(text: str) -> str:
    """``text`` with the value of every ``token=`` query parameter hidden.

    >>> redact_tokens('127.0.0.1:5 - "GET /ws?token=s3cret&x=1 HTTP/1.1" 101')
    '127.0.0.1:5 - "GET /ws?token=[redacted]&x=1 HTTP/1.1" 101'
    """
    return _TOKEN_IN_QUERY.sub(r"\1[redacted]", text)


class TokenRedactingFilter(logging.Filter):
    """Hides seat tokens in uvicorn's log lines: a token in a log is a seat anyone
    with the log can take. uvicorn logs request lines with the query string to
    ``uvicorn.access`` (HTTP) and ``uvicorn.error`` (WebSocket handshakes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_tokens(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(
                redact_tokens(arg) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


_TOKEN_LOGGERS: Final = ("uvicorn.access", "uvicorn.error")


def install_token_filter() -> None:
    """Put a ``TokenRedactingFilter`` on uvicorn's loggers (once).

    Logger filters only see records logged on that very logger, so it goes on each one
    that writes request lines, not on a parent."""
    for name in _TOKEN_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, TokenRedactingFilter) for f in logger.filters):
            logger.addFilter(TokenRedactingFilter())


# ------------------------------------------------------------------- runtime


@dataclass
class _Settings:
    db_url: str
    policy: AddressPolicy
    api_token: str | None
    host_example_bots: bool
    max_games: int
    max_games_per_client: int
    max_spectators: int
    max_body_bytes: int
    limits: SessionLimits | None
    discovery_timeout: float
    commit_interval: float


@dataclass
class _Runtime:
    """What the lifespan opens and closes, in ``app.state.arena``."""

    store: GameStore
    http: aiohttp.ClientSession
    pool: BotPool
    manager: GameManager
    closing: bool = False
    drained: bool = False
    # Live games created per client address, and creations under way (discovery takes
    # a while, and concurrent requests must not all slip under the cap), for the
    # per-client cap.
    by_client: dict[str, set[str]] = field(default_factory=dict)
    creating: Counter[str] = field(default_factory=Counter)

    async def drain(self) -> None:
        """Stop taking games and abort the running ones (each gets an ``end``).

        Idempotent: ``GameServer.shutdown`` calls it before uvicorn closes connections,
        the lifespan again in case the app runs under a plain uvicorn."""
        self.closing = True
        if self.drained:
            return
        self.drained = True
        await self.manager.shutdown()
        await self.pool.close_sessions(1001, "the game server is shutting down")

    def games_of(self, client: str) -> int:
        """Live games of ``client``, counting those being created."""
        # Forget every ended game, not only this client's: clients that never come
        # back must not leave entries behind. One pass over at most max_games ids.
        live = set(self.manager.live_game_ids())
        for key in list(self.by_client):
            self.by_client[key] &= live
            if not self.by_client[key]:
                del self.by_client[key]
        return len(self.by_client.get(client, ())) + self.creating[client]


def _runtime(request: Request | WebSocket) -> _Runtime:
    runtime: _Runtime = request.app.state.arena
    return runtime


def _settings(request: Request) -> _Settings:
    settings: _Settings = request.app.state.settings
    return settings


# ------------------------------------------------------------------- helpers


def _error(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


def _json(model: BaseModel, status: int = 200) -> Response:
    return Response(model.model_dump_json(), status_code=status, media_type="application/json")


def _authorized(request: Request, api_token: str) -> bool:
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    # compare_digest: the time taken must not tell how much of a guess was right.
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), api_token.encode()
    )


def _echo(text: str) -> str:
    """A value the client sent, quoted and clipped for an error message."""
    return clip_text(repr(text), MAX_ECHO_CHARS)


def _client(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


# ------------------------------------------------------------------ REST routes


async def new_game(request: Request) -> Response:
    """Create a game; the manager fetches the bots' capabilities before answering."""
    runtime, settings = _runtime(request), _settings(request)
    if settings.api_token is not None and not _authorized(request, settings.api_token):
        return _error(
            401,
            "an API token is required: send 'Authorization: Bearer <HTTTX_API_TOKEN>'",
            {"WWW-Authenticate": "Bearer"},
        )
    if runtime.closing:
        return _error(503, "the server is shutting down; it takes no new games")
    body = await read_body(request, settings.max_body_bytes)
    if body is None:
        return _error(413, f"request body over {settings.max_body_bytes} bytes")
    try:
        game = parse_body(NewGameRequest, body)
    except ProtocolError as error:
        return _error(422, clip_text(str(error), MAX_ERROR_DETAIL_CHARS))
    client = _client(request)
    if runtime.games_of(client) >= settings.max_games_per_client:
        return _error(
            429,
            f"this client already has {settings.max_games_per_client} live games, the "
            "most allowed; wait for one to end",
        )
    runtime.creating[client] += 1
    try:
        created = await runtime.manager.create_game(game)
    except DiscoveryError as error:  # names the bot's URL, and may quote its answer
        return _error(422, clip_text(str(error), MAX_ERROR_DETAIL_CHARS))
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
    """Games newest first, live and over; cursor pagination from the store."""
    params = request.query_params
    status: RecordStatus | None = None
    if (status_text := params.get("status")) is not None:
        try:
            status = RecordStatus(status_text)
        except ValueError:
            choices = ", ".join(s.value for s in RecordStatus)
            return _error(422, f"status: expected one of {choices}, got {_echo(status_text)}")
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
            status=status, limit=int(limit_text), before=params.get("cursor")
        )
    except InvalidCursorError as error:
        return _error(422, clip_text(f"cursor: {error}", MAX_ERROR_DETAIL_CHARS))
    return _json(page)


def _no_game(request: Request) -> HTTPException:
    return HTTPException(404, f"no game {_echo(request.path_params['game_id'])}")


async def get_game(request: Request) -> Response:
    # A live game is read from memory: it has every move broadcast so far.
    records = _runtime(request).manager.records
    encoded = await records.record_json(request.path_params["game_id"])
    if encoded is None:
        raise _no_game(request)
    return Response(encoded, media_type="application/json")


async def get_notation(request: Request) -> Response:
    records = _runtime(request).manager.records
    text = await records.notation(request.path_params["game_id"])
    if text is None:
        raise _no_game(request)
    return PlainTextResponse(text)


async def hosted_bots(request: Request) -> Response:
    """The example bots this server hosts, with absolute URLs for ``bot_url``. The
    URLs are built from the request, so they name the server as the caller reached it."""
    if not _settings(request).host_example_bots:
        return _json(HostedBots(bots=[]))
    base = str(request.base_url).rstrip("/")
    bots = [
        HostedBot(name=path.rsplit("/", 1)[-1], url=base + path, meta=bot_class.capabilities().meta)
        for path, bot_class in HOSTED_BOTS.items()
    ]
    return _json(HostedBots(bots=bots))


async def health(request: Request) -> Response:
    runtime = _runtime(request)
    if runtime.closing:
        return JSONResponse({"status": "shutting down"}, status_code=503)
    return JSONResponse({"status": "ok", "live_games": len(runtime.manager.live_game_ids())})


async def openapi_json(request: Request) -> Response:
    return JSONResponse(request.app.state.openapi)


async def docs(request: Request) -> Response:
    return HTMLResponse(_docs_page(request.app.state.openapi))


async def _http_error(request: Request, exc: Exception) -> Response:
    # Every error is {"detail": ...} JSON, the unknown routes' 404 included.
    assert isinstance(exc, HTTPException)
    return _error(exc.status_code, str(exc.detail), dict(exc.headers or {}))


# --------------------------------------------------------------------- sockets


class _Inbound:
    """A Starlette WebSocket as the manager's ``InboundConnection``.

    What the protocol forbids never reaches the session as data: a binary frame (the
    protocol is text JSON) or a close by ``GuardedWebSocketProtocol`` (a flood of
    control frames, text that is not UTF-8) is handed to a seat's session as a
    ``RefusedFrame`` with the reason, which forfeits the seat for ``protocol_error``;
    a spectator, who has nothing to say, is closed with 1003 for a binary frame.
    Closing a socket that is already closed does nothing."""

    def __init__(self, websocket: WebSocket, *, spectator: bool = False) -> None:
        self.websocket = websocket
        self.spectator = spectator
        self._refused = False

    async def send_text(self, data: str) -> None:
        await self.websocket.send_text(data)

    async def receive_text(self) -> str | bytes:
        try:
            message = await self.websocket.receive()
        except (RuntimeError, OSError) as error:  # read again after the disconnect
            raise ConnectionClosed(str(error)) from None
        if message["type"] == "websocket.disconnect":
            reason = refusal(self.websocket.scope)
            if reason is not None and not self._refused and not self.spectator:
                self._refused = True  # once: the next read sees the disconnect
                return RefusedFrame(reason)
            raise ConnectionClosed(f"closed with {message.get('code', 1000)}")
        text = message.get("text")
        if text is not None:
            return str(text)
        if self.spectator:
            await self.close(
                CLOSE_UNSUPPORTED_DATA, f"{BINARY_FRAME_REFUSED}; spectators send none"
            )
            raise ConnectionClosed("the spectator sent a binary frame")
        return RefusedFrame(BINARY_FRAME_REFUSED)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        await _close(self.websocket, code, reason)


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    if websocket.application_state == WebSocketState.DISCONNECTED:
        return
    if websocket.client_state == WebSocketState.DISCONNECTED:
        return
    with contextlib.suppress(RuntimeError, OSError, WebSocketDisconnect):
        await websocket.close(code, clip_close_reason(reason))


async def _serve_socket(
    websocket: WebSocket,
    run: Callable[[_Inbound], Awaitable[None]],
    refused: Mapping[type[Exception], int],
    *,
    spectator: bool = False,
) -> None:
    """Accept, run, close normally; an exception of a ``refused`` type closes with its
    close code and the exception's text as the reason."""
    # Accept first: a close before the handshake is a bare HTTP 403 without a reason.
    await websocket.accept()
    connection = _Inbound(websocket, spectator=spectator)
    try:
        await run(connection)
    except tuple(refused) as error:
        await _close(websocket, refused[type(error)], str(error) or type(error).__name__)
        return
    await _close(websocket, CLOSE_NORMAL, "")


async def human_socket(websocket: WebSocket) -> None:
    """A human seat: the bot protocol, inbound, for whoever holds the seat's token."""
    token = websocket.query_params.get("token")
    if _runtime(websocket).closing:
        await websocket.accept()
        await _close(websocket, 1001, "the game server is shutting down")
        return
    if not token:
        await websocket.accept()
        await _close(websocket, 1008, "missing token: connect to /ws?token=<token_x or token_o>")
        return
    manager = _runtime(websocket).manager
    await _serve_socket(
        websocket,
        lambda c: manager.play_human(token, c),
        {UnknownToken: CLOSE_POLICY_VIOLATION},
    )


async def spectator_socket(websocket: WebSocket) -> None:
    """A spectator: the game so far, then every move, then the end."""
    game_id = websocket.path_params["game_id"]
    if _runtime(websocket).closing:
        await websocket.accept()
        await _close(websocket, 1001, "the game server is shutting down")
        return
    manager = _runtime(websocket).manager
    await _serve_socket(
        websocket,
        lambda c: manager.spectate(game_id, c),
        {UnknownGame: CLOSE_POLICY_VIOLATION, TooManySpectators: CLOSE_TRY_AGAIN_LATER},
        spectator=True,
    )


# --------------------------------------------------------------------- OpenAPI


def _openapi(hosted: bool) -> dict[str, Any]:
    """An OpenAPI 3.1 document of the REST routes, schemas from the pydantic models."""
    ref = "#/components/schemas/{model}"
    _, schemas = models_json_schema(
        [
            (NewGameRequest, "validation"),
            (NewGameResponse, "serialization"),
            (GameRecord, "serialization"),
            (GamePage, "serialization"),
            (HostedBots, "serialization"),
        ],
        ref_template=ref,
    )
    schemas = dict(schemas.get("$defs", {}))
    schemas["Error"] = {
        "type": "object",
        "properties": {"detail": {"type": "string"}},
        "required": ["detail"],
    }

    def body(name: str) -> dict[str, Any]:
        return {"application/json": {"schema": {"$ref": ref.format(model=name)}}}

    def error(text: str) -> dict[str, Any]:
        return {"description": text, "content": body("Error")}

    game_id = {"name": "game_id", "in": "path", "required": True, "schema": {"type": "string"}}
    not_found = error("No such game")
    paths: dict[str, Any] = {
        "/game/new": {
            "post": {
                "summary": "Create a game between two bots, two humans, or one of each",
                "description": (
                    "Bots are named by URL; their capabilities are fetched before the "
                    "answer. Human seats get a token for /ws?token=. When the server has "
                    "an API token, send 'Authorization: Bearer <token>'."
                ),
                "requestBody": {"required": True, "content": body("NewGameRequest")},
                "responses": {
                    "200": {
                        "description": "The game was created",
                        "content": body("NewGameResponse"),
                    },
                    "401": error("API token missing or wrong"),
                    "413": error("Body too large"),
                    "422": error("Invalid request, or a bot that cannot be seated"),
                    "429": error("Too many live games for this client"),
                    "503": error("The server is full or shutting down"),
                },
                "security": [{"bearer": []}, {}],
            }
        },
        "/games": {
            "get": {
                "summary": "Games, newest first (live and over)",
                "parameters": [
                    {
                        "name": "status",
                        "in": "query",
                        "schema": {"type": "string", "enum": [s.value for s in RecordStatus]},
                    },
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": MAX_PAGE_SIZE,
                            "default": 50,
                        },
                    },
                    {
                        "name": "cursor",
                        "in": "query",
                        "description": "next_cursor of the previous page",
                        "schema": {"type": "string"},
                    },
                ],
                "responses": {
                    "200": {"description": "A page of games", "content": body("GamePage")},
                    "422": error("Bad status, limit or cursor"),
                },
            }
        },
        "/games/{game_id}": {
            "get": {
                "summary": "The record of a game: players, settings, moves, result",
                "parameters": [game_id],
                "responses": {
                    "200": {"description": "The game record", "content": body("GameRecord")},
                    "404": not_found,
                },
            }
        },
        "/games/{game_id}/notation": {
            "get": {
                "summary": "The game in HTTTX notation, version 2",
                "parameters": [game_id],
                "responses": {
                    "200": {
                        "description": "HTTTX notation text",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    "404": not_found,
                },
            }
        },
        "/bots": {
            "get": {
                "summary": "The example bots this server hosts (empty when it hosts none)",
                "description": "Each 'url' can be passed as 'bot_url' to /game/new.",
                "responses": {
                    "200": {"description": "Hosted bots", "content": body("HostedBots")},
                },
            }
        },
        "/health": {
            "get": {
                "summary": "Liveness: 200 while serving, 503 while shutting down",
                "responses": {
                    "200": {"description": "Serving"},
                    "503": {"description": "Stopping"},
                },
            }
        },
    }
    description = (
        "HTTTX game server. WebSockets (not described by OpenAPI): /ws?token=<token> plays "
        "a human seat with the bot protocol; /spectate/{game_id} follows a live game."
    )
    if hosted:
        description += " Example bots: " + ", ".join(HOSTED_BOTS) + "."
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "htttx-arena game server",
            "version": "0.1.0",
            "description": description,
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


def _docs_page(document: dict[str, Any]) -> str:
    """A self-contained page listing the routes: nothing loads from the internet."""
    rows = "".join(
        f"<tr><td><code>{html.escape(method.upper())}</code></td>"
        f"<td><code>{html.escape(path)}</code></td>"
        f"<td>{html.escape(operation.get('summary', ''))}</td></tr>"
        for path, item in document["paths"].items()
        for method, operation in item.items()
    )
    info = document["info"]
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(info['title'])}</title></head><body>"
        f"<h1>{html.escape(info['title'])}</h1><p>{html.escape(info['description'])}</p>"
        f"<table border='1' cellpadding='4'><tr><th>Method</th><th>Path</th><th></th></tr>"
        f"{rows}</table><p>Schemas: <a href='/openapi.json'>/openapi.json</a> "
        "(OpenAPI 3.1).</p></body></html>"
    )


# ------------------------------------------------------------------------ app


def create_app(
    *,
    db_url: str = GameStore.DEFAULT_URL,
    policy: AddressPolicy = DEFAULT_POLICY,
    api_token: str | None = None,
    host_example_bots: bool = True,
    max_games: int = DEFAULT_MAX_GAMES,
    max_games_per_client: int = DEFAULT_MAX_GAMES_PER_CLIENT,
    max_spectators: int = DEFAULT_MAX_SPECTATORS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    limits: SessionLimits | None = None,
    discovery_timeout: float = 5.0,
    commit_interval: float = DEFAULT_COMMIT_INTERVAL,
) -> Starlette:
    """The game server's app. Its lifespan opens the store (marking games left running
    by a previous run as aborted), one aiohttp session for every outbound request, the
    hosted bots' pool and the ``GameManager``, and closes them in reverse order."""
    if max_games_per_client < 1 or max_games < 1 or max_spectators < 1:
        raise ValueError("max_games, max_games_per_client and max_spectators must be at least 1")
    check_commit_interval(commit_interval)
    settings = _Settings(
        db_url=db_url,
        policy=policy,
        api_token=api_token or None,
        host_example_bots=host_example_bots,
        max_games=max_games,
        max_games_per_client=max_games_per_client,
        max_spectators=max_spectators,
        max_body_bytes=max_body_bytes,
        limits=limits,
        discovery_timeout=discovery_timeout,
        commit_interval=commit_interval,
    )
    # The pool exists before the app so the bot routes can be mounted; threads are
    # only started on first use, and the lifespan shuts it down.
    pool = BotPool()
    routes: list[BaseRoute] = [
        Route("/game/new", new_game, methods=["POST"]),
        Route("/games", list_games, methods=["GET"]),
        Route("/games/{game_id}", get_game, methods=["GET"]),
        Route("/games/{game_id}/notation", get_notation, methods=["GET"]),
        Route("/bots", hosted_bots, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", openapi_json, methods=["GET"], include_in_schema=False),
        Route("/docs", docs, methods=["GET"], include_in_schema=False),
        WebSocketRoute("/ws", human_socket),
        WebSocketRoute("/spectate/{game_id}", spectator_socket),
    ]
    if host_example_bots:
        routes += [mount_bot(prefix, bot_class, pool) for prefix, bot_class in HOSTED_BOTS.items()]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        install_token_filter()
        async with contextlib.AsyncExitStack() as stack:
            stack.callback(pool.shutdown)
            stack.push_async_callback(pool.close_sessions)
            store = await GameStore.open(settings.db_url)
            stack.push_async_callback(store.close)
            aborted = await store.abort_running(ended_at=datetime.now(UTC))
            if aborted:
                log.warning("marked %d game(s) left running by a previous run as aborted", aborted)
            # Every request made on a bot's behalf: checked addresses, no redirects.
            http = settings.policy.client_session()
            stack.push_async_callback(http.close)
            manager = GameManager(
                store,
                http,
                policy=settings.policy,
                limits=settings.limits,
                discovery_timeout=settings.discovery_timeout,
                max_games=settings.max_games,
                max_spectators=settings.max_spectators,
                commit_interval=settings.commit_interval,
            )
            runtime = _Runtime(store=store, http=http, pool=pool, manager=manager)
            stack.push_async_callback(runtime.drain)
            app.state.arena = runtime
            yield

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error},
    )
    app.state.settings = settings
    app.state.openapi = _openapi(host_example_bots)
    app.state.bot_pool = pool
    return app


# --------------------------------------------------------------------- server


class GameServer(ListeningServer):
    """uvicorn's server, aborting the running games before uvicorn closes connections.

    Without this, uvicorn would drop every socket with 1012 first and games would end
    as disconnects; with it, each game ends as ``aborted``, with an ``end`` to both
    seats and every spectator, and is recorded so."""

    def __init__(
        self,
        app: Starlette,
        config: uvicorn.Config,
        *,
        on_started: Callable[[GameServer], None] | None = None,
    ) -> None:
        super().__init__(config, on_started=on_started)
        self.app = app
        #: Tasks started for this server (the --demo game); cancelled on shutdown.
        self.tasks: set[asyncio.Task[Any]] = set()

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        runtime: _Runtime | None = getattr(self.app.state, "arena", None)
        if runtime is not None:
            try:
                await runtime.drain()
            except Exception:  # still close the sockets and the lifespan
                log.exception("aborting the running games failed")
        await super().shutdown(sockets)


def server_config(
    app: Starlette,
    *,
    host: str = "127.0.0.1",
    port: int = 8001,
    log_level: str = "info",
    limits: ConnectionLimits | None = None,
) -> uvicorn.Config:
    """The bot server's uvicorn settings (websockets-sansio, uvloop, httptools, frame
    cap, no per-message deflate) with a longer graceful shutdown: aborting games
    means a last write to the store and an ``end`` to everyone. ``limits`` (default
    ``ConnectionLimits()``) bound connections: per client address, the time a request
    may take to arrive, idle keep-alive; and every WebSocket is a
    ``GuardedWebSocketProtocol`` (control-frame floods, text that is not UTF-8)."""
    limits = ConnectionLimits() if limits is None else limits
    config = uvicorn_config(app, host=host, port=port, log_level=log_level)
    config.timeout_graceful_shutdown = 10
    config.timeout_keep_alive = limits.keep_alive_timeout
    if config.http == "httptools" and config.ws == "websockets-sansio":
        config.http, config.ws = uvicorn_protocols(limits)
    else:  # pragma: no cover - uvicorn[standard] brings both
        log.warning(
            "httptools or websockets-sansio is missing: connections per client, request "
            "timeouts and control-frame limits are not enforced"
        )
    return config


@contextlib.asynccontextmanager
async def serving(
    app: Starlette,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    log_level: str = "warning",
    limits: ConnectionLimits | None = None,
) -> AsyncIterator[GameServer]:
    """Run ``app`` on this event loop while the block runs (port 0: a free port, see
    ``server.url``); shut it down gracefully on exit. For tests and embedding."""
    config = server_config(app, host=host, port=port, log_level=log_level, limits=limits)
    server = GameServer(app, config)
    # In-process: signals stay with whoever runs the loop.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve(), name="game server")
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("the game server stopped during startup")
            await asyncio.sleep(0.01)
        yield server
    finally:
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=30)
        except TimeoutError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

"""Serve bots over HTTP and WebSocket: ``python -m bot.serve`` (also ``htttx-bot``).

One port serves, for every hosted bot (at ``/`` or under a prefix such as ``/random``):

* ``GET <prefix>/capabilities.json`` — the bot's ``capabilities()``, with the
  ``api_root`` of both APIs replaced when ``--api-root`` is given, and ``Cache-Control:
  max-age=5`` (``--capabilities-max-age``): a game server may reuse it that long instead
  of fetching it for every game (``game.capabilities_cache``);
* the WebSocket ``<prefix>/<bws api_root>/game``, and ``.../game/game`` too, because the
  prototype's game server dials that doubled path (``protocol.md``, "Known quirks"); a
  plain ``GET`` there answers 426 with a hint instead of a bare 404;
* ``POST <prefix>/<stateless api_root>/turn`` when the bot declares the stateless API.

The socket handler (``bot.connection``) is a thin adapter around the pure state
machine ``bot.session.BotSession``: it feeds it frames, finished jobs and due answers,
and carries out the actions it returns. A binary frame closes the session with 1003
(the protocol is JSON in text frames). Every session gets its own bot instance; calls into
one bot never overlap (a per-session queue runs them one at a time, in order) and never
run on the event loop, so heartbeats and other games keep flowing while a bot thinks —
unless the bot class declares ``answers_on_loop`` (``BaseBot``: for bots that answer in
microseconds, at the price of blocking the loop while they run; threads only).

Where bots think is a ``BotPool`` (``bot.pool``):

* threads (the default): one bot instance per session in this process; ``Deadline``
  works fully (``report``, cancellation);
* processes (``--process-pool``): ``--workers`` worker processes, each session pinned to
  one of them (round robin), its bot instance living in that worker for the whole
  session and forgotten when the session ends. The bot class must be importable by its
  ``module:Class`` (workers are spawned fresh), and arguments and results are pickled.
  Across the process boundary a bot gets its remaining time as a fresh ``Deadline``, but
  ``Deadline.report`` and cancellation do not come back: when time runs out the session
  sends its legal fallback move instead of the bot's best so far, and an interrupted bot
  runs until it returns or its time is up.

The stateless route is ``bot.stateless_route``. This module puts the pieces together:
the routes, the app and the uvicorn server; the command line is ``bot.serve_cli``.

The game server hosts the example bots on its own port with ``mount_bot`` (or
``bot_routes``) and a ``BotPool`` it owns and closes.

Programmatic use::

    app = create_app({"/random": RandomBot, "/center": CenterBot})
    async with serving(app) as server:      # uvicorn on 127.0.0.1, an ephemeral port
        print(server.url)
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import logging
import math
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, NamedTuple

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.websockets import WebSocket

from bot.bot import BaseBot
from bot.connection import MAX_FRAME_BYTES, not_a_socket, socket_endpoint
from bot.pool import CLOSE_TIMEOUT, MAX_QUEUED_CALLS, BotPool, warm_up_bots
from bot.stateless_route import MAX_BODY_BYTES, read_body, stateless_turn
from models import (
    CLOSE_GOING_AWAY,
    MATCH_CONFIG_KEY,
    BwsConfigCapability,
    Capabilities,
    Meta,
    dump_packet,
)
from wire.inbound_ws import GuardedWebSocketProtocol

__all__ = [
    "CAPABILITIES_MAX_AGE",
    "DEFAULT_BOT",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "MAX_BODY_BYTES",
    "MAX_FRAME_BYTES",
    "MAX_QUEUED_CALLS",
    "BotPaths",
    "BotPool",
    "BotServer",
    "BotSpecError",
    "ListeningServer",
    "bot_paths",
    "bot_routes",
    "create_app",
    "load_bot",
    "mount_bot",
    "prefix_path",
    "read_body",
    "served_capabilities",
    "serving",
    "uvicorn_config",
]

log = logging.getLogger("bot.serve")

DEFAULT_BOT = "bot.bots:CenterBot"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8002  # the prototype's bot server port
#: Seconds a game server may reuse a bot's capabilities (``Cache-Control: max-age``):
#: back-to-back games fetch them once, and a bot restarted with other ones is seen
#: within seconds. 0 sends ``no-cache``: fetched for every game.
CAPABILITIES_MAX_AGE = 5
#: The most ``--capabilities-max-age`` takes (a day; game servers cap it lower).
MAX_CAPABILITIES_MAX_AGE = 86_400


# ------------------------------------------------------------------ loading bots


class BotSpecError(ValueError):
    """A ``module:Class`` that does not name a ``BaseBot`` subclass; the message says why."""


def load_bot(spec: str) -> type[BaseBot]:
    """The bot class named by ``"module:Class"`` (``Class`` may be dotted).

    >>> load_bot("bot.bot:BaseBot").__name__
    'BaseBot'
    >>> load_bot("bot.bot")
    Traceback (most recent call last):
    ...
    bot.serve.BotSpecError: 'bot.bot' is not module:Class (e.g. bot.bots:CenterBot)
    >>> load_bot("bot.bot:Deadline")
    Traceback (most recent call last):
    ...
    bot.serve.BotSpecError: 'bot.bot:Deadline' is not a BaseBot subclass (it is a class)
    """
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise BotSpecError(f"{spec!r} is not module:Class (e.g. bot.bots:CenterBot)")
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):  # a parent package is missing, or a bad name
        found = None
    if found is None:
        raise BotSpecError(f"{spec!r}: no module named {module_name!r}")
    try:
        target: object = importlib.import_module(module_name)
    except Exception as exc:  # the bot's own module is broken: say how, in one line
        raise BotSpecError(
            f"{spec!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    for name in attribute.split("."):
        try:
            target = getattr(target, name)
        except AttributeError:
            raise BotSpecError(f"{spec!r}: module {module_name!r} has no {attribute!r}") from None
    if not (isinstance(target, type) and issubclass(target, BaseBot)):
        kind = "a class" if isinstance(target, type) else f"a {type(target).__name__}"
        raise BotSpecError(f"{spec!r} is not a BaseBot subclass (it is {kind})")
    return target


# ---------------------------------------------------------------------- routes


def _root(api_root: str) -> str:
    """``api_root`` as a path segment without slashes ('' for the bot's base)."""
    return api_root.strip("/")


def _path(*segments: str) -> str:
    return "/" + "/".join(segment for segment in segments if segment)


def prefix_path(prefix: str) -> str:
    """The path of the bot served under ``prefix`` (``create_app``'s keys): '' for one at
    the root.

    >>> prefix_path("random"), prefix_path("/random/"), prefix_path("/")
    ('/random', '/random', '')
    """
    return _path(_root(prefix)) if _root(prefix) else ""


class BotPaths(NamedTuple):
    """Where a served bot answers, relative to its base (the root, or ``prefix_path``):
    ``socket`` and the stateless ``turn`` are None for an API it does not declare."""

    capabilities: str
    socket: str | None
    turn: str | None


def bot_paths(capabilities: Capabilities) -> BotPaths:
    """The paths ``bot_routes`` serves a bot with ``capabilities`` (as
    ``served_capabilities`` gives them) at.

    >>> from bot.bot import BaseBot
    >>> bot_paths(served_capabilities(BaseBot, "api"))
    BotPaths(capabilities='/capabilities.json', socket='/api/game', turn='/api/turn')
    """
    bws, stateless = capabilities.bws_v1_alpha, capabilities.stateless_v1_alpha
    return BotPaths(
        capabilities="/capabilities.json",
        socket=None if bws is None else _path(_root(bws.api_root), "game"),
        turn=None if stateless is None else _path(_root(stateless.api_root), "turn"),
    )


def served_capabilities(bot_class: type[BaseBot], api_root: str | None = None) -> Capabilities:
    """The capabilities document served for ``bot_class``: its own, with the
    ``api_root`` of both APIs set to ``api_root`` when given.

    >>> from bot.bot import BaseBot
    >>> caps = served_capabilities(BaseBot, "api/v1")
    >>> caps.bws_v1_alpha.api_root, caps.stateless_v1_alpha.api_root
    ('api/v1', 'api/v1')

    Its WebSocket API declares ``config`` and accepts the game's settings
    (``MATCH_CONFIG_KEY``), which its ``BotSession`` reads for it, whether or not the
    bot declares ``config`` itself: without them a bot plays every game by the standard
    rules, and a game server cannot seat it in a game with others (``on_config``, a
    no-op unless overridden, gets whatever else a config holds).

    >>> served_capabilities(BaseBot).bws_v1_alpha.config.accepts_match_settings
    True

    An ``api_root`` is served without leading or trailing slashes, whoever gives it
    (a path relative to the document, as the spec says):

    >>> served_capabilities(BaseBot, "/api/v1/").stateless_v1_alpha.api_root
    'api/v1'

    A bot whose capabilities give no ``meta.name`` is named by its class's ``name``,
    else the class's own name:

    >>> served_capabilities(BaseBot).meta.name
    'BaseBot'
    """
    capabilities = bot_class.capabilities().model_copy(deep=True)
    if capabilities.meta is None or capabilities.meta.name is None:
        # Records and notation name a seat by its bot's meta name.
        named = {"name": bot_class.name or bot_class.__name__}
        capabilities.meta = (capabilities.meta or Meta()).model_copy(update=named)
    if (bws := capabilities.bws_v1_alpha) is not None:
        # BotSession reads the game's settings from this key for every bot: say so, so
        # that game servers may send it.
        declared = {} if bws.config is None else bws.config.model_dump(by_alias=True)
        bws.config = BwsConfigCapability.model_validate({**declared, MATCH_CONFIG_KEY: True})
    for api in (capabilities.bws_v1_alpha, capabilities.stateless_v1_alpha):
        if api is not None:
            # Served without slashes, as the routes are made: a leading one would send a
            # client that resolves the path as RFC 3986 does to the host's root, not
            # below the bot's base, and a trailing one doubles the slash before "turn".
            api.api_root = _root(api.api_root if api_root is None else api_root)
    return capabilities


def bot_routes(
    bot_class: type[BaseBot],
    pool: BotPool,
    *,
    api_root: str | None = None,
    capabilities_max_age: int = CAPABILITIES_MAX_AGE,
) -> list[BaseRoute]:
    """The routes of one bot, relative to its base URL: mount them under a prefix
    (``Mount("/random", routes=...)``, or ``mount_bot``) or put them at the root.

    ``pool`` runs the bot's calls and keeps its sessions; its owner closes it.
    ``capabilities_max_age`` is the document's ``Cache-Control: max-age`` (seconds; 0:
    ``no-cache``).
    """
    if not 0 <= capabilities_max_age <= MAX_CAPABILITIES_MAX_AGE:
        raise ValueError(
            f"capabilities_max_age must be from 0 to {MAX_CAPABILITIES_MAX_AGE} seconds, "
            f"got {capabilities_max_age}"
        )
    capabilities = served_capabilities(bot_class, api_root)
    document = dump_packet(capabilities)
    caching = {"cache-control": _cache_control(capabilities_max_age)}

    async def capabilities_json(request: Request) -> Response:
        return Response(document, media_type="application/json", headers=caching)

    paths = bot_paths(capabilities)
    routes: list[BaseRoute] = [Route(paths.capabilities, capabilities_json, methods=["GET"])]
    if (bws := capabilities.bws_v1_alpha) is not None and (socket := paths.socket) is not None:
        features = bws

        async def game(websocket: WebSocket) -> None:
            await socket_endpoint(websocket, bot_class, features, pool)

        # The prototype's game server dials the doubled path (protocol.md, known quirks).
        for path in (socket, socket + "/game"):
            routes += [WebSocketRoute(path, game), Route(path, not_a_socket, methods=["GET"])]
    if (stateless := capabilities.stateless_v1_alpha) is not None and paths.turn is not None:
        declared = stateless
        # The stateless API has no free_setup of its own: a bot that plays any board on
        # its socket plays any board here too.
        free_setup = bool(capabilities.bws_v1_alpha and capabilities.bws_v1_alpha.free_setup)

        async def turn(request: Request) -> Response:
            return await stateless_turn(request, bot_class, declared, pool, free_setup)

        routes.append(Route(paths.turn, turn, methods=["POST"]))
    if capabilities.bws_v1_alpha is None and capabilities.stateless_v1_alpha is None:
        log.warning("%s declares neither API: no game server can seat it", bot_class.__name__)
    return routes


def _cache_control(max_age: int) -> str:
    """``Cache-Control`` of a capabilities document that may be reused ``max_age`` s.

    >>> _cache_control(5), _cache_control(0)
    ('max-age=5', 'no-cache')
    """
    return f"max-age={max_age}" if max_age > 0 else "no-cache"


def mount_bot(
    prefix: str,
    bot_class: type[BaseBot],
    pool: BotPool,
    *,
    api_root: str | None = None,
    capabilities_max_age: int = CAPABILITIES_MAX_AGE,
) -> Mount:
    """``bot_class`` served under ``prefix`` (e.g. ``"/random"``): its capabilities at
    ``<prefix>/capabilities.json``. For the game server to host bots on its own port."""
    routes = bot_routes(
        bot_class, pool, api_root=api_root, capabilities_max_age=capabilities_max_age
    )
    return Mount(_path(_root(prefix)), routes=routes)


def create_app(
    bots: Mapping[str, type[BaseBot]] | type[BaseBot],
    *,
    api_root: str | None = None,
    pool: BotPool | None = None,
    workers: int | None = None,
    processes: bool = False,
    capabilities_max_age: int = CAPABILITIES_MAX_AGE,
) -> Starlette:
    """A Starlette app serving one bot at ``/``, or several under prefixes
    (``{"/random": RandomBot, "/center": CenterBot}``; ``"/"`` puts one at the root).

    Without ``pool``, the app makes one (``workers``, ``processes``) and closes it on
    shutdown; a given ``pool`` stays its owner's to close. ``app.state.bot_pool`` is the
    pool either way. Its lifespan's startup runs each bot's ``warm_up`` in the pool
    (``bot.pool.warm_up_bots``), so the server answers nothing before its bots are ready.
    """
    table = {"/": bots} if isinstance(bots, type) else dict(bots)
    if not table:
        raise ValueError("no bots to serve")
    own_pool = pool is None
    bot_pool = pool if pool is not None else BotPool(workers, processes=processes)
    routes: list[BaseRoute] = []
    seen: set[str] = set()
    for prefix, bot_class in table.items():
        segment = _root(prefix)
        if segment in seen:
            raise ValueError(f"two bots under the prefix {prefix!r}")
        seen.add(segment)
        if segment:
            routes.append(
                mount_bot(
                    segment,
                    bot_class,
                    bot_pool,
                    api_root=api_root,
                    capabilities_max_age=capabilities_max_age,
                )
            )
        else:
            routes.extend(
                bot_routes(
                    bot_class,
                    bot_pool,
                    api_root=api_root,
                    capabilities_max_age=capabilities_max_age,
                )
            )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # Before the server accepts anything (uvicorn serves once the lifespan has
        # started): a bot is ready when it says so, and a game server or tournament
        # runner takes a 200 on capabilities.json to mean it can play now.
        try:
            await warm_up_bots(bot_pool, table.values())
            yield
        finally:
            if own_pool:
                await bot_pool.close_sessions()
                bot_pool.shutdown()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.bot_pool = bot_pool
    return app


# ---------------------------------------------------------------------- server


def uvicorn_config(
    app: Starlette, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, log_level: str = "info"
) -> uvicorn.Config:
    """uvicorn settings for a bot server: the fastest installed stack, frames bounded,
    control frames and text checked as the game server checks its own sockets
    (``wire.inbound_ws``: a ping flood is closed with 1008, text that is not UTF-8
    with 1007, each with its reason)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        ws=GuardedWebSocketProtocol,
        # The handler refuses frames over MAX_FRAME_BYTES with a reason (1009); this is
        # the hard stop for anything far bigger, before it is buffered whole.
        ws_max_size=2 * MAX_FRAME_BYTES,
        ws_per_message_deflate=False,  # small JSON frames: compression costs more than it saves
        loop="uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        http="httptools" if importlib.util.find_spec("httptools") else "h11",
        lifespan="on",
        log_level=log_level,
        timeout_graceful_shutdown=math.ceil(CLOSE_TIMEOUT),
    )


class ListeningServer(uvicorn.Server):
    """uvicorn's server that tells where it listens (``port``, ``url``; useful with port
    0) and calls ``on_started`` once it does. The game server extends it too."""

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        on_started: Callable[[Any], None] | None = None,
    ) -> None:
        super().__init__(config)
        self._on_started = on_started

    @property
    def port(self) -> int:
        """The port bound (useful with port 0)."""
        return int(self.servers[0].sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://{self.config.host}:{self.port}"

    async def startup(self, sockets: list[Any] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self._on_started is not None:
            self._on_started(self)


class BotServer(ListeningServer):
    """uvicorn's server, closing bot sessions with 1001 "going away" on shutdown
    (uvicorn itself would drop them with 1012) before it stops."""

    def __init__(
        self,
        config: uvicorn.Config,
        pool: BotPool,
        *,
        on_started: Callable[[BotServer], None] | None = None,
    ) -> None:
        super().__init__(config, on_started=on_started)
        self.pool = pool

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        await self.pool.close_sessions(CLOSE_GOING_AWAY, "the bot server is shutting down")
        await super().shutdown(sockets)


@contextlib.asynccontextmanager
async def serving(
    app: Starlette, *, host: str = DEFAULT_HOST, port: int = 0, log_level: str = "warning"
) -> AsyncIterator[BotServer]:
    """Run ``app`` (from ``create_app``) on this event loop while the block runs; port 0
    picks a free port (``server.port``, ``server.url``). For tests and benchmarks."""
    pool: BotPool = app.state.bot_pool
    server = BotServer(uvicorn_config(app, host=host, port=port, log_level=log_level), pool)
    # In-process: signals stay with whoever runs the loop.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve(), name="bot server")
    try:
        while not server.started:
            if task.done():
                task.result()  # the startup error, e.g. the port is taken
                raise RuntimeError("the bot server stopped during startup")
            await asyncio.sleep(0.01)
        yield server
    finally:
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=3 * CLOSE_TIMEOUT)
        except TimeoutError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


if __name__ == "__main__":
    # Through the package module, so worker processes and pickles name bot.serve, not
    # __main__ (the command line lives in bot.serve_cli).
    from bot.serve_cli import main

    sys.exit(main())

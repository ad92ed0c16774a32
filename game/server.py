"""The game server: a Starlette app for REST, human and spectator sockets, hosted bots.

Routes (``create_app``):

* ``POST /game/new`` — body ``NewGameRequest``; answers ``NewGameResponse`` (200), or
  ``{"detail": reason}`` with 401 (API token), 413 (body too large), 422 (anything
  invalid, a bot that cannot be seated included), 429 (per-client cap), 503 (server
  full or shutting down).
* ``GET /games`` (``status``, ``player``, ``limit``, ``cursor``): ``player`` keeps the
  games where either seat's name equals it, compared case-insensitively (1 to
  ``MAX_PLAYER_FILTER`` characters). ``GET /games/{id}``.
* ``GET /games/{id}/notation``: ``?download=1`` adds ``Content-Disposition:
  attachment`` with the file name ``notation_filename(id)`` (``<id>.htttx``).
* ``GET /health``, ``GET /openapi.json``, ``GET /docs``. (These, with ``POST /game/new``
  and the games, are ``game.game_routes``.)
* ``GET /ladder``, ``POST /ladder/pause|resume`` (``game.ladder_routes``); ``GET /cluster``
  on a cluster's worker (``game.cluster_routes``).
* ``POST /tournaments``, ``GET /tournaments``, ``GET /tournaments/{id}``,
  ``POST /tournaments/{id}/stop|resume`` (``game.tournament_routes``).
* ``POST /series``, ``GET /series``, ``GET /series/{id}``, ``POST /series/{id}/stop|resume``
  (``game.series_routes``): best of N / first to K between two bots.
* ``POST /bots`` (register a bot: 201 with its owner token; 401 API token, 409 name
  taken, 422 bad URL / forbidden address / unreachable), ``GET /bots`` (the hosted
  bots and the registered ones with ratings), ``GET|PATCH|DELETE /bots/{name}`` (the
  changes with ``Authorization: Bearer <owner_token>``), ``GET /bots/{name}/ratings``,
  ``GET /leaderboard?kind=bot|human|all&limit=`` (``game.registry_routes``).
* WebSocket ``/queue`` (matchmaking for people), ``POST /challenges``,
  ``GET /challenges/{id}``, ``POST /challenges/{id}/accept``, ``DELETE /challenges/{id}``
  (``game.queue_routes``).
* WebSocket ``/ws?token=...`` (a human seat) and ``/spectate/{game_id}``.
* The example bots under ``/bots/random``, ``/bots/center``, ``/bots/threat``.
* The web page: ``/``, ``/g/{id}``, ``/t/{id}``, ``/web/...`` and ``/static/...``
  (``game.web_routes``).

Games themselves are run by ``game.manager.GameManager``; this module only adapts HTTP
to it and composes the app from its parts: the sockets (``game.sockets``), the OpenAPI
document and ``/docs`` page (``game.openapi``), the app's settings and runtime
(``game.server_state``) and the seat tokens kept out of the logs (``game.access_log``).
``GameServer`` is uvicorn's server with one change: on shutdown it first aborts the
running games (so everyone gets an ``end``), then lets uvicorn close what is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any, Final

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, WebSocketRoute

from bot.serve import BotPool, ListeningServer, mount_bot, uvicorn_config
from bot.serve import create_app as create_bot_app
from bot.serve import serving as serving_bot
from game.access_log import TokenRedactingFilter, install_token_filter, redact_tokens
from game.analysis import DEFAULT_ANALYSIS_TIME, check_analysis_time, check_hosted_analysis_bot
from game.analyst import open_analyst
from game.bots_in_play import BotsInPlay, LocalBotsInPlay
from game.challenges import Challenges
from game.cluster import ClusterSettings
from game.cluster_routes import cluster_routes
from game.cross_site import CrossSiteGuard
from game.discovery import DEFAULT_POLICY, AddressPolicy, capabilities_url
from game.fanout import SPECTATOR_FLUSH_S
from game.game_routes import game_routes, http_error
from game.ladder import LadderSettings
from game.ladder_games import QueuedGames
from game.ladder_host import ladder_bots_refusal, open_ladder, serve_ladder_bots
from game.ladder_routes import ladder_routes
from game.ladder_switch import LadderSwitch
from game.limits import ConnectionLimits, uvicorn_protocols
from game.local_bot_spec import BotLimits
from game.manager import (
    DEFAULT_COMMIT_INTERVAL,
    DEFAULT_MAX_SPECTATORS,
    GameManager,
    check_commit_interval,
)
from game.openapi import _openapi
from game.queue_arena import ArenaForQueue
from game.queue_hub import QueueHub
from game.queue_routes import queue_routes
from game.rating_book import RatingBook
from game.registry import DEFAULT_RECHECK_S, BotRegistry
from game.registry_routes import arena_routes
from game.series_routes import series_routes
from game.server_state import (
    HOSTED_BOTS,
    _Runtime,
    _Settings,
    hosted_bot_named,
)
from game.session import SEND_BOARD_POLICIES, SendBoardPolicy, SessionLimits
from game.sockets import human_socket, spectator_socket
from game.store import (
    GameStore,
)
from game.store_outage_guard import StoreOutageGuard
from game.tournament_director import TournamentDirector
from game.tournament_routes import tournament_routes
from game.web_routes import web_routes

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_GAMES",
    "DEFAULT_MAX_GAMES_PER_CLIENT",
    "HOSTED_BOTS",
    "GameServer",
    "ServerStartupError",
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
#: The only addresses the analysis bot hosted in-process (--analysis-bot NAME) is dialled at.
LOOPBACK_ONLY: Final = AddressPolicy.parse("allow=loopback;deny=")
#: The ladder's own bots (--ladder-hosted-bots), by ladder name.
_LADDER_HOSTED_BOTS: Final = {bot.__name__: bot for bot in HOSTED_BOTS.values()}


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
    spectator_flush: float = SPECTATOR_FLUSH_S,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    limits: SessionLimits | None = None,
    discovery_timeout: float = 5.0,
    commit_interval: float = DEFAULT_COMMIT_INTERVAL,
    bot_log_dir: str = "data/bot-logs",
    bot_limits: BotLimits | None = None,
    send_board: SendBoardPolicy = "auto",
    analysis_bot: str | None = None,
    analysis_time: float = DEFAULT_ANALYSIS_TIME,
    bot_recheck: float = DEFAULT_RECHECK_S,
    resume_series: bool = True,
    ladder: LadderSettings | None = None,
    ladder_hosted_bots: bool = False,
    cluster: ClusterSettings | None = None,
) -> Starlette:
    """The game server's app. Its lifespan opens the store (marking games left running
    by a previous run as aborted), one aiohttp session for every outbound request, the
    hosted bots' pool, the ``GameManager`` and the ``TournamentDirector`` (marking
    tournaments a previous run left running as interrupted), and closes them in reverse order.
    ``send_board`` says which seats get ``board`` in ``move_request`` when their
    ``PlayerConfig.send_board`` does not (``GameManager``).

    ``analysis_bot`` names a bot that evaluates each position of every watched game for
    its spectators (``game.analysis``), ``analysis_time`` seconds per position. It is
    found and checked at startup, under ``policy`` like any game's bot: a bot that cannot
    be reached or cannot analyse (no ``evaluation``, no ``free_setup``) fails the startup
    with a ``DiscoveryError`` naming it and why. The name of a hosted example bot
    (``"threat"``) instead of a URL runs that bot in this process on a loopback port of
    its own, whatever ``host_example_bots`` and ``policy`` say.

    The arena: the lifespan also opens the ``RatingBook`` (hooked into the manager, so a
    tracked game is rated before its ``end`` goes out; ratings a previous run left
    pending are settled at startup) and the ``BotRegistry``, which checks every
    registered bot again each ``bot_recheck`` seconds (0: never).

    ``resume_series``: a series a previous run left interrupted resumes by itself at
    startup (``TournamentDirector.recover``); htttx-tournament, which resumes what it
    is asked to itself, says no.

    ``ladder``: run a ladder with these settings (``game.ladder``; ``GET /ladder``);
    ``ladder_hosted_bots``: the hosted example bots join it as the server's own bots,
    served in this process on a loopback port (``game.ladder_host``), so ``policy``
    must allow loopback or ``self`` (that port is one of the server's own).

    ``policy``'s ``self`` rule matches the ``own`` endpoints it is given
    (``AddressPolicy.serving_at``: the composition root knows where the server listens)
    and the ladder's hosted bots' port.

    ``cluster``: this server is one worker of a cluster (``--redis``): the lifespan
    connects to Redis (``game.cluster_redis.ClusterNode``), registers the worker and its
    games with leases and relays spectators of games other workers run. Only the first
    worker to start (no other worker's lease holds) marks the games and tournaments a
    previous run left running as aborted and interrupted: the others' are live. Every
    worker records the games of a worker that died (its lease gone) as aborted, with
    the cause (``game.cluster_sweep``)."""
    if max_games_per_client < 1 or max_games < 1 or max_spectators < 1:
        raise ValueError("max_games, max_games_per_client and max_spectators must be at least 1")
    if send_board not in SEND_BOARD_POLICIES:
        # Here, not in the lifespan: a bad value must fail when the app is made.
        raise ValueError(f"send_board must be one of {SEND_BOARD_POLICIES}, got {send_board!r}")
    check_commit_interval(commit_interval)
    if analysis_bot is not None:
        if (hosted := hosted_bot_named(analysis_bot)) is None:
            capabilities_url(analysis_bot)  # a malformed URL fails here (BadBotUrl)
        else:  # one that cannot analyse too (AnalysisBotUnfit), not in the lifespan
            check_hosted_analysis_bot(analysis_bot, hosted.capabilities())
    check_analysis_time(analysis_time)
    if not 0 <= bot_recheck < float("inf"):
        raise ValueError(f"bot_recheck must be 0 (never) or more seconds, got {bot_recheck}")
    if ladder_hosted_bots and ladder is None:
        raise ValueError("ladder_hosted_bots needs a ladder")
    if ladder_hosted_bots and (problem := ladder_bots_refusal(policy)) is not None:
        raise ValueError(f"the ladder's hosted bots are served on loopback: {problem}")
    settings = _Settings(
        db_url=db_url,
        policy=policy,
        api_token=api_token or None,
        host_example_bots=host_example_bots,
        max_games=max_games,
        max_games_per_client=max_games_per_client,
        max_spectators=max_spectators,
        spectator_flush=spectator_flush,
        max_body_bytes=max_body_bytes,
        limits=limits,
        discovery_timeout=discovery_timeout,
        commit_interval=commit_interval,
        bot_log_dir=bot_log_dir,
        bot_limits=bot_limits,
        send_board=send_board,
        analysis_bot=analysis_bot,
        analysis_time=analysis_time,
        bot_recheck=bot_recheck,
        ladder=ladder,
        ladder_hosted_bots=ladder_hosted_bots,
    )
    # The pool exists before the app so the bot routes can be mounted; threads are
    # only started on first use, and the lifespan shuts it down.
    pool = BotPool()
    routes: list[BaseRoute] = [
        *game_routes(),
        WebSocketRoute("/ws", human_socket),
        WebSocketRoute("/spectate/{game_id}", spectator_socket),
        *tournament_routes(),
        *series_routes(),
        *arena_routes(),
        *queue_routes(),
        *ladder_routes(),
        *cluster_routes(),
        # Last: the page's paths never shadow an API route.
        *web_routes(),
    ]
    if host_example_bots:
        routes += [mount_bot(prefix, bot_class, pool) for prefix, bot_class in HOSTED_BOTS.items()]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        install_token_filter()
        async with contextlib.AsyncExitStack() as stack:
            stack.callback(pool.shutdown)
            stack.push_async_callback(pool.close_sessions)
            # The hosted SearchBot is not warmed up here: its compiled kernels, loaded into
            # this process, cost every move of every game a little (bench/server.py: a
            # quarter more CPU a move late in 1000-move games), so they are loaded only
            # once a game needs them (SearchBot compiles in the background meanwhile).
            store = await GameStore.open(settings.db_url)
            stack.push_async_callback(store.close)
            node = None
            first = True  # the only process, or the first worker of a cluster
            if cluster is not None:
                from game.cluster_redis import ClusterNode  # only with --redis

                node = await ClusterNode.open(
                    cluster.redis_url,
                    worker_id=cluster.worker_id,
                    url=cluster.url,
                    leases=cluster.leases,
                    max_games=settings.max_games,
                )
                stack.push_async_callback(node.close)
                first = not await node.others()
            if first:
                aborted = await store.abort_running(ended_at=datetime.now(UTC))
                if aborted:
                    log.warning(
                        "marked %d game(s) left running by a previous run as aborted", aborted
                    )
            policy = settings.policy
            ladder_bots_at = None
            if settings.ladder_hosted_bots:
                # Served before the outbound session is made: their port is one of this
                # server's own (``self``). Their stack closes them after the games (the
                # drain, pushed last, runs first).
                ladder_bots_at = await serve_ladder_bots(
                    stack, pool=pool, hosted=_LADDER_HOSTED_BOTS
                )
                policy = policy.serving_at(*ladder_bots_at)
            # Every request made on a bot's behalf: checked addresses, no redirects.
            http = policy.client_session()
            stack.push_async_callback(http.close)
            analyst = None
            if settings.analysis_bot is not None:
                bot_url, analysis_policy = settings.analysis_bot, policy
                analysis_http = http
                if (hosted := hosted_bot_named(settings.analysis_bot)) is not None:
                    # A hosted bot by name gets a loopback port of its own in this process:
                    # this server does not listen yet, and its address policy is for
                    # other people's bots (it may well refuse loopback).
                    bot_server = await stack.enter_async_context(
                        serving_bot(create_bot_app(hosted, pool=pool))
                    )
                    bot_url, analysis_policy = bot_server.url, LOOPBACK_ONLY
                    analysis_http = LOOPBACK_ONLY.client_session()
                    stack.push_async_callback(analysis_http.close)
                analyst = await open_analyst(
                    bot_url,
                    analysis_http,
                    policy=analysis_policy,
                    discovery_timeout=settings.discovery_timeout,
                    time_limit=settings.analysis_time,
                )
                # Closed after the games (runtime.drain), which close their own first.
                stack.push_async_callback(analyst.close)
                log.info("analysis bot: %s (%s)", analyst.name, analyst.endpoint.url)
            manager = GameManager(
                store,
                http,
                policy=policy,
                limits=settings.limits,
                discovery_timeout=settings.discovery_timeout,
                max_games=settings.max_games,
                max_spectators=settings.max_spectators,
                spectator_flush=settings.spectator_flush,
                commit_interval=settings.commit_interval,
                send_board=settings.send_board,
                analyst=analyst,
            )
            if node is not None:
                manager.cluster = node
                await node.start(manager)
                log.info("cluster worker %s (%s)", node.worker_id, node.url)
            # The arena: ratings settled before a game's `end` goes out, and at startup
            # those a previous run left pending (after abort_running: its games are void).
            ratings = RatingBook(store, running=manager.awaits_end_hooks)
            manager.add_end_hook(ratings.on_game_end, wants=ratings.tracks)
            settled = await ratings.settle_pending()
            if settled:
                log.info("settled %d rated game(s) a previous run left pending", settled)
            if node is not None:  # the games of the cluster's dead workers: aborted
                from game.cluster_sweep import Sweeper

                node.start_sweeping(Sweeper(node, store, ratings))
            registry = BotRegistry(
                store, http, policy=policy, discovery_timeout=settings.discovery_timeout
            )
            stack.push_async_callback(registry.close)
            if settings.bot_recheck > 0:
                registry.start_rechecks(settings.bot_recheck)
            tournaments = TournamentDirector(
                manager,
                store,
                limits=settings.bot_limits,
                log_dir=settings.bot_log_dir,
                ratings=ratings,
                resume_series=resume_series,
            )
            work = None
            ladder_switch: LadderSwitch | None = None  # a single server's: the ladder's own
            if node is not None and cluster is not None:
                from game.cluster_setup import (  # only with --redis
                    share_ladder_pause,
                    share_tournaments,
                )

                work = await share_tournaments(
                    node, cluster, store, manager, tournaments, ratings, first=first
                )
                ladder_switch = await share_ladder_pause(node, first=first)
            if first:  # else the other workers' tournaments may be running
                await tournaments.recover()
            if work is not None:
                await work.start()
                assert tournaments.remote is not None
                tournaments.remote.start()
            # Matchmaking for people: the /queue and open challenges. The queue and the
            # ladder count one set of bots in play: a bot plays one game at a time. On a
            # cluster it is shared in Redis: the queue's leader and the ladder's
            # scheduler may be two workers. Closed after the drain (which releases the
            # holds of the games it ends) and before the node (whose Redis it writes to).
            bots_in_play: BotsInPlay = LocalBotsInPlay()
            if node is not None:
                from game.cluster_bots_in_play import ClusterBotsInPlay

                shared = ClusterBotsInPlay(node.redis, node.leases)
                shared.start()
                stack.push_async_callback(shared.close)
                bots_in_play = shared
            arena = ArenaForQueue(registry, ratings)
            queue = QueueHub(manager, arena, bots_in_play=bots_in_play)
            runtime = _Runtime(
                store=store,
                http=http,
                pool=pool,
                manager=manager,
                tournaments=tournaments,
                registry=registry,
                ratings=ratings,
                queue=queue,
                challenges=Challenges(store, manager, arena),
                work=work,
            )
            queue.start()
            if node is not None:  # one worker leads the cluster's queue
                from game.cluster_queue import ClusterChallenges, QueueLeadership

                runtime.queue_leadership = QueueLeadership(node, queue)
                stack.push_async_callback(runtime.queue_leadership.close)
                await runtime.queue_leadership.start()
                assert runtime.challenges is not None
                runtime.cluster_challenges = ClusterChallenges(node, runtime.challenges)
                stack.push_async_callback(runtime.cluster_challenges.close)
                await runtime.cluster_challenges.start()
            if settings.ladder is not None:
                runtime.ladder = await open_ladder(
                    manager=manager,
                    registry=registry,
                    ratings=ratings,
                    settings=settings.ladder,
                    hosted=_LADDER_HOSTED_BOTS if ladder_bots_at is not None else None,
                    hosted_at=ladder_bots_at,
                    # On a cluster: one worker schedules, every worker plays.
                    games=None
                    if tournaments.remote is None
                    else QueuedGames(tournaments.remote, store.work),
                    bots_in_play=bots_in_play,
                    switch=ladder_switch,  # on a cluster: paused through any worker
                )
            stack.push_async_callback(runtime.drain)
            app.state.arena = runtime
            yield

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: http_error},
        # A page of another site cannot make a visitor's browser change anything here;
        # the store out of reach is a 503 to try again after, not a 500.
        middleware=[Middleware(CrossSiteGuard), Middleware(StoreOutageGuard)],
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
    # The bot server's settings already run the guarded WebSocket protocol
    # (``wire.inbound_ws``); the game server's counts its connections too.
    if config.http == "httptools":
        config.http, config.ws = uvicorn_protocols(limits)
    else:  # pragma: no cover - uvicorn[standard] brings httptools
        log.warning(
            "httptools is missing: connections per client and request timeouts are not enforced"
        )
    return config


class ServerStartupError(RuntimeError):
    """``serving`` could not start the server (uvicorn has logged why)."""


@contextlib.asynccontextmanager
async def serving(
    app: Starlette,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    log_level: str = "warning",
    limits: ConnectionLimits | None = None,
    sock: socket.socket | None = None,
) -> AsyncIterator[GameServer]:
    """Run ``app`` on this event loop while the block runs (port 0: a free port, see
    ``server.url``); shut it down gracefully on exit. For tests and embedding.
    ``sock``: a socket already listening on ``host``:``port``
    (``game.startup_checks.listen``), so that a taken port is found before anything
    starts. Raises ``ServerStartupError`` if the server cannot start."""
    config = server_config(app, host=host, port=port, log_level=log_level, limits=limits)
    server = GameServer(app, config)
    # In-process: signals stay with whoever runs the loop.
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    sockets = None if sock is None else [sock]
    task = asyncio.create_task(server.serve(sockets=sockets), name="game server")
    try:
        while not server.started:
            if task.done():
                try:
                    task.result()
                except SystemExit:  # uvicorn exits when the lifespan or the bind fails
                    raise ServerStartupError(
                        "the game server failed to start (see the log above)"
                    ) from None
                raise ServerStartupError("the game server stopped during startup")
            await asyncio.sleep(0.01)
        yield server
    finally:
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=30)
        except TimeoutError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

"""Run the game server: ``python -m game.serve`` (also ``htttx-server``).

``htttx-server --help`` lists every option (``game.serve_args``; a test holds the
README's list to it, a copy here would drift, as one did).

``HTTTX_API_TOKEN``, when set, is required as ``Authorization: Bearer <token>`` on
``POST /game/new`` and every route that starts, stops or registers something
(``game.serve_intro.TOKEN_ROUTES``). SIGINT/SIGTERM stop taking games, abort the running
ones (recorded, ``end`` sent to everyone), close every socket and exit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import socket
import sys
from collections.abc import Sequence

from game.address_policy import default_policy
from game.analysis import check_hosted_analysis_bot
from game.analyst import open_analyst
from game.cluster_cli import ClusterUsageError, cluster_settings
from game.discovery import DEFAULT_POLICY, AddressPolicy, DiscoveryError, PolicySyntaxError
from game.ladder_host import ladder_bots_refusal
from game.limits import LOOPBACK, ConnectionLimits, raise_fd_limit
from game.serve_args import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    UsageError,
    arguments,
    check_numbers,
    ladder_settings,
    policy_text,
    session_limits,
)
from game.serve_intro import API_TOKEN_VARIABLE, banner, run_demo
from game.server import GameServer, create_app, server_config
from game.server_state import hosted_bot_named
from game.startup_checks import StartupError, check_store, check_store_url, claim_store, listen
from game.store_claim import Claim, Owner
from wire.listening import reachable_url

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "UsageError", "effective_policy", "log_policy", "main"]

log = logging.getLogger("game.serve")


def effective_policy(text: str, address: str, port: int) -> AddressPolicy:
    """The bot address policy of a server listening at ``address``:``port`` (its
    socket's literal IP), from the policy string given: a list left out keeps the
    default for that address (``default_policy``: all of loopback only when the server
    listens on loopback), and ``self`` is that address and port. Raises
    ``PolicySyntaxError``.

    >>> effective_policy("", "0.0.0.0", 8001).describe()
    'allow=self,public;deny=metadata,link-local (self: port 8001 of 127.0.0.0/8)'
    >>> str(effective_policy("deny=", "127.0.0.1", 8001))
    'allow=loopback,public;deny='
    """
    base = default_policy(address)
    return AddressPolicy.parse(text, base=base).serving_at(address, port)


def log_policy(text: str, address: str, port: int) -> AddressPolicy:
    """``effective_policy``, logged in one line that says where it comes from (an
    exposed server's default refuses what a developer's allows). Raises ``UsageError``."""
    try:
        policy = effective_policy(text, address, port)
    except PolicySyntaxError as error:
        raise UsageError(str(error)) from None
    if text:
        origin = f"given: {text!r}"
    elif default_policy(address) is DEFAULT_POLICY:
        origin = f"the default for a server listening on loopback ({address})"
    else:
        origin = (
            f"the default for a server listening on {address}, not loopback only: bots "
            "on other ports of this machine are refused; --allow loopback allows them"
        )
    log.info("bot address policy: %s; %s", policy.describe(), origin)
    return policy


def _claim_store(url: str, owner: Owner, *, shared: bool) -> Claim:
    try:
        return claim_store(url, owner, shared=shared)
    except StartupError as error:
        raise UsageError(str(error)) from None


def _open_store(url: str) -> None:
    try:
        asyncio.run(check_store(url))
    except StartupError as error:
        raise UsageError(str(error)) from None


async def _find_analysis_bot(url: str, policy: AddressPolicy, time_limit: float) -> None:
    async with policy.client_session() as http:
        await open_analyst(url, http, policy=policy, time_limit=time_limit)


def _check_analysis_bot(name_or_url: str, policy: AddressPolicy, time_limit: float) -> None:
    """Find and check the analysis bot once before listening, so a bot that is down or
    cannot analyse is one clear line here rather than a failed startup later. A hosted
    bot by name runs inside the server: what its class declares is checked."""
    try:
        if (hosted := hosted_bot_named(name_or_url)) is not None:
            check_hosted_analysis_bot(name_or_url, hosted.capabilities())
        else:
            asyncio.run(_find_analysis_bot(name_or_url, policy, time_limit))
    except DiscoveryError as error:
        raise UsageError(f"--analysis-bot: {error}") from None


def _listen(host: str, port: int) -> socket.socket:
    """Bind the port before anything starts, so "in use" is one clear line."""
    try:
        return listen(host, port)
    except StartupError as error:
        raise UsageError(str(error)) from None


# ------------------------------------------------------------------ messages


# ------------------------------------------------------------------------ gc

#: The cyclic collector's thresholds for a running server (CPython's are 700, 10, 10).
GC_THRESHOLDS = (5_000, 10, 10)


def tune_gc() -> None:
    """Collect once, then freeze what the server made to start (modules, pydantic's
    schemas, SQLAlchemy's tables, the app: hundreds of thousands of objects that live as
    long as the process), so that no later collection walks them again; and collect the
    young generation every 5000 new containers instead of 700. A move makes a few
    hundred short-lived objects, nearly all freed by reference counting: with the
    default the collector ran every few moves and a full collection, now and then,
    walked the whole heap. Cycles still go, in bigger batches. Not more than that:
    with (20000, 20, 20) a 10,000-game tournament's server kept growing (117 -> 134 MiB
    from game 1000 to 10,000, bench/tournament.py); with (5000, 10, 10) it levels off
    (105 -> 112 MiB, flat from game 4000 on).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


# ---------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    """``htttx-server`` / ``python -m game.serve``; returns the exit status."""
    parser = arguments()
    args = parser.parse_args(argv)
    # The server's own loggers (game created, game over and why, a bot refused, a
    # worker swept...) write through the root logger; without a handler Python prints
    # only warnings, bare. uvicorn's loggers keep their own handlers.
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    with contextlib.ExitStack() as held:  # the database's claim, until the server stopped
        return _serve(parser, args, held)


def _serve(
    parser: argparse.ArgumentParser, args: argparse.Namespace, held: contextlib.ExitStack
) -> int:
    listener: socket.socket | None = None
    try:
        check_numbers(args)
        limits = session_limits(args)
        given_policy = policy_text(args)
        try:  # a syntax error before anything is bound
            AddressPolicy.parse(given_policy)
        except PolicySyntaxError as error:
            raise UsageError(str(error)) from None
        ladder = ladder_settings(args)
        try:  # before the store is opened: a refused --redis leaves no database behind
            cluster = cluster_settings(args, args.db)
        except ClusterUsageError as error:
            raise UsageError(str(error)) from None
        try:  # a wrong --db is its own error, whatever listens on the port
            check_store_url(args.db)
        except StartupError as error:
            raise UsageError(str(error)) from None
        # Bound before the policy is made: its default and its `self` are where the
        # server listens.
        listener = _listen(args.host, args.port)
        policy = log_policy(given_policy, *listener.getsockname()[:2])
        if args.ladder_hosted_bots and (problem := ladder_bots_refusal(policy)) is not None:
            raise UsageError(
                "--ladder-hosted-bots serves the bots on loopback, on a port of the server's "
                f"own, which the address policy refuses ({problem}): allow self or loopback"
            )
        # Before the store is opened: a second server on one database would mark the
        # first one's running games aborted as it started.
        owner = Owner.of_this_process(parser.prog, reachable_url(*listener.getsockname()[:2]))
        held.callback(_claim_store(args.db, owner, shared=cluster is not None).release)
        _open_store(args.db)
        if args.analysis_bot is not None:
            _check_analysis_bot(args.analysis_bot, policy, args.analysis_time)
    except UsageError as error:
        if listener is not None:
            listener.close()
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    api_token = os.environ.get(API_TOKEN_VARIABLE) or None
    app = create_app(
        db_url=args.db,
        policy=policy,
        api_token=api_token,
        host_example_bots=args.example_bots,
        max_games=args.max_games,
        max_games_per_client=args.max_games_per_client,
        max_spectators=args.max_spectators,
        spectator_flush=args.spectator_flush / 1000,
        commit_interval=args.commit_interval / 1000,
        limits=limits,
        send_board=args.send_board,
        analysis_bot=args.analysis_bot,
        analysis_time=args.analysis_time,
        bot_recheck=args.bot_recheck,
        ladder=ladder,
        ladder_hosted_bots=args.ladder_hosted_bots,
        cluster=cluster,
    )

    def started(server: GameServer) -> None:
        tune_gc()  # everything the server needs is loaded and made by now
        print(
            banner(
                server,
                db_url=args.db,
                example_bots=args.example_bots,
                with_token=bool(api_token),
                analysis_bot=args.analysis_bot,
                ladder=ladder,
                ladder_hosted_bots=args.ladder_hosted_bots,
            ),
            flush=True,
        )
        if args.demo:
            task = asyncio.create_task(run_demo(server, api_token), name="demo game")
            server.tasks.add(task)
            task.add_done_callback(server.tasks.discard)

    connection_limits = ConnectionLimits(
        max_per_client=args.max_connections_per_client,
        exempt=(*LOOPBACK, *args.trusted_networks),
        request_timeout=args.request_timeout,
        keep_alive_timeout=args.keep_alive_timeout,
    )
    raise_fd_limit()  # every connection is a file descriptor
    config = server_config(
        app, host=args.host, port=args.port, log_level=args.log_level, limits=connection_limits
    )
    server = GameServer(app, config, on_started=started)
    # uvicorn handles SIGINT/SIGTERM: GameServer aborts the games, uvicorn closes the
    # sockets, the lifespan closes the store; then uvicorn re-raises the signal (SIGINT
    # arrives here as KeyboardInterrupt).
    hosted_bots_log = logging.getLogger("bot.serve")
    level_before = hosted_bots_log.level
    if args.log_level == "info":
        # The hosted bots' sessions would log each game's end once more per hosted seat
        # ("closing (1000): game over: ..."): the game's own "over" line says it. Their
        # warnings (a session closed for a bad packet) still show.
        hosted_bots_log.setLevel(logging.WARNING)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            server.run(sockets=[listener])
    finally:  # a caller of main() in this process keeps its own logging
        hosted_bots_log.setLevel(level_before)
    if not server.started:
        print(
            f"{parser.prog}: error: the server failed to start (see the log above)", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

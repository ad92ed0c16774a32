"""The command line of the bot server: ``htttx-bot``, ``python -m bot.serve`` and
``python -m bot`` (``bot.serve`` has the routes, the app and the uvicorn server).

Everything wrong on the command line is one line on stderr and exit status 2, before
anything starts: an unknown module or class, a class that is not a ``BaseBot``, two bots
under one name, a bad number (``--workers`` from 1 to ``MAX_WORKERS``, and no more worker
processes than the open-file limit allows), an unknown ``--host``, a ``--port`` out of
range or already taken (the socket is bound here and handed to uvicorn, so it cannot be
taken in between).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence

from bot.bot import BaseBot
from bot.serve import (
    CAPABILITIES_MAX_AGE,
    DEFAULT_BOT,
    DEFAULT_HOST,
    DEFAULT_PORT,
    MAX_CAPABILITIES_MAX_AGE,
    BotServer,
    BotSpecError,
    bot_paths,
    create_app,
    load_bot,
    prefix_path,
    served_capabilities,
    uvicorn_config,
)
from wire.listening import ListenError, listen

__all__ = ["main"]

_PREFIX = re.compile(r"^[A-Za-z0-9._-]+$")
#: The most ``--workers``: far above what two cores think with, and a process pool of
#: it still fits the usual open-file limits (each idle process holds a few pipes).
MAX_WORKERS = 1024


def _parse_bots(specs: Sequence[str]) -> dict[str, type[BaseBot]]:
    """``--bot`` values -> prefix -> class. One bot is served at the root; several under
    ``/<name>``, where ``name`` is given as ``name=module:Class`` or is the class name in
    lower case."""
    named: list[tuple[str | None, type[BaseBot]]] = []
    for spec in specs:
        name, equals, target = spec.rpartition("=")
        if equals and not _PREFIX.match(name):
            raise BotSpecError(f"{spec!r}: the name before '=' may use letters, digits, . _ -")
        named.append((name or None, load_bot(target)))
    if len(named) == 1:
        only_name, only_class = named[0]
        return {only_name or "/": only_class}
    table: dict[str, type[BaseBot]] = {}
    for given, bot_class in named:
        prefix = given or bot_class.__name__.lower()
        if prefix in table:
            raise BotSpecError(f"two bots under /{prefix}: name them with --bot name=module:Class")
        table[prefix] = bot_class
    return table


def _print_urls(
    server: BotServer, table: Mapping[str, type[BaseBot]], api_root: str | None
) -> None:
    base = f"http://{server.config.host}:{server.port}"
    for prefix, bot_class in table.items():
        home = base + prefix_path(prefix)
        paths = bot_paths(served_capabilities(bot_class, api_root))
        lines = [f"{bot_class.__name__}: {home}{paths.capabilities}"]
        if paths.socket is not None:
            lines.append(f"  socket     ws{home.removeprefix('http')}{paths.socket}")
        if paths.turn is not None:
            lines.append(f"  stateless  {home}{paths.turn}")
        print("\n".join(lines), flush=True)


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="htttx-bot",
        description="Serve HTTTX bots: capabilities, WebSocket and stateless API on one port.",
        epilog=(
            "One --bot is served at the root; several are served under /<name> "
            "(name=module:Class, or the class name in lower case)."
        ),
    )
    parser.add_argument(
        "--bot",
        action="append",
        metavar="[NAME=]MODULE:CLASS",
        help=f"a BaseBot subclass to serve (repeatable; default {DEFAULT_BOT})",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="interface (default %(default)s)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default %(default)s)")
    parser.add_argument(
        "--api-root",
        metavar="PATH",
        help="api_root of both APIs, relative to capabilities.json (default: the bot's own)",
    )
    parser.add_argument(
        "--capabilities-max-age",
        type=int,
        default=CAPABILITIES_MAX_AGE,
        metavar="S",
        help="seconds a game server may reuse the capabilities document (Cache-Control: "
        "max-age; 0: fetched for every game; default %(default)s)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="threads (or processes) the bots think in (default: as many threads as "
        "ThreadPoolExecutor starts, min(32, CPUs + 4); with --process-pool, one process per CPU)",
    )
    parser.add_argument(
        "--process-pool",
        action="store_true",
        help="think in N worker processes instead of threads (bots must be importable)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="default %(default)s",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``htttx-bot`` / ``python -m bot.serve``; returns the exit status."""
    parser = _arguments()
    args = parser.parse_args(argv)
    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        print(
            f"{parser.prog}: error: --workers must be from 1 to {MAX_WORKERS}, got {args.workers}",
            file=sys.stderr,
        )
        return 2
    if not 0 <= args.capabilities_max_age <= MAX_CAPABILITIES_MAX_AGE:
        print(
            f"{parser.prog}: error: --capabilities-max-age must be from 0 to "
            f"{MAX_CAPABILITIES_MAX_AGE} seconds, got {args.capabilities_max_age}",
            file=sys.stderr,
        )
        return 2
    # A bot's module is found in the working directory, as ``python -m bot.serve``
    # finds it and uvicorn's --app-dir does: the htttx-bot script's own sys.path starts
    # with the virtualenv's bin directory instead.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        table = _parse_bots(args.bot or [DEFAULT_BOT])
    except BotSpecError as error:
        print(f"{parser.prog}: error: --bot {error}", file=sys.stderr)
        return 2
    try:
        listener = listen(args.host, args.port)
    except ListenError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # The app owns the pool and shuts it down in its lifespan: after a SIGTERM uvicorn
    # re-raises the signal once it has shut down, so nothing after run() would run.
    try:
        app = create_app(
            table,
            api_root=args.api_root,
            workers=args.workers,
            processes=args.process_pool,
            capabilities_max_age=args.capabilities_max_age,
        )
    except OSError as error:  # a process pool's pipes past the open-file limit, say
        listener.close()
        print(f"{parser.prog}: error: cannot start the bot pool: {error}", file=sys.stderr)
        return 2
    server = BotServer(
        uvicorn_config(app, host=args.host, port=args.port, log_level=args.log_level),
        app.state.bot_pool,
        on_started=lambda started: _print_urls(started, table, args.api_root),
    )
    # uvicorn handles SIGINT/SIGTERM: it stops accepting, BotServer closes the sessions
    # with 1001, the lifespan stops the workers, and then uvicorn re-raises the signal
    # (SIGINT arrives here as KeyboardInterrupt).
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[listener])
    return 0

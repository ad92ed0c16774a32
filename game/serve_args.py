"""``htttx-server``'s command line: its options (``arguments``) and the checks of what
they say that need nothing started (``check_numbers``, ``ladder_settings``,
``session_limits``, ``policy_text``), each a ``UsageError`` of one line. ``game.serve``
runs the server they describe.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from game.address_policy import EXPOSED_POLICY
from game.analysis import DEFAULT_ANALYSIS_TIME, MAX_ANALYSIS_TIME
from game.clock import DEFAULT_STALL_LIMIT
from game.cluster_cli import add_cluster_arguments
from game.discovery import DEFAULT_POLICY
from game.fanout import MAX_SPECTATOR_FLUSH_S, SPECTATOR_FLUSH_S
from game.ladder import (
    DEFAULT_CONCURRENCY,
    DEFAULT_RATE,
    DEFAULT_TIME_CONTROL,
    LadderSettings,
    LadderSettingsError,
)
from game.limits import (
    DEFAULT_KEEP_ALIVE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    DEFAULT_REQUEST_TIMEOUT,
    IPNetwork,
    parse_networks,
)
from game.manager import DEFAULT_COMMIT_INTERVAL, DEFAULT_MAX_SPECTATORS
from game.registry import DEFAULT_RECHECK_S
from game.serve_intro import API_TOKEN_VARIABLE, TOKEN_ROUTES
from game.server import DEFAULT_MAX_GAMES, DEFAULT_MAX_GAMES_PER_CLIENT
from game.session import SEND_BOARD_POLICIES, SessionLimits, SessionLimitsError
from game.store import GameStore, database_url

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "MAX_COMMIT_INTERVAL_MS",
    "UsageError",
    "arguments",
    "check_numbers",
    "ladder_settings",
    "policy_text",
    "session_limits",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8001  # the prototype's game server port
#: A longer group commit would put too many moves at risk in a crash to be useful.
MAX_COMMIT_INTERVAL_MS = 60_000


def _networks(text: str) -> tuple[IPNetwork, ...]:
    try:
        return parse_networks(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class UsageError(Exception):
    """A bad argument; the message is the one line printed."""


# ------------------------------------------------------------------- arguments


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="htttx-server",
        description="The HTTTX game server: REST, human and spectator sockets, hosted bots.",
        epilog=(
            f"Set {API_TOKEN_VARIABLE} to require 'Authorization: Bearer <token>' on "
            f"{TOKEN_ROUTES}. Bot address policy groups: loopback, public, private, "
            "link-local, metadata, any, self (this server's own address and port: its "
            "hosted bots); or networks such as 10.1.0.0/16."
        ),
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="interface (default %(default)s)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default %(default)s)")
    parser.add_argument(
        "--db",
        default=GameStore.DEFAULT_URL,
        type=database_url,
        metavar="URL|FILE",
        help="game store: a SQLite file's path, sqlite:///FILE, or postgresql://..., claimed "
        "for as long as the server runs: another server on it is refused "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="default %(default)s",
    )
    parser.add_argument(
        "--address-policy",
        metavar="POLICY",
        help=f"where bots may live, e.g. 'allow=loopback,public,private'. Default: "
        f"'{DEFAULT_POLICY}' when --host is a loopback address; else '{EXPOSED_POLICY}', "
        "so that bots on other ports of this machine are refused (--allow loopback "
        "allows them)",
    )
    parser.add_argument("--allow", metavar="LIST", help="shorthand for --address-policy allow=LIST")
    parser.add_argument("--deny", metavar="LIST", help="shorthand for --address-policy deny=LIST")
    parser.add_argument(
        "--no-example-bots",
        dest="example_bots",
        action="store_false",
        help="do not host the example bots under /bots/",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="once started, play one game between two hosted bots and print it",
    )
    parser.add_argument(
        "--max-games",
        type=int,
        default=DEFAULT_MAX_GAMES,
        metavar="N",
        help="games running at once (default %(default)s)",
    )
    parser.add_argument(
        "--max-games-per-client",
        type=int,
        default=DEFAULT_MAX_GAMES_PER_CLIENT,
        metavar="N",
        help="live games one client address may create (default %(default)s)",
    )
    parser.add_argument(
        "--max-spectators",
        type=int,
        default=DEFAULT_MAX_SPECTATORS,
        metavar="N",
        help="spectators of one game at once; more are closed with 1013 (default %(default)s)",
    )
    parser.add_argument(
        "--spectator-flush",
        type=float,
        default=SPECTATOR_FLUSH_S * 1000,
        metavar="MS",
        help="a spectator gets at most one write per this many milliseconds, carrying "
        "every packet since its last one; the first after a quiet spell goes at once "
        "(default %(default)g)",
    )
    parser.add_argument(
        "--max-connections-per-client",
        type=int,
        default=DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
        metavar="N",
        help="open connections one client address may hold (loopback is not counted); "
        "more are answered 429 and closed (default %(default)s)",
    )
    parser.add_argument(
        "--trusted-networks",
        type=_networks,
        default=(),
        metavar="CIDR,...",
        help="addresses or networks whose connections are not counted per client, as "
        "loopback's are not: a cluster's other workers (their relays of people's sockets "
        "all come from them), a load balancer",
    )
    parser.add_argument(
        "--request-timeout",
        type=float,
        default=DEFAULT_REQUEST_TIMEOUT,
        metavar="S",
        help="a connection whose request (a WebSocket handshake included) is not all in "
        "within S seconds is answered 408 and closed (default %(default)g)",
    )
    parser.add_argument(
        "--keep-alive-timeout",
        type=int,
        default=DEFAULT_KEEP_ALIVE_TIMEOUT,
        metavar="S",
        help="an idle keep-alive connection is closed after S seconds (default %(default)s)",
    )
    parser.add_argument(
        "--commit-interval",
        type=float,
        default=DEFAULT_COMMIT_INTERVAL * 1000,
        metavar="MS",
        help="a game commits its moves at most once per MS milliseconds, the moves played "
        "meanwhile together; 0 commits every move at once. A crash can lose the moves of "
        "the last interval, a stop loses none (default %(default)g)",
    )
    parser.add_argument(
        "--stall-limit",
        type=float,
        default=DEFAULT_STALL_LIMIT,
        metavar="SECONDS",
        help="how long a seat may owe an answer, whatever the clock (a longer clock is cut "
        "to it); it forfeits with 'stall' (default %(default)g)",
    )
    parser.add_argument(
        "--send-board",
        choices=SEND_BOARD_POLICIES,
        default="auto",
        help="which seats get 'board' (the full board, an extension) in move_request when "
        "POST /game/new's seat does not say with 'send_board': 'auto' gives it to humans "
        "and not to websocket bots (previous only, as the spec says); 'always' to every "
        "seat, for the prototype's bots, which read it (default %(default)s)",
    )
    parser.add_argument(
        "--analysis-bot",
        metavar="URL|NAME",
        help="a bot that declares basic_websocket 'evaluation' and 'free_setup', by URL, or "
        "a hosted example bot by name (search or threat), run in the server's process: while a "
        "game has spectators, the server asks it (eval_request) about each position and "
        "sends its answer to the spectators as an 'analysis' packet, so they see an "
        "evaluation even between bots that give none. A URL must be reachable under the "
        "address policy when the server starts",
    )
    parser.add_argument(
        "--analysis-time",
        type=float,
        default=DEFAULT_ANALYSIS_TIME,
        metavar="S",
        help="seconds the analysis bot is given per position (its evaluation_time_limit, "
        "when it declares one; default %(default)g)",
    )
    parser.add_argument(
        "--bot-recheck",
        type=float,
        default=DEFAULT_RECHECK_S,
        metavar="S",
        help="seconds between two checks of every registered bot's capabilities (POST "
        "/bots): one that fails is 'unreachable' and not scheduled until a check "
        "succeeds; 0 never checks again (default %(default)g)",
    )
    ladder = parser.add_argument_group(
        "ladder",
        "keep registered bots (POST /bots, opted in) playing each other, rated; "
        "GET /ladder says what it does",
    )
    ladder.add_argument("--ladder", action="store_true", help="run the ladder")
    ladder.add_argument(
        "--ladder-concurrency",
        type=int,
        metavar="N",
        help=f"ladder games at once, at most (default {DEFAULT_CONCURRENCY})",
    )
    ladder.add_argument(
        "--ladder-rate",
        type=float,
        metavar="GAMES_PER_MIN",
        help=f"ladder games started a minute, at most (default {DEFAULT_RATE:g})",
    )
    ladder.add_argument(
        "--ladder-time-control",
        metavar="TC",
        help="each side's clock in ladder games, as htttx-tournament's --clock: 'BASE+INC', "
        f"'TOTAL', 'turn=S', 'none' or 'stall=S' (default {DEFAULT_TIME_CONTROL})",
    )
    ladder.add_argument(
        "--ladder-hosted-bots",
        action="store_true",
        help="register the hosted example bots (random, center, threat, search) as the "
        "server's own ladder bots, served in this process on a loopback port",
    )
    add_cluster_arguments(parser)
    return parser


def ladder_settings(args: argparse.Namespace) -> LadderSettings | None:
    """The ladder's settings, or None without ``--ladder``."""
    given = {
        "--ladder-concurrency": args.ladder_concurrency,
        "--ladder-rate": args.ladder_rate,
        "--ladder-time-control": args.ladder_time_control,
        "--ladder-hosted-bots": args.ladder_hosted_bots or None,
    }
    if not args.ladder:
        flags = [flag for flag, value in given.items() if value is not None]
        if flags:
            raise UsageError(f"{flags[0]} is a ladder setting: add --ladder")
        return None
    options: dict[str, Any] = {}
    if args.ladder_concurrency is not None:
        options["concurrency"] = args.ladder_concurrency
    if args.ladder_rate is not None:
        options["rate"] = args.ladder_rate
    if args.ladder_time_control is not None:
        options["time_control"] = args.ladder_time_control
    try:
        settings = LadderSettings(**options)
    except LadderSettingsError as error:
        flag = {"concurrency": "--ladder-concurrency", "rate": "--ladder-rate"}.get(
            str(error).split(" ", 1)[0], "--ladder-time-control"
        )
        raise UsageError(f"{flag}: {error}") from None
    if settings.concurrency > args.max_games:
        raise UsageError(
            f"--ladder-concurrency {settings.concurrency} is more than --max-games "
            f"{args.max_games}: the server would never run that many"
        )
    return settings


def session_limits(args: argparse.Namespace) -> SessionLimits:
    try:
        return SessionLimits(stall_s=args.stall_limit)
    except SessionLimitsError:
        raise UsageError(
            f"--stall-limit must be a finite number of seconds > 0, got {args.stall_limit:g}"
        ) from None


def policy_text(args: argparse.Namespace) -> str:
    """The policy string given (``--address-policy``, or ``--allow``/``--deny``)."""
    if args.address_policy is not None and (args.allow is not None or args.deny is not None):
        raise UsageError("give either --address-policy or --allow/--deny, not both")
    if args.address_policy is not None:
        return str(args.address_policy)
    given = (("allow", args.allow), ("deny", args.deny))
    return ";".join(f"{key}={value}" for key, value in given if value is not None)


def check_numbers(args: argparse.Namespace) -> None:
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be from 0 to 65535, got {args.port}")
    if args.max_games < 1 or args.max_games_per_client < 1 or args.max_spectators < 1:
        raise UsageError(
            "--max-games, --max-games-per-client and --max-spectators must be at least 1"
        )
    if not 0 <= args.spectator_flush <= MAX_SPECTATOR_FLUSH_S * 1000:
        raise UsageError(
            f"--spectator-flush must be from 0 to {MAX_SPECTATOR_FLUSH_S * 1000:g} ms, "
            f"got {args.spectator_flush:g}"
        )
    if not 0 <= args.commit_interval <= MAX_COMMIT_INTERVAL_MS:
        raise UsageError(
            f"--commit-interval must be from 0 to {MAX_COMMIT_INTERVAL_MS} ms, "
            f"got {args.commit_interval:g}"
        )
    if args.max_connections_per_client < 1:
        raise UsageError(
            "--max-connections-per-client must be at least 1, got "
            f"{args.max_connections_per_client}"
        )
    if not (math.isfinite(args.request_timeout) and args.request_timeout > 0):
        raise UsageError(
            f"--request-timeout must be a positive number of seconds, got {args.request_timeout:g}"
        )
    if args.keep_alive_timeout < 1:
        raise UsageError(f"--keep-alive-timeout must be at least 1, got {args.keep_alive_timeout}")
    if not (math.isfinite(args.analysis_time) and 0 < args.analysis_time <= MAX_ANALYSIS_TIME):
        raise UsageError(
            f"--analysis-time must be more than 0 and at most {MAX_ANALYSIS_TIME:g} "
            f"seconds, got {args.analysis_time:g}"
        )
    if not (math.isfinite(args.bot_recheck) and args.bot_recheck >= 0):
        raise UsageError(
            f"--bot-recheck must be 0 or a positive number of seconds, got {args.bot_recheck:g}"
        )
    if args.demo and not args.example_bots:
        raise UsageError("--demo plays two hosted example bots: drop --no-example-bots")

"""``htttx-tournament``'s command line, read into a ``TournamentRequest``. Pure.

Every mistake is a ``UsageError`` whose message is the one line printed (the command
exits 2), never a traceback:

>>> options = parse_arguments(["--bot", "name=a,url=http://127.0.0.1:9001",
...     "--bot", "name=b,cmd=python -m bot.serve --bot x:Y --port {port}",
...     "--rounds", "3", "--sprt", "elo0=0,elo1=10"])
>>> request = options.request
>>> [bot.name for bot in request.bots], request.rounds, request.sprt.elo1
(['a', 'b'], 3, 10.0)
>>> request.bots[1].cmd
'python -m bot.serve --bot x:Y --port {port}'
>>> parse_arguments(["--bot", "name=a,url=http://x", "--bot", "name=b,colour=red"])
Traceback (most recent call last):
...
game.tournament_args.UsageError: --bot 'name=b,colour=red': unknown key 'colour' (expected ...)
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from game.bot_urls import capabilities_url
from game.discovery import AddressPolicy, PolicySyntaxError
from game.discovery_errors import BadBotUrl
from game.local_bot_spec import BotLimits, CommandError, LimitError, command_argv
from game.openings import OpeningBook, OpeningError
from game.startup_checks import nearest_existing
from game.store.urls import database_url
from models import Adjudication, Match, ResignAdjudication, TimeControl, TimeControlError
from wire.errors import _problems
from wire.tournaments import SeriesSettings, SprtSettings, TournamentBot, TournamentRequest

__all__ = ["DEFAULT_DB", "TournamentOptions", "UsageError", "parse_arguments"]

#: Where results go unless ``--db`` says otherwise (fastchess writes a config.json).
DEFAULT_DB: Final = "tournament.sqlite"
#: The command line's bots are the user's own: loopback, private and public addresses.
DEFAULT_CLI_POLICY: Final = "allow=loopback,private,public"
#: The shortest ``--resume`` prefix taken (git's shortest abbreviation): fewer
#: characters would match most of a busy database.
MIN_RESUME_PREFIX: Final = 4


class UsageError(Exception):
    """A bad argument; the message is the one line printed."""


@dataclass(frozen=True)
class TournamentOptions:
    """What the command line asks for: the tournament, and how to run and report it."""

    request: TournamentRequest | None  # None: --resume ID, the stored one
    db_url: str
    host: str
    port: int
    policy: AddressPolicy
    limits: BotLimits
    log_dir: Path
    resume: str | None  # the id or the start of it (at least MIN_RESUME_PREFIX characters)
    report_json: Path | None
    export_dir: Path | None
    export_bundle: Path | None
    progress: bool
    quiet: bool


def _arguments() -> tuple[argparse.ArgumentParser, list[argparse.Action]]:
    """The parser, and its options that are the tournament's stored settings."""
    parser = argparse.ArgumentParser(
        prog="htttx-tournament",
        description=(
            "Play a round robin or gauntlet between HTTTX bots through a game server of "
            "its own, with live standings, Elo with 95% intervals, pentanomial counts "
            "and an optional SPRT; results go to a database and survive a crash "
            "(run the same command again to resume)."
        ),
        epilog=(
            "example: htttx-tournament --bot name=mine,url=http://127.0.0.1:9001 "
            "--bot name=threat,url=http://127.0.0.1:8001/bots/threat --rounds 100 "
            "--concurrency 8 --sprt elo0=0,elo1=10"
        ),
    )
    # Every setting of the tournament is stored with it; None when not given (the
    # defaults are TournamentRequest's), so that --resume can refuse those given.
    settings = parser.add_argument_group(
        "tournament settings",
        "stored with the tournament; --resume ID reads them from --db and takes none",
    )
    stored: list[argparse.Action] = []

    def setting(*flags: str, **options: Any) -> None:
        stored.append(settings.add_argument(*flags, **options))

    setting(
        "--bot",
        action="append",
        metavar="SPEC",
        help="a bot: 'name=N,url=URL' (a running bot) or 'name=N,cmd=COMMAND' (a program "
        "the runner starts on a free port, '{port}' in COMMAND; cmd= takes the rest of "
        "SPEC, commas included); 'tc=CLOCK' gives it its own clock (as --clock); "
        "'board=true' sends it the full board in every move_request (prototype bots); "
        "'config.KEY=VALUE' adds a config setting (JSON value)",
    )
    setting(
        "--clock",
        metavar="CLOCK",
        help="every bot's clock: 'BASE+INC' seconds (10+0.1), 'SECONDS' per side (60), "
        "'turn=S' per move, 'none', or 'stall=S' (no clock, S seconds at most per answer); "
        "default none: no clock, only the stall limit of 300 s per answer",
    )
    setting(
        "--resign",
        metavar="moves=K,score=S",
        help="adjudicate a game when both bots' evaluations favour one side by S or more "
        "for K moves each (off by default; recorded with cause 'adjudication')",
    )
    setting(
        "--name",
        help="the tournament's name (games are named after it; default 'tournament' and "
        "the start of its id)",
    )
    setting(
        "--format",
        type=lambda text: text.replace("-", "_"),
        help="round_robin (every pair, the default) or gauntlet (the first bot against each)",
    )
    setting("--rounds", type=int, help="meetings of each pairing (2 games each; default 1)")
    setting("--concurrency", type=int, help="games at once (default 1)")
    setting(
        "--openings",
        help="'default' (the shipped book of 60), 'none', or a file of HTTTX notation v2",
    )
    setting("--opening-order", help="sequential (default) or random")
    setting("--seed", type=int, help="seed of a random opening order (default 0)")
    setting("--turn-limit", type=int, help="a draw after this many moves (default 500)")
    setting("--view-distance", type=int, help="the game's view distance (default 8)")
    setting("--sprt", metavar="elo0=E0,elo1=E1[,alpha=A,beta=B]", help="stop when the SPRT decides")
    setting(
        "--series",
        metavar="boN|ftK",
        help="a series of two bots instead: best of N games (bo7) or first to K points "
        "(ft4), one game at a time, sides alternating, stopped once decided",
    )
    parser.add_argument("--db", default=DEFAULT_DB, help=f"results database (default {DEFAULT_DB})")
    parser.add_argument(
        "--resume",
        metavar="ID",
        help="resume this tournament of --db with its stored settings: its id, or the "
        f"start of it ({MIN_RESUME_PREFIX} characters at least) that no other id has",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="interface of the runner's game server, where spectators connect "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=0,
        help="port of the runner's game server (default %(default)s: any free one)",
    )
    parser.add_argument(
        "--address-policy",
        default=DEFAULT_CLI_POLICY,
        help=f"where bots may live (default {DEFAULT_CLI_POLICY!r})",
    )
    defaults = BotLimits()
    parser.add_argument(
        "--bot-memory-mb",
        type=_limit,
        default=defaults.memory_mb,
        help="address space of each cmd= bot in MB (default %(default)s; none: no limit)",
    )
    parser.add_argument(
        "--bot-cpu-seconds",
        type=_limit,
        default=defaults.cpu_seconds,
        help="CPU time of each cmd= bot over its life (default none: no limit)",
    )
    parser.add_argument(
        "--bot-processes",
        type=_limit,
        default=defaults.max_processes,
        help="processes/threads a cmd= bot may add (default %(default)s; none: no limit)",
    )
    parser.add_argument(
        "--log-dir", default="bot-logs", help="where cmd= bots' output goes (default bot-logs)"
    )
    parser.add_argument("--report", metavar="FILE.json", help="write the final report as JSON")
    parser.add_argument("--export", metavar="DIR", help="write every game as DIR/<n>.htttx")
    parser.add_argument("--export-bundle", metavar="FILE", help="write every game into one file")
    parser.add_argument(
        "--no-progress", action="store_true", help="print a line per pair instead of a live table"
    )
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="print only the tournament's id as it starts, and the final report",
    )
    return parser, stored


def _limit(text: str) -> int | None:
    """A ``--bot-*`` limit: a whole number (``BotLimits`` checks its range), or ``none``."""
    if text.strip().lower() == "none":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number or 'none', got {text!r}"
        ) from None


def _bot(spec: str) -> TournamentBot:
    fields: dict[str, Any] = {}
    config: dict[str, Any] = {}
    rest = spec
    while rest:
        key, equals, value = rest.partition("=")
        key = key.strip()
        if not equals:
            raise UsageError(f"--bot {spec!r}: expected key=value pairs separated by ','")
        if key == "cmd":  # a command may hold commas: it takes the rest
            fields["cmd"], rest = value, ""
            continue
        value, _, rest = value.partition(",")
        if key in ("name", "url"):
            fields[key] = value
        elif key == "tc":
            fields["time_control"] = _clock(value, f"--bot {spec!r}: tc")
        elif key == "board":
            if value not in ("true", "false"):
                raise UsageError(f"--bot {spec!r}: board must be true or false, got {value!r}")
            fields["send_board"] = value == "true"
        elif key.startswith("config.") and len(key) > 7:
            try:
                config[key[7:]] = json.loads(value)
            except ValueError:
                config[key[7:]] = value
        else:
            raise UsageError(
                f"--bot {spec!r}: unknown key {key!r} "
                "(expected name, url, cmd, tc, board, config.<key>)"
            )
    if "name" not in fields:
        raise UsageError(f"--bot {spec!r}: give the bot a name (name=...)")
    if config:
        fields["config"] = config
    try:
        bot = TournamentBot.model_validate(fields)
    except ValidationError as error:
        raise UsageError(f"--bot {spec!r}: {'; '.join(_problems(error))}") from None
    if bot.cmd is not None:
        try:  # a usage error, found now rather than once the tournament has started
            command_argv(bot.cmd, 0)
        except CommandError as error:
            raise UsageError(f"--bot {spec!r}: {error}") from None
    if bot.url is not None:
        try:  # the URL's form only: whether it answers is found when the run starts
            capabilities_url(bot.url)
        except BadBotUrl as error:
            raise UsageError(f"--bot {spec!r}: {error}") from None
    return bot


def _clock(text: str, where: str) -> TimeControl:
    try:
        return TimeControl.parse(text)
    except TimeControlError as error:
        raise UsageError(f"{where}: {error}") from None
    except ValidationError as error:
        raise UsageError(f"{where} {text!r}: {'; '.join(_problems(error))}") from None


def _resign(text: str) -> Adjudication:
    values: dict[str, float] = {}
    for part in text.split(","):
        key, equals, value = part.partition("=")
        if not equals or key.strip() not in ("moves", "score"):
            raise UsageError(f"--resign {text!r}: expected moves=K,score=S")
        try:
            values[key.strip()] = float(value)
        except ValueError:
            raise UsageError(f"--resign {text!r}: {key.strip()} must be a number") from None
    if set(values) != {"moves", "score"}:
        raise UsageError(f"--resign {text!r}: expected moves=K,score=S")
    moves = values["moves"]
    try:
        resign = ResignAdjudication(
            moves=int(moves) if moves.is_integer() else -1, score=values["score"]
        )
    except ValidationError as error:
        raise UsageError(f"--resign {text!r}: {'; '.join(_problems(error))}") from None
    return Adjudication(resign=resign)


def _sprt(text: str) -> SprtSettings:
    values: dict[str, float] = {}
    for part in text.split(","):
        key, equals, value = part.partition("=")
        if not equals or key.strip() not in ("elo0", "elo1", "alpha", "beta"):
            raise UsageError(
                f"--sprt {text!r}: expected elo0=E0,elo1=E1 and optionally alpha=A,beta=B"
            )
        try:
            values[key.strip()] = float(value)
        except ValueError:
            raise UsageError(f"--sprt {text!r}: {key.strip()} must be a number") from None
    try:
        return SprtSettings.model_validate(values)
    except ValidationError as error:
        raise UsageError(f"--sprt {text!r}: {'; '.join(_problems(error))}") from None


def _series(text: str) -> SeriesSettings:
    """``bo7`` (best of 7) or ``ft4`` (first to 4 points).

    >>> _series("bo7").best_of, _series("FT4").first_to
    (7, 4)
    >>> _series("best7")
    Traceback (most recent call last):
    ...
    game.tournament_args.UsageError: --series 'best7': expected boN (best of N) or ftK (first to K)
    """
    kind, digits = text[:2].lower(), text[2:]
    if kind not in ("bo", "ft") or not (digits.isascii() and digits.isdecimal()):
        raise UsageError(f"--series {text!r}: expected boN (best of N) or ftK (first to K)")
    try:
        if kind == "bo":
            return SeriesSettings(best_of=int(digits))
        return SeriesSettings(first_to=int(digits))
    except ValidationError as error:
        raise UsageError(f"--series {text!r}: {'; '.join(_problems(error))}") from None


def _output_path(option: str, text: str | None, *, directory: bool = False) -> Path | None:
    """Where ``option`` writes at the end (a file, or with ``directory`` a directory),
    checked now: a run of hours must not end on a path it cannot write. Missing
    directories on the way are created then; an existing file is overwritten."""
    if text is None:
        return None
    path = Path(text).expanduser()
    if directory and path.exists() and not path.is_dir():
        raise UsageError(f"{option} {text}: exists and is not a directory")
    if not directory and path.is_dir():
        raise UsageError(f"{option} {text}: is a directory; expected a file to write")
    ancestor = nearest_existing(path if directory else path.parent)
    if not ancestor.is_dir():
        raise UsageError(f"{option} {text}: {ancestor} is a file, not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {text}: {ancestor} is not writable")
    return path


def _resume_prefix(text: str, given: list[str]) -> str:
    """``--resume``'s id or start of one, refused with any stored setting: those come
    from --db (as fastchess's ``-config file=`` resumes from its file alone), and one
    given as well would be ignored or would differ from what the results were played
    with.

    >>> _resume_prefix("5d62dc89", [])
    '5d62dc89'
    >>> _resume_prefix("5d6", [])
    Traceback (most recent call last):
    ...
    game.tournament_args.UsageError: --resume '5d6': give at least 4 characters of the id
    """
    if given:
        raise UsageError(
            f"--resume reads the tournament's settings from --db: leave out "
            f"{', '.join(given)} (or run the same command without --resume: the "
            "unfinished tournament with exactly those settings goes on)"
        )
    prefix = text.strip()
    if len(prefix) < MIN_RESUME_PREFIX:
        raise UsageError(
            f"--resume {text!r}: give at least {MIN_RESUME_PREFIX} characters of the id"
        )
    return prefix


def _request(args: argparse.Namespace) -> TournamentRequest:
    """The tournament the command line's settings describe (``TournamentRequest``'s
    defaults for those not given)."""
    if args.bot is None or len(args.bot) < 2:
        raise UsageError("give at least two --bot (or --resume ID to go on with a tournament)")
    given = {
        "name": args.name,
        "format": args.format,
        "bots": [_bot(spec) for spec in args.bot],
        "rounds": args.rounds,
        "concurrency": args.concurrency,
        "opening_order": args.opening_order,
        "seed": args.seed,
    }
    fields: dict[str, Any] = {key: value for key, value in given.items() if value is not None}
    if args.openings in ("default", "none"):
        fields["openings"] = args.openings
    elif args.openings is not None:
        try:
            fields["book"] = Path(args.openings).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"--openings {args.openings!r}: cannot read it: {error}") from None
        try:  # read here too, so that an error names the file and its line
            OpeningBook.from_text(fields["book"], source=args.openings)
        except OpeningError as error:
            raise UsageError(f"--openings: {error}") from None
        fields["openings"] = "book"
    match: dict[str, Any] = {}
    if args.turn_limit is not None:
        match["turn_limit"] = args.turn_limit
    if args.view_distance is not None:
        match["view_distance"] = args.view_distance
    if match:
        try:
            fields["match"] = Match.model_validate(match)
        except ValidationError as error:
            raise UsageError("; ".join(_problems(error))) from None
    if args.sprt is not None:
        fields["sprt"] = _sprt(args.sprt)
    if args.series is not None:
        fields["series"] = _series(args.series)
    if args.clock is not None:
        fields["time_control"] = _clock(args.clock, "--clock")
    if args.resign is not None:
        fields["adjudication"] = _resign(args.resign)
    try:
        return TournamentRequest.model_validate(fields)
    except ValidationError as error:
        raise UsageError("; ".join(_problems(error))) from None


def parse_arguments(argv: Sequence[str] | None = None) -> TournamentOptions:
    """Read the command line. Raises ``UsageError`` (one line) for anything wrong."""
    parser, stored_settings = _arguments()
    args = parser.parse_args(argv)
    request: TournamentRequest | None = None
    resume: str | None = None
    if args.resume is not None:
        given = [
            action.option_strings[0]
            for action in stored_settings
            if getattr(args, action.dest) is not None
        ]
        resume = _resume_prefix(args.resume, given)
        if "://" not in args.db and not Path(args.db).expanduser().is_file():
            # Opening it would create an empty database, then find nothing in it.
            raise UsageError(
                f"--resume {resume}: there is no database {args.db} to resume from; give "
                "--db the file the tournament ran with"
            )
    else:
        request = _request(args)
    try:
        policy = AddressPolicy.parse(args.address_policy)
    except PolicySyntaxError as error:
        raise UsageError(f"--address-policy: {error}") from None
    try:
        limits = BotLimits(
            memory_mb=args.bot_memory_mb,
            cpu_seconds=args.bot_cpu_seconds,
            max_processes=args.bot_processes,
        )
    except LimitError as error:
        raise UsageError(str(error)) from None
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be from 0 to 65535, got {args.port}")
    return TournamentOptions(
        request=request,
        db_url=database_url(args.db),
        host=args.host,
        port=args.port,
        policy=policy,
        limits=limits,
        log_dir=Path(args.log_dir),
        resume=resume,
        report_json=_output_path("--report", args.report),
        export_dir=_output_path("--export", args.export, directory=True),
        export_bundle=_output_path("--export-bundle", args.export_bundle),
        progress=not args.no_progress,
        quiet=args.quiet,
    )

"""``htttx-tournament``: run a tournament from the command line, with live standings.

    htttx-tournament --bot name=threat,url=http://127.0.0.1:8001/bots/threat \\
        --bot "name=local,cmd=.venv/bin/htttx-bot --bot bot.bots:CenterBot --port {port}" \\
        --rounds 200 --concurrency 8 --clock 10+0.1 \\
        --openings default --sprt elo0=0,elo1=10 --db results.sqlite

The command is a client of the same runner as the server's REST API: it starts a game
server of its own (``game.server.create_app`` with the results database, loopback,
any free port unless ``--port``), creates the tournament through that server's
``TournamentDirector`` and shows it: a progress bar and the standings table on a
terminal (``rich``), or one line per counted pair otherwise (CI logs, pipes; with two bots
it carries the match's running score, Elo and LOS, as cutechess's does). Anyone can
watch its games meanwhile: ``GET /tournaments/<id>`` and ``/spectate/<game_id>`` on the
address it prints.

Run the same command again after an interruption (Ctrl-C, a crash, kill -9): it finds
the unfinished tournament with the same settings in ``--db`` and resumes it; games
counted stay counted, games cut short are played again. ``--resume ID`` resumes one by
its id or the start of it (git-like: at least 4 characters no other id starts with),
with its stored settings: none may be given with it (``game.tournament_args``). Exit
status: 0 finished, 1 failed, 2 bad usage, 130 stopped by a signal.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from game.discovery import DiscoveryError
from game.local_bots import LocalBotError
from game.notation import dumps
from game.openings import OpeningError
from game.server import ServerStartupError, create_app, serving
from game.startup_checks import StartupError, check_store, claim_store, listen
from game.store import GameStore, StoreError
from game.store_claim import Owner
from game.tournament_args import TournamentOptions, UsageError, parse_arguments
from game.tournament_director import TournamentDirector
from game.tournament_games import is_counted
from game.tournament_report import failures_text, pair_lines, progress_line, report, running_line
from game.tournament_runner import TournamentError, TournamentRun
from wire.listening import reachable_url
from wire.tournaments import TournamentView

__all__ = ["OutputError", "export_games", "main", "run_tournament"]

#: The command's name, as its messages and a database's claim say it.
PROGRAM = "htttx-tournament"
#: Statuses a tournament can be resumed from.
RESUMABLE = ("interrupted", "stopped", "failed")
#: Tournaments an ambiguous ``--resume`` prefix lists at most.
AMBIGUOUS_LISTED = 5
#: How often the live table is redrawn at most, per second.
REFRESH_PER_SECOND = 4


def _say(console: Console, text: str) -> None:
    """Plain text, never wrapped or styled (a report is read by people and by scripts)."""
    console.print(text, highlight=False, markup=False, soft_wrap=True)


def _table(view: TournamentView) -> Table:
    # Every text is a Text, never a str: rich reads "[...]" in a str as markup, and a
    # tournament's name ("Cup [/]", "[link=...]") would restyle the table or end the run
    # with a MarkupError.
    table = Table(title=Text(progress_line(view)), title_justify="left", expand=False)
    for column, justify in (
        ("#", "right"),
        ("Bot", "left"),
        ("Elo", "right"),
        ("+/-", "right"),
        ("Games", "right"),
        ("W", "right"),
        ("L", "right"),
        ("D", "right"),
        ("Points", "right"),
        ("Score", "right"),
        ("Failures", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for rank, line in enumerate(view.standings, 1):
        table.add_row(
            str(rank),
            Text(line.name),
            "" if line.elo is None else f"{line.elo:.1f}",
            "" if line.elo_error is None else f"{line.elo_error:.1f}",
            str(line.games),
            str(line.wins),
            str(line.losses),
            str(line.draws),
            f"{line.points:g}",
            "" if line.score is None else f"{100 * line.score:.1f}%",
            Text(failures_text(line)),
        )
    return table


def _live_view(view: TournamentView, progress: Progress) -> Group:
    parts: list[object] = [progress, _table(view)]
    if len(view.pairs) == 1:
        parts.append(Text("\n".join(pair_lines(view.pairs[0], view.sprt))))
    return Group(*parts)  # type: ignore[arg-type]


async def _resumed_id(store: GameStore, prefix: str) -> str:
    """The tournament of --db that ``--resume`` names: by its id, or like git by the
    start of it that no other id has. ``UsageError`` (one line) when no id starts so,
    or when several do (they are listed, newest first)."""
    if await store.tournaments.get(prefix) is not None:
        return prefix
    found = await store.tournaments.starting_with(prefix, limit=AMBIGUOUS_LISTED + 1)
    if not found:
        raise UsageError(f"--resume {prefix!r}: no tournament of --db has an id starting so")
    if len(found) > 1:
        listed = ", ".join(
            f"{stored.tournament_id} ({stored.status})" for stored in found[:AMBIGUOUS_LISTED]
        )
        more = ", ..." if len(found) > AMBIGUOUS_LISTED else ""
        raise UsageError(
            f"--resume {prefix!r} is ambiguous: it starts {listed}{more}; give more of the id"
        )
    return found[0].tournament_id


async def _find_resumable(director: TournamentDirector, options: TournamentOptions) -> str | None:
    """The tournament ``--resume`` names, or else the unfinished tournament of ``--db``
    with exactly these settings, if any."""
    if options.resume is not None:
        return await _resumed_id(director.store, options.resume)
    assert options.request is not None
    wanted = options.request.model_dump(mode="json")
    for stored in await director.store.tournaments.recent(1000):
        if stored.status in RESUMABLE and stored.request == wanted:
            return stored.tournament_id
    return None


async def _start(
    director: TournamentDirector, options: TournamentOptions, console: Console
) -> TournamentRun:
    found = await _find_resumable(director, options)
    if found is not None:
        stored = await director.store.tournaments.get(found)
        run = await director.resume(found, run_commands=True)
        if not options.quiet and stored is not None:
            _say(
                console,
                f"Resuming tournament {found} ({stored.status}): {stored.games_done} of "
                f"{stored.games_total} games already played",
            )
        return run
    assert options.request is not None
    # The one tournament whose programs this process runs: the operator's own, from
    # the command line (its HTTP port refuses any other, see TournamentDirector).
    try:
        return await director.create(options.request, run_commands=True)
    except (TournamentError, OpeningError) as error:
        # Settings the server cannot host (a clock past its bounds, an opening the turn
        # limit leaves no room): bad arguments, as a malformed clock is. A bot it cannot
        # reach or seat is a DiscoveryError, a failed run (exit 1).
        raise UsageError(str(error)) from None


async def _show(run: TournamentRun, options: TournamentOptions, console: Console) -> None:
    """Follow ``run`` until it ends: a live table on a terminal, lines otherwise. The
    standings are computed when something was counted, and at most
    ``REFRESH_PER_SECOND`` times a second: fast games must not pay for the display."""
    if options.quiet:
        return
    version, shown = -1, -1
    period = 1.0 / REFRESH_PER_SECOND
    loop = asyncio.get_running_loop()
    if options.progress and console.is_terminal:
        progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        task = progress.add_task("games", total=run.request.games)
        with Live(console=console, refresh_per_second=REFRESH_PER_SECOND, transient=False) as live:
            while not run.over:
                drawn = loop.time()
                version = await run.changed(version, timeout=1.0)
                view = run.view()
                progress.update(task, completed=view.games_counted)
                live.update(_live_view(view, progress))
                await asyncio.sleep(max(0.0, drawn + period - loop.time()))
            # Once more as it ended: the frame left on screen above the report must not
            # be the last one drawn while it ran (38/40, 1 running).
            view = run.view()
            progress.update(task, completed=view.games_counted)
            live.update(_live_view(view, progress), refresh=True)
        return
    while not run.over:
        version = await run.changed(version, timeout=5.0)
        if run.standings.counted_games == shown:
            continue
        view = run.view()
        shown = view.games_counted
        _say(console, running_line(view))


class OutputError(Exception):
    """A file of the results could not be written; says which option's."""

    def __init__(self, option: str, error: OSError) -> None:
        where = f" {error.filename}" if error.filename else ""
        super().__init__(f"{option}:{where}: {error.strerror or error}")


async def export_games(
    store: GameStore,
    tournament_id: str,
    directory: Path | None,
    bundle: Path | None,
    *,
    games_counted: int,
) -> int:
    """Write the counted games of a tournament (its view's ``games_counted``) as HTTTX
    notation: one file per game (``<directory>/<n>.htttx``, n the game's number in the
    schedule, from 1) and/or all in one file; the number of games written. A game that
    ended after the SPRT decided is not counted, so not written."""
    rows = [
        row
        for row in await store.tournaments.games(tournament_id)
        if is_counted(row, games_counted)
    ]
    texts = []
    for row in rows:
        record = await store.get_game(row.game_id)
        if record is None:
            continue
        text = dumps(record, clean_tags=True)
        if directory is not None:
            try:
                directory.mkdir(parents=True, exist_ok=True)
                (directory / f"{row.idx + 1:06d}.htttx").write_text(text, encoding="utf-8")
            except OSError as error:
                raise OutputError("--export", error) from None
        texts.append(text)
    if bundle is not None:
        try:
            bundle.parent.mkdir(parents=True, exist_ok=True)
            bundle.write_text("\n".join(texts), encoding="utf-8")
        except OSError as error:
            raise OutputError("--export-bundle", error) from None
    return len(texts)


async def run_tournament(options: TournamentOptions, console: Console | None = None) -> int:
    """Run (or resume) the tournament of ``options``; the exit status."""
    console = console or Console()
    # Found before the server starts, as one line each (uvicorn would log a traceback
    # and exit from inside its startup).
    listener = listen(options.host, options.port)
    with contextlib.ExitStack() as held:
        held.callback(listener.close)
        # Claimed before the store is opened, and until the run is over: a second run
        # on one database would mark this one's tournament interrupted and its games
        # aborted as it started, then play the same tournament (game.store_claim).
        owner = Owner.of_this_process(PROGRAM, reachable_url(*listener.getsockname()[:2]))
        held.callback((await asyncio.to_thread(claim_store, options.db_url, owner)).release)
        await check_store(options.db_url)
        return await _run(options, console, listener)


async def _run(options: TournamentOptions, console: Console, listener: socket.socket) -> int:
    """The runner's game server on ``listener``, and the tournament run through it."""
    app = create_app(
        db_url=options.db_url,
        policy=options.policy,
        bot_log_dir=str(options.log_dir),
        bot_limits=options.limits,
        max_games_per_client=1000,
        resume_series=False,  # resumed by _start, like a tournament: exactly the one asked
    )
    interrupted: list[str] = []
    async with serving(app, host=options.host, port=options.port, sock=listener) as server:
        director: TournamentDirector = app.state.arena.tournaments
        run = await _start(director, options, console)
        # Even with --quiet: the id is what --resume takes (progress lines show 8
        # characters of it, which --resume takes too while no other id starts so).
        _say(
            console,
            f"Tournament {run.tournament_id}: {run.request.games} games; standings at "
            f"{server.url}/tournaments/{run.tournament_id}",
        )
        loop = asyncio.get_running_loop()

        def on_signal(signum: signal.Signals) -> None:
            interrupted.append(signum.name)
            run.stop(f"interrupted by {signum.name}")

        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, on_signal, signum)
        try:
            await _show(run, options, console)
            if run.task is not None:
                await asyncio.gather(run.task, return_exceptions=True)
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(signum)
        view = await director.view(run.tournament_id)
        assert view is not None
        # The report first: a file that cannot be written must not cost the results.
        _say(console, report(view))
        failed = _write_report(options, view)
        if options.export_dir is not None or options.export_bundle is not None:
            try:
                written = await export_games(
                    director.store,
                    run.tournament_id,
                    options.export_dir,
                    options.export_bundle,
                    games_counted=view.games_counted,
                )
                _say(console, f"{written} games written as HTTTX notation")
            except OutputError as error:
                _say(Console(stderr=True), f"htttx-tournament: {error}")
                failed = True
    if interrupted:
        _say(console, f"Stopped by {interrupted[0]}: run the same command again to resume.")
        return 130
    return 0 if view.status == "finished" and not failed else 1


def _write_report(options: TournamentOptions, view: TournamentView) -> bool:
    """Write ``--report`` (if asked); whether that failed (said on stderr)."""
    if options.report_json is None:
        return False
    try:
        options.report_json.parent.mkdir(parents=True, exist_ok=True)
        options.report_json.write_text(view.model_dump_json(indent=2), encoding="utf-8")
    except OSError as error:
        _say(Console(stderr=True), f"htttx-tournament: {OutputError('--report', error)}")
        return True
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """The ``htttx-tournament`` command; returns the exit status."""
    error_console = Console(stderr=True)
    try:
        options = parse_arguments(argv)
        return asyncio.run(run_tournament(options))
    except (UsageError, StartupError) as error:
        # A --db that cannot be opened or a --port taken, found before anything starts:
        # exit 2, as htttx-server and htttx-bot say of the same options.
        _say(error_console, f"htttx-tournament: {error}")
        return 2
    except (
        TournamentError,
        OpeningError,
        DiscoveryError,
        LocalBotError,
        StoreError,
        ServerStartupError,
    ) as error:
        _say(error_console, f"htttx-tournament: {error}")
        return 1
    except OSError as error:  # a file the run writes, say
        _say(error_console, f"htttx-tournament: {error}")
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""Every tournament of one game server: ``TournamentDirector`` creates, checks, stops,
resumes and shows them; each one runs as a ``game.tournament_runner.TournamentRun``.
See ``game.tournament_runner`` for how a run plays its schedule and survives a restart.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pydantic import ValidationError

from game.discovery import DiscoveryError, discover
from game.discovery_errors import CannotStartFromOpening
from game.elo import StatsError
from game.local_bot_spec import BotLimits, LocalBotSpec
from game.local_bots import LocalBotError
from game.manager import GameManager
from game.openings import (
    NonStandardOpeningError,
    Opening,
    OpeningError,
)
from game.rating_book import RatingBook
from game.seat_checks import check_bot
from game.sprt import Sprt
from game.store import GameStore
from game.store.outages import is_outage
from game.store.schema import player_key
from game.store.tournaments import StoredTournament
from game.store.work import tournament_source
from game.tournament_games import (
    _book_for,
    _outcome_from_json,
    _standings_for,
    _stored_summary,
    _view,
    game_request,
)
from game.tournament_runner import (
    CommandsNotAllowedError,
    TournamentError,
    TournamentFinishedError,
    TournamentRun,
    TournamentRunningError,
    UnknownTournamentError,
)
from wire.errors import _problems
from wire.tournaments import (
    TournamentBot,
    TournamentPage,
    TournamentRequest,
    TournamentStatus,
    TournamentView,
)

if TYPE_CHECKING:
    from game.cluster_work import Coordinators

__all__ = ["FINISHED_VIEWS", "TournamentDirector"]

log = logging.getLogger("game.tournament")

#: Views of finished tournaments kept (they no longer change), oldest dropped first.
FINISHED_VIEWS: Final = 64
#: A series a restart interrupted is resumed by itself; its bots (maybe this very
#: server's hosted bots, not listening yet) get this many tries, the waits between
#: them doubling from ``RESUME_BACKOFF`` seconds up to ``RESUME_BACKOFF_MAX``.
RESUME_ATTEMPTS: Final = 10
RESUME_BACKOFF: Final = 0.5
RESUME_BACKOFF_MAX: Final = 30.0


class TournamentDirector:
    """Every tournament of one game server. See the module docstring.

    ``cmd=`` bots are started only for a ``create`` or ``resume`` called with
    ``run_commands=True``: the command line's own tournament. Whatever reaches the
    director otherwise (the REST API, a series resumed after a restart, a cluster
    adopting a tournament) is refused, even on the command line's server: its HTTP
    port is open to whoever can reach it (a web page in the operator's browser
    included), and a program named in a request would run as the operator. Local
    programs get ``limits`` and write their logs to ``log_dir``. ``ratings``: the arena's, which a
    rated series declares its games to (``RatingBook.track``); without it a rated
    series is refused. ``resume_series``: ``recover`` resumes interrupted series.
    """

    def __init__(
        self,
        manager: GameManager,
        store: GameStore,
        *,
        limits: BotLimits | None = None,
        log_dir: Path | str = Path("data") / "bot-logs",
        id_factory: Callable[[], str] = lambda: uuid.uuid4().hex,
        ratings: RatingBook | None = None,
        resume_series: bool = True,
    ) -> None:
        self.manager = manager
        self.store = store
        self.ratings = ratings
        self.resume_series = resume_series
        self.limits = limits if limits is not None else BotLimits()
        self.log_dir = Path(log_dir)
        self._new_id = id_factory
        self.runs: dict[str, TournamentRun] = {}
        #: The status a run stopped on request gets ("interrupted" while shutting down).
        self.stop_status: TournamentStatus = "stopped"
        self._finished_views: dict[str, TournamentView] = {}
        self._resuming: set[asyncio.Task[None]] = set()
        self._resume_lock = asyncio.Lock()
        #: On a cluster (``--redis``): the work queue and the coordinators' leases
        #: (``game.cluster_work``). A tournament is then coordinated by one worker at a
        #: time and its games are played by all of them.
        self.remote: Coordinators | None = None

    async def recover(self) -> list[str]:
        """At startup: mark tournaments a previous run left running as interrupted (their
        ids). Every interrupted series (a restart stopped it, whether or not it was shut
        down cleanly) is resumed by itself, in the background, unless ``resume_series``
        is off; a tournament waits for ``resume``."""
        ids = await self.store.tournaments.interrupt_running("the server stopped while it ran")
        series = await self.store.series.interrupted() if self.resume_series else []
        for tournament_id in ids:
            if tournament_id not in series:
                log.warning("tournament %s was interrupted: resume it to go on", tournament_id)
        for series_id in series:
            log.warning("series %s was interrupted: resuming it", series_id)
            task = asyncio.get_running_loop().create_task(
                self._resume_after_restart(series_id), name=f"htttx: resume series {series_id}"
            )
            self._resuming.add(task)
            task.add_done_callback(self._resuming.discard)
        return ids

    async def _resume_after_restart(self, tournament_id: str) -> None:
        wait = RESUME_BACKOFF
        for attempt in range(1, RESUME_ATTEMPTS + 1):
            try:
                await self.resume(tournament_id)
                return
            except DiscoveryError as error:
                if attempt == RESUME_ATTEMPTS:
                    log.error(
                        "series %s stays interrupted after %d tries: %s",
                        tournament_id,
                        attempt,
                        error,
                    )
                    return
                log.info("series %s: %s; trying again in %g s", tournament_id, error, wait)
                await asyncio.sleep(wait)
                wait = min(2 * wait, RESUME_BACKOFF_MAX)
            except (TournamentError, OpeningError) as error:
                log.error("series %s stays interrupted: %s", tournament_id, error)
                return

    def check(self, request: TournamentRequest, *, run_commands: bool = False) -> list[Opening]:
        """Refuse what this server cannot run, before anything is stored; ``cmd`` bots
        unless ``run_commands`` (see the class docstring)."""
        if not run_commands:
            commands = [bot.name for bot in request.bots if bot.cmd is not None]
            if commands:
                raise CommandsNotAllowedError(
                    f"bot {commands[0]!r}: 'cmd' bots are started by htttx-tournament on "
                    "the command line; the server does not run programs on request"
                )
        for bot in request.bots:
            if bot.cmd is not None:
                try:
                    LocalBotSpec(bot.name, bot.cmd, self.limits)
                except LocalBotError as error:
                    raise TournamentError(f"bot {bot.name!r}: {error}") from None
        if request.series is not None and request.series.rated:
            if self.ratings is None:
                raise TournamentError("rated: this server keeps no ratings")
            a, b = (bot.name for bot in request.bots)
            if player_key(a) == player_key(b):
                raise TournamentError(f"rated: {a!r} and {b!r} are one player's name")
        openings = _book_for(request)  # OpeningError names the bad opening
        # Every game must be one the server hosts: try each bot's seat once, and each
        # opening once (the turn limit, say, may leave it no room).
        first = request.bots[0]
        urls = ("http://127.0.0.1:1", "http://127.0.0.1:1")
        for bot in request.bots:
            # Its clock first, named as the tournament gives it: in a game it becomes the
            # game's (match_config) or the seat's (player_x...), neither of which the
            # tournament's author wrote.
            clock = request.time_control_of(bot)
            if clock is not None and (too_much := clock.hosting_problems()):
                problems = "; ".join(f"time_control.{problem}" for problem in too_much)
                raise TournamentError(f"bot {bot.name!r}: {problems}")
            try:
                game_request(request, bot, first, urls=urls, name="check")
            except ValidationError as error:
                problems = "; ".join(_problems(error))
                raise TournamentError(f"bot {bot.name!r}: {problems}") from None
        for opening in openings:
            try:
                game_request(request, first, first, urls=urls, name="check", opening=opening)
            except ValidationError as error:
                problems = "; ".join(_problems(error))
                raise TournamentError(f"opening {opening.name!r}: {problems}") from None
            except NonStandardOpeningError as error:
                raise TournamentError(f"opening {opening.name!r}: {error}") from None
        if request.sprt is not None:
            try:
                Sprt(request.sprt.elo0, request.sprt.elo1, request.sprt.alpha, request.sprt.beta)
            except StatsError as error:
                raise TournamentError(f"sprt: {error}") from None
        return openings

    async def check_bots(self, request: TournamentRequest, openings: list[Opening]) -> None:
        """Fetch the capabilities of every bot given by URL, all at once, so that a bot
        the server cannot seat is refused now (``DiscoveryError`` naming the first in
        entry order), not after games. A local program (``cmd``) is checked the same
        way once started (``TournamentRun``), before its first game."""

        async def check(bot: TournamentBot) -> None:
            assert bot.url is not None
            await self.check_bot(bot.name, bot.url, request, openings)

        outcomes = await asyncio.gather(
            *(check(bot) for bot in request.bots if bot.url is not None), return_exceptions=True
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def check_bot(
        self, name: str, url: str, request: TournamentRequest, openings: list[Opening]
    ) -> None:
        """Raise a ``DiscoveryError`` naming bot ``name`` if the server cannot reach it
        at ``url``, or if it could not be told the games' ``openings`` or non-standard
        rules (``seat_checks.check_bot``: what ``POST /game/new`` checks of each seat)."""
        manager = self.manager
        try:
            endpoint = await discover(
                url, manager.http, policy=manager.policy, timeout=manager.discovery_timeout
            )
        except DiscoveryError as error:
            raise type(error)(f"bot {name!r}: {error}") from None
        try:
            check_bot(
                f"bot {name!r}",
                endpoint,
                opening=bool(openings),
                rules_changed=request.match.rules_not_standard(),
            )
        except CannotStartFromOpening as error:
            raise CannotStartFromOpening(
                f"{error} (openings 'none' starts every game without one)"
            ) from None

    async def create(
        self,
        request: TournamentRequest,
        *,
        run_commands: bool = False,
        control_hash: str | None = None,
    ) -> TournamentRun:
        """Store a new tournament (a series, when ``request.series`` says so) and start
        it. Raises a ``TournamentError``, an ``OpeningError`` or a ``DiscoveryError``
        (each one line for the user) for what cannot be run; ``CommandsNotAllowedError``
        for a ``cmd`` bot unless ``run_commands`` (the command line's own tournament).
        ``control_hash``: the hash of the token its creator got to stop and resume it
        over REST (stored with it; see ``game.tournament_routes``), None for none."""
        # A book can be big: checked off the event loop.
        openings = await asyncio.to_thread(self.check, request, run_commands=run_commands)
        await self.check_bots(request, openings)
        tournament_id = self._new_id()
        if self.remote is not None:  # held before the row exists: nobody adopts it
            await self.remote.claim(tournament_id)
        created_at = datetime.now(UTC)
        records = self.store.tournaments if request.series is None else self.store.series
        await records.create(
            tournament_id,
            name=request.name,
            request_json=request.model_dump_json(),
            games_total=request.games,
            created_at=created_at,
            control_hash=control_hash,
        )
        stored = await self.store.tournaments.get(tournament_id)
        assert stored is not None
        return await self._start(tournament_id, request, stored, openings)

    async def _start(
        self,
        tournament_id: str,
        request: TournamentRequest,
        stored: StoredTournament,
        openings: list[Opening],
    ) -> TournamentRun:
        run = TournamentRun(self, tournament_id, request, stored, openings)
        # Runs that are over are read from the store from now on (a finished one's view
        # is cached): the server keeps no object per tournament it ever ran.
        self.runs = {key: old for key, old in self.runs.items() if not old.over}
        self.runs[tournament_id] = run
        run.task = asyncio.get_running_loop().create_task(
            run.run(), name=f"htttx: tournament {tournament_id}"
        )
        # The run counts the stored results in its task; whoever gets it back (the
        # answer to a resume, the command line's first progress line) must see them.
        await run.loaded()
        return run

    async def resume(self, tournament_id: str, *, run_commands: bool = False) -> TournamentRun:
        """Go on with a stopped or interrupted tournament from what the store holds.
        Resumes are taken one at a time: two at once (a request while a series resumes
        by itself after a restart) must not start two runs of one tournament; the
        second finds it running (``TournamentRunningError``). A tournament of ``cmd``
        bots resumes only with ``run_commands``, as ``create`` starts one."""
        async with self._resume_lock:
            return await self._resume(tournament_id, run_commands=run_commands)

    async def _resume(self, tournament_id: str, *, run_commands: bool) -> TournamentRun:
        run = self.runs.get(tournament_id)
        if run is not None and not run.over:
            raise TournamentRunningError(f"tournament {tournament_id} is running already")
        if run is not None and run.task is not None:
            await asyncio.gather(run.task, return_exceptions=True)
        stored = await self.store.tournaments.get(tournament_id)
        if stored is None:
            raise UnknownTournamentError(f"no tournament {tournament_id!r}")
        if stored.status == "finished":
            raise TournamentFinishedError(f"tournament {tournament_id} has finished")
        request = TournamentRequest.model_validate(stored.request)
        openings = await asyncio.to_thread(self.check, request, run_commands=run_commands)
        await self.check_bots(request, openings)
        if self.remote is not None and not await self.remote.claim(tournament_id):
            raise TournamentRunningError(
                f"tournament {tournament_id} is running already, coordinated by another worker"
            )
        await self.store.tournaments.set_status(tournament_id, "running")
        stored = await self.store.tournaments.get(tournament_id)
        assert stored is not None
        self._finished_views.pop(tournament_id, None)
        return await self._start(tournament_id, request, stored, openings)

    async def adopt(self, tournament_id: str) -> None:
        """On a cluster: coordinate a running tournament whose coordinator is gone (its
        lease was just claimed here, ``game.cluster_work.Coordinators``). It goes
        on from the store, the games in play on other workers included."""
        async with self._resume_lock:
            run = self.runs.get(tournament_id)
            if run is not None and not run.over:
                return
            stored = await self.store.tournaments.get(tournament_id)
            if stored is None or stored.status != "running":
                if self.remote is not None:
                    await self.remote.release(tournament_id)
                return
            request = TournamentRequest.model_validate(stored.request)
            try:
                openings = await asyncio.to_thread(self.check, request)
            except (TournamentError, OpeningError) as error:
                await self.store.tournaments.set_status(
                    tournament_id, "failed", reason=str(error), ended_at=datetime.now(UTC)
                )
                raise
            self._finished_views.pop(tournament_id, None)
            await self._start(tournament_id, request, stored, openings)

    def hand_over(self, tournament_id: str) -> None:
        """On a cluster: another worker coordinates ``tournament_id`` now; stop the run
        here without a word to the store (``TournamentRun.hand_over``)."""
        run = self.runs.pop(tournament_id, None)
        if run is not None and not run.over:
            run.hand_over()

    async def stop(
        self, tournament_id: str, reason: str = "stopped on request"
    ) -> TournamentRun | None:
        """Stop a running tournament; it can be resumed later. On a cluster, one that
        another worker coordinates is stopped in the store (None): its queued games are
        dropped, and its coordinator sees it within a heartbeat (``stopped_elsewhere``)."""
        run = self.runs.get(tournament_id)
        if run is None or run.over:
            stored = await self.store.tournaments.get(tournament_id)
            if stored is None:
                raise UnknownTournamentError(f"no tournament {tournament_id!r}")
            if self.remote is not None and stored.status == "running":
                await self.store.tournaments.set_status(
                    tournament_id, "stopped", reason=reason, ended_at=datetime.now(UTC)
                )
                await self.remote.cancel(tournament_source(tournament_id))
                return None
            raise TournamentFinishedError(f"tournament {tournament_id} is not running")
        run.stop(reason)
        if run.task is not None:
            await asyncio.gather(run.task, return_exceptions=True)
        return run

    async def stopped_elsewhere(self, tournament_id: str) -> None:
        """On a cluster: a tournament coordinated here is no longer running in the
        store (stopped through another worker): stop the run here with its reason."""
        run = self.runs.get(tournament_id)
        if run is None or run.over:
            return
        stored = await self.store.tournaments.get(tournament_id)
        if stored is not None and stored.status != "running":
            run.stop(stored.reason or "stopped through another worker", in_store=True)

    def slots(self, tournament_id: str) -> int:
        """How many games ``tournament_id`` may play at once while it runs here (its
        ``concurrency``); 0 when it does not run here."""
        run = self.runs.get(tournament_id)
        return 0 if run is None or run.over else run.request.concurrency

    def _current(self, tournament_id: str) -> TournamentRun | None:
        """The run here that says how the tournament stands: on a cluster only one that
        runs (a run over here may have been resumed on another worker since)."""
        run = self.runs.get(tournament_id)
        if run is None or (run.over and self.remote is not None):
            return None
        return run

    async def view(self, tournament_id: str) -> TournamentView | None:
        """The tournament with its standings; None if there is none with that id.

        On a cluster the games in flight (``games_running``, ``live_games``) are the
        store's (``TournamentRecords.live_games``), whichever worker answers: the
        coordinator's own list lags its workers, and the others hold none."""
        run = self._current(tournament_id)
        if run is not None:
            view = run.view()
            if self.remote is not None:
                try:
                    live = await self.store.tournaments.live_games(tournament_id)
                except Exception as error:
                    if not is_outage(error):
                        raise
                    # The store out of reach (a restart): the coordinator's own list,
                    # which lags its workers, rather than no answer at all.
                    return view
                view = view.model_copy(
                    update={"games_running": len(live), "live_games": list(live.values())}
                )
            return view
        if tournament_id in self._finished_views:
            return self._finished_views[tournament_id]
        stored = await self.store.tournaments.get(tournament_id)
        if stored is None:
            return None
        request = TournamentRequest.model_validate(stored.request)
        # Standings from the stored outcomes: no book to read, nothing is played.
        standings = _standings_for(request, 0)
        for row in await self.store.tournaments.games(tournament_id):
            if row.status == "done" and row.outcome is not None:
                standings.add(row.idx, _outcome_from_json(row.outcome))
        # A running tournament coordinated by another worker: its games in flight.
        live = {}
        if self.remote is not None and stored.status == "running":
            live = await self.store.tournaments.live_games(tournament_id)
        view = _view(_stored_summary(stored, request), request, standings, live)
        # Kept once it can change no more (on a cluster, another worker may resume a
        # failed one).
        if stored.status == "finished" or (stored.status == "failed" and self.remote is None):
            if len(self._finished_views) >= FINISHED_VIEWS:
                self._finished_views.pop(next(iter(self._finished_views)))
            self._finished_views[tournament_id] = view
        return view

    async def page(self, limit: int = 100) -> TournamentPage:
        """The newest tournaments, running ones as they stand now."""
        summaries = []
        for stored in await self.store.tournaments.recent(limit):
            run = self._current(stored.tournament_id)
            if run is not None:
                summaries.append(run.summary())
                continue
            request = TournamentRequest.model_validate(stored.request)
            summaries.append(_stored_summary(stored, request))
        return TournamentPage(tournaments=summaries)

    async def shutdown(self) -> None:
        """Stop every run (each ends ``interrupted``, to be resumed). On a cluster the
        runs are handed over instead: another worker adopts each and goes on."""
        self.stop_status = "interrupted"
        for task in list(self._resuming):
            task.cancel()
        await asyncio.gather(*self._resuming, return_exceptions=True)
        if self.remote is not None:
            handed = [run for run in self.runs.values() if not run.over and run.queued]
            for run in handed:
                self.hand_over(run.tournament_id)
            await asyncio.gather(
                *(run.task for run in handed if run.task is not None), return_exceptions=True
            )
            await self.remote.close(release=True)
        runs = [run for run in self.runs.values() if not run.over]
        for run in runs:
            run.stop("the server is shutting down")
        tasks = [run.task for run in runs if run.task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)

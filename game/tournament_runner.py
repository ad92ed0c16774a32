"""The tournament runner: plays a schedule through the game server's ``GameManager``.

``game.tournament_director.TournamentDirector`` is owned by the game server
(``app.state.arena.tournaments``); the REST routes (``game.tournament_routes``) and the
command line (``game.tournament_cli``) both drive it: one runner, two clients. Each
tournament it runs is a ``TournamentRun`` (this module): a task that keeps
``concurrency`` games of the schedule in flight, each created with
``GameManager.create_game`` like any ``POST /game/new`` game (so it is recorded,
listed in ``GET /games``, and can be spectated), and counts each result in
``game.tournament_standings.Standings`` as it ends.

Durability: the tournament's settings are stored when it is created, each game's
number and id when it starts, and its outcome when it ends (``game.store.tournaments``).
A run stopped any way (``stop``, the server shutting down, kill -9) resumes from the
store: counted games stay counted, a game cut short is played again (its record stays,
aborted), and the standings are rebuilt from the outcomes in schedule order, so they
end exactly as an uninterrupted run's would.

Failures are data: a bot's forfeit is counted against it by cause (time, illegal,
protocol, disconnect, crash, no-show). A local program (``cmd=``) that died is
restarted before its next game. A tournament fails (status ``failed``, with the reason)
only when a game cannot be created at all, say a bot that stopped answering its
capabilities, after ``CREATE_ATTEMPTS`` tries.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from game.discovery import DiscoveryError
from game.local_bot_spec import LocalBotSpec
from game.local_bots import LocalBot, LocalBotError, stop_all
from game.manager import ManagerClosed, TooManyGames
from game.openings import (
    Opening,
    OpeningError,
)
from game.rating_book import UnratableGame
from game.store.tournaments import StoredTournament
from game.store.work import COUNTED, UNSETTLED, tournament_source
from game.tournament_games import (
    _outcome_from_json,
    _outcome_json,
    _series_rule,
    _standings_for,
    _view,
    game_request,
)
from game.tournament_standings import outcome_of
from models import (
    MAX_TAG_VALUE_LENGTH,
    EndCause,
    GameResult,
    NewGameRequest,
)
from wire.tournaments import (
    TournamentRequest,
    TournamentStatus,
    TournamentSummary,
    TournamentView,
)

if TYPE_CHECKING:
    from game.cluster_work import Coordinators
    from game.tournament_director import TournamentDirector

__all__ = [
    "CREATE_ATTEMPTS",
    "CommandsNotAllowedError",
    "TournamentError",
    "TournamentFinishedError",
    "TournamentRun",
    "TournamentRunningError",
    "UnknownTournamentError",
]

log = logging.getLogger("game.tournament")

#: Tries to create one game (a bot that does not answer its capabilities) before the
#: tournament fails; the waits between them double from ``CREATE_BACKOFF`` seconds.
CREATE_ATTEMPTS: Final = 3
CREATE_BACKOFF: Final = 1.0
#: How long to wait for a free game slot when the server runs its most games.
FULL_SERVER_WAIT: Final = 0.5
#: How long a local program that dropped its game may take to be seen exiting, so that
#: a crash is counted as one and not as a disconnect.
CRASH_GRACE: Final = 2.0


class TournamentError(Exception):
    """Base class of the runner's errors; the message is one line for the user."""


class UnknownTournamentError(TournamentError, LookupError):
    """No tournament has this id."""


class TournamentRunningError(TournamentError):
    """Resuming a tournament that is running already."""


class TournamentFinishedError(TournamentError):
    """Resuming or stopping a tournament that has finished (or failed)."""


class CommandsNotAllowedError(TournamentError):
    """A ``cmd=`` bot given to a server that does not start programs (REST)."""


class TournamentRun:
    """One tournament being played (or resumed), from ``openings`` (the book in play
    order, read by ``TournamentDirector.check``). Created by ``TournamentDirector``."""

    def __init__(
        self,
        director: TournamentDirector,
        tournament_id: str,
        request: TournamentRequest,
        stored: StoredTournament,
        openings: list[Opening],
    ) -> None:
        self.director = director
        self.tournament_id = tournament_id
        self.request = request
        self.created_at = stored.created_at
        self.openings = openings
        self.standings = _standings_for(request, len(openings))
        self.schedule = self.standings.schedule
        self.status: TournamentStatus = "running"
        self.reason: str | None = None
        self.ended_at: datetime | None = None
        self.games_done = 0
        self.live: dict[int, str] = {}  # game number -> game id
        self.task: asyncio.Task[None] | None = None
        self._stopping: str | None = None
        self._changed = asyncio.Condition()
        self._version = 0
        self._local: dict[str, LocalBot] = {}
        self._restart_locks: dict[str, asyncio.Lock] = {}
        self._bots = {bot.name: bot for bot in request.bots}
        #: On a cluster, the games are queued for any worker to play (this worker
        #: coordinates); a local program (``cmd=``) can only be played here.
        self._remote: Coordinators | None = (
            director.remote if all(bot.cmd is None for bot in request.bots) else None
        )
        self._source = tournament_source(tournament_id)
        self._handed_over = False
        self._stopped_in_store = False
        self._cancelling: asyncio.Task[None] | None = None
        self._loaded = asyncio.Event()

    # ------------------------------------------------------------- observing

    async def loaded(self) -> None:
        """Wait until the stored results are counted (or the run ended first): a
        resumed run's view shows the games played before, not 0 of N."""
        assert self.task is not None
        waiter = asyncio.ensure_future(self._loaded.wait())
        try:
            await asyncio.wait((waiter, self.task), return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()

    async def changed(self, seen: int, timeout: float | None = None) -> int:
        """Wait until something was counted after version ``seen`` (or the run ended,
        or ``timeout``); the version now."""
        async with self._changed:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._changed.wait_for(lambda: self._version != seen or self.over)
            return self._version

    @property
    def queued(self) -> bool:
        """Whether its games are queued for the cluster's workers (not played here)."""
        return self._remote is not None

    @property
    def over(self) -> bool:
        return self.status != "running"

    async def _notify(self) -> None:
        async with self._changed:
            self._version += 1
            self._changed.notify_all()

    def summary(self) -> TournamentSummary:
        return TournamentSummary(
            series_rule=_series_rule(self.request),
            tournament_id=self.tournament_id,
            name=self.request.name,
            format=self.request.format,
            status=self.status,
            bots=[bot.name for bot in self.request.bots],
            games_total=self.request.games,
            games_done=self.games_done,
            created_at=self.created_at,
            ended_at=self.ended_at,
            reason=self.reason,
        )

    def view(self) -> TournamentView:
        return _view(self.summary(), self.request, self.standings, self.live)

    # ----------------------------------------------------------------- control

    def stop(self, reason: str = "stopped on request", *, in_store: bool = False) -> None:
        """Stop taking games and abort the ones running; the run ends ``stopped``.
        ``in_store``: the store says so already (stopped through another worker of a
        cluster): the run writes nothing."""
        if self._stopping is None:
            self._stopping = reason
        self._stopped_in_store = self._stopped_in_store or in_store
        self._abort_live(f"the tournament stopped: {reason}")

    def hand_over(self) -> None:
        """On a cluster: stop coordinating here and leave the tournament running, its
        games in play included, for another worker to adopt (this one shuts down, or
        lost its lease). Nothing is written."""
        self._handed_over = True
        if self.task is not None:
            self.task.cancel()

    def _abort_live(self, reason: str) -> None:
        """Abort the games in play: here, or on a cluster wherever they run."""
        remote = self._remote
        if remote is not None:
            if self._cancelling is None or self._cancelling.done():
                self._cancelling = asyncio.get_running_loop().create_task(
                    remote.cancel(self._source), name=f"htttx: cancel {self._source}"
                )
            return
        for game_id in list(self.live.values()):
            self.director.manager.abort_game(game_id, reason)

    # ------------------------------------------------------------------- play

    async def run(self) -> None:
        try:
            pending = await self._load()
            self._loaded.set()
            await self._start_local_bots()
            await self._check_local_bots()
            await self._play(pending)
            if self._stopping is not None:
                self.status, self.reason = self.director.stop_status, self._stopping
            else:
                self.status, self.reason = "finished", self._finish_reason()
        except asyncio.CancelledError:
            self.status, self.reason = "interrupted", "the server stopped"
            raise
        except (TournamentError, LocalBotError, OpeningError) as error:
            self.status, self.reason = "failed", str(error)
            log.error("tournament %s failed: %s", self.tournament_id, error)
        except Exception as error:  # a bug: fail the tournament, keep the server
            log.exception("tournament %s failed", self.tournament_id)
            self.status, self.reason = "failed", f"internal error: {error!r}"
        finally:
            await stop_all(self._local.values())
            if self._handed_over:  # it goes on elsewhere: nothing to write
                log.info("tournament %s handed over to another worker", self.tournament_id)
            else:
                await self._end()

    async def _end(self) -> None:
        """Abort what is left, store the status the run ended with (unless the store
        said it first: stopped through another worker, which may have resumed it since),
        then give up the coordinator's lease, and tell the watchers. The status goes in
        before the lease goes: no other worker adopts a run that is over."""
        if self._remote is not None:  # at once, not in a task: before the status
            with contextlib.suppress(Exception):
                await asyncio.shield(self._remote.cancel(self._source))
        else:
            self._abort_live("the tournament ended")
        self.ended_at = None if self.status == "interrupted" else datetime.now(UTC)
        if not self._stopped_in_store:
            with contextlib.suppress(Exception):
                await asyncio.shield(
                    self.director.store.tournaments.set_status(
                        self.tournament_id, self.status, reason=self.reason, ended_at=self.ended_at
                    )
                )
        await self._release()
        await self._notify()
        kind = "tournament" if self.request.series is None else "series"
        log.info("%s %s %s: %s", kind, self.tournament_id, self.status, self.reason)

    async def _release(self) -> None:
        """On a cluster: give up the coordinator's lease."""
        if self.director.remote is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.director.remote.release(self.tournament_id))

    def _finish_reason(self) -> str:
        if self.standings.series_score is not None:
            return self.standings.series_score.verdict()
        result = self.standings.sprt_result
        if result is not None and result.finished:
            accepted = "H1" if result.decision.value == "H1" else "H0"
            bound = result.upper if accepted == "H1" else result.lower
            return (
                f"SPRT: {accepted} accepted after {self.standings.counted_games} games "
                f"(LLR {result.llr:z.2f}, bound {bound:.2f})"
            )
        return f"all {self.standings.counted_games} games played"

    async def _load(self) -> Iterator[int]:
        """Count the stored outcomes; the game numbers still to play, in order."""
        store = self.director.store.tournaments
        done: set[int] = set()
        for row in await store.games(self.tournament_id):
            if row.status == "done" and row.outcome is not None:
                outcome = _outcome_from_json(row.outcome)
            elif self._remote is not None:
                # On a cluster the queue knows: the game may be in play on another
                # worker, or done and waiting to be counted (_play_remote counts it).
                continue
            elif row.game_status == "finished" and row.game_result is not None:
                # Ended and recorded, but the run stopped before counting it.
                game = self.schedule.game(row.idx)
                result = GameResult.model_validate(row.game_result)
                outcome = outcome_of(result, game.x, game.o)
                if not await store.finish_game(
                    self.tournament_id, row.idx, _outcome_json(outcome, row.game_id)
                ):
                    continue
            else:  # cut short (aborted, or never ended): played again
                await store.drop_game(self.tournament_id, row.idx)
                continue
            done.add(row.idx)
            self.standings.add(row.idx, outcome)
        self.games_done = len(done)
        if done:
            log.info(
                "tournament %s: resuming with %d of %d games done",
                self.tournament_id,
                len(done),
                len(self.schedule),
            )
        # Lazily: a long schedule is never held as a list.
        return (index for index in range(len(self.schedule)) if index not in done)

    async def _start_local_bots(self) -> None:
        for bot in self.request.bots:
            if bot.cmd is None:
                continue
            local = LocalBot(
                LocalBotSpec(bot.name, bot.cmd, self.director.limits),
                self.director.log_dir,
            )
            self._local[bot.name] = local
            self._restart_locks[bot.name] = asyncio.Lock()
            await local.start()

    async def _check_local_bots(self) -> None:
        """The check ``TournamentDirector.check_bots`` makes of bots given by URL, for the
        local programs now that they serve their capabilities: one that cannot be seated
        fails the tournament before its first game, not game after game."""
        for name, local in self._local.items():
            try:
                await self.director.check_bot(name, local.url, self.request, self.openings)
            except DiscoveryError as error:
                raise TournamentError(str(error)) from None

    async def _play(self, pending: Iterator[int]) -> None:
        todo = pending
        running: set[asyncio.Task[None]] = set()
        exhausted = False
        try:
            while True:
                while (
                    not exhausted
                    and len(running) < self.request.concurrency
                    and self._stopping is None
                    and not self.standings.complete
                ):
                    index = next(todo, None)
                    if index is None:
                        exhausted = True
                        break
                    running.add(
                        asyncio.create_task(self._play_game(index), name=f"tournament game {index}")
                    )
                if not running:
                    return
                done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()  # a TournamentError fails the tournament
                if self.standings.complete and running:
                    # The SPRT decided: what still runs cannot count.
                    self._abort_live("the SPRT has decided")
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    def _url_of(self, name: str) -> str:
        local = self._local.get(name)
        if local is not None:
            return local.url
        url = self._bots[name].url
        assert url is not None  # TournamentBot: a url or a cmd
        return url

    def _game_request(self, index: int) -> NewGameRequest:
        game = self.schedule.game(index)
        kind = "tournament" if self.request.series is None else "series"
        label = self.request.name or f"{kind} {self.tournament_id[:8]}"
        opening = None if game.opening is None else self.openings[game.opening]
        tags = {
            "tournament": self.tournament_id,
            "round": str(game.round + 1),
            "game": str(index + 1),
        }
        if opening is not None and opening.name:
            tags["opening"] = opening.name[:MAX_TAG_VALUE_LENGTH]
        score = self.standings.series_score
        if score is not None:
            # The score before this game: games are played one at a time, in order.
            tags["Series"] = self.tournament_id
            tags["SeriesRule"] = score.rule.describe()
            tags["SeriesScore"] = score.text[:MAX_TAG_VALUE_LENGTH]
        return game_request(
            self.request,
            self._bots[game.x],
            self._bots[game.o],
            urls=(self._url_of(game.x), self._url_of(game.o)),
            name=(
                f"{label}: game {index + 1} (round {game.round + 1})"
                if self.request.series is None
                else f"{label}: game {index + 1}"
            ),
            opening=opening,
            tags=tags,
        )

    async def _ensure_running(self, names: tuple[str, ...]) -> frozenset[str]:
        """Restart the local programs among ``names`` that died; those names."""
        crashed = set()
        for name in names:
            local = self._local.get(name)
            if local is None:
                continue
            async with self._restart_locks[name]:
                if local.running:
                    continue
                crashed.add(name)
                status = local.exit_status
                log.warning(
                    "local bot %s %s; restarting it",
                    name,
                    "ended" if status is None else status.describe(),
                )
                await local.restart()
        return frozenset(crashed)

    async def _died(self, names: Iterable[str]) -> frozenset[str]:
        """The local programs among ``names`` (bots that dropped or never came) that
        died. Their socket closes as the process dies, so the game can end before the
        exit is seen: each gets ``CRASH_GRACE`` seconds to be seen exiting."""
        died = set()
        for name in names:
            local = self._local.get(name)
            if local is None:
                continue
            if local.running:
                with contextlib.suppress(TimeoutError, LocalBotError):
                    await asyncio.wait_for(asyncio.shield(local.wait()), CRASH_GRACE)
            if not local.running:
                died.add(name)
        return frozenset(died)

    async def _create(self, index: int) -> str | None:
        """Create game ``index``; its id, or None when the run stops meanwhile (or the
        server shuts down). A full server is waited for, as long as it takes; a bot
        that cannot be seated is tried ``CREATE_ATTEMPTS`` times, then the tournament
        fails (``TournamentError``)."""
        manager = self.director.manager
        game = self.schedule.game(index)
        wait, failures = CREATE_BACKOFF, 0
        while self._stopping is None and not self.standings.complete:
            await self._ensure_running((game.x, game.o))
            try:
                created = await manager.create_game(self._game_request(index))
            except TooManyGames:
                await asyncio.sleep(FULL_SERVER_WAIT)
                continue
            except ManagerClosed:
                return None
            except DiscoveryError as error:
                failures += 1
                if failures == CREATE_ATTEMPTS:
                    raise TournamentError(
                        f"game {index + 1} could not start after {failures} tries: {error}"
                    ) from None
                log.warning("game %d: %s; trying again in %g s", index + 1, error, wait)
                await asyncio.sleep(wait)
                wait *= 2
                continue
            return created.game_id
        return None

    async def _track(self, game_id: str, x: str, o: str) -> None:
        """Declare a rated series' game to the arena's ratings (exactly once rated when
        it ends; void if it is cut short)."""
        series = self.request.series
        if series is None or not series.rated:
            return
        ratings = self.director.ratings
        if ratings is None:  # TournamentDirector.check refuses it first
            raise TournamentError("rated: this server keeps no ratings")
        try:
            await ratings.track(game_id, x, o)
        except UnratableGame as error:
            raise TournamentError(f"rated: {error}") from None

    async def _play_remote(self, remote: Coordinators, index: int) -> None:
        """Queue game ``index`` for any worker of the cluster and count its result."""
        game = self.schedule.game(index)
        series = self.request.series
        item = await remote.enqueue(
            self._source,
            index,
            self._game_request(index).model_dump_json(),
            rated=series is not None and series.rated,
        )

        if item.status == COUNTED:  # by the coordinator before this one
            await self._counted_elsewhere(index)
            return

        def on_game(game_id: str) -> None:
            self.live[index] = game_id

        try:
            settled = await remote.outcome(item, on_game)
        finally:
            self.live.pop(index, None)
        if settled is None:  # cancelled: the run stops
            return
        if settled.status == "failed":
            error = settled.error or ""
            if error.startswith(UNSETTLED):  # its own count of tries
                raise TournamentError(f"game {index + 1} {error}")
            raise TournamentError(
                f"game {index + 1} could not start after {CREATE_ATTEMPTS} tries: {error}"
            )
        # A done item has both: only its holder completes it, after starting its game
        # (game.store.work guards every write by holder and status).
        assert settled.result is not None and settled.game_id is not None, settled
        result = GameResult.model_validate(settled.result)
        outcome = outcome_of(result, game.x, game.o)
        outcome_data = _outcome_json(outcome, settled.game_id)
        work = self.director.store.work
        if await work.count(settled, self.tournament_id, settled.game_id, outcome_data):
            self.games_done += 1
            self.standings.add(index, outcome)
            await self._notify()
        else:
            await self._counted_elsewhere(index)

    async def _counted_elsewhere(self, index: int) -> None:
        """Game ``index`` was counted by the coordinator this run took over from: that
        one, cut off from Redis, learns it lost its lease only at its next renewal, and
        may count games after this run loaded the store. The store's count is the one:
        taken into the standings here, else the run would wait on a pair it can never
        complete and end "finished" short of its games."""
        stored = await self.director.store.tournaments.counted(self.tournament_id, index)
        if stored is None:  # the store guards every count: not expected
            log.error("tournament %s: game %d is counted nowhere", self.tournament_id, index + 1)
            return
        self.games_done += 1
        self.standings.add(index, _outcome_from_json(stored))
        await self._notify()

    async def _play_game(self, index: int) -> None:
        if self._remote is not None:
            await self._play_remote(self._remote, index)
            return
        store = self.director.store.tournaments
        manager = self.director.manager
        game = self.schedule.game(index)
        game_id = await self._create(index)
        if game_id is None:
            return
        ended = manager.end_of(game_id)  # looked up now: a quick game is not missed
        self.live[index] = game_id
        try:
            await store.start_game(self.tournament_id, index, game_id)
            await self._track(game_id, game.x, game.o)
            if self._stopping is not None or self.standings.complete:
                manager.abort_game(game_id, "the tournament stopped")
            result = await ended
        finally:
            self.live.pop(index, None)
        if result is None or result.cause is EndCause.ABORTED:
            await store.drop_game(self.tournament_id, index)  # void: played again on resume
            return
        outcome = outcome_of(result, game.x, game.o)
        crashed = await self._died(
            name
            for name, why in outcome.failures.items()
            if why
            in (
                "disconnect",
                "no_show",
            )
        )
        if crashed:
            outcome = outcome_of(result, game.x, game.o, crashed=crashed)
        if await store.finish_game(self.tournament_id, index, _outcome_json(outcome, game_id)):
            self.games_done += 1
            self.standings.add(index, outcome)
            await self._notify()

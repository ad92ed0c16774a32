"""The ladder: a scheduler on the game server that keeps registered bots playing.

Owned by the server like ``game.tournament_director.TournamentDirector``
(``app.state.arena.ladder``; ``htttx-server --ladder``). One task keeps up to
``concurrency`` games in flight, starting at most ``rate`` games a minute (a token
bucket holding at most ``concurrency`` starts), each between two bots that
``game.registry.BotRegistry.ladder_entrants`` lists (registered, opted in, active) and
that are in no game now (``game.bots_in_play``, which the server shares with the
people's queue, and a cluster's workers with each other: a bot playing a person waits
for that game to end), chosen by ``game.ladder_pairing.choose_pairs``: longest-waiting
first, so no bot starves; the opponent near in rating, with exploration; sides
balanced. Each pair's bots are taken (``BotsInPlay.take``, a check and a hold in one)
under the pairing's id before its game is created, and released as it ends; a pair
taken meanwhile by the queue is not played. While the bots in play cannot be told
(a cluster's Redis out of reach) nobody is paired.

Each game is an ordinary one: created with ``GameManager.create_game`` (recorded,
listed, spectatable; tagged ``Event: htttx-arena ladder``) at the ladder's time control,
declared rated with ``RatingBook.track`` (the rating book rates it when it ends), and
its outcome for each bot fed to ``BotRegistry.record_ladder_result``
(``game.ladder_failures``): a bot that forfeited (no-show, disconnect, timeout, stall,
illegal move, protocol error) or could not be reached when the game was created has
failed, and a bot that keeps failing is backed off (the registry's exponential
backoff; the reason is in ``GET /ladder`` and ``GET /bots``). An aborted game (the
server shutting down) is void: nobody failed.

Paused (``POST /ladder/pause``) it starts no more games, and keeps the books and holds
of those in flight as they end. The pause is a switch read before every pairing
(``game.ladder_switch``): on a cluster in Redis, so it reaches the worker that schedules
whichever worker it was sent to, and outlives a takeover.

State is the database: the registry (who plays, backoffs, last games) and the rating
book (ratings, games declared rated and not yet rated). After a restart the ladder
reads them and goes on; a game cut short by the restart was aborted, hence void.
In memory only (rebuilt as games are played): each bot's X-minus-O count and its last
opponent, and the counters of ``GET /ladder``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Final, Literal, Protocol

from game.bots_in_play import BotsInPlay, BotsInPlayUnknown, LocalBotsInPlay
from game.ladder_failures import failures_of, seat_of
from game.ladder_games import (
    EVENT_TAG,
    LadderGames,
    LocalGames,
    Played,
    PlayGame,
    QueuedGames,
    RatingTracker,
    Started,
    game_request,
)
from game.ladder_pairing import (
    Entrant,
    Pairing,
    Rated,
    choose_pairs,
    pick_bot_near,
)
from game.ladder_settings import (
    DEFAULT_CONCURRENCY,
    DEFAULT_RATE,
    DEFAULT_TIME_CONTROL,
    LadderSettings,
    LadderSettingsError,
)
from game.ladder_switch import LadderSwitch, LadderSwitchUnknown, LocalLadderSwitch
from game.manager import GameManager
from models import Player
from wire.ladder import LadderBackoff, LadderGame, LadderStatus

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_RATE",
    "DEFAULT_TIME_CONTROL",
    "EVENT_TAG",
    "Ladder",
    "LadderSettings",
    "LadderSettingsError",
    "failures_of",
]

log = logging.getLogger("game.ladder")

#: How long the list of entrants is used before it is read again (new registrations,
#: retirements and backoffs show up within this). A failure reads it at once.
REFRESH_S: Final = 2.0
#: How long to wait when the server runs its most games.
FULL_SERVER_WAIT_S: Final = 0.5
#: A ladder game's hold on its bots (``game.bots_in_play``): this and its pairing's id.
HOLD_KIND: Final = "ladder"

#: What a ladder's task does: waits to schedule (on a cluster, for the ladder's lease),
#: or schedules: paused, or pairing bots.
Phase = Literal["waiting", "paused", "pairing"]


# -------------------------------------------------- what the ladder uses of others


class LadderEntrant(Entrant, Protocol):
    """What the ladder reads of ``game.registry.LadderEntrant``: what pairing reads
    (``game.ladder_pairing.Entrant``), the URL and why a bot is backed off."""

    @property
    def url(self) -> str: ...
    @property
    def backoff_reason(self) -> str | None: ...


class Registry(Protocol):
    """What the ladder uses of ``game.registry.BotRegistry``."""

    async def ladder_entrants(self) -> Sequence[LadderEntrant]: ...

    async def record_ladder_result(
        self, name: str, failure: str | None, detail: str | None, now: datetime
    ) -> None: ...

    async def record_ladder_results(
        self, results: Mapping[str, tuple[str, str | None] | None], now: datetime
    ) -> None: ...


# ------------------------------------------------------------------ pure helpers


@dataclass(frozen=True)
class _Seen:
    """An entrant as the pairing sees it: the registry's, with what this ladder knows
    that is newer (its last game, ended since the list was read)."""

    name: str
    url: str
    rating: Rated
    last_game_at: datetime | None
    backoff_until: datetime | None
    backoff_reason: str | None


class _Bucket:
    """At most ``rate`` starts a minute, ``burst`` at once (a token bucket)."""

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.per_second = rate / 60.0
        self.burst = float(burst)
        self.tokens = 1.0
        self.at = now

    def available(self, now: float) -> int:
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.per_second)
        self.at = now
        return int(self.tokens)

    def take(self, n: int) -> None:
        self.tokens -= n

    def wait_for_one(self) -> float:
        return max(0.0, (1.0 - self.tokens) / self.per_second)


# ------------------------------------------------------------------------ ladder


class Ladder:
    """The ladder of one server. See the module docstring.

    ``wall``: the wall clock (``datetime.now(UTC)``); tests and the pairing read it.
    """

    def __init__(
        self,
        manager: GameManager,
        registry: Registry,
        ratings: RatingTracker,
        settings: LadderSettings,
        *,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
        games: LadderGames | None = None,
        bots_in_play: BotsInPlay | None = None,
        switch: LadderSwitch | None = None,
    ) -> None:
        self.manager = manager
        #: Where its games are played: here, or by a cluster's workers (``QueuedGames``:
        #: then this ladder schedules only while its worker holds the ladder's lease).
        self.games: LadderGames = games if games is not None else LocalGames(manager, ratings)
        self.registry = registry
        self.ratings = ratings
        self.settings = settings
        self._wall = wall
        self._rng = random.Random(settings.seed)
        self.task: asyncio.Task[None] | None = None
        #: Whether it is paused: read before every pairing (a cluster's, in Redis).
        self.switch = switch if switch is not None else LocalLadderSwitch()
        self.phase: Phase = "waiting"
        self.started_at: datetime | None = None
        self.games_started = 0
        self.games_finished = 0
        self.games_void = 0
        self.failed_starts = 0
        #: Ladder games being played: game id -> pair.
        self.live: dict[str, Pairing] = {}
        #: The bots in a game now, the ladder's or (shared by the server) the queue's:
        #: pairing skips them.
        self.bots_in_play = bots_in_play if bots_in_play is not None else LocalBotsInPlay()
        self._games: set[asyncio.Task[None]] = set()  # one per game, from its creation
        self._sides: dict[str, int] = {}
        self._last_opponent: dict[str, str] = {}
        self._last_played: dict[str, datetime] = {}
        self._entrants: dict[str, _Seen] = {}  # by casefolded name
        self._read_at: float | None = None
        self._wake = asyncio.Event()
        self._stopping = False

    # ---------------------------------------------------------------- control

    @property
    def running(self) -> bool:
        """Its task is alive (a bug stops it) and the ladder is not paused, as last known."""
        return self._alive and not self.switch.paused

    @property
    def _alive(self) -> bool:
        return self.task is not None and not self.task.done()

    def start(self) -> None:
        """Start the ladder's task (the server's lifespan): it schedules unless paused."""
        if self._alive or self._stopping:
            return
        if self.started_at is None:
            self.started_at = self._wall()
        self.phase = "waiting"
        self.task = asyncio.get_running_loop().create_task(self._run(), name="htttx: ladder")

    async def pause(self) -> None:
        """Start no more games (``POST /ladder/pause``); those in flight play on and
        count. On a cluster the pause reaches whichever worker schedules (its next
        pairing), and stays as another takes over. ``LadderSwitchUnknown`` if it
        cannot be set. A restarted server (a cluster started afresh) runs its ladder
        again."""
        await self.switch.pause()
        self._wake.set()  # paused at once here (a pairing under way stops before a game)

    async def resume(self) -> None:
        """Start games again (``POST /ladder/resume``), and the task, if a bug stopped it.
        ``LadderSwitchUnknown`` if the switch cannot be set."""
        await self.switch.resume()
        self._wake.set()
        self.start()

    async def shutdown(self) -> None:
        """Stop scheduling and abort the ladder's games (void: nobody failed)."""
        self._stopping = True
        self._wake.set()
        self.games.stop("the ladder stopped: the server is shutting down")
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        if self.games.hands_over:  # played elsewhere: the next scheduler keeps the books
            for task in self._games:
                task.cancel()
        await asyncio.gather(*self._games, return_exceptions=True)

    # ------------------------------------------------------------- observing

    async def status(self) -> LadderStatus:
        """``GET /ladder``."""
        with contextlib.suppress(LadderSwitchUnknown):  # else, as last known
            await self.switch.read()  # paused through another worker, maybe
        now = self._wall()
        entrants = await self._read_entrants()
        backoffs = [
            LadderBackoff(name=e.name, until=e.backoff_until, reason=e.backoff_reason)
            for e in entrants
            if e.backoff_until is not None and _aware(e.backoff_until) > now
        ]
        return LadderStatus(
            enabled=True,
            running=self.running,
            concurrency=self.settings.concurrency,
            rate_per_minute=self.settings.rate,
            time_control=self.settings.clock.text,
            entrants=len(entrants),
            in_flight=len(self._games),
            games_started=self.games_started,
            games_finished=self.games_finished,
            games_void=self.games_void,
            failed_starts=self.failed_starts,
            started_at=self.started_at,
            live=[LadderGame(game_id=g, x=p.x, o=p.o) for g, p in self.live.items()],
            backoffs=sorted(backoffs, key=lambda b: b.until),
        )

    async def pick_opponent_for(self, rating: float | Rated) -> LadderEntrant | None:
        """A ladder bot for a person who waited (the people's queue): the free one
        nearest ``rating`` (``game.ladder_pairing.pick_bot_near``), or None."""
        entrants = await self._read_entrants()
        busy = await self.bots_in_play.busy()  # BotsInPlayUnknown as it comes
        return pick_bot_near(entrants, rating, busy, now=self._wall())

    # ------------------------------------------------------------ scheduling

    async def _read_entrants(self) -> list[_Seen]:
        """The entrants, read from the registry at most every ``REFRESH_S`` seconds (or
        at once after a failure), with this ladder's newer last games laid over."""
        loop_now = asyncio.get_running_loop().time()
        if self._read_at is None or loop_now - self._read_at >= REFRESH_S:
            self._read_at = loop_now
            self._entrants = {}
            for e in await self.registry.ladder_entrants():
                key = e.name.casefold()
                seen = _Seen(
                    e.name, e.url, e.rating, e.last_game_at, e.backoff_until, e.backoff_reason
                )
                self._entrants[key] = self._laid_over(key, seen)
            self._forget_the_departed()
        return list(self._entrants.values())

    def _forget_the_departed(self) -> None:
        """Drop what this ladder remembers of bots no longer in it (retired, opted out,
        unreachable) and in no game now (one of the ladder's updates them as it ends): a
        long-running server sees bots come and go, and kept them all. One that comes back
        starts with an even colour balance and no last opponent; its last game is the
        registry's."""
        keep = self._entrants.keys() | self.bots_in_play.playing()
        for table in (self._sides, self._last_opponent, self._last_played):
            for key in [key for key in table if key not in keep]:
                del table[key]

    def _laid_over(self, key: str, entrant: _Seen) -> _Seen:
        mine = self._last_played.get(key)
        theirs = entrant.last_game_at
        if mine is not None and (theirs is None or _aware(theirs) < mine):
            return replace(entrant, last_game_at=mine)
        return entrant

    def _played(self, name: str, now: datetime) -> None:
        """``name``'s ladder game ended ``now``: it goes to the back of the line."""
        key = name.casefold()
        self._last_played[key] = now
        if (cached := self._entrants.get(key)) is not None:
            self._entrants[key] = self._laid_over(key, cached)

    async def _run(self) -> None:
        games = self.games
        try:
            if isinstance(games, QueuedGames):  # one scheduler for the cluster
                await games.lead(self._lost_lead, REFRESH_S)
                for pairing_id, pair, outcome in await games.adopt():
                    # Its game is on: its bots are held here now, whatever the count.
                    hold = _hold_of(pairing_id)
                    self.bots_in_play.keep(hold, pair.x, pair.o)
                    self._launch_game(pair, outcome, hold)
            await self._schedule()
        except Exception:  # a bug: the ladder stops (GET /ladder says so), the server stays
            log.exception("the ladder stopped")
            if isinstance(games, QueuedGames):
                # Its lease kept here, nobody would schedule the cluster's ladder (nor
                # this worker, resumed: it waits to lead). Handed over with the books of
                # its games, as when the lease is lost.
                for task in self._games:
                    task.cancel()
                await games.release()
            raise

    async def _schedule(self) -> None:
        loop = asyncio.get_running_loop()
        bucket = _Bucket(self.settings.rate, self.settings.concurrency, loop.time())
        log.info(
            "ladder: %d games at once, %g a minute, time control %s",
            self.settings.concurrency,
            self.settings.rate,
            self.settings.clock.text,
        )
        while not self._stopping:
            self._wake.clear()
            try:
                paused = await self.switch.read()
            except LadderSwitchUnknown as error:
                log.warning("ladder: pairing nobody: %s", error)
                await self._sleep(REFRESH_S)
                continue
            self._enter("paused" if paused else "pairing")
            if paused:  # until resumed here (which wakes it) or read so (another worker)
                await self._sleep(REFRESH_S)
                continue
            free = self.settings.concurrency - len(self._games)
            if free <= 0:
                await self._wake.wait()
                continue
            slots = min(free, bucket.available(loop.time()))
            if slots <= 0:
                await self._sleep(bucket.wait_for_one())
                continue
            try:
                entrants = await self._read_entrants()
            except Exception:  # the database: try again later, keep the server
                log.exception("ladder: cannot read the entrants")
                await self._sleep(REFRESH_S)
                continue
            try:
                busy = await self.bots_in_play.busy()
            except BotsInPlayUnknown as error:
                log.warning("ladder: pairing nobody: %s", error)
                await self._sleep(REFRESH_S)
                continue
            pairs = choose_pairs(
                entrants,
                now=self._wall(),
                slots=slots,
                rng=self._rng,
                busy=busy,
                explore=self.settings.explore,
                sides=self._sides,
                last_opponent=self._last_opponent,
            )
            if not pairs:
                # Nobody to pair: until a game ends, or the list is read again.
                await self._sleep(REFRESH_S)
                continue
            urls = {e.name: e.url for e in entrants}
            if not await self._launch_taken(pairs, urls, bucket):
                await self._sleep(REFRESH_S)

    def _enter(self, phase: Phase) -> None:
        if phase == "paused" != self.phase:
            log.info("ladder: paused: no game starts until it is resumed")
        elif phase == "pairing" and self.phase == "paused":
            log.info("ladder: resumed")
        self.phase = phase

    async def _sleep(self, seconds: float) -> None:
        """Sleep ``seconds``, or until a game ends or the ladder stops."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)

    def _lost_lead(self, _name: str) -> None:
        """Another worker schedules the cluster's ladder now: stop, and wait to lead
        again. The games queued so far are its to keep the books of."""
        self.phase = "waiting"
        if self.task is not None:
            self.task.cancel()
            self.task = None
        for task in self._games:
            task.cancel()
        self.start()

    async def _launch_taken(
        self, pairs: list[Pairing], urls: Mapping[str, str], bucket: _Bucket
    ) -> bool:
        """Launch each pair whose bots are still free (taken under its pairing's id: the
        queue, maybe on another worker, may have given one to a person since ``busy``
        was read); False if the bots in play could not be told. Paused meanwhile
        (``pause`` on this worker), it starts none."""
        for pair in pairs:
            pairing_id = uuid.uuid4().hex
            if self.switch.paused:
                return True
            try:
                taken = await self.bots_in_play.take(_hold_of(pairing_id), pair.x, pair.o)
            except BotsInPlayUnknown as error:
                log.warning("ladder: pairing nobody: %s", error)
                return False
            if taken and self.switch.paused:  # while the bots were being taken
                self.bots_in_play.release(_hold_of(pairing_id))
                return True
            if taken:
                bucket.take(1)
                self._launch(pair, (urls[pair.x], urls[pair.o]), pairing_id)
        return True

    def _launch(self, pair: Pairing, urls: tuple[str, str], pairing_id: str) -> None:
        request = game_request(pair, urls, self.settings.clock)

        def play(started: Started) -> Awaitable[Played]:
            return self.games.play(request, pair, started, pairing_id)

        self._launch_game(pair, play, _hold_of(pairing_id))

    def _launch_game(self, pair: Pairing, play: PlayGame, hold: str) -> None:
        """Play ``pair``'s game, its bots held under ``hold`` (released as it ends)."""
        task = asyncio.get_running_loop().create_task(
            self._play(pair, play, hold), name=f"ladder game {pair.x} vs {pair.o}"
        )
        self._games.add(task)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._games.discard(task)
        self._wake.set()
        if not task.cancelled() and task.exception() is not None:
            log.error("ladder game failed", exc_info=task.exception())

    async def _play(self, pair: Pairing, play: PlayGame, hold: str) -> None:
        over = False
        try:
            played = await self._play_game(pair, play)
            over = True
            await self._keep_books(pair, played)
        finally:
            if over or not self.games.hands_over:
                self.bots_in_play.release(hold)
            else:  # cut short as this scheduler stops: the game goes on, on a worker,
                self.bots_in_play.hand_over(hold)  # and the next scheduler keeps it

    async def _play_game(self, pair: Pairing, play: PlayGame) -> Played:
        live: list[str] = []

        def started(game_id: str) -> None:  # once, or again if its worker died
            if not live:
                self.games_started += 1
            live.append(game_id)
            self.live[game_id] = pair

        try:
            return await play(started)
        finally:
            for game_id in live:
                self.live.pop(game_id, None)

    async def _keep_books(self, pair: Pairing, played: Played) -> None:
        """What ``pair``'s game came to: the counters, the results the registry keeps."""
        if played.full:
            return
        if played.start_error is not None:
            self.failed_starts += 1
            seat = seat_of(played.start_error)
            blamed = [pair.x] if seat is Player.X else [pair.o] if seat is Player.O else []
            log.warning("ladder: %s vs %s could not start: %s", pair.x, pair.o, played.start_error)
            if blamed:
                await self._record(dict.fromkeys(blamed, ("no_show", played.start_error)))
            return
        result = played.result
        if result is None:
            self.games_void += 1
            return
        if result.void:  # neither bot came: unrated and unplayed, but both failed
            self.games_void += 1
            await self._record(failures_of(result, pair))
            return
        self.games_finished += 1
        now = self._wall()
        for name in (pair.x, pair.o):
            self._played(name, now)
        self._sides[pair.x.casefold()] = self._sides.get(pair.x.casefold(), 0) + 1
        self._sides[pair.o.casefold()] = self._sides.get(pair.o.casefold(), 0) - 1
        self._last_opponent[pair.x.casefold()] = pair.o.casefold()
        self._last_opponent[pair.o.casefold()] = pair.x.casefold()
        await self._record(failures_of(result, pair))

    async def _record(self, results: dict[str, tuple[str, str | None] | None]) -> None:
        try:
            await self.registry.record_ladder_results(results, self._wall())
        except Exception:
            log.exception("ladder: cannot record the results of %s", ", ".join(results))
        for name, failure in results.items():
            if failure is not None:
                self._read_at = None  # its backoff shows at the next pairing
                log.info("ladder: %s failed (%s): %s", name, *failure)


def _hold_of(pairing_id: str) -> str:
    """A ladder game's hold on its bots: the same on any worker that schedules it.

    >>> _hold_of("9f2c")
    'ladder:9f2c'
    """
    return f"{HOLD_KIND}:{pairing_id}"


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

"""How the ladder's games are played: on this server (``LocalGames``), or by any worker
of a cluster through the work queue (``QueuedGames``, ``game.cluster_work``).

``game.ladder.Ladder`` pairs the bots and keeps the books; each pairing's game
(``game_request``: both bots on the ladder's clock, tagged ``EVENT_TAG``) is handed to
one of these, which says what became of it as a ``Played``: the result, void
(aborted: nobody failed), could not start (the error names the seat), or not even
tried (this server runs its most games).

On a cluster the scheduler is a coordinator like a tournament's: one worker given
``--ladder`` holds the lease ``htttx:coordinator:ladder`` and pairs; the others given
``--ladder`` wait to take over. Each game is queued as a source of its own
(``ladder:<pairing id>``), declared rated, and played by whichever worker leases it
(the rating is settled on that worker, before its ``end`` goes out). A scheduler that
takes over finds the games its predecessor queued (``QueuedGames.adopt``, with their
pairing ids: the holds on their bots, ``game.bots_in_play``, which it keeps) and keeps
their books as they end.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from game.discovery import DiscoveryError
from game.ladder_pairing import Pairing
from game.manager import GameManager, ManagerClosed, TooManyGames
from game.store.work import LADDER_SOURCE, WorkItem, WorkRecords
from models import (
    EndCause,
    GameResult,
    Match,
    NewGameRequest,
    PlayerConfig,
    PlayerType,
    TimeControl,
)

if TYPE_CHECKING:
    from game.cluster_work import Coordinators

__all__ = [
    "EVENT_TAG",
    "LADDER_LEASE",
    "LadderGames",
    "LocalGames",
    "PlayGame",
    "Played",
    "QueuedGames",
    "Started",
    "game_request",
]

log = logging.getLogger("game.ladder")

#: The record's tag of every ladder game.
EVENT_TAG: Final = ("Event", "htttx-arena ladder")
#: The coordinator lease of the ladder's scheduler on a cluster.
LADDER_LEASE: Final = "ladder"
#: How long to wait when the server runs its most games.
FULL_SERVER_WAIT_S: Final = 0.5


#: Told the id of a game as it is created (again, if a worker died and another plays it).
Started = Callable[[str], None]


@dataclass(frozen=True)
class Played:
    """What became of one ladder game: ``result`` if it ended (None: void), or
    ``start_error`` if it could not start (``player_x: ...``: the seat to blame);
    ``full``: it was not tried, the server runs its most games."""

    game_id: str | None = None
    result: GameResult | None = None
    start_error: str | None = None
    full: bool = False


#: One pairing's game to play: called with its ``Started``, it ends with what became of it.
PlayGame = Callable[[Started], Awaitable[Played]]


def game_request(pair: Pairing, urls: tuple[str, str], clock: TimeControl) -> NewGameRequest:
    """Both bots play ``clock``: it is the game's (notation ``timecontrol[...]``, which
    other tools read, as in queue games), and a seat's only for a stall limit, which
    ``Match`` has no field for."""
    seat_clock = clock if clock.stall_limit is not None else None

    def seat(name: str, url: str) -> PlayerConfig:
        return PlayerConfig(type=PlayerType.BOT, bot_url=url, name=name, time_control=seat_clock)

    return NewGameRequest(
        player_x=seat(pair.x, urls[0]),
        player_o=seat(pair.o, urls[1]),
        match_config=Match(**clock.match_settings()),
        name=f"ladder: {pair.x} vs {pair.o}"[:64],
        tags=dict([EVENT_TAG]),
    )


class RatingTracker(Protocol):
    """What the ladder uses of ``game.rating_book.RatingBook``."""

    async def track(self, game_id: str, x: str, o: str) -> None: ...


class LadderGames(Protocol):
    """Where the ladder's games are played."""

    #: Whether the games in play go on without this ladder (on a cluster's workers):
    #: then a ladder that stops does not wait for them.
    hands_over: bool

    async def play(
        self, request: NewGameRequest, pair: Pairing, started: Started, pairing_id: str
    ) -> Played:
        """Play one pairing's game; ``started(game_id)`` once it is created.
        ``pairing_id``: the ladder's id of the pairing (random, no spaces)."""
        ...

    def stop(self, reason: str) -> None:
        """The ladder stops: what it has in play here ends (or is left to others)."""
        ...


class LocalGames:
    """The ladder's games on this server's ``GameManager``."""

    hands_over = False

    def __init__(self, manager: GameManager, ratings: RatingTracker) -> None:
        self.manager = manager
        self.ratings = ratings
        self.live: set[str] = set()
        self._stopping: str | None = None

    def stop(self, reason: str) -> None:
        self._stopping = reason
        for game_id in list(self.live):
            self.manager.abort_game(game_id, reason)

    async def play(
        self, request: NewGameRequest, pair: Pairing, started: Started, pairing_id: str
    ) -> Played:
        manager = self.manager
        try:
            created = await manager.create_game(request)
        except TooManyGames:
            await asyncio.sleep(FULL_SERVER_WAIT_S)
            return Played(full=True)
        except ManagerClosed:
            return Played()
        except DiscoveryError as error:
            return Played(start_error=str(error))
        game_id = created.game_id
        ended = manager.end_of(game_id)  # looked up now: a quick game is not missed
        started(game_id)
        self.live.add(game_id)
        try:
            try:
                await self.ratings.track(game_id, pair.x, pair.o)
            except Exception:
                log.exception("ladder: game %s could not be declared rated", game_id)
                manager.abort_game(game_id, "the ladder could not declare the game rated")
            if self._stopping is not None:
                manager.abort_game(game_id, self._stopping)
            result = await ended
        finally:
            self.live.discard(game_id)
        if result is None or result.cause is EndCause.ABORTED:
            return Played(game_id)
        return Played(game_id, result)


class QueuedGames:
    """The ladder's games queued for the cluster's workers (see the module docstring)."""

    hands_over = True

    def __init__(self, coordinators: Coordinators, work: WorkRecords) -> None:
        self.coordinators = coordinators
        self.work = work

    def stop(self, reason: str) -> None:
        """Nothing to abort: the games in play are other workers' (or handed back as
        this one stops), and the next scheduler keeps their books."""

    async def lead(self, on_lost: Callable[[str], None], every: float) -> None:
        """Wait until this worker holds the scheduler's lease (``every`` seconds
        between tries); ``on_lost`` is called if another worker takes it later."""
        while not await self.coordinators.claim(LADDER_LEASE, on_lost=on_lost):
            await asyncio.sleep(every)
        log.info("ladder: this worker schedules the cluster's ladder")

    async def release(self) -> None:
        await self.coordinators.release(LADDER_LEASE)

    async def play(
        self, request: NewGameRequest, pair: Pairing, started: Started, pairing_id: str
    ) -> Played:
        source = LADDER_SOURCE + pairing_id
        item = await self.coordinators.enqueue(source, 0, request.model_dump_json(), rated=True)
        return await self._outcome(item, started)

    async def adopt(self) -> list[tuple[str, Pairing, PlayGame]]:
        """The games a previous scheduler queued: each pairing's id and pairing, and how
        to wait for its game."""
        adopted: list[tuple[str, Pairing, PlayGame]] = []
        for item in await self.work.sourced(LADDER_SOURCE):
            request = NewGameRequest.model_validate_json(item.request)
            pair = Pairing(request.player_x.name or "X", request.player_o.name or "O")
            pairing_id = item.source.removeprefix(LADDER_SOURCE)
            adopted.append((pairing_id, pair, functools.partial(self._outcome, item)))
        return adopted

    async def _outcome(self, item: WorkItem, started: Started) -> Played:
        settled = await self.coordinators.outcome(item, started)
        if settled is None:  # cancelled
            return Played()
        with contextlib.suppress(Exception):  # a leftover row is harmless: a source each
            await self.work.forget(settled.item_id)
        if settled.status == "failed":
            return Played(settled.game_id, start_error=settled.error or "could not start")
        assert settled.result is not None
        # An aborted game is handed back and played again, never done: this is an end.
        return Played(settled.game_id, GameResult.model_validate(settled.result))

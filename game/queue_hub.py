"""The ``/queue``'s asyncio side: the people connected, the matchmaker
(``game.queue_match``) run on time, and the games started for the pairs it makes.

``QueueHub`` is owned by the server (created and closed in its lifespan, like the
``TournamentDirector``). Each ``/queue`` socket is a ``QueueClient`` (``game.queue_socket``
moves its bytes): the hub never waits on a socket; what it sends goes to the client's
bounded outbox, and a client too slow to take it is dropped.

* ``join``: the name is claimed (``QueueArena.claim``: a new name gets a person token,
  sent once in ``player_token``; a known person's name needs its token; a bot's name is
  refused), the person's rating read, and they wait. Every waiting person gets
  ``queue_waiting`` on joining and whenever the number of people waiting for their time
  control (them included) changes.
* The hub's task polls the matchmaker whenever someone joins or leaves and when its
  ``next_deadline`` comes. A pair becomes a game (``game.queue_games.start_game``:
  rated, ``Event: htttx-arena queue``); each person gets ``matched`` and their socket is
  closed. A person whose chosen wait is over gets the nearest free ladder bot not
  backed off (``game.ladder_pairing.pick_bot_near``, the ladder's choice for a person);
  with none free (or one that cannot be seated) they wait on and are tried again
  ``BOT_RETRY_S`` later. Free: in no game now, the queue's or the ladder's
  (``game.bots_in_play``, shared by the server, and by a cluster's workers), so a bot
  plays one game at a time. The bot is taken (a check and a hold in one) before its
  game is created and released as it ends; one the ladder took meanwhile is passed
  over for the next nearest. While the bots in play cannot be told (a cluster's Redis
  out of reach), a person due a bot waits on and is tried again later.
* A person who leaves (``queue_leave``, or the socket closes) before their game exists
  is no longer paired; if they left while it was being created, the game is aborted
  (nobody is rated for it) and the other person waits again where they were.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel

from game.bots_in_play import BotsInPlay, BotsInPlayUnknown, LocalBotsInPlay, new_hold_id
from game.discovery import DiscoveryError
from game.ladder_pairing import pick_bot_near
from game.manager import GameManager, ManagerClosed, TooManyGames
from game.queue_games import Contender, QueueArena, QueueRefusal, check_time_control, start_game
from game.queue_match import BotDue, Matchmaker, Paired, RatingWindow, Waiting
from game.registry import LadderEntrant
from game.store.schema import player_key
from models import (
    CLOSE_GOING_AWAY,
    CLOSE_NORMAL,
    CLOSE_TRY_AGAIN_LATER,
    NopePacket,
    Player,
    PlayerTokenPacket,
    QueueJoinPacket,
    QueueWaitingPacket,
)

__all__ = ["CLIENT_OUTBOX", "QueueClient", "QueueClosing", "QueueHub"]

log = logging.getLogger("game.queue")

#: Packets waiting for one queue socket at most; a client that lets more pile up is
#: dropped (it is not reading).
CLIENT_OUTBOX: Final = 64
#: How long closing waits for the waiting people's sockets to close.
CLOSE_WAIT_S: Final = 2.0
#: Why a game is aborted when a person left while it was being created.
LEFT_BEFORE_START: Final = "a player left the queue before the game began"
#: A queue game's hold on its bot (``game.bots_in_play``).
HOLD_KIND: Final = "queue"


class QueueClosing(Exception):
    """The server is shutting down: the queue takes nobody."""


@dataclass(frozen=True)
class _Close:
    code: int
    reason: str


class QueueClient:
    """One ``/queue`` socket as the hub sees it: an outbox of packets, then a close."""

    def __init__(self) -> None:
        self._outbox: asyncio.Queue[BaseModel | _Close] = asyncio.Queue(CLIENT_OUTBOX + 1)
        #: The key of the name it waits with (``player_key``), while it waits.
        self.waiting_key: str | None = None
        #: The open challenge it waits on (``game.challenges``), if any.
        self.challenge_id: str | None = None
        #: The ``players_waiting`` it was last told.
        self.told: int | None = None
        #: It is closing or closed: nothing more is sent.
        self.done = False
        #: Set once its socket is closed (``game.queue_socket``).
        self.gone = asyncio.Event()

    def send(self, packet: BaseModel) -> None:
        """Queue ``packet``; a client that has ``CLIENT_OUTBOX`` unread is dropped."""
        if self.done:
            return
        if self._outbox.qsize() >= CLIENT_OUTBOX:
            self.finish(CLOSE_TRY_AGAIN_LATER, "too many packets unread: the client is too slow")
            return
        self._outbox.put_nowait(packet)

    def finish(self, code: int, reason: str, last: BaseModel | None = None) -> None:
        """Send ``last`` (if any), then close with ``code`` and ``reason``."""
        if self.done:
            return
        self.done = True
        if last is not None:
            self._outbox.put_nowait(last)
        self._outbox.put_nowait(_Close(code, reason))

    def refuse(self, reason: str, code: int) -> None:
        """``nope`` with ``reason``, then close."""
        self.finish(code, reason, NopePacket(reason=reason))

    async def next(self) -> BaseModel | tuple[int, str]:
        """The next packet to write, or ``(code, reason)`` to close with."""
        item = await self._outbox.get()
        return (item.code, item.reason) if isinstance(item, _Close) else item


@dataclass
class _Person:
    client: QueueClient
    entry: Waiting


class QueueHub:
    """The queue of one server (see the module docstring)."""

    def __init__(
        self,
        manager: GameManager,
        arena: QueueArena,
        *,
        window: RatingWindow | None = None,
        rng: random.Random | None = None,
        bots_in_play: BotsInPlay | None = None,
    ) -> None:
        self.manager = manager
        self.arena = arena
        self._rng = rng or random.Random()
        self._maker = Matchmaker(window=window or RatingWindow(), rng=self._rng)
        self._people: dict[str, _Person] = {}  # waiting, or being seated
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._runner: asyncio.Task[None] | None = None
        #: The bots in a game now, the queue's or (shared by the server) the ladder's:
        #: a person is given none of them.
        self.bots_in_play = bots_in_play if bots_in_play is not None else LocalBotsInPlay()
        self._closing = False

    # -------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start the hub's task (in the server's lifespan)."""
        if self._runner is None:
            self._runner = asyncio.get_running_loop().create_task(self._run(), name="htttx: queue")

    async def close(self) -> None:
        """Stop pairing; every waiting client is closed with 1001."""
        self._closing = True
        tasks = [*self._tasks, *([self._runner] if self._runner else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        clients = [person.client for person in self._people.values()]
        for client in clients:
            client.finish(CLOSE_GOING_AWAY, "the game server is shutting down")
        self._people.clear()
        # Their close goes out before the server's own (uvicorn's 1012, no reason).
        with contextlib.suppress(TimeoutError):
            gone = [client.gone.wait() for client in clients]
            await asyncio.wait_for(asyncio.gather(*gone), CLOSE_WAIT_S)

    def evict(self, code: int, reason: str) -> int:
        """Close every waiting client with ``code`` and ``reason`` (no ``nope``: they
        may come back): this worker no longer leads a cluster's queue
        (``game.cluster_queue``). How many were waiting."""
        people = list(self._people.values())
        for person in people:
            self._forget(person.client)
            person.client.finish(code, reason)
        self._people.clear()
        self._changed()
        return len(people)

    # ----------------------------------------------------------------- inputs

    async def join(self, client: QueueClient, packet: QueueJoinPacket) -> None:
        """``client`` waits for a game; ``QueueRefusal`` says why it may not."""
        if self._closing:
            raise QueueClosing("the game server is shutting down")
        if client.waiting_key is not None or client.challenge_id is not None:
            raise QueueRefusal("this socket already waits: send queue_leave first")
        # Checked before the name is claimed: a new name's token must not be lost.
        check_time_control(packet.time_control)
        claim = await self.arena.claim(packet.name, packet.player_token)
        key = player_key(claim.name) or claim.name
        rating = await self.arena.rating(claim.name)
        if key in self._people:
            raise QueueRefusal(f"{claim.name!r} is already waiting in the queue")
        if client.done or self._closing:
            return
        if claim.new_token is not None:
            client.send(PlayerTokenPacket(name=claim.name, token=claim.new_token))
        now = asyncio.get_running_loop().time()
        bot_at = None if packet.bot_after_s is None else now + packet.bot_after_s
        entry = Waiting(key, claim.name, rating, packet.time_control, now, bot_at)
        self._maker.join(entry)
        self._people[key] = _Person(client, entry)
        client.waiting_key, client.told = key, None
        self._changed()

    def leave(self, client: QueueClient) -> None:
        """``client`` stops waiting (``queue_leave``, or its socket closed)."""
        key = client.waiting_key
        if key is None:
            return
        client.waiting_key = None
        self._maker.leave(key)
        person = self._people.get(key)
        if person is not None and person.client is client:
            del self._people[key]
        self._changed()

    # ---------------------------------------------------------------- reads

    def waiting_count(self) -> int:
        return self._maker.waiting_count()

    # ------------------------------------------------------------- the task

    def _changed(self) -> None:
        self._tell_waiting()
        self._wake.set()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._wake.clear()
            try:
                timeout = self._step(loop.time())
            except Exception:  # a bug must not stop the queue: log it, go on
                log.exception("queue: pairing failed")
                timeout = 1.0
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)

    def _step(self, now: float) -> float | None:
        """Pair and hand over whoever can be at ``now``; seconds until the next try."""
        for event in self._maker.poll(now):
            if isinstance(event, Paired):
                self._spawn(self._seat_pair(event), "pair")
            else:
                self._spawn(self._seat_with_bot(event), "bot")
        self._tell_waiting()
        deadline = self._maker.next_deadline(now)
        return None if deadline is None else max(deadline - now, 0.0)

    def _spawn(self, work: Coroutine[Any, Any, None], what: str) -> None:
        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug costs one pairing, never the queue
                log.exception("queue: seating a %s failed", what)

        task = asyncio.get_running_loop().create_task(guarded(), name=f"htttx: queue {what}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _tell_waiting(self) -> None:
        now = asyncio.get_running_loop().time()
        for person in list(self._people.values()):
            entry, client = person.entry, person.client
            if not self._maker.is_waiting(entry.key):
                continue  # being seated
            count = self._maker.waiting_count(entry.time_control)
            if client.told == count:
                continue
            client.told = count
            bot_in = None if entry.bot_at is None else max(round((entry.bot_at - now) * 1000), 0)
            client.send(
                QueueWaitingPacket(
                    players_waiting=count,
                    rating=round(entry.rating),
                    since_ms=round(entry.waited(now) * 1000),
                    time_control=entry.time_control,
                    bot_in_ms=bot_in,
                )
            )

    # ------------------------------------------------------------ seating

    def _present(self, entry: Waiting) -> QueueClient | None:
        person = self._people.get(entry.key)
        if person is None or person.client.done or person.client.waiting_key != entry.key:
            return None
        return person.client

    def _wait_again(self, entry: Waiting, *, bot_retry: bool = False) -> None:
        """Someone whose game did not come about waits again where they were."""
        if self._present(entry) is None or self._closing:
            return
        if bot_retry:
            again = self._maker.rejoin(entry, asyncio.get_running_loop().time())
            person = self._people[entry.key]
            # Told again: when the next bot is looked for (bot_in_ms) has changed.
            person.entry, person.client.told = again, None
        else:
            self._maker.join(entry)
        self._changed()

    async def _seat_pair(self, pair: Paired) -> None:
        x_client, o_client = self._present(pair.x), self._present(pair.o)
        if x_client is None or o_client is None:
            for entry in (pair.x, pair.o):
                self._wait_again(entry)
            return
        x = Contender(pair.x.name, "human", pair.x.rating)
        o = Contender(pair.o.name, "human", pair.o.rating)
        try:
            started = await start_game(self.manager, self.arena, x, o, pair.x.time_control)
        except (TooManyGames, ManagerClosed) as error:
            for client in (x_client, o_client):
                self._forget(client)
                client.refuse(str(error), CLOSE_TRY_AGAIN_LATER)
            return
        clients = {Player.X: (x_client, pair.x), Player.O: (o_client, pair.o)}
        if any(self._present(entry) is None for _client, entry in clients.values()):
            self.manager.abort_game(
                started.game_id, "a player left the queue before the game began"
            )
            for _client, entry in clients.values():
                self._wait_again(entry)
            return
        for side, (client, _entry) in clients.items():
            self._forget(client)
            client.finish(CLOSE_NORMAL, "matched", started.matched[side])
        log.info("queue: %s and %s play game %s", x.name, o.name, started.game_id)

    async def _seat_with_bot(self, due: BotDue) -> None:
        entry = due.person
        client = self._present(entry)
        if client is None:
            return
        try:
            bots = await self.arena.bots()
        except Exception:
            log.exception("queue: the ladder's bots could not be read")
            bots = []
        # Held from now: creating the game reaches the bot first, and meanwhile the
        # ladder must not pair it (nor another person be given it).
        hold = new_hold_id(HOLD_KIND)
        try:
            choice = await self._take_bot_near(bots, entry.rating, hold)
        except BotsInPlayUnknown as error:
            log.warning("queue: no bot for %s for now: %s", entry.name, error)
            choice = None
        if choice is None:
            self._wait_again(entry, bot_retry=True)
            return
        person = Contender(entry.name, "human", entry.rating)
        bot = Contender.of_bot(choice)
        x, o = (person, bot) if self._rng.random() < 0.5 else (bot, person)
        try:
            started = await start_game(self.manager, self.arena, x, o, entry.time_control)
        except DiscoveryError as error:
            self.bots_in_play.release(hold)
            log.warning("queue: bot %s could not be seated: %s", choice.name, error)
            self._wait_again(entry, bot_retry=True)
            return
        except (TooManyGames, ManagerClosed) as error:
            self.bots_in_play.release(hold)
            self._forget(client)
            client.refuse(str(error), CLOSE_TRY_AGAIN_LATER)
            return
        except BaseException:
            self.bots_in_play.release(hold)
            raise
        self._spawn(self._free_bot_after(started.game_id, hold), "bot game")
        if self._present(entry) is None:
            self.manager.abort_game(
                started.game_id, "the player left the queue before the game began"
            )
            return
        self._forget(client)
        [matched] = started.matched.values()
        client.finish(CLOSE_NORMAL, "matched", matched)
        log.info("queue: %s plays bot %s in game %s", entry.name, choice.name, started.game_id)

    async def _take_bot_near(
        self, bots: list[LadderEntrant], rating: float, hold: str
    ) -> LadderEntrant | None:
        """The free bot nearest ``rating``, taken under ``hold``; None if none is free.
        One taken since ``busy`` was read (by the ladder, maybe on another worker) is
        passed over for the next nearest."""
        passed: set[str] = set()
        busy = await self.bots_in_play.busy()
        while (choice := pick_bot_near(bots, rating, busy=busy | passed)) is not None:
            if await self.bots_in_play.take(hold, choice.name):
                return choice
            passed.add(choice.name.casefold())
        return None

    async def _free_bot_after(self, game_id: str, hold: str) -> None:
        try:
            await self.manager.end_of(game_id)
        finally:
            self.bots_in_play.release(hold)

    def _forget(self, client: QueueClient) -> None:
        key = client.waiting_key
        client.waiting_key = None
        if key is not None:
            self._maker.leave(key)
            if (person := self._people.get(key)) is not None and person.client is client:
                del self._people[key]

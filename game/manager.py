"""Run games: the asyncio around the pure ``GameSession``, one task per game.

``GameManager`` is what the server (``game.server``) calls: ``create_game`` for
``POST /game/new``, ``play_human`` for ``/ws?token=``, ``spectate`` for
``/spectate/<game_id>``, ``shutdown`` when it stops. Everything a game decides is
decided by its ``GameSession``; this module only delivers inputs and carries out the
actions, with a deadline on every wait and a bound on every queue.

One game, one task (``_Game.run``), which alone touches the session:

* Inputs arrive on one bounded inbox, in order: seat frames and drops (with the time
  they were read), seats attaching, stateless answers, an abort. Producers await room,
  so a flooding peer is slowed at its own socket. The task waits on the inbox until
  ``session.next_deadline`` and then calls ``session.timer``: one timer per game,
  re-armed after every input.
* Outputs never make the game task wait on a peer: every seat connection has an outbox
  (a bounded queue written by its own task, closed in order after the packets before
  it); every spectator a bounded queue (a full one drops that spectator, 1008 "too
  slow"). A ``Broadcast`` is encoded once for all spectators.
* The record is written in order by the game's recorder task (one row per move, then
  the result). The game task awaits only for room in the recorder's queue: a store that
  falls far behind slows its games rather than losing moves. A write that fails twice
  is logged and aborts the game (an unrecorded game must not carry on).
* Group commit: a game commits at most once per ``commit_interval`` (10 ms by
  default); the moves played in between go in the next commit, all together. A move
  after a quiet spell (a human's, a slow bot's) is committed at once, and the end of a
  game commits at once with whatever is waiting. Between bots that answer in a
  millisecond this turns dozens of transactions (and fsyncs) into one, which was most
  of what a fast game cost the server; the price is that a crash (not a stop: a stop
  ends every game and commits it) can lose the moves of the last interval.
* WebSocket bots are dialed when the game starts (retried until the no-show limit, so
  a bot that cannot be reached forfeits with ``no_show`` as the session decides); a
  stateless bot's turn is a task posting to it, cancelled when the game ends.

Decisions:

* Human tokens (``secrets.token_urlsafe(32)``) are valid while the game runs. A second
  connection with a live seat's token takes the seat over (the old one is closed with
  1008); to the session this is a drop and a reconnect, so it gets ``setup`` and the
  pending request. The takeover serves a client whose old connection died without
  the server noticing yet.
* ``latency_ms`` of a recorded move is the mover's last measured round trip (ping for a
  bot's socket); ``None`` for stateless bots and humans (nothing is measured for them).
* No exception escapes a game task: an unexpected one is logged and the game aborted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeAlias

import aiohttp

from game.discovery import DEFAULT_POLICY, AddressPolicy, BotEndpoint, DiscoveryError, discover
from game.seats import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_PING_INTERVAL,
    DEFAULT_PONG_TIMEOUT,
    DEFAULT_SEND_TIMEOUT,
    BotSocketSeat,
    InboundConnection,
    SeatConnectError,
    StatelessSeat,
    TextSink,
)
from game.session import (
    Action,
    Broadcast,
    CloseSeat,
    GameOver,
    GameSession,
    RecordMove,
    RequestStatelessTurn,
    SeatInfo,
    SendTo,
    SessionLimits,
)
from game.store import ABORTED_RESULT, GameStore
from game.watchdog import SendWatchdog
from models import (
    CLOSE_GOING_AWAY,
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    Board,
    Cell,
    EndPacket,
    GameRecord,
    GameResult,
    GameStatus,
    MoveRequestPacket,
    NewGameRequest,
    NewGameResponse,
    Player,
    PlayerConfig,
    PlayerType,
    RecordedMove,
    SetupPacket,
    StatelessMoveRequest,
    StatelessMoveResponse,
    dump_packet,
)

__all__ = [
    "DEFAULT_COMMIT_INTERVAL",
    "DEFAULT_MAX_SPECTATORS",
    "GameManager",
    "ManagerClosed",
    "TooManyGames",
    "TooManySpectators",
    "UnknownGame",
    "UnknownToken",
    "check_commit_interval",
]

log = logging.getLogger("game.manager")


INBOX_SIZE = 64
OUTBOX_SIZE = 64
RECORDER_SIZE = 1024
#: At most one commit of a game's moves per this many seconds (see the module docstring).
DEFAULT_COMMIT_INTERVAL = 0.010
#: How long the end of a game waits for its sockets to close and its record to be written.
CLOSE_WAIT = 5.0
STORE_WAIT = 30.0
#: How long ``shutdown`` gives the games to end properly before cancelling them.
SHUTDOWN_WAIT = 10.0
#: Spectators of one game at most. Each costs a queue and a send per move (the encode
#: is shared), so this bounds what one popular game can take from the others.
DEFAULT_MAX_SPECTATORS = 2000


def check_commit_interval(seconds: float) -> None:
    """Raise ``ValueError`` unless ``seconds`` is a finite number, 0 or more: what
    ``GameManager`` takes as ``commit_interval`` (the server checks it up front)."""
    if not 0 <= seconds < math.inf:
        raise ValueError(f"commit_interval must be 0 or more seconds, got {seconds}")


# ------------------------------------------------------------------------- errors


class TooManyGames(Exception):
    """``create_game`` while ``max_games`` games are running (the server answers 503)."""


class ManagerClosed(Exception):
    """``create_game`` after ``shutdown`` began."""


class UnknownToken(LookupError):
    """``play_human`` with a token no running game gave out (or whose game is over)."""


class UnknownGame(LookupError):
    """``spectate`` a game that is neither running nor stored."""


class TooManySpectators(Exception):
    """``spectate`` a running game that already has ``max_spectators`` spectators."""


# ---------------------------------------------------------------------- outboxes


@dataclass(frozen=True)
class _CloseItem:
    code: int
    reason: str


class _Outbox:
    """Packets to one connection, written in order by its own task; then the close.

    ``send`` never waits: it returns False when the connection is closed or ``size``
    packets are already waiting (a peer that does not read). ``on_failed`` is awaited
    (with why) when a send fails, so the owner learns of a connection that cannot take
    packets even if its reader has not noticed.
    """

    def __init__(
        self,
        sink: TextSink,
        name: str,
        *,
        on_failed: Callable[[str], Awaitable[None]] | None = None,
        size: int = OUTBOX_SIZE,
        send_timeout: float = DEFAULT_SEND_TIMEOUT,
    ) -> None:
        self._sink = sink
        self._on_failed = on_failed
        self._send_timeout = send_timeout
        self._queue: asyncio.Queue[str | _CloseItem] = asyncio.Queue(size)
        self._closing = False
        self._task = asyncio.get_running_loop().create_task(
            self._write(), name=f"htttx: write {name}"
        )

    def send(self, text: str) -> bool:
        if self._closing:
            return False
        try:
            self._queue.put_nowait(text)
        except asyncio.QueueFull:
            return False
        return True

    def close(self, code: int, reason: str) -> None:
        """Close after the packets already queued (at once if the queue is full)."""
        if self._closing:
            return
        self._closing = True
        try:
            self._queue.put_nowait(_CloseItem(code, reason))
        except asyncio.QueueFull:
            self._task.cancel()
            self._task = asyncio.get_running_loop().create_task(
                self._close_sink(code, reason), name=self._task.get_name()
            )

    async def wait_closed(self, timeout: float) -> None:
        """Wait for the writer to finish (up to ``timeout``), then stop it anyway."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._task), timeout)
        if not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            await self._close_sink(CLOSE_GOING_AWAY, "closing")

    async def _write(self) -> None:
        watchdog = SendWatchdog(self._send_timeout)
        try:
            while True:
                item = await self._queue.get()
                if isinstance(item, _CloseItem):
                    await self._close_sink(item.code, item.reason)
                    return
                await watchdog.send(self._sink.send_text(item))
        except Exception as exc:  # the peer is gone or does not read: its reader decides
            self._closing = True
            why = f"sending failed: {exc!r}"
            log.debug("%s", why)
            await self._close_sink(CLOSE_GOING_AWAY, "sending failed")
            if self._on_failed is not None:
                await self._on_failed(why)
        finally:
            watchdog.close()

    async def _close_sink(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CLOSE_WAIT):
                await self._sink.close(code, reason)


# --------------------------------------------------------------------- spectators


class _Spectator:
    """A spectator's bounded queue of encoded packets; ``None`` means close."""

    def __init__(self, size: int) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(size)
        self.dropped = asyncio.Event()

    def offer(self, text: str | None) -> bool:
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            return False
        return True


# ------------------------------------------------------------------ game events


@dataclass(frozen=True)
class _Attach:
    """A connection became the seat's (a bot's socket opened, a human came)."""

    side: Player
    conn: object
    outbox: _Outbox


@dataclass(frozen=True)
class _Frame:
    side: Player
    conn: object
    data: str | bytes
    at: float


@dataclass(frozen=True)
class _Detach:
    side: Player
    conn: object
    why: str
    at: float


@dataclass(frozen=True)
class _Answer:
    side: Player
    turn: int
    answer: StatelessMoveResponse | BaseException
    at: float


@dataclass(frozen=True)
class _Abort:
    reason: str


_Event: TypeAlias = _Attach | _Frame | _Detach | _Answer | _Abort


@dataclass
class _Slot:
    """One seat of a running game, as the adapter sees it."""

    info: SeatInfo
    endpoint: BotEndpoint | None = None
    token: str | None = None
    conn: object | None = None  # identity of the current connection
    outbox: _Outbox | None = None
    socket: BotSocketSeat | None = None


@dataclass(frozen=True)
class _WriteMove:
    index: int
    move: RecordedMove
    latency_ms: int | None


@dataclass(frozen=True)
class _WriteResult:
    result: GameResult


# --------------------------------------------------------------------------- game


class _Game:
    """One running game: the session, its seats, spectators, recorder and tasks."""

    def __init__(
        self,
        manager: GameManager,
        session: GameSession,
        slots: dict[Player, _Slot],
    ) -> None:
        self.manager = manager
        self.session = session
        self.game_id = session.game_id
        self.slots = slots
        self.spectators: set[_Spectator] = set()
        self.end_text: str | None = None
        self.finished = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self._loop = asyncio.get_running_loop()
        self._inbox: asyncio.Queue[_Event] = asyncio.Queue(INBOX_SIZE)
        self._local: deque[_Event] = deque()  # inputs the game task makes for itself
        self._records: asyncio.Queue[_WriteMove | _WriteResult] = asyncio.Queue(RECORDER_SIZE)
        self._recorder: asyncio.Task[None] | None = None
        self._helpers: set[asyncio.Task[Any]] = set()  # connects, turns, abort requests
        self._outboxes: set[_Outbox] = set()  # the bots' (a human's belongs to play_human)
        self._turn: asyncio.Task[None] | None = None
        self._turns = 0
        self._ending = False
        self._result_queued = False
        # Set once the result is queued: the recorder then commits without waiting.
        self._flush = asyncio.Event()

    # -------------------------------------------------------------- plumbing

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """A helper task this game owns: cancelled and awaited when the game ends."""
        task = self._loop.create_task(coro, name=f"htttx: {name} {self.game_id}")
        self._helpers.add(task)
        task.add_done_callback(self._helpers.discard)
        return task

    async def post(self, event: _Event) -> None:
        """An input for the game task (waits for room: backpressure on the producer)."""
        if not self._ending:
            await self._inbox.put(event)

    def request_abort(self, reason: str) -> None:
        if not self._ending:
            self.spawn(self.post(_Abort(reason)), "abort")

    # ------------------------------------------------------------ the task

    async def run(self) -> None:
        """The game task; returns when the game is over and everything is closed."""
        try:
            self._recorder = self._loop.create_task(
                self._record(), name=f"htttx: record {self.game_id}"
            )
            for side, slot in self.slots.items():
                if slot.info.kind == "bot_ws":
                    self.spawn(self._connect_bot(side), f"connect {side.value}")
            await self._play()
        except Exception:  # a bug here costs one game, never the server
            log.exception("game %s: the game task failed; aborting the game", self.game_id)
            with contextlib.suppress(Exception):
                await self._apply(self.session.abort("internal error", self._loop.time()))
        finally:
            await self._end()

    async def _play(self) -> None:
        session = self.session
        while not session.over:
            if self._local:
                event = self._local.popleft()
            else:
                deadline = session.next_deadline
                if deadline is not None and deadline <= self._loop.time():
                    await self._apply(session.timer(self._loop.time()))
                    continue
                try:
                    async with asyncio.timeout_at(deadline):
                        event = await self._inbox.get()
                except TimeoutError:
                    await self._apply(session.timer(self._loop.time()))
                    continue
            await self._apply(self._handle(event))

    def _handle(self, event: _Event) -> list[Action]:
        session = self.session
        match event:
            case _Frame(side, conn, data, at):
                if self.slots[side].conn is not conn:
                    return []  # from a connection the seat has replaced or closed
                return session.receive(side, data, at)
            case _Attach(side, conn, outbox):
                slot = self.slots[side]
                actions: list[Action] = []
                if slot.conn is not None and slot.outbox is not None:
                    why = "replaced by a new connection to this seat"
                    slot.outbox.close(CLOSE_POLICY_VIOLATION, why)
                    actions += session.seat_disconnected(side, self._loop.time(), why)
                slot.conn, slot.outbox = conn, outbox
                return actions + session.seat_connected(side, self._loop.time())
            case _Detach(side, conn, why, at):
                slot = self.slots[side]
                if slot.conn is not conn:
                    return []
                log.info("game %s: %s disconnected: %s", self.game_id, side.value, why)
                if slot.outbox is not None:
                    slot.outbox.close(CLOSE_GOING_AWAY, why)
                slot.conn = slot.outbox = None
                return session.seat_disconnected(side, at, why)
            case _Answer(side, turn, answer, at):
                if turn != self._turns:
                    return []  # a turn the session has moved past
                self._turn = None
                return session.stateless_answer(side, answer, at)
            case _Abort(reason):
                return session.abort(reason, self._loop.time())

    async def _apply(self, actions: list[Action]) -> None:
        last = len(actions) - 1
        for index, action in enumerate(actions):
            write = self._do(action)
            if (
                index < last
                and isinstance(action, SendTo)
                and isinstance(action.packet, MoveRequestPacket)
            ):
                # The game waits for the answer to this request: let the seat's outbox
                # put it on the wire now, before the spectators' update is encoded.
                await asyncio.sleep(0)
            if write is not None:
                # The only wait of the game task besides its inbox: room in the
                # recorder's queue, so a store far behind slows the game, loses nothing.
                await self._records.put(write)

    def _do(self, action: Action) -> _WriteMove | _WriteResult | None:
        """Carry out one action at once; what to write to the store is returned."""
        match action:
            case SendTo(side, packet):
                slot = self.slots[side]
                if slot.outbox is not None and not slot.outbox.send(dump_packet(packet).decode()):
                    # Cannot take packets: a dropped seat, to the session.
                    why = "does not read its packets"
                    self._local.append(_Detach(side, slot.conn, why, self._loop.time()))
            case Broadcast(packet):
                is_end = isinstance(packet, EndPacket)
                if self.spectators or is_end:  # an unwatched move is not even encoded
                    self._broadcast(dump_packet(packet).decode(), is_end)
            case RequestStatelessTurn(side, request, time_limit):
                self._post_turn(side, request, time_limit)
            case CloseSeat(side, code, reason):
                slot = self.slots[side]
                if slot.outbox is not None:
                    slot.outbox.close(code, reason)
                slot.conn = slot.outbox = None
            case RecordMove(index, move):
                return _WriteMove(index, move, move.latency_ms)
            case GameOver(result, _record, detail):
                log.info("game %s over: %s", self.game_id, detail)
                self._result_queued = True
                self._flush.set()
                return _WriteResult(result)
        return None

    def _broadcast(self, text: str, is_end: bool) -> None:
        if is_end:
            self.end_text = text
        for spectator in list(self.spectators):
            if not spectator.offer(text):
                self.drop(spectator)

    def drop(self, spectator: _Spectator) -> None:
        self.spectators.discard(spectator)
        spectator.dropped.set()

    # ------------------------------------------------------------- bot seats

    async def _connect_bot(self, side: Player) -> None:
        """Dial the bot until it answers or the no-show limit has passed (then the
        session records ``no_show``)."""
        slot = self.slots[side]
        assert slot.endpoint is not None and slot.endpoint.socket_url is not None
        manager = self.manager
        give_up = self._loop.time() + self.session.limits.no_show_s
        conn = object()
        delay = 0.1
        while True:
            seat = BotSocketSeat(
                slot.endpoint.socket_url,
                manager.http,
                on_frame=lambda data: self.post(_Frame(side, conn, data, self._loop.time())),
                on_closed=lambda why: self.post(_Detach(side, conn, why, self._loop.time())),
                on_rtt=lambda rtt: self._rtt(side, conn, rtt),
                max_frame_bytes=self.session.limits.max_frame_bytes,
                connect_timeout=manager.connect_timeout,
                ping_interval=manager.ping_interval,
                pong_timeout=manager.pong_timeout,
                thinking=lambda: self.session.awaiting is side,
                name=f"{side.value} {self.game_id}",
            )
            try:
                await seat.connect()
                break
            except SeatConnectError as exc:
                if self._loop.time() + delay >= give_up:
                    log.info("game %s: %s never connected: %s", self.game_id, side.value, exc)
                    return
                log.debug("game %s: %s: %s; retrying", self.game_id, side.value, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
        slot.socket = seat  # from here on, _end closes it whatever happens

        async def failed(why: str) -> None:
            await self.post(_Detach(side, conn, why, self._loop.time()))

        outbox = _Outbox(seat, f"{side.value} {self.game_id}", on_failed=failed)
        self._outboxes.add(outbox)  # closed by _end even if the attach never happens
        # Frames are posted after the attach, so the session hears of the seat first.
        await self.post(_Attach(side, conn, outbox))
        seat.start()

    def _rtt(self, side: Player, conn: object, rtt: float) -> None:
        slot = self.slots[side]
        if slot.conn is conn and not self.session.over:
            self.session.rtt_measured(side, rtt)

    def _post_turn(
        self, side: Player, request: StatelessMoveRequest, time_limit: float | None
    ) -> None:
        slot = self.slots[side]
        assert slot.endpoint is not None and slot.endpoint.turn_url is not None
        if self._turn is not None:
            self._turn.cancel()
        self._turns += 1
        turn = self._turns
        seat = StatelessSeat(slot.endpoint.turn_url, self.manager.http)

        async def play() -> None:
            answer: StatelessMoveResponse | BaseException
            try:
                answer = await seat.turn(request, time_limit)
            except Exception as exc:  # the session maps it to a cause
                answer = exc
            await self.post(_Answer(side, turn, answer, self._loop.time()))

        self._turn = self.spawn(play(), f"turn {side.value}")

    # ------------------------------------------------------------- the record

    async def _record(self) -> None:
        """Write the game's moves and result in order; a write that fails twice is
        logged and ends the game (it could not be recorded), never the server."""
        store = self.manager.store
        interval = self.manager.commit_interval
        failed = False
        held: _WriteResult | None = None  # drained while batching, written after the moves
        last_commit = -math.inf
        while True:
            item = held or await self._records.get()
            held = None
            batch = [item] if isinstance(item, _WriteMove) else []
            wait = last_commit + interval - self._loop.time()
            if batch and wait > 0 and not self._flush.is_set():
                # Too soon after the last commit: let the moves played meanwhile join
                # this one (the end of the game cuts the wait short).
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self._flush.wait()
            last_commit = self._loop.time()
            # Group commit: the moves queued behind this one go in the same transaction.
            while batch and not self._records.empty():
                queued = self._records.get_nowait()
                if isinstance(queued, _WriteResult):
                    held = queued  # the last item of a game: nothing queues behind it
                    break
                batch.append(queued)
            for attempt in (1, 2):
                try:
                    if isinstance(item, _WriteMove):
                        if not failed:
                            await store.add_moves(
                                self.game_id,
                                item.index,
                                [(write.move, write.latency_ms) for write in batch],
                            )
                    else:
                        await store.finish_game(
                            self.game_id, item.result, ended_at=datetime.now(UTC)
                        )
                    break
                except Exception:
                    if attempt == 2:
                        log.exception("game %s: writing the record failed", self.game_id)
                        if isinstance(item, _WriteMove) and not failed:
                            failed = True
                            self.request_abort("the game record could not be written")
            if isinstance(item, _WriteResult):
                return

    # ------------------------------------------------------------------ end

    async def _end(self) -> None:
        """Close everything the game owns and wait for it; runs once, at the end."""
        self._ending = True
        try:
            await self._close_all()
        finally:  # even if cancelled: nobody may wait for this game any longer
            if self._recorder is not None and not self._recorder.done():
                self._recorder.cancel()
            self.manager._forget(self)
            self.finished.set()

    async def _close_all(self) -> None:
        if not self.session.over:
            # Stopped without an end (the task was cancelled): end it now, without
            # waiting for anything, so the seats and spectators still get `end`.
            for action in self.session.abort("the game was stopped", self._loop.time()):
                write = self._do(action)
                if write is not None:
                    with contextlib.suppress(asyncio.QueueFull):
                        self._records.put_nowait(write)
        helpers = list(self._helpers)
        for task in helpers:
            task.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        outboxes = {slot.outbox for slot in self.slots.values() if slot.outbox is not None}
        outboxes |= self._outboxes
        for outbox in outboxes:
            outbox.close(CLOSE_GOING_AWAY, "the game is over")
        await asyncio.gather(*(outbox.wait_closed(CLOSE_WAIT) for outbox in outboxes))
        for slot in self.slots.values():
            slot.conn = slot.outbox = None
            if slot.socket is not None:
                await slot.socket.close(CLOSE_GOING_AWAY, "the game is over")
        for spectator in list(self.spectators):
            if not spectator.offer(None):
                self.drop(spectator)
        self.spectators.clear()
        if self._recorder is not None:
            if not self._result_queued:
                # Ended without a GameOver (cancelled): still leave a finished record.
                with contextlib.suppress(asyncio.QueueFull):
                    self._records.put_nowait(_WriteResult(ABORTED_RESULT))
                self._flush.set()
            try:
                await asyncio.wait_for(asyncio.shield(self._recorder), STORE_WAIT)
            except TimeoutError:
                log.error(
                    "game %s: the record was not written within %g s", self.game_id, STORE_WAIT
                )
            except Exception:
                log.exception("game %s: the recorder failed", self.game_id)
            if not self._recorder.done():
                self._recorder.cancel()
                await asyncio.gather(self._recorder, return_exceptions=True)


# ------------------------------------------------------------------------ manager


class GameManager:
    """Every running game of one server. See the module docstring."""

    def __init__(
        self,
        store: GameStore,
        http: aiohttp.ClientSession,
        *,
        policy: AddressPolicy = DEFAULT_POLICY,
        limits: SessionLimits | None = None,
        discovery_timeout: float = 5.0,
        max_games: int = 1000,
        max_spectators: int = DEFAULT_MAX_SPECTATORS,
        spectator_queue: int = 256,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        ping_interval: float = DEFAULT_PING_INTERVAL,
        pong_timeout: float = DEFAULT_PONG_TIMEOUT,
        commit_interval: float = DEFAULT_COMMIT_INTERVAL,
    ) -> None:
        check_commit_interval(commit_interval)
        if not 0 < pong_timeout < math.inf:
            raise ValueError(f"pong_timeout must be more than 0 seconds, got {pong_timeout}")
        self.store = store
        self.http = http
        self.policy = policy
        self.limits = limits if limits is not None else SessionLimits()
        self.discovery_timeout = discovery_timeout
        self.max_games = max_games
        self.max_spectators = max_spectators
        self.spectator_queue = spectator_queue
        self.connect_timeout = connect_timeout
        self.ping_interval = ping_interval
        self.pong_timeout = pong_timeout
        self.commit_interval = commit_interval
        self._games: dict[str, _Game] = {}
        self._tokens: dict[str, tuple[_Game, Player]] = {}
        self._starting = 0  # games being created: they count against max_games
        self._closing = False

    def live_game_ids(self) -> list[str]:
        """The ids of the games running now, oldest first."""
        return list(self._games)

    # ------------------------------------------------------------- creating

    async def create_game(self, request: NewGameRequest) -> NewGameResponse:
        """Discover the bots, write the record, start the game.

        Raises ``DiscoveryError`` (a bot that cannot be seated; the message names the
        seat and says why), ``TooManyGames`` or ``ManagerClosed``.
        """
        if self._closing:
            raise ManagerClosed("the server is shutting down and takes no new games")
        if len(self._games) + self._starting >= self.max_games:
            raise TooManyGames(
                f"{self.max_games} games are running, the most this server runs at once; "
                "try again later"
            )
        self._starting += 1
        try:
            # Both at once; every task is awaited, and X's failure is reported first.
            found = await asyncio.gather(
                self._discover("player_x", request.player_x),
                self._discover("player_o", request.player_o),
                return_exceptions=True,
            )
            endpoints: dict[Player, BotEndpoint | None] = {}
            for side, outcome in zip((Player.X, Player.O), found, strict=True):
                if isinstance(outcome, BaseException):
                    raise outcome
                endpoints[side] = outcome
            return await self._start(request, endpoints)
        finally:
            self._starting -= 1

    async def _discover(self, seat: str, player: PlayerConfig) -> BotEndpoint | None:
        if player.type is not PlayerType.BOT:
            return None
        assert player.bot_url is not None  # PlayerConfig checks it
        try:
            return await discover(
                player.bot_url, self.http, policy=self.policy, timeout=self.discovery_timeout
            )
        except DiscoveryError as exc:
            raise type(exc)(f"{seat}: {exc}") from None

    async def _start(
        self, request: NewGameRequest, endpoints: dict[Player, BotEndpoint | None]
    ) -> NewGameResponse:
        configs = {Player.X: request.player_x, Player.O: request.player_o}
        slots = {side: _slot(configs[side], endpoints[side]) for side in Player}
        for slot in slots.values():
            if slot.info.kind == "human":
                slot.token = secrets.token_urlsafe(32)
        game_id = uuid.uuid4().hex
        loop = asyncio.get_running_loop()
        session = GameSession(
            game_id,
            request.match_config,
            {side: slot.info for side, slot in slots.items()},
            limits=self.limits,
            started_at=loop.time(),
            started_wall=datetime.now(UTC),
        )
        if self._closing:
            raise ManagerClosed("the server is shutting down and takes no new games")
        await self.store.create_game(session.record().model_copy(update={"name": request.name}))
        if self._closing:  # shut down while the record was written: end it at once
            with contextlib.suppress(Exception):
                await self.store.finish_game(game_id, ABORTED_RESULT, ended_at=datetime.now(UTC))
            raise ManagerClosed("the server is shutting down and takes no new games")
        game = _Game(self, session, slots)
        self._games[game_id] = game
        for side, slot in slots.items():
            if slot.token is not None:
                self._tokens[slot.token] = (game, side)
        game.task = loop.create_task(game.run(), name=f"htttx: game {game_id}")
        log.info("game %s created", game_id)
        return NewGameResponse(
            game_id=game_id, token_x=slots[Player.X].token, token_o=slots[Player.O].token
        )

    def _forget(self, game: _Game) -> None:
        self._games.pop(game.game_id, None)
        for slot in game.slots.values():
            if slot.token is not None:
                self._tokens.pop(slot.token, None)

    # --------------------------------------------------------------- humans

    async def play_human(self, token: str, connection: InboundConnection) -> None:
        """Seat the human holding ``token`` on ``connection`` (accepted by the server)
        until the connection or the game ends. An unknown or used-up token closes the
        connection with 1008 and raises ``UnknownToken``."""
        entry = self._tokens.get(token)
        if entry is None or entry[0].finished.is_set() or self._closing:
            with contextlib.suppress(Exception):
                await connection.close(CLOSE_POLICY_VIOLATION, "unknown token, or its game is over")
            raise UnknownToken("no running game has a seat for this token")
        game, side = entry
        conn = object()
        loop = asyncio.get_running_loop()

        async def failed(why: str) -> None:
            await game.post(_Detach(side, conn, why, loop.time()))

        outbox = _Outbox(connection, f"human {side.value} {game.game_id}", on_failed=failed)
        await game.post(_Attach(side, conn, outbox))

        async def read() -> None:
            why = "the connection closed"
            try:
                while True:
                    data = await connection.receive_text()
                    await game.post(_Frame(side, conn, data, loop.time()))
            except Exception as exc:
                why = f"the connection ended: {exc!r}" if str(exc) else why
            await game.post(_Detach(side, conn, why, loop.time()))

        reader = loop.create_task(read(), name=f"htttx: read human {side.value} {game.game_id}")
        finished = loop.create_task(game.finished.wait(), name="htttx: game end")
        try:
            await asyncio.wait({reader, finished}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (reader, finished):
                task.cancel()
            await asyncio.gather(reader, finished, return_exceptions=True)
            # The game closes the seat's outbox; make sure, and wait for it.
            outbox.close(CLOSE_NORMAL, "the connection ended")
            await outbox.wait_closed(CLOSE_WAIT)

    # ----------------------------------------------------------- spectators

    async def spectate(self, game_id: str, connection: InboundConnection) -> None:
        """Show a game on ``connection``: ``setup`` with everything so far, a
        ``board_update`` per move, ``end``, close. A finished game: its snapshot, then
        ``end``. Raises ``UnknownGame`` if there is no such game and
        ``TooManySpectators`` if a running game already has ``max_spectators``.
        """
        game = self._games.get(game_id)
        if game is None:
            await self._spectate_record(game_id, connection)
            return
        if len(game.spectators) >= self.max_spectators:
            raise TooManySpectators(
                f"game {game_id} already has {len(game.spectators)} spectators, the most "
                f"this server allows; try again later"
            )
        spectator = _Spectator(self.spectator_queue)
        loop = asyncio.get_running_loop()
        spectator.offer(dump_packet(game.session.spectator_setup(loop.time())).decode())
        if game.session.over or game.finished.is_set():
            if game.end_text is not None:
                spectator.offer(game.end_text)
            spectator.offer(None)
        else:
            game.spectators.add(spectator)  # no await since the setup: nothing is missed

        async def pump() -> None:
            watchdog = SendWatchdog(DEFAULT_SEND_TIMEOUT)
            try:
                while True:
                    text = await spectator.queue.get()
                    if text is None:
                        return
                    await watchdog.send(connection.send_text(text))
            finally:
                watchdog.close()

        async def read() -> None:
            # Spectators have nothing to say; reading notices when one leaves.
            with contextlib.suppress(Exception):
                while True:
                    await connection.receive_text()

        name = f"spectator {game_id}"
        tasks = {
            loop.create_task(pump(), name=f"htttx: write {name}"),
            loop.create_task(read(), name=f"htttx: read {name}"),
            loop.create_task(spectator.dropped.wait(), name=f"htttx: drop {name}"),
        }
        code, reason = CLOSE_NORMAL, "the game is over"
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            wrote = [t for t in done if t.get_name().startswith("htttx: write")]
            if spectator.dropped.is_set():
                code, reason = CLOSE_POLICY_VIOLATION, "too slow: the spectator could not keep up"
            elif not wrote:
                code, reason = CLOSE_NORMAL, "the spectator left"
            elif not wrote[0].cancelled() and isinstance(wrote[0].exception(), TimeoutError):
                code = CLOSE_POLICY_VIOLATION
                reason = f"too slow: an update took {DEFAULT_SEND_TIMEOUT:g} s or more to send"
        finally:
            game.drop(spectator)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_WAIT):
                    await connection.close(code, reason)

    async def _spectate_record(self, game_id: str, connection: InboundConnection) -> None:
        record = await self.store.get_game(game_id)
        if record is None:
            with contextlib.suppress(Exception):
                await connection.close(CLOSE_POLICY_VIOLATION, "no such game")
            raise UnknownGame(f"no game {game_id!r}")
        setup, end = _snapshot(record)
        try:
            async with asyncio.timeout(2 * DEFAULT_SEND_TIMEOUT):
                await connection.send_text(dump_packet(setup).decode())
                if end is not None:
                    await connection.send_text(dump_packet(end).decode())
        except Exception as exc:
            log.debug("spectator of finished game %s: %r", game_id, exc)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CLOSE_WAIT):
                await connection.close(CLOSE_NORMAL, "the game is over")

    # ------------------------------------------------------------- shutdown

    async def shutdown(self) -> None:
        """Take no more games; abort every running game (``end`` to everyone, recorded
        as aborted), close its sockets and wait for its tasks. Games that do not end
        within ``SHUTDOWN_WAIT`` are cancelled (their record is still closed)."""
        self._closing = True
        games = list(self._games.values())
        for game in games:
            game.request_abort("the server is shutting down")
        tasks = [game.task for game in games if game.task is not None]
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=SHUTDOWN_WAIT)
            for task in pending:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def _slot(player: PlayerConfig, endpoint: BotEndpoint | None) -> _Slot:
    if endpoint is None:
        return _Slot(SeatInfo("human", name=player.name))
    name = player.name or endpoint.name
    if endpoint.transport == "websocket":
        info = SeatInfo(
            "bot_ws",
            name=name,
            declares=endpoint.capabilities.bws_v1_alpha,
            config=player.config_packet(),
            url=player.bot_url,
            meta=endpoint.capabilities.meta,
        )
    else:
        info = SeatInfo(
            "bot_stateless",
            name=name,
            declares=endpoint.capabilities.stateless_v1_alpha,
            url=player.bot_url,
            meta=endpoint.capabilities.meta,
        )
    return _Slot(info, endpoint=endpoint)


def _status(result: GameResult | None) -> GameStatus | None:
    if result is None:
        return None
    if result.winner is None:
        return GameStatus.DRAW
    return GameStatus.X_WINS if result.winner is Player.X else GameStatus.O_WINS


def _snapshot(record: GameRecord) -> tuple[SetupPacket, EndPacket | None]:
    """A stored game as a spectator sees it: ``setup`` with everything, and ``end``."""
    cells = list(record.setup)
    for move in record.moves:
        cells.extend(Cell(q=c.q, r=c.r, p=move.side) for c in move.pieces)
    board = Board(cells=cells)
    result = record.result
    setup = SetupPacket(
        board=board,
        game_id=record.game_id,
        moves=list(record.moves),
        player_x=record.player_x,
        player_o=record.player_o,
        match=record.match,
        to_move=None,
        status=_status(result),
    )
    if result is None:
        return setup, None
    end = EndPacket(
        winner=result.winner, reason=result.reason, detail=result.end_detail, board=board
    )
    return setup, end

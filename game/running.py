"""One running game: the task that alone touches its ``GameSession`` (``RunningGame``).

* Inputs arrive on one bounded inbox, in order: seat frames and drops (with the time
  they were read), seats attaching, stateless answers, an abort. Producers await room,
  so a flooding peer is slowed at its own socket. The task waits on the inbox until
  ``session.next_deadline`` and then calls ``session.timer``: one alarm per game, set
  again only when the deadline comes earlier than the alarm (between bots that answer
  at once, the next heartbeat is the deadline for seconds: no timer is made or
  cancelled per move). An alarm that rings early only wakes the task to look again.
* Outputs never make the game task wait on a peer (``game.outboxes``). A ``Broadcast``
  goes once into the spectators' log (``game.fanout``): each variant (full, compact)
  encoded and framed at most once, written to the spectators in coalesced writes. The
  spectators' side of a game (its setup for a newcomer, the cluster's relays, the
  analysis of a watched game) is ``game.running_spectators.WatchedGame``, its base.
* The record is written in order by the game's ``Recorder`` (``game.recorder``). The
  end of a game is committed before ``end`` goes to anyone (a bounded wait,
  ``END_COMMIT_WAIT``), so whoever gets ``end`` can read the finished record at once;
  then the manager's end hooks run (``GameManager.add_end_hook``: the ratings), also
  before ``end`` goes out.
* The record is the truth. If the store refuses the end because the game is over there
  already (on a cluster, another worker recorded it aborted, having taken this one for
  dead), the game ends as the stored record says (``GameSession.recorded_over``): that
  ``end`` goes to the seats and spectators instead, the session's result (``end_of``)
  is the stored one, and the end hooks get the stored record (an aborted game is not
  rated). A refused move ends a running game the same way, at once.
* WebSocket bots are dialed as the game is created, while its record is written
  (retried until the no-show limit, so a bot that cannot be reached forfeits with
  ``no_show`` as the session decides; each failed dial is posted to the session, whose
  record of the no-show says how the last one failed, and a handshake refused with HTTP
  4xx is not retried: the session ends the seat at once; ``abandon`` hangs up if the
  game never starts); a
  stateless bot's turn is a task posting to it, cancelled when the game ends, which
  tries again after a failure that may pass (``game.stateless_retry``) for as long as
  the turn's time allows and at most the no-show limit in a row; each such failure is
  posted to the session, whose record of a flag during the turn says the bot was not
  reached.
* No exception escapes a game task: an unexpected one is logged and the game aborted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from game.mailbox import Mailbox
from game.outboxes import CLOSE_WAIT, Outbox
from game.recorder import Recorder, WriteMove, WriteResult
from game.running_events import (
    Abort,
    Answer,
    Attach,
    Detach,
    DialFailed,
    Frame,
    GameEvent,
    RecordedOver,
    Slot,
    TryFailed,
)
from game.running_spectators import WatchedGame
from game.seats import BotSocketSeat, SeatConnectError
from game.session import (
    Action,
    Broadcast,
    CloseSeat,
    DialFailure,
    GameOver,
    GameSession,
    RecordMove,
    RequestStatelessTurn,
    SendTo,
)
from game.stateless_retry import StatelessRetry
from game.stateless_seat import StatelessConnectionFailed, StatelessHttpError, StatelessSeat
from models import (
    CLOSE_GOING_AWAY,
    CLOSE_POLICY_VIOLATION,
    EndPacket,
    GameRecord,
    MoveRequestPacket,
    Player,
    StatelessMoveRequest,
    StatelessMoveResponse,
    dump_packet,
)

if TYPE_CHECKING:
    from game.manager import GameManager

__all__ = ["END_COMMIT_WAIT", "RunningGame", "carries_end"]

log = logging.getLogger("game.manager")

INBOX_SIZE = 64
#: How long `end` waits for the game's record to be committed before it goes out anyway.
END_COMMIT_WAIT = 10.0


class _Alarm:
    """In the inbox: the game's alarm rang (see ``RunningGame._play``)."""


_ALARM = _Alarm()


class RunningGame(WatchedGame):
    """One running game: the session, its seats, spectators, recorder and tasks."""

    def __init__(
        self,
        manager: GameManager,
        session: GameSession,
        slots: dict[Player, Slot],
    ) -> None:
        super().__init__(manager, session)
        self.slots = slots
        #: Set once the game is over and everything it owns is closed.
        self.finished = asyncio.Event()
        #: Set once the game is over and its final record committed (and the end hooks
        #: run): when `end` goes out, before the connections close; at the latest with
        #: ``finished`` (a record the store did not confirm in time, or no end at all).
        self.recorded = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        #: Whether its end hooks have been run (or are running): a game tracked by the
        #: ratings after that is settled from the store (``GameManager.awaits_end_hooks``).
        self.hooks_started = False
        self._inbox: Mailbox[GameEvent | _Alarm] = Mailbox(INBOX_SIZE)
        self._alarm: asyncio.TimerHandle | None = None  # rings at _alarm_at
        self._alarm_at = 0.0
        self._local: deque[GameEvent] = deque()  # inputs the game task makes for itself
        self._recorder: Recorder | None = None  # started by run()
        self._helpers: set[asyncio.Task[Any]] = set()  # connects, turns, abort requests
        self._outboxes: set[Outbox] = set()  # the bots' (a human's belongs to play_human)
        self._turn: asyncio.Task[None] | None = None
        self._turns = 0
        # A stateless bot that fails for as long as a websocket bot may take to come
        # (the no-show limit) is not asked again.
        self._retry = StatelessRetry(give_up_after=session.limits.no_show_s)

    def record(self) -> GameRecord:
        """The game as played so far: every move broadcast, the result once over."""
        return self.session.record()

    # -------------------------------------------------------------- plumbing

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """A helper task this game owns: cancelled and awaited when the game ends."""
        task = self._loop.create_task(coro, name=f"htttx: {name} {self.game_id}")
        self._helpers.add(task)
        task.add_done_callback(self._helpers.discard)
        return task

    async def post(self, event: GameEvent) -> None:
        """An input for the game task (waits for room: backpressure on the producer)."""
        if not self._ending:
            await self._inbox.put(event)

    def request_abort(self, reason: str) -> None:
        if not self._ending:
            self.spawn(self.post(Abort(reason)), "abort")

    def _recorded_over(self, stored: GameRecord) -> None:
        """The recorder's word: the store has the game over already, as ``stored``."""
        if not self._ending and stored.result is not None:
            event = RecordedOver(stored.result, len(stored.moves))
            self.spawn(self.post(event), "recorded over")

    # ------------------------------------------------------------ the task

    async def run(self) -> None:
        """The game task; returns when the game is over and everything is closed. Its
        bots were dialled already (``dial``)."""
        try:
            self._recorder = Recorder(
                self.manager.store,
                self.game_id,
                commit_interval=self.manager.commit_interval,
                on_failed=self.request_abort,
                on_over=self._recorded_over,
            )
            await self._play()
        except Exception:  # a bug here costs one game, never the server
            log.exception("game %s: the game task failed; aborting the game", self.game_id)
            with contextlib.suppress(Exception):
                await self._apply(self.session.abort("internal error", self._loop.time()))
        finally:
            await self._end()

    async def _play(self) -> None:
        session = self.session
        loop = self._loop
        while not session.over:
            if self._local:
                event = self._local.popleft()
            else:
                deadline = session.next_deadline
                if deadline is not None and deadline <= loop.time():
                    await self._apply(session.timer(loop.time()))
                    continue
                if deadline is not None:
                    self._set_alarm(deadline)
                item = await self._inbox.get()
                if item is _ALARM:
                    continue  # the top of the loop sees whether the deadline has come
                assert not isinstance(item, _Alarm)
                event = item
            await self._apply(self._handle(event))

    def _set_alarm(self, deadline: float) -> None:
        """Make sure the alarm rings by ``deadline``: an alarm set for that time or
        earlier stays as it is (ringing early costs one look at the deadline)."""
        if self._alarm is not None:
            if self._alarm_at <= deadline:
                return
            self._alarm.cancel()
        self._alarm = self._loop.call_at(deadline, self._ring)
        self._alarm_at = deadline

    def _ring(self) -> None:
        self._alarm = None
        # A full inbox has inputs to take first, and the deadline is looked at before
        # each of them: the alarm is not needed there.
        with contextlib.suppress(asyncio.QueueFull):
            self._inbox.put_nowait(_ALARM)

    def _handle(self, event: GameEvent) -> list[Action]:
        session = self.session
        match event:
            case Frame(side, conn, data, at):
                if self.slots[side].conn is not conn:
                    return []  # from a connection the seat has replaced or closed
                return session.receive(side, data, at)
            case Attach(side, conn, outbox):
                slot = self.slots[side]
                actions: list[Action] = []
                if slot.conn is not None and slot.outbox is not None:
                    why = "replaced by a new connection to this seat"
                    slot.outbox.close(CLOSE_POLICY_VIOLATION, why)
                    actions += session.seat_disconnected(side, self._loop.time(), why)
                slot.conn, slot.outbox = conn, outbox
                return actions + session.seat_connected(side, self._loop.time())
            case Detach(side, conn, why, at):
                slot = self.slots[side]
                if slot.conn is not conn:
                    return []
                log.info("game %s: %s disconnected: %s", self.game_id, side.value, why)
                if slot.outbox is not None:
                    slot.outbox.close(CLOSE_GOING_AWAY, why)
                slot.conn = slot.outbox = None
                return session.seat_disconnected(side, at, why)
            case DialFailed(side, failure, at):
                return session.dial_failed(side, failure, at)
            case Answer(side, turn, answer, at):
                if turn != self._turns:
                    return []  # a turn the session has moved past
                self._turn = None
                return session.stateless_answer(side, answer, at)
            case TryFailed(side, turn, error, at):
                if turn != self._turns:
                    return []
                return session.stateless_try_failed(side, error, at)
            case Abort(reason):
                return session.abort(reason, self._loop.time())
            case RecordedOver(result, moves):
                return session.recorded_over(result, self._loop.time(), moves=moves)

    async def _apply(self, actions: list[Action]) -> None:
        last = len(actions) - 1
        # The record of a game that ends here is committed before anyone gets `end`.
        game_over: GameOver | None = None
        updates = 0
        for action in actions:  # one pass, no generator: this runs for every move
            if isinstance(action, Broadcast):
                updates += not action.ends
            elif isinstance(action, GameOver) and game_over is None:
                game_over = action
        self._unsent_updates = updates
        try:
            for index, action in enumerate(actions):
                if game_over is not None and carries_end(action):
                    instead = await self._commit_end(game_over)
                    if instead is not None:
                        # The store has the game over otherwise: its end goes out,
                        # in place of the rest of this one (the same seats and closes).
                        self._do_end(instead)
                        break
                elif action is game_over and self._recorded_result:
                    continue  # already recorded by _commit_end
                write = self._do(action)
                if (
                    index < last
                    and isinstance(action, SendTo)
                    and isinstance(action.packet, MoveRequestPacket)
                    and self._pending(action.side)
                ):
                    # The game waits for the answer to this request, and the seat's outbox
                    # could not write it at once: let it put it on the wire now, before
                    # the spectators' update is encoded.
                    await asyncio.sleep(0)
                if write is not None:
                    # The only wait of the game task besides its inbox: room in the
                    # recorder's queue, so a store far behind slows the game, loses nothing.
                    await self._record(write)
        finally:  # whatever happened, nothing is on its way any more
            self._unsent_updates = 0
        self._feed_analysis()

    def _pending(self, side: Player) -> bool:
        outbox = self.slots[side].outbox
        return outbox is not None and outbox.pending

    async def _commit_end(self, game_over: GameOver) -> list[Action] | None:
        """Record ``game_over`` after the moves queued before it, and wait (a bounded
        wait) until the recorder has committed them all: whoever gets `end` can read the
        final record at once. A store that fails or lags only delays the `end`; the game
        ends all the same, recorded as well as the store allows (the recorder logs).

        If the store refused the end because the game is over there already (the
        recorder's ``stored``), the game ends as the record says: the actions of that
        end are returned, to go out instead of the rest of this one."""
        if self._recorded_result:
            return None
        write = self._do(game_over)
        assert write is not None
        await self._record(write)
        recorder = self._recorder
        committed = recorder is not None and await recorder.wait(END_COMMIT_WAIT)
        if recorder is not None and not committed:
            log.warning(
                "game %s: the record was not committed within %g s; sending the end anyway",
                self.game_id,
                END_COMMIT_WAIT,
            )
        stored = None if recorder is None else recorder.stored
        instead = None
        if stored is not None and stored.result is not None:
            instead = self.session.recorded_over(
                stored.result, self._loop.time(), moves=len(stored.moves)
            )
            if instead:
                log.warning(
                    "game %s: ended here (%s), but the record says %s: it ends so",
                    self.game_id,
                    game_over.detail,
                    stored.result.end_detail or stored.result.reason.value,
                )
        self.hooks_started = True
        if self.manager.end_hooks:  # e.g. the ratings (game.rating_book)
            # From the committed record: one the store had over already, if so.
            record = self.record if stored is None else lambda: stored
            await self.manager.end_hooks.run(self.game_id, record)
        if committed:  # else `recorded` comes with `finished`, whatever the store did
            self.recorded.set()
        return instead or None

    def _do_end(self, actions: list[Action]) -> None:
        """Carry out the actions of an end the store already has (nothing to write)."""
        for action in actions:
            if isinstance(action, GameOver):
                log.info("game %s over, as recorded: %s", self.game_id, action.detail)
            else:
                self._do(action)

    @property
    def _recorded_result(self) -> bool:
        return self._recorder is not None and self._recorder.result_queued

    async def _record(self, write: WriteMove | WriteResult) -> None:
        # The only wait of the game task besides its inbox: room in the recorder's
        # queue, so a store far behind slows the game, loses nothing.
        if self._recorder is not None:
            await self._recorder.put(write)

    def _do(self, action: Action) -> WriteMove | WriteResult | None:
        """Carry out one action at once; what to write to the store is returned."""
        match action:
            case SendTo(side, packet):
                slot = self.slots[side]
                if slot.outbox is not None and not slot.outbox.send(dump_packet(packet).decode()):
                    # Cannot take packets: a dropped seat, to the session.
                    why = "does not read its packets"
                    self._local.append(Detach(side, slot.conn, why, self._loop.time()))
            case Broadcast():
                is_end = action.ends
                if not is_end:
                    self.updates += 1
                    if self._unsent_updates:
                        self._unsent_updates -= 1
                # An unwatched move is not even built (on a cluster, nor published:
                # another worker's spectators watch from their setup's fetch on).
                if self.spectators or is_end or self.watched_remotely:
                    self._broadcast(action, is_end)
            case RequestStatelessTurn(side, request, time_limit):
                self._post_turn(side, request, time_limit)
            case CloseSeat(side, code, reason):
                slot = self.slots[side]
                if slot.outbox is not None:
                    slot.outbox.close(code, reason)
                slot.conn = slot.outbox = None
            case RecordMove(index, move):
                return WriteMove(index, move, move.latency_ms)
            case GameOver(result, _record, detail):
                log.info("game %s over: %s", self.game_id, detail)
                return WriteResult(result)
        return None

    # ------------------------------------------------------------- bot seats

    def dial(self) -> None:
        """Start dialling the websocket bots: ``GameManager`` calls it once, before it
        writes the game's record, so the connections open meanwhile. A bot that
        connects before the game task runs waits in its inbox."""
        for side, slot in self.slots.items():
            if slot.info.kind == "bot_ws":
                self.spawn(self._connect_bot(side), f"connect {side.value}")

    async def abandon(self) -> None:
        """The game will not be played (its record could not be written, or the server
        began to stop first): stop dialling and hang up on the bots already connected.
        They were told nothing: the session never ran, so no `config` or `setup` went
        out."""
        self._ending = True
        await self._hang_up("the game could not be started")
        self._release()

    async def _connect_bot(self, side: Player) -> None:
        """Dial the bot until it answers or the no-show limit has passed (then the
        session records ``no_show``). Each failed dial goes to the session as a
        ``DialFailure`` (the no-show's reason); after a final one (a handshake refused
        with HTTP 4xx) the bot is not dialled again, and the session decides."""
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
                on_frame=lambda data: self.post(Frame(side, conn, data, self._loop.time())),
                on_closed=lambda why: self.post(Detach(side, conn, why, self._loop.time())),
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
                # Its capabilities are fetched again for the next game, which then
                # finds out at once (422) if the bot is gone rather than at its dial.
                manager.capabilities.forget(slot.endpoint.url)
                failure = DialFailure(exc.reason, exc.status)
                await self.post(DialFailed(side, failure, self._loop.time()))
                if failure.final or self._loop.time() + delay >= give_up:
                    log.info("game %s: %s never connected: %s", self.game_id, side.value, exc)
                    return
                log.debug("game %s: %s: %s; retrying", self.game_id, side.value, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
        slot.socket = seat  # from here on, _end closes it whatever happens

        async def failed(why: str) -> None:
            await self.post(Detach(side, conn, why, self._loop.time()))

        outbox = Outbox(seat, f"{side.value} {self.game_id}", on_failed=failed)
        self._outboxes.add(outbox)  # closed by _end even if the attach never happens
        # Frames are posted after the attach, so the session hears of the seat first.
        await self.post(Attach(side, conn, outbox))
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

        async def failed_try(error: Exception) -> None:
            await self.post(TryFailed(side, turn, error, self._loop.time()))

        seat = StatelessSeat(
            slot.endpoint.turn_url,
            self.manager.http,
            retry=self._retry,
            on_failed_try=failed_try,
        )
        url = slot.endpoint.url

        async def play() -> None:
            answer: StatelessMoveResponse | BaseException
            try:
                answer = await seat.turn(request, time_limit)
            except Exception as exc:  # the session maps it to a cause
                if isinstance(exc, StatelessConnectionFailed | StatelessHttpError):
                    # Not reached where its capabilities say, as a socket that cannot be
                    # dialled: the next game fetches them again and finds out at once
                    # (422) if the bot is gone, or where it has moved.
                    self.manager.capabilities.forget(url)
                answer = exc
            await self.post(Answer(side, turn, answer, self._loop.time()))

        self._turn = self.spawn(play(), f"turn {side.value}")

    # ------------------------------------------------------------------ end

    async def _end(self) -> None:
        """Close everything the game owns and wait for it; runs once, at the end."""
        self._ending = True
        if self._alarm is not None:
            self._alarm.cancel()
            self._alarm = None
        try:
            await self._close_all()
        finally:  # even if cancelled: nobody may wait for this game any longer
            if self._recorder is not None:
                self._recorder.cancel()
            self._release()
            self.manager.forget(self)
            self.recorded.set()
            self.finished.set()

    def _release(self) -> None:
        """Let go of what calls back into this game, once it is over. The recorder's
        ``on_failed``, the fanout's ``on_drop`` and the seats' and outboxes' callbacks
        hold this object, which holds them: without this, a finished game's state (its
        session, board and record, thousands of objects in a long game) is freed only by
        a middle collection of the cyclic GC, which walks it all first; with it,
        reference counting frees it the moment the last reader lets go."""
        self._recorder = None
        self._outboxes.clear()
        for slot in self.slots.values():
            slot.socket = None
        self.fanout.release()

    async def _close_all(self) -> None:
        if self.analysis is not None:
            # First: no analysis may reach a spectator after its `end`.
            await self.analysis.close()
        if not self.session.over:
            # Stopped without an end (the task was cancelled): end it now, without
            # waiting for anything, so the seats and spectators still get `end`.
            for action in self.session.abort("the game was stopped", self._loop.time()):
                write = self._do(action)
                if write is not None and self._recorder is not None:
                    self._recorder.put_nowait(write)
        await self._hang_up("the game is over")
        self.fanout.close()  # what is pending goes out, then each spectator closes
        if self._recorder is not None:
            await self._recorder.close()

    async def _hang_up(self, why: str) -> None:
        """Stop the helper tasks (dials, stateless turns) and close every seat's
        connection, saying ``why``."""
        helpers = list(self._helpers)
        for task in helpers:
            task.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        outboxes = {slot.outbox for slot in self.slots.values() if slot.outbox is not None}
        outboxes |= self._outboxes
        for outbox in outboxes:
            outbox.close(CLOSE_GOING_AWAY, why)
        await asyncio.gather(*(outbox.wait_closed(CLOSE_WAIT) for outbox in outboxes))
        for slot in self.slots.values():
            slot.conn = slot.outbox = None
            if slot.socket is not None:
                await slot.socket.close(CLOSE_GOING_AWAY, why)


def carries_end(action: Action) -> bool:
    """Whether ``action`` sends the `end` packet to a seat or to the spectators."""
    if isinstance(action, Broadcast):
        return action.ends
    return isinstance(action, SendTo) and isinstance(action.packet, EndPacket)

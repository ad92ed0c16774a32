"""The server side of one game, as a pure state machine (no I/O, no clock of its own).

``GameSession`` referees one game between two seats. It takes what happens — a seat
connects or drops, a frame arrives, a stateless bot answered, a timer fired, a ping
measured the round trip, the server shuts down — and returns ``Action`` values for the
I/O adapters (``game.seats``, ``game.server``) to carry out: send a packet to a seat,
broadcast one to the spectators, post a stateless turn, close a seat, write a move to
the store, report the end of the game. Time comes in as ``now`` arguments (monotonic
seconds, ``time.monotonic()`` or ``loop.time()``), so tests drive it without sockets or
sleeps. It is the mirror image of ``bot.session.BotSession``.

Protocol: ``../shared/spec/bws-v1-alpha.yaml`` and ``../shared/protocol.md``.

>>> from models import Match
>>> bots = {Player.X: SeatInfo("bot_ws"), Player.O: SeatInfo("bot_ws")}
>>> session = GameSession("g1", Match(), bots, started_at=0.0)
>>> session.seat_connected(Player.X, now=0.1)
[]
>>> actions = session.seat_connected(Player.O, now=0.2)
>>> [(a.side.value, a.packet.type) for a in actions if isinstance(a, SendTo)]
[('x', 'setup'), ('o', 'setup'), ('o', 'move_request')]
>>> actions[-1].packet.type, actions[-1].packet.status.value  # to the spectators
('setup', 'in_progress')
>>> answer = '{"type":"move_response","move":{"pieces":[{"q":1,"r":0},{"q":2,"r":0}]}}'
>>> [type(a).__name__ for a in session.receive(Player.O, answer, now=1.2)]
['SendTo', 'Broadcast', 'RecordMove']
>>> [type(a).__name__ for a in session.receive(Player.O, answer, now=1.3)]
['SendTo', 'SendTo', 'SendTo', 'Broadcast', 'CloseSeat', 'CloseSeat', 'GameOver']
>>> session.result
GameResult(winner=<Player.X: 'x'>, reason=<ResultReason.FORFEIT: 'forfeit'>, \
cause=<EndCause.PROTOCOL_ERROR: 'protocol_error'>, \
detail='o forfeits: a second move_response to one move_request')

The interface
-------------

* ``GameSession(game_id, match, seats, *, limits=SessionLimits(), started_at,
  started_wall=None, opening=(), tags=None)``. ``seats`` maps each ``Player`` to a
  ``SeatInfo``: ``kind`` (``"bot_ws"``, ``"bot_stateless"`` or ``"human"``), ``name``,
  ``declares`` (the bot's ``BwsV1Alpha`` or ``StatelessV1Alpha``: optional features are
  used only when declared there), ``config`` (the ``config`` packet for a websocket bot),
  ``send_board`` (its ``move_request`` carries ``board``; off by default) and ``url``
  (for the record). ``started_at`` is the monotonic time the game was
  created (the no-show limit counts from it); ``started_wall`` is the wall-clock time
  written to the record. ``opening`` (``Move`` values) is played before the seats take
  over (see *Start.*); ``tags`` go into the record's ``tags``. The constructor raises
  ``game.opening_rules.InvalidOpeningError`` for an opening the rules refuse and
  ``OpeningSeatError`` for a seat that cannot be told one (``NewGameRequest`` and
  ``GameManager`` refuse both before a game exists).
* Inputs, each returning ``list[Action]``: ``seat_connected(side, now)``,
  ``seat_disconnected(side, now)``, ``dial_failed(side, failure, now)`` (a dial of a
  websocket bot failed: a ``DialFailure``), ``receive(side, data, now)`` (one raw frame),
  ``stateless_answer(side, response_or_error, now)``, ``stateless_try_failed(side,
  error, now)`` (a try of the turn failed and is made again), ``timer(now)``,
  ``rtt_measured(side, rtt_s)``, ``abort(reason, now)``.
* ``next_deadline``: when the adapter must call ``timer`` next (one timer per game), or
  None. Calling ``timer`` early or late is harmless: it does what is due at ``now``.
* ``spectator_setup(now)``: the ``setup`` for a spectator joining now.
* Read-only state: ``status``, ``awaiting`` (the side whose answer is awaited),
  ``board``, ``moves``, ``result``, ``record()``, ``over``.

Actions (frozen dataclasses): ``SendTo(side, packet)``, ``Broadcast(packet)`` (to every
spectator; one packet object per update so the adapter encodes it once; a move's
``board_update`` is built when ``packet`` is first read, so an adapter with nobody to
show it to never builds it; ``ends`` marks the `end`),
``RequestStatelessTurn(side, request, time_limit)``, ``CloseSeat(side, code, reason)``,
``RecordMove(index, move)``, ``GameOver(result, record, detail)``.

No method raises: a bug inside the session ends the game as ``aborted`` (close code
1011) instead of escaping into the adapter's task.

The parts, one concept each: ``game.session_view`` (the state and every read of it,
the base class), ``game.session_ending`` (forfeits, the end, the guard of every input),
``game.session_humans`` (what only people do: the reconnect window, ``opponent_status``,
``resign``), ``game.session_stateless`` (what only stateless bots do: a turn's request,
its answer or failure), ``game.session_board`` (the stones), ``game.session_packets``
(the packets read and built), ``game.session_end`` (the shape of an end),
``game.session_timing`` (clocks, stall limit, heartbeats), ``game.session_config`` and
``game.session_state`` (what a session is given and tracks per seat). This module
holds the inputs and the flow of a game; every name it exports stays importable here.

How the open points are settled
-------------------------------

*Start.* Stateless seats count as present from the start. The game starts when the
last websocket or human seat connects: each websocket seat gets ``config`` (a bot that
declares ``config`` and has one), then ``setup`` (the standard board; for a game from an
opening see *Openings.*); then O (or the side an opening leaves to move) gets its
``move_request``, and the spectators a fresh ``setup`` (status ``in_progress``, the
clocks running: until then a spectator's setup said ``waiting``). A game with no
websocket seat starts at the first ``timer`` call (``next_deadline`` is ``started_at``
until then).

*Openings.* A game may start from an ``opening``: moves already played after X's stone,
O's first. They are on the board from the start and are the record's first moves (no
clock, thinking time or evaluation: nobody played them), and the record's tag
``opening_moves`` (``models.OPENING_MOVES_TAG``) says how many there are. The side the
opening leaves to move gets the first ``move_request``; clocks and the stall limit
start with it. The turn limit counts every move of the record, the opening's included
(an opening must leave the players a move). Each seat learns the opening as the
protocol lets it (``SeatInfo.learns_opening_by``): a human, and a websocket bot that
declares ``free_setup``, get ``setup`` with every stone, then ``previous`` holds only
what was played since; a bot that declares ``move_skips`` (not ``free_setup``) gets the
standard ``setup`` and its first ``previous`` holds every opening move, grouped by
move, then the moves since; a stateless bot reads its request's full board. A
websocket bot that declares neither cannot be told (``OpeningSeatError``).

*Requests.* ``previous`` holds the stones placed since the seat's last ``move_request``
(or ``setup``), grouped by move: ``[]`` for O's first request, then ``[own last move,
opponent's move]`` (after an opening, see *Openings.*). ``board`` (our extension: the
full board, an opening's stones included) goes only to a seat whose
``SeatInfo.send_board`` is set; the others get ``previous`` alone, as the spec says, so
a request costs O(new stones), not O(stones). ``move_time_limit`` (the seconds left
until the mover's deadline, live: its clock's flag or the stall limit, whichever comes
first, so in a game without a clock the stall limit) goes only to bots that declare
``move_time_limit``; a deadline that will be enforced is always told. A seat that is
disconnected when its request is due gets it on reconnection. A stateless bot gets a
``StatelessMoveRequest`` (with ``time_limit``, the same seconds, only when declared);
the action's ``time_limit`` is the seconds until the flag, for the adapter's HTTP
timeout.

*Answers.* Stones are applied one at a time with ``game.rules``. A first stone that
wins ends the game and the second is ignored; a bot may also answer with that stone
alone (websocket or stateless), recorded as a 1-stone move (notation ``[/]``). A bot's
lone stone that does not win is a protocol error. An illegal stone forfeits the move's
whole answer (a legal first stone of the same answer is taken back: nobody saw it).
Evaluation and considerations go into the ``RecordedMove`` and the ``board_update``;
``thinking_ms`` is the clock's charge, ``clock_ms`` the mover's time left after the move
(absent without a clock). ``RecordMove.index`` is 0-based.

*Humans' stone-by-stone mode.* A 1-piece answer from a human is placed at once and
broadcast (``board_update`` with that stone as ``move`` and the same side to move); the
seat then gets a second ``move_request`` whose ``previous`` holds that stone. The clock
keeps running. Each ``board_update``'s ``move`` holds the stones new since the previous
update, so a split move's second update carries only the second stone; the record holds
the whole move. If the game ends between its two stones (a resignation, a flag, an
illegal second stone), the first stays where everyone saw it: on the ``end`` board and
in the record, as its last move, of that stone alone (notation ``[/]``). A 2-piece
answer to the request for the second stone is a protocol error.

*Clocks and the stall limit.* ``game.session_timing.AnswerTimer``: each side's clock
(the ``match``'s, or its ``SeatInfo.time_control``) flags with ``timeout``; whatever
the clock, a seat that has owed an answer for ``limits.stall_s`` seconds (or its own
stricter ``time_control.stall_limit``) forfeits with ``stall``. The seat's last measured round trip
(``rtt_measured``, clamped to ``limits.max_rtt_s`` so slow pongs cannot buy time) is
the grace. An answer that arrives after its deadline forfeits, even if ``timer`` has
not been called yet.

*Heartbeats.* Every ``match.heartbeat`` ms from ``started_at``, on one grid for the
whole game, to every connected websocket or human seat; ``waiting`` is true exactly for
the seat whose answer is awaited. A late ``timer`` sends one heartbeat, not a burst.

*Failures.* Each cause has an error class (``SeatTimeoutError`` ... ``SeatNoShowError``),
raised inside and turned into a forfeit: the other side wins, the cause is recorded.
``nope`` (with the reason) goes to a seat that sent something malformed, unsolicited or
out of order (``protocol_error``), played an illegal stone (``illegal_move``) or stayed
silent (``timeout``, ``stall``); not to one that is gone (``disconnect``) or never came
(``no_show``). A websocket bot that drops forfeits at once; a human gets
``limits.reconnect_s`` to come back with the same token (the clock keeps running), then
forfeits with ``disconnect``. A seat that has not connected ``limits.no_show_s`` after
``started_at`` forfeits with ``no_show``; if neither came, the game is a draw with cause
``no_show`` (a forfeit needs a winner). The adapter reports each failed dial of a
websocket bot (``dial_failed``): the last one's reason goes into the no-show's detail
(``"o did not connect within 30 s (the last try: the bot's socket answered the
handshake with HTTP 503)"``). A final one (``DialFailure.final``: the handshake refused
with an HTTP 4xx other than 408, 425 or 429) means the bot will not come: once every
seat still missing is such a seat, the no-show is decided at once, without waiting for
the limit (``"o could not connect: the bot's socket answered the handshake with HTTP
404"``); until then, a seat that may still come is waited for, so a game neither could
have played stays a draw. Frames larger than ``limits.max_frame_bytes``
are protocol errors. Frames from a stateless seat, and stateless answers nobody waits
for (a late answer after a forfeit, say), are ignored.

*End.* Every result with a cause keeps the reason in words as ``GameResult.detail``
(``"o forfeits: <the nope's reason>"``, ``"o dropped (<how>) and did not reconnect
within 60 s"``, the abort's reason...; clipped, see ``models.MAX_RESULT_DETAIL_CHARS``),
which is also ``GameOver.detail`` for the log. ``end`` (``winner``, ``reason``,
``detail`` = ``"<cause>: <reason in words>"``, ``board``) goes to every connected
websocket seat (after the ``nope`` for a violator) and to spectators, then ``CloseSeat``
for each (1000; 1001 when the server aborts; 1011 after an internal error), then
``GameOver``. ``seat_disconnected``'s optional ``why`` (how the connection ended) goes
into the reason. A line is ``win``; ``turn_limit`` is a ``draw`` with cause
``turn_limit``; ``abort`` is a ``draw`` with cause ``aborted``. A seat that connects
after the end gets ``end`` and is closed. The adapter cancels a stateless turn still in
flight when it sees ``GameOver``. With ``adjudication`` (a ``GameSession`` keyword,
off by default), ``game.adjudication`` may end the game after a recorded move on the
bots' evaluations: a ``win`` with cause ``adjudication``.

*Stateless errors and failed tries.* See ``game.session_stateless``.

*Time.* ``now`` never goes backwards inside the session: an earlier or non-finite
``now`` is read as the latest one seen.
"""

from __future__ import annotations

import math

from game.seat_errors import (
    DialFailure,
    SeatDisconnectError,
    SeatError,
    SeatIllegalMoveError,
    SeatNoShowError,
    SeatProtocolError,
    SeatStallError,
    SeatTimeoutError,
)
from game.session_actions import (
    Action,
    Broadcast,
    CloseSeat,
    GameOver,
    RecordMove,
    RequestStatelessTurn,
    SendTo,
)
from game.session_config import (
    SEND_BOARD_POLICIES,
    OpeningSeatError,
    SeatInfo,
    SeatKind,
    SendBoardPolicy,
    SessionLimits,
    SessionLimitsError,
    resolve_send_board,
)
from game.session_end import (
    aborted,
    result_of_outcome,
    status_of,
)
from game.session_packets import (
    board_update,
    config_packet,
    move_request,
    read_frame,
)
from game.session_state import PendingRequest, SeatState
from game.session_stateless import StatelessSeats
from models import (
    CLOSE_GOING_AWAY,
    CLOSE_INTERNAL_ERROR,
    CLOSE_NORMAL,
    Board,
    BoardUpdatePacket,
    Coord,
    EvalResponsePacket,
    GameResult,
    GameStatus,
    HeartbeatPacket,
    HumanMoveResponsePacket,
    MoveOption,
    MoveResponsePacket,
    Player,
    PositionEvaluation,
    RecordedMove,
    ResignPacket,
    SetupPacket,
    StatelessMoveResponse,
)

__all__ = [
    "CLOSE_GOING_AWAY",
    "CLOSE_INTERNAL_ERROR",
    "CLOSE_NORMAL",
    "SEND_BOARD_POLICIES",
    "Action",
    "Broadcast",
    "CloseSeat",
    "DialFailure",
    "GameOver",
    "GameSession",
    "OpeningSeatError",
    "RecordMove",
    "RequestStatelessTurn",
    "SeatDisconnectError",
    "SeatError",
    "SeatIllegalMoveError",
    "SeatInfo",
    "SeatKind",
    "SeatNoShowError",
    "SeatProtocolError",
    "SeatStallError",
    "SeatTimeoutError",
    "SendBoardPolicy",
    "SendTo",
    "SessionLimits",
    "SessionLimitsError",
    "resolve_send_board",
]


class GameSession(StatelessSeats):
    """One game between two seats, refereed without I/O (its state and reads are
    ``SessionView``'s, its ends ``SessionEnding``'s, what only people do
    ``HumanSeats``', what only stateless bots do ``StatelessSeats``')."""

    # ------------------------------------------------------------------ inputs

    def seat_connected(self, side: Player, now: float) -> list[Action]:
        """The seat of ``side`` connected (a bot's socket opened; a human's token came)."""
        if self._end is not None and self._seats[side].info.speaks_websocket:
            return [SendTo(side, self._end), CloseSeat(side, CLOSE_NORMAL, "the game is over")]
        return self._guarded(now, lambda now: self._on_connected(side, now))

    def seat_disconnected(self, side: Player, now: float, why: str | None = None) -> list[Action]:
        """The seat's socket closed or failed; ``why`` says how, for the record."""
        return self._guarded(now, lambda now: self._on_disconnected(side, now, why))

    def dial_failed(self, side: Player, failure: DialFailure, now: float) -> list[Action]:
        """A dial of the websocket bot of ``side`` failed, as ``failure`` says. Kept for
        the record of a no-show; a failure that is final (``DialFailure.final``: the
        bot's server refused the handshake for good) is the seat's no-show at once."""
        return self._guarded(now, lambda now: self._on_dial_failed(side, failure, now))

    def receive(self, side: Player, data: str | bytes, now: float) -> list[Action]:
        """One frame from the seat of ``side``."""
        return self._guarded(now, lambda now: self._on_frame(side, data, now))

    def stateless_answer(
        self, side: Player, answer: StatelessMoveResponse | BaseException, now: float
    ) -> list[Action]:
        """A stateless bot's answer, or the exception its ``POST`` ended with."""
        return self._guarded(now, lambda now: self._on_stateless_answer(side, answer, now))

    def stateless_try_failed(self, side: Player, error: BaseException, now: float) -> list[Action]:
        """A try of the stateless turn of ``side`` failed with ``error`` and is made
        again: a flag before the answer says its bot was not reached."""
        return self._guarded(now, lambda now: self._on_stateless_try_failed(side, error))

    def timer(self, now: float) -> list[Action]:
        """Do what is due at ``now``: start, no-show, reconnect window, flag, heartbeats."""
        return self._guarded(now, self._on_timer)

    def rtt_measured(self, side: Player, rtt_s: float) -> list[Action]:
        """A ping of the seat's socket took ``rtt_s`` seconds there and back."""
        if math.isfinite(rtt_s):
            self._seats[side].rtt = min(max(rtt_s, 0.0), self.limits.max_rtt_s)
            self._seats[side].rtt_known = True
        return []

    def abort(self, reason: str, now: float) -> list[Action]:
        """End the game without a winner (server shutdown): cause ``aborted``."""
        return self._guarded(
            now, lambda now: self._finish(aborted(), reason, now, CLOSE_GOING_AWAY)
        )

    def recorded_over(
        self, result: GameResult, now: float, *, moves: int | None = None
    ) -> list[Action]:
        """The store has this game over already, with ``result`` and ``moves`` moves (on
        a cluster: another worker recorded it aborted, taking this one for dead), and
        refused what was recorded since. The record is the truth: a running game ends
        now with ``result``; one whose own end is decided but not yet sent ends with
        ``result`` instead (its ``end``, closes and ``GameOver`` come again), the board
        and record of its end those of the stored moves. Nothing if it ended so."""
        return self._guarded_over(now, result, moves)

    # ----------------------------------------------------------------- events

    def _on_connected(self, side: Player, now: float) -> list[Action]:
        seat = self._seats[side]
        if not seat.info.speaks_websocket:
            return []
        seat.connected = True
        seat.ever_connected = True
        seat.reconnect_by = None
        seat.dial_failure = None
        if not self._started:
            if self._everyone_present():
                return self._begin(now)
            return self._no_show(now) if self._nobody_missing_can_come() else []
        # Back after a drop: the current position, then the pending request if it is ours.
        actions: list[Action] = [
            *self._config_for(side),
            SendTo(side, SetupPacket(board=self.board)),
        ]
        seat.told = self._board.stone_count
        if self._request is not None and self._request.side is side:
            actions.extend(self._ask(now))
        return actions + self._human_back(side, now)

    def _on_disconnected(self, side: Player, now: float, why: str | None) -> list[Action]:
        seat = self._seats[side]
        if not seat.connected or not seat.info.speaks_websocket:
            return []
        seat.connected = False
        seat.dropped_because = f" ({why})" if why else ""
        if seat.info.kind == "human" and self.limits.reconnect_s > 0:
            return self._human_dropped(side, now)
        raise SeatDisconnectError(side, f"{side.value}'s connection dropped{seat.dropped_because}")

    def _on_dial_failed(self, side: Player, failure: DialFailure, now: float) -> list[Action]:
        seat = self._seats[side]
        if seat.ever_connected or seat.info.kind != "bot_ws":
            return []  # stale (another dial got through) or not a seat that is dialled
        seat.dial_failure = failure
        return self._no_show(now) if self._nobody_missing_can_come() else []

    def _on_frame(self, side: Player, data: str | bytes, now: float) -> list[Action]:
        seat = self._seats[side]
        if not seat.info.speaks_websocket:
            return []  # a stateless bot has no socket: nothing it could have sent
        packet = read_frame(side, seat.info.kind, data, self.limits.max_frame_bytes)
        match packet:
            case MoveResponsePacket() | HumanMoveResponsePacket():
                self._check_solicited(side)
                return self._on_answer(
                    side,
                    list(packet.move.pieces),
                    packet.move.evaluation,
                    list(packet.considerations or []),
                    now,
                )
            case EvalResponsePacket():
                raise SeatProtocolError(side, "eval_response, but no eval_request was sent")
            case ResignPacket():
                return self._resign(side, now)
        raise SeatProtocolError(side, f"{type(packet).__name__} is not a packet a seat sends")

    def _on_stateless_answer(
        self, side: Player, answer: StatelessMoveResponse | BaseException, now: float
    ) -> list[Action]:
        reply = self._stateless_reply(side, answer)
        if reply is None:
            return []  # late or stray: the adapter's request outlived its turn
        considerations: list[MoveOption] = list(reply.considerations or [])
        return self._on_answer(
            side, list(reply.move.pieces), reply.move.evaluation, considerations, now
        )

    def _on_timer(self, now: float) -> list[Action]:
        if not self._started:
            if self._everyone_present():
                return self._begin(now)
            if self._someone_never_came() and now >= self._started_at + self.limits.no_show_s:
                return self._no_show(now)
        self._check_reconnect_windows(now)
        self._timer.check(now)
        return self._heartbeats() if self._heartbeat.due(now) else []

    # ---------------------------------------------------------------- the game

    def _begin(self, now: float) -> list[Action]:
        self._started = True
        actions: list[Action] = []
        for side, seat in self._seats.items():
            if seat.info.speaks_websocket and seat.connected:
                actions.extend(self._config_for(side))
                actions.append(SendTo(side, self._first_setup(seat)))
        # O, or after an opening the side it leaves to move; then the spectators learn
        # the game has begun (its clocks run): a fresh setup, as a joiner would get it.
        actions += self._request_move(self._board.to_move, now)
        return [*actions, Broadcast.later(self._spectator_setup_later(now))]

    def _first_setup(self, seat: SeatState) -> SetupPacket:
        """A seat's ``setup`` at the start: the board as it stands (an opening's stones
        included) for a seat that learns an opening from it; else the standard board,
        and the seat's first ``previous`` lists every move since (the opening's)."""
        if seat.info.learns_opening_by == "setup":
            seat.told = self._board.stone_count
            return SetupPacket(board=self.board)
        seat.told = 0
        return SetupPacket(board=Board.standard())

    def _config_for(self, side: Player) -> list[Action]:
        packet = config_packet(self._seats[side].info, self.match)
        return [] if packet is None else [SendTo(side, packet)]

    def _request_move(self, side: Player, now: float) -> list[Action]:
        self._request = PendingRequest(side, stones_wanted=2)
        self._timer.start(side, now, grace=self._seats[side].rtt)
        return self._ask(now)

    def _ask(self, now: float) -> list[Action]:
        """Send the pending request to its seat (if it can hear it now)."""
        request = self._request
        assert request is not None
        side = request.side
        seat = self._seats[side]
        seat.answered = False
        if seat.info.kind == "bot_stateless":
            return [self._stateless_request(side, now)]
        if not seat.connected:
            return []  # sent on reconnection
        limit = self._timer.time_left(side, now)
        previous = self._board.previous(seat.told)
        # The full board copies every stone: built only for a seat that reads it.
        full = self.board if seat.info.send_board else None
        packet = move_request(side, seat.info, previous, full, limit, self._clocks(now))
        seat.told = self._board.stone_count
        return [SendTo(side, packet)]

    def _check_solicited(self, side: Player) -> None:
        if self._request is not None and self._request.side is side:
            return
        if self._seats[side].answered:
            raise SeatProtocolError(side, "a second move_response to one move_request")
        raise SeatProtocolError(side, "move_response, but no move_request is pending")

    def _on_answer(
        self,
        side: Player,
        pieces: list[Coord],
        evaluation: PositionEvaluation | None,
        considerations: list[MoveOption],
        now: float,
    ) -> list[Action]:
        request = self._request
        assert request is not None and request.side is side
        self._timer.check(now)
        move_index = len(self._moves)
        kind = self._seats[side].info.kind
        new = self._board.place_answer(
            side,
            pieces,
            move_index=move_index,
            wanted=request.stones_wanted,
            may_split=kind == "human",
            stateless=kind == "bot_stateless",
        )
        stones = [*request.placed, *new]
        self._seats[side].answered = True
        outcome = self._board.outcome
        if outcome is None and len(stones) < 2:
            # A human's first stone: show it, then ask for the second (the clock runs on).
            request.placed = stones
            request.stones_wanted = 1
            update = self._board_update(side, new, side, now, None, [])
            return [*self._ask(now), update]
        thinking_ms = self._timer.stop(now, rtt=self._seats[side].rtt)
        self._request = None
        clock_ms = self._timer.remaining_ms(side)
        mover = self._seats[side]
        recorded = RecordedMove(
            side=side,
            pieces=stones,
            evaluation=evaluation,
            considerations=considerations,
            clock_ms=clock_ms,
            thinking_ms=thinking_ms,
            latency_ms=round(mover.rtt * 1000) if mover.rtt_known else None,
        )
        self._moves.append(recorded)
        actions: list[Action] = [RecordMove(move_index, recorded)]
        verdict = self._adjudicator.observe(recorded) if outcome is None else None
        if verdict is not None:
            update = self._board_update(
                side, new, None, now, evaluation, considerations, status_of(verdict)
            )
            return [*actions, update, *self._finish(verdict, verdict.detail or "", now)]
        if outcome is None:
            update = self._board_update(side, new, side.other, now, evaluation, considerations)
            # The next request first: it is what the game waits for. The adapter carries
            # out actions in order, so spectators and the record come a moment later.
            return [*self._request_move(side.other, now), update, *actions]
        result, detail = result_of_outcome(outcome, side, self.match.turn_limit)
        update = self._board_update(
            side, new, None, now, evaluation, considerations, status_of(result)
        )
        return [*actions, update, *self._finish(result, detail, now)]

    def _board_update(
        self,
        side: Player,
        new: list[Coord],
        to_move: Player | None,
        now: float,
        evaluation: PositionEvaluation | None,
        considerations: list[MoveOption],
        status: GameStatus = GameStatus.IN_PROGRESS,
    ) -> Broadcast:
        """The spectators' update of this move, built only if read (see ``Broadcast``):
        what it shows is taken now, the board as a mark (O(1), no copy of the stones)."""
        clocks = self._clocks(now)
        stones, mark = self._board, self._board.mark()

        def build() -> BoardUpdatePacket:
            board = stones.board_at(mark)
            return board_update(
                board, side, new, to_move, clocks, evaluation, considerations, status
            )

        def compact() -> BoardUpdatePacket:  # O(1): no board
            return board_update(
                None, side, new, to_move, clocks, evaluation, considerations, status
            )

        return Broadcast.later(build, compact)

    def _heartbeats(self) -> list[Action]:
        awaiting = self.awaiting
        return [
            SendTo(side, HeartbeatPacket(waiting=side is awaiting)) for side in self._listening()
        ]

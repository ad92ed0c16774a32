"""The bot side of the protocol, as a pure state machine (no I/O, no clock of its own).

``BotSession`` takes what happens — a frame arrives, the bot finished thinking, an
answer is due, the connection dropped — and returns ``Action`` values for the I/O
adapter (``bot.serve``) to carry out: send a packet, start or cancel the bot's
thinking, close the socket. Time comes in as ``now`` arguments (``time.monotonic()``
seconds), so tests drive it without sockets or sleeps, like ``websockets``' protocol
objects.

Protocol: ``../shared/spec/bws-v1-alpha.yaml`` and ``../shared/protocol.md``.

>>> from models import dump_packet
>>> session = BotSession(BwsV1Alpha())
>>> session.receive('{"type": "setup"}', now=0.0)
[Reset(position=<Position 1 stones, o to move (2 left), outcome=None>)]
>>> [think] = session.receive('{"type": "move_request", "side": "o", "previous": []}', now=0.1)
>>> think.job.kind, think.job.side, think.job.time_limit
('move', <Player.O: 'o'>, None)
>>> [send] = session.job_done(think.job.job_id, MoveDecision.of([(1, 0), (2, 0)]), now=0.5)
>>> dump_packet(send.packet)
b'{"type":"move_response","move":{"pieces":[{"q":1,"r":0},{"q":2,"r":0}]}}'
>>> session.receive('{"type": "heartbeat", "waiting": true}', now=60.0)
[Close(code=1008, reason='heartbeat: the server is waiting for an answer, but ...')]
>>> session.closed, session.receive('{"type": "setup"}', now=61.0)
(True, [])

The interface
-------------

* ``BotSession(capabilities, *, match=None, lend_positions=False)``; ``capabilities`` is
  the bot's ``BwsV1Alpha``: every optional feature is enabled only when declared there.
  ``lend_positions`` for a bot that keeps no position (``BaseBot.keeps_positions``).
* ``receive(data, now)``: one text frame from the client -> actions;
  ``receive_binary(size, now)``: a binary frame -> the close.
* ``job_done(job_id, result, now)``: the bot's answer (a ``MoveDecision`` for a move
  job, a ``PositionEvaluation`` for an eval job) -> actions (normally one ``Send``).
  Results of jobs that were cancelled or already answered are ignored (no actions).
* ``job_failed(job_id, error, now)``: the bot raised -> actions (a legal fallback move,
  so the game goes on; the error is logged by the adapter).
* ``answer_due(job_id, best, now)``: the time to answer a time-limited request has come
  and the bot has not finished -> actions: the move ``best`` (what the bot reported via
  ``Deadline.report``) if it is legal, else a legal fallback; the job stays running in
  the adapter (its deadline is expired) and its late result is ignored.
* ``connection_lost(now)``: the socket closed -> ``Cancel`` for every running job.
* ``closed``: True once a ``Close`` was issued or the connection was lost; later inputs
  return no actions. ``match``: the match settings jobs are given now.

No method raises: whatever the client sends, the answer is actions, at worst
``[Cancel(...), Close(code, reason)]`` with a reason a human can act on.

The pieces, each importable from here too: ``bot.jobs`` (``ThinkJob``, the actions, the
timing of answers), ``bot.session_errors`` (one error class per reason to close),
``bot.session_packets`` (the match settings of a config, the words of an end),
``bot.request_boards`` (the board of a request), ``bot.lent_positions`` (the bot's copy
of it) and ``bot.answers`` (the bot's answer made safe to send).

How the protocol's open points are settled (match settings, config timing, the board,
order, checks, answers, time limits, heartbeats, close codes): ``docs/bot_session.md``.

"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from pydantic import BaseModel

from bot.answers import eval_answer, move_answer
from bot.bot import MoveDecision
from bot.jobs import (
    Action,
    Cancel,
    Close,
    Configure,
    JobResult,
    Reset,
    Send,
    Think,
    ThinkJob,
    answer_within,
    heartbeat_grace,
    network_margin,
)
from bot.lent_positions import PositionLender
from bot.request_boards import (
    STANDARD_STONES,
    ConfirmedBoard,
    SentAnswer,
    build_position,
    builds_as,
    describe_board,
    guess_to_move,
    is_standard,
    request_position,
    request_stones,
    rewound,
    stones_of_board,
)
from bot.session_errors import (
    CLOSE_UNSUPPORTED_DATA,
    HeartbeatStateError,
    ImpossibleBoardError,
    InvalidMatchError,
    MoveOrderError,
    MoveSkipError,
    OutOfOrderError,
    SessionError,
    UndeclaredFeatureError,
    WrongSideError,
)
from bot.session_packets import game_over, read_match
from game.hexgrid import Hex
from game.rules import Position
from models import (
    CLOSE_INTERNAL_ERROR,
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    CLOSE_PROTOCOL_ERROR,
    MATCH_CONFIG_KEY,
    SERVER_PACKETS,
    BwsV1Alpha,
    ConfigPacket,
    EndPacket,
    EvalRequestPacket,
    HeartbeatPacket,
    InterruptPacket,
    Match,
    MoveRequestPacket,
    NopePacket,
    Player,
    ProtocolError,
    SetupPacket,
    parse_packet,
)

__all__ = [
    "CLOSE_INTERNAL_ERROR",
    "CLOSE_NORMAL",
    "CLOSE_POLICY_VIOLATION",
    "CLOSE_PROTOCOL_ERROR",
    "CLOSE_UNSUPPORTED_DATA",
    "MATCH_CONFIG_KEY",
    "Action",
    "BotSession",
    "Cancel",
    "Close",
    "Configure",
    "HeartbeatStateError",
    "ImpossibleBoardError",
    "InvalidMatchError",
    "JobResult",
    "MoveOrderError",
    "MoveSkipError",
    "OutOfOrderError",
    "Reset",
    "Send",
    "SessionError",
    "Think",
    "ThinkJob",
    "UndeclaredFeatureError",
    "WrongSideError",
    "answer_within",
    "heartbeat_grace",
    "network_margin",
    "request_stones",
    "stones_of_board",
]


# ------------------------------------------------------------------------- state


class _Tracking(NamedTuple):
    """What a request changes and an ``interrupt`` restores. (Tuples: two are made a
    move, at a fraction of a frozen dataclass's cost.)"""

    board: ConfirmedBoard
    next_mover: Player | None  # the side due to move in the standard order, if known
    answer: SentAnswer | None
    side: Player | None  # the session's side, fixed by the first request


class _Pending(NamedTuple):
    """The request being worked on, and the tracking before it (for an interrupt)."""

    job: ThinkJob
    before: _Tracking
    # The confirmed board's stone count and side to move, if the request moved it on.
    advanced_from: tuple[int, Player] | None = None


class BotSession:
    """One game session of one bot over one WebSocket."""

    #: Derive each request's position from the confirmed one when the request only adds
    #: stones to it (the usual game flow), instead of building it from every stone.
    #: False builds every position from scratch (for benchmarks and tests to compare).
    _derive_positions: bool = True

    def __init__(
        self, capabilities: BwsV1Alpha, *, match: Match | None = None, lend_positions: bool = False
    ) -> None:
        self._capabilities = capabilities
        # The bot's position: lent again when it allows (BaseBot.keeps_positions False).
        self._lender = PositionLender() if lend_positions else None
        self._match = match if match is not None else Match()
        self._closed = False
        # The game has started: a setup or a request was received.
        self._started = False
        self._tracking = _Tracking(ConfirmedBoard(None), Player.O, None, None)
        self._pending: _Pending | None = None
        # Jobs the adapter may still be running: pending, or answered by answer_due.
        self._running: set[int] = set()
        self._next_job_id = 1
        self._answered_at: float | None = None
        self._last_heartbeat_at: float | None = None
        self._heartbeat_interval: float | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def match(self) -> Match:
        """The match settings new jobs get (``x-match`` of a config, else the default)."""
        return self._match

    # ------------------------------------------------------------------ inputs

    def receive(self, data: str | bytes, now: float) -> list[Action]:
        """One frame from the client."""
        if self._closed:
            return []
        try:
            packet = parse_packet(data, allowed=SERVER_PACKETS)
        except ProtocolError as exc:
            return self._close(CLOSE_PROTOCOL_ERROR, f"bad packet: {exc}")
        except Exception as exc:  # not a frame at all (wrong type from the adapter)
            return self._close(CLOSE_PROTOCOL_ERROR, f"bad packet: unreadable frame ({exc!r})")
        try:
            return self._dispatch(packet, now)
        except SessionError as exc:
            return self._close(exc.code, str(exc))
        except Exception as exc:  # a bug here must cost one session, never the server
            return self._close(CLOSE_INTERNAL_ERROR, f"internal error in the bot session: {exc!r}")

    def receive_binary(self, size: int, now: float) -> list[Action]:
        """A binary frame of ``size`` bytes from the client: the protocol is JSON text."""
        if self._closed:
            return []
        return self._close(
            CLOSE_UNSUPPORTED_DATA,
            f"binary frame of {size} bytes; the protocol sends each packet as JSON in a text frame",
        )

    def job_done(self, job_id: int, result: JobResult, now: float) -> list[Action]:
        """The bot finished job ``job_id`` with ``result``."""
        self._call_returned(job_id)
        pending = self._current(job_id)
        if pending is None:
            return []
        try:  # _guarded, without a closure (once a move)
            return self._answer(pending.job, result, None, now)
        except Exception as exc:  # a bug here must cost one session, never the server
            return self._close(CLOSE_INTERNAL_ERROR, f"internal error in the bot session: {exc!r}")

    def job_failed(self, job_id: int, error: BaseException, now: float) -> list[Action]:
        """The bot raised ``error`` working on job ``job_id``."""
        self._call_returned(job_id)
        pending = self._current(job_id)
        if pending is None:
            return []
        why = f"the bot raised {error!r}"
        return self._guarded(lambda: self._answer(pending.job, None, why, now))

    def _call_returned(self, job_id: int) -> None:
        """The bot's call for job ``job_id`` is over: nothing runs it, nothing holds its
        position any more."""
        self._running.discard(job_id)
        if self._lender is not None:
            self._lender.returned(job_id)

    def answer_due(self, job_id: int, best: MoveDecision | None, now: float) -> list[Action]:
        """Job ``job_id`` ran out of time; ``best`` is the bot's best move so far."""
        pending = self._current(job_id)
        if pending is None:
            return []
        why = "time ran out" if best is not None else "time ran out before the bot reported a move"
        return self._guarded(lambda: self._answer(pending.job, best, why, now))

    def connection_lost(self, now: float) -> list[Action]:
        """The socket is gone: stop every job; the session is over."""
        if self._closed:
            return []
        self._closed = True
        return self._cancel_all()

    # ---------------------------------------------------------------- packets

    def _dispatch(self, packet: BaseModel, now: float) -> list[Action]:
        match packet:
            case MoveRequestPacket():  # first: the packet of every move
                return self._on_move_request(packet)
            case HeartbeatPacket():
                return self._on_heartbeat(packet, now)
            case EvalRequestPacket():
                return self._on_eval_request(packet)
            case ConfigPacket():
                return self._on_config(packet)
            case SetupPacket():
                return self._on_setup(packet)
            case InterruptPacket():
                return self._on_interrupt()
            case EndPacket():
                return self._close(CLOSE_NORMAL, game_over(packet))
            case NopePacket():
                return self._close(CLOSE_NORMAL, f"server said nope: {packet.reason}")
        raise OutOfOrderError(f"{type(packet).__name__} is not a packet a bot receives")

    def _on_config(self, packet: ConfigPacket) -> list[Action]:
        declared = self._capabilities.config
        if declared is None:
            raise UndeclaredFeatureError(
                "config packet, but the bot does not declare 'config' in its capabilities"
            )
        if self._started and not declared.dynamic:
            raise OutOfOrderError(
                "config after the game started; the bot accepts config only before the "
                "first setup (it does not declare 'config.dynamic')"
            )
        extras = packet.extensions()
        if MATCH_CONFIG_KEY in extras:
            self._match = read_match(extras[MATCH_CONFIG_KEY])
        return [Configure(depth=packet.depth, extras=dict(extras))]

    def _on_setup(self, packet: SetupPacket) -> list[Action]:
        if self._started and not self._capabilities.resettable_state:
            raise OutOfOrderError(
                "a second setup, or a setup after a request; the bot takes one setup, "
                "before any request (it does not declare 'resettable_state')"
            )
        if not self._capabilities.free_setup and not is_standard(packet.board):
            raise UndeclaredFeatureError(
                f"setup board must be exactly one x at (0, 0) (the bot does not declare "
                f"'free_setup'), got {describe_board(packet.board)}"
            )
        stones = stones_of_board(packet.board, "setup.board")
        standard = stones == STANDARD_STONES
        # Who moves first from a free setup is for the first request to say; the bot's
        # on_setup still needs some side to move, so guess from the stone counts.
        to_move = Player.O if standard else guess_to_move(stones)
        position = build_position(stones, to_move, self._match, self._capabilities)
        actions = self._drop_pending()
        self._started = True
        self._tracking = _Tracking(
            ConfirmedBoard(position, packet.board.cells),
            Player.O if standard else None,
            None,
            self._tracking.side,
        )
        # The bot gets a copy: the session keeps building on its own.
        return [*actions, Reset(position.copy())]

    def _on_move_request(self, packet: MoveRequestPacket) -> list[Action]:
        before = self._tracking
        side = packet.side
        self._check_set_up("move_request")
        self._check_nothing_pending("move_request")
        self._check_side(side, "move_request")
        confirmed = before.board.position
        assert confirmed is not None  # _check_set_up
        stones, to_move = len(confirmed), confirmed.to_move
        position = request_position(
            packet,
            before.board,
            before.next_mover,
            before.answer,
            self._capabilities,
            self._match,
            derive=self._derive_positions,
        )
        cells = None if packet.board is None else packet.board.cells
        after = _Tracking(ConfirmedBoard(position, cells), side, None, before.side or side)
        declared = self._capabilities.move_time_limit
        limit = packet.move_time_limit if declared else None
        in_place = position is confirmed and len(position) != stones
        advanced_from = (stones, Player(to_move)) if in_place else None
        lent = in_place and self._lender is not None  # then the bot's copy takes them too
        new = [(p.q, p.r) for m in packet.previous for p in m.pieces] if lent else []
        return self._start("move", position, side, limit, before, after, advanced_from, new)

    def _on_eval_request(self, packet: EvalRequestPacket) -> list[Action]:
        if not self._capabilities.evaluation:
            raise UndeclaredFeatureError(
                "eval_request, but the bot does not declare 'evaluation' in its capabilities"
            )
        self._check_set_up("eval_request")
        self._check_nothing_pending("eval_request")
        self._check_side(packet.side, "eval_request")
        before = self._tracking
        position = before.board.position
        if (
            position is None
            or not self._derive_positions
            or not builds_as(position, packet.side, self._match)
        ):
            position = build_position(
                before.board.stones(), packet.side, self._match, self._capabilities
            )
        after = before._replace(side=before.side or packet.side)
        declared = self._capabilities.evaluation_time_limit
        limit = packet.evaluation_time_limit if declared else None
        return self._start("eval", position, packet.side, limit, before, after)

    def _on_heartbeat(self, packet: HeartbeatPacket, now: float) -> list[Action]:
        if self._last_heartbeat_at is not None and now > self._last_heartbeat_at:
            self._heartbeat_interval = now - self._last_heartbeat_at
        self._last_heartbeat_at = now
        if not packet.waiting or self._pending is not None or self._running:
            # ``waiting: false`` while thinking means the server gave up on this request
            # or has not seen it yet: keep going. A heartbeat never stops a job.
            return []
        grace = heartbeat_grace(self._heartbeat_interval, self._match)
        if self._answered_at is not None and now - self._answered_at <= grace:
            return []  # sent before our answer reached the server
        raise HeartbeatStateError(
            "heartbeat: the server is waiting for an answer, but no request is pending "
            "(an error state: per the spec, the bot closes the connection)"
        )

    def _on_interrupt(self) -> list[Action]:
        if not self._capabilities.interruptible:
            raise UndeclaredFeatureError(
                "interrupt, but the bot does not declare 'interruptible' in its capabilities"
            )
        return self._drop_pending()

    # ------------------------------------------------------------------ checks

    def _check_set_up(self, what: str) -> None:
        if self._tracking.board.position is None:
            raise OutOfOrderError(
                f"{what} before setup; a session starts with a setup packet, the start "
                f"position, and only then asks for moves or evaluations"
            )

    def _check_nothing_pending(self, what: str) -> None:
        if self._pending is not None:
            kind = self._pending.job.kind
            raise OutOfOrderError(
                f"{what} while the {kind} request before it is unanswered; one request at "
                f"a time (an interrupt drops the pending one)"
            )

    def _check_side(self, side: Player, what: str) -> None:
        fixed = self._tracking.side
        if fixed is not None and side is not fixed and not self._capabilities.dual_sided:
            raise WrongSideError(
                f"{what} for {side.value}, but this session plays {fixed.value}; only bots "
                f"that declare 'dual_sided' play both sides"
            )

    # ------------------------------------------------------------------- jobs

    def _start(
        self,
        kind: Literal["move", "eval"],
        position: Position,
        side: Player,
        limit: float | None,
        before: _Tracking,
        after: _Tracking,
        advanced_from: tuple[int, Player] | None = None,
        new: Sequence[Hex] = (),
    ) -> list[Action]:
        """Start a job on ``position``, the session's own: the bot gets a copy (or its
        last one, moved on by ``new``, the stones placed since: ``bot.lent_positions``)."""
        job_id, lender = self._next_job_id, self._lender
        job = ThinkJob(
            job_id,
            kind,
            position.copy() if lender is None else lender.lend(job_id, position, new),
            side,
            self._match,
            limit,
            None if limit is None else answer_within(limit),
            asked_as=position,
        )
        self._next_job_id += 1
        self._started = True
        self._pending = _Pending(job, before, advanced_from)
        self._tracking = after
        self._running.add(job.job_id)
        return [Think(job)]

    def _current(self, job_id: int) -> _Pending | None:
        """The pending request if ``job_id`` is its job; None for void or stale jobs."""
        pending = self._pending
        if self._closed or pending is None or pending.job.job_id != job_id:
            return None
        return pending

    def _answer(
        self, job: ThinkJob, result: object, trouble: str | None, now: float
    ) -> list[Action]:
        """Answer the pending request with ``result`` (None: the bot has none; then
        ``trouble`` says why), or with a fallback when it is not a valid answer."""
        if job.kind == "eval":
            send = eval_answer(job, result, trouble)
        else:
            send, pieces = move_answer(job, result, trouble)
            tracking = self._tracking
            self._tracking = _Tracking(
                tracking.board, tracking.next_mover, SentAnswer(job.side, pieces), tracking.side
            )
        self._pending = None
        self._answered_at = now
        return [send]

    def _drop_pending(self) -> list[Action]:
        """Forget the pending request as if it never came: cancel its job and restore
        the board, side and answer it replaced."""
        pending = self._pending
        if pending is None:
            return []
        self._pending = None
        before = pending.before
        if pending.advanced_from is not None:  # the request moved the board on in place
            board = rewound(before.board, *pending.advanced_from, self._match, self._capabilities)
            before = before._replace(board=board)
        self._tracking = before
        self._running.discard(pending.job.job_id)
        return [Cancel(pending.job.job_id)]

    def _cancel_all(self) -> list[Action]:
        self._pending = None
        cancels: list[Action] = [Cancel(job_id) for job_id in sorted(self._running)]
        self._running.clear()
        return cancels

    def _close(self, code: int, reason: str) -> list[Action]:
        actions = self._cancel_all()
        self._closed = True
        return [*actions, Close(code, reason)]

    def _guarded(self, answer: Callable[[], list[Action]]) -> list[Action]:
        if self._closed:
            return []
        try:
            return answer()
        except Exception as exc:  # a bug here must cost one session, never the server
            return self._close(CLOSE_INTERNAL_ERROR, f"internal error in the bot session: {exc!r}")

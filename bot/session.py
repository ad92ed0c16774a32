"""The bot side of the protocol, as a pure state machine (no I/O, no clock of its own).

``BotSession`` takes what happens — a frame arrives, the bot finished thinking, an
answer is due, the connection dropped — and returns ``Action`` values for the I/O
adapter (``bot.serve``) to carry out: send a packet, start or cancel the bot's
thinking, close the socket. Time comes in as ``now`` arguments (``time.monotonic()``
seconds), so tests drive it without sockets or sleeps, like ``websockets``' protocol
objects.

Protocol: ``../shared/spec/bws-v1-alpha.yaml`` and ``../shared/protocol.md``.

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

* ``BotSession(capabilities, *, match=None)``; ``capabilities`` is the bot's
  ``BwsV1Alpha``: every optional feature is enabled only when declared there.
* ``receive(data, now)``: one frame from the client -> actions.
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

How the protocol's open points are settled
------------------------------------------

*Match settings.* A ``config`` packet may carry the game's settings under the key
``"x-match"``, a ``Match`` object as JSON (``{"type": "config", "x-match":
{"view_distance": 10, ...}}``); invalid settings close the session. ``config`` packets
are only accepted from the client when the bot declares ``config`` (the spec forbids
them otherwise), so a bot that does not declare it plays with the ``match`` given to the
constructor, or ``Match()`` defaults. ``Configure.extras`` holds every ``x-`` key,
``x-match`` included.

*Config timing.* Before the game starts (the first ``setup`` or request) a declared
``config`` is always accepted; afterwards only with ``config.dynamic``.

*Board.* A request that carries ``board`` (our extension; the prototype's server sends
it with a ``previous`` holding only the opponent's move) is trusted as the current
position. Otherwise the stones of ``previous`` are added to the confirmed board. The
session builds the position of a request from the confirmed one by placing the stones of
``previous`` when that is the whole difference (the usual flow; with ``board``, when it
lists the confirmed board's cells in their order, then those stones): O(new stones)
instead of O(stones). Anything else is built from every stone, with the same result. The
bot's own answer is never applied when sent: only the next request confirms it (so
``move_skips`` works). An ``interrupt`` restores the board, the side and the bot's
unconfirmed answer as they were before the interrupted request.

*Checks, each lifted by the capability that allows it.* Without ``free_setup`` the setup
board is one ``x`` at (0, 0). Without ``resettable_state`` there is one ``setup``,
before any request. Without ``dual_sided`` every request is for the side of the first.
Without ``free_move_order`` the moves of ``previous`` and the requested side alternate,
starting with the side due to move (a request with ``board`` may leave out earlier
moves, as the prototype does). Without ``move_skips`` (or ``free_move_order``)
``previous`` holds at most 2 moves, and without ``move_skips`` it must begin with the
bot's last answer, unchanged (with ``board``: the board must hold it). Stones are not
checked against ``view_distance`` (the server is the referee), but a stone on a taken
cell, a repeated cell or a board that already has a winning line closes the session.
Evaluations are of the confirmed board, with the requested side to move.

*Answers.* One request may be pending at a time. An illegal move from the bot (or none
in time, or an exception) is replaced by ``bot.fallback.fallback_move``; the ``Send``
then carries a ``warning`` for the log. An evaluation that fails or overruns is
answered with an empty evaluation (``{}``) rather than closing: a broken evaluator should
not forfeit a game.

*Time limits.* ``move_time_limit`` / ``evaluation_time_limit`` of a request are honoured
only when declared; ``answer_within`` is the limit less ``network_margin(limit)``.

*Heartbeats.* ``waiting: true`` with no request pending is the spec's error state and
closes (1008), except just after an answer (the two crossed on the wire): within
``heartbeat_grace`` of the last answer it is ignored. While a job runs, no heartbeat
ever closes the session.

*Close codes.* 1000 after ``end`` or ``nope``; 1002 for a malformed packet, a packet
not allowed by the declared capabilities or out of order; 1008 for a valid packet that
describes an impossible state (a board with a winning line, a heartbeat waiting for
nothing); 1011 if the session itself fails. Reasons can be long (they quote the
packet's problem): the adapter should log them whole and trim the close frame's copy to
the 123 bytes WebSocket allows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import KW_ONLY, InitVar, dataclass, field, replace
from itertools import pairwise
from typing import ClassVar, Literal, TypeAlias

from pydantic import BaseModel, ValidationError

from bot.bot import MoveDecision
from bot.fallback import fallback_move, move_problem
from game.hexgrid import Hex
from game.rules import IllegalMoveError, InvalidSetupError, Position, Side
from models import (
    CLOSE_INTERNAL_ERROR,
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    CLOSE_PROTOCOL_ERROR,
    MATCH_CONFIG_KEY,
    SERVER_PACKETS,
    Board,
    BwsV1Alpha,
    Cell,
    ConfigPacket,
    Coord,
    EndCause,
    EndPacket,
    EvalRequestPacket,
    EvalResponsePacket,
    HeartbeatPacket,
    InterruptPacket,
    Match,
    Move,
    MoveOption,
    MoveRequestPacket,
    MoveResponsePacket,
    NopePacket,
    Player,
    PositionEvaluation,
    ProtocolError,
    SetupPacket,
    dump_packet,
    parse_body,
    parse_packet,
)

__all__ = [
    "CLOSE_INTERNAL_ERROR",
    "CLOSE_NORMAL",
    "CLOSE_POLICY_VIOLATION",
    "CLOSE_PROTOCOL_ERROR",
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
    "heartbeat_grace",
    "network_margin",
    "request_stones",
    "stones_of_board",
]


#: The config key that carries the game's ``Match`` settings.

# The answer must cross the network before the client's limit runs out: keep this much
# back, but never more than a fifth of a short limit (the bot needs time to think too).
_MAX_NETWORK_MARGIN = 0.5
_NETWORK_MARGIN_SHARE = 0.2
_MIN_HEARTBEAT_GRACE = 1.0


def network_margin(time_limit: float) -> float:
    """Seconds kept back from a time limit for the answer to travel:
    ``min(0.5, 20% of the limit)``.

    >>> network_margin(10.0), network_margin(1.0)
    (0.5, 0.2)
    """
    return min(_MAX_NETWORK_MARGIN, _NETWORK_MARGIN_SHARE * time_limit)


def answer_within(time_limit: float | None) -> float | None:
    """When the answer is due, in seconds from the request: the limit less the margin.

    >>> answer_within(10.0), answer_within(None)
    (9.5, None)
    """
    return None if time_limit is None else time_limit - network_margin(time_limit)


def heartbeat_grace(observed_interval: float | None, match: Match) -> float:
    """How long after an answer a ``waiting: true`` heartbeat is taken to have crossed
    it on the wire: twice the heartbeat interval (as observed, else the match's), at
    least 1 s.

    >>> heartbeat_grace(None, Match(heartbeat=5000)), heartbeat_grace(0.2, Match())
    (10.0, 1.0)
    """
    interval = match.heartbeat / 1000 if observed_interval is None else observed_interval
    return max(_MIN_HEARTBEAT_GRACE, 2 * interval)


# ----------------------------------------------------------------------- actions


@dataclass(frozen=True)
class ThinkJob:
    """A request for the bot: a move or an evaluation.

    ``position`` is the bot's own copy (``side`` to move, 2 stones left). ``time_limit``
    is the request's limit in seconds, only when the bot declared it honours limits;
    ``answer_within`` is when the adapter must call ``answer_due`` (the limit less a
    safety margin for the network), or None for no limit.

    The bot may change ``position`` as it thinks; ``original_position()`` gives the
    position as asked, against which its answer is checked. ``asked_as``, when given, is
    that position (a different object, equal to ``position``, which nobody changes: the
    session's own); by default it is a copy of ``position`` taken here.
    """

    job_id: int
    kind: Literal["move", "eval"]
    position: Position
    side: Player
    match: Match
    time_limit: float | None
    answer_within: float | None
    _: KW_ONLY
    asked_as: InitVar[Position | None] = None
    _original: Position = field(init=False, repr=False, compare=False)

    def __post_init__(self, asked_as: Position | None) -> None:
        # Taken before the bot sees ``position``: checking its answer must not depend
        # on what the bot did to its copy, nor race with a bot still thinking.
        if asked_as is None or asked_as is self.position:
            asked_as = self.position.copy()
        object.__setattr__(self, "_original", asked_as)

    def original_position(self) -> Position:
        """A fresh copy of the position as it was when the job was made."""
        return self._original.copy()

    @property
    def asked(self) -> Position:
        """The position as it was when the job was made: the session's own, to read and
        not to change (``original_position()`` gives a copy to change)."""
        return self._original


@dataclass(frozen=True)
class Send:
    """Send this packet to the client.

    ``warning``, when set, says why the packet is not what the bot answered (an illegal
    move or none in time, replaced by a fallback): the adapter logs it. ``encoded`` is
    the packet already encoded (``dump_packet``), when the session had to encode it.
    """

    packet: BaseModel
    warning: str | None = None
    encoded: bytes | None = field(default=None, repr=False, compare=False)

    def data(self) -> bytes:
        """The packet's JSON bytes, encoded once."""
        return self.encoded if self.encoded is not None else dump_packet(self.packet)


@dataclass(frozen=True)
class Think:
    """Start the bot on ``job`` off the event loop; report with ``job_done``/``job_failed``
    and, if ``job.answer_within`` is set, call ``answer_due`` when it elapses."""

    job: ThinkJob


@dataclass(frozen=True)
class Cancel:
    """Tell the running job to stop (cancel its ``Deadline``); its result is void."""

    job_id: int


@dataclass(frozen=True)
class Configure:
    """Call ``bot.on_config(depth, extras)`` (in order with the bot's other calls)."""

    depth: int | None
    extras: dict[str, object]


@dataclass(frozen=True)
class Reset:
    """A new start position: call ``bot.on_setup(position)`` (in order)."""

    position: Position


@dataclass(frozen=True)
class Close:
    """Close the connection. ``code`` is a WebSocket close code (1000 normal, 1002
    protocol error, 1008 policy, 1011 internal error); ``reason`` is logged and sent."""

    code: int
    reason: str


Action: TypeAlias = Send | Think | Cancel | Configure | Reset | Close

JobResult: TypeAlias = MoveDecision | PositionEvaluation


# ------------------------------------------------------------------------ errors
#
# Raised inside the session and turned into a ``Close`` by ``receive``; one class per
# cause, each with its close code.


class SessionError(Exception):
    """A reason to end the session; the message is the close reason."""

    code: ClassVar[int] = CLOSE_PROTOCOL_ERROR


class UndeclaredFeatureError(SessionError):
    """The client used an optional feature the bot does not declare."""


class OutOfOrderError(SessionError):
    """A well-formed packet the protocol does not allow at this point."""


class WrongSideError(SessionError):
    """A request for another side than the session's, from a bot not ``dual_sided``."""


class MoveOrderError(SessionError):
    """Moves that do not alternate, from a bot without ``free_move_order``."""


class MoveSkipError(SessionError):
    """The client replaced or left out the bot's move, or sent more than 2 moves at
    once, to a bot without ``move_skips``."""


class InvalidMatchError(SessionError):
    """The ``x-match`` config key does not hold valid match settings."""


class ImpossibleBoardError(SessionError):
    """A board no game can reach: two stones on a cell, or a winning line already."""

    code = CLOSE_POLICY_VIOLATION


class HeartbeatStateError(SessionError):
    """``waiting: true`` while the bot has nothing to answer: the spec's error state."""

    code = CLOSE_POLICY_VIOLATION


# ------------------------------------------------------------------------- state

_STANDARD_STONES: dict[Hex, Side] = {(0, 0): "x"}


@dataclass(frozen=True)
class _Answer:
    """The bot's last move, sent but not yet confirmed by a request's ``previous``."""

    side: Player
    pieces: frozenset[Hex]

    def __str__(self) -> str:
        return f"{self.side.value} {sorted(self.pieces)}"


@dataclass(frozen=True, eq=False)
class _Board:
    """A confirmed board: the session's own ``Position`` of it, with the side of the
    request that confirmed it to move (the bot's copies are made from it; nobody
    changes it, so keeping the old value is a snapshot), and the cells of the packet
    that carried it, in the packet's order, to tell cheaply whether the next ``board``
    extends it. ``position`` is None for the standard start before any setup."""

    position: Position | None
    cells: list[Cell] | None = None

    def stones(self) -> dict[Hex, Side]:
        """The stones by cell, in placement order."""
        if self.position is None:
            return dict(_STANDARD_STONES)
        return {(q, r): side for q, r, side in self.position.stones}


@dataclass(frozen=True)
class _Tracking:
    """What a request changes and an ``interrupt`` restores."""

    board: _Board
    next_mover: Player | None  # the side due to move in the standard order, if known
    answer: _Answer | None
    side: Player | None  # the session's side, fixed by the first request


@dataclass(frozen=True)
class _Pending:
    """The request being worked on, and the tracking before it (for an interrupt)."""

    job: ThinkJob
    before: _Tracking


class BotSession:
    """One game session of one bot over one WebSocket."""

    #: Derive each request's position from the confirmed one when the request only adds
    #: stones to it (the usual game flow), instead of building it from every stone.
    #: False builds every position from scratch (for benchmarks and tests to compare).
    _derive_positions: bool = True

    def __init__(self, capabilities: BwsV1Alpha, *, match: Match | None = None) -> None:
        self._capabilities = capabilities
        self._match = match if match is not None else Match()
        self._closed = False
        # The game has started: a setup or a request was received.
        self._started = False
        self._tracking = _Tracking(_Board(None), Player.O, None, None)
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

    def job_done(self, job_id: int, result: JobResult, now: float) -> list[Action]:
        """The bot finished job ``job_id`` with ``result``."""
        self._running.discard(job_id)
        pending = self._current(job_id)
        if pending is None:
            return []
        return self._guarded(lambda: self._answer(pending.job, result, None, now))

    def job_failed(self, job_id: int, error: BaseException, now: float) -> list[Action]:
        """The bot raised ``error`` working on job ``job_id``."""
        self._running.discard(job_id)
        pending = self._current(job_id)
        if pending is None:
            return []
        why = f"the bot raised {error!r}"
        return self._guarded(lambda: self._answer(pending.job, None, why, now))

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
            case HeartbeatPacket():
                return self._on_heartbeat(packet, now)
            case MoveRequestPacket():
                return self._on_move_request(packet)
            case EvalRequestPacket():
                return self._on_eval_request(packet)
            case ConfigPacket():
                return self._on_config(packet)
            case SetupPacket():
                return self._on_setup(packet)
            case InterruptPacket():
                return self._on_interrupt()
            case EndPacket():
                return self._close(CLOSE_NORMAL, _game_over(packet))
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
            self._match = _read_match(extras[MATCH_CONFIG_KEY])
        return [Configure(depth=packet.depth, extras=dict(extras))]

    def _on_setup(self, packet: SetupPacket) -> list[Action]:
        if self._started and not self._capabilities.resettable_state:
            raise OutOfOrderError(
                "a second setup, or a setup after a request; the bot takes one setup, "
                "before any request (it does not declare 'resettable_state')"
            )
        if not self._capabilities.free_setup and not _is_standard(packet.board):
            raise UndeclaredFeatureError(
                f"setup board must be exactly one x at (0, 0) (the bot does not declare "
                f"'free_setup'), got {_describe_board(packet.board)}"
            )
        stones = stones_of_board(packet.board, "setup.board")
        standard = stones == _STANDARD_STONES
        # Who moves first from a free setup is for the first request to say; the bot's
        # on_setup still needs some side to move, so guess from the stone counts.
        position = self._position(stones, Player.O if standard else _guess_to_move(stones))
        actions = self._drop_pending()
        self._started = True
        self._tracking = _Tracking(
            _Board(position, packet.board.cells),
            Player.O if standard else None,
            None,
            self._tracking.side,
        )
        # The bot gets a copy: the session keeps building on its own.
        return [*actions, Reset(position.copy())]

    def _on_move_request(self, packet: MoveRequestPacket) -> list[Action]:
        self._check_nothing_pending("move_request")
        self._check_side(packet.side, "move_request")
        before = self._tracking
        position = self._position_after(packet, before)
        cells = None if packet.board is None else packet.board.cells
        after = _Tracking(_Board(position, cells), packet.side, None, before.side or packet.side)
        declared = self._capabilities.move_time_limit
        limit = packet.move_time_limit if declared else None
        return self._start("move", position, packet.side, limit, before, after)

    def _on_eval_request(self, packet: EvalRequestPacket) -> list[Action]:
        if not self._capabilities.evaluation:
            raise UndeclaredFeatureError(
                "eval_request, but the bot does not declare 'evaluation' in its capabilities"
            )
        self._check_nothing_pending("eval_request")
        self._check_side(packet.side, "eval_request")
        before = self._tracking
        position = before.board.position
        if (
            position is None
            or not self._derive_positions
            or not self._derivable(position, packet.side)
        ):
            position = self._position(before.board.stones(), packet.side)
        after = replace(before, side=before.side or packet.side)
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

    def _position_after(self, packet: MoveRequestPacket, before: _Tracking) -> Position:
        """The position of a move request (the session's own): its ``board``, else the
        confirmed one plus ``previous``, with the requested side to move; checking
        ``previous`` against the declared capabilities."""
        capabilities = self._capabilities
        moves = packet.previous
        if len(moves) > 2 and not (capabilities.move_skips or capabilities.free_move_order):
            raise MoveSkipError(
                f"move_request.previous holds {len(moves)} moves; at most 2 (the bot's and "
                f"the opponent's) unless the bot declares 'move_skips'"
            )
        if not capabilities.free_move_order:
            _check_alternation(packet, before.next_mover if packet.board is None else None)
        position = self._derived(packet, before.board)
        if position is not None:
            # The derived board holds exactly the stones of the full path below, and it
            # has neither a repeated cell nor a line: only the answer check can fail.
            if before.answer is not None and not capabilities.move_skips:
                self._check_answer_kept(before.answer, packet, position.piece_at)
            return position
        stones = request_stones(packet, before.board.stones())
        if before.answer is not None and not capabilities.move_skips:
            self._check_answer_kept(before.answer, packet, lambda q, r: stones.get((q, r)))
        return self._position(stones, packet.side)

    def _derivable(self, position: Position, side: Player) -> bool:
        """Whether ``position`` (the session's, 2 stones left, no outcome) is the one
        ``_position`` would build from its stones for ``side`` under the match settings."""
        match = self._match
        return (
            position.to_move == side.value
            and position.view_distance == match.view_distance
            and position.win_distance == match.win_distance
        )

    def _derived(self, packet: MoveRequestPacket, confirmed: _Board) -> Position | None:
        """The position of ``packet`` made from the confirmed one by placing the stones of
        ``previous`` in order, when that gives exactly the position ``_position`` builds
        from the request's board (or the confirmed one plus ``previous``): the same
        stones in the same order, the same side to move, 2 stones left. None otherwise
        (the full path then decides, and raises what it always raised).

        O(new stones) Python work, plus two flat copies of the confirmed position's
        containers and, with ``board``, one comparison of its cells with the confirmed
        ones (C loops that mostly compare identical, interned cells).
        """
        old = confirmed.position
        if old is None or not self._derive_positions:
            return None
        if packet.board is not None and not self._extends(packet.board, packet, confirmed.cells):
            return None
        match = self._match
        if old.view_distance != match.view_distance or old.win_distance != match.win_distance:
            return None
        position = old.copy()
        try:
            for move in packet.previous:
                side = move.side.value
                for piece in move.pieces:
                    if position.to_move != side:
                        return None
                    position.place(piece.q, piece.r)
        except IllegalMoveError:  # a taken cell, out of view (allowed here), game over
            return None
        if (
            position.outcome is not None
            or position.stones_left != 2
            or position.to_move != packet.side.value
        ):
            return None
        position.rebase()  # as if built from all its stones: they are all its setup
        return position

    @staticmethod
    def _extends(board: Board, packet: MoveRequestPacket, confirmed: list[Cell] | None) -> bool:
        """Whether ``board`` lists the ``confirmed`` cells, in the same order, then the
        stones of ``packet.previous``, in order."""
        cells = board.cells
        if confirmed is None:
            return False
        known = len(confirmed)
        added = [(p.q, p.r, move.side) for move in packet.previous for p in move.pieces]
        if len(cells) != known + len(added):
            return False
        # Interned cells: nearly every element is the same object, which list equality
        # checks first.
        if cells is not confirmed and cells[:known] != confirmed:
            return False
        return all(
            (cell.q, cell.r, cell.p) == stone
            for cell, stone in zip(cells[known:], added, strict=True)
        )

    def _check_answer_kept(
        self,
        answer: _Answer,
        packet: MoveRequestPacket,
        piece_at: Callable[[int, int], str | None],
    ) -> None:
        skips = "only bots that declare 'move_skips' accept a replaced or skipped move"
        if packet.board is not None:
            if any(piece_at(*cell) != answer.side.value for cell in answer.pieces):
                raise MoveSkipError(
                    f"move_request.board does not hold the bot's move ({answer}); {skips}"
                )
            return
        moves = packet.previous
        candidates = moves if self._capabilities.free_move_order else moves[:1]
        if not any(_same_move(move, answer) for move in candidates):
            got = _describe_move(moves[0]) if moves else "nothing"
            raise MoveSkipError(
                f"move_request.previous must start with the bot's move ({answer}), "
                f"got {got}; {skips}"
            )

    def _position(self, stones: dict[Hex, Side], to_move: Player) -> Position:
        try:
            return Position(
                self._match.view_distance,
                self._match.win_distance,
                setup=[(q, r, side) for (q, r), side in stones.items()],
                to_move=to_move.value,
                reject_setup_lines=True,
            )
        except InvalidSetupError as exc:
            raise ImpossibleBoardError(f"impossible board: {exc}") from None

    # ------------------------------------------------------------------- jobs

    def _start(
        self,
        kind: Literal["move", "eval"],
        position: Position,
        side: Player,
        limit: float | None,
        before: _Tracking,
        after: _Tracking,
    ) -> list[Action]:
        """Start a job on ``position``, the session's own: the bot gets a copy."""
        job = ThinkJob(
            job_id=self._next_job_id,
            kind=kind,
            position=position.copy(),
            side=side,
            match=self._match,
            time_limit=limit,
            answer_within=answer_within(limit),
            asked_as=position,
        )
        self._next_job_id += 1
        self._started = True
        self._pending = _Pending(job, before)
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
            send = _eval_answer(job, result, trouble)
        else:
            send, pieces = _move_answer(job, result, trouble)
            tracking = self._tracking
            self._tracking = _Tracking(
                tracking.board, tracking.next_mover, _Answer(job.side, pieces), tracking.side
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
        self._tracking = pending.before
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


# -------------------------------------------------------------------- answers


def _move_answer(job: ThinkJob, result: object, trouble: str | None) -> tuple[Send, frozenset[Hex]]:
    """The ``move_response`` for ``result``: the bot's move when legal, else the
    fallback, with a warning saying why."""
    position = job.asked  # move_problem and fallback_move leave it as it is
    decision: MoveDecision | None = None
    if isinstance(result, MoveDecision):
        problem = None if _plainly_legal(position, result) else move_problem(position, result)
        if problem is None:
            decision = result
        else:
            whose = "its best move so far" if trouble else "the bot's move"
            illegal = f"{whose} {_pieces(result)} is illegal: {problem}"
            trouble = f"{trouble}; {illegal}" if trouble else illegal
    elif trouble is None:
        trouble = f"the bot answered {type(result).__name__}, not a MoveDecision"
    warning = None
    if decision is None:
        # On a copy: folding the legal cells into the session's own position would make
        # every later copy of it dearer.
        decision = fallback_move(job.original_position())
        warning = f"job {job.job_id}: {trouble}; sent the fallback move {_pieces(decision)}"
    encoded: bytes | None
    if decision.evaluation is None and not decision.considerations:
        # The common answer, two stones and nothing else (checked legal, so plain ints).
        first, second = decision.pieces
        # (Validating these Coords is quicker than pydantic's model_construct.)
        option = MoveOption(pieces=[first, second], evaluation=None)
        packet = MoveResponsePacket(move=option, considerations=None)
        encoded = _PLAIN_MOVE_RESPONSE % (first.q, first.r, second.q, second.r)
        return Send(packet, warning, encoded), frozenset(((first.q, first.r), (second.q, second.r)))
    try:
        packet = MoveResponsePacket(
            move=decision.to_option(), considerations=list(decision.considerations) or None
        )
        encoded = dump_packet(packet)  # what the bot added must also survive encoding
    except (ValidationError, TypeError, ValueError) as exc:
        packet = MoveResponsePacket(move=MoveOption(pieces=list(decision.pieces)))
        encoded = None
        note = f"job {job.job_id}: dropped the move's evaluation and considerations: {exc}"
        warning = note if warning is None else f"{warning}; {note}"
    stones = frozenset(piece.as_tuple() for piece in decision.pieces)
    return Send(packet, warning, encoded), stones


# dump_packet of a MoveResponsePacket with two pieces and nothing else.
_PLAIN_MOVE_RESPONSE = (
    b'{"type":"move_response","move":{"pieces":[{"q":%d,"r":%d},{"q":%d,"r":%d}]}}'
)


def _plainly_legal(position: Position, decision: MoveDecision) -> bool:
    """A quick yes for the common answer: 2 distinct ``Coord`` stones, each legal before
    either is placed (the second then stays legal after the first, which only adds a
    stone, and a first stone that wins needs the second to have been playable). False
    means "ask ``move_problem``", which also says why."""
    pieces = decision.pieces
    if type(pieces) is not tuple or len(pieces) != 2:
        return False
    first, second = pieces
    return (
        type(first) is Coord
        and type(second) is Coord
        and (first.q != second.q or first.r != second.r)
        and position.is_legal(first.q, first.r)
        and position.is_legal(second.q, second.r)
    )


def _eval_answer(job: ThinkJob, result: object, trouble: str | None) -> Send:
    if isinstance(result, PositionEvaluation):
        try:
            packet = EvalResponsePacket(evaluation=result)
            return Send(packet, encoded=dump_packet(packet))
        except (ValidationError, TypeError, ValueError) as exc:
            trouble = f"the evaluation cannot be encoded: {exc}"
    elif trouble is None:
        trouble = f"the bot answered {type(result).__name__}, not a PositionEvaluation"
    warning = f"job {job.job_id}: {trouble}; sent an empty evaluation"
    return Send(EvalResponsePacket(evaluation=PositionEvaluation()), warning)


# -------------------------------------------------------------------- helpers


def _read_match(value: object) -> Match:
    try:
        return parse_body(Match, json.dumps(value))
    except (ProtocolError, TypeError, ValueError) as exc:
        raise InvalidMatchError(
            f"config '{MATCH_CONFIG_KEY}' is not valid match settings: {exc}"
        ) from None


def _is_standard(board: Board) -> bool:
    return len(board.cells) == 1 and board.cells[0] == Cell(q=0, r=0, p=Player.X)


def stones_of_board(board: Board, where: str) -> dict[Hex, Side]:
    """The stones of a ``board`` packet field by cell; two stones on one cell raise
    ``ImpossibleBoardError`` naming ``where``. Shared with the desktop client's seat."""
    stones: dict[Hex, Side] = {}
    for cell in board.cells:
        key = (cell.q, cell.r)
        if key in stones:
            raise ImpossibleBoardError(f"impossible board: {where} has two stones on {key}")
        stones[key] = cell.p.value
    return stones


def request_stones(packet: MoveRequestPacket, confirmed: dict[Hex, Side]) -> dict[Hex, Side]:
    """The stones of a move request: its ``board`` when it has one, else the
    ``confirmed`` board (not changed) plus the moves of ``previous``. A stone twice on
    a cell raises ``ImpossibleBoardError``. Shared with the desktop client's seat."""
    if packet.board is not None:
        return stones_of_board(packet.board, "move_request.board")
    stones = dict(confirmed)
    for index, move in enumerate(packet.previous):
        _add_previous_move(stones, move, index)
    return stones


def _add_previous_move(stones: dict[Hex, Side], move: Move, index: int) -> None:
    """Put ``move`` (``previous[index]`` of a move request) on ``stones``; a stone on a
    taken cell raises ``ImpossibleBoardError``."""
    for piece in move.pieces:
        cell = piece.as_tuple()
        taken = stones.get(cell)
        if taken is not None:
            raise ImpossibleBoardError(
                f"impossible board: move_request.previous[{index}] puts {move.side.value} on "
                f"{cell}, which already holds {taken}"
            )
        stones[cell] = move.side.value


def _check_alternation(packet: MoveRequestPacket, next_mover: Player | None) -> None:
    """Moves of ``previous`` then the requested side alternate, starting with
    ``next_mover`` when it is known."""
    rule = "moves alternate unless the bot declares 'free_move_order'"
    movers = [move.side for move in packet.previous] + [packet.side]
    if next_mover is not None and movers[0] is not next_mover:
        what = "previous starts with" if packet.previous else "the request is for"
        raise MoveOrderError(
            f"move_request: {next_mover.value} is due to move, but {what} {movers[0].value}; {rule}"
        )
    for index, (earlier, later) in enumerate(pairwise(movers)):
        if earlier is later:
            what = f"previous[{index + 1}]" if index + 1 < len(packet.previous) else "the request"
            raise MoveOrderError(
                f"move_request: {what} is for {later.value} right after a move by "
                f"{earlier.value}; {rule}"
            )


def _same_move(move: Move, answer: _Answer) -> bool:
    return move.side is answer.side and {p.as_tuple() for p in move.pieces} == answer.pieces


def _guess_to_move(stones: dict[Hex, Side]) -> Player:
    crosses = sum(1 for side in stones.values() if side == "x")
    return Player.O if crosses > len(stones) - crosses else Player.X


def _pieces(decision: MoveDecision) -> str:
    """The stones of a move as ``[(q, r), ...]``, whatever a bot put in it."""
    try:
        return str([p.as_tuple() if isinstance(p, Coord) else p for p in decision.pieces])
    except TypeError:
        return repr(decision.pieces)


def _describe_move(move: Move) -> str:
    return f"{move.side.value} {sorted(piece.as_tuple() for piece in move.pieces)}"


def _describe_board(board: Board) -> str:
    shown = ", ".join(f"{cell.p.value} ({cell.q}, {cell.r})" for cell in board.cells[:4])
    more = f" and {len(board.cells) - 4} more" if len(board.cells) > 4 else ""
    return f"[{shown}{more}]" if board.cells else "an empty board"


def _game_over(packet: EndPacket) -> str:
    if packet.winner is None:
        result = "draw"
    else:
        result = f"{packet.winner.value} won by {packet.reason.value}"
    detail = packet.detail.value if isinstance(packet.detail, EndCause) else packet.detail
    return f"game over: {result}" + (f" ({detail})" if detail is not None else "")

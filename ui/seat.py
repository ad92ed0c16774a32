"""A human's seat at the game server, as a pure state machine (no I/O, no Qt, no clock).

To the server a person is a bot: the client connects to ``/ws?token=...`` and speaks the
bot protocol (``../shared/protocol.md``). ``HumanSeat`` is that protocol's bot side for a
person, shaped like ``bot.session.BotSession`` but driven by clicks instead of a search:
``receive`` turns each frame into events for the window, and ``answer`` turns the two
cells the person chose into the ``move_response`` to send. Nothing here waits.

>>> seat = HumanSeat("o")
>>> seat.receive('{"type": "setup"}')
[SeatStarted(stones={(0, 0): 'x'})]
>>> [request] = seat.receive('{"type": "move_request", "side": "o", "previous": []}')
>>> request.side, len(request.legal), seat.awaiting
('o', 216, True)
>>> seat.answer((1, 0), (2, 0))
'{"type":"move_response","move":{"pieces":[{"q":1,"r":0},{"q":2,"r":0}]}}'
>>> seat.answer((3, 0), (4, 0))
Traceback (most recent call last):
...
ui.seat.NotYourTurnError: it is not your turn: wait for the server to ask for a move

How the open points are settled
-------------------------------

*Board.* ``setup`` gives the start position; each ``move_request`` carries the whole
board (our extension), which is trusted. A request without ``board`` (a server that
does not send it) adds the stones of ``previous`` to the board known so far, as
``bot.session`` does. After ``answer`` the seat's ``position`` already holds the person's
stones, so the window can show them before the server confirms them.

*Match settings.* The server sends a person no ``config``, so the view and win
distances come from the ``match`` given to the constructor (the client created the game
and knows them), else the defaults. A ``config`` carrying ``x-match`` before ``setup``
is honoured too.

*The first stone wins.* The server ends the game on a winning first stone and ignores
the second, but a bot's ``move_response`` still carries two pieces. So when ``first``
alone completes a line, ``answer(first, None)`` sends it with any other legal cell.

*Heartbeats.* ``waiting: true`` while no request is pending is the spec's error state,
except for those that crossed the person's answer on the wire: after an answer, every
heartbeat still says ``waiting: true`` until the server has read it, and the first
``waiting: false`` marks that moment. A ``waiting: true`` after it, with no request
pending, is a ``Violation``.

*Order.* One ``setup``, before any request; one request at a time; requests only for
the seat's side (the token's, else the first request's). ``eval_request`` and
``interrupt`` go only to bots that declare them, never to a person. Anything else out of
order, or malformed, is a ``Violation``: the client should close the socket with 1002
(``models.CLOSE_PROTOCOL_ERROR``) and the reason. ``nope`` is a ``Refused`` (the server
closes the socket after it; the ``end`` that may follow is still reported); ``end`` is
``GameEnded``. After the game is over or a violation, frames are ignored.

*People against people* (the queue's games, ``docs/extensions.md``): ``resign`` gives
the ``{"type": "resign"}`` frame that ends the game at once (the ``end`` follows, cause
``resign``), and an ``opponent_status`` packet — the opponent dropped
(``connected: false``, with ``reconnect_by_ms``, the milliseconds they have to come back)
or came back — is an ``OpponentStatus`` event, whatever the turn.

>>> seat = HumanSeat("x")
>>> seat.receive('{"type":"opponent_status","side":"o","connected":false,'
...              '"reconnect_by_ms":60000}')
[OpponentStatus(side='o', connected=False, reconnect_ms=60000)]
>>> seat.resign()
'{"type":"resign"}'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from pydantic import BaseModel, ValidationError

# The bot's state machine already reads boards and moves into stone maps, refusing
# impossible ones; the person's seat reads them the same way.
from bot.session import SessionError, request_stones, stones_of_board
from game.hexgrid import Hex, distance
from game.rules import (
    GameOverError,
    IllegalMoveError,
    InvalidSetupError,
    OccupiedCellError,
    OutOfViewError,
    Position,
    Side,
    Termination,
)
from models import (
    MATCH_CONFIG_KEY,
    SERVER_PACKETS,
    ConfigPacket,
    Coord,
    EndPacket,
    EvalRequestPacket,
    HeartbeatPacket,
    InterruptPacket,
    Match,
    Move,
    MoveOption,
    MoveRequestPacket,
    MoveResponsePacket,
    NopePacket,
    OpponentStatusPacket,
    Player,
    SetupPacket,
    dump_packet,
)
from ui.frames import UnreadableFrame, read_frame

__all__ = [
    "CellOutOfViewError",
    "CellTakenError",
    "GameEnded",
    "GameFinishedError",
    "HeartbeatSeen",
    "HumanSeat",
    "IllegalStoneError",
    "MoveRequested",
    "NotYourTurnError",
    "OpponentStatus",
    "Refused",
    "SeatError",
    "SeatEvent",
    "SeatStarted",
    "SecondStoneMissingError",
    "Violation",
    "cell_text",
]


# ------------------------------------------------------------------------ errors


class SeatError(Exception):
    """A move the person cannot make now; the message says why, in words for them."""


class NotYourTurnError(SeatError):
    """No ``move_request`` is pending: it is the opponent's turn, or the game has not
    started."""


class GameFinishedError(SeatError):
    """The game is over (or the server refused the seat): no more moves."""


class IllegalStoneError(SeatError):
    """A stone the rules do not allow; ``reason`` says why, ``cell`` is the stone (None
    when a stone is missing)."""

    def __init__(self, reason: str, cell: Hex | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.cell = cell


class CellTakenError(IllegalStoneError):
    """The cell already holds a stone (or is the move's first stone)."""


class CellOutOfViewError(IllegalStoneError):
    """The cell is farther than ``view_distance`` from every stone."""


class SecondStoneMissingError(IllegalStoneError):
    """Only one stone was given, and it does not win the game on its own."""


# ------------------------------------------------------------------------ events


@dataclass(frozen=True)
class SeatStarted:
    """The ``setup`` arrived: the start position."""

    stones: dict[Hex, str]


@dataclass(frozen=True)
class MoveRequested:
    """The server waits for the person's move: ``side`` to play two stones on ``legal``
    cells (for the first of them). ``time_limit_s`` is the request's own limit, if any;
    the clocks are both sides' remaining milliseconds in a timed game. ``previous``
    holds the moves made since the last request, the opponent's last."""

    side: str
    stones: dict[Hex, str]
    legal: frozenset[Hex]
    time_limit_s: float | None
    clock_x_ms: int | None
    clock_o_ms: int | None
    previous: list[Move]


@dataclass(frozen=True)
class HeartbeatSeen:
    """A heartbeat: the connection is alive; ``waiting`` says the server waits for us."""

    waiting: bool


@dataclass(frozen=True)
class GameEnded:
    """The ``end`` packet: the result, its cause and the final board."""

    packet: EndPacket


@dataclass(frozen=True)
class Refused:
    """A ``nope``: the server refused this seat's last packet and closes the socket."""

    reason: str


@dataclass(frozen=True)
class Violation:
    """The server broke the protocol: close the socket with 1002 and ``reason``."""

    reason: str


@dataclass(frozen=True)
class OpponentStatus:
    """The opponent (a person) dropped (``connected`` False: ``reconnect_ms`` is how
    long they have to come back, None if the server did not say) or came back."""

    side: str
    connected: bool
    reconnect_ms: int | None


SeatEvent: TypeAlias = (
    SeatStarted | MoveRequested | HeartbeatSeen | GameEnded | Refused | Violation | OpponentStatus
)


class _OutOfOrder(Exception):
    """A packet the protocol does not allow now; becomes a ``Violation``."""


# -------------------------------------------------------------------------- seat


class HumanSeat:
    """One person's seat in one game, over one WebSocket.

    ``token_side`` is the side the token was issued for (``"x"`` or ``"o"``), when
    known: a request for the other side is then a violation. ``match`` gives the view
    and win distances that legal cells and winning stones are judged by.

    State, for the window: ``side`` (the seat's side, once known), ``awaiting`` (a
    request is pending: the person may move), ``position`` (the current board as a
    ``game.rules.Position``, None before ``setup``), ``over`` (the game ended, the server
    refused the seat, or it broke the protocol), ``heartbeats`` (how many arrived) and
    ``last_heartbeat_waiting``.
    """

    def __init__(self, token_side: str | None = None, *, match: Match | None = None) -> None:
        self.side: str | None = None if token_side is None else Player(token_side).value
        self.match: Match = match if match is not None else Match()
        self.awaiting = False
        self.position: Position | None = None
        self.over = False
        self.heartbeats = 0
        self.last_heartbeat_waiting: bool | None = None
        #: The person resigned: the game ends as soon as the server reads it.
        self.resigned = False
        self._token_side = self.side
        self._stones: dict[Hex, Side] | None = None  # the board as the server last told it
        self._request: MoveRequestPacket | None = None
        self._refused = False
        # An answer was sent and no ``waiting: false`` heartbeat has been seen since:
        # ``waiting: true`` heartbeats may still be crossing the answer on the wire.
        self._answer_in_flight = False

    # ----------------------------------------------------------------- inputs

    def receive(self, text: str | bytes) -> list[SeatEvent]:
        """One frame from the server -> events. Never raises: a malformed or
        out-of-order packet is a ``Violation`` (and the seat is over)."""
        if self.over and not self._refused:
            return []
        try:
            packet = read_frame(text, SERVER_PACKETS, "the server")
        except UnreadableFrame as error:
            return self._violation(str(error))
        if self._refused:
            # After a nope only the end of the game is news; the socket is closing.
            return self._on_end(packet) if isinstance(packet, EndPacket) else []
        try:
            return self._dispatch(packet)
        except (_OutOfOrder, SessionError) as exc:
            return self._violation(str(exc))

    def answer(self, first: Hex, second: Hex | None) -> str:
        """The ``move_response`` (JSON text) for the person's two stones.

        Raises ``GameFinishedError``, ``NotYourTurnError`` or an ``IllegalStoneError``
        (``CellTakenError``, ``CellOutOfViewError``, ``SecondStoneMissingError``) saying
        why the move cannot be sent; the seat is then unchanged. When ``first`` alone
        completes a line, ``second`` may be None: the game ends on the first stone, and
        any other legal cell is sent as the second, which the server ignores.
        """
        if self.over or self.resigned:
            raise GameFinishedError("the game is over: no more moves")
        if not self.awaiting or self.position is None:
            raise NotYourTurnError("it is not your turn: wait for the server to ask for a move")
        trial = self.position.copy()
        before = self.position
        _place(trial, first, "first")
        if _won(trial):
            if second is None:
                second = _any_other_legal(before, first)
            elif second == first:
                raise CellTakenError(f"{cell_text(second)} is your first stone", second)
            elif not before.is_legal(*second):
                raise _stone_error(before, second, "second")
        elif second is None:
            raise SecondStoneMissingError("choose a second stone")
        else:
            if second == first:
                raise CellTakenError(f"{cell_text(second)} is your first stone", second)
            _place(trial, second, "second")
        packet = MoveResponsePacket(
            move=MoveOption(pieces=[Coord(q=first[0], r=first[1]), Coord(q=second[0], r=second[1])])
        )
        self.position = trial
        self.awaiting = False
        self._request = None
        self._answer_in_flight = True
        return dump_packet(packet).decode()

    def resign(self) -> str:
        """The ``resign`` frame: the person gives the game up. Raises
        ``GameFinishedError`` once the game is over or resigned; no move can be made
        afterwards, and the server's ``end`` is reported as usual."""
        if self.over or self.resigned:
            raise GameFinishedError("the game is over: there is nothing to resign")
        self.resigned = True
        self.awaiting = False
        self._request = None
        return '{"type":"resign"}'

    def winning_first_stone(self, cell: Hex) -> bool:
        """Whether ``cell`` as the first stone of the pending move completes a line."""
        position = self.position
        if not self.awaiting or position is None or not position.is_legal(*cell):
            return False
        trial = position.copy()
        trial.place(*cell)
        return _won(trial)

    @property
    def stones(self) -> dict[Hex, str]:
        """The stones of ``position`` (empty before ``setup``)."""
        if self.position is None:
            return {}
        return {(q, r): side for q, r, side in self.position.stones}

    # ---------------------------------------------------------------- packets

    def _dispatch(self, packet: BaseModel) -> list[SeatEvent]:
        match packet:
            case HeartbeatPacket():
                return self._on_heartbeat(packet)
            case MoveRequestPacket():
                return self._on_move_request(packet)
            case SetupPacket():
                return self._on_setup(packet)
            case ConfigPacket():
                return self._on_config(packet)
            case EndPacket():
                return self._on_end(packet)
            case NopePacket():
                self.over = True
                self._refused = True
                self.awaiting = False
                self._request = None
                return [Refused(packet.reason)]
            case OpponentStatusPacket():
                return [OpponentStatus(packet.side.value, packet.connected, packet.reconnect_by_ms)]
            case EvalRequestPacket() | InterruptPacket():
                raise _OutOfOrder(
                    f"{packet.type}: the server sent a packet only bots that declare "
                    f"{'evaluation' if packet.type == 'eval_request' else 'interruptible'} get"
                )
        raise _OutOfOrder(f"{type(packet).__name__} is not a packet a seat receives")

    def _on_config(self, packet: ConfigPacket) -> list[SeatEvent]:
        if self._stones is not None:
            raise _OutOfOrder("config after setup: settings come before the game starts")
        settings = packet.extensions().get(MATCH_CONFIG_KEY)
        if settings is not None:
            try:
                self.match = Match.model_validate(settings)
            except ValidationError as exc:
                problems = "; ".join(error["msg"] for error in exc.errors(include_url=False))
                raise _OutOfOrder(f"config '{MATCH_CONFIG_KEY}' is not valid: {problems}") from None
        return []

    def _on_setup(self, packet: SetupPacket) -> list[SeatEvent]:
        if self._stones is not None:
            raise _OutOfOrder("a second setup: the server sends one setup, before any request")
        stones = stones_of_board(packet.board, "setup.board")
        to_move = "o" if stones == {(0, 0): "x"} else _guess_to_move(stones)
        self.position = self._position(stones, to_move, "setup.board")
        self._stones = stones
        return [SeatStarted(dict(stones))]

    def _on_move_request(self, packet: MoveRequestPacket) -> list[SeatEvent]:
        if self._stones is None:
            raise _OutOfOrder("move_request before setup")
        if self._request is not None:
            raise _OutOfOrder("move_request while the one before it is unanswered")
        side = packet.side.value
        if self.side is not None and side != self.side:
            raise _OutOfOrder(f"move_request for {side}, but this seat plays {self.side}")
        stones = request_stones(packet, self._stones)
        position = self._position(stones, side, "move_request.board")
        self.side = side
        self._stones = stones
        self.position = position
        if self.resigned:  # crossed the resignation on the wire: nothing to answer
            return []
        self._request = packet
        self.awaiting = True
        self._answer_in_flight = False
        return [
            MoveRequested(
                side=side,
                stones=dict(stones),
                legal=frozenset(position.legal_cells()),
                time_limit_s=packet.move_time_limit,
                clock_x_ms=packet.clock_x_ms,
                clock_o_ms=packet.clock_o_ms,
                previous=list(packet.previous),
            )
        ]

    def _on_heartbeat(self, packet: HeartbeatPacket) -> list[SeatEvent]:
        if (
            packet.waiting
            and not self.awaiting
            and not self._answer_in_flight
            and not self.resigned
        ):
            raise _OutOfOrder(
                "heartbeat: the server says it is waiting for a move, but it asked for none "
                "(an error state: per the spec, the seat closes the connection)"
            )
        if not packet.waiting:
            self._answer_in_flight = False
        self.heartbeats += 1
        self.last_heartbeat_waiting = packet.waiting
        return [HeartbeatSeen(packet.waiting)]

    def _on_end(self, packet: EndPacket) -> list[SeatEvent]:
        self.over = True
        self._refused = False
        self.awaiting = False
        self._request = None
        if packet.board is not None:
            self.position = self._final_position(packet)
        return [GameEnded(packet)]

    # --------------------------------------------------------------- helpers

    def _position(self, stones: dict[Hex, Side], to_move: str, where: str) -> Position:
        try:
            return Position(
                self.match.view_distance,
                self.match.win_distance,
                setup=[(q, r, side) for (q, r), side in stones.items()],
                to_move=to_move,
            )
        except InvalidSetupError as exc:
            raise _OutOfOrder(f"impossible board in {where}: {exc}") from None

    def _final_position(self, packet: EndPacket) -> Position | None:
        """The final board as a position whose ``outcome`` shows the winning line: the
        stones new since the last known board are played in order (the end board lists
        stones in the order placed), so the rules find the line. A board that cannot be
        replayed so is shown as it is, without an outcome."""
        assert packet.board is not None
        cells = [((cell.q, cell.r), cell.p.value) for cell in packet.board.cells]
        if self.position is not None:
            replay = self.position.copy()
            known = {(q, r) for q, r, _ in replay.stones}
            try:
                for cell, side in cells:
                    if cell in known:
                        continue
                    if side != replay.to_move:
                        break
                    replay.place(*cell)
                else:
                    if len(replay) == len(cells):
                        return replay
            except IllegalMoveError:
                pass
        try:
            return Position(
                self.match.view_distance,
                self.match.win_distance,
                setup=[(q, r, side) for (q, r), side in cells],
                reject_setup_lines=False,
            )
        except (InvalidSetupError, ValueError):
            return self.position

    def _violation(self, reason: str) -> list[SeatEvent]:
        self.over = True
        self.awaiting = False
        self._request = None
        return [Violation(reason)]


def _place(position: Position, cell: Hex, which: str) -> None:
    try:
        position.place(*cell)
    except IllegalMoveError:
        raise _stone_error(position, cell, which) from None


def _stone_error(position: Position, cell: Hex, which: str) -> IllegalStoneError:
    """The error for an illegal ``which`` ("first"/"second") stone on ``cell``."""
    try:
        position.copy().place(*cell)
    except OccupiedCellError:
        return CellTakenError(f"{cell_text(cell)} is already taken", cell)
    except OutOfViewError:
        view = position.view_distance
        return CellOutOfViewError(
            f"{cell_text(cell)} is out of view: more than {view} cells from every stone", cell
        )
    except GameOverError:
        return IllegalStoneError("the first stone already won the game", cell)
    except IllegalMoveError as exc:
        return IllegalStoneError(f"the {which} stone cannot go on {cell_text(cell)}: {exc}", cell)
    return IllegalStoneError(f"the {which} stone cannot go on {cell_text(cell)}", cell)


def _won(position: Position) -> bool:
    outcome = position.outcome
    return outcome is not None and outcome.termination is Termination.LINE


def _any_other_legal(position: Position, first: Hex) -> Hex:
    """A legal cell for the (ignored) second stone of a winning move: the nearest to the
    first, so the answer reads naturally in a log."""
    candidates = [cell for cell in position.legal_cells() if cell != first]
    if not candidates:  # cannot happen on a real board: the first stone has neighbours
        raise SecondStoneMissingError("choose a second stone")
    return min(candidates, key=lambda cell: (distance(cell, first), cell))


def _guess_to_move(stones: dict[Hex, Side]) -> str:
    crosses = sum(1 for side in stones.values() if side == "x")
    return "o" if crosses > len(stones) - crosses else "x"


def cell_text(cell: Hex) -> str:
    """A cell as the person's messages write it, in the protocol's ``[q,r]`` form.

    >>> cell_text((2, -1))
    '[2,-1]'
    """
    return f"[{cell[0]},{cell[1]}]"

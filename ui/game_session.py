"""What the controller holds about the shown game: the session, its human seats and
the position on the board, and what follows from them alone (the connection in words,
the seat to move, the seat to resign, the position to show, the end in words, whether
to reopen a dropped socket). Nothing here touches a widget or a socket;
``ui.controller.GameController`` acts on it.

A ``Session`` is replaced wholesale when another game is shown, so a late packet of the
previous game can never touch the new one: every socket callback checks that its session
is still the shown one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from game.hexgrid import Hex
from models import CLOSE_POLICY_VIOLATION, EndPacket, Match, NewGameRequest
from ui.arena_client import ArenaClient
from ui.game_model import GameModel
from ui.player_text import describe_result
from ui.seat import HumanSeat, MoveRequested, SeatError
from ui.socket_link import SocketLink

__all__ = [
    "RECONNECT_DELAYS_S",
    "GiveUp",
    "SeatLink",
    "SeatOfflineError",
    "Session",
    "ShownPosition",
    "after_drop",
]

#: Seconds to wait before each reconnection attempt of a dropped socket.
RECONNECT_DELAYS_S: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)


class GiveUp(Enum):
    """Why a dropped socket is not opened again."""

    #: Closed with 1008: the server will not take it back (an unknown game or token).
    REFUSED = "refused"
    #: Every attempt of ``RECONNECT_DELAYS_S`` has been made.
    EXHAUSTED = "exhausted"


def after_drop(code: int, attempts: int) -> float | GiveUp:
    """The wait (seconds) before opening again a socket that closed with ``code``
    after ``attempts`` reconnections so far, or why it is not opened again.

    >>> after_drop(1006, 0)
    0.5
    >>> after_drop(1008, 0)
    <GiveUp.REFUSED: 'refused'>
    >>> after_drop(1006, len(RECONNECT_DELAYS_S))
    <GiveUp.EXHAUSTED: 'exhausted'>
    """
    if code == CLOSE_POLICY_VIOLATION:
        return GiveUp.REFUSED
    if attempts >= len(RECONNECT_DELAYS_S):
        return GiveUp.EXHAUSTED
    return RECONNECT_DELAYS_S[attempts]


class SeatOfflineError(SeatError):
    """The seat's socket is not open (it dropped and is being retaken): nothing the
    person does can reach the server now."""


@dataclass(frozen=True)
class ShownPosition:
    """What the controller last put on the board (the board keeps it privately)."""

    index: int = 0
    stones: dict[Hex, str] = field(default_factory=dict)
    last_move: tuple[Hex, ...] = ()
    winning_line: tuple[Hex, ...] = ()
    legal: frozenset[Hex] | None = None
    interactive_side: str | None = None


@dataclass
class SeatLink:
    """One human seat: its protocol state machine and its socket."""

    side: str
    token: str
    seat: HumanSeat
    link: SocketLink | None = None
    request: MoveRequested | None = None
    attempts: int = 0
    connected: bool = False
    #: The client gave up on this seat's socket for good (refused, or every
    #: reconnection failed): the person no longer plays from this screen.
    lost: bool = False
    #: Given up because the server refused the token (closed with 1008: unknown, used
    #: up, or the seat taken over by another connection), not for want of a connection.
    refused: bool = False


@dataclass
class Session:
    """Everything tied to the shown game; replaced wholesale when another is shown, so
    a late packet of the previous game can never touch the new one."""

    model: GameModel
    client: ArenaClient | None = None
    request: NewGameRequest | None = None
    seats: list[SeatLink] = field(default_factory=list)
    spectator: SocketLink | None = None
    spectator_attempts: int = 0
    spectator_connected: bool = False
    #: The client gave up on the spectator socket for good.
    spectator_lost: bool = False
    #: The spectator stream has told something of the game (its ``setup`` at least).
    heard: bool = False
    closed: bool = False

    @classmethod
    def live(
        cls,
        client: ArenaClient,
        game_id: str,
        match: Match | None = None,
        *,
        tokens: Iterable[tuple[str, str]] = (),
        request: NewGameRequest | None = None,
    ) -> Session:
        """A running game on ``client``'s server, not yet connected: a model for the
        spectator stream to fill and a human seat for each ``(side, token)``."""
        model = GameModel(match)
        model.game_id = game_id
        seats = [
            SeatLink(side=side, token=token, seat=HumanSeat(side, match=match))
            for side, token in tokens
        ]
        return cls(model=model, client=client, request=request, seats=seats)

    def connection_state(self, *, reconnecting: bool = False) -> tuple[str, bool]:
        """The connection in words for the panel and the status bar, and whether all is
        well: "Connected as O", "Watching live", "Reconnecting…", "Disconnected"...
        A seat given up on while the spectator stream still carries the game says so:
        the game is watched, not played, from here ("Watching live · seat of O refused").
        """
        if reconnecting:
            return "Reconnecting\u2026", False
        if self.model.result is not None:
            return "Game over \u00b7 connection closed", True
        if self.cut_off:
            return "Disconnected", False
        connected = [e.side.upper() for e in self.seats if e.connected]
        if connected:
            return f"Connected as {' and '.join(connected)}", True
        if any(not e.lost and not e.seat.over for e in self.seats):
            return "Connecting\u2026", True
        if self.spectator_connected:
            dropped = [e for e in self.seats if e.lost]
            if not dropped:
                return "Watching live", True
            how = "refused" if all(e.refused for e in dropped) else "lost"
            seats = _seats_text([e.side.upper() for e in dropped])
            return f"Watching live \u00b7 {seats} {how}", False
        return "Connecting\u2026", True

    def active_seat(self) -> SeatLink | None:
        """The human seat the server is waiting for, if any."""
        for entry in self.seats:
            if entry.seat.awaiting and entry.request is not None and not entry.seat.over:
                return entry
        return None

    @property
    def playing(self) -> bool:
        """Whether a person at this screen holds a seat in this game, and it runs (as
        far as this screen knows: not once the connection is lost for good)."""
        return (
            self.model.result is None
            and not self.model.stream_lost
            and any(_seated(entry) for entry in self.seats)
        )

    @property
    def known(self) -> bool:
        """Whether the shown game is one the client knows to exist: a record, or a game
        the server has begun to show or seated a person of this screen in (its
        ``setup``); not a game id or seat token still being tried (the model is then a
        blank placeholder, its players "Player X" and "Player O"): a token for a game
        that does not exist is refused, and nothing of that game is to be shown."""
        return (
            self.client is None
            or self.heard
            or any(entry.seat.position is not None for entry in self.seats)
        )

    @property
    def cut_off(self) -> bool:
        """Whether the client has given up on every socket of this live game: nothing
        more of it will arrive (a seat whose game is over needs none)."""
        spectator_gone = self.spectator is None or self.spectator_lost
        return (
            self.client is not None
            and spectator_gone
            and all(entry.lost or entry.seat.over for entry in self.seats)
        )

    def lost_message(self, reason: str) -> str:
        """What losing the connection for good means to the person at this screen:
        a seat they held is lost by forfeit; a watcher can open the game again. (Not a seat
        the server refused: its token was unknown, or another connection holds it.)"""
        sides = [
            e.side.upper()
            for e in self.seats
            if e.lost and not e.refused and not e.seat.over and not e.seat.resigned
        ]
        if sides:
            detail = f" ({reason})" if reason else ""
            return (
                f"Lost the connection to the server{detail}; the {_seats_text(sides)} could "
                "not be taken back and the game will be lost by forfeit."
            )
        detail = f": {reason}" if reason else ""
        return (
            f"Lost the connection to the server{detail}. Open the game again from "
            "Game \u203a Browse games to keep watching."
        )

    def refused_message(self, side: str, reason: str) -> str:
        """What the server's refusal of the seat of ``side`` means to the person at this
        screen: its reason, and, while the spectator stream is not given up on, that
        the game goes on shown to them as to any watcher."""
        detail = f": {reason}" if reason else ""
        text = f"The server refused the seat of {side.upper()}{detail}."
        if not self.spectator_lost:
            text += " You are watching the game, not playing in it."
        return text

    def seat_to_resign(self) -> SeatLink | None:
        """The seat a resignation is for: the one still playing, or of two people at
        one screen the one to move (else the first); None when no seat may resign."""
        playing = [e for e in self.seats if _seated(e)]
        if len(playing) > 1:
            playing = [e for e in playing if e.seat.awaiting] or playing[:1]
        if not playing or self.model.result is not None or self.model.stream_lost:
            return None
        return playing[0]

    def shown_at(self, index: int) -> ShownPosition:
        """What the board shows after ``index`` moves (clamped to the latest): the
        stones, the last move, the winning line and the legal cells, and at the latest
        position the side of the human seat to move (input goes to it)."""
        model = self.model
        latest = len(model.moves)
        index = min(index, latest)
        at_latest = index == latest
        stones, last = self.position_at(index)
        active = self.active_seat() if at_latest else None
        legal: frozenset[Hex] | None
        if active is not None and active.request is not None:
            legal = active.request.legal
        else:
            # A seat's board ahead of the stream has no legal set of the model's.
            legal = model.legal_at(index) if len(stones) == len(model.stones_at(index)) else None
        winning_line = model.winning_line() if at_latest else ()
        side = active.side if active is not None else None
        return ShownPosition(index, stones, last, winning_line, legal or None, side)

    def end_message(self, packet: EndPacket) -> tuple[str, str] | None:
        """The panel message for the game's end (its ``end`` packet applied to the
        model) and its level, "error" for a forfeit the person at this screen
        suffered and "info" for any other; None for a plain end the board shows."""
        result = self.model.result
        if result is None or (result.cause is None and packet.detail is None):
            return None
        text = describe_result(result, self.model.player_x, self.model.player_o)
        detail = packet.detail if isinstance(packet.detail, str) else None
        if detail and packet.cause is None:
            text += f" ({detail})"
        losers = {entry.side for entry in self.seats}
        human_lost = (
            len(losers) == 1 and result.winner is not None and (result.winner.value not in losers)
        )
        return text, "error" if human_lost else "info"

    def position_at(self, index: int) -> tuple[dict[Hex, str], tuple[Hex, ...]]:
        """The stones to show after ``index`` moves (clamped to the latest) and the
        last move's stones. At the latest position of a running game, a human seat's
        board is shown when it is ahead of the spectator stream (a ``move_request``
        arrived first, or the person's own answer is on its way)."""
        model = self.model
        latest = len(model.moves)
        index = min(index, latest)
        stones = model.stones_at(index)
        last = model.last_move_at(index)
        if index == latest and model.result is None:
            for entry in self.seats:
                seat_stones = entry.seat.stones
                if not entry.seat.over and len(seat_stones) > len(stones):
                    new = tuple(cell for cell in seat_stones if cell not in stones)
                    stones, last = seat_stones, new or last
        return stones, last


def _seats_text(sides: list[str]) -> str:
    """ "seat of O", "seats of X and O"."""
    return f"seat of {sides[0]}" if len(sides) == 1 else f"seats of {' and '.join(sides)}"


def _seated(entry: SeatLink) -> bool:
    """Whether ``entry``'s person still plays: not over, not resigned, not given up on."""
    return not entry.seat.over and not entry.seat.resigned and not entry.lost

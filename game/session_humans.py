"""What only human seats do in a game session: drop and come back within the
reconnect window, hear about the opponent's drop and return, and resign.

``HumanSeats`` is a base of ``game.session.GameSession`` (over ``SessionEnding``); the
session calls these methods from its inputs. A bot's socket that drops forfeits at once
(``disconnect``); a person's gets ``limits.reconnect_s`` seconds:

* When a human seat drops, its opponent, if that is a connected human seat too, gets
  ``opponent_status`` (``connected: false`` and ``reconnect_by_ms``, the milliseconds
  left of the window); when the seat is back, ``connected: true``. A person who comes
  back while the opponent is away hears of it at once. Bots never get this packet.
* ``resign`` from a human seat ends the game at once, whoever is to move: the opponent
  wins by forfeit, cause ``resign`` (the end goes to both seats, no ``nope``). The
  notation writes it ``endreason[resign]``.

>>> from models import Match
>>> from game.session import GameSession, SeatInfo
>>> people = {Player.X: SeatInfo("human", name="ann"), Player.O: SeatInfo("human", name="bo")}
>>> game = GameSession("g1", Match(), people, started_at=0.0)
>>> _ = game.seat_connected(Player.X, 0.1), game.seat_connected(Player.O, 0.2)
>>> [(a.side.value, a.packet) for a in game.seat_disconnected(Player.O, 1.0)]
[('x', OpponentStatusPacket(type='opponent_status', side=<Player.O: 'o'>, \
connected=False, reconnect_by_ms=60000))]
>>> [(a.side.value, a.packet.type) for a in game.seat_connected(Player.O, 5.0)]
[('o', 'setup'), ('o', 'move_request'), ('x', 'opponent_status')]
>>> _ = game.receive(Player.X, '{"type": "resign"}', 6.0)
>>> game.result.winner.value, game.result.cause.value, game.result.detail
('o', 'resign', 'x resigned')
"""

from __future__ import annotations

import math

from game.seat_errors import SeatDisconnectError, SeatProtocolError
from game.session_actions import Action, SendTo
from game.session_ending import SessionEnding
from models import EndCause, GameResult, OpponentStatusPacket, Player, ResultReason

__all__ = ["HumanSeats"]


class HumanSeats(SessionEnding):
    """The human seats' part of a game session (see the module docstring)."""

    def _human_dropped(self, side: Player, now: float) -> list[Action]:
        """A human seat's connection dropped: its window opens, the opponent is told."""
        seat = self._seats[side]
        seat.reconnect_by = now + self.limits.reconnect_s
        return self._tell_opponent(side, now)

    def _human_back(self, side: Player, now: float) -> list[Action]:
        """A human seat reconnected (after the start): the opponent is told, and this
        seat hears of an opponent who is away itself."""
        actions = self._tell_opponent(side, now)
        other = self._seats[side.other]
        if other.info.kind == "human" and other.reconnect_by is not None:
            actions.append(SendTo(side, self._status_of(side.other, now)))
        return actions

    def _check_reconnect_windows(self, now: float) -> None:
        """A dropped human whose window has passed forfeits with ``disconnect``."""
        for side, seat in self._seats.items():
            if seat.reconnect_by is not None and now >= seat.reconnect_by:
                raise SeatDisconnectError(
                    side,
                    f"{side.value} dropped{seat.dropped_because} and did not reconnect "
                    f"within {self.limits.reconnect_s:g} s",
                )

    def _resign(self, side: Player, now: float) -> list[Action]:
        """``side`` gives the game up: the opponent wins, cause ``resign``."""
        if self._seats[side].info.kind != "human":
            raise SeatProtocolError(side, "resign is for human seats")
        result = GameResult(winner=side.other, reason=ResultReason.FORFEIT, cause=EndCause.RESIGN)
        return self._finish(result, f"{side.value} resigned", now)

    # ---------------------------------------------------------------- helpers

    def _tell_opponent(self, side: Player, now: float) -> list[Action]:
        """``opponent_status`` about ``side`` to its opponent, if that is a connected
        human seat and ``side`` is a human seat."""
        other = self._seats[side.other]
        if self._seats[side].info.kind != "human" or other.info.kind != "human":
            return []
        if not other.connected:
            return []
        return [SendTo(side.other, self._status_of(side, now))]

    def _status_of(self, side: Player, now: float) -> OpponentStatusPacket:
        reconnect_by = self._seats[side].reconnect_by
        if reconnect_by is None:
            return OpponentStatusPacket(side=side, connected=True)
        left_ms = max(math.ceil((reconnect_by - now) * 1000), 0)
        return OpponentStatusPacket(side=side, connected=False, reconnect_by_ms=left_ms)

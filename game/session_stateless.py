"""What only stateless seats do in a game session: a turn is one request that the
adapter posts to the bot (``RequestStatelessTurn``), and its answer, or the exception
the post ended with, comes back as one input.

``StatelessSeats`` is a base of ``game.session.GameSession`` (over ``HumanSeats``); the
session calls these methods from its inputs. A stateless seat has no socket: it counts
as present from the start, gets no packets, and nothing it could send is read.

*Stateless errors.* ``stateless_answer`` takes a ``StatelessMoveResponse`` or the
exception the adapter caught: ``TimeoutError`` is ``timeout``, ``ConnectionError`` /
``OSError`` is ``disconnect``, anything else (``ProtocolError``, an HTTP 4xx/5xx) is
``protocol_error``. An answer nobody waits for (a late one after a forfeit, say) is
ignored.

>>> from models import Match
>>> from game.session import GameSession, SeatInfo
>>> bots = {side: SeatInfo("bot_stateless") for side in Player}
>>> game = GameSession("g1", Match(clock_type="turn", clock=5), bots, started_at=0.0)
>>> [(type(a).__name__, a.side.value, a.time_limit) for a in game.timer(now=0.0)[:1]]
[('RequestStatelessTurn', 'o', 5.0)]
>>> _ = game.stateless_answer(Player.O, ConnectionRefusedError("refused"), now=1.0)
>>> game.result.cause.value, game.result.detail
('disconnect', 'o forfeits: the stateless turn lost its connection \
(ConnectionRefusedError: refused)')
"""

from __future__ import annotations

from game.seat_errors import stateless_failure
from game.session_actions import RequestStatelessTurn
from game.session_humans import HumanSeats
from game.session_packets import stateless_turn
from models import Player, StatelessBoard, StatelessMoveResponse

__all__ = ["StatelessSeats"]


class StatelessSeats(HumanSeats):
    """The stateless seats' part of a game session (see the module docstring)."""

    def _stateless_request(self, side: Player, now: float) -> RequestStatelessTurn:
        """The request of the stateless turn ``side`` owes from ``now``: the full board,
        ``time_limit`` if its bot declares it, and the seconds until the flag for the
        adapter's HTTP timeout."""
        seat = self._seats[side]
        board = self._board.board_as(StatelessBoard, to_move=side)
        deadline = self._timer.deadline()
        flag_in = None if deadline is None else max(deadline - now, 0.0)
        return stateless_turn(side, seat.info, board, self._timer.time_left(side, now), flag_in)

    def _stateless_reply(
        self, side: Player, answer: StatelessMoveResponse | BaseException
    ) -> StatelessMoveResponse | None:
        """The move to play of a stateless answer from ``side``; None if nobody waits
        for it (the adapter's request outlived its turn). An exception is the seat's
        forfeit, raised."""
        if self._seats[side].info.kind != "bot_stateless" or self.awaiting is not side:
            return None
        if isinstance(answer, BaseException):
            raise stateless_failure(side, answer)
        return answer

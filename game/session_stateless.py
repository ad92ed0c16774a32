"""What only stateless seats do in a game session: a turn is one request that the
adapter posts to the bot (``RequestStatelessTurn``), and its answer, or the exception
the post ended with, comes back as one input; so does each try the adapter made again.

``StatelessSeats`` is a base of ``game.session.GameSession`` (over ``HumanSeats``); the
session calls these methods from its inputs. A stateless seat has no socket: it counts
as present from the start, gets no packets, and nothing it could send is read.

*Stateless errors.* ``stateless_answer`` takes a ``StatelessMoveResponse`` or the
exception the adapter caught: ``TimeoutError`` is ``timeout``, ``ConnectionError`` /
``OSError`` is ``disconnect``, anything else (``ProtocolError``, an HTTP 4xx/5xx) is
``protocol_error``. An answer nobody waits for (a late one after a forfeit, say) is
ignored.

*Failed tries.* The adapter tries a turn again after a failure that may pass (no
connection, an HTTP 502, 503 or 504: ``game.stateless_retry``) while the turn's time
allows, and tells the session of each such try (``stateless_try_failed``). Nothing
changes then; but if the seat's clock or stall limit runs out before an answer comes
(the last try hangs, say), its forfeit keeps its cause, ``timeout`` or ``stall``, and
says that the bot was not reached: ``o forfeits: o ran out of time; its bot was not
reached (2 failed tries, the last: StatelessHttpError: ... HTTP 503 ...)``. The tries
are the turn's: a new turn starts without any, and an answer that comes (late, say)
forgets them, since the bot was reached. A try that fails for good is no such report:
it is the turn's answer, the exception, which ends the seat with its own cause.

>>> from models import Match
>>> from game.session import GameSession, SeatInfo
>>> bots = {side: SeatInfo("bot_stateless") for side in Player}
>>> game = GameSession("g1", Match(clock_type="turn", clock=5), bots, started_at=0.0)
>>> [(type(a).__name__, a.side.value, a.time_limit) for a in game.timer(now=0.0)[:1]]
[('RequestStatelessTurn', 'o', 5.0)]
>>> _ = game.stateless_try_failed(Player.O, ConnectionRefusedError("refused"), now=1.0)
>>> _ = game.timer(now=5.0)  # O's clock runs out while its bot is tried again
>>> game.result.cause.value, game.result.detail
('timeout', 'o forfeits: o ran out of time; its bot was not reached \
(1 failed try, the last: ConnectionRefusedError: refused)')
"""

from __future__ import annotations

from game.seat_errors import FailedTries, stateless_failure
from game.session_actions import Action, RequestStatelessTurn
from game.session_humans import HumanSeats
from game.session_packets import stateless_turn
from models import Player, StatelessBoard, StatelessMoveResponse

__all__ = ["StatelessSeats"]


class StatelessSeats(HumanSeats):
    """The stateless seats' part of a game session (see the module docstring)."""

    def _stateless_request(self, side: Player, now: float) -> RequestStatelessTurn:
        """The request of the stateless turn ``side`` owes from ``now``: the full board,
        ``time_limit`` if its bot declares it, and the seconds until the flag for the
        adapter's HTTP timeout. A new turn: no try of it has failed yet."""
        seat = self._seats[side]
        seat.failed_tries = None
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
        if not self._awaits_stateless(side):
            return None
        if isinstance(answer, BaseException):
            raise stateless_failure(side, answer)
        self._seats[side].failed_tries = None  # reached after all: a late answer is late
        return answer

    def _on_stateless_try_failed(self, side: Player, error: BaseException) -> list[Action]:
        """A try of the turn of ``side`` failed with ``error`` and is made again: kept
        for the reason of a flag (nothing else changes)."""
        if not self._awaits_stateless(side):
            return []  # late or stray: from a turn the session has moved past
        seat = self._seats[side]
        tries = seat.failed_tries
        seat.failed_tries = FailedTries.first(error) if tries is None else tries.then(error)
        return []

    def _awaits_stateless(self, side: Player) -> bool:
        """Whether ``side`` is a stateless seat whose answer is awaited now."""
        return self._seats[side].info.kind == "bot_stateless" and self.awaiting is side

"""How long a game session waits: for an answer (``AnswerTimer``: the game's clock and
the stall limit) and between heartbeats (``HeartbeatGrid``). Pure: time comes in as
``now`` (monotonic seconds), as everywhere in ``game.session``.

*Clocks and the stall limit.* ``game.clock.GameClock`` times each move, one clock per
side (the game's ``Match`` clock, or the seat's own ``TimeControl``); its flag is cause
``timeout``. Whatever the clock (``none`` or a huge one), a seat that has owed an
answer for the stall limit forfeits with cause ``stall``, so every wait for an answer
has a finite bound, humans' included. The earlier of the two deadlines decides (the
clock's on a tie), and ``move_time_limit`` is the time until it: in a game without a
clock too, where it is the stall limit. Both count from the move's request (a human's
split move owes one answer, however many requests it takes) until its answer. The
seat's round trip is the grace added to both deadlines and is subtracted from the time
charged.

>>> from models import Match, Player
>>> timer = AnswerTimer(Match(clock_type="match", clock=1e6), stall_s=300.0)
>>> timer.start(Player.O, now=10.0, grace=0.5)
>>> timer.deadline(), timer.time_left(Player.O, now=10.0)
(310.5, 300.0)
>>> timer.check(now=310.5)
Traceback (most recent call last):
...
game.seat_errors.SeatStallError: no answer within the stall limit of 300 s
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from game.clock import GameClock
from game.seat_errors import SeatStallError, SeatTimeoutError
from models import Match, Player, TimeControl

__all__ = ["AnswerTimer", "HeartbeatGrid"]

# Both sides, by name: iterating the enum costs more than the snapshot itself.
_X, _O = Player.X, Player.O


class AnswerTimer:
    """The clocks of both sides, and the stall limit (seconds, ``None``: no bound) of
    the answer being awaited.

    Each side has a ``GameClock`` of its own: the game's ``match`` clock, or the seat's
    ``TimeControl`` from ``seat_clocks`` when it has one. A seat's ``stall_limit`` there
    can only make its stall limit stricter: the seat gets the smaller of it and
    ``stall_s``.

    >>> from models import TimeControl
    >>> timer = AnswerTimer(Match(clock_type="match", clock=60), stall_s=300.0,
    ...                     seat_clocks={Player.O: TimeControl.parse("turn=5")})
    >>> timer.snapshot(now=0.0), timer.time_left(Player.O, now=0.0)
    ({<Player.X: 'x'>: 60000, <Player.O: 'o'>: 5000}, 5.0)
    """

    def __init__(
        self,
        match: Match,
        *,
        stall_s: float | None,
        seat_clocks: Mapping[Player, TimeControl | None] | None = None,
    ) -> None:
        own = dict(seat_clocks or {})
        # The stall limit is applied here, for every clock type, not by the clock.
        self._clocks = {
            side: GameClock(own.get(side) or match, stall_limit=None) for side in Player
        }
        self._stall = {side: _stricter(stall_s, own.get(side)) for side in Player}
        self.stall_s = stall_s
        self._running: Player | None = None
        self._asked_at = 0.0
        self._grace = 0.0

    @property
    def running(self) -> Player | None:
        """The side whose answer is being timed, if any."""
        return self._running

    def stall_limit(self, side: Player) -> float | None:
        """``side``'s stall limit in seconds: the server's, or the seat's if stricter."""
        return self._stall[side]

    def start(self, side: Player, now: float, *, grace: float = 0.0) -> None:
        """``side`` owes an answer from ``now``; ``grace`` (its round trip) extends
        both deadlines."""
        if self._running is not None:  # the clock of the side running says it best
            self._clocks[self._running].start(side, now, grace=grace)
        self._clocks[side].start(side, now, grace=grace)
        self._running = side
        self._asked_at = now
        self._grace = grace

    def stop(self, now: float, *, rtt: float = 0.0) -> int:
        """The answer came (or the game ended) at ``now``: the thinking time charged, in
        ms (see ``GameClock.stop``)."""
        # Without a running side, any clock raises ClockNotRunning: X's does.
        charged = self._clocks[self._running or Player.X].stop(now, rtt=rtt)
        self._running = None
        return charged

    def deadline(self) -> float | None:
        """When the running side forfeits for want of an answer: its clock's flag or
        the stall limit, whichever comes first; None when nothing runs or unbounded."""
        side = self._running
        if side is None:
            return None
        deadlines = (self._clocks[side].deadline(), self._stall_deadline(side))
        return min((d for d in deadlines if d is not None), default=None)

    def check(self, now: float) -> None:
        """Raise the running side's forfeit if ``now`` is past its deadline:
        ``SeatTimeoutError`` (its clock) or ``SeatStallError`` (the stall limit)."""
        side = self._running
        if side is None:
            return
        flag, stall = self._clocks[side].deadline(), self._stall_deadline(side)
        if flag is not None and now >= flag and (stall is None or flag <= stall):
            raise SeatTimeoutError(side, f"{side.value} ran out of time")
        if stall is not None and now >= stall:
            limit = self._stall[side]
            raise SeatStallError(side, f"no answer within the stall limit of {limit:g} s")

    def time_left(self, side: Player, now: float) -> float | None:
        """Seconds ``side`` has left for its answer (live), for ``move_time_limit`` and
        the stateless ``time_limit``: its clock's time, or the time until the stall limit
        when that comes first, as it does in a game without a clock (a deadline that is
        enforced is told); None only when nothing bounds the answer. Never 0 (the wire
        wants a positive number): 1 ms at least.

        >>> timer = AnswerTimer(Match(), stall_s=300.0)  # no clock: the stall limit
        >>> timer.start(Player.O, now=10.0)
        >>> timer.time_left(Player.O, now=10.0), timer.time_left(Player.O, now=70.0)
        (300.0, 240.0)
        """
        remaining = self.remaining_ms(side, now)
        stall_s = self._stall[side]
        if side is self._running and stall_s is not None:
            stall_left_ms = round((self._asked_at + stall_s - now) * 1000)
            if remaining is None or stall_left_ms < remaining:
                remaining = stall_left_ms
        if remaining is None:
            return None
        return max(remaining, 1) / 1000

    def remaining_ms(self, side: Player, now: float | None = None) -> int | None:
        """The side's clock, in ms (see ``GameClock.remaining_ms``)."""
        return self._clocks[side].remaining_ms(side, now)

    def snapshot(self, now: float) -> dict[Player, int | None]:
        """Both clocks at ``now``, in ms, for packets and spectators."""
        clocks = self._clocks
        return {_X: clocks[_X].remaining_ms(_X, now), _O: clocks[_O].remaining_ms(_O, now)}

    def _stall_deadline(self, side: Player) -> float | None:
        stall_s = self._stall[side]
        if stall_s is None:
            return None
        return self._asked_at + stall_s + self._grace


def _stricter(server_s: float | None, own: TimeControl | None) -> float | None:
    """The stall limit of a seat: the server's, or the seat's own when it is smaller."""
    seat_s = None if own is None else own.stall_limit
    limits = [s for s in (server_s, seat_s) if s is not None]
    return min(limits, default=None)


class HeartbeatGrid:
    """Heartbeats every ``interval`` seconds from ``start``, on one grid for the whole
    game: a late check sends one heartbeat, not a burst.

    >>> grid = HeartbeatGrid(start=0.0, interval=5.0)
    >>> grid.next_at, grid.due(now=4.0), grid.due(now=17.0), grid.next_at
    (5.0, False, True, 20.0)
    """

    def __init__(self, *, start: float, interval: float) -> None:
        self._interval = interval
        self.next_at = start + interval

    def due(self, now: float) -> bool:
        """Whether a heartbeat is due at ``now``; if so, the next one is scheduled at
        the first point of the grid after ``now``."""
        if now < self.next_at:
            return False
        missed = math.floor((now - self.next_at) / self._interval) + 1
        self.next_at += missed * self._interval
        return True

"""How long a game session waits: for an answer (``AnswerTimer``: the game's clock and
the stall limit) and between heartbeats (``HeartbeatGrid``). Pure: time comes in as
``now`` (monotonic seconds), as everywhere in ``game.session``.

*Clocks and the stall limit.* ``game.clock.GameClock`` times each move; its flag is
cause ``timeout``. Whatever the clock (``none`` or a huge one), a seat that has owed an
answer for the stall limit forfeits with cause ``stall``, so every wait for an answer
has a finite bound, humans' included. The earlier of the two deadlines decides (the
clock's on a tie), and ``move_time_limit`` is the time until it. Both count from the
move's request (a human's split move owes one answer, however many requests it takes)
until its answer. The seat's round trip is the grace added to both deadlines and is
subtracted from the time charged.

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

from game.clock import GameClock
from game.seat_errors import SeatStallError, SeatTimeoutError
from models import Match, Player

__all__ = ["AnswerTimer", "HeartbeatGrid"]


class AnswerTimer:
    """The clocks of both sides, and the stall limit (seconds, ``None``: no bound) of
    the answer being awaited."""

    def __init__(self, match: Match, *, stall_s: float | None) -> None:
        # The stall limit is applied here, for every clock type, not by the clock.
        self._clock = GameClock(match, stall_limit=None)
        self.stall_s = stall_s
        self._asked_at = 0.0
        self._grace = 0.0

    @property
    def running(self) -> Player | None:
        """The side whose answer is being timed, if any."""
        return self._clock.running

    def start(self, side: Player, now: float, *, grace: float = 0.0) -> None:
        """``side`` owes an answer from ``now``; ``grace`` (its round trip) extends
        both deadlines."""
        self._clock.start(side, now, grace=grace)
        self._asked_at = now
        self._grace = grace

    def stop(self, now: float, *, rtt: float = 0.0) -> int:
        """The answer came (or the game ended) at ``now``: the thinking time charged, in
        ms (see ``GameClock.stop``)."""
        return self._clock.stop(now, rtt=rtt)

    def deadline(self) -> float | None:
        """When the running side forfeits for want of an answer: its clock's flag or
        the stall limit, whichever comes first; None when nothing runs or unbounded."""
        if self._clock.running is None:
            return None
        deadlines = (self._clock.deadline(), self._stall_deadline())
        return min((d for d in deadlines if d is not None), default=None)

    def check(self, now: float) -> None:
        """Raise the running side's forfeit if ``now`` is past its deadline:
        ``SeatTimeoutError`` (its clock) or ``SeatStallError`` (the stall limit)."""
        side = self._clock.running
        if side is None:
            return
        flag, stall = self._clock.deadline(), self._stall_deadline()
        if flag is not None and now >= flag and (stall is None or flag <= stall):
            raise SeatTimeoutError(side, f"{side.value} ran out of time")
        if stall is not None and now >= stall:
            raise SeatStallError(side, f"no answer within the stall limit of {self.stall_s:g} s")

    def time_left(self, side: Player, now: float) -> float | None:
        """Seconds ``side`` has left for its answer (live), for ``move_time_limit``: its
        clock's time, or less when the stall limit comes first; None without a clock.
        Never 0 (the wire wants a positive number): 1 ms at least."""
        remaining = self._clock.remaining_ms(side, now)
        if remaining is None:
            return None
        if side is self._clock.running and self.stall_s is not None:
            stall_left_ms = round((self._asked_at + self.stall_s - now) * 1000)
            remaining = min(remaining, stall_left_ms)
        return max(remaining, 1) / 1000

    def remaining_ms(self, side: Player, now: float | None = None) -> int | None:
        """The side's clock, in ms (see ``GameClock.remaining_ms``)."""
        return self._clock.remaining_ms(side, now)

    def snapshot(self, now: float) -> dict[Player, int | None]:
        """Both clocks at ``now``, in ms, for packets and spectators."""
        return self._clock.snapshot(now)

    def _stall_deadline(self) -> float | None:
        if self.stall_s is None:
            return None
        return self._asked_at + self.stall_s + self._grace


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

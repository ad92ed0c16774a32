"""Pure game clocks: ``none``, ``turn``, ``match`` and ``incremental``.

No asyncio and no time calls here: every method that needs the time takes ``now``, in
monotonic seconds (``time.monotonic()`` or ``loop.time()`` at the edge). The session
asks the clock for a ``deadline()``, arms one timer for it, and calls ``stop`` when the
move arrives or ``flagged`` when the timer fires.

The four kinds (``Match.clock_type``; ``Match.clock`` and ``Match.increment`` are in
seconds):

- ``none``: nothing is shown, but a server-wide *stall limit* (``stall_limit``, default
  ``DEFAULT_STALL_LIMIT`` = 300 s, ``None`` to disable) bounds every turn, so a silent
  bot cannot hold a game forever. It ends the game with ``EndCause.STALL``.
- ``turn``: ``clock`` seconds for every move; unused time is not carried over.
- ``match``: ``clock`` seconds per side for the whole game.
- ``incremental``: ``clock`` seconds per side, plus ``increment`` after each move.

The time charged for a move excludes the measured network round trip (``rtt``, from a
WebSocket ping), so network jitter never costs a game; the same round trip may be
given to ``start`` as ``grace``, which pushes the deadline back without ever being
shown as time. Times are kept in integer milliseconds, so sums are exact.

>>> from models import Match, Player
>>> clock = GameClock(Match(clock_type="incremental", clock=60, increment=2))
>>> clock.start(Player.O, now=100.0, grace=0.05)
>>> clock.remaining_ms(Player.O, now=110.0)       # live count-down
50000
>>> clock.deadline()                               # 60 s + the 50 ms grace
160.05
>>> clock.stop(now=110.25, rtt=0.05)               # 10.25 s minus the round trip
10200
>>> clock.snapshot(now=111.0)                      # 60 - 10.2 + 2
{<Player.X: 'x'>: 60000, <Player.O: 'o'>: 51800}
"""

from __future__ import annotations

import math

from models import MAX_CLOCK_SECONDS, ClockType, EndCause, Match, Player, TimeControl

__all__ = [
    "DEFAULT_STALL_LIMIT",
    "ClockAlreadyRunning",
    "ClockError",
    "ClockNotRunning",
    "ClockTimeError",
    "GameClock",
]

#: Seconds a side may think in a ``none`` game before it forfeits with ``stall``.
DEFAULT_STALL_LIMIT = 300.0


class ClockError(Exception):
    """A clock was used out of order or given an impossible time; subclasses say which."""


class ClockNotRunning(ClockError):
    """``stop`` was called while no side's turn was being timed."""


class ClockAlreadyRunning(ClockError):
    """``start`` was called while a side's turn was already being timed."""


class ClockTimeError(ClockError, ValueError):
    """A time that cannot be: not finite, negative, or earlier than the turn's start."""


def _ms(seconds: float) -> int:
    """Seconds to whole milliseconds, to the nearest: float noise (0.3 * 1000 is
    299.99999999999994) must not cost a millisecond."""
    return round(seconds * 1000)


def _check_seconds(name: str, value: float) -> None:
    if not math.isfinite(value) or value < 0:
        raise ClockTimeError(f"{name} must be a finite number of seconds >= 0, got {value!r}")


class GameClock:
    """The clocks of both sides of one game.

    ``match`` is the game's ``Match`` or one seat's ``TimeControl`` (the same clock
    fields): a game whose seats have different clocks has one ``GameClock`` per seat
    (``game.session_timing.AnswerTimer``).

    ``stall_limit`` (seconds, or ``None`` for no limit) only applies to ``none`` games:
    the other kinds are bounded by their own time. ``flag_cause`` says which cause a
    flag ends the game with.

    >>> from models import Match, Player
    >>> clock = GameClock(Match(clock_type="turn", clock=5))
    >>> clock.remaining_ms(Player.X)                   # full allowance while idle
    5000
    >>> clock.start(Player.X, now=10.0)
    >>> clock.flagged(now=14.999), clock.flagged(now=15.0)
    (False, True)
    >>> clock.stop(now=12.0)
    2000
    >>> clock.remaining_ms(Player.X)                   # a new turn, a new allowance
    5000
    >>> stalling = GameClock(Match(), stall_limit=300)
    >>> stalling.remaining_ms(Player.O) is None        # nothing is shown ...
    True
    >>> stalling.start(Player.O, now=0.0)
    >>> stalling.deadline(), stalling.flag_cause       # ... but a turn is bounded
    (300.0, <EndCause.STALL: 'stall'>)
    >>> stalling.stop(now=1.0)
    1000
    >>> stalling.stop(now=2.0)
    Traceback (most recent call last):
    ...
    game.clock.ClockNotRunning: stop: no turn is being timed (call start first)
    """

    def __init__(
        self, match: Match | TimeControl, *, stall_limit: float | None = DEFAULT_STALL_LIMIT
    ) -> None:
        if stall_limit is not None:
            _check_seconds("stall_limit", stall_limit)
        # Match bounds both; a Match built without validation must not overflow here.
        for name, seconds in (("clock", match.clock), ("increment", match.increment)):
            if seconds is not None and not 0 <= seconds <= MAX_CLOCK_SECONDS:
                raise ClockTimeError(
                    f"{name} must be from 0 to {MAX_CLOCK_SECONDS} seconds, got {seconds!r}"
                )
        self._kind: ClockType = match.clock_type
        self.stall_limit = stall_limit
        # Match guarantees ``clock`` for every kind but "none".
        self._allowance_ms = _ms(match.clock) if match.clock is not None else 0
        self._increment_ms = _ms(match.increment) if self._kind == "incremental" else 0
        self._remaining: dict[Player, int] = {side: self._allowance_ms for side in Player}
        self._running: Player | None = None
        self._started = 0.0
        self._grace = 0.0

    def __repr__(self) -> str:
        running = f", running {self._running.value}" if self._running else ""
        if self._kind == "none":
            return f"<GameClock none, stall limit {self.stall_limit}{running}>"
        times = ", ".join(f"{side.value} {ms} ms" for side, ms in self._remaining.items())
        return f"<GameClock {self._kind}: {times}{running}>"

    # ------------------------------------------------------------------ state

    @property
    def kind(self) -> ClockType:
        """``"none"``, ``"turn"``, ``"match"`` or ``"incremental"``."""
        return self._kind

    @property
    def running(self) -> Player | None:
        """The side whose turn is being timed, if any."""
        return self._running

    @property
    def flag_cause(self) -> EndCause:
        """How a flag ends the game: ``stall`` in a ``none`` game, ``timeout`` otherwise."""
        return EndCause.STALL if self._kind == "none" else EndCause.TIMEOUT

    # ---------------------------------------------------------------- events

    def start(self, side: Player, now: float, *, grace: float = 0.0) -> None:
        """``side``'s turn starts at ``now``. ``grace`` (seconds, e.g. the measured round
        trip) extends this turn's deadline but is never shown or charged."""
        if self._running is not None:
            raise ClockAlreadyRunning(
                f"start({side.value}): {self._running.value}'s turn is still being timed "
                "(call stop first)"
            )
        if not math.isfinite(now):
            raise ClockTimeError(f"start({side.value}): now must be finite, got {now!r}")
        _check_seconds("grace", grace)
        self._running = side
        self._started = now
        self._grace = grace

    def stop(self, now: float, *, rtt: float = 0.0) -> int:
        """End the running turn at ``now``; returns the thinking time charged, in ms:
        the time elapsed minus ``rtt`` (the round trip of the answer), never below 0.

        ``match`` and ``incremental`` deduct it from the side's time (never below 0),
        then ``incremental`` adds the increment. ``turn`` and ``none`` keep nothing.
        """
        side = self._running
        if side is None:
            raise ClockNotRunning("stop: no turn is being timed (call start first)")
        _check_seconds("rtt", rtt)
        self._check_not_before_start("stop", now)
        charged = max(0, _ms(now - self._started - rtt))
        if self._kind in ("match", "incremental"):
            left = max(0, self._remaining[side] - charged)
            self._remaining[side] = left + self._increment_ms
        self._running = None
        self._grace = 0.0
        return charged

    # ---------------------------------------------------------------- queries

    def remaining_ms(self, side: Player, now: float | None = None) -> int | None:
        """Time ``side`` has left, in ms (``None`` in a ``none`` game; never negative).

        For ``turn`` this is the time left in the current turn, the full allowance when
        the side is not running. With ``now``, the running side's time counts down live
        (without the grace); without it, the time at the start of the turn is shown.
        """
        if self._kind == "none":
            return None
        base = self._allowance_ms if self._kind == "turn" else self._remaining[side]
        if now is None or side is not self._running:
            return base
        self._check_not_before_start("remaining_ms", now)
        return max(0, base - _ms(now - self._started))

    def deadline(self) -> float | None:
        """The monotonic time at which the running side flags: its start + its time +
        its grace. ``None`` when nothing runs, or in a ``none`` game without a stall
        limit."""
        if self._running is None:
            return None
        if self._kind == "none":
            if self.stall_limit is None:
                return None
            return self._started + self.stall_limit + self._grace
        remaining = self.remaining_ms(self._running)
        assert remaining is not None  # not a "none" game
        return self._started + remaining / 1000 + self._grace

    def flagged(self, now: float) -> bool:
        """Whether the running side is out of time at ``now`` (exactly at the deadline
        counts as out). False when nothing runs."""
        deadline = self.deadline()
        return deadline is not None and now >= deadline

    def snapshot(self, now: float) -> dict[Player, int | None]:
        """Remaining time of each side at ``now``, in ms, for packets and spectators."""
        return {side: self.remaining_ms(side, now) for side in Player}

    def move_time_limit(self, side: Player) -> float | None:
        """Seconds ``side`` may use for its next move, for ``move_request.move_time_limit``
        and the stateless ``time_limit``: ``None`` in a ``none`` game. Never 0 (the wire
        wants a positive number): a side with no time left is told 1 ms.

        >>> from models import Match, Player
        >>> GameClock(Match(clock_type="match", clock=90)).move_time_limit(Player.O)
        90.0
        """
        remaining = self.remaining_ms(side)
        if remaining is None:
            return None
        return max(remaining, 1) / 1000

    def _check_not_before_start(self, what: str, now: float) -> None:
        if not math.isfinite(now) or now < self._started:
            raise ClockTimeError(
                f"{what}: now={now!r} is before the turn started at {self._started!r}"
            )

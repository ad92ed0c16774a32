"""When a stateless turn's ``POST .../turn`` that failed is sent again: a pure policy,
no I/O (``StatelessRetry``); ``game.stateless_seat.StatelessSeat`` only loops on
it.

A stateless bot that restarts, or whose reverse proxy answers 502/503/504 during a
deploy, is briefly unreachable; forfeiting it on the first try would cost a game for a
second's outage, where a websocket bot that cannot be dialled is dialled again until
the no-show limit (``game.running``). ``/turn`` is stateless, so sending it again is
safe. Retried, while the turn's own deadline allows:

* a connection that could not be opened (refused, unreachable, unresolved) or that
  broke before any answer (reset, closed: a kept-alive connection the bot's server
  closed as the request went out) -- ``CONNECTION_FAILED``;
* an answer of HTTP 502, 503 or 504 (``failure_of_status``), after its
  ``Retry-After`` if that says a few seconds.

Anything else (another status, an answer that is not a move, a bad TLS certificate)
is final at once. The first retry goes out at once (the kept-alive case is answered at
once on a fresh connection), then 0.1 s apart, doubling up to 2 s: the websocket dial's
backoff. A bot that has failed for ``give_up_after`` seconds in a row (the no-show
limit: 30 s by default) is not asked again, whatever its clock says.

>>> retry = StatelessRetry()
>>> [retry.delay(CONNECTION_FAILED, tries, failing_for=0.0, time_left=60.0)
...  for tries in (1, 2, 3, 7)]
[0.0, 0.1, 0.2, 2.0]
>>> retry.delay(failure_of_status(503, "1"), 2, failing_for=0.0, time_left=60.0)
1.0
>>> retry.delay(failure_of_status(404, None), 1, failing_for=0.0, time_left=60.0) is None
True
>>> retry.delay(CONNECTION_FAILED, 3, failing_for=0.0, time_left=0.15) is None  # flags first
True
>>> no_outages = StatelessRetry(give_up_after=0.0)
>>> [no_outages.delay(CONNECTION_FAILED, tries, failing_for=0.01, time_left=60.0)
...  for tries in (1, 2)]
[0.0, None]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

__all__ = [
    "CONNECTION_FAILED",
    "FINAL",
    "RETRIED_STATUSES",
    "StatelessRetry",
    "TurnFailure",
    "failure_of_status",
    "retry_after_seconds",
]

#: Statuses a gateway answers while the bot behind it is away for a moment.
RETRIED_STATUSES: Final = frozenset({502, 503, 504})


@dataclass(frozen=True)
class TurnFailure:
    """One failed try of a turn, as the policy sees it: whether another may pass
    (``transient``), and the seconds the bot asked to be left alone (``Retry-After``)."""

    transient: bool
    retry_after: float | None = None


#: No connection, or one that broke before any answer.
CONNECTION_FAILED: Final = TurnFailure(transient=True)
#: A failure no retry can mend.
FINAL: Final = TurnFailure(transient=False)


def retry_after_seconds(value: str | None) -> float | None:
    """The seconds a ``Retry-After`` header asks for, when it gives them as a number
    (an HTTP date, or anything else, is None: the backoff stands).

    >>> retry_after_seconds("3"), retry_after_seconds(" 0 "), retry_after_seconds(None)
    (3.0, 0.0, None)
    >>> retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT"), retry_after_seconds("-1")
    (None, None)
    """
    if value is None:
        return None
    text = value.strip()
    return float(int(text)) if text.isascii() and text.isdecimal() else None


def failure_of_status(status: int, retry_after: str | None) -> TurnFailure:
    """A try answered with HTTP ``status`` (not 200), its ``Retry-After`` header given.

    >>> failure_of_status(502, None), failure_of_status(500, "1").transient
    (TurnFailure(transient=True, retry_after=None), False)
    """
    if status not in RETRIED_STATUSES:
        return FINAL
    return TurnFailure(transient=True, retry_after=retry_after_seconds(retry_after))


@dataclass(frozen=True)
class StatelessRetry:
    """How long to wait before trying a failed turn again, or whether to give up.

    ``first_backoff`` doubles with each retry after the first (which is at once) up to
    ``max_backoff``; a ``Retry-After`` is waited out instead when longer, up to
    ``max_retry_after`` (a turn cannot wait for a longer one anyway);
    ``give_up_after`` bounds the seconds of failures in a row.
    """

    first_backoff: float = 0.1
    max_backoff: float = 2.0
    max_retry_after: float = 5.0
    give_up_after: float = 30.0

    def __post_init__(self) -> None:
        for name in ("first_backoff", "max_backoff", "max_retry_after", "give_up_after"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name}: expected a finite number of seconds >= 0, got {value!r}")

    def backoff(self, tries: int) -> float:
        """The wait after ``tries`` failed tries (at least 1), before any Retry-After.

        >>> [StatelessRetry().backoff(tries) for tries in range(1, 8)]
        [0.0, 0.1, 0.2, 0.4, 0.8, 1.6, 2.0]
        """
        if tries < 1:
            raise ValueError(f"tries: expected at least 1, got {tries!r}")
        if tries == 1:
            return 0.0
        # Capped before doubling too far: 2 ** tries overflows a float near 1024 tries.
        return min(self.first_backoff * 2.0 ** min(tries - 2, 64), self.max_backoff)

    def delay(
        self, failure: TurnFailure, tries: int, *, failing_for: float, time_left: float | None
    ) -> float | None:
        """Seconds to wait before the next try, or None: give up, and forfeit with this
        failure. ``tries`` is how many have failed (this one included),
        ``failing_for`` the seconds since the first of them failed, ``time_left`` the
        seconds until the turn's deadline (its flag or stall limit; None: none). A try
        that could only go out at the deadline or after it is not made: the side would
        have flagged by then.
        """
        if not failure.transient:
            return None
        wait = self.backoff(tries)
        if failure.retry_after is not None:
            wait = max(wait, min(failure.retry_after, self.max_retry_after))
        # The first retry (at once) is the kept-alive case: a connection the bot's server
        # closed as the request went out is no outage, whatever the limit on outages.
        if tries > 1 and failing_for + wait >= self.give_up_after:
            return None
        if time_left is not None and wait >= time_left:
            return None
        return wait

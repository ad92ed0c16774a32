"""A token bucket: at most ``rate`` events a second on average, ``burst`` at once.

Pure (the caller passes the time), so the limits it enforces on a connection's control
frames are tested without a clock. Refilling is computed on each ``take``, so a bucket
costs nothing between events and needs no timer.

>>> bucket = TokenBucket(rate=2.0, burst=3, now=0.0)
>>> [bucket.take(0.0) for _ in range(4)]
[True, True, True, False]
>>> bucket.take(0.5)  # one token back after half a second at 2 a second
True
"""

from __future__ import annotations

__all__ = ["TokenBucket"]


class TokenBucket:
    """``take(now)`` is true while the events so far stay within ``burst`` plus
    ``rate`` a second since the bucket was full."""

    __slots__ = ("_at", "_tokens", "burst", "rate")

    def __init__(self, *, rate: float, burst: int, now: float) -> None:
        if not rate > 0 or burst < 1:
            raise ValueError(
                f"expected rate > 0 and burst >= 1, got rate={rate!r}, burst={burst!r}"
            )
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._at = now

    def take(self, now: float) -> bool:
        """Count one event at ``now``; false if it is over the limit (nothing taken)."""
        if now > self._at:
            self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.rate)
            self._at = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True

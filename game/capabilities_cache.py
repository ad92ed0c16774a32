"""Capabilities kept while the bot says they are fresh: HTTP caching of discovery.

``game.discovery.discover`` fetches a bot's ``capabilities.json`` for every game. A bot
that answers with ``Cache-Control: max-age=N`` (``bot.serve`` sends ``max-age=5`` by
default, ``htttx-bot --capabilities-max-age``) lets a game server reuse what it read for
N seconds, as any HTTP client with a private cache may (RFC 9111): back-to-back games
of a tournament or a ladder then cost the bot one request every N seconds instead of
one a game, and the game server the fetch (about a millisecond of its CPU and more of
the game's start).

What a response allows, in seconds (``freshness_s``): ``max-age`` less the ``Age`` a
cache on the way added; nothing with ``no-store`` or ``no-cache`` (this cache does not
revalidate: it fetches again), or without ``max-age`` (no heuristic freshness: a bot
that says nothing is fetched every time, as before). ``MAX_FRESH_S`` caps it, so that
no header pins a bot's capabilities for long. The cache holds ``MAX_ENTRIES`` bots at
most, the least recently used going first.

What a cached endpoint costs: within its freshness, a bot that has stopped or changed
its capabilities is found out when its game dials it (the seat's connection fails and
the game records why), not by ``POST /game/new``'s 422.

>>> freshness_s("max-age=5"), freshness_s("public, max-age=60", age="20")
(5.0, 40.0)
>>> freshness_s("no-store, max-age=5"), freshness_s(None), freshness_s("max-age=x")
(0.0, 0.0, 0.0)
>>> cache = CapabilitiesCache()
>>> cache.keep("http://bot", "endpoint", fresh_s=5.0, now=100.0)
>>> cache.get("http://bot", now=104.0), cache.get("http://bot", now=105.0)
('endpoint', None)
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final, Generic, TypeVar

__all__ = ["MAX_ENTRIES", "MAX_FRESH_S", "CapabilitiesCache", "freshness_s"]

#: The longest a response may be reused, whatever its ``max-age``: a bot that restarts
#: with other capabilities is seen within this many seconds at worst.
MAX_FRESH_S: Final = 300.0
#: The most bots kept (a ladder's or a registry's worth); the least recently used go.
MAX_ENTRIES: Final = 1024

_T = TypeVar("_T")


def _seconds(value: str) -> float | None:
    """RFC 9111's delta-seconds: ASCII digits (quoted is tolerated, as it asks)."""
    value = value.strip().strip('"')
    # Short: int() of thousands of digits is refused, and no freshness needs them.
    if not (value.isascii() and value.isdecimal()) or len(value) > 10:
        return None
    return float(value)


def freshness_s(cache_control: str | None, age: str | None = None) -> float:
    """How long a response with these ``Cache-Control`` and ``Age`` headers may be
    reused by a private cache that never revalidates, in seconds (0: not at all),
    before ``MAX_FRESH_S``. Directive names are case-insensitive; an unreadable
    ``max-age`` counts as none."""
    if cache_control is None:
        return 0.0
    max_age: float | None = None
    for directive in cache_control.split(","):
        name, _, value = directive.partition("=")
        name = name.strip().lower()
        if name in ("no-store", "no-cache"):
            return 0.0
        if name == "max-age":
            max_age = _seconds(value)
    if max_age is None:
        return 0.0
    already = _seconds(age) if age is not None else None
    return max(0.0, max_age - (already or 0.0))


class CapabilitiesCache(Generic[_T]):
    """What discovery found for each bot URL, until its freshness runs out (see the
    module docstring). Pure: the caller says what time it is (``time.monotonic``)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_fresh_s: float = MAX_FRESH_S) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self.max_entries = max_entries
        self.max_fresh_s = max_fresh_s
        self._entries: OrderedDict[str, tuple[_T, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, bot_url: str, now: float) -> _T | None:
        """What was kept for ``bot_url``, if it is still fresh at ``now``."""
        entry = self._entries.get(bot_url)
        if entry is None:
            return None
        value, expires = entry
        if now >= expires:
            del self._entries[bot_url]
            return None
        self._entries.move_to_end(bot_url)
        return value

    def keep(self, bot_url: str, value: _T, *, fresh_s: float, now: float) -> None:
        """Keep ``value`` for ``bot_url`` for ``fresh_s`` seconds from ``now`` (at most
        ``max_fresh_s``); a response that may not be reused (0) forgets what was kept."""
        fresh_s = min(fresh_s, self.max_fresh_s)
        if fresh_s <= 0:
            self._entries.pop(bot_url, None)
            return
        self._entries[bot_url] = (value, now + fresh_s)
        self._entries.move_to_end(bot_url)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def forget(self, bot_url: str) -> None:
        """Fetch ``bot_url`` again next time (its game could not reach it)."""
        self._entries.pop(bot_url, None)

"""Whether the ladder is paused (``POST /ladder/pause`` and ``/resume``): the switch the
scheduler (``game.ladder``) reads before it pairs bots.

A single server's switch is in memory (``LocalLadderSwitch``): a restarted server runs
its ladder again. A cluster's workers share one in Redis (``game.cluster_ladder``), so
that a pause sent to any worker stops the one that schedules, and a worker that takes
the ladder over stays paused; reading or setting it may then fail while Redis is out
of reach: ``LadderSwitchUnknown``.

Pausing starts no more games; it cancels none. The games in flight play on, and the
scheduler keeps their books (and its bots' holds, ``game.bots_in_play``) as they end.

>>> import asyncio
>>> switch = LocalLadderSwitch()
>>> asyncio.run(switch.pause())
>>> switch.paused, asyncio.run(switch.read())
(True, True)
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["LadderSwitch", "LadderSwitchUnknown", "LocalLadderSwitch"]


class LadderSwitchUnknown(Exception):
    """Whether the ladder is paused cannot be read, or set, now (a cluster's Redis is out
    of reach): the message says why."""


class LadderSwitch(Protocol):
    """Whether the ladder is paused, where the scheduler reads it."""

    @property
    def paused(self) -> bool:
        """Whether the ladder is paused, as this process last read or set it."""
        ...

    async def read(self) -> bool:
        """Whether the ladder is paused now (``paused`` brought up to date);
        ``LadderSwitchUnknown`` if that cannot be told."""
        ...

    async def pause(self) -> None:
        """Pause the ladder; ``LadderSwitchUnknown`` if it cannot be (then nothing changed)."""
        ...

    async def resume(self) -> None:
        """Let the ladder run; ``LadderSwitchUnknown`` if it cannot be (nothing changed)."""
        ...


class LocalLadderSwitch:
    """A single server's switch: the scheduler is in this process, so it is a flag."""

    def __init__(self) -> None:
        self.paused = False

    async def read(self) -> bool:
        return self.paused

    async def pause(self) -> None:
        self.paused = True

    async def resume(self) -> None:
        self.paused = False

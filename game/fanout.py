"""A game's spectators: one log of built frames, a cursor per spectator, coalesced
writes (``Fanout``, ``Spectator``, ``Update``).

A packet for the spectators (a move's ``board_update``, an ``analysis``, the ``end``)
is appended once to the game's log as an ``Update``: its text and WebSocket frame, in
two variants (the full ``board_update`` of protocol.md and the compact one without
``board``, ``/spectate/<id>?board=0``), each encoded on first use, so at most once per
move and only if some spectator wants it. Appending is O(1): no spectator is touched.

Each spectator has a cursor into the log. One game-level flush writes every idle
spectator's pending slice as one socket write (the frames joined, in order; spectators
at the same cursor and variant share one joined bytes object). The first packet after a
quiet spell (no flush for ``SPECTATOR_FLUSH_S``) is flushed at once, so a normal-paced
game adds no latency; under a burst, packets accumulate and go out together when the
interval is up (one timer per game). The `end` is flushed at once.

A spectator that is not idle (its setup is still going out, a write had to wait on a
full socket buffer, its connection offers no ``FrameWriter``) is woken instead, and its
own writer task sends the pending packets one by one under the send timeout. Such a
spectator still more than ``size`` packets short of what the previous flush woke it
for is dropped (1008 "too slow"), never the game; one that keeps up takes all it is
woken for, so never is. A flush comes at least every ``size`` packets, so the log, which
keeps only what some spectator has not taken yet, holds at most about ``3 * size``.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections import deque
from collections.abc import Callable, Iterator

from wire.frames import FrameWriter, text_frame

__all__ = ["MAX_SPECTATOR_FLUSH_S", "SPECTATOR_FLUSH_S", "Fanout", "Spectator", "Update"]

#: A spectator gets at most one socket write per this many seconds (all the frames
#: since its last write, joined). A write costs about 20 us of server CPU whatever it
#: carries (on loopback, most of it the kernel's), so under a burst the interval sets
#: what a spectator costs: ``bench/web.py``, 500 compact spectators of a game of
#: instant bots (a move every 0.7 ms): 2.3x the CPU per move at 50 ms, 1.6x at 100 ms,
#: 1.2x to 1.4x at 250 ms (there its 240-move window takes two writes per spectator,
#: the first move's at once and the rest's: the floor, at any interval). A normal-paced
#: game (a move every quarter of a second or slower) gets each move written at once all
#: the same; a fast one is shown four times a second, which a viewer follows well.
SPECTATOR_FLUSH_S = 0.25
#: The most a server may set it to (``--spectator-flush``): past a second, a viewer
#: sees a fast game jerk along.
MAX_SPECTATOR_FLUSH_S = 1.0

_Encoding = bytes | Callable[[], bytes]


class Update:
    """A packet for every spectator: each variant's text and frame, built once, on
    first use. ``compact`` None: the one packet serves both variants."""

    __slots__ = ("_data", "_frames", "_shared", "_texts")

    def __init__(self, full: _Encoding, compact: _Encoding | None = None) -> None:
        self._shared = compact is None
        self._data: list[_Encoding] = [full, full if compact is None else compact]
        self._frames: list[bytes | None] = [None, None]
        self._texts: list[str | None] = [None, None]

    def _index(self, compact: bool) -> int:
        return 0 if self._shared else int(compact)

    def data(self, compact: bool = False) -> bytes:
        index = self._index(compact)
        data = self._data[index]
        if not isinstance(data, bytes):
            data = self._data[index] = data()
        return data

    def text(self, compact: bool = False) -> str:
        index = self._index(compact)
        text = self._texts[index]
        if text is None:
            text = self._texts[index] = self.data(compact).decode()
        return text

    def frame(self, compact: bool = False) -> bytes:
        index = self._index(compact)
        frame = self._frames[index]
        if frame is None:
            frame = self._frames[index] = text_frame(self.data(compact))
        return frame


class Spectator:
    """One spectator: where it is in its game's log, and what its writer task sends
    before the log (the setup, the analysis so far) and whether it closes after."""

    def __init__(
        self, size: int, write_frame: FrameWriter | None = None, *, compact: bool = False
    ) -> None:
        #: At most this many packets behind at a flush, or it is dropped.
        self.size = size
        self.write_frame = write_frame
        #: The compact stream: ``board_update`` without ``board``.
        self.compact = compact
        self.dropped = asyncio.Event()
        #: The setup of a big game, being encoded off the loop: sent before the backlog.
        self.setup: asyncio.Future[bytes] | None = None
        #: Sent after the setup and before the log: a setup already encoded, the game's
        #: ``analysis`` packets so far, or the `end` for a latecomer to a finished game.
        self.backlog: list[str] = []
        #: Nothing more comes once the log is taken: the writer task ends (then close).
        self.closed = False
        #: The writer task is sending (from its start, the setup, to each idle wait):
        #: nothing may be written past it.
        self.busy = True
        #: Set when the writer task has packets to send (or the spectator closed).
        self.wake = asyncio.Event()
        self.fanout: Fanout | None = None
        #: Absolute index in the log of the next packet to write.
        self.cursor = 0
        #: Updates still to leave out: their moves were already in this spectator's setup.
        self.skip = 0
        #: Log indices left out (skipped updates not yet passed by the cursor).
        self.excluded: set[int] = set()

    def close(self) -> None:
        self.closed = True
        self.wake.set()

    def take(self) -> list[str] | None:
        """The writer task's next packets (the pending slice of the log, as text);
        empty: nothing now; None: closed and everything taken."""
        texts = [] if self.fanout is None else self.fanout.take(self)
        if not texts and self.closed:
            return None
        return texts

    async def idle(self) -> None:
        """Wait, idle (the game may write to the socket meanwhile), until woken."""
        self.busy = False
        try:
            await self.wake.wait()
        finally:
            self.wake.clear()
            self.busy = True


class Fanout:
    """A game's spectators and its log of packets for them (see the module docstring).

    ``on_drop`` is called for a spectator too far behind (its owner drops it)."""

    def __init__(
        self, on_drop: Callable[[Spectator], None], *, flush_s: float = SPECTATOR_FLUSH_S
    ) -> None:
        self.spectators: set[Spectator] = set()
        self._on_drop = on_drop
        self._flush_s = flush_s
        self._log: deque[Update] = deque()
        self._base = 0  # absolute index of _log[0]
        self._skipping: set[Spectator] = set()
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._flushed_at = -math.inf
        self._flushed_end = 0  # the log's end at the last flush
        self._bound = 1  # the largest spectator's size: more since a flush, flush
        #: Socket writes made by flushes (for tests and benchmarks: a structural count).
        self.writes = 0
        self.flushes = 0
        self._closed = False

    @property
    def end(self) -> int:
        return self._base + len(self._log)

    def add(self, spectator: Spectator, skip: int = 0) -> None:
        """From the next packet on; ``skip``: the next updates (not analysis, not the
        `end`) show moves this spectator's setup already has."""
        spectator.fanout, spectator.cursor = self, self.end
        spectator.skip = skip
        self.spectators.add(spectator)
        self._bound = max(self._bound, spectator.size)
        if skip:
            self._skipping.add(spectator)

    def skip_next(self, spectator: Spectator) -> None:
        """``spectator`` leaves out the next update (published ``skippable``) too: for a
        relaying worker, which learns one update at a time that a spectator's setup
        already has it (``game.cluster_redis``)."""
        spectator.skip += 1
        self._skipping.add(spectator)

    def remove(self, spectator: Spectator) -> None:
        self.spectators.discard(spectator)
        self._skipping.discard(spectator)
        spectator.fanout = None
        if not self.spectators:
            self._trim()

    def publish(self, update: Update, *, skippable: bool = False, urgent: bool = False) -> None:
        """Append ``update`` to the log; flush now if the spectators have been quiet for
        the interval (or ``urgent``), else once the interval is up. ``skippable``: a
        move's update, which a spectator whose setup has the move leaves out."""
        if not self.spectators:
            return
        index = self.end
        self._log.append(update)
        if skippable and self._skipping:  # late joiners mid-action: few, and rare
            for spectator in list(self._skipping):
                spectator.skip -= 1
                if spectator.cursor == index:
                    spectator.cursor += 1
                else:
                    spectator.excluded.add(index)
                if not spectator.skip:
                    self._skipping.discard(spectator)
        if urgent or self.end - self._flushed_end > self._bound:
            self.flush()  # bounded: laggards are dropped, the log is trimmed
        elif self._timer is None:
            due = self._flushed_at + self._flush_s
            if self._loop.time() >= due:
                self.flush()
            else:
                self._timer = self._loop.call_at(due, self.flush)

    def flush(self) -> None:
        """Write each idle spectator's pending packets as one write; wake the others."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._flushed_at = self._loop.time()
        self.flushes += 1
        woken, end = self._flushed_end, self.end  # woken: what the last flush asked for
        self._flushed_end = end
        shared: dict[tuple[int, bool], bytes] = {}
        behind: list[Spectator] = []
        for spectator in self.spectators:
            cursor = spectator.cursor
            if cursor >= end:
                continue
            if spectator.busy or spectator.write_frame is None:
                # Its writer task takes the slice, unless it is still more than its
                # size behind what the last flush woke it for (a writer task keeping up
                # takes all it is woken for; an idle spectator is written all it has
                # pending, however much: it is behind only by the flush interval).
                if woken - cursor > spectator.size:
                    behind.append(spectator)
                else:
                    spectator.wake.set()
                continue
            if spectator.excluded:
                data = self._join(spectator, end)
            else:
                key = (cursor, spectator.compact)
                data = shared.get(key) or shared.setdefault(key, self._join(spectator, end))
            self.writes += 1
            if spectator.write_frame(data):
                spectator.cursor = end
                spectator.excluded.clear()
            else:  # a full socket buffer or closing: the writer task waits, timed
                spectator.busy = True
                spectator.wake.set()
        for spectator in behind:
            self._on_drop(spectator)
        self._trim()

    def take(self, spectator: Spectator) -> list[str]:
        """``spectator``'s pending packets as text, for its writer task; taken."""
        end, compact = self.end, spectator.compact
        texts = [
            update.text(compact)
            for index, update in enumerate(self._slice(spectator.cursor), spectator.cursor)
            if index not in spectator.excluded
        ]
        spectator.cursor = end
        spectator.excluded.clear()
        return texts

    def close(self) -> None:
        """Nothing more: write what is pending; each writer task ends once it has taken
        the rest (the spectators keep their place in the log until then)."""
        if self._log:
            self.flush()
        self._closed = True
        for spectator in self.spectators:
            spectator.close()
        self.spectators.clear()
        self._skipping.clear()

    def release(self) -> None:
        """Closed for good: forget ``on_drop`` (its owner holds this fanout), so the two
        do not keep each other alive. Nobody is dropped by a closed fanout."""
        self._on_drop = _keep

    def _join(self, spectator: Spectator, end: int) -> bytes:
        compact, excluded = spectator.compact, spectator.excluded
        start = spectator.cursor
        return b"".join(
            update.frame(compact)
            for index, update in enumerate(self._slice(start), start)
            if index < end and index not in excluded
        )

    def _slice(self, start: int) -> Iterator[Update]:
        return itertools.islice(self._log, max(0, start - self._base), None)

    def _trim(self) -> None:
        """Drop what every spectator has passed (a closed fanout's writers keep theirs)."""
        if self._closed or (self._timer is not None and self.spectators):
            return  # closed: the writers take the rest; a flush is due: it trims
        oldest = min((s.cursor for s in self.spectators), default=self.end)
        while self._base < oldest and self._log:
            self._log.popleft()
            self._base += 1


def _keep(_spectator: Spectator) -> None:
    """A released fanout's ``on_drop``: nothing to tell anyone."""

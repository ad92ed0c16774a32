"""The record of one running game, written in order by a task of its own.

A game (``game.running``) hands its ``Recorder`` one ``WriteMove`` per move, then one
``WriteResult``; the recorder writes them to the ``GameStore`` in that order. The
game awaits only for room in the recorder's bounded queue: a store that falls far
behind slows its games rather than losing moves. A store out of reach (a restart, a
network cut) is waited for, each write tried again for ``RESULT_PATIENCE`` seconds, so
a short outage loses no move; a write that fails for good (the store refused it twice,
or stayed out of reach) is logged and reported through ``on_failed`` (the game then
aborts: an unrecorded game must not carry on). Its end is still written if the store
allows, as aborted: a result the game reached meanwhile (a win whose winning move could
not be written) is not one its record could show.

A record that is over already in the store (``GameNotRunningError``: on a cluster,
another worker recorded the game aborted, taking this one for dead) takes nothing more:
the recorder reads it back once (``stored``), writes no more moves and, if a move was
refused, reports the record through ``on_over`` (the game then ends as it says); if the
result was refused, the game's end (``game.running``) finds ``stored`` and tells
everyone what the record says instead of what was played here.

Group commit: a game commits at most once per ``commit_interval`` (10 ms by default);
the moves played in between go in the next commit, all together. A move after a quiet
spell (a human's, a slow bot's) is committed at once, and the end of a game commits at
once with whatever is waiting, in the same transaction as the result
(``GameStore.finish_game(moves=...)``): ``end`` waits for that commit, so one commit
rather than two (if that write fails, the moves and the result are written apart).
Between bots that answer in a millisecond this turns dozens of transactions (and
fsyncs) into one; the price is that a crash (not a stop: a stop ends every game and
commits it) can lose the moves of the last interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

from game.mailbox import Mailbox
from game.store import ABORTED_RESULT, GameNotRunningError, GameStore
from game.store.outages import is_outage
from models import EndCause, GameRecord, GameResult, RecordedMove, ResultReason

__all__ = [
    "DEFAULT_COMMIT_INTERVAL",
    "RECORDER_SIZE",
    "RESULT_PATIENCE",
    "STORE_WAIT",
    "Recorder",
    "WriteMove",
    "WriteResult",
    "check_commit_interval",
]

log = logging.getLogger("game.recorder")

#: Writes waiting for the store, per game, at most (then the game waits for room).
RECORDER_SIZE = 1024
#: At most one commit of a game's moves per this many seconds (see the module docstring).
DEFAULT_COMMIT_INTERVAL = 0.010
#: How long the end of a game waits for its record to be written.
STORE_WAIT = 30.0
#: How long the recorder keeps trying a write (a game's moves, its end) while the store
#: is out of reach (within ``STORE_WAIT``), the waits between tries doubling from
#: ``RESULT_RETRY_MIN`` up to ``RESULT_RETRY_MAX`` seconds.
RESULT_PATIENCE = 25.0
RESULT_RETRY_MIN = 0.1
RESULT_RETRY_MAX = 2.0


def _why(error: BaseException) -> str:
    """What a failed write says of the store, for a game's end."""
    return "the store was unreachable" if is_outage(error) else "the store refused it"


def check_commit_interval(seconds: float) -> None:
    """Raise ``ValueError`` unless ``seconds`` is a finite number, 0 or more: what
    ``GameManager`` takes as ``commit_interval`` (the server checks it up front)."""
    if not 0 <= seconds < math.inf:
        raise ValueError(f"commit_interval must be 0 or more seconds, got {seconds}")


@dataclass(frozen=True)
class WriteMove:
    index: int
    move: RecordedMove
    latency_ms: int | None


@dataclass(frozen=True)
class WriteResult:
    result: GameResult


class Recorder:
    """Writes one game's moves, then its result, in order (see the module docstring).

    Its task starts at once and ends once the result is written (or could not be).
    """

    def __init__(
        self,
        store: GameStore,
        game_id: str,
        *,
        commit_interval: float,
        on_failed: Callable[[str], None],
        on_over: Callable[[GameRecord], None] | None = None,
    ) -> None:
        self.store = store
        self.game_id = game_id
        self.commit_interval = commit_interval
        self._on_failed = on_failed
        self._on_over = on_over
        #: The stored record, once the store refused a write because the game is over
        #: there already (see the module docstring); None while the store takes them.
        self.stored: GameRecord | None = None
        self._loop = asyncio.get_running_loop()
        self._queue: Mailbox[WriteMove | WriteResult] = Mailbox(RECORDER_SIZE)
        #: Whether the result was handed over: nothing comes after it.
        self.result_queued = False
        # Set once the result is queued: the recorder then commits without waiting.
        self._flush = asyncio.Event()
        self._task = self._loop.create_task(self._record(), name=f"htttx: record {game_id}")

    @property
    def done(self) -> bool:
        """Whether everything handed over is written (or failed for good)."""
        return self._task.done()

    async def put(self, write: WriteMove | WriteResult) -> None:
        """Hand over a write; waits for room in the queue."""
        self._note(write)
        await self._queue.put(write)

    def put_nowait(self, write: WriteMove | WriteResult) -> None:
        """Hand over a write without waiting (dropped, and logged, if the queue is full):
        for a game that is being stopped and cannot wait."""
        self._note(write)
        try:
            self._queue.put_nowait(write)
        except asyncio.QueueFull:
            log.error("game %s: the recorder's queue is full; %r is lost", self.game_id, write)

    def _note(self, write: WriteMove | WriteResult) -> None:
        if isinstance(write, WriteResult):
            self.result_queued = True
            self._flush.set()

    async def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for everything handed over to be written; whether it is."""
        await asyncio.wait({self._task}, timeout=timeout)
        return self._task.done()

    async def close(self) -> None:
        """The game is over: write what is queued, the result last (an aborted one if
        none was handed over), waiting up to ``STORE_WAIT``; then stop."""
        if not self.result_queued:
            # Ended without a GameOver (cancelled): still leave a finished record.
            self.put_nowait(WriteResult(ABORTED_RESULT))
        try:
            await asyncio.wait_for(asyncio.shield(self._task), STORE_WAIT)
        except TimeoutError:
            log.error("game %s: the record was not written within %g s", self.game_id, STORE_WAIT)
        except Exception:
            log.exception("game %s: the recorder failed", self.game_id)
        if not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def cancel(self) -> None:
        """Stop at once, whatever is left unwritten."""
        self._task.cancel()

    async def _record(self) -> None:
        """Write the game's moves and result in order; a write that fails for good is
        logged and ends the game (it could not be recorded), never the server."""
        interval = self.commit_interval
        failed = False
        lost: str | None = None  # why moves could not be written, if they could not
        held: WriteResult | None = None  # drained while batching, written after the moves
        last_commit = -math.inf
        while True:
            item = held or await self._queue.get()
            held = None
            batch = [item] if isinstance(item, WriteMove) else []
            wait = last_commit + interval - self._loop.time()
            if batch and wait > 0 and not self._flush.is_set():
                # Too soon after the last commit: let the moves played meanwhile join
                # this one (the end of the game cuts the wait short).
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self._flush.wait()
            last_commit = self._loop.time()
            # Group commit: the moves queued behind this one go in the same transaction.
            while batch and not self._queue.empty():
                queued = self._queue.get_nowait()
                if isinstance(queued, WriteResult):
                    held = queued  # the last item of a game: nothing queues behind it
                    break
                batch.append(queued)
            if held is not None and batch and not failed and await self._finish_with(batch, held):
                return  # the game's last moves and its end, in one commit
            if isinstance(item, WriteResult):
                await self._write_result(item, lost)
                return
            if failed:
                continue  # the game is being aborted: only its end is written
            moves = [(write.move, write.latency_ms) for write in batch]
            try:
                await self._patiently(
                    "its moves", partial(self.store.add_moves, self.game_id, item.index, moves)
                )
            except GameNotRunningError:
                # Over in the store already: writing it again cannot help.
                failed = True  # (and no more moves: the record takes none)
                await self._read_stored(refused=item)
            except Exception as error:
                log.exception("game %s: writing the record failed", self.game_id)
                failed = True
                lost = f"the game record could not be written: {_why(error)}"
                self._on_failed(lost)

    async def _write_result(self, end: WriteResult, lost: str | None) -> None:
        """Write the game's end: if moves could not be written (``lost`` says why), an
        aborted one, whatever the game's own result, which the record could not show (a
        win whose winning move is not in it)."""
        result = end.result
        if lost is not None and result.cause is not EndCause.ABORTED:
            result = GameResult(
                winner=None, reason=ResultReason.DRAW, cause=EndCause.ABORTED, detail=lost
            )
        try:
            await self._patiently(
                "its end",
                partial(self.store.finish_game, self.game_id, result, ended_at=datetime.now(UTC)),
            )
        except GameNotRunningError:  # over in the store already: its record wins
            await self._read_stored(refused=end)
        except Exception:
            log.exception("game %s: writing its end failed", self.game_id)

    async def _patiently(self, what: str, write: Callable[[], Awaitable[object]]) -> None:
        """Run ``write`` (a write of ``what``, for the log). A store out of reach
        (``is_outage``: a restart, a network cut) is tried again, the waits doubling, for
        ``RESULT_PATIENCE`` seconds: a short outage loses no move and leaves no record
        "running". Any other failure is tried once more. Raises the last error, and
        ``GameNotRunningError`` at once (trying again cannot help)."""
        give_up = self._loop.time() + RESULT_PATIENCE
        wait = RESULT_RETRY_MIN
        attempt = 0
        while True:
            attempt += 1
            try:
                await write()
            except GameNotRunningError:
                raise
            except Exception as error:
                unreachable = is_outage(error)
                if unreachable and self._loop.time() + wait < give_up:
                    log.warning(
                        "game %s: writing %s failed (%s: %s); trying again in %g s",
                        self.game_id,
                        what,
                        _why(error),
                        type(error).__name__,
                        wait,
                    )
                    await asyncio.sleep(wait)
                    wait = min(2 * wait, RESULT_RETRY_MAX)
                elif unreachable or attempt >= 2:
                    raise
                continue
            if attempt > 2:
                log.warning("game %s: wrote %s (try %d)", self.game_id, what, attempt)
            return

    async def _read_stored(self, *, refused: WriteMove | WriteResult) -> None:
        """The store refused ``refused``: the game is over there already. Read its record
        back (``stored``); a refused move reports it (``on_over``), so the game ends as
        it says at once. A record that cannot be read is a write that failed."""
        if self.stored is not None:
            return
        try:
            record = await self.store.get_game(self.game_id)
        except Exception:
            log.exception("game %s: reading the record back failed", self.game_id)
            record = None
        if record is None or record.result is None:
            if isinstance(refused, WriteMove):
                self._on_failed("the game record could not be written")
            return
        self.stored = record
        log.warning(
            "game %s: the store has the game over already (%s); it records nothing more",
            self.game_id,
            record.result.end_detail or record.result.reason.value,
        )
        if isinstance(refused, WriteMove) and not self.result_queued and self._on_over:
            self._on_over(record)

    async def _finish_with(self, batch: list[WriteMove], end: WriteResult) -> bool:
        """Write the game's last moves and its end in one transaction (one commit: the
        end of a game waits for it); whether that worked. If it did not, nothing of it
        is written, and the caller writes them apart (each retried, as always)."""
        try:
            await self.store.finish_game(
                self.game_id,
                end.result,
                ended_at=datetime.now(UTC),
                moves_from=batch[0].index,
                moves=[(write.move, write.latency_ms) for write in batch],
            )
        except Exception:
            log.debug("game %s: the end in one commit failed; apart", self.game_id, exc_info=True)
            return False
        return True

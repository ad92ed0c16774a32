"""``game.recorder.Recorder`` against a real SQLite file: what it writes, and in how many
writes (the end of a game waits for them)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from game import recorder as recorder_module
from game.recorder import Recorder, WriteMove, WriteResult
from game.store import GameStore
from game.store.schema import worker_lost_result
from models import EndCause, GameRecord, GameResult, Player, RecordedMove, ResultReason

WIN_X = GameResult(winner=Player.X, reason=ResultReason.WIN)
LONG = 3600.0  # a commit interval no test waits out: only the end cuts it short


def move(index: int) -> RecordedMove:
    side = "o" if index % 2 == 0 else "x"
    pieces = [{"q": index + 1, "r": 0}, {"q": index + 1, "r": 1}]
    return RecordedMove.model_validate({"side": side, "pieces": pieces})


class CountingStore(GameStore):
    """The real store, counting the writes a recorder makes; ``refuse_ends_with_moves``
    makes a game's end written together with its moves fail, as a store error would."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_calls: list[int] = []
        self.finish_calls: list[int] = []
        self.refuse_ends_with_moves = False
        #: This many writes from now on fail as a store out of reach does.
        self.unreachable_for = 0

    async def add_moves(
        self, game_id: str, first_index: int, moves: Sequence[tuple[RecordedMove, int | None]]
    ) -> None:
        self.add_calls.append(len(moves))
        self._maybe_unreachable()
        await super().add_moves(game_id, first_index, moves)

    def _maybe_unreachable(self) -> None:
        if self.unreachable_for > 0:
            self.unreachable_for -= 1
            raise ConnectionRefusedError("the database is restarting")

    async def finish_game(
        self,
        game_id: str,
        result: GameResult,
        *,
        ended_at: datetime,
        moves_from: int = 0,
        moves: Sequence[tuple[RecordedMove, int | None]] = (),
    ) -> None:
        self.finish_calls.append(len(moves))
        if moves and self.refuse_ends_with_moves:
            raise RuntimeError("the store refuses this write")
        self._maybe_unreachable()
        await super().finish_game(
            game_id, result, ended_at=ended_at, moves_from=moves_from, moves=moves
        )


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[CountingStore]:
    opened = await CountingStore.open(f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}")
    assert isinstance(opened, CountingStore)  # ``open`` makes an instance of its class
    await opened.create_game(GameRecord(game_id="g", started_at=datetime.now(UTC)))
    try:
        yield opened
    finally:
        await opened.close()


async def play(store: CountingStore, moves: int) -> list[str]:
    """A game of ``moves`` moves handed to a recorder, then its end; what it reported."""
    failures: list[str] = []
    recorder = Recorder(store, "g", commit_interval=LONG, on_failed=failures.append)
    for index in range(moves):
        await recorder.put(WriteMove(index, move(index), latency_ms=index))
        if index == 0:
            # As in a game: the first move is being written before the next comes.
            async with asyncio.timeout(10):
                while not store.add_calls:
                    await asyncio.sleep(0.001)
    await recorder.put(WriteResult(WIN_X))
    await recorder.close()
    return failures


async def test_the_last_moves_and_the_end_are_one_write(store: CountingStore) -> None:
    assert await play(store, 5) == []
    # The first move is committed at once (nothing was committed yet); the four played
    # within the interval go with the end, in the same transaction.
    assert (store.add_calls, store.finish_calls) == ([1], [4])
    stored = await store.get_game("g")
    assert stored is not None
    assert (stored.moves, stored.result) == ([move(i) for i in range(5)], WIN_X)
    assert await store.move_latencies("g") == [0, 1, 2, 3, 4]


async def test_an_end_refused_with_its_moves_is_written_apart(store: CountingStore) -> None:
    store.refuse_ends_with_moves = True
    assert await play(store, 3) == []  # nothing lost, so nothing to report
    assert (store.add_calls, store.finish_calls) == ([1, 2], [2, 0])
    stored = await store.get_game("g")
    assert stored is not None
    assert (stored.moves, stored.result) == ([move(i) for i in range(3)], WIN_X)


async def test_an_end_without_moves_waiting_is_written_alone(store: CountingStore) -> None:
    assert await play(store, 0) == []
    assert (store.add_calls, store.finish_calls) == ([], [0])
    stored = await store.get_game("g")
    assert stored is not None and stored.result == WIN_X


async def test_a_short_outage_loses_no_move_and_the_end_is_written_when_the_store_is_back(
    store: CountingStore,
) -> None:
    # A restart of the database while the game is won: the winning move waits with the
    # end for the store, rather than the record saying "win" without the winning move.
    store.unreachable_for = 6  # the first move's write four times, then the end's and so on
    failures: list[str] = []
    recorder = Recorder(store, "g", commit_interval=0, on_failed=failures.append)
    for index in range(3):
        await recorder.put(WriteMove(index, move(index), latency_ms=0))
    await recorder.put(WriteResult(WIN_X))
    await recorder.close()
    assert failures == [] and store.unreachable_for == 0
    stored = await store.get_game("g")
    assert stored is not None
    assert (stored.moves, stored.result) == ([move(i) for i in range(3)], WIN_X)


async def test_a_result_whose_moves_could_not_be_written_is_recorded_aborted(
    store: CountingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Out of reach for longer than the recorder waits: the game is told (it aborts), and
    # a win it had already played is not written over moves the record lacks.
    monkeypatch.setattr(recorder_module, "RESULT_PATIENCE", 0.05)
    store.unreachable_for = 10**6
    failures: list[str] = []
    recorder = Recorder(store, "g", commit_interval=0, on_failed=failures.append)
    await recorder.put(WriteMove(0, move(0), latency_ms=0))
    async with asyncio.timeout(10):
        while not failures:
            await asyncio.sleep(0.001)
    assert failures == ["the game record could not be written: the store was unreachable"]
    await recorder.put(WriteResult(WIN_X))  # the game had ended meanwhile
    store.unreachable_for = 0  # back
    await recorder.close()
    stored = await store.get_game("g")
    assert stored is not None and stored.moves == []
    assert stored.result == GameResult(
        winner=None, reason=ResultReason.DRAW, cause=EndCause.ABORTED, detail=failures[0]
    )


async def swept_elsewhere(
    store: CountingStore,
) -> tuple[GameResult, Recorder, list[str], list[GameRecord]]:
    """Game ``g`` recorded aborted by another worker of a cluster (it took this one for
    dead), and a recorder for it here: the result, the recorder, what it reports
    through ``on_failed`` and through ``on_over``."""
    swept = worker_lost_result("w4")
    await store.abort_games(["g"], swept, ended_at=datetime.now(UTC))
    failures: list[str] = []
    over: list[GameRecord] = []
    recorder = Recorder(
        store, "g", commit_interval=LONG, on_failed=failures.append, on_over=over.append
    )
    return swept, recorder, failures, over


async def test_a_move_refused_by_a_record_over_already_reports_the_stored_result(
    store: CountingStore,
) -> None:
    swept, recorder, failures, over = await swept_elsewhere(store)
    await recorder.put(WriteMove(0, move(0), latency_ms=None))
    async with asyncio.timeout(10):
        while not over:
            await asyncio.sleep(0.001)
    await recorder.put(WriteMove(1, move(1), latency_ms=None))
    await recorder.put(WriteResult(swept))  # the game ended with it: the same result
    await recorder.close()
    assert [record.result for record in over] == [swept] and failures == []
    assert store.add_calls == [1]  # refused once, not retried; no move after it
    assert recorder.stored is not None and recorder.stored.result == swept


async def test_an_end_refused_by_a_record_over_already_leaves_the_stored_record(
    store: CountingStore,
) -> None:
    swept, recorder, failures, over = await swept_elsewhere(store)
    await recorder.put(WriteResult(WIN_X))
    await recorder.close()
    # The game's end (game.running) finds it and ends the game as the record says.
    assert recorder.stored is not None and recorder.stored.result == swept
    assert over == [] and failures == []  # the game is over here already: nothing to say
    stored = await store.get_game("g")
    assert stored is not None and stored.result == swept

"""Game records in ``game.store``, against a real SQLite file and a real PostgreSQL server.

Every test that takes ``db_url`` runs on both backends. The PostgreSQL server is a
throwaway cluster started for the test session (initdb into a temporary directory,
unix socket only, as the ``postgres`` user when running as root); each test gets a
fresh database in it. Without PostgreSQL's server binaries the PostgreSQL cases are
skipped, except under CI (``CI`` set), where that is a failure: ``make test`` installs
them.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import json
import os
import sqlite3
import sys
import threading
import uuid
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from game.store import (
    ABORTED_RESULT,
    LEFT_RUNNING_RESULT,
    MAX_PAGE_SIZE,
    DuplicateGameError,
    GameNotRunningError,
    GameStore,
    InvalidCursorError,
    InvalidGameIdError,
    InvalidPageSizeError,
    MoveConflictError,
    MoveIndexError,
    RecordAlreadyFinishedError,
    RecordStatus,
    UnknownGameError,
    UnsupportedDatabaseError,
)
from game.store.schema import _games as _games_table
from game.store.schema import _move_json, _to_json
from game.store.schema import _moves as _moves_table
from models import (
    Cell,
    Coord,
    EndCause,
    GameRecord,
    GameResult,
    Match,
    MoveOption,
    Player,
    PlayerType,
    PositionEvaluation,
    RecordedMove,
    RecordPlayer,
    ResultReason,
)
from tests.postgres import PostgresCluster

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


# ------------------------------------------------------------------------- helpers


def move(side: Player, *pieces: tuple[int, int], **fields: object) -> RecordedMove:
    return RecordedMove.model_validate(
        {"side": side, "pieces": [Coord(q=q, r=r) for q, r in pieces], **fields}
    )


def record(game_id: str, **fields: object) -> GameRecord:
    return GameRecord.model_validate({"game_id": game_id, "started_at": T0, **fields})


def rich_record() -> GameRecord:
    """A finished game with every optional piece of data filled in."""
    return GameRecord(
        game_id="rich",
        name="Final, game 3",
        player_x=RecordPlayer(name="ThreatBot", type=PlayerType.BOT, bot_url="ws://b:1/ws"),
        player_o=RecordPlayer(name="Ada", type=PlayerType.HUMAN),
        match=Match(clock_type="incremental", clock=60.0, increment=2.5, turn_limit=200),
        started_at=datetime(2026, 11, 22, 13, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2))),
        setup=[Cell(q=0, r=0, p=Player.X), Cell(q=3, r=-1, p=Player.O)],
        first_to_move=Player.O,
        moves=[
            move(
                Player.O,
                (1, 0),
                (2, 0),
                evaluation=PositionEvaluation.model_validate(
                    {"heuristic": -0.25, "win_in": None, "depth": 7, "pv": ["a", "b"]}
                ),
                considerations=[
                    MoveOption(
                        pieces=[Coord(q=1, r=0), Coord(q=2, r=0)],
                        evaluation=PositionEvaluation(heuristic=0.5),
                    ),
                    MoveOption(pieces=[Coord(q=-1, r=0), Coord(q=0, r=-1)]),
                ],
                clock_ms=61_250,
                thinking_ms=1_250,
            ),
            move(
                Player.X,
                (0, 1),
                (0, 2),
                evaluation=PositionEvaluation(heuristic=float("inf"), win_in=3),
                clock_ms=0,
                thinking_ms=0,
            ),
            move(Player.O, (5, 5)),
        ],
        result=GameResult(winner=Player.O, reason=ResultReason.WIN),
        tags={"Event": "Cup", "Round": "3"},
    )


async def play(store: GameStore, game: GameRecord) -> None:
    """Write ``game`` as a server would: create it, add its moves, then its result."""
    assert game.game_id is not None
    await store.create_game(game.model_copy(update={"moves": [], "result": None}))
    for index, recorded in enumerate(game.moves):
        await store.add_move(game.game_id, index, recorded)
    if game.result is not None:
        await store.finish_game(game.game_id, game.result, ended_at=T0 + timedelta(hours=1))


WIN_X = GameResult(winner=Player.X, reason=ResultReason.WIN)
TIMEOUT_O = GameResult(winner=Player.O, reason=ResultReason.FORFEIT, cause=EndCause.TIMEOUT)

# ------------------------------------------------------------------ round trips


async def test_a_played_game_reads_back_exactly(store: GameStore) -> None:
    game = rich_record()
    await play(store, game)
    assert await store.get_game("rich") == game


async def test_a_game_in_progress_reads_back_with_its_moves_and_no_result(
    store: GameStore,
) -> None:
    game = rich_record().model_copy(update={"result": None})
    await play(store, game)
    assert await store.get_game("rich") == game


async def test_the_record_as_json_is_the_records_json(store: GameStore) -> None:
    # A name and a move with characters JSON escapes; a heuristic JSON cannot hold.
    game = rich_record().model_copy(update={"name": 'Fin\u00e4l "3"\n\u2603'})
    await play(store, game)
    stored = await store.get_game_json("rich")
    assert stored is not None and stored.status is RecordStatus.FINISHED
    expected = GameRecord.model_validate_json(game.model_dump_json())
    assert GameRecord.model_validate_json(stored.json) == expected
    assert json.loads(stored.json) == json.loads(game.model_dump_json())
    running = rich_record().model_copy(update={"game_id": "live", "result": None})
    await play(store, running)
    stored = await store.get_game_json("live")
    assert stored is not None and stored.status is RecordStatus.RUNNING
    assert await store.get_game_json("nobody") is None


async def test_moves_already_in_the_created_record_are_stored_as_its_first_moves(
    store: GameStore,
) -> None:
    game = rich_record().model_copy(update={"result": None})
    await store.create_game(game)
    await store.add_move("rich", 3, move(Player.X, (9, 9), (9, 8)))
    stored = await store.get_game("rich")
    assert stored is not None
    assert stored.moves == [*game.moves, move(Player.X, (9, 9), (9, 8))]


async def test_an_unknown_game_reads_as_none(store: GameStore) -> None:
    assert await store.get_game("nope") is None


async def test_latency_is_kept_beside_each_move(store: GameStore) -> None:
    await store.create_game(record("g"))
    await store.add_move("g", 0, move(Player.O, (1, 0), (2, 0)), latency_ms=12)
    await store.add_move("g", 1, move(Player.X, (0, 1), (0, 2)))
    assert await store.move_latencies("g") == [12, None]


async def test_latencies_of_an_unknown_game_raise(store: GameStore) -> None:
    with pytest.raises(UnknownGameError, match="'nope'"):
        await store.move_latencies("nope")


# ------------------------------------------------------------------ creating


async def test_creating_a_game_twice_raises(store: GameStore) -> None:
    await store.create_game(record("g"))
    with pytest.raises(DuplicateGameError, match="'g' is already stored"):
        await store.create_game(record("g", name="other"))


@pytest.mark.parametrize("game_id", [None, "", "x" * 201, "a\x00b"])
async def test_a_record_needs_a_usable_game_id(store: GameStore, game_id: str | None) -> None:
    with pytest.raises(InvalidGameIdError, match="game_id"):
        await store.create_game(GameRecord(game_id=game_id))


async def test_a_created_record_cannot_have_a_result_yet(store: GameStore) -> None:
    with pytest.raises(RecordAlreadyFinishedError, match="finish_game"):
        await store.create_game(record("g", result=WIN_X))
    assert await store.get_game("g") is None


# ------------------------------------------------------------------ moves


async def test_a_move_for_an_unknown_game_raises(store: GameStore) -> None:
    with pytest.raises(UnknownGameError, match="no game 'nope' to add move 0 to"):
        await store.add_move("nope", 0, move(Player.O, (1, 0), (2, 0)))


async def test_writing_the_same_move_again_changes_nothing(store: GameStore) -> None:
    await store.create_game(record("g"))
    first = move(Player.O, (1, 0), (2, 0), thinking_ms=5)
    await store.add_move("g", 0, first, latency_ms=3)
    await store.add_move("g", 0, first, latency_ms=3)
    stored = await store.get_game("g")
    assert stored is not None and stored.moves == [first]


async def test_a_different_move_at_a_stored_index_raises(store: GameStore) -> None:
    await store.create_game(record("g"))
    await store.add_move("g", 0, move(Player.O, (1, 0), (2, 0)))
    with pytest.raises(MoveConflictError, match="already has a different move 0"):
        await store.add_move("g", 0, move(Player.O, (1, 0), (3, 0)))


@pytest.mark.parametrize("index", [-1, 2])
async def test_moves_are_written_in_order(store: GameStore, index: int) -> None:
    await store.create_game(record("g"))
    await store.add_move("g", 0, move(Player.O, (1, 0), (2, 0)))
    with pytest.raises(MoveIndexError, match=f"next index is 1, got {index}"):
        await store.add_move("g", index, move(Player.X, (0, 1), (0, 2)))


async def test_a_finished_game_takes_no_more_moves(store: GameStore) -> None:
    await store.create_game(record("g"))
    await store.finish_game("g", WIN_X, ended_at=T0)
    with pytest.raises(GameNotRunningError, match="'g' is finished"):
        await store.add_move("g", 0, move(Player.O, (1, 0), (2, 0)))


async def test_a_games_last_moves_and_its_end_are_recorded_in_one_write(store: GameStore) -> None:
    await store.create_game(record("g"))
    first = move(Player.O, (1, 0), (2, 0))
    await store.add_move("g", 0, first)
    last = [move(Player.X, (0, 1), (0, 2), thinking_ms=4), move(Player.O, (3, 0), (4, 0))]
    await store.finish_game(
        "g", WIN_X, ended_at=T0, moves_from=1, moves=[(last[0], 7), (last[1], None)]
    )
    stored = await store.get_game("g")
    assert stored is not None
    assert (stored.moves, stored.result) == ([first, *last], WIN_X)
    assert await store.move_latencies("g") == [None, 7, None]
    # The same end again changes nothing, as a retried write would find.
    await store.finish_game("g", WIN_X, ended_at=T0, moves_from=1, moves=[(last[0], 7)])


async def test_an_end_whose_moves_do_not_fit_records_nothing_of_it(store: GameStore) -> None:
    await store.create_game(record("g"))
    await store.add_move("g", 0, move(Player.O, (1, 0), (2, 0)))
    with pytest.raises(MoveIndexError, match="next index is 1, got 2"):
        await store.finish_game(
            "g", WIN_X, ended_at=T0, moves_from=2, moves=[(move(Player.X, (0, 1), (0, 2)), None)]
        )
    with pytest.raises(MoveConflictError, match="already has a different move 0"):
        await store.finish_game(
            "g", WIN_X, ended_at=T0, moves_from=0, moves=[(move(Player.O, (1, 0), (3, 0)), None)]
        )
    stored = await store.get_game("g")
    assert stored is not None
    assert (len(stored.moves), stored.result) == (1, None)  # still running, as it was


async def test_racing_writers_of_one_move_store_it_once(store: GameStore) -> None:
    await store.create_game(record("g"))
    same = move(Player.O, (1, 0), (2, 0))
    await asyncio.gather(*(store.add_move("g", 0, same) for _ in range(10)))
    stored = await store.get_game("g")
    assert stored is not None and stored.moves == [same]


async def test_concurrent_games_lose_no_move(store: GameStore) -> None:
    games, moves_each = 50, 20

    async def one_game(n: int) -> None:
        game_id = f"g{n}"
        await store.create_game(record(game_id))
        for index in range(moves_each):
            side = Player.O if index % 2 == 0 else Player.X
            await store.add_move(game_id, index, move(side, (n, index), (n, -index - 1)))
        await store.finish_game(game_id, WIN_X, ended_at=T0)

    await asyncio.gather(*(one_game(n) for n in range(games)))
    page = await store.list_games(limit=MAX_PAGE_SIZE)
    assert len(page.items) == games
    assert {summary.moves for summary in page.items} == {moves_each}
    for n in range(games):
        stored = await store.get_game(f"g{n}")
        assert stored is not None and stored.result == WIN_X
        assert [m.pieces[0] for m in stored.moves] == [Coord(q=n, r=i) for i in range(moves_each)]


async def test_a_cancelled_write_lands_whole_or_not_at_all(store: GameStore) -> None:
    # A server shutting down cancels game tasks in the middle of their writes.
    await store.create_game(record("g"))
    for n in range(40):
        stored = await store.get_game("g")
        assert stored is not None
        written = asyncio.create_task(
            store.add_move("g", len(stored.moves), move(Player.O, (n, 0), (n, 1)))
        )
        await asyncio.sleep(n % 8 * 0.0005)
        written.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await written
    stored = await store.get_game("g")
    assert stored is not None
    # Every move that landed is whole and in order, and the store still takes moves.
    landed = [m.pieces[0].q for m in stored.moves]
    assert landed == sorted(set(landed))
    await store.add_move("g", len(landed), move(Player.X, (-1, -1), (-2, -2)))
    assert len(await store.move_latencies("g")) == len(landed) + 1


# ------------------------------------------------------------------ results


async def test_a_result_for_an_unknown_game_raises(store: GameStore) -> None:
    with pytest.raises(UnknownGameError, match="no game 'nope' to finish"):
        await store.finish_game("nope", WIN_X, ended_at=T0)


async def test_recording_the_same_result_again_changes_nothing(store: GameStore) -> None:
    await store.create_game(record("g"))
    await store.finish_game("g", TIMEOUT_O, ended_at=T0)
    await store.finish_game("g", TIMEOUT_O, ended_at=T0 + timedelta(seconds=1))
    stored = await store.get_game("g")
    assert stored is not None and stored.result == TIMEOUT_O


async def test_a_second_different_result_raises(store: GameStore) -> None:
    await store.create_game(record("g"))
    await store.finish_game("g", TIMEOUT_O, ended_at=T0)
    with pytest.raises(GameNotRunningError, match="already finished"):
        await store.finish_game("g", WIN_X, ended_at=T0)


async def test_a_result_caused_by_an_abort_marks_the_game_aborted(store: GameStore) -> None:
    await store.create_game(record("g"))
    await store.finish_game("g", ABORTED_RESULT, ended_at=T0)
    page = await store.list_games()
    assert [(s.status, s.result) for s in page.items] == [(RecordStatus.ABORTED, ABORTED_RESULT)]


# ------------------------------------------------------------------ listing


async def test_games_are_listed_newest_first_with_a_summary(store: GameStore) -> None:
    for n in range(3):
        await store.create_game(
            record(f"g{n}", name=f"game {n}", player_x=RecordPlayer(name=f"bot{n}"))
        )
    await store.add_move("g1", 0, move(Player.O, (1, 0), (2, 0)))
    await store.finish_game("g1", WIN_X, ended_at=T0 + timedelta(minutes=5))
    page = await store.list_games()
    assert [s.game_id for s in page.items] == ["g2", "g1", "g0"]
    assert page.next_cursor is None
    summary = page.items[1]
    assert (summary.name, summary.player_x.name, summary.player_o.name) == (
        "game 1",
        "bot1",
        None,
    )
    assert (summary.status, summary.result, summary.moves) == (RecordStatus.FINISHED, WIN_X, 1)
    assert (summary.started_at, summary.ended_at) == (T0, T0 + timedelta(minutes=5))


async def test_games_are_filtered_by_status(store: GameStore) -> None:
    for n in range(6):
        await store.create_game(record(f"g{n}"))
    await store.finish_game("g1", WIN_X, ended_at=T0)
    await store.finish_game("g4", TIMEOUT_O, ended_at=T0)
    await store.finish_game("g5", ABORTED_RESULT, ended_at=T0)

    async def ids(status: RecordStatus) -> list[str]:
        return [s.game_id for s in (await store.list_games(status=status)).items]

    assert await ids(RecordStatus.RUNNING) == ["g3", "g2", "g0"]
    assert await ids(RecordStatus.FINISHED) == ["g4", "g1"]
    assert await ids(RecordStatus.ABORTED) == ["g5"]
    assert await store.count_games() == 6
    assert await store.count_games(status=RecordStatus.RUNNING) == 3


async def test_games_decided_but_not_committed_are_filtered_by_their_coming_status(
    store: GameStore,
) -> None:
    # A server knows g1 and g3 have ended (and may have shown their result) before its
    # writer commits it: they must not be listed as running, and are listed as over.
    for n in range(5):
        await store.create_game(record(f"g{n}"))
    await store.finish_game("g4", WIN_X, ended_at=T0)
    decided = {"g1": RecordStatus.FINISHED, "g3": RecordStatus.ABORTED}

    async def ids(status: RecordStatus, limit: int = 50) -> list[str]:
        page = await store.list_games(status=status, limit=limit, decided=decided)
        return [s.game_id for s in page.items]

    assert await ids(RecordStatus.RUNNING) == ["g2", "g0"]
    assert await ids(RecordStatus.FINISHED) == ["g4", "g1"]
    assert await ids(RecordStatus.ABORTED) == ["g3"]
    # Filtered in the query, so a page is still full when a decided game drops out.
    assert await ids(RecordStatus.RUNNING, limit=1) == ["g2"]
    # Without a filter nothing changes; the stored rows are untouched.
    everyone = await store.list_games(decided=decided)
    assert [s.game_id for s in everyone.items] == ["g4", "g3", "g2", "g1", "g0"]
    assert await store.game_status("g1") is RecordStatus.RUNNING


@pytest.mark.parametrize("status", [None, RecordStatus.RUNNING])
async def test_pages_follow_each_other_without_gaps_or_repeats(
    store: GameStore, status: RecordStatus | None
) -> None:
    for n in range(23):
        await store.create_game(record(f"g{n:02}"))
        if n % 3 == 0:
            await store.finish_game(f"g{n:02}", WIN_X, ended_at=T0)
    expected = [s.game_id for s in (await store.list_games(status=status, limit=100)).items]

    seen: list[str] = []
    cursor: str | None = None
    for pages in itertools.count(1):
        page = await store.list_games(status=status, limit=5, before=cursor)
        seen += [s.game_id for s in page.items]
        # Games created while paging come before the cursor, so they change nothing.
        await store.create_game(record(f"new{pages}"))
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == expected
    assert pages == -(-len(expected) // 5)


async def test_an_exactly_full_last_page_has_no_cursor(store: GameStore) -> None:
    for n in range(4):
        await store.create_game(record(f"g{n}"))
    first = await store.list_games(limit=2)
    second = await store.list_games(limit=2, before=first.next_cursor)
    assert [s.game_id for s in second.items] == ["g1", "g0"]
    assert second.next_cursor is None


@pytest.mark.parametrize("cursor", ["", "abc", "-1", "1.5", "٣", "9" * 30])
async def test_a_made_up_cursor_raises(store: GameStore, cursor: str) -> None:
    with pytest.raises(InvalidCursorError, match="next_cursor"):
        await store.list_games(before=cursor)


@pytest.mark.parametrize("limit", [0, -1, MAX_PAGE_SIZE + 1])
async def test_a_page_size_out_of_range_raises(store: GameStore, limit: int) -> None:
    with pytest.raises(InvalidPageSizeError, match=f"between 1 and {MAX_PAGE_SIZE}"):
        await store.list_games(limit=limit)


# ------------------------------------------------------------------ restarts


async def test_a_restart_keeps_finished_games_and_the_moves_of_running_ones(
    db_url: str,
) -> None:
    finished = rich_record()
    running = rich_record().model_copy(update={"game_id": "running", "result": None})
    async with await GameStore.open(db_url) as before:
        await play(before, finished)
        await play(before, running)

    async with await GameStore.open(db_url) as after:
        assert await after.get_game("rich") == finished
        assert await after.get_game("running") == running


async def test_games_running_at_a_restart_are_aborted_with_their_moves(db_url: str) -> None:
    running = rich_record().model_copy(update={"game_id": "running", "result": None})
    async with await GameStore.open(db_url) as before:
        await play(before, rich_record())
        await play(before, running)

    async with await GameStore.open(db_url) as after:
        assert await after.abort_running(ended_at=T0 + timedelta(days=1)) == 1
        assert await after.abort_running(ended_at=T0 + timedelta(days=2)) == 0
        aborted = await after.get_game("running")
        assert aborted == running.model_copy(update={"result": LEFT_RUNNING_RESULT})
        page = await after.list_games(status=RecordStatus.ABORTED)
        assert [(s.game_id, s.ended_at, s.moves) for s in page.items] == [
            ("running", T0 + timedelta(days=1), 3)
        ]
        assert await after.get_game("rich") == rich_record()
        with pytest.raises(GameNotRunningError, match="aborted"):
            await after.add_move("running", 3, move(Player.X, (7, 7), (7, 8)))


async def test_abort_games_aborts_only_the_running_games_it_is_given(store: GameStore) -> None:
    for game_id in ("a", "b", "other"):
        await store.create_game(record(game_id))
    await store.add_move("a", 0, move(Player.O, (1, 0), (1, 1)))
    await store.finish_game("b", WIN_X, ended_at=T0)
    why = ABORTED_RESULT.model_copy(update={"detail": "its worker died"})
    given = ["a", "b", "unknown"]
    assert await store.abort_games(given, why, ended_at=T0) == ["a"]
    assert await store.abort_games(given, why, ended_at=T0) == []  # done already
    aborted = await store.get_game("a")
    assert aborted is not None and aborted.result == why and len(aborted.moves) == 1
    assert await store.game_status("b") is RecordStatus.FINISHED
    assert await store.game_status("other") is RecordStatus.RUNNING
    with pytest.raises(ValueError, match="aborted result"):
        await store.abort_games(["other"], WIN_X, ended_at=T0)


# ------------------------------------------------------------------ opening


async def test_opening_a_sqlite_file_creates_its_directory_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "games.sqlite"
    async with await GameStore.open(f"sqlite:///{path}") as store:
        assert store.url.drivername == "sqlite+aiosqlite"
        await store.create_game(record("g"))
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)


@pytest.mark.parametrize(
    ("option", "level"), [("", 2), ("?synchronous=full", 2), ("?synchronous=normal", 1)]
)
async def test_sqlite_commits_with_fsync_unless_the_url_says_normal(
    tmp_path: Path, option: str, level: int
) -> None:
    def synchronous(conn: Connection) -> int:
        return int(conn.exec_driver_sql("PRAGMA synchronous").scalar_one())

    async with await GameStore.open(f"sqlite:///{tmp_path / 'games.sqlite'}{option}") as store:
        # FULL is 2, NORMAL 1: on the writer's connection and on the readers'.
        assert await store._runner.write(synchronous) == level
        assert await store._runner.read(synchronous) == level
        await play(store, rich_record())
        assert await store.get_game("rich") == rich_record()


async def test_sqlite_enforces_foreign_keys(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    async with await GameStore.open(f"sqlite:///{path}") as store:
        await store.create_game(record("g"))
    # Our connections turn foreign keys on; check that moves really reference games.
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA foreign_keys=ON")
        with pytest.raises(sqlite3.IntegrityError):
            raw.execute("INSERT INTO moves (game_id, idx, data) VALUES ('nope', 0, '{}')")


async def test_an_in_memory_sqlite_store_works() -> None:
    async with await GameStore.open("sqlite+aiosqlite:///:memory:") as store:
        await play(store, rich_record())
        assert await store.get_game("rich") == rich_record()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://u@h/db", "unsupported database 'mysql'"),
        ("sqlite+pysqlite:///x.db", "expected sqlite\\+aiosqlite"),
        ("postgresql+psycopg2://h/db", "expected postgresql\\+asyncpg"),
        ("not a url", "cannot parse"),
        ("sqlite:///x.db?synchronous=off", "must be one of full, normal, got 'off'"),
        ("postgresql://u@h/db?synchronous=normal", "an option of SQLite URLs"),
    ],
)
async def test_unsupported_database_urls_raise(url: str, message: str) -> None:
    with pytest.raises(UnsupportedDatabaseError, match=message):
        await GameStore.open(url)


def test_a_bare_postgres_url_gets_the_asyncpg_driver() -> None:
    from game.store.urls import _async_url

    assert _async_url("postgres://u@h/db").drivername == "postgresql+asyncpg"


# ------------------------------------------------------------------ any record

_coords = st.builds(Coord, q=st.integers(-60, 60), r=st.integers(-60, 60))
# NaN is left out only because NaN != NaN would fail the comparison; infinities stay.
_heuristics = st.none() | st.floats(allow_nan=False)
_evaluations = st.none() | st.builds(
    PositionEvaluation,
    heuristic=_heuristics,
    win_in=st.none() | st.integers(-50, 50),
    depth=st.integers(0, 40),  # an extra field, which bots may add
)
_moves = st.builds(
    RecordedMove,
    side=st.sampled_from(Player),
    pieces=st.lists(_coords, min_size=1, max_size=2),
    evaluation=_evaluations,
    considerations=st.lists(
        st.builds(
            MoveOption, pieces=st.lists(_coords, min_size=2, max_size=2), evaluation=_evaluations
        ),
        max_size=3,
    ),
    clock_ms=st.none() | st.integers(0, 10**9),
    thinking_ms=st.none() | st.integers(0, 10**9),
)
_players = st.builds(
    RecordPlayer,
    name=st.none() | st.text(max_size=20),
    type=st.none() | st.sampled_from(PlayerType),
    bot_url=st.none() | st.text(max_size=30),
)


@st.composite
def _matches(draw: st.DrawFn) -> Match:
    clock_type = draw(st.sampled_from(["none", "turn", "match", "incremental"]))
    return Match(
        heartbeat=draw(st.integers(100, 60_000)),
        view_distance=draw(st.integers(1, 50)),
        win_distance=draw(st.integers(2, 20)),
        turn_limit=draw(st.none() | st.integers(1, 10_000)),
        clock_type=clock_type,
        clock=None if clock_type == "none" else draw(st.floats(0.001, 1e6)),
        increment=draw(st.floats(0, 60)) if clock_type == "incremental" else 0.0,
    )


_results = st.none() | st.one_of(
    st.builds(GameResult, winner=st.sampled_from(Player), reason=st.just(ResultReason.WIN)),
    st.builds(GameResult, winner=st.none(), reason=st.just(ResultReason.DRAW),
              cause=st.none() | st.sampled_from(EndCause)),
    st.builds(GameResult, winner=st.sampled_from(Player), reason=st.just(ResultReason.FORFEIT),
              cause=st.sampled_from(EndCause)),
)  # fmt: skip
_offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
_ids = st.text(st.characters(codec="ascii", exclude_characters="\x00"), min_size=1, max_size=30)
_records = st.builds(
    GameRecord,
    game_id=_ids,
    name=st.none() | st.text(max_size=30),
    player_x=_players,
    player_o=_players,
    match=_matches(),
    started_at=st.none() | st.datetimes(timezones=st.none() | st.just(UTC) | _offsets),
    setup=st.lists(st.builds(Cell, q=st.integers(-9, 9), r=st.integers(-9, 9),
                             p=st.sampled_from(Player)), max_size=4),
    first_to_move=st.sampled_from(Player),
    moves=st.lists(_moves, max_size=6),
    result=_results,
    tags=st.dictionaries(st.text(max_size=10), st.text(max_size=20), max_size=3),
)  # fmt: skip


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(game=_records)
def test_any_record_reads_back_exactly(db_url: str, game: GameRecord) -> None:
    # Examples share the database: a unique suffix keeps their ids apart.
    game = game.model_copy(update={"game_id": f"{game.game_id}-{uuid.uuid4()}"})

    async def round_trip() -> GameRecord | None:
        async with await GameStore.open(db_url) as store:
            await play(store, game)
            assert game.game_id is not None
            return await store.get_game(game.game_id)

    assert asyncio.run(round_trip()) == game


async def test_several_moves_land_in_one_call_in_order(store: GameStore) -> None:
    await store.create_game(record("g"))
    first = move(Player.O, (1, 0), (2, 0))
    await store.add_move("g", 0, first, latency_ms=5)
    batch = [
        (first, 5),
        (move(Player.X, (-1, 0), (-2, 0)), 7),
        (move(Player.O, (3, 0), (4, 0)), None),
    ]
    await store.add_moves("g", 0, batch)  # the first is already stored: it must be equal
    stored = await store.get_game("g")
    assert stored is not None
    assert [m.pieces[0].q for m in stored.moves] == [1, -1, 3]
    assert await store.move_latencies("g") == [5, 7, None]
    with pytest.raises(MoveConflictError):
        await store.add_moves("g", 2, [(move(Player.O, (9, 9), (8, 8)), None)])
    with pytest.raises(MoveIndexError):
        await store.add_moves("g", 5, [(first, None)])


# ------------------------------------------------------------------ off the event loop
#
# A SQLite write is one job on the store's writer thread. These tests hold SQLite's
# write lock from a connection of their own (as another process would), so a write is
# stuck inside its transaction for as long as the test likes; an Engine-wide SQLAlchemy
# event tells when the writer has started its BEGIN IMMEDIATE.


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"


@contextlib.contextmanager
def sqlite_locked(url: str) -> Iterator[sqlite3.Connection]:
    """Hold the database's write lock until the block ends (or ``ROLLBACK`` is run)."""
    raw = sqlite3.connect(url.partition(":///")[2], isolation_level=None)
    try:
        raw.execute("BEGIN IMMEDIATE")
        yield raw
        if raw.in_transaction:
            raw.execute("ROLLBACK")
    finally:
        raw.close()


@contextlib.contextmanager
def writer_begins(store: GameStore) -> Iterator[threading.Event]:
    """An event set when the store's writer starts a BEGIN IMMEDIATE: through SQLAlchemy
    (any engine), or straight through its sqlite3 connection (the moves' usual case)."""
    begun = threading.Event()

    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement == "BEGIN IMMEDIATE":
            begun.set()

    writer = store._runner._write_conn  # type: ignore[attr-defined]
    raw: sqlite3.Connection = writer.connection.driver_connection
    event.listen(Engine, "before_cursor_execute", seen)
    raw.set_trace_callback(lambda statement: seen(None, None, statement))
    try:
        yield begun
    finally:
        with contextlib.suppress(sqlite3.ProgrammingError):  # closed with the store
            raw.set_trace_callback(None)
        event.remove(Engine, "before_cursor_execute", seen)


async def loop_ticks(count: int) -> int:
    """Let the event loop run ``count`` times round; returns how many it did."""
    ticks = 0
    for _ in range(count):
        await asyncio.sleep(0)
        ticks += 1
    return ticks


def store_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("htttx-store")]


async def test_the_event_loop_runs_on_while_a_write_waits_for_sqlites_lock(
    sqlite_url: str,
) -> None:
    async with await GameStore.open(sqlite_url) as store:
        await store.create_game(record("g"))
        with sqlite_locked(sqlite_url) as raw, writer_begins(store) as begun:
            written = asyncio.create_task(store.add_move("g", 0, move(Player.O, (1, 0), (2, 0))))
            assert await asyncio.to_thread(begun.wait, 30)
            assert await loop_ticks(100) == 100
            assert not written.done()
            # Reads do not queue behind the stuck write (WAL, reader threads).
            stored = await store.get_game("g")
            assert stored is not None and stored.moves == []
            raw.execute("ROLLBACK")
            await written
        stored = await store.get_game("g")
        assert stored is not None and stored.moves == [move(Player.O, (1, 0), (2, 0))]


async def test_moves_of_games_queued_behind_a_busy_writer_land_in_one_commit(
    sqlite_url: str,
) -> None:
    # Group commit across games: while the writer is stuck (here on SQLite's lock), the
    # moves of other games queue up; they then go in one transaction, and a write that
    # is wrong among them fails alone, with its own error, without losing the others.
    games = [f"g{n}" for n in range(6)]
    async with await GameStore.open(sqlite_url) as store:
        for game_id in games:
            await store.create_game(record(game_id))
        # What the writer's connection runs straight through sqlite3 (set before it is
        # busy: SQLite would make this call wait for the stuck statement).
        statements: list[str] = []
        begun = threading.Event()

        def trace(statement: str) -> None:
            statements.append(statement)
            if statement == "BEGIN IMMEDIATE":
                begun.set()

        writer = store._runner._write_conn  # type: ignore[attr-defined]
        writer.connection.driver_connection.set_trace_callback(trace)
        first = move(Player.O, (1, 0), (2, 0))
        with sqlite_locked(sqlite_url) as raw:
            stuck = asyncio.create_task(store.add_move("g0", 0, first))
            assert await asyncio.to_thread(begun.wait, 30)
            queued = [
                asyncio.create_task(store.add_move(game_id, 0, first)) for game_id in games[1:]
            ]
            wrong = asyncio.create_task(store.add_move("g1", 7, move(Player.X, (0, 1), (0, 2))))
            await loop_ticks(100)
            assert not stuck.done() and not any(task.done() for task in queued)
            raw.execute("ROLLBACK")
            await stuck
            await asyncio.gather(*queued)
            with pytest.raises(MoveIndexError):
                await wrong
        writer.connection.driver_connection.set_trace_callback(None)
        # g0's commit, then one for the five queued together (the wrong write's claim
        # found no row: it went on its own, and was refused there). Two, not six.
        assert statements.count("COMMIT") == 2
        for game_id in games:
            stored = await store.get_game(game_id)
            assert stored is not None and stored.moves == [first]


async def test_on_postgresql_moves_of_games_queued_behind_a_busy_write_share_a_commit(
    postgres_cluster: PostgresCluster,
) -> None:
    # The same group commit on PostgreSQL: the first game's write waits on a lock held
    # elsewhere; the moves of five more games, and a wrong write, queue meanwhile.
    games = [f"g{n}" for n in range(6)]
    url = postgres_cluster.new_database()
    async with await GameStore.open(url) as store:
        for game_id in games:
            await store.create_game(record(game_id))
        engine = store._runner._engine  # type: ignore[attr-defined]
        commits: list[None] = []

        def committed(_conn: Any) -> None:
            commits.append(None)

        first = move(Player.O, (1, 0), (2, 0))
        async with engine.connect() as other:
            # Hold g0's row, as a writer of another process would.
            lock = await other.begin()
            await other.execute(
                select(_games_table.c.seq).where(_games_table.c.game_id == "g0").with_for_update()
            )
            event.listen(engine.sync_engine, "commit", committed)
            try:
                stuck = asyncio.create_task(store.add_move("g0", 0, first))
                await asyncio.sleep(0.3)  # its transaction is waiting for the lock
                queued = [
                    asyncio.create_task(store.add_move(game_id, 0, first)) for game_id in games[1:]
                ]
                wrong = asyncio.create_task(store.add_move("g1", 7, move(Player.X, (0, 1), (0, 2))))
                await asyncio.sleep(0.1)
                assert not stuck.done() and not any(task.done() for task in queued)
                await lock.rollback()
                await stuck
                await asyncio.gather(*queued)
                with pytest.raises(MoveIndexError):
                    await wrong
            finally:
                event.remove(engine.sync_engine, "commit", committed)
        # g0's commit, then one for the five queued together (the wrong write went on
        # its own and was rolled back): two, not six.
        assert len(commits) == 2
        for game_id in games:
            stored = await store.get_game(game_id)
            assert stored is not None and stored.moves == [first]


async def test_a_write_whose_caller_is_cancelled_mid_flight_lands(sqlite_url: str) -> None:
    async with await GameStore.open(sqlite_url) as store:
        await store.create_game(record("g"))
        with sqlite_locked(sqlite_url) as raw, writer_begins(store) as begun:
            written = asyncio.create_task(store.add_move("g", 0, move(Player.O, (1, 0), (2, 0))))
            assert await asyncio.to_thread(begun.wait, 30)
            written.cancel()
            await loop_ticks(100)
            # The cancelled caller still waits for the transaction on the writer thread.
            assert not written.done()
            raw.execute("ROLLBACK")
            with pytest.raises(asyncio.CancelledError):
                await written
        # The write landed whole, and the store takes the next move.
        assert await store.move_latencies("g") == [None]
        await store.add_move("g", 1, move(Player.X, (0, 1), (0, 2)))
        assert await store.move_latencies("g") == [None, None]


async def test_a_cancelled_caller_sees_its_cancel_even_when_the_write_failed(
    sqlite_url: str,
) -> None:
    async with await GameStore.open(sqlite_url) as store:
        with sqlite_locked(sqlite_url) as raw, writer_begins(store) as begun:
            written = asyncio.create_task(store.add_move("nope", 0, move(Player.O, (1, 0))))
            assert await asyncio.to_thread(begun.wait, 30)
            written.cancel()
            raw.execute("ROLLBACK")
            with pytest.raises(asyncio.CancelledError):
                await written
        await store.create_game(record("g"))  # and the writer goes on


async def test_close_waits_for_the_writes_queued_before_it(sqlite_url: str) -> None:
    store = await GameStore.open(sqlite_url)
    await store.create_game(record("g"))
    moves = [move(Player.O if n % 2 == 0 else Player.X, (n, 0)) for n in range(3)]
    with sqlite_locked(sqlite_url) as raw, writer_begins(store) as begun:
        writes = [asyncio.create_task(store.add_move("g", n, m)) for n, m in enumerate(moves)]
        assert await asyncio.to_thread(begun.wait, 30)
        closed = asyncio.create_task(store.close())
        await loop_ticks(100)
        assert not closed.done() and not any(write.done() for write in writes)
        raw.execute("ROLLBACK")
        await closed
    assert all(write.done() and write.exception() is None for write in writes)
    assert store_threads() == []
    async with await GameStore.open(sqlite_url) as reopened:
        stored = await reopened.get_game("g")
        assert stored is not None and stored.moves == moves


async def test_a_closed_store_takes_no_more_writes(sqlite_url: str) -> None:
    store = await GameStore.open(sqlite_url)
    await store.close()
    await store.close()  # closing again does nothing
    with pytest.raises(RuntimeError):
        await store.create_game(record("g"))


async def test_closing_leaves_no_thread_or_unclosed_resource_behind(db_url: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        async with await GameStore.open(db_url) as store:
            await play(store, rich_record())
            await asyncio.gather(store.get_game("rich"), store.list_games(), store.count_games())
        assert store_threads() == []
        del store
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


@pytest.mark.parametrize("url", ["sqlite+aiosqlite:///:memory:", "sqlite://", "sqlite:///:memory:"])
async def test_an_in_memory_store_reads_every_write_made_before_the_read(url: str) -> None:
    async with await GameStore.open(url) as store:
        await store.create_game(record("g"))
        # Reads share the writer thread and its one connection, so a read queued
        # after a write sees it, however the tasks interleave.
        _, stored, page, latencies = await asyncio.gather(
            store.add_move("g", 0, move(Player.O, (1, 0), (2, 0)), latency_ms=4),
            store.get_game("g"),
            store.list_games(),
            store.move_latencies("g"),
        )
        assert stored is not None and len(stored.moves) == 1
        assert [s.moves for s in page.items] == [1]
        assert latencies == [4]
        assert store_threads() == ["htttx-store-writer_0"]
    assert store_threads() == []


async def test_in_memory_stores_are_separate_databases() -> None:
    async with (
        await GameStore.open("sqlite://") as first,
        await GameStore.open("sqlite://") as second,
    ):
        await first.create_game(record("g"))
        assert await second.get_game("g") is None
        await second.create_game(record("g"))


async def test_a_commit_that_fails_does_not_wedge_the_writer(sqlite_url: str) -> None:
    # No public operation can make SQLite's COMMIT fail, so this one goes through the
    # store's runner: a deferred foreign key fails at COMMIT, and SQLite then keeps the
    # transaction open. The writer must drop that connection, not start the next
    # write inside the leftover transaction.
    def commit_fails(conn: Connection) -> None:
        conn.exec_driver_sql("PRAGMA defer_foreign_keys=ON")
        conn.exec_driver_sql("INSERT INTO moves (game_id, idx, data) VALUES ('nope', 0, '{}')")

    async with await GameStore.open(sqlite_url) as store:
        with pytest.raises(IntegrityError, match="FOREIGN KEY"):
            await store._runner.write(commit_fails)
        await store.create_game(record("g"))
        assert await store.count_games() == 1


# ------------------------------------------------------------------ the moves' fast path


@settings(max_examples=200, deadline=None)
@given(recorded=_moves)
def test_a_move_is_stored_as_pydantic_and_json_would_write_it(recorded: RecordedMove) -> None:
    assert _move_json(recorded) == _to_json(recorded)


class _MoreMove(RecordedMove):
    note: str = "é"


@pytest.mark.parametrize(
    "recorded",
    [
        move(Player.X, (0, 1), evaluation=PositionEvaluation(heuristic=float("nan"))),
        move(Player.O, (0, 1), (1, 1), evaluation=PositionEvaluation(heuristic=float("-inf"))),
        move(Player.O, (0, 1), (1, 1), evaluation=PositionEvaluation(heuristic=1e-5, win_in=-2)),
        move(
            Player.X,
            (0, 1),
            (1, 1),
            evaluation=PositionEvaluation.model_validate(
                {"heuristic": float("inf"), "depth": 7, "pv": ["\u00e9", {"a": 1.5}], "x": None}
            ),
        ),
        move(
            Player.O,
            (0, 1),
            (1, 1),
            considerations=[
                MoveOption(
                    pieces=[Coord(q=1, r=0), Coord(q=2, r=0)],
                    evaluation=PositionEvaluation.model_validate({"heuristic": 0.5, "depth": 3}),
                )
            ],
            clock_ms=2**70,
            thinking_ms=0,
            latency_ms=9,
        ),
        _MoreMove(side=Player.X, pieces=[Coord(q=0, r=1)]),
        # Not validated: whatever a field holds is written as pydantic would write it.
        RecordedMove.model_construct(side=Player.X, pieces=[Coord(q=0, r=1)], clock_ms=True),
    ],
)
def test_unusual_moves_are_stored_as_pydantic_and_json_would_write_them(
    recorded: RecordedMove,
) -> None:
    assert _move_json(recorded) == _to_json(recorded)


async def test_infinite_heuristics_and_extra_fields_are_stored_exactly(store: GameStore) -> None:
    moves = [
        move(
            Player.O,
            (1, 0),
            (2, 0),
            evaluation=PositionEvaluation.model_validate(
                {"heuristic": float("inf"), "win_in": 3, "depth": 7, "pv": ["a", "\u00e9"]}
            ),
        ),
        move(Player.X, (0, 1), (0, 2), evaluation=PositionEvaluation(heuristic=float("-inf"))),
        move(Player.O, (5, 5), clock_ms=10, thinking_ms=0, latency_ms=1),
    ]
    await store.create_game(record("g", moves=moves[:1]))
    await store.add_moves("g", 1, [(moves[1], 3), (moves[2], None)])

    def stored_texts(conn: Connection) -> list[str]:
        query = select(_moves_table.c.data).where(_moves_table.c.game_id == "g")
        return list(conn.execute(query.order_by(_moves_table.c.idx)).scalars())

    assert await store._runner.read(stored_texts) == [_to_json(m) for m in moves]
    stored = await store.get_game("g")
    assert stored is not None and stored.moves == moves
    assert await store.move_latencies("g") == [None, 3, None]


async def test_usual_moves_and_results_go_to_sqlite_without_sqlalchemy(sqlite_url: str) -> None:
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    ended = datetime(2026, 11, 22, 14, 0, 1, 250, tzinfo=timezone(timedelta(hours=-3)))
    async with await GameStore.open(sqlite_url) as store:
        await store.create_game(record("g"))
        event.listen(Engine, "before_cursor_execute", seen)
        try:
            await store.add_moves("g", 0, [(move(Player.O, (1, 0), (2, 0)), 4)])
            await store.finish_game("g", TIMEOUT_O, ended_at=ended)
            assert statements == []
            # Retried writes are not the usual case: SQLAlchemy's path sorts them out.
            await store.add_moves("g", 0, [(move(Player.O, (1, 0), (2, 0)), 4)])
            await store.finish_game("g", TIMEOUT_O, ended_at=ended)
            assert statements.count("BEGIN IMMEDIATE") == 2
            with pytest.raises(GameNotRunningError):
                await store.finish_game("g", WIN_X, ended_at=ended)
        finally:
            event.remove(Engine, "before_cursor_execute", seen)
        assert await store.move_latencies("g") == [4]
        summary = (await store.list_games()).items[0]
        assert (summary.status, summary.result, summary.ended_at) == (
            RecordStatus.FINISHED,
            TIMEOUT_O,
            ended,
        )
        await store.create_game(record("h"))
        await store.finish_game("h", ABORTED_RESULT, ended_at=ended)
        assert (await store.list_games()).items[0].status is RecordStatus.ABORTED


async def test_a_failed_fast_write_is_rolled_back_whole_and_raised(sqlite_url: str) -> None:
    async with await GameStore.open(sqlite_url) as store:
        await store.create_game(record("g"))
        # A stray row where the second move goes: the claim succeeds, the INSERT fails.
        with sqlite3.connect(sqlite_url.partition(":///")[2]) as raw:
            raw.execute("INSERT INTO moves (game_id, idx, data) VALUES ('g', 1, '{}')")
        moves = [(move(Player.O, (1, 0), (2, 0)), None), (move(Player.X, (0, 1), (0, 2)), None)]
        with pytest.raises(IntegrityError, match="UNIQUE"):
            await store.add_moves("g", 0, moves)
        assert (await store.list_games()).items[0].moves == 0  # the claim was rolled back
        await store.add_moves("g", 0, moves[:1])  # and the writer goes on
        assert (await store.list_games()).items[0].moves == 1


_WRITE_UNTIL_KILLED = """
import asyncio, sys
from game.store import GameStore
from models import Coord, GameRecord, Player, RecordedMove

async def main() -> None:
    store = await GameStore.open(sys.argv[1])
    await store.create_game(GameRecord(game_id="g"))
    for n in range(100_000):
        side = Player.O if n % 2 == 0 else Player.X
        await store.add_move("g", n, RecordedMove(side=side, pieces=[Coord(q=n, r=0)]))
        print(n, flush=True)

asyncio.run(main())
"""


@pytest.mark.parametrize("option", ["", "?synchronous=normal"])
async def test_a_killed_writer_loses_no_move_that_add_move_returned_for(
    tmp_path: Path, option: str
) -> None:
    # kill -9 of the process (not of the machine): with or without the fsync per commit.
    url = f"sqlite:///{tmp_path / 'games.sqlite'}{option}"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _WRITE_UNTIL_KILLED,
        url,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    assert process.stdout is not None
    acknowledged = -1
    try:
        while acknowledged < 300:
            line = await asyncio.wait_for(process.stdout.readline(), 60)
            assert line, "the writer ended before it was killed"
            acknowledged = int(line)
    finally:
        process.kill()
        await process.wait()
    async with await GameStore.open(url) as store:
        stored = await store.get_game("g")
    assert stored is not None
    assert len(stored.moves) > acknowledged
    assert [m.pieces[0].q for m in stored.moves] == list(range(len(stored.moves)))

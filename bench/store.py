"""Benchmark: what recording one move costs the game server's event loop, against plain sqlite3.

A game server records each move as it is played: one ``GameStore.add_moves``
transaction per move when moves come slower than its commit interval (fast games
share one per interval), awaited by the game's recorder task on the server's event
loop; this measures the one-move write. That loop is the server's bottleneck, so
what matters most is the CPU time a write takes on the *event-loop thread*; the wall
time per write (SQLite commits with ``synchronous=FULL``, so it includes an fsync) and
the CPU the write costs on other threads (the store's writer thread, a driver's
thread) are shown beside it.

The baseline, measured in the same run on the same schema (created by the store):
the same rows written with plain ``sqlite3`` on one thread of its own (WAL,
``synchronous=FULL``, foreign keys, busy timeout, autocommit mode with
``BEGIN IMMEDIATE``; then the guarded UPDATE of ``games``, the INSERT into ``moves``
and COMMIT), the loop awaiting one future per write. That is about the least a
non-blocking write can cost. Each move is serialised on the loop in both cases.

``--synchronous normal`` measures both with ``PRAGMA synchronous=NORMAL`` (the
store's ``?synchronous=normal`` URL option: no fsync per commit) instead of ``FULL``.

Rounds alternate between the baseline and the store (each on a fresh database in a
temporary directory; ``--dir`` chooses where, since the fsync depends on the disk);
figures are medians over rounds of the mean per write, and the ratios are store /
baseline.

``--pg URL`` (``postgresql+asyncpg://...``, an empty database: the store creates its
tables) also measures the store on PostgreSQL, against the same statements sent with
plain asyncpg in one transaction. ``--store PATH`` measures another version of
``game/store.py`` (for instance the committed one, ``git show HEAD:game/store.py``)
instead of the working tree's.

Nothing is asserted; the script prints figures. Run: ``.venv/bin/python bench/store.py``
(``--quick`` for fewer writes).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib.util
import json
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from models import Coord, GameRecord, Player, RecordedMove  # noqa: E402


@dataclass(frozen=True)
class Cost:
    """Per write, in microseconds."""

    loop_cpu: float
    other_cpu: float
    wall: float


def load_store(path: Path | None) -> ModuleType:
    """``game.store``, or the store module in the file ``path``."""
    if path is None:
        import game.store

        return game.store
    spec = importlib.util.spec_from_file_location("bench_store_under_test", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load a module from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pydantic look the module up
    spec.loader.exec_module(module)
    return module


def a_move(index: int) -> RecordedMove:
    """A bot's move as a server records it."""
    return RecordedMove(
        side=Player.O if index % 2 == 0 else Player.X,
        pieces=[Coord(q=index, r=-index), Coord(q=index + 1, r=-index)],
        clock_ms=60_000 - index,
        thinking_ms=12,
    )


def move_json(move: RecordedMove) -> str:
    # What the store stores: the pydantic JSON dump, written compactly.
    return json.dumps(move.model_dump(mode="json"), separators=(",", ":"))


async def timed(writes: int, write: Callable[[int], Awaitable[None]]) -> Cost:
    """Run ``write(0) .. write(writes - 1)`` one after the other, on this loop."""
    gc.collect()
    gc.disable()  # a collection pass is nobody's cost in particular
    try:
        cpu, process, wall = time.thread_time(), time.process_time(), time.perf_counter()
        for index in range(writes):
            await write(index)
        wall = time.perf_counter() - wall
        cpu = time.thread_time() - cpu
        process = time.process_time() - process
    finally:
        gc.enable()
    scale = 1e6 / writes
    return Cost(loop_cpu=cpu * scale, other_cpu=max(0.0, process - cpu) * scale, wall=wall * scale)


# ------------------------------------------------------------------ the store


async def store_round(store_module: ModuleType, url: str, writes: int) -> Cost:
    store = await store_module.GameStore.open(url)
    try:
        game_id = f"bench-{uuid.uuid4()}"
        await store.create_game(GameRecord(game_id=game_id, started_at=datetime.now(UTC)))
        moves = [a_move(index) for index in range(writes)]

        async def write(index: int) -> None:
            await store.add_moves(game_id, index, [(moves[index], 12)])

        return await timed(writes, write)
    finally:
        await store.close()


# ------------------------------------------------------------------ plain sqlite3

_CLAIM = (
    "UPDATE games SET move_count = ? WHERE game_id = ? AND status = 'running' AND move_count = ?"
)
_INSERT = "INSERT INTO moves (game_id, idx, data, latency_ms) VALUES (?, ?, ?, ?)"


def _sqlite_connect(path: Path, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=10000")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
    return conn


async def sqlite3_round(
    store_module: ModuleType, path: Path, writes: int, synchronous: str
) -> Cost:
    # The store creates the schema (and is closed again), so both write the same tables.
    async with await store_module.GameStore.open(f"sqlite+aiosqlite:///{path}") as store:
        game_id = f"bench-{uuid.uuid4()}"
        await store.create_game(GameRecord(game_id=game_id, started_at=datetime.now(UTC)))
    moves = [a_move(index) for index in range(writes)]
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(1, thread_name_prefix="bench-sqlite3") as thread:
        conn = await loop.run_in_executor(thread, _sqlite_connect, path, synchronous)

        def transaction(index: int, data: str) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                claimed = conn.execute(_CLAIM, (index + 1, game_id, index))
                if claimed.rowcount != 1:
                    raise RuntimeError(f"move {index} was not the next one")
                conn.execute(_INSERT, (game_id, index, data, 12))
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

        async def write(index: int) -> None:
            await loop.run_in_executor(thread, transaction, index, move_json(moves[index]))

        try:
            return await timed(writes, write)
        finally:
            await loop.run_in_executor(thread, conn.close)


# ------------------------------------------------------------------ plain asyncpg


async def asyncpg_round(store_module: ModuleType, url: str, writes: int) -> Cost:
    import asyncpg  # type: ignore[import-untyped]
    from sqlalchemy.engine import make_url

    async with await store_module.GameStore.open(url) as store:
        game_id = f"bench-{uuid.uuid4()}"
        await store.create_game(GameRecord(game_id=game_id, started_at=datetime.now(UTC)))
    parsed = make_url(url)
    conn = await asyncpg.connect(
        user=parsed.username,
        password=parsed.password,
        database=parsed.database,
        host=parsed.query.get("host") or parsed.host,
        port=parsed.query.get("port") or parsed.port,
    )
    moves = [a_move(index) for index in range(writes)]
    claim = "UPDATE games SET move_count = $3 WHERE game_id = $1 AND status = 'running' "
    claim += "AND move_count = $2"
    insert = "INSERT INTO moves (game_id, idx, data, latency_ms) VALUES ($1, $2, $3, $4)"

    async def write(index: int) -> None:
        data = move_json(moves[index])
        async with conn.transaction():
            if await conn.execute(claim, game_id, index, index + 1) != "UPDATE 1":
                raise RuntimeError(f"move {index} was not the next one")
            await conn.execute(insert, game_id, index, data, 12)

    try:
        return await timed(writes, write)
    finally:
        await conn.close()


# ------------------------------------------------------------------ report


def median(costs: list[Cost]) -> Cost:
    return Cost(
        loop_cpu=statistics.median(c.loop_cpu for c in costs),
        other_cpu=statistics.median(c.other_cpu for c in costs),
        wall=statistics.median(c.wall for c in costs),
    )


def show(name: str, cost: Cost, baseline: Cost | None) -> None:
    line = f"{name:<28} {cost.loop_cpu:>9.0f} {cost.other_cpu:>11.0f} {cost.wall:>9.0f}"
    if baseline is not None:
        line += (
            f"   {cost.loop_cpu / baseline.loop_cpu:>5.2f}x"
            f" {(cost.loop_cpu + cost.other_cpu) / (baseline.loop_cpu + baseline.other_cpu):>5.2f}x"
            f" {cost.wall / baseline.wall:>5.2f}x"
        )
    print(line)


@contextlib.asynccontextmanager
async def scratch(directory: str | None) -> AsyncIterator[Path]:
    with tempfile.TemporaryDirectory(prefix="htttx-bench-store-", dir=directory) as path:
        yield Path(path)


async def run(args: argparse.Namespace) -> None:
    store_module = load_store(args.store)
    writes, rounds = (100, 3) if args.quick else (args.writes, args.rounds)
    print(__doc__.split("\n\n")[0])
    print(f"store: {store_module.__file__}")
    print(f"{writes} writes of one move per round, {rounds} rounds (after one warm-up round)")
    print(f"SQLite: PRAGMA synchronous={args.synchronous.upper()}")
    option = "" if args.synchronous == "full" else f"?synchronous={args.synchronous}"
    print()
    ours: list[Cost] = []
    plain: list[Cost] = []
    async with scratch(args.dir) as root:
        for n in range(rounds + 1):
            store_db, plain_db = root / f"store{n}.sqlite", root / f"plain{n}.sqlite"
            # Alternate which goes first, so neither always meets a warmer disk.
            store_url = f"sqlite:///{store_db}{option}"
            if n % 2:
                plain_cost = await sqlite3_round(store_module, plain_db, writes, args.synchronous)
                store_cost = await store_round(store_module, store_url, writes)
            else:
                store_cost = await store_round(store_module, store_url, writes)
                plain_cost = await sqlite3_round(store_module, plain_db, writes, args.synchronous)
            if n:  # round 0 warms up: imports, statement caches, the file system
                ours.append(store_cost)
                plain.append(plain_cost)
    baseline = median(plain)
    print(f"{'µs per write':<28} {'loop CPU':>9} {'other CPU':>11} {'wall':>9}   ratios")
    show("plain sqlite3 in a thread", baseline, None)
    show("GameStore, SQLite", median(ours), baseline)

    if args.pg:
        pg_ours: list[Cost] = []
        pg_plain: list[Cost] = []
        for n in range(rounds + 1):
            store_cost = await store_round(store_module, args.pg, writes)
            plain_cost = await asyncpg_round(store_module, args.pg, writes)
            if n:
                pg_ours.append(store_cost)
                pg_plain.append(plain_cost)
        pg_baseline = median(pg_plain)
        print()
        show("plain asyncpg", pg_baseline, None)
        show("GameStore, PostgreSQL", median(pg_ours), pg_baseline)
    print()
    print("ratios: store / baseline, of loop CPU, of all CPU (loop + other), of wall time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=1000, help="writes per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds after the warm-up")
    parser.add_argument("--quick", action="store_true", help="100 writes, 3 rounds")
    parser.add_argument("--dir", help="where the SQLite files go (default: the temp dir)")
    parser.add_argument(
        "--synchronous",
        choices=("full", "normal"),
        default="full",
        help="SQLite's PRAGMA synchronous, for the store and the baseline (default: full)",
    )
    parser.add_argument("--pg", metavar="URL", help="also measure PostgreSQL at this URL")
    parser.add_argument(
        "--store", type=Path, metavar="PATH", help="measure this store.py instead of game/store.py"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()

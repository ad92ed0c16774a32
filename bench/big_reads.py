"""Benchmark: many readers of an 8,300-move record, cached or not, and ``/health`` meanwhile.

A game server (``python -m game.serve``, a process of its own) holds finished games of
8,300 moves (``GET /games/<id>``: 2.2 MB of JSON each). In each round, 10 clients
read at once either 10 different games nobody has read yet (each read fetches the
rows and encodes them, on worker threads, in chunks: "uncached") or one game already
read (the same bytes from the cache of encoded records: "cached"), while another
client asks ``GET /health`` in a loop. Printed: the median time of a round of 10
reads and the worst ``/health`` answer seen in each mode, and the ratio uncached /
cached.

``--root DIR`` runs the server from another checkout (for instance ``git archive`` of
an earlier commit unpacked in DIR), to compare versions on the same records.

Nothing is asserted; the script prints figures. Run: ``.venv/bin/python bench/big_reads.py``
(``--quick`` for fewer rounds).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from game.store import GameStore  # noqa: E402
from tests.test_big_reads import big_record  # noqa: E402

MOVES = 8300
READERS = 10


async def store_games(db_url: str, game_ids: list[str]) -> None:
    record = big_record(MOVES)
    assert record.result is not None
    async with await GameStore.open(db_url) as store:
        for game_id in game_ids:
            await store.create_game(
                record.model_copy(update={"game_id": game_id, "moves": [], "result": None})
            )
            await store.add_moves(game_id, 0, [(move, None) for move in record.moves])
            await store.finish_game(game_id, record.result, ended_at=datetime.now(UTC))


async def main(rounds: int, root: Path) -> None:
    with tempfile.TemporaryDirectory() as directory:
        db_url = f"sqlite+aiosqlite:///{Path(directory) / 'games.sqlite'}"
        fresh = [[f"r{round_}-{reader}" for reader in range(READERS)] for round_ in range(rounds)]
        await store_games(db_url, ["warm", *(game_id for ids in fresh for game_id in ids)])
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "game.serve", "--port", "0", "--log-level", "warning",
            "--no-example-bots", "--db", db_url,
            cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            assert process.stdout is not None
            base = (await process.stdout.readline()).decode().rsplit(" ", 1)[-1].strip()
            timeout = aiohttp.ClientTimeout(total=120)
            async with aiohttp.ClientSession(timeout=timeout) as http:
                results = await measure(http, base, fresh)
        finally:
            process.terminate()
            await process.wait()
    print(f"{READERS} readers of an {MOVES}-move record at once, {rounds} rounds")
    medians = {}
    for mode, figures in results.items():
        medians[mode] = statistics.median(took for took, _ in figures)
        worst = max(health for _, health in figures) * 1000
        print(f"  {mode:9} round {medians[mode] * 1000:7.1f} ms   worst /health {worst:6.1f} ms")
    print(f"  uncached / cached: {medians['uncached'] / medians['cached']:.1f}x")


async def measure(
    http: aiohttp.ClientSession, base: str, fresh: list[list[str]]
) -> dict[str, list[tuple[float, float]]]:
    async def read(game_id: str) -> None:
        async with http.get(f"{base}/games/{game_id}") as response:
            assert response.status == 200
            await response.read()

    async def one_round(game_ids: list[str]) -> tuple[float, float]:
        done = asyncio.Event()
        worst = 0.0

        async def health() -> None:
            nonlocal worst
            while not done.is_set():
                start = time.perf_counter()
                async with http.get(f"{base}/health") as response:
                    await response.read()
                worst = max(worst, time.perf_counter() - start)

        probe = asyncio.create_task(health())
        start = time.perf_counter()
        await asyncio.gather(*(read(game_id) for game_id in game_ids))
        took = time.perf_counter() - start
        done.set()
        await probe
        return took, worst

    await read("warm")  # now in the cache
    results: dict[str, list[tuple[float, float]]] = {"uncached": [], "cached": []}
    for game_ids in fresh:
        results["uncached"].append(await one_round(game_ids))
        results["cached"].append(await one_round(["warm"] * READERS))
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--root", type=Path, default=ROOT, help="run the server from DIR")
    arguments = parser.parse_args()
    asyncio.run(main(3 if arguments.quick else 10, arguments.root.resolve()))

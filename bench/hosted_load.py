"""Benchmark: what the most one client may ask for costs the game server.

One client starts ``--max-games-per-client`` (16) games between two hosted RandomBots
(they hardly ever make a line, so each lasts its turn limit) with the given view and
win distance and no turn limit (the server's default applies), then reads ``/health``
every 0.25 s until every game has ended. It prints whether and how every game ended,
the wall time, ``/health`` latency (median, p99, max) against the same requests before
the games, and the server's peak RSS against its idle RSS (``/proc``, Linux).

The server is ``python -m game.serve`` in a subprocess with a SQLite store in a temporary
directory. Run: ``.venv/bin/python bench/hosted_load.py --view-distance 20
--win-distance 20`` (minutes: the games at the caps are the costliest the server hosts).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
GAMES = 16


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def health_ms(http: aiohttp.ClientSession, base: str) -> tuple[float, int]:
    """Milliseconds for one ``/health``, and the live games it reports."""
    started = time.perf_counter()
    async with http.get(base + "/health") as response:
        live = int((await response.json())["live_games"])
    return (time.perf_counter() - started) * 1000, live


def spread(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):.1f} ms, p99 {p99:.1f} ms, max {ordered[-1]:.1f} ms"


async def measure(base: str, pid: int, match: dict[str, int]) -> None:
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        idle = [(await health_ms(http, base))[0] for _ in range(20)]
        idle_rss = peak_rss = rss_mb(pid)
        bot = {"type": "bot", "bot_url": base + "/bots/random"}
        body = {"player_x": bot, "player_o": bot, "match_config": match}
        game_ids = []
        for _ in range(GAMES):
            async with http.post(base + "/game/new", json=body) as response:
                answer = await response.json()
                assert response.status == 200, answer
                game_ids.append(answer["game_id"])
        started = time.monotonic()
        loaded: list[float] = []
        while True:
            ms, live = await health_ms(http, base)
            loaded.append(ms)
            peak_rss = max(peak_rss, rss_mb(pid))
            if live == 0:
                break
            await asyncio.sleep(0.25)
        wall = time.monotonic() - started
        endings: dict[str, int] = {}
        for game_id in game_ids:
            async with http.get(f"{base}/games/{game_id}") as response:
                record = await response.json()
            result = record["result"]
            key = f"{result['reason']}/{result.get('cause')} at {len(record['moves'])} moves"
            endings[key] = endings.get(key, 0) + 1
    print(f"{GAMES} games of two RandomBots, {match}: all ended in {wall:.0f} s: {endings}")
    print(f"  /health while they ran: {spread(loaded)} ({len(loaded)} requests)")
    print(f"  /health before:         {spread(idle)}")
    print(f"  RSS: peak {peak_rss:.0f} MB, idle {idle_rss:.0f} MB ({peak_rss / idle_rss:.1f}x)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--view-distance", type=int, default=8, help="of the 16 games (default %(default)s)"
    )
    parser.add_argument(
        "--win-distance", type=int, default=6, help="of the 16 games (default %(default)s)"
    )
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        command = [
            sys.executable,
            "-m",
            "game.serve",
            "--port",
            str(port),
            "--db",
            f"sqlite+aiosqlite:///{data}/games.sqlite",
            "--log-level",
            "warning",
        ]
        server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("the game server did not start") from None
                    time.sleep(0.1)
            match = {"view_distance": args.view_distance, "win_distance": args.win_distance}
            asyncio.run(measure(base, server.pid, match))
        finally:
            server.terminate()
            server.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())

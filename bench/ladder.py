"""Benchmark: the ladder (issue 15's figures), through real processes on loopback.

1. Load and cost. A bot server process hosts N=200 LatticeBots (instant, and they never
   make a line: every game lasts exactly its turn limit) under ``/b000`` ... ``/b199``;
   a game server (``htttx-server --ladder --ladder-concurrency 50``, SQLite in a
   temporary directory) has them registered (``POST /bots``). Rounds alternate, in the
   same run, on the same server and bots (which goes first alternates, as the store
   grows and what runs later pays for it):

   * plain: the same number of games through ``POST /game/new`` (unrated, no registry),
     50 at once, between bots drawn at random, at the ladder's time control;
   * ladder: ``POST /ladder/resume`` until as many ladder games have started, then
     ``POST /ladder/pause`` and wait for the last to end (ladder games are rated, and
     each bot's result is recorded in the registry: that is the cost measured).

   Printed: the game server's CPU per move (``/proc/<pid>/stat`` over each phase,
   divided by the moves played) with the ladder and with plain games, their ratio
   (target: under 5% added), how many games the ladder kept in flight (sampled from
   ``GET /ladder``; target 50), and whether every one of the 200 bots got games
   (``GET /bots``: fewest and most per bot).

2. Rating convergence. A bot server hosts ThreatBot, MixBot50 (ThreatBot's move half the
   time, a random one otherwise: ``bot.bots.mix_bot``), CenterBot and RandomBot, whose
   strength order is known (head to head, each beats the next: 100%, ~65%, 100%); a
   fresh game server runs its ladder over them. ``GET /leaderboard`` is read as the
   games go: printed is after how many ladder games the leaderboard's order (its rank,
   by ``mu - 2 sigma``, and by rating ``mu`` alone) was right and stayed right to the
   end.

Nothing is asserted; the script prints figures. Run: ``.venv/bin/python bench/ladder.py``
(``--quick`` for smaller numbers; ``--part 1`` or ``--part 2`` for one of them).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from processes import cpu_seconds, free_port, started  # noqa: E402 (bench/, next to this script)

Json = dict[str, Any]

#: The ladder's time control in both parts (and the plain games' in part 1).
TIME_CONTROL = "10+0.1"
#: A LatticeBot game lasts exactly this many moves (the default turn limit).
TURN_LIMIT = 500
#: The strength order of part 2, strongest first: (name, bot spec).
KNOWN_ORDER = (
    ("threat", "bot.bots:ThreatBot"),
    ("mix50", "bot.bots.mix_bot:MixBot50"),
    ("center", "bot.bots:CenterBot"),
    ("random", "bot.bots:RandomBot"),
)


def _time_control_json(text: str) -> Json:
    from models import TimeControl

    return TimeControl.parse(text).model_dump(exclude_none=True)


# ---------------------------------------------------------------------- client


class Server:
    """The game server's HTTP API, as the benchmark uses it."""

    def __init__(self, http: aiohttp.ClientSession, base: str) -> None:
        self.http = http
        self.base = base

    async def call(self, method: str, path: str, body: Json | None = None) -> Any:
        """One request; tried again when a kept-alive connection was closed under it
        (the server closes idle ones: a race every HTTP client knows)."""
        for attempt in range(3):
            try:
                async with self.http.request(method, self.base + path, json=body) as response:
                    answer = await response.json()
                    if response.status not in (200, 201):
                        raise RuntimeError(f"{method} {path}: {response.status} {answer}")
                    return answer
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def get(self, path: str) -> Any:
        return await self.call("GET", path)

    async def post(self, path: str, body: Json | None = None) -> Any:
        return await self.call("POST", path, body or {})

    async def register(self, name: str, url: str) -> None:
        await self.post("/bots", {"name": name, "url": url, "ladder": True})

    async def ladder(self) -> Json:
        status: Json = await self.get("/ladder")
        return status


@contextlib.asynccontextmanager
async def session(base: str) -> AsyncIterator[Server]:
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        yield Server(http, base)


@contextlib.contextmanager
def game_server(data: str, name: str, port: int, *extra: str) -> Iterator[int]:
    """A game server with a ladder (its pid); part 1 pauses the ladder before any bot is
    registered."""
    db = f"sqlite+aiosqlite:///{data}/{name}.sqlite"
    args = ["-m", "game.serve", "--port", str(port), "--db", db, "--no-example-bots"]
    args += ["--log-level", "warning", "--max-games", "2000", "--max-games-per-client", "2000"]
    args += ["--ladder", "--ladder-rate", "60000", "--ladder-time-control", TIME_CONTROL]
    with started([*args, *extra], port, timeout=60.0) as process:
        yield process.pid


# ------------------------------------------------------------------ part 1: load


#: How often both phases read the server's count of games in flight.
POLL_S = 0.1


async def plain_games(server: Server, urls: list[str], games: int, at_once: int) -> list[str]:
    """``games`` games through ``POST /game/new``, ``at_once`` in flight: ``GET /health``
    (its ``live_games``) is read every ``POLL_S`` and the games that ended are replaced,
    as the ladder's scheduler replaces its own; then the last ones are waited for. The
    ladder's phase has the same shape (``ladder_games``). Their ids."""
    rng = random.Random(games)
    clock = _time_control_json(TIME_CONTROL)
    ids: list[str] = []

    async def new() -> None:
        x, o = rng.sample(range(len(urls)), 2)
        body = {
            "name": f"plain {len(ids)}",
            "player_x": {"type": "bot", "bot_url": urls[x], "time_control": clock},
            "player_o": {"type": "bot", "bot_url": urls[o], "time_control": clock},
        }
        ids.append((await server.post("/game/new", body))["game_id"])

    live = 0
    while True:
        more = min(at_once - live, games - len(ids))
        if more > 0:
            await asyncio.gather(*(new() for _ in range(more)))
        await asyncio.sleep(POLL_S)
        live = (await server.get("/health"))["live_games"]
        if live == 0 and len(ids) == games:
            return ids


async def moves_of(server: Server, ids: list[str]) -> int:
    """The moves of games ``ids`` (each LatticeBot game should have ``TURN_LIMIT``)."""
    total = 0
    for game_id in ids:
        record = await server.get(f"/games/{game_id}")
        total += len(record["moves"])
    return total


async def ladder_games(server: Server, games: int, samples: list[int]) -> int:
    """Resume the ladder until it has started ``games`` more (``GET /ladder`` read every
    ``POLL_S``), pause it, wait for the last to end; sample how many were in flight
    meanwhile. The games it played."""
    before = await server.ladder()
    await server.post("/ladder/resume")
    while True:
        await asyncio.sleep(POLL_S)
        status = await server.ladder()
        samples.append(status["in_flight"])
        if status["games_started"] - before["games_started"] >= games:
            break
    await server.post("/ladder/pause")
    while (status := await server.ladder())["in_flight"]:
        await asyncio.sleep(POLL_S)
    played: int = status["games_finished"] - before["games_finished"]
    return played


async def part_load(quick: bool) -> None:
    bots = 200
    at_once = 50
    games = 100 if quick else 200
    rounds = 2 if quick else 4
    bot_port, server_port = free_port(), free_port()
    specs = []
    for index in range(bots):
        specs += ["--bot", f"b{index:03d}=bot.bots:LatticeBot"]
    bot_args = ["-m", "bot.serve", *specs, "--port", str(bot_port), "--log-level", "warning"]
    urls = [f"http://127.0.0.1:{bot_port}/b{index:03d}" for index in range(bots)]
    print(
        f"1. {bots} LatticeBots in one bot process, {at_once} games at once, "
        f"{TURN_LIMIT}-move games at {TIME_CONTROL}; {rounds} x {games} games each way"
    )
    with (
        tempfile.TemporaryDirectory() as data,
        started(bot_args, bot_port, timeout=60.0),
        game_server(data, "load", server_port, "--ladder-concurrency", str(at_once)) as pid,
    ):
        async with session(f"http://127.0.0.1:{server_port}") as server:
            await server.post("/ladder/pause")
            started_at = time.monotonic()
            await asyncio.gather(
                *(server.register(f"lattice-{i:03d}", url) for i, url in enumerate(urls))
            )
            print(f"   registered {bots} bots in {time.monotonic() - started_at:.1f} s")
            await plain_games(server, urls, 10, at_once)  # warm up
            cpu = {"plain": 0.0, "ladder": 0.0}
            moves = {"plain": 0, "ladder": 0}
            samples: list[int] = []
            ratios = []
            for index in range(rounds):

                async def plain() -> tuple[float, int]:
                    before = cpu_seconds(pid)
                    ids = await plain_games(server, urls, games, at_once)
                    spent = cpu_seconds(pid) - before
                    return spent, await moves_of(server, ids)

                async def ladder() -> tuple[float, int]:
                    before = cpu_seconds(pid)
                    played = await ladder_games(server, games, samples)
                    return cpu_seconds(pid) - before, played * TURN_LIMIT

                # The order alternates: the store grows as games are recorded, and
                # whatever runs second in every round would pay for it.
                if index % 2 == 0:
                    plain_cpu, plain_moves = await plain()
                    ladder_cpu, ladder_moves = await ladder()
                else:
                    ladder_cpu, ladder_moves = await ladder()
                    plain_cpu, plain_moves = await plain()
                cpu["plain"] += plain_cpu
                cpu["ladder"] += ladder_cpu
                moves["plain"] += plain_moves
                moves["ladder"] += ladder_moves
                ratios.append((ladder_cpu / ladder_moves) / (plain_cpu / plain_moves))
            status = await server.ladder()
            registered = (await server.get("/bots"))["registered"]
    per_move = {kind: cpu[kind] / moves[kind] * 1e6 for kind in cpu}
    added = per_move["ladder"] / per_move["plain"] - 1
    verdict = "meets" if added < 0.05 else "misses"
    print(
        f"   server CPU per move: ladder {per_move['ladder']:.0f} us, plain games "
        f"{per_move['plain']:.0f} us -> {added:+.1%} ({verdict} the 5% target); "
        f"each round: {', '.join(f'{ratio - 1:+.1%}' for ratio in ratios)} "
        f"(median {statistics.median(ratios) - 1:+.1%})"
    )
    steady = samples[len(samples) // 5 :] or samples
    print(
        f"   ladder games in flight (GET /ladder, every {POLL_S:g} s): median "
        f"{statistics.median(steady):.0f}, mean {statistics.fmean(steady):.1f}, "
        f"min {min(steady)} (target {at_once})"
    )
    per_bot = [bot["games"] for bot in registered]
    every = "every bot got games" if min(per_bot) > 0 else "SOME BOTS GOT NO GAME"
    print(
        f"   games per bot: fewest {min(per_bot)}, median {statistics.median(per_bot):.0f}, "
        f"most {max(per_bot)} over {len(per_bot)} bots: {every}"
    )
    decisive = sum(bot["wins"] for bot in registered)
    if decisive:  # every LatticeBot game should last to the turn limit, a draw
        print(f"   {decisive} ladder games were won: their move counts are off")
    failed = {k: v for k, v in status.items() if k in ("games_void", "failed_starts") and v}
    if failed or status["backoffs"]:
        print(f"   ladder trouble: {failed} backoffs {status['backoffs'][:3]}")


# ------------------------------------------------------------ part 2: convergence


def _orders(entries: list[Json]) -> tuple[list[str], list[str]]:
    by_rank = [e["name"] for e in sorted(entries, key=lambda e: e["rank"])]
    by_mu = [e["name"] for e in sorted(entries, key=lambda e: -e["rating"])]
    return by_rank, by_mu


def _settled_at(seen: list[tuple[int, bool]]) -> int | None:
    """The first game count from which every reading was right (None: never)."""
    settled = None
    for games, right in seen:
        if not right:
            settled = None
        elif settled is None:
            settled = games
    return settled


async def part_convergence(quick: bool, concurrency: int) -> None:
    total = 150 if quick else 400
    bot_port, server_port = free_port(), free_port()
    specs = []
    for name, spec in KNOWN_ORDER:
        specs += ["--bot", f"{name}={spec}"]
    bot_args = ["-m", "bot.serve", *specs, "--port", str(bot_port), "--log-level", "warning"]
    expected = [name for name, _ in KNOWN_ORDER]
    print(
        f"\n2. Rating convergence: {', '.join(expected)} (strongest first) on the ladder, "
        f"{concurrency} at once, {total} games"
    )
    with (
        tempfile.TemporaryDirectory() as data,
        started(bot_args, bot_port, timeout=60.0),
        game_server(data, "converge", server_port, "--ladder-concurrency", str(concurrency)),
    ):
        async with session(f"http://127.0.0.1:{server_port}") as server:
            for name in expected:
                await server.register(name, f"http://127.0.0.1:{bot_port}/{name}")
            by_rank: list[tuple[int, bool]] = []
            by_mu: list[tuple[int, bool]] = []
            last = -1
            while True:
                board = await server.get("/leaderboard?kind=bot")
                entries = [e for e in board["entries"] if e["name"] in expected]
                games = sum(e["games"] for e in entries) // 2
                if games != last and len(entries) == len(expected):
                    rank_order, mu_order = _orders(entries)
                    by_rank.append((games, rank_order == expected))
                    by_mu.append((games, mu_order == expected))
                    last = games
                if games >= total:
                    break
                await asyncio.sleep(0.1)
            await server.post("/ladder/pause")
            final = (await server.get("/leaderboard?kind=bot"))["entries"]
    for label, seen in (("rank (mu - 2 sigma)", by_rank), ("rating (mu)", by_mu)):
        settled = _settled_at(seen)
        when = "never settled" if settled is None else f"right from game {settled} on"
        print(f"   leaderboard order by {label}: {when} (read {len(seen)} times)")
    for entry in sorted(final, key=lambda e: e["rank"]):
        print(
            f"   {entry['rank']}. {entry['name']:<7} {entry['rating']:>5} +- "
            f"{entry['uncertainty']:<4} {entry['games']:>4} games "
            f"{entry['wins']}/{entry['losses']}/{entry['draws']} W/L/D"
            f"{'  provisional' if entry['provisional'] else ''}"
        )


async def run(quick: bool, part: int | None) -> None:
    if part in (None, 1):
        await part_load(quick)
    if part in (None, 2):
        await part_convergence(quick, concurrency=4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer games, for a smoke run")
    parser.add_argument("--part", type=int, choices=(1, 2), help="run only this part")
    args = parser.parse_args()
    print(__doc__.split("\n\n")[0])
    print(f"(pid {os.getpid()}, {os.cpu_count()} CPUs)\n")
    asyncio.run(run(args.quick, args.part))


if __name__ == "__main__":
    main()

"""Benchmark: a cluster of workers (issue 16's figures), through real processes on loopback.

Processes: a throwaway PostgreSQL and Redis, started as ``make cluster`` starts them
(``tests/postgres.py``, ``tests/redis_server.py``); three bot servers hosting
``LatticeBot`` (instant, and it never makes a line: every game lasts exactly its turn
limit), one per worker; a single game server (``python -m game.serve`` without
``--redis``), another with ``--commit-interval 100`` (ms; the default is 10), each on a
PostgreSQL database of its own (a server that is no worker claims its database, see
``game.store_claim``), and three workers (with ``--redis``) sharing a third one; and
this process, the client.

1. Games per second with 1, 2 and 3 workers: ``GAMES`` games of ``MOVES`` moves per
   worker, created round robin over the workers with ``POST /game/new`` (worker *i*'s
   games between bot server *i*'s bots), ``IN_FLIGHT`` at once on each; each game's end
   is read by a spectator of its compact stream (``?board=0``) on its owner, which
   sends the `end` at once. The single process plays the same games, for comparison,
   and so does the one that commits at most every 100 ms ("single, 100 ms"): what a
   longer ``--commit-interval`` saves the database.
   Printed: games/s and the ratio to one worker's; the CPU each part of the cluster
   spent per game (the game servers, the bot servers, PostgreSQL's postmaster and
   backends, Redis, this client) and how many of the machine's cores were busy in all;
   PostgreSQL's commits and rows written per move (``pg_stat_database``) and Redis's
   commands and bytes received per move (``INFO stats``).
2. The per-move CPU cost of the Redis fan-out against the single process: games of
   ``FANOUT_MOVES`` moves played one at a time (their end polled with
   ``GET /games/<id>``), rounds alternating four settings, medians:

   * the single process, nobody watching (the baseline);
   * a worker, nobody watching: it publishes every update all the same (a spectator on
     another worker may want it), one ``PUBLISH`` per move;
   * a worker watched by one spectator (compact stream) on another worker, which
     subscribes to the game's channel and fetches the setup from the owner;
   * the single process watched by one spectator on it: what a spectator costs with no
     cluster.

   The CPU of each process's threads (nanoseconds, read once each has gone idle) over
   the whole game, its creation and its spectator's arrival included, per move.

Nothing is asserted; the script prints figures. Run: ``.venv/bin/python bench/cluster.py``
(``--quick`` for fewer games and rounds; ``--part 1`` or ``--part 2`` for one of them).
It needs PostgreSQL's server binaries and ``redis-server`` (``make postgres redis``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import aiohttp
import asyncpg  # type: ignore[import-untyped]
import orjson
import redis.asyncio as aioredis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from games import new_bot_game  # noqa: E402 (bench/, next to this script)
from processes import (  # noqa: E402 (bench/, next to this script)
    cpu_seconds,
    free_port,
    settled_cpu,
    started,
    tree_cpu_seconds,
)

from tests.postgres import PostgresCluster, _postgres_bindir  # noqa: E402
from tests.redis_server import RedisServer, redis_executable  # noqa: E402

#: Part 1: moves per game, games per worker in a round and rounds (full, quick), games
#: at once per worker.
MOVES: Final = 100
GAMES: Final = (96, 32)
ROUNDS_1: Final = (2, 1)
IN_FLIGHT: Final = 8
#: Part 2: moves per game, rounds (full, quick), games per setting in a round.
FANOUT_MOVES: Final = 200
ROUNDS: Final = (9, 3)
GAMES_PER_ROUND: Final = 2
#: An idle PostgreSQL backend reports its statistics within 10 s (PGSTAT_IDLE_INTERVAL).
PG_STATS_DELAY: Final = 11.0
#: Only against hangs.
WAIT_LIMIT: Final = 300.0
WORKERS: Final = 3
#: The other single process's --commit-interval (ms).
BATCHED_COMMIT_MS: Final = 100


@dataclass(frozen=True)
class Server:
    """A game server process: where it answers, and its pid (for its CPU)."""

    name: str
    url: str
    pid: int


@dataclass(frozen=True)
class Spent:
    """What the parts had spent at one moment."""

    at: float
    cpu: dict[str, float]  # part -> CPU seconds
    redis_commands: int
    redis_bytes_in: int


@dataclass(frozen=True)
class DbCounts:
    commits: int
    rows: int  # inserted, updated or deleted


@dataclass
class Bench:
    """The processes and the clients of one run."""

    http: aiohttp.ClientSession
    redis: aioredis.Redis
    db: asyncpg.Connection
    db_names: list[str]  # the single process's, the batched one's, the workers'
    single: Server
    batched: Server  # the single process with BATCHED_COMMIT_MS
    workers: list[Server]
    bots: list[str]
    bot_pids: list[int]
    postmaster: int
    redis_pid: int

    async def new_game(self, server: Server, bot: str, moves: int) -> str:
        return await new_bot_game(self.http, server.url, bot, moves)

    async def watch(self, server: Server, game_id: str) -> str:
        """Follow the compact stream of ``game_id`` on ``server`` to its `end`: its reason
        (``closed`` if the socket closed first)."""
        url = server.url.replace("http", "ws", 1) + f"/spectate/{game_id}?board=0"
        async with self.http.ws_connect(url, max_msg_size=0) as ws:
            async for message in ws:
                if message.type is not aiohttp.WSMsgType.TEXT:
                    break
                if message.data.startswith('{"type":"end"'):
                    return str(orjson.loads(message.data).get("reason"))
        return "closed"

    async def play_watched(self, server: Server, bot: str, moves: int) -> str:
        return await self.watch(server, await self.new_game(server, bot, moves))

    async def wait_for_end(self, server: Server, game_id: str) -> None:
        """Poll ``GET /games/<id>`` until the game has a result (nobody watches it)."""
        while True:
            async with self.http.get(f"{server.url}/games/{game_id}") as response:
                if (await response.json()).get("result") is not None:
                    return
            await asyncio.sleep(0.05)

    async def spent(self) -> Spent:
        """What every part has spent so far (CPU in clock ticks: phases last seconds)."""
        stats = await self.redis.info("stats")
        servers = [self.single, self.batched, *self.workers]
        cpu = {
            "game servers": sum(cpu_seconds(server.pid) for server in servers),
            "bot servers": sum(cpu_seconds(pid) for pid in self.bot_pids),
            "PostgreSQL": tree_cpu_seconds(self.postmaster),
            "Redis": cpu_seconds(self.redis_pid),
            "client": time.process_time(),
        }
        return Spent(
            time.perf_counter(),
            cpu,
            int(stats["total_commands_processed"]),
            int(stats["total_net_input_bytes"]),
        )

    async def db_counts(self) -> DbCounts:
        """The databases' commits and rows written so far (all three: a phase writes to
        one), once every backend has reported them (an idle one does within
        ``PG_STATS_DELAY``)."""
        await asyncio.sleep(PG_STATS_DELAY)
        row = await self.db.fetchrow(
            "SELECT sum(xact_commit) AS xact_commit, "
            "sum(tup_inserted + tup_updated + tup_deleted) AS rows "
            "FROM pg_stat_database WHERE datname = ANY($1::text[])",
            self.db_names,
        )
        assert row is not None
        return DbCounts(int(row["xact_commit"]), int(row["rows"]))


# ------------------------------------------------------------ 1. games per second


@dataclass(frozen=True)
class Phase:
    name: str
    games: int
    seconds: float
    cpu: dict[str, float]  # part -> CPU seconds over the phase
    redis_commands: int
    redis_bytes_in: int
    db: DbCounts  # over the phase
    reasons: Counter[str]

    @property
    def rate(self) -> float:
        return self.games / self.seconds

    def __add__(self, other: Phase) -> Phase:
        """Two rounds of the same setting as one."""
        return Phase(
            self.name,
            self.games + other.games,
            self.seconds + other.seconds,
            {part: self.cpu[part] + other.cpu[part] for part in self.cpu},
            self.redis_commands + other.redis_commands,
            self.redis_bytes_in + other.redis_bytes_in,
            DbCounts(self.db.commits + other.db.commits, self.db.rows + other.db.rows),
            self.reasons + other.reasons,
        )


async def throughput(
    bench: Bench, name: str, servers: list[Server], games_each: int, db_before: DbCounts
) -> tuple[Phase, DbCounts]:
    """``games_each`` games per server, created round robin, ``IN_FLIGHT`` at once on
    each; and the database's counts after them (the next phase's before)."""
    gates = [asyncio.Semaphore(IN_FLIGHT) for _ in servers]

    async def one(index: int) -> str:
        which = index % len(servers)
        async with gates[which]:
            return await bench.play_watched(servers[which], bench.bots[which], MOVES)

    games = games_each * len(servers)
    before = await bench.spent()
    async with asyncio.timeout(WAIT_LIMIT):
        reasons = await asyncio.gather(*(one(index) for index in range(games)))
    after = await bench.spent()
    db_after = await bench.db_counts()
    phase = Phase(
        name=name,
        games=games,
        seconds=after.at - before.at,
        cpu={part: after.cpu[part] - before.cpu[part] for part in after.cpu},
        redis_commands=after.redis_commands - before.redis_commands,
        redis_bytes_in=after.redis_bytes_in - before.redis_bytes_in,
        db=DbCounts(db_after.commits - db_before.commits, db_after.rows - db_before.rows),
        reasons=Counter(reasons),
    )
    return phase, db_after


def print_throughput(phases: list[Phase], games_each: int, rounds: int) -> None:
    one = next(phase for phase in phases if phase.name == "1 worker")
    parts = list(one.cpu)
    print(
        f"1. games/s: {games_each} games of {MOVES} moves per game server ({rounds} "
        f"round{'s' if rounds > 1 else ''}), created round robin, {IN_FLIGHT} at once on "
        f"each ({os.cpu_count()} CPUs, shared)"
    )
    cores = os.cpu_count() or 1
    header = "".join(f"{part:>13}" for part in parts)
    print(f"   {'':16}{'games/s':>8}{'vs 1 worker':>12}  CPU ms per game:{header}{'all':>8}")
    for phase in phases:
        per_game = "".join(f"{phase.cpu[part] / phase.games * 1000:13.1f}" for part in parts)
        total = sum(phase.cpu.values()) / phase.games * 1000
        print(
            f"   {phase.name:16}{phase.rate:8.1f}{phase.rate / one.rate:11.2f}x"
            f"{'':17}{per_game}{total:8.1f}"
        )
    print(
        "   cores busy (all parts' CPU / wall time), and the most this machine could do "
        f"were its {cores} cores ours alone ({cores} / all the CPU per game):"
    )
    for phase in phases:
        total = sum(phase.cpu.values()) / phase.games
        busy = sum(phase.cpu.values()) / phase.seconds
        print(f"   {phase.name:16}{busy:8.2f} cores busy, ceiling {cores / total:5.1f} games/s")
    for phase in phases:
        moves = phase.games * MOVES
        odd = {reason: n for reason, n in phase.reasons.items() if reason != "draw"}
        ended = f"; ended otherwise than by the turn limit: {odd}" if odd else ""
        print(
            f"   {phase.name}: per move, PostgreSQL {phase.db.commits / moves:.3f} commits and "
            f"{phase.db.rows / moves:.2f} rows written; Redis {phase.redis_commands / moves:.2f} "
            f"commands, {phase.redis_bytes_in / moves:.0f} bytes in{ended}"
        )


async def games_per_second(bench: Bench, quick: bool) -> None:
    games_each = GAMES[1] if quick else GAMES[0]
    settings = [
        ("single process", [bench.single]),
        (f"single, {BATCHED_COMMIT_MS} ms", [bench.batched]),
    ]
    settings += [
        (f"{n} worker{'s' if n > 1 else ''}", bench.workers[:n]) for n in range(1, WORKERS + 1)
    ]
    rounds = ROUNDS_1[1] if quick else ROUNDS_1[0]
    phases: dict[str, Phase] = {}
    db = await bench.db_counts()
    for round_ in range(rounds):
        # Alternate the order: whatever runs later pays for the store grown meanwhile.
        for name, servers in settings if round_ % 2 == 0 else settings[::-1]:
            phase, db = await throughput(bench, name, servers, games_each, db)
            phases[name] = phases[name] + phase if name in phases else phase
    print_throughput([phases[name] for name, _ in settings], games_each * rounds, rounds)


# --------------------------------------------------------------- 2. the fan-out


@dataclass(frozen=True)
class Setting:
    name: str
    owner: Server
    spectator_on: Server | None


async def one_game_cpu(bench: Bench, setting: Setting) -> dict[str, float]:
    """Play one game of ``FANOUT_MOVES`` moves in ``setting``: µs of CPU per move of its
    owner, of the spectator's worker (another one) and of Redis."""
    parts = {"owner": setting.owner.pid, "Redis": bench.redis_pid}
    if setting.spectator_on is not None and setting.spectator_on != setting.owner:
        parts["spectator's worker"] = setting.spectator_on.pid
    pids = list(parts.values())
    before = await settled_cpu(*pids, limit=WAIT_LIMIT)
    game_id = await bench.new_game(setting.owner, bench.bots[0], FANOUT_MOVES)
    watching = None
    if setting.spectator_on is not None:
        watching = asyncio.create_task(bench.watch(setting.spectator_on, game_id))
    async with asyncio.timeout(WAIT_LIMIT):
        await bench.wait_for_end(setting.owner, game_id)
        if watching is not None and (reason := await watching) != "draw":
            print(f"   (a spectator saw a game of {setting.name!r} end: {reason})")
    after = await settled_cpu(*pids, limit=WAIT_LIMIT)
    return {
        part: (after[index] - before[index]) / FANOUT_MOVES * 1e6
        for index, part in enumerate(parts)
    }


async def publish_cost(bench: Bench, size: int = 4096, times: int = 2000) -> float:
    """µs of this process's CPU per ``PUBLISH`` of a ``size``-byte message to a channel
    nobody listens to, one per pipeline round trip (as a worker's publisher sends them
    when its games' moves come one at a time): the Redis client's share of a worker's
    fan-out (redis-py, as the workers use it)."""
    data = b"u 1 " + b"x" * (size - 4)
    started_at = time.process_time()
    for _ in range(times):
        pipe = bench.redis.pipeline(transaction=False)
        pipe.publish("htttx:bench:nobody", data)
        await pipe.execute()
    return (time.process_time() - started_at) / times * 1e6


async def fanout_cost(bench: Bench, quick: bool) -> None:
    single, owner, other = bench.single, bench.workers[0], bench.workers[1]
    settings = [
        Setting("single process, nobody watching", single, None),
        Setting("worker, nobody watching", owner, None),
        Setting("worker, spectator on another", owner, other),
        Setting("single process, spectator on it", single, single),
    ]
    rounds = ROUNDS[1] if quick else ROUNDS[0]
    measured: dict[str, list[dict[str, float]]] = {setting.name: [] for setting in settings}
    for round_ in range(rounds):
        # Alternate the order too: whatever runs later pays for the store grown meanwhile.
        for setting in settings if round_ % 2 == 0 else settings[::-1]:
            for _ in range(GAMES_PER_ROUND):
                measured[setting.name].append(await one_game_cpu(bench, setting))
    medians = {
        name: {part: statistics.median(game[part] for game in games) for part in games[0]}
        for name, games in measured.items()
    }
    base = medians[settings[0].name]["owner"]
    print(
        f"2. CPU per move of the fan-out: {FANOUT_MOVES}-move games one at a time, "
        f"medians of {rounds * GAMES_PER_ROUND} games per setting ({rounds} rounds)"
    )
    for setting in settings:
        figures = medians[setting.name]
        total = sum(figures.values())
        detail = ", ".join(f"{part} {us:.0f} us" for part, us in figures.items())
        print(
            f"   {setting.name:33} owner {figures['owner']:5.0f} us "
            f"({figures['owner'] / base:.2f}x)  all {total:5.0f} us ({total / base:.2f}x)"
            f"  [{detail}]"
        )
    unwatched = medians[settings[1].name]
    remote = medians[settings[2].name]
    local = medians[settings[3].name]
    its_worker = remote["spectator's worker"]
    print(
        f"   added per move: a worker nobody watches {unwatched['owner'] - base:+.0f} us "
        f"on the owner ({unwatched['Redis']:+.0f} us of Redis); one spectator on another "
        f"worker {sum(remote.values()) - sum(unwatched.values()):+.0f} us in all "
        f"(its worker {its_worker:.0f} us); one spectator on the single "
        f"process {local['owner'] - base:+.0f} us"
    )
    print(
        f"   of which the Redis client's: one pipelined PUBLISH round trip (4 KB, nobody "
        f"subscribed) costs {await publish_cost(bench):.0f} us of CPU (redis-py, in this "
        "process); the owner's other added work for a spectator elsewhere: building and "
        "encoding every move's board_update with the whole board, which a game nobody "
        "watches skips"
    )


# ---------------------------------------------------------------------- running


def _postmaster_pid(postgres: PostgresCluster) -> int:
    return int((postgres.data / "postmaster.pid").read_text().split()[0])


def start_servers(
    stack: contextlib.ExitStack[bool | None], db_urls: Sequence[str], redis_url: str
) -> tuple[Server, Server, list[Server]]:
    """The single processes (the second with ``BATCHED_COMMIT_MS``), on the first two of
    ``db_urls``, then the workers one at a time on the third (the first cleans up after a
    previous run, the others join it), each stopped as ``stack`` closes."""
    common = ["--no-example-bots", "--log-level", "warning"]
    common += ["--max-games", "1000", "--max-games-per-client", "1000"]

    def start(name: str, db_url: str, extra: list[str]) -> Server:
        port = free_port()
        args = ["-m", "game.serve", "--port", str(port), "--db", db_url, *common, *extra]
        process = stack.enter_context(started(args, port, timeout=60))
        return Server(name, f"http://127.0.0.1:{port}", process.pid)

    single_db, batched_db, workers_db = db_urls
    single = start("single", single_db, [])
    batched = start("batched", batched_db, ["--commit-interval", str(BATCHED_COMMIT_MS)])
    workers = [
        start(f"w{n}", workers_db, ["--redis", redis_url, "--worker-id", f"w{n}"])
        for n in range(1, WORKERS + 1)
    ]
    return single, batched, workers


async def run(quick: bool, parts: tuple[int, ...]) -> int:
    bindir, redis_bin = _postgres_bindir(), redis_executable()
    if bindir is None or redis_bin is None:
        print("PostgreSQL and redis-server are needed: `make postgres redis`", file=sys.stderr)
        return 1
    postgres, redis = PostgresCluster(bindir), RedisServer(redis_bin)
    with contextlib.ExitStack() as stack:
        stack.callback(postgres.stop)
        postgres.start()
        stack.callback(redis.stop)
        redis.start()
        assert redis.process is not None
        db_urls = [postgres.new_database() for _ in ("single", "batched", "workers")]
        db_names = [db_url.split("@/", 1)[1].split("?")[0] for db_url in db_urls]
        bot_urls, bot_pids = [], []
        for _ in range(WORKERS):
            port = free_port()
            args = ["-m", "bot.serve", "--bot", "bot.bots:LatticeBot", "--port", str(port)]
            process = stack.enter_context(started([*args, "--log-level", "warning"], port))
            bot_urls.append(f"http://127.0.0.1:{port}")
            bot_pids.append(process.pid)
        single, batched, workers = start_servers(stack, db_urls, redis.url)
        db = await asyncpg.connect(
            user="postgres", database=db_names[0], host=str(postgres.socket_dir), port=postgres.PORT
        )
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as http:
            client = aioredis.from_url(redis.url)
            try:
                bench = Bench(
                    http=http,
                    redis=client,
                    db=db,
                    db_names=db_names,
                    single=single,
                    batched=batched,
                    workers=workers,
                    bots=bot_urls,
                    bot_pids=bot_pids,
                    postmaster=_postmaster_pid(postgres),
                    redis_pid=redis.process.pid,
                )
                for server in (single, batched, *workers):  # warm up every path
                    await bench.play_watched(server, bot_urls[0], 10)
                if 1 in parts:
                    await games_per_second(bench, quick)
                if parts == (1, 2):
                    print()
                if 2 in parts:
                    await fanout_cost(bench, quick)
            finally:
                await client.aclose()
                await db.close()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer games and rounds")
    parser.add_argument("--part", type=int, choices=(1, 2), help="run only this part")
    args = parser.parse_args()
    print((__doc__ or "").split("\n\n")[0])
    print(f"(pid {os.getpid()}, {os.cpu_count()} CPUs)\n")
    return asyncio.run(run(args.quick, (args.part,) if args.part else (1, 2)))


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the tournament runner (issue 11) against games played without it.

Processes: two bot servers (``python -m bot.serve``: five ``LatticeBot`` seats, and
``ThreatBot`` with ``WeakThreatBot``, defined below), a game server (``python -m
game.serve``, SQLite store in a temporary directory; a fresh one for the memory figure)
and this process, the client. Every figure is a ratio measured in the same run, because
the machines are shared and noisy.

1. Runner overhead: a round robin of 1000 games between five ``LatticeBot`` seats (it
   never makes a line, so every game lasts exactly its 20-move turn limit: all games
   equally cheap), 8 at a time, through ``POST /tournaments`` and timed until ``GET
   /tournaments/{id}`` (polled every 0.1 s) says it ended; against the baseline, the
   same 1000 games (the same pairs, colours, names and match settings, in schedule
   order) through ``POST /game/new``, 8 in flight, each followed on ``/spectate/{id}``
   until ``end``. Openings ``none``, so that every game on both sides is the same
   20 moves from X's stone at the origin. The spectator is the cheapest fair
   way to see a game end, but it costs the server some 22 packets a game that the
   runner does not send: if anything the baseline is a little slow, which flatters the
   runner. The full mode plays the pair three times, alternating which goes first
   (baseline, runner, runner, baseline, baseline, runner), adds the times and shows each
   round's ratio too (this machine's noise shows there). Target: the runner within 1.3x.
2. SPRT stops early: ``ThreatBot`` against ``WeakThreatBot`` (with probability
   ``WEAK_P`` a move is ``RandomBot``'s instead of ``ThreatBot``'s: some 50-80 Elo
   weaker, a score of 0.57 offline and about 0.6 through the server), SPRT elo0=0
   elo1=10 alpha=beta=0.05, openings ``default``, 8 at a time. The script prints
   the opening of the last game (its record's ``opening`` and ``opening_moves`` tags);
   with ``WeakThreatBot``'s seeds, the book is what makes the games differ. The bounds
   are fishtest's usual ones; the gap is several times elo1, so the test should accept
   H1 within some hundreds of games, decided by the runner alone.
   It is compared with the games a fixed-length test needs for the same error rates:
   from the measured pentanomial (pair scores 0, 1/4, 1/2, 3/4, 1 as fractions of the
   pair's 2 points, variance ``sigma2`` per pair), a one-sided z-test of ``s0`` against
   ``s1`` (the expected scores at elo0 and elo1, ``s(e) = 1 / (1 + 10 ** (-e / 400))``)
   with risks alpha and beta needs
   ``pairs = ((z(1-alpha) + z(1-beta)) * sqrt(sigma2) / (s1 - s0)) ** 2``, twice as
   many games. (The SPRT's bounds fix its error rates; the fixed-length count depends on
   the pair variance measured here.)
3. Memory stays flat: a round robin of 10,000 games (five ``LatticeBot`` seats, 10-move
   games, 16 at a time) on a fresh game server; its RSS (``VmRSS`` in
   ``/proc/<pid>/status``) every 1000 games, after the first 1000 against the end.
   Target: close to 1.0.

``--quick``: 400 games for 1 (once each), 2000 games for 3 (sampled every 500).
Nothing is asserted; the script prints figures and a summary. Run:
``.venv/bin/python bench/tournament.py [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import math
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import aiohttp
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.bot import Deadline, MoveDecision  # noqa: E402 (after the path is set)
from bot.bots import RandomBot, ThreatBot  # noqa: E402
from bot.bots._features import position_bot_capabilities  # noqa: E402
from bot.capabilities import Capabilities, Meta  # noqa: E402
from game.rules import Position  # noqa: E402
from models import Match, Player  # noqa: E402

# ------------------------------------------------------------- the weakened bot

#: The chance that a move of ``WeakThreatBot`` is a random one.
WEAK_P = 0.02
#: Seeds of ``WeakThreatBot``'s games: this plus the session's number in its process.
WEAK_SEED = 11_000


class WeakThreatBot(ThreatBot):
    """``ThreatBot`` that, with probability ``WEAK_P`` per move, plays ``RandomBot``'s
    move instead. One instance plays one game; instance *n* of a process is seeded with
    ``WEAK_SEED + n``, so the games differ from each other (``ThreatBot`` itself is
    deterministic) and a run's set of games is reproducible. Served here as
    ``bench.tournament:WeakThreatBot``."""

    name = "WeakThreatBot"
    _instances: ClassVar[itertools.count[int]] = itertools.count()

    def __init__(self) -> None:
        super().__init__()
        seed = WEAK_SEED + next(self._instances)
        self._random = random.Random(seed)
        self._random_bot = RandomBot(seed=seed)

    @classmethod
    def capabilities(cls) -> Capabilities:
        return position_bot_capabilities(
            Meta(
                name="WeakThreatBot",
                description=f"ThreatBot, but a random move with probability {WEAK_P:g}.",
                tags=["benchmark"],
            ),
            evaluation=True,
            evaluation_time_limit=True,
        )

    def play(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> MoveDecision:
        if self._random.random() < WEAK_P:
            return self._random_bot.play(position, player, match, deadline)
        return super().play(position, player, match, deadline)


# ------------------------------------------------------------------- helpers

LATTICE_SEATS = ("a", "b", "c", "d", "e")  # five bots: a round of 20 games
POLL_S = 0.1


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Summary:
    lines: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        print(line, flush=True)
        self.lines.append(line)


class Client:
    def __init__(self, http: aiohttp.ClientSession, server: str) -> None:
        self.http = http
        self.server = server

    async def post(self, path: str, body: dict[str, Any], expect: int) -> dict[str, Any]:
        async with self.http.post(self.server + path, json=body) as response:
            if response.status != expect:
                raise RuntimeError(f"POST {path}: {response.status} {await response.text()}")
            data: dict[str, Any] = await response.json()
            return data

    async def get(self, path: str) -> dict[str, Any]:
        async with self.http.get(self.server + path) as response:
            if response.status != 200:
                raise RuntimeError(f"GET {path}: {response.status} {await response.text()}")
            data: dict[str, Any] = await response.json()
            return data

    async def watch_end(self, game_id: str) -> dict[str, Any]:
        """Spectate until ``end``; the end packet (or why the socket closed first)."""
        url = self.server.replace("http", "ws", 1) + f"/spectate/{game_id}"
        async with self.http.ws_connect(url, max_msg_size=0) as ws:
            while True:
                message = await ws.receive()
                if message.type is not aiohttp.WSMsgType.TEXT:
                    return {"type": "closed", "code": ws.close_code, "reason": message.extra}
                # Only the end matters: skip decoding the board updates.
                if message.data.startswith('{"type":"end"'):
                    end: dict[str, Any] = orjson.loads(message.data)
                    return end

    async def tournament(
        self, body: dict[str, Any], on_poll: Any = None, poll_s: float = POLL_S
    ) -> tuple[float, dict[str, Any]]:
        """Create a tournament and poll it until it is over: wall time and final view."""
        started = time.perf_counter()
        created = await self.post("/tournaments", body, 201)
        path = f"/tournaments/{created['tournament_id']}"
        while True:
            await asyncio.sleep(poll_s)
            view = await self.get(path)
            if on_poll is not None:
                on_poll(view)
            if view["status"] != "running":
                return time.perf_counter() - started, view


def lattice_bots(bot_server: str) -> list[dict[str, str]]:
    return [{"name": f"lattice-{seat}", "url": f"{bot_server}/{seat}"} for seat in LATTICE_SEATS]


def server_seconds(view: dict[str, Any]) -> float:
    from datetime import datetime

    created = datetime.fromisoformat(view["created_at"])
    ended = datetime.fromisoformat(view["ended_at"])
    return (ended - created).total_seconds()


def failures_of(view: dict[str, Any]) -> int:
    return sum(sum(line["failures"].values()) for line in view["standings"])


# ------------------------------------------------------------ 1. overhead


async def direct_games(
    c: Client, bots: list[dict[str, str]], match: dict[str, Any], games: int, at_once: int
) -> tuple[float, int]:
    """The tournament's schedule played through ``POST /game/new``: wall time, and the
    games that did not end as turn-limit draws."""
    from game.tournament_schedule import Schedule

    urls = {bot["name"]: bot["url"] for bot in bots}
    schedule = Schedule(
        list(urls), "round_robin", rounds=games // (len(bots) * (len(bots) - 1)), openings=0
    )
    gate = asyncio.Semaphore(at_once)
    odd: list[dict[str, Any]] = []

    async def one(index: int) -> None:
        game = schedule.game(index)
        body = {
            "player_x": {"type": "bot", "bot_url": urls[game.x], "name": game.x},
            "player_o": {"type": "bot", "bot_url": urls[game.o], "name": game.o},
            "match_config": match,
            "name": f"direct: game {index + 1} (round {game.round + 1})",
        }
        async with gate:
            created = await c.post("/game/new", body, 200)
            end = await c.watch_end(created["game_id"])
        if end.get("reason") != "draw":
            odd.append(end)

    started = time.perf_counter()
    await asyncio.gather(*(one(index) for index in range(len(schedule))))
    return time.perf_counter() - started, len(odd)


async def overhead(c: Client, bot_server: str, games: int, repeats: int, out: Summary) -> None:
    at_once = 8
    bots = lattice_bots(bot_server)
    match = {"turn_limit": 20}
    rounds = games // (len(bots) * (len(bots) - 1))
    body = {
        "name": "bench overhead",
        "bots": bots,
        "rounds": rounds,
        "openings": "none",
        "concurrency": at_once,
        "match": match,
    }
    # Warm both paths up: connections, the store's tables, the bot servers' imports.
    await direct_games(c, bots, match, 20, at_once)
    await c.tournament({**body, "rounds": 1, "name": "bench warm-up"})

    runner: list[float] = []
    inside: list[float] = []
    direct: list[float] = []
    order = [
        which
        for round_ in range(repeats)
        for which in (("direct", "runner") if round_ % 2 == 0 else ("runner", "direct"))
    ]
    for which in order:
        if which == "direct":
            seconds, odd = await direct_games(c, bots, match, games, at_once)
            direct.append(seconds)
            note = f", {odd} not turn-limit draws" if odd else ""
            print(f"   direct: {games} games in {seconds:.2f} s{note}", flush=True)
        else:
            seconds, view = await c.tournament(body)
            runner.append(seconds)
            inside.append(server_seconds(view))
            draws = sum(line["draws"] for line in view["standings"]) // 2
            print(
                f"   runner: {view['games_done']} games in {seconds:.2f} s "
                f"(server: {inside[-1]:.2f} s), {view['status']}, {draws} draws, "
                f"{failures_of(view)} failures",
                flush=True,
            )
    ours, bare = sum(runner), sum(direct)
    played = games * len(runner)
    verdict = "meets" if ours <= 1.3 * bare else "misses"
    out.add(
        f"1. runner overhead: {played} games of 20 moves, {at_once} at once: POST /tournaments "
        f"{ours:.2f} s (created to ended on the server {sum(inside):.2f} s), POST /game/new "
        f"{bare:.2f} s -> {ours / bare:.2f}x ({verdict} the 1.3x target; "
        f"{played / ours:.0f} vs {played / bare:.0f} games/s"
        + (
            "; by round " + ", ".join(f"{r / d:.2f}x" for r, d in zip(runner, direct, strict=True))
            if repeats > 1
            else ""
        )
        + ")"
    )


# ---------------------------------------------------------------- 2. SPRT


def _z(p: float) -> float:
    """The standard normal quantile (statistics.NormalDist)."""
    quantile: float = statistics.NormalDist().inv_cdf(p)
    return quantile


def _score_of(elo: float) -> float:
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def fixed_length_games(
    pentanomial: list[int], elo0: float, elo1: float, alpha: float, beta: float
) -> float:
    """Games a fixed-length test of elo0 against elo1 needs at these risks, from the
    pair variance of ``pentanomial`` (see the module docstring)."""
    pairs = sum(pentanomial)
    values = [0.0, 0.25, 0.5, 0.75, 1.0]
    mean = sum(v * n for v, n in zip(values, pentanomial, strict=True)) / pairs
    variance = sum(n * (v - mean) ** 2 for v, n in zip(values, pentanomial, strict=True)) / pairs
    gap = _score_of(elo1) - _score_of(elo0)
    needed_pairs = ((_z(1 - alpha) + _z(1 - beta)) * math.sqrt(variance) / gap) ** 2
    return 2 * needed_pairs


async def sprt(c: Client, bot_server: str, out: Summary) -> None:
    elo0, elo1, alpha, beta = 0.0, 10.0, 0.05, 0.05
    body = {
        "name": "bench sprt",
        "format": "gauntlet",
        "bots": [
            {"name": "ThreatBot", "url": f"{bot_server}/threat"},
            {"name": "WeakThreatBot", "url": f"{bot_server}/weak"},
        ],
        "rounds": 20_000,  # at most 40,000 games: the SPRT is meant to stop long before
        "openings": "default",
        "concurrency": 8,
        "sprt": {"elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta},
    }
    seconds, view = await c.tournament(body, poll_s=0.25)
    test = view["sprt"]
    pair = view["pairs"][0]
    counted = view["games_counted"]
    print(
        f"   {view['status']}: {view['reason']}; {view['games_done']} games finished "
        f"({counted} counted) in {seconds:.1f} s",
        flush=True,
    )
    print(
        f"   ThreatBot vs WeakThreatBot: +{pair['wins']} ={pair['draws']} -{pair['losses']}, "
        f"pentanomial {pair['pentanomial']}, score {pair['score']:.3f}, "
        f"Elo {pair['elo']:.1f} +/- {pair['elo_error']:.1f}, {failures_of(view)} failures",
        flush=True,
    )
    # Whether the book was used: the newest game is one of this tournament's.
    newest = (await c.get("/games?limit=1"))["items"][0]
    record = await c.get(f"/games/{newest['game_id']}")
    tags = record.get("tags", {})
    print(
        f"   openings: {newest['name']!r} started from opening "
        f"{tags.get('opening', '(none)')!r}, {tags.get('opening_moves', 0)} book move(s)",
        flush=True,
    )
    fixed = fixed_length_games(pair["pentanomial"], elo0, elo1, alpha, beta)
    out.add(
        f"2. SPRT (elo0={elo0:g} elo1={elo1:g} alpha={alpha:g} beta={beta:g}): "
        f"{test['decision']} with LLR {test['llr']:.2f} (bounds {test['lower']:.2f}, "
        f"{test['upper']:.2f}); SPRT used {counted} games, a fixed-length test needs "
        f"~{fixed:.0f} (N/M = {counted / fixed:.2f})"
    )


# -------------------------------------------------------------- 3. memory


async def memory(
    c: Client, bot_server: str, server_pid: int, games: int, every: int, out: Summary
) -> None:
    bots = lattice_bots(bot_server)
    body = {
        "name": "bench memory",
        "bots": bots,
        "rounds": games // (len(bots) * (len(bots) - 1)),
        "openings": "none",
        "concurrency": 16,
        "match": {"turn_limit": 10},
    }
    samples: list[tuple[int, float]] = [(0, rss_mib(server_pid))]

    def on_poll(view: dict[str, Any]) -> None:
        done = view["games_done"]
        if done >= samples[-1][0] + every and view["status"] == "running":
            samples.append((done, rss_mib(server_pid)))

    seconds, view = await c.tournament(body, on_poll=on_poll, poll_s=0.5)
    samples.append((view["games_done"], rss_mib(server_pid)))
    started = time.perf_counter()
    await c.get(f"/tournaments/{view['tournament_id']}")
    get_ms = (time.perf_counter() - started) * 1000
    print(
        f"   {view['status']}: {view['games_done']} games in {seconds:.1f} s, "
        f"{failures_of(view)} failures; RSS (MiB) by games done: "
        + ", ".join(f"{done}: {mib:.0f}" for done, mib in samples),
        flush=True,
    )
    print(f"   GET /tournaments/{{id}} at the end: {get_ms:.0f} ms", flush=True)
    first = next(((done, mib) for done, mib in samples if done >= every), samples[-1])
    end = samples[-1]
    out.add(
        f"3. memory: {end[0]} games of 10 moves, 16 at a time: game server RSS "
        f"{first[1]:.1f} MiB after {first[0]} games, {end[1]:.1f} MiB at the end "
        f"-> {end[1] / first[1]:.2f}x (target close to 1.0)"
    )


# ------------------------------------------------------------------- main


async def run(quick: bool) -> None:
    # bench/ is this script's directory, so bench/server.py imports as ``server``.
    from processes import free_port, started

    lattice_port, threat_port = free_port(), free_port()
    lattice = f"http://127.0.0.1:{lattice_port}"
    threat = f"http://127.0.0.1:{threat_port}"
    lattice_args = ["-m", "bot.serve", "--port", str(lattice_port), "--log-level", "warning"]
    lattice_args += [
        arg for seat in LATTICE_SEATS for arg in ("--bot", f"{seat}=bot.bots:LatticeBot")
    ]
    threat_args = ["-m", "bot.serve", "--port", str(threat_port), "--log-level", "warning"]
    threat_args += ["--bot", "threat=bot.bots:ThreatBot"]
    threat_args += ["--bot", "weak=bench.tournament:WeakThreatBot"]
    out = Summary()

    def server_args(port: int, data: str) -> list[str]:
        args = ["-m", "game.serve", "--port", str(port), "--db"]
        args += [f"sqlite+aiosqlite:///{data}/bench.sqlite", "--no-example-bots"]
        return [*args, "--log-level", "warning", "--max-games-per-client", "2000"]

    connector = aiohttp.TCPConnector(limit=0)
    with (
        started(lattice_args, lattice_port),
        started(threat_args, threat_port),
        tempfile.TemporaryDirectory() as data,
    ):
        async with aiohttp.ClientSession(connector=connector) as http:
            port = free_port()
            with started(server_args(port, f"{data}"), port):
                c = Client(http, f"http://127.0.0.1:{port}")
                print("1. runner overhead", flush=True)
                await overhead(
                    c, lattice, games=400 if quick else 1000, repeats=1 if quick else 3, out=out
                )
                print("2. SPRT", flush=True)
                await sprt(c, threat, out)
            os.mkdir(f"{data}/memory")
            port = free_port()
            with started(server_args(port, f"{data}/memory"), port) as process:
                c = Client(http, f"http://127.0.0.1:{port}")
                print("3. memory", flush=True)
                await memory(
                    c,
                    lattice,
                    process.pid,
                    games=2000 if quick else 10_000,
                    every=500 if quick else 1000,
                    out=out,
                )
    print("\nSummary")
    for line in out.lines:
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer games, for a smoke run")
    args = parser.parse_args()
    print((__doc__ or "").split("\n\n")[0])
    print(f"(pid {os.getpid()}, {os.cpu_count()} CPUs{', quick' if args.quick else ''})\n")
    asyncio.run(run(args.quick))


if __name__ == "__main__":
    main()

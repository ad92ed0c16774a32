"""Benchmark: games through the game server, against a bare relay, and under load.

Four processes: a bot server hosting ``LatticeBot`` (it never makes a line, so every game
lasts exactly its turn limit), the game server (``python -m game.serve``, SQLite store
in a temporary directory), a bare relay (this file with ``--relay``: a minimal Starlette
app that plays the same packets between the same two bot sockets with no rules, no
clocks and no records), and this process, the client.

0. CPU per move: the server's CPU time (every thread, from ``schedstat``) over 100-move
   games played one at a time with nobody watching (their end is seen on ``GET
   /health``), against the relay's over the same games (target: within 1.5x), split
   into the cost of a game that ends at once (2-move games) and that of each further
   move; and the marginal CPU of moves 500 to 1000 (1000 to 2000 stones; from 500- and
   1000-move games) against the 100-move figure: flat in game length means within 1.2x.
1. Wall time of one 100-move and one 500-move game through the server, against the
   relay, rounds alternating (7, ``--quick``; 9), medians, and the spread of the rounds'
   own ratios (one round: a relay game and a server game in a row). Target: the server
   within 1.3x the relay. The
   client learns the game's end as it learns the relay's, from one HTTP answer at the
   end: ``POST /game/new``, then ``GET /games/<id>?wait=...`` (the long poll), which
   answers with the committed record. A second line gives the same games watched by a
   spectator of the compact stream until ``end``, for transparency: the server then
   also does a spectator's work every move, which the relay never does.
2. Throughput: 64 games of 100 moves, 16 at a time, and the same through the relay
   (what the machine can do at all with these bots). Target: at least 0.6x the relay's
   rate. Each game's end is learnt as in 1 (``?wait=``), and the same games watched by
   a spectator each are printed on a second line.
3. Load: 1000 concurrent games (20 moves, 5 s heartbeat; ``--quick``: 500 of 60 moves,
   long enough that all are in flight at once): all finish, no forfeits, the
   peak number in flight at once (``GET /health``: no connection pool may cap it); how
   often a spectator's updates come (the time between two deliveries of ``board_update``
   packets, updates read together counting as one: the server, the network and the bot
   together) as p50/p99 over a sample of games, with the updates a delivery carries,
   and the game server's peak RSS.

The second lines of 1 and 2 watch each game with one spectator of the compact stream
(``?board=0``, what the web page reads) until ``end``; in 3 each game has one of the
full stream (protocol.md's), as before.

Nothing is asserted; the script prints figures. Run: ``.venv/bin/python bench/server.py``
(``--quick`` for smaller numbers; ``--only cpu|wall|throughput|load`` for some of the
figures, repeatable; ``--rounds N`` for more rounds of the wall times, whose medians
move with the machine's noise).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from games import new_bot_game  # noqa: E402 (bench/, next to this script)
from processes import free_port, main_thread_cpu_seconds, started, thread_cpu_seconds  # noqa: E402 (bench/, next to this script)

# ----------------------------------------------------------------- the bare relay


def relay_app() -> Any:
    """The baseline: two bot sockets, setup, then move_request/move_response in turn,
    with ``previous`` only, as the server sends a websocket bot by default (``board`` is
    an extension it sends only to seats with ``send_board``), and nothing else."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    http: dict[str, aiohttp.ClientSession] = {}

    async def play(request: Request) -> JSONResponse:
        body = orjson.loads(await request.body())
        moves: int = body["moves"]
        if "session" not in http:
            http["session"] = aiohttp.ClientSession()
        session = http["session"]
        started = time.perf_counter()
        sockets = {
            side: await session.ws_connect(body[side], autoping=True, max_msg_size=0)
            for side in ("x", "o")
        }
        standard = {"cells": [{"q": 0, "r": 0, "p": "x"}]}
        setup = orjson.dumps({"type": "setup", "board": standard}).decode()
        for ws in sockets.values():
            await ws.send_str(setup)
        last: dict[str, dict[str, Any] | None] = {"x": None, "o": None}
        for index in range(moves):
            side = "o" if index % 2 == 0 else "x"
            other = "x" if side == "o" else "o"
            previous = [move for move in (last[side], last[other]) if move is not None]
            request_packet = {"type": "move_request", "side": side, "previous": previous}
            await sockets[side].send_str(orjson.dumps(request_packet).decode())
            answer = orjson.loads((await sockets[side].receive()).data)
            last[side] = {"side": side, "pieces": answer["move"]["pieces"]}
        end = orjson.dumps({"type": "end", "winner": None, "reason": "draw"}).decode()
        for ws in sockets.values():
            await ws.send_str(end)
            await ws.close()
        return JSONResponse({"moves": moves, "seconds": time.perf_counter() - started})

    return Starlette(routes=[Route("/relay", play, methods=["POST"])])


def serve_relay(port: int) -> None:
    import uvicorn

    from bot.serve import uvicorn_config

    config = uvicorn_config(relay_app(), host="127.0.0.1", port=port, log_level="warning")
    uvicorn.Server(config).run()


# ------------------------------------------------------------------- processes


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# ---------------------------------------------------------------------- client


#: Seconds of one ``GET /games/<id>?wait=``: well under the client's own timeout (300 s).
WAIT_S = 60

# How the server writes every board_update (dump_packet puts "type" first, compactly).
_BOARD_UPDATE = '{"type":"board_update",'


class Client:
    def __init__(self, http: aiohttp.ClientSession, server: str, bot: str) -> None:
        self.http = http
        self.server = server
        self.bot = bot

    async def new_game(self, moves: int, heartbeat_ms: int = 5000) -> str:
        return await new_bot_game(self.http, self.server, self.bot, moves, heartbeat_ms)

    async def watch(
        self, game_id: str, *, compact: bool = True
    ) -> tuple[dict[str, Any], list[float]]:
        """Spectate until ``end``: the end packet and the arrival times of the updates.
        By default the compact stream (``?board=0``, what the web page reads): an
        update that stays the same size however long the game, as the relay has no
        spectator. The full stream's updates supersede each other, so a spectator that
        falls a flush behind gets the latest only: the gaps between them are the
        latency a spectator sees (the load scenario)."""
        query = "?board=0" if compact else ""
        url = self.server.replace("http", "ws", 1) + f"/spectate/{game_id}{query}"
        arrivals: list[float] = []
        async with self.http.ws_connect(url, max_msg_size=0) as ws:
            while True:
                message = await ws.receive()
                if message.type is not aiohttp.WSMsgType.TEXT:
                    # Closed before the end: say why (a spectator the server finds too
                    # slow is dropped).
                    closed = {"type": "closed", "code": ws.close_code, "reason": message.extra}
                    return closed, arrivals
                if message.data.startswith(_BOARD_UPDATE):
                    # Only the arrival counts: no need to decode the board (the client
                    # shares this machine's cores with the bots and the server).
                    arrivals.append(time.perf_counter())
                    continue
                packet = orjson.loads(message.data)
                if packet["type"] == "board_update":
                    arrivals.append(time.perf_counter())
                elif packet["type"] == "end":
                    return packet, arrivals

    async def play(self, moves: int, heartbeat_ms: int = 5000) -> tuple[float, dict[str, Any]]:
        """One game, watched by a spectator until ``end``: its wall time and the end."""
        started = time.perf_counter()
        game_id = await self.new_game(moves, heartbeat_ms)
        end, _ = await self.watch(game_id)
        return time.perf_counter() - started, end

    async def play_waited(self, moves: int) -> tuple[float, dict[str, Any]]:
        """One game, its end learnt from ``GET /games/<id>?wait=`` (one answer once the
        record is committed, as the relay answers once its game is played): its wall
        time and its result."""
        started = time.perf_counter()
        game_id = await self.new_game(moves)
        while True:  # a game longer than the wait: ask again
            url = f"{self.server}/games/{game_id}?wait={WAIT_S}"
            async with self.http.get(url) as response:
                record = orjson.loads(await response.read())
            if record["result"] is not None:
                return time.perf_counter() - started, record["result"]

    async def relay(self, relay: str, moves: int) -> float:
        socket_url = self.bot.replace("http", "ws", 1) + "/bws/v1-alpha/game"
        body = {"x": socket_url, "o": socket_url, "moves": moves}
        started = time.perf_counter()
        async with self.http.post(f"{relay}/relay", json=body) as response:
            await response.read()
        return time.perf_counter() - started


@contextlib.asynccontextmanager
async def client(server: str, bot: str) -> AsyncIterator[Client]:
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        yield Client(http, server, bot)


# ------------------------------------------------------------------- scenarios


async def game_wall_time(c: Client, relay: str, moves: int, rounds: int) -> None:
    """The server's game, its end learnt by ``?wait=`` (the target) and by a spectator,
    against the relay's: rounds alternating, medians."""
    waited: list[float] = []
    watched: list[float] = []
    bare: list[float] = []
    for _ in range(rounds):  # alternate, so drift in the machine's speed hits all three
        bare.append(await c.relay(relay, moves))
        seconds, result = await c.play_waited(moves)
        if result.get("reason") != "draw":
            print(f"   (a {moves}-move game ended by {result.get('reason')}: {result})")
        waited.append(seconds)
        seconds, end = await c.play(moves)
        if end.get("reason") != "draw":
            print(f"   (a {moves}-move game ended by {end.get('reason')}: {end.get('detail')})")
        watched.append(seconds)
    server, relayed = statistics.median(waited), statistics.median(bare)
    spectated = statistics.median(watched)
    verdict = "meets" if server <= 1.3 * relayed else "misses"
    # Each round's own ratio too: how far the machine's noise moves the figure.
    ratios = sorted(w / b for w, b in zip(waited, bare, strict=True))
    print(
        f"{moves}-move game: server {server * 1000:.0f} ms, bare relay {relayed * 1000:.0f} ms "
        f"-> {server / relayed:.2f}x ({verdict} the 1.3x target); {rounds} rounds' own "
        f"ratios {ratios[0]:.2f}-{ratios[-1]:.2f}x, median {statistics.median(ratios):.2f}x"
    )
    print(
        f"  the same games watched by a spectator: server {spectated * 1000:.0f} ms "
        f"-> {spectated / relayed:.2f}x"
    )


async def play_unwatched(c: Client, moves: int) -> None:
    """One game through the server, no spectator, so the server does what it does for
    any game, the same work the relay does. Games here run one at a time, so the game
    is over (and recorded) once ``GET /health`` counts no live game: a look that costs
    the server the same at any game length, where ``GET /games/<id>`` would read the
    whole record every time."""
    await c.new_game(moves)
    while True:
        await asyncio.sleep(0.05)
        async with c.http.get(f"{c.server}/health") as response:
            if (await response.json()).get("live_games") == 0:
                return


async def cpu_per_move(
    c: Client, relay: str, server_pid: int, relay_pid: int, games: int, moves: int
) -> tuple[float, float, float]:
    """The server's and the relay's CPU per move (µs) over ``games`` games of ``moves``
    moves each, one at a time, alternating; and the part of the server's that is its
    event loop's (its main thread)."""
    spent = {"server": 0.0, "relay": 0.0, "loop": 0.0}
    for _ in range(games):
        before = thread_cpu_seconds(relay_pid)
        await c.relay(relay, moves)
        spent["relay"] += thread_cpu_seconds(relay_pid) - before
        before, loop_before = thread_cpu_seconds(server_pid), main_thread_cpu_seconds(server_pid)
        await play_unwatched(c, moves)
        spent["server"] += thread_cpu_seconds(server_pid) - before
        spent["loop"] += main_thread_cpu_seconds(server_pid) - loop_before
    total = games * moves
    return spent["server"] / total * 1e6, spent["relay"] / total * 1e6, spent["loop"] / total * 1e6


async def cpu_figures(c: Client, relay: str, server_pid: int, relay_pid: int, quick: bool) -> None:
    """Server CPU per move against the relay's, and whether it stays flat in game length:
    per move in 100-move games, and the marginal cost of moves 500 to 1000 (1000 to 2000
    stones on the board) from 500- and 1000-move games."""
    rounds = 3 if quick else 6
    short = await cpu_per_move(c, relay, server_pid, relay_pid, rounds * 3, 100)
    short_server, short_relay, short_loop = short
    mid_server, mid_relay, _ = await cpu_per_move(c, relay, server_pid, relay_pid, rounds, 500)
    long_server, long_relay, _ = await cpu_per_move(c, relay, server_pid, relay_pid, rounds, 1000)
    verdict = "meets" if short_server <= 1.5 * short_relay else "misses"
    print(
        f"CPU per move (100-move games): server {short_server:.0f} us (its event loop "
        f"{short_loop:.0f}, its other threads, the store's writer above all, "
        f"{short_server - short_loop:.0f}), bare relay {short_relay:.0f} us -> "
        f"{short_server / short_relay:.2f}x ({verdict} the 1.5x target)"
    )
    # What the 100-move figure is made of: the cost of a game that ends at once (its
    # POST, discovery, record, sockets and end; each 2-move game also pays one look at
    # /health, as every game here does), and that of each move after it.
    tiny_server, tiny_relay, _ = await cpu_per_move(c, relay, server_pid, relay_pid, rounds * 3, 2)
    game_server, game_relay = tiny_server * 2, tiny_relay * 2
    move_server = (short_server * 100 - game_server) / 98
    move_relay = (short_relay * 100 - game_relay) / 98
    print(
        f"  of which per game (2-move games): server {game_server / 1000:.2f} ms, bare relay "
        f"{game_relay / 1000:.2f} ms ({game_server / game_relay:.2f}x); each further move: "
        f"server {move_server:.0f} us, bare relay {move_relay:.0f} us "
        f"({move_server / move_relay:.2f}x)"
    )
    # Moves 500..1000 of a game: (cost of 1000 moves - cost of 500 moves) / 500.
    late_server = 2 * long_server - mid_server
    late_relay = 2 * long_relay - mid_relay
    flat = "meets" if late_server <= 1.2 * short_server else "misses"
    print(
        f"CPU per move late in long games (moves 500-1000, 1000-2000 stones): server "
        f"{late_server:.0f} us ({late_server / short_server:.2f}x its 100-move figure, "
        f"{flat} the 1.2x target), bare relay {late_relay:.0f} us "
        f"({late_relay / short_relay:.2f}x)"
    )


async def games_per_second(
    play: Callable[[], Awaitable[object]], games: int, at_once: int
) -> float:
    gate = asyncio.Semaphore(at_once)

    async def one() -> None:
        async with gate:
            await play()

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(games)))
    return games / (time.perf_counter() - started)


async def throughput(c: Client, relay: str, games: int, at_once: int, moves: int) -> None:
    # The relay's rate, in the same run with the same bots, is what this machine can do
    # at all: the bot server and the client share its cores with the server under test.
    # The server's games end as the relay's do, in one HTTP answer (``?wait=``); the
    # same games watched by a spectator each (the server writes every move's update, the
    # client reads 16 streams on the same cores) on a second line.
    bare = await games_per_second(lambda: c.relay(relay, moves), games, at_once)
    rate = await games_per_second(lambda: c.play_waited(moves), games, at_once)
    watched = await games_per_second(lambda: c.play(moves), games, at_once)
    verdict = "meets" if rate >= 0.6 * bare else "misses"
    print(
        f"throughput: {games} games of {moves} moves, {at_once} at once: server "
        f"{rate:.1f} games/s, bare relay {bare:.1f} games/s -> {rate / bare:.2f}x "
        f"({verdict} the 0.6x target)"
    )
    print(
        f"  the same games watched by a spectator each: server {watched:.1f} games/s -> "
        f"{watched / bare:.2f}x"
    )


#: Updates that reach a spectator within this many seconds of each other came in one
#: delivery: the server writes a spectator's updates together, once per flush.
DELIVERY_S = 0.001


def _deliveries(arrivals: list[float]) -> list[float]:
    """The times of the deliveries among ``arrivals`` (each update's arrival, in order):
    an update that arrives within ``DELIVERY_S`` of the one before came with it. The gaps
    between deliveries are what a spectator waits; those inside one are 0 and would
    only say how many moves a flush carried.

    >>> _deliveries([0.0, 0.0002, 0.1, 0.1004, 0.1008, 0.35])
    [0.0, 0.1, 0.35]
    """
    times: list[float] = []
    last = -math.inf
    for arrival in arrivals:
        if arrival - last > DELIVERY_S:
            times.append(arrival)
        last = arrival
    return times


async def load(c: Client, games: int, moves: int, sample: int, server_pid: int) -> None:
    started = time.perf_counter()
    gate = asyncio.Semaphore(64)  # creating games, not playing them: keep the POSTs bounded

    async def create() -> str:
        async with gate:
            return await c.new_game(moves, heartbeat_ms=5000)

    async def create_and_watch() -> tuple[dict[str, Any], list[float]]:
        return await c.watch(await create(), compact=False)

    peak = 0

    async def count_in_flight() -> None:
        # GET /health says how many games run: the peak shows no pool caps them.
        nonlocal peak
        while True:
            async with c.http.get(f"{c.server}/health") as response:
                peak = max(peak, int((await response.json()).get("live_games", 0)))
            await asyncio.sleep(0.05)

    counter = asyncio.create_task(count_in_flight())
    # The sampled games are watched from the moment they exist, so that their updates
    # are seen as they happen; the others are checked for their end afterwards.
    sampled = [asyncio.create_task(create_and_watch()) for _ in range(sample)]
    others = await asyncio.gather(*(create() for _ in range(games - sample)))
    watched = list(await asyncio.gather(*sampled))
    watched += await asyncio.gather(*(c.watch(game_id, compact=False) for game_id in others))
    elapsed = time.perf_counter() - started
    counter.cancel()
    await asyncio.gather(counter, return_exceptions=True)
    forfeits = [end for end, _ in watched if end.get("reason") == "forfeit"]
    dropped = [end for end, _ in watched if end.get("type") == "closed"]
    deliveries = [_deliveries(arrivals) for _, arrivals in watched[:sample]]
    gaps = sorted(
        later - earlier for times in deliveries for earlier, later in itertools.pairwise(times)
    )
    p50 = gaps[len(gaps) // 2] * 1000 if gaps else float("nan")
    p99 = gaps[int(len(gaps) * 0.99)] * 1000 if gaps else float("nan")
    updates = sum(len(arrivals) for _, arrivals in watched[:sample])
    per_delivery = updates / max(1, sum(len(times) for times in deliveries))
    print(
        f"load: {games} games of {moves} moves at once finished in {elapsed:.1f} s, "
        f"{len(forfeits)} forfeits, {len(dropped)} spectators dropped; a spectator's "
        f"updates came every p50 {p50:.1f} ms, p99 {p99:.1f} ms "
        f"({per_delivery:.1f} updates at a time); "
        f"game server peak RSS {peak_rss_mib(server_pid):.0f} MiB; "
        f"peak games in flight {peak} of {games}"
    )
    if forfeits:
        print(f"   first forfeit: {forfeits[0]}")
    if dropped:
        print(f"   {len(dropped)} spectator sockets closed before 'end', e.g. {dropped[0]}")


#: The figures, in the order they run; ``--only NAME`` picks some.
FIGURES = ("cpu", "wall", "throughput", "load")


async def run(quick: bool, only: list[str], rounds: int | None) -> None:
    bot_port, server_port, relay_port = free_port(), free_port(), free_port()
    bot = f"http://127.0.0.1:{bot_port}"
    server = f"http://127.0.0.1:{server_port}"
    relay = f"http://127.0.0.1:{relay_port}"
    with tempfile.TemporaryDirectory() as data:
        db = f"sqlite+aiosqlite:///{data}/bench.sqlite"
        bot_args = ["-m", "bot.serve", "--bot", "bot.bots:LatticeBot", "--port", str(bot_port)]
        bot_args += ["--log-level", "warning"]
        server_args = ["-m", "game.serve", "--port", str(server_port), "--db", db]
        server_args += ["--no-example-bots", "--log-level", "warning"]
        # One client plays every game here: lift the per-client cap above the load.
        server_args += ["--max-games", "2000", "--max-games-per-client", "2000"]
        with (
            started(bot_args, bot_port),
            started(server_args, server_port) as server_process,
            started([__file__, "--relay", str(relay_port)], relay_port) as relay_process,
        ):
            async with client(server, bot) as c:
                await c.play(4)  # warm up both paths
                await c.relay(relay, 4)
                if "cpu" in only:
                    _starting("CPU per move: games one at a time, the relay's alternating")
                    await cpu_figures(c, relay, server_process.pid, relay_process.pid, quick)
                if "wall" in only:
                    wall_rounds = rounds or (7 if quick else 9)
                    _starting(f"wall time: {wall_rounds} rounds of 100-move, then 500-move games")
                    for moves in (100, 500):
                        await game_wall_time(c, relay, moves, rounds=wall_rounds)
                if "throughput" in only:
                    _starting("throughput: 16 games at once")
                    await throughput(c, relay, games=32 if quick else 64, at_once=16, moves=100)
                if "load" in only:
                    _starting(f"load: {500 if quick else 1000} games at once")
                    await load(
                        c,
                        games=500 if quick else 1000,
                        moves=60 if quick else 20,
                        sample=50,
                        server_pid=server_process.pid,
                    )


def _starting(what: str) -> None:
    """Say what runs next, before the minutes it may take (on stderr: stdout keeps the
    figures alone, for a file or a diff)."""
    print(f"... {what}", file=sys.stderr, flush=True)


def _rounds(text: str) -> int:
    """``--rounds``: a whole number of rounds, 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more rounds, got {value}")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer games, for a smoke run")
    parser.add_argument(
        "--only",
        choices=FIGURES,
        action="append",
        help="run this figure (repeatable; all by default): cpu (0), wall (1), "
        "throughput (2), load (3)",
    )
    parser.add_argument(
        "--rounds",
        type=_rounds,
        metavar="N",
        help="rounds of the wall-time figures (default 7 with --quick, else 9): more "
        "narrow the medians on a noisy machine",
    )
    parser.add_argument("--relay", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.relay:
        serve_relay(args.relay)
        return
    print(__doc__.split("\n\n")[0])
    print(f"(pid {os.getpid()}, {os.cpu_count()} CPUs)\n")
    asyncio.run(run(args.quick, args.only or list(FIGURES), args.rounds))


if __name__ == "__main__":
    main()

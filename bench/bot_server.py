"""Round trips per second through the bot server, against a bare WebSocket echo server.

A round trip is one ``move_request`` (an 11-stone board) sent and its ``move_response``
received, over the real stack: uvicorn (same settings for both, ``bot.serve.
uvicorn_config``), Starlette, ``BotSession``, the bot's call in the thread pool and back.
The bot is trivial (the first two legal cells, at once), so the figure is the
framework's own cost. The baseline is a Starlette WebSocket route on the same uvicorn
stack that sends every frame straight back: the least any server on this stack can do.

Both servers run in one child process (so the client's CPU does not compete with
them); the client (aiohttp, in this process) keeps some sockets busy, each
sending its next request as soon as the answer arrives. Rounds alternate between the
two servers and the median of each is printed, because machines are shared and noisy.
One connection measures latency (the client's own time counts on both sides); four
keep the server busy and measure its throughput. Target: the bot server keeps at least
70% of the echo rate. Nothing is asserted.

A third server shows what that target leaves: the echo with each frame passed through a
worker thread and back (``run_in_executor``), the one step the issue asks of every bot
server (the bot's call runs off the event loop) and nothing else: no parsing, no
session, no bot. No bot server can keep more of the echo rate than it does.

Run: ``.venv/bin/python bench/bot_server.py`` (``--connections 1 4``, ``--seconds S``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import random
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp
import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket

from bot.bot import BaseBot, Deadline, MoveDecision
from bot.capabilities import BwsV1Alpha, Capabilities, default_capabilities
from bot.serve import BotServer, create_app, uvicorn_config
from bot.session import BotSession, Send, Think
from game.rules import Position, Side
from models import Match, Player

ROUNDS = 3
WARMUP_SECONDS = 0.5

# 11 stones around the origin, no line: a small mid-game board, as a game makes it (X's
# opening, then two stones a move, O first), with X to move.
_CELLS = [(0, 0), (1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1), (2, 0), (2, -1), (0, 2)]
_CELLS += [(-2, 2)]
STONES = [(q, r, "x" if (i + 1) % 4 < 2 else "o") for i, (q, r) in enumerate(_CELLS)]
BOARD = [{"q": q, "r": r, "p": p} for q, r, p in STONES]
REQUEST = json.dumps(
    {"type": "move_request", "side": "x", "previous": [], "board": {"cells": BOARD}}
)


def _first_two_legal() -> tuple[tuple[int, int], tuple[int, int]]:
    position = Position(setup=STONES, to_move="x")
    first, second = sorted(position.legal_cells())[:2]
    return first, second


class TrivialBot(BaseBot):
    """Answers the first two legal cells of the benchmark's board, found once: no
    thinking at all. Declares ``move_skips``, so the client may send the same position
    again and again instead of playing the bot's answers."""

    MOVE = _first_two_legal()

    @classmethod
    def capabilities(cls) -> Capabilities:
        return default_capabilities(BwsV1Alpha(move_skips=True))

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        return self.MOVE


async def echo(websocket: WebSocket) -> None:
    await websocket.accept()
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        await websocket.send_text(message["text"])


_HOP_POOL = ThreadPoolExecutor(4, thread_name_prefix="echo-hop")


async def echo_through_a_thread(websocket: WebSocket) -> None:
    """The echo, but each frame goes through a worker thread and back first: the one
    step the issue requires of any bot server (the bot's call runs off the event loop)
    and nothing else. What this keeps of the echo rate is the most a bot server can."""
    await websocket.accept()
    loop = asyncio.get_running_loop()
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        text = await loop.run_in_executor(_HOP_POOL, str, message["text"])
        await websocket.send_text(text)


# ------------------------------------------------------------------ the servers


async def serve_both() -> None:
    """Child process: both servers on ephemeral ports; prints them, runs until stdin
    closes."""
    bot_app = create_app(TrivialBot)
    bot_config = uvicorn_config(bot_app, port=0, log_level="warning")
    bot_server = BotServer(bot_config, bot_app.state.bot_pool)
    echo_app = Starlette(
        routes=[WebSocketRoute("/echo", echo), WebSocketRoute("/hop", echo_through_a_thread)]
    )
    echo_server = uvicorn.Server(uvicorn_config(echo_app, port=0, log_level="warning"))
    tasks = [asyncio.create_task(s.serve()) for s in (bot_server, echo_server)]
    while not (bot_server.started and echo_server.started):
        await asyncio.sleep(0.01)
    echo_port = echo_server.servers[0].sockets[0].getsockname()[1]
    print(f"{bot_server.port} {echo_port}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    bot_server.should_exit = echo_server.should_exit = True
    await asyncio.gather(*tasks)


# ------------------------------------------------------------------- the client


async def drive(url: str, connections: int, seconds: float, check: bool) -> float:
    """Round trips per second over ``connections`` busy sockets for ``seconds``."""
    async with aiohttp.ClientSession() as client:
        sockets = [await client.ws_connect(url, autoping=False) for _ in range(connections)]
        if check:  # the bot server: a session starts with its setup
            for ws in sockets:
                await ws.send_str('{"type":"setup"}')
        try:
            counts = [0] * connections
            stop = time.perf_counter() + seconds

            async def loop(index: int) -> None:
                ws = sockets[index]
                while time.perf_counter() < stop:
                    await ws.send_str(REQUEST)
                    message = await ws.receive()
                    if message.type is not aiohttp.WSMsgType.TEXT:
                        raise RuntimeError(f"{url}: {message.type} {message.data} {message.extra}")
                    if check and not message.data.startswith('{"type":"move_response"'):
                        raise RuntimeError(f"unexpected answer: {message.data[:200]}")
                    counts[index] += 1

            started = time.perf_counter()
            await asyncio.gather(*(loop(i) for i in range(connections)))
            return sum(counts) / (time.perf_counter() - started)
        finally:
            for ws in sockets:
                await ws.close()


async def measure(connections: int, seconds: float) -> None:
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        bot_port, echo_port = child.stdout.readline().split()
        bot_url = f"ws://127.0.0.1:{bot_port}/bws/v1-alpha/game"
        echo_url = f"ws://127.0.0.1:{echo_port}/echo"
        hop_url = f"ws://127.0.0.1:{echo_port}/hop"
        await drive(echo_url, connections, WARMUP_SECONDS, check=False)
        await drive(hop_url, connections, WARMUP_SECONDS, check=False)
        await drive(bot_url, connections, WARMUP_SECONDS, check=True)
        echo_rates: list[float] = []
        hop_rates: list[float] = []
        bot_rates: list[float] = []
        for _ in range(ROUNDS):
            echo_rates.append(await drive(echo_url, connections, seconds, check=False))
            hop_rates.append(await drive(hop_url, connections, seconds, check=False))
            bot_rates.append(await drive(bot_url, connections, seconds, check=True))
    finally:
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(timeout=15)
        except subprocess.TimeoutExpired:
            child.kill()
    echo_rate = statistics.median(echo_rates)
    hop_rate = statistics.median(hop_rates)
    bot_rate = statistics.median(bot_rates)
    print(f"{connections} connection(s), {ROUNDS} rounds of {seconds:g} s each, median:")
    print(f"  echo server (uvicorn + Starlette)  {echo_rate:9.0f} round trips/s")
    print(
        f"  echo through a worker thread       {hop_rate:9.0f} round trips/s"
        f"   ({hop_rate / echo_rate:.0%} of echo: the ceiling of any off-loop bot)"
    )
    print(f"  bot server (TrivialBot, threads)   {bot_rate:9.0f} round trips/s")
    verdict = "meets" if bot_rate >= 0.7 * echo_rate else "misses"
    print(
        f"  bot / echo = {bot_rate / echo_rate:.0%} ({verdict} the 70% target); "
        f"bot / echo through a thread = {bot_rate / hop_rate:.0%}"
    )


# ------------------------------------------------------------ the session alone

SESSION_SIZES = (12, 200, 1000)
SESSION_REQUESTS = 5  # timed requests per fresh session, each adds 4 stones
SESSION_ROUNDS = 5


def _game(stones: int, seed: int = 7) -> list[tuple[int, int, Side]]:
    """A deterministic game of at least ``stones`` stones without a line: each stone a
    random legal cell near one of the last stones (a real game stays compact)."""
    rng = random.Random(seed)
    position = Position()
    while len(position) < stones:
        recent = position.stones[-12:]
        q, r, _ = rng.choice(recent)
        cell = (q + rng.randint(-3, 3), r + rng.randint(-3, 3))
        if not position.is_legal(*cell):
            continue
        position.place(*cell)
        if position.outcome is not None:
            position.undo()
    return position.stones


def _session_script(
    game: list[tuple[int, int, Side]], start: int
) -> tuple[list[bytes], list[MoveDecision]]:
    """O's move requests from the first one with at least ``start`` stones on the board,
    as a game server sends them (``board`` in placement order, ``previous`` = the bot's
    last move and X's move), and the bot's answers (O's moves of ``game``)."""
    first = max(5, 1 + 4 * ((start - 1 + 3) // 4))  # boards after X's move: 1 + 4k stones
    frames: list[bytes] = []
    answers: list[MoveDecision] = []
    for size in range(first, first + 4 * (SESSION_REQUESTS + 1), 4):

        def as_move(index: int) -> dict[str, Any]:
            return {
                "side": game[index][2],
                "pieces": [{"q": q, "r": r} for q, r, _ in game[index : index + 2]],
            }

        previous = [as_move(size - 4), as_move(size - 2)]
        board = [{"q": q, "r": r, "p": p} for q, r, p in game[:size]]
        packet = {"type": "move_request", "side": "o", "previous": previous}
        frames.append(json.dumps({**packet, "board": {"cells": board}}).encode())
        answers.append(MoveDecision.of([(q, r) for q, r, _ in game[size : size + 2]]))
    return frames, answers


def _session_cost(frames: list[bytes], answers: list[MoveDecision], derive: bool) -> float:
    """Seconds for the timed requests of one fresh session (the first one, which starts
    the session's board, is not timed)."""
    session = BotSession(BwsV1Alpha())
    if not derive:
        session._derive_positions = False  # the full rebuild of every position
    session.receive(b'{"type":"setup"}', now=0.0)
    elapsed = 0.0
    for index, (frame, answer) in enumerate(zip(frames, answers, strict=True)):
        started = time.perf_counter()
        [think] = session.receive(frame, now=float(index))
        assert isinstance(think, Think)
        [send] = session.job_done(think.job.job_id, answer, now=float(index))
        assert isinstance(send, Send) and send.warning is None, send
        send.data()
        if index:
            elapsed += time.perf_counter() - started
    return elapsed


def measure_session(seconds: float) -> None:
    """µs per move_request -> move_response through ``BotSession`` alone, deriving each
    position from the last vs. rebuilding it, alternating, median of rounds."""
    game = _game(max(SESSION_SIZES) + 4 * (SESSION_REQUESTS + 3))
    print(f"BotSession alone: µs per move_request -> move_response, median of {SESSION_ROUNDS}")
    print("  stones   derived   rebuilt   rebuilt/derived")
    for size in SESSION_SIZES:
        frames, answers = _session_script(game, size)
        # Sessions per round: enough for about `seconds` of timed work on both paths.
        probe = _session_cost(frames, answers, derive=False) + 1e-6
        sessions = max(3, int(seconds / SESSION_ROUNDS / 2 / probe))
        rates: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(SESSION_ROUNDS):
            for derive in (True, False):
                total = sum(_session_cost(frames, answers, derive) for _ in range(sessions))
                rates[derive].append(total / (sessions * SESSION_REQUESTS) * 1e6)
        derived, rebuilt = (statistics.median(rates[d]) for d in (True, False))
        print(f"  {size:6d}  {derived:8.1f}  {rebuilt:8.1f}  {rebuilt / derived:8.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--connections", type=int, nargs="+", default=[1, 4], help="busy sockets (default 1 4)"
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="per round and server")
    parser.add_argument(
        "--session", action="store_true", help="only the BotSession figures (no servers)"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        # The servers' loop is the one `python -m bot.serve` uses (uvicorn picks uvloop).
        if importlib.util.find_spec("uvloop"):
            import uvloop

            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                runner.run(serve_both())
        else:
            asyncio.run(serve_both())
        return
    measure_session(args.seconds)
    if args.session:
        return
    for connections in args.connections:
        asyncio.run(measure(connections, args.seconds))


if __name__ == "__main__":
    main()

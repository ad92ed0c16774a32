"""Benchmark: what the web page costs the game server.

Figures (``--only NAME`` runs one; all run by default):

* ``spectators``: 500 browser-equivalent spectators (WebSocket clients on
  ``/spectate/<id>?board=0``, the compact stream the page reads, reading every frame)
  on one game cost the game server no more than 1.2x the per-move time of the same game
  with no spectator, measured in one run. Printed: the server's CPU and the wall time
  per move with 0 and with N compact spectators (medians of rounds, the settings
  alternating), their ratios and the CPU per spectator per move; then the same with N
  spectators of the full stream (``/spectate/<id>``, a whole board per update: for
  information, it is O(stones) per frame). The server coalesces each spectator's writes
  (``game.fanout.SPECTATOR_FLUSH_S``), so with instant bots a spectator gets one write
  per flush interval carrying dozens of moves.
* ``first-render``: the game page's first render of a finished ~1000-stone game in
  headless Chromium (the system's), from navigation start to the page's own
  ``board-rendered`` mark, under 300 ms; the baseline is the empty shell
  (``/web/nothing``) in the same run. It runs a game server of its own.

Processes (``spectators``): a bot server hosting ``GatedLatticeBot`` (``LatticeBot``,
instant and never making a line, so every game lasts its turn limit; gated, see below),
the game server (``python -m game.serve``, SQLite store in a temporary directory), the
spectators (this file with ``--swarm``: one asyncio process holding every spectator
socket), and this process, which creates the games and reads the clocks.

The measured window is a stretch of moves with every spectator already watching: a
game is created, its spectators connect (each has its ``setup``), and only then does
the bot make the first move; at move ``PAUSE_AT`` the bot pauses, the server's CPU is
read once it has written what it owed the spectators, and the game is let finish. So
neither connecting 500 sockets nor closing them at the end is counted: only what each
move costs. The server's CPU is the sum of its threads' run time
(``/proc/<pid>/task/*/schedstat``, nanoseconds). With no spectator the server does not
even build a ``board_update``: the ratio is the whole cost of being watched.

Nothing is asserted; the script prints figures. Run: ``.venv/bin/python bench/web.py``
(``--quick`` for fewer rounds; ``--spectator-flush MS`` passes the server its flush
interval, default the server's).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Its siblings by bare name also when the bot server imports this as ``bench.web``.
sys.path.insert(0, str(ROOT / "bench"))

from games import new_bot_game  # noqa: E402
from playwright.sync_api import Page, sync_playwright  # noqa: E402
from processes import free_port, settled_cpu, started, thread_cpu_seconds  # noqa: E402

from bot.bot import Deadline  # noqa: E402
from bot.bots import LatticeBot  # noqa: E402
from game.fanout import SPECTATOR_FLUSH_S  # noqa: E402
from game.rules import Position  # noqa: E402
from models import Match, Player  # noqa: E402
from tests.browser import CHROMIUM_FLAGS, DESKTOP, chromium_executable  # noqa: E402
from tests.http_json import finished_record, post_ok  # noqa: E402

#: Moves of each measured game, and the move the bot pauses at (the window's end).
TURNS: Final = 300
PAUSE_AT: Final = 240
SPECTATORS: Final = 500
#: How long a gate or the swarm may keep anyone waiting: only against hangs.
WAIT_LIMIT: Final = 120.0

_GATES_ENV: Final = "HTTTX_BENCH_GATES"


# ------------------------------------------------------------------ the gated bot


class GatedLatticeBot(LatticeBot):
    """``LatticeBot`` that waits for the file ``start`` (in ``$HTTTX_BENCH_GATES``)
    before a game's first move, and at move ``PAUSE_AT`` writes ``paused`` and waits for
    ``resume``: the benchmark opens and closes its window on these. It runs in the bot
    server's worker threads, so its waits hold no event loop."""

    name = "GatedLatticeBot"

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        gates = Path(os.environ[_GATES_ENV])
        # Moves so far, from the stones: X's one stone, then two a move (the session may
        # hand the bot its board as a setup, where moves_played would say 0).
        played = (len(position) - 1) // 2
        if played == 0:
            _wait_for(gates / "start")
        elif played == PAUSE_AT:
            (gates / "paused").touch()
            _wait_for(gates / "resume")
        return super().play(position, player, match, deadline)


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_LIMIT
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear within {WAIT_LIMIT:g} s")
        time.sleep(0.001)


class Gates:
    """This process's side of the bot's gates."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def reset(self) -> None:
        for name in ("start", "paused", "resume"):
            (self.directory / name).unlink(missing_ok=True)

    def open(self, name: str) -> None:
        (self.directory / name).touch()

    async def reached(self, name: str) -> None:
        async with asyncio.timeout(WAIT_LIMIT):
            while not (self.directory / name).exists():
                await asyncio.sleep(0.001)


# -------------------------------------------------------------------- the swarm


async def swarm() -> None:
    """``--swarm``: spectators on command. Each stdin line ``URL N`` opens N spectator
    sockets on URL; once every one has its first frame (``setup``) it prints ``ready``;
    once every one has its ``end`` (or was closed) a JSON line of what they read."""
    import aiohttp

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        while line := await asyncio.to_thread(sys.stdin.readline):
            url, count = line.split()
            await _watch(http, url, int(count))


async def _watch(http: Any, url: str, count: int) -> None:
    import aiohttp

    ready = asyncio.Barrier(count + 1)
    handshakes = asyncio.Semaphore(64)  # connecting, not reading: keep the burst bounded

    async def spectator() -> tuple[int, bool]:
        frames, ended = 0, False
        async with handshakes:
            ws = await http.ws_connect(url, max_msg_size=0)
        try:
            first = True
            while True:
                message = await ws.receive()
                if message.type is not aiohttp.WSMsgType.TEXT:
                    break
                frames += 1
                if first:
                    first = False
                    await ready.wait()
                # Every frame is read whole, as the page reads it; only the end is looked
                # at (dump_packet writes "type" first).
                if message.data.startswith('{"type":"end"'):
                    ended = True
                    break
        finally:
            await ws.close()
        return frames, ended

    async with asyncio.timeout(WAIT_LIMIT):
        tasks = [asyncio.create_task(spectator()) for _ in range(count)]
        await ready.wait()
        _say("ready")
        results = await asyncio.gather(*tasks)
    frames = [n for n, _ in results]
    _say(
        json.dumps(
            {
                "frames_min": min(frames),
                "frames_max": max(frames),
                "ended": sum(ended for _, ended in results),
            }
        )
    )


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Swarm:
    """This process's side of ``--swarm``."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def watch(self, url: str, count: int) -> Callable[[], Awaitable[dict[str, int]]]:
        """Open ``count`` spectators on ``url``; returns once all have their setup, with
        a function that waits for the report of what they read to the end."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"{url} {count}\n".encode())
        await self.process.stdin.drain()
        assert await self._line() == "ready"

        async def finished() -> dict[str, int]:
            report: dict[str, int] = json.loads(await self._line())
            return report

        return finished

    async def _line(self) -> str:
        assert self.process.stdout is not None
        async with asyncio.timeout(WAIT_LIMIT):
            line = await self.process.stdout.readline()
        if not line:
            raise RuntimeError("the spectator swarm exited")
        return line.decode().strip()


@contextlib.asynccontextmanager
async def swarm_process() -> AsyncIterator[Swarm]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--swarm",
        cwd=ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        yield Swarm(process)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()


# ------------------------------------------------------------------ measuring


@dataclass(frozen=True)
class PerMove:
    cpu_us: float
    wall_us: float


@dataclass
class Setting:
    """Everything a figure needs: the processes and a client session."""

    http: Any  # aiohttp.ClientSession
    server: str
    bot: str
    server_pid: int
    gates: Gates
    swarm: Swarm
    quick: bool
    #: The server's flush interval: the window closes once the last flush is written.
    flush_s: float

    async def new_game(self, turns: int) -> str:
        return await new_bot_game(self.http, self.server, self.bot, turns)

    async def wait_idle(self) -> None:
        """Until the server runs no game (its end is polled: nobody watches it)."""
        async with asyncio.timeout(WAIT_LIMIT):
            while True:
                async with self.http.get(f"{self.server}/health") as response:
                    if (await response.json()).get("live_games") == 0:
                        return
                await asyncio.sleep(0.05)


async def watched_game(s: Setting, spectators: int, *, compact: bool = True) -> PerMove:
    """One game with ``spectators`` watching from before its first move (the compact
    stream, or the full one): the server's CPU and the wall time per move over moves
    1..PAUSE_AT."""
    s.gates.reset()
    game_id = await s.new_game(TURNS)
    finished = None
    if spectators:
        query = "?board=0" if compact else ""
        url = s.server.replace("http", "ws", 1) + f"/spectate/{game_id}{query}"
        finished = await s.swarm.watch(url, spectators)
    cpu_before, started_at = thread_cpu_seconds(s.server_pid), time.perf_counter()
    s.gates.open("start")
    await s.gates.reached("paused")
    wall = time.perf_counter() - started_at
    if spectators:
        await asyncio.sleep(s.flush_s)  # the last flush of the window is due by then
    cpu = (await settled_cpu(s.server_pid, limit=WAIT_LIMIT))[0] - cpu_before
    s.gates.open("resume")
    if finished is not None:
        report = await finished()
        if report["ended"] != spectators or report["frames_min"] != report["frames_max"]:
            print(f"   (spectators did not all read the whole game: {report})")
    await s.wait_idle()
    return PerMove(cpu / PAUSE_AT * 1e6, wall / PAUSE_AT * 1e6)


# -------------------------------------------------------------------- figures


async def spectators_figure(s: Setting) -> None:
    """Per move with 0, SPECTATORS compact and SPECTATORS full-stream spectators, rounds
    alternating, medians."""
    rounds = 3 if s.quick else 7
    alone: list[PerMove] = []
    compact: list[PerMove] = []
    full: list[PerMove] = []
    for _ in range(rounds):
        alone.append(await watched_game(s, 0))
        compact.append(await watched_game(s, SPECTATORS))
        full.append(await watched_game(s, SPECTATORS, compact=False))
    cpu0 = statistics.median(m.cpu_us for m in alone)
    wall0 = statistics.median(m.wall_us for m in alone)
    print(f"spectators ({TURNS}-move games, moves 1-{PAUSE_AT}, medians of {rounds} rounds):")
    for name, watched in (("compact (?board=0)", compact), ("full board", full)):
        cpu1 = statistics.median(m.cpu_us for m in watched)
        wall1 = statistics.median(m.wall_us for m in watched)
        target = ""
        if watched is compact:
            verdict = "meets" if cpu1 <= 1.2 * cpu0 else "misses"
            target = f" ({verdict} the 1.2x target)"
        print(
            f"  {SPECTATORS} {name} spectators:\n"
            f"    server CPU per move: {cpu0:.0f} us with 0 spectators, {cpu1:.0f} us with "
            f"{SPECTATORS} -> {cpu1 / cpu0:.2f}x{target}; "
            f"{(cpu1 - cpu0) / SPECTATORS:.2f} us per spectator per move\n"
            f"    wall time per move:  {wall0:.0f} us with 0 spectators, {wall1:.0f} us with "
            f"{SPECTATORS} -> {wall1 / wall0:.2f}x"
        )


# --------------------------------------------------------------- first render
#
# A game server of its own (tests.ui_server.game_server, SQLite in a temporary
# directory) plays one game between two hosted RandomBots that cannot end early (win
# distance 20, turn limit 500: about 1000 stones). Headless Chromium (the system's, as in
# tests.browser) then opens /g/<id> several times and measures, from navigation start,
# the time until the page marks its first full board render
# (performance.mark("board-rendered"), document.body.dataset.rendered). The baseline,
# measured in the same run, is the empty shell (/web/nothing, the page's "not found"
# view: the same HTML, CSS and router, no game).

#: The game page's first render of a 1000-stone game must take less (issue 13).
RENDER_TARGET_MS: Final = 300.0

# From navigation start: the game page's own mark, or the shell's view being shown.
_GAME_RENDERED = """() => {
  const mark = performance.getEntriesByName("board-rendered")[0];
  return mark ? mark.startTime : null;
}"""
_SHELL_RENDERED = "() => performance.now()"


@dataclass(frozen=True)
class FirstRender:
    game_ms: float
    shell_ms: float
    stones: int

    @property
    def ratio(self) -> float:
        return self.game_ms / self.shell_ms if self.shell_ms else float("inf")


def long_game(url: str, moves: int) -> tuple[str, int]:
    """Play a game of exactly ``moves`` moves between hosted RandomBots; its id and
    number of stones."""
    match = {"win_distance": 20, "turn_limit": moves}
    bot = {"type": "bot", "bot_url": f"{url}/bots/random"}
    body = {"player_x": bot, "player_o": bot, "match_config": match}
    game_id = str(post_ok(f"{url}/game/new", body)["game_id"])
    record = finished_record(url, game_id, timeout=600)
    stones = len(record["setup"]) + sum(len(m["pieces"]) for m in record["moves"])
    return game_id, stones


def _timed(page: Page, url: str, ready: str, script: str) -> float:
    page.goto(url)
    page.wait_for_selector(ready)
    value = page.evaluate(script)
    if value is None:
        raise RuntimeError(f"{url} rendered without marking it")
    return float(value)


def first_render(url: str, game_id: str, stones: int, runs: int = 7) -> FirstRender:
    """Median first-render times of ``/g/<game_id>`` and of the empty shell, each page
    opened ``runs`` times in a fresh tab (alternating, after one warm-up of each)."""
    game_times: list[float] = []
    shell_times: list[float] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_executable(), args=list(CHROMIUM_FLAGS), headless=True
        )
        try:
            context = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
            for run in range(runs + 1):
                for is_game, times in ((True, game_times), (False, shell_times)):
                    page = context.new_page()
                    if is_game:
                        took = _timed(
                            page, f"{url}/g/{game_id}", "body[data-rendered='1']", _GAME_RENDERED
                        )
                    else:
                        took = _timed(page, f"{url}/web/nothing", "main h1", _SHELL_RENDERED)
                    page.close()
                    if run:  # the first of each warms the caches
                        times.append(took)
            context.close()
        finally:
            browser.close()
    return FirstRender(statistics.median(game_times), statistics.median(shell_times), stones)


async def first_render_figure(setting: Setting) -> None:
    """The game page's first render of a ~1000-stone finished game (Playwright's sync
    API has a loop of its own: it runs in a worker thread)."""
    moves, runs = 500, 3 if setting.quick else 7
    result = await asyncio.to_thread(_first_render_run, moves, runs)
    verdict = "meets" if result.game_ms < RENDER_TARGET_MS else "misses"
    print(f"first render of /g/<id>, {result.stones} stones, median of {runs} runs:")
    target = f"{verdict} the {RENDER_TARGET_MS:.0f} ms target"
    print(f"  game page   {result.game_ms:7.1f} ms  ({target})")
    print(f"  empty shell {result.shell_ms:7.1f} ms  (baseline: /web/nothing)")
    print(f"  ratio       {result.ratio:7.2f}x")


def _first_render_run(moves: int, runs: int) -> FirstRender:
    from tests.ui_server import game_server

    with tempfile.TemporaryDirectory() as directory, game_server(Path(directory)) as url:
        game_id, stones = long_game(url, moves)
        return first_render(url, game_id, stones, runs=runs)


#: The figures, in the order they run; ``--only NAME`` picks one.
FIGURES: Final[dict[str, Callable[[Setting], Awaitable[None]]]] = {
    "spectators": spectators_figure,
    "first-render": first_render_figure,
}


# ------------------------------------------------------------------------ run


async def run(quick: bool, only: list[str], flush_ms: float | None) -> None:
    import aiohttp

    bot_port, server_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as data:
        gates = Path(data) / "gates"
        gates.mkdir()
        os.environ[_GATES_ENV] = str(gates)  # the bot server inherits it
        db = f"sqlite+aiosqlite:///{data}/bench.sqlite"
        bot_args = ["-m", "bot.serve", "--bot", "bench.web:GatedLatticeBot"]
        bot_args += ["--port", str(bot_port), "--log-level", "warning"]
        server_args = ["-m", "game.serve", "--port", str(server_port), "--db", db]
        server_args += ["--no-example-bots", "--log-level", "warning"]
        if flush_ms is not None:
            server_args += ["--spectator-flush", f"{flush_ms:g}"]
        with started(bot_args, bot_port), started(server_args, server_port) as server_process:
            connector = aiohttp.TCPConnector(limit=0)
            async with (
                aiohttp.ClientSession(connector=connector) as http,
                swarm_process() as spectators,
            ):
                setting = Setting(
                    http=http,
                    server=f"http://127.0.0.1:{server_port}",
                    bot=f"http://127.0.0.1:{bot_port}",
                    server_pid=server_process.pid,
                    gates=Gates(gates),
                    swarm=spectators,
                    quick=quick,
                    flush_s=SPECTATOR_FLUSH_S if flush_ms is None else flush_ms / 1000,
                )
                await watched_game(setting, 2)  # warm up every path
                await watched_game(setting, 2, compact=False)
                for name in only:
                    await FIGURES[name](setting)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke run")
    parser.add_argument(
        "--only", choices=list(FIGURES), action="append", help="run this figure (repeatable)"
    )
    parser.add_argument(
        "--spectator-flush", type=float, metavar="MS", help="the server's flush interval"
    )
    parser.add_argument("--swarm", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.swarm:
        asyncio.run(swarm())
        return
    print((__doc__ or "").split("\n\n")[0])
    print(f"(pid {os.getpid()}, {os.cpu_count()} CPUs)\n")
    flush_ms = SPECTATOR_FLUSH_S * 1000 if args.spectator_flush is None else args.spectator_flush
    print(f"spectator flush interval: {flush_ms:g} ms")
    asyncio.run(run(args.quick, args.only or list(FIGURES), args.spectator_flush))


if __name__ == "__main__":
    main()

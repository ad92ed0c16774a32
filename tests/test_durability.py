"""A crash loses at most one commit interval of moves: ``kill -9`` mid-game, restart.

``python -m game.serve`` runs as a real process on a SQLite file or a database of the
test PostgreSQL server, with group commit at 10 ms. Games between bots that take
``THINK_S`` per move (so an interval holds at most one move) are watched by
spectators that count the ``board_update`` s; then the server gets SIGKILL, is started
again on the same database, and every game must read back ``aborted`` with at least
the broadcast moves less those the last commit could still hold.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from bot.bot import Deadline, MoveDecision
from bot.bots import RandomBot
from bot.serve import create_app, serving
from game.rules import Position
from game.store import LEFT_RUNNING_RESULT
from models import GameRecord, Match, Player

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60.0  # only against hangs
COMMIT_INTERVAL_MS = 10
THINK_S = 0.02
GAMES = 4
#: Moves a spectator may have seen that the database may not have after a crash: those
#: one commit interval holds (at THINK_S per move at the least), and the move whose
#: update went out before its commit began.
LOSABLE = math.ceil(COMMIT_INTERVAL_MS / 1000 / THINK_S) + 1
#: Each game is killed after this many updates: far more than LOSABLE.
SEEN_BEFORE_KILL = 12


class SlowBot(RandomBot):
    """RandomBot taking THINK_S per move (on the bot server's worker thread)."""

    def play(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> MoveDecision:
        time.sleep(THINK_S)
        return super().play(position, player, match, deadline)


@asynccontextmanager
async def server_process(db_url: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """``python -m game.serve`` on a free loopback port; the process and its base URL."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "game.serve",
        "--port",
        "0",
        "--log-level",
        "warning",
        "--commit-interval",
        str(COMMIT_INTERVAL_MS),
        "--db",
        db_url,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        first = (await asyncio.wait_for(process.stdout.readline(), TIMEOUT)).decode()
        assert first.startswith("htttx-arena game server on http://127.0.0.1:"), first
        yield process, first.rsplit(" ", 1)[-1].strip()
    finally:
        if process.returncode is None:
            process.kill()
        await asyncio.wait_for(process.wait(), TIMEOUT)


async def watch(
    http: aiohttp.ClientSession,
    base: str,
    game_id: str,
    seen: asyncio.Event,
    counts: dict[str, int],
) -> None:
    """Count the moves broadcast for ``game_id`` until the socket goes."""
    async with http.ws_connect("ws" + base[4:] + f"/spectate/{game_id}") as ws:
        async for message in ws:
            if message.type is not aiohttp.WSMsgType.TEXT:
                break
            packet: dict[str, Any] = json.loads(message.data)
            if packet["type"] == "setup":
                counts[game_id] = len(packet["moves"])
            elif packet["type"] == "board_update":
                counts[game_id] += 1
                if counts[game_id] >= SEEN_BEFORE_KILL:
                    seen.set()
            assert packet["type"] != "end", "a game ended before the kill: use longer games"


async def test_kill_9_mid_game_loses_at_most_the_last_commit_and_aborts_the_games(
    db_url: str,
) -> None:
    counts: dict[str, int] = {}
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with (
        serving(create_app({"/slow": SlowBot})) as bots,
        aiohttp.ClientSession(timeout=timeout) as http,
    ):
        slow = {"type": "bot", "bot_url": f"{bots.url}/slow"}
        body = {"player_x": slow, "player_o": slow}
        async with server_process(db_url) as (process, base):
            watchers: list[asyncio.Task[None]] = []
            seen: list[asyncio.Event] = []
            for _ in range(GAMES):
                async with http.post(f"{base}/game/new", json=body) as response:
                    assert response.status == 200, await response.text()
                    game_id = (await response.json())["game_id"]
                seen.append(asyncio.Event())
                watchers.append(asyncio.create_task(watch(http, base, game_id, seen[-1], counts)))
            async with asyncio.timeout(TIMEOUT):
                await asyncio.gather(*(event.wait() for event in seen))
            process.send_signal(signal.SIGKILL)
            await asyncio.wait_for(process.wait(), TIMEOUT)
            # The spectators' sockets die with the process: their counts are final.
            await asyncio.wait_for(asyncio.gather(*watchers, return_exceptions=True), TIMEOUT)

        async with server_process(db_url) as (_process, base):
            async with http.get(f"{base}/games?limit=200") as response:
                page = await response.json()
            statuses = {item["game_id"]: item["status"] for item in page["items"]}
            for game_id, broadcast in counts.items():
                async with http.get(f"{base}/games/{game_id}") as response:
                    record = GameRecord.model_validate_json(await response.read())
                assert statuses[game_id] == "aborted"
                assert record.result == LEFT_RUNNING_RESULT
                assert len(record.moves) >= broadcast - LOSABLE, (len(record.moves), broadcast)
    assert len(counts) == GAMES

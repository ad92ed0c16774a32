"""A bot server is ready when it says so: each bot's ``warm_up`` (SearchBot compiles its
kernels) runs off the event loop, in the pool where the bot will think, before the
server answers anything; ``htttx-bot`` says so in its log and prints its URLs after."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import re
import sys
import threading
from pathlib import Path
from typing import ClassVar

import aiohttp
import pytest

from bot.bot import BaseBot
from bot.bots.search.backend import numba_available, pure_forced
from bot.pool import BotPool, has_warm_up, warm_up_bots
from bot.serve import BotServer, create_app, serving, uvicorn_config
from wire.listening import listen

ROOT = Path(__file__).resolve().parent.parent
#: Only against a hang: a cold compile of SearchBot's kernels on a busy machine.
HANG_GUARD = 600.0


class GatedBot(BaseBot):
    """Its warm-up waits for the test's go-ahead and notes the thread it ran in."""

    began: ClassVar[threading.Event] = threading.Event()
    go: ClassVar[threading.Event] = threading.Event()
    threads: ClassVar[list[threading.Thread]] = []

    @classmethod
    def warm_up(cls) -> None:
        cls.threads.append(threading.current_thread())
        cls.began.set()
        cls.go.wait()

    def choose_move(self, cells, player, match):  # type: ignore[no-untyped-def]
        return [(1, 0), (2, 0)]


class NotedBot(BaseBot):
    """Its warm-up appends its process id to the file ``HTTTX_TEST_WARM_UP_FILE`` names
    (spawned worker processes inherit the environment)."""

    @classmethod
    def warm_up(cls) -> None:
        with open(os.environ["HTTTX_TEST_WARM_UP_FILE"], "a") as noted:
            noted.write(f"{os.getpid()}\n")

    def choose_move(self, cells, player, match):  # type: ignore[no-untyped-def]
        return [(1, 0), (2, 0)]


def test_only_bots_that_override_warm_up_have_one() -> None:
    assert has_warm_up(GatedBot) and not has_warm_up(BaseBot)


async def test_the_bot_server_answers_only_once_the_bot_is_warmed_up_off_the_loop() -> None:
    GatedBot.began.clear()
    GatedBot.go.clear()
    GatedBot.threads.clear()
    listener = listen("127.0.0.1", 0)
    port = listener.getsockname()[1]
    app = create_app(GatedBot)
    server = BotServer(uvicorn_config(app, port=port, log_level="warning"), app.state.bot_pool)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        # Whichever comes first: the warm-up beginning, or the server serving.
        while not GatedBot.began.is_set() and not server.started and not serving.done():
            await asyncio.sleep(0.01)
        assert GatedBot.began.is_set(), "the server started without warming its bot up"
        # The loop turns (this test runs on it) while the warm-up holds its thread, and
        # the server has not started serving.
        await asyncio.sleep(0)
        assert not server.started
        assert GatedBot.threads[0] is not threading.current_thread()
        GatedBot.go.set()
        while not server.started and not serving.done():
            await asyncio.sleep(0.01)
        async with (
            aiohttp.ClientSession() as client,
            client.get(f"http://127.0.0.1:{port}/capabilities.json") as response,
        ):
            assert response.status == 200
        assert len(GatedBot.threads) == 1
    finally:
        GatedBot.go.set()
        server.should_exit = True
        await asyncio.wait_for(serving, HANG_GUARD)


async def test_every_worker_process_warms_up_before_the_server_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    noted = tmp_path / "warmed"
    monkeypatch.setenv("HTTTX_TEST_WARM_UP_FILE", str(noted))
    async with serving(create_app(NotedBot, workers=2, processes=True)):
        pids = noted.read_text().split()
    assert len(set(pids)) == 2 and str(os.getpid()) not in pids


@pytest.mark.skipif(
    not numba_available() or pure_forced(), reason="SearchBot compiles nothing without numba"
)
async def test_htttx_bot_serving_searchbot_says_it_is_ready_before_it_serves() -> None:
    """The real thing, in a fresh process: SearchBot's kernels compiled (or loaded from
    numba's disk cache, which ``make`` fills) before its URLs are printed, and its first
    move answered."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.serve", "--bot", "bot.bots.search_bot:SearchBot",
        "--port", "0",
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert process.stdout is not None
    lines: list[str] = []
    try:
        while not lines or not lines[-1].startswith("SearchBot: http://"):
            line = (await asyncio.wait_for(process.stdout.readline(), HANG_GUARD)).decode()
            assert line, "".join(lines)
            lines.append(line)
        log = "".join(lines)
        compiled = re.search(r"search kernels: ready \(numba\) in [0-9.]+ s", log)
        ready = re.search(r"SearchBot: ready after [0-9.]+ s of warm-up", log)
        assert compiled and ready and compiled.start() < ready.start(), log
        url = lines[-1].split()[-1].removesuffix("/capabilities.json")
        body = {"board": {"to_move": "o", "cells": [{"q": 0, "r": 0, "p": "x"}]}, "time_limit": 5}
        async with (
            aiohttp.ClientSession() as client,
            client.post(f"{url}/stateless/v1-alpha/turn", json=body) as response,
        ):
            assert response.status == 200, await response.text()
            assert len((await response.json())["move"]["pieces"]) == 2
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


class LoadingBot(BaseBot):
    """Its warm-up loads what it keeps for good: 20,000 containers (a stand-in for
    numba's compiled kernels)."""

    kept: ClassVar[list[list[int]]] = []

    @classmethod
    def warm_up(cls) -> None:
        cls.kept += [[n] for n in range(20_000)]  # lists: always tracked by the collector

    def choose_move(self, cells, player, match):  # type: ignore[no-untyped-def]
        return [(1, 0), (2, 0)]


async def test_what_a_warm_up_loads_is_frozen_in_a_process_that_froze_its_start() -> None:
    # game.serve.tune_gc froze the game server's startup heap; a warm-up after it (the
    # ladder's hosted bots, the analysis bot) is frozen too, or every full collection
    # walks it again (numba's kernels made the game server's late moves a quarter dearer).
    # A process that froze nothing (htttx-bot, the suite) is left as it is.
    pool = BotPool(1)

    async def loaded() -> list[list[int]]:
        """What one warm-up of LoadingBot keeps."""
        start = len(LoadingBot.kept)
        await warm_up_bots(pool, [LoadingBot])
        return LoadingBot.kept[start:]

    def collectable(objects: list[list[int]]) -> list[bool]:
        """Whether each of ``objects`` is in a generation the collector walks (a frozen
        object is in none)."""
        walked = {id(o) for o in gc.get_objects()}
        return [id(o) in walked for o in objects]

    try:
        if gc.get_freeze_count():
            gc.unfreeze()  # a test before froze the suite's heap (game.serve.main)
        assert all(collectable(await loaded()))
        gc.freeze()
        try:
            kept = await loaded()
            assert len(kept) == 20_000 and not any(collectable(kept))
        finally:
            gc.unfreeze()
    finally:
        pool.shutdown()

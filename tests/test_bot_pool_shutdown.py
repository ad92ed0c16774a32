"""A bot server that thinks in worker processes leaves none of them behind when it
stops: one restarted under a supervisor gathered orphans, each holding a Python
interpreter and its bots, for as long as the machine ran."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
from pathlib import Path

from tests.test_bot_serve import ROOT, TIMEOUT, connect, next_packet, send

WORKERS = 2


def children_of(pid: int) -> set[int]:
    children: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        children |= {int(child) for child in (task / "children").read_text().split()}
    return children


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has ended: only its exit status is left


async def test_a_stopped_process_pool_bot_server_leaves_no_worker_running() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable, "-m", "bot.serve", "--process-pool", "--workers", str(WORKERS),
        "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        server.stdout.readline()  # listening
        # A session per worker (round robin): each worker is started by its first call.
        for _ in range(WORKERS):
            async with connect(f"ws://127.0.0.1:{port}/bws/v1-alpha/game") as ws:
                await send(ws, {"type": "setup"})
                await send(ws, {"type": "move_request", "side": "o", "previous": []})
                assert (await next_packet(ws))["type"] == "move_response"
        spawned = children_of(server.pid)
        assert len(spawned) >= WORKERS  # the workers, and multiprocessing's resource tracker
        server.send_signal(signal.SIGTERM)
        # uvicorn stops gracefully, then ends by the signal it caught.
        assert server.wait(TIMEOUT) in (0, -signal.SIGTERM)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(TIMEOUT)
        if server.stdout is not None:
            server.stdout.close()
    async with asyncio.timeout(TIMEOUT):  # only against hangs: they end at once
        while left := {pid for pid in spawned if running(pid)}:
            await asyncio.sleep(0.05)
    assert not left

"""What the benchmark scripts share to run servers as processes of their own: a free
loopback port, waiting for it to listen, starting and stopping a process, and reading a
process's CPU time (so a figure is the server's CPU, not the benchmark's): in clock
ticks (``cpu_seconds``), in nanoseconds (``thread_cpu_seconds``, for short windows), or
for a process and its children (``tree_cpu_seconds``, e.g. PostgreSQL's backends).

The scripts run as ``python bench/<script>.py``, so this folder is on ``sys.path``: they
import this as ``processes``, as they import each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "ROOT",
    "cpu_seconds",
    "free_port",
    "main_thread_cpu_seconds",
    "settled_cpu",
    "started",
    "thread_cpu_seconds",
    "tree_cpu_seconds",
    "wait_for_port",
]

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Return once something listens on ``port``; raise if ``process`` exits first or
    ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port} after {timeout} s")


@contextlib.contextmanager
def started(args: list[str], port: int, timeout: float = 30.0) -> Iterator[subprocess.Popen[bytes]]:
    """``python <args>`` from the repository's root, once it listens on ``port``;
    terminated (killed after 10 s) on exit."""
    process = subprocess.Popen(
        [sys.executable, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, process, timeout)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_seconds(pid: int) -> float:
    """Run time of every thread of process ``pid`` so far (``schedstat``: nanoseconds,
    where ``/proc/<pid>/stat`` counts 10 ms ticks, too coarse for a window of moves)."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread that just ended
            total += _run_time(task)
    return total


def main_thread_cpu_seconds(pid: int) -> float:
    """Run time of the main thread of process ``pid`` so far (its event loop, for our
    servers), in the same nanoseconds as ``thread_cpu_seconds``."""
    return _run_time(Path(f"/proc/{pid}/task/{pid}"))


def _run_time(task: Path) -> float:
    """Seconds a thread (``/proc/<pid>/task/<tid>``) has run: ``schedstat``'s first field."""
    return int((task / "schedstat").read_text().split()[0]) / 1e9


def tree_cpu_seconds(pid: int) -> float:
    """CPU time (clock ticks) of process ``pid``, of its children alive now, and of the
    children it has reaped: a server that forks a process per connection (PostgreSQL's
    postmaster and its backends) counted whole."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):  # a process that just ended
            continue
        if stat.parent.name == str(pid):
            total += sum(int(value) for value in fields[11:15])  # its own and reaped ones
        elif fields[1] == str(pid):
            total += int(fields[11]) + int(fields[12])
    return total / tick


async def settled_cpu(*pids: int, limit: float = 120.0) -> list[float]:
    """``thread_cpu_seconds`` of each of ``pids`` once none of them works any more (each
    under 1% of a core over 50 ms: idle but for its timers), within ``limit`` seconds: a
    server may still be writing what it owes its readers when the benchmark's window
    closes, or committing what it played."""
    last = [thread_cpu_seconds(pid) for pid in pids]
    async with asyncio.timeout(limit):
        while True:
            await asyncio.sleep(0.05)
            now = [thread_cpu_seconds(pid) for pid in pids]
            if all(after - before < 0.0005 for before, after in zip(last, now, strict=True)):
                return now
            last = now

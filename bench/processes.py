"""What the benchmark scripts share to run servers as processes of their own: a free
loopback port, waiting for it to listen, starting and stopping a process, and reading a
process's CPU time (so a figure is the server's CPU, not the benchmark's).

The scripts run as ``python bench/<script>.py``, so this folder is on ``sys.path``: they
import this as ``processes``, as they import each other.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["ROOT", "cpu_seconds", "free_port", "started", "wait_for_port"]

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

"""A throwaway Redis server for the tests: ``redis_url`` (session scope).

``redis-server`` on a loopback port picked free, no persistence (no RDB, no AOF), its
working directory a temp dir of its own, removed at the end. Without ``redis-server``
the fixture skips, except under CI (``CI`` set), where that is a failure: ``make test``
installs it. Registered for every test module by ``tests/conftest.py``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.throwaway_server import ThrowawayServer, session_server

#: How long the server may take to answer its first PING.
START_WAIT = 30.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RedisServer(ThrowawayServer):
    """A ``redis-server`` of our own on 127.0.0.1, its files in one temp dir."""

    def __init__(self, executable: str, *options: str) -> None:
        """``options``: more of redis-server's, such as ``--requirepass``, ``SECRET``."""
        super().__init__(prefix="htttx-redis-")
        self.executable = executable
        self.options = options
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.executable,
                "--bind", "127.0.0.1",
                "--port", str(self.port),
                "--dir", str(self.root),
                "--save", "",
                "--appendonly", "no",
                "--logfile", str(self.log),
                *self.options,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Its own session: a Ctrl-C at `make cluster` reaches the script, which
            # stops the workers before this (they still talk to it while they stop).
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + START_WAIT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited at start:\n{self.log_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                    conn.sendall(b"PING\r\n")
                    # NOAUTH: it answers, and wants the password it was started with.
                    if conn.recv(64).startswith((b"+PONG", b"-NOAUTH")):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(
            f"redis-server did not answer within {START_WAIT:g} s:\n{self.log_text()}"
        )

    def _shut_down(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def redis_executable() -> str | None:
    """``$REDIS_SERVER`` or ``redis-server`` on the PATH (Debian puts it in /usr/bin)."""
    return os.environ.get("REDIS_SERVER") or shutil.which("redis-server")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    yield from session_server(
        redis_executable, "redis-server not found (install it with `make test`)", RedisServer
    )

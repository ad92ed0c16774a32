"""What the suite's throwaway servers share (``tests/postgres.py``, ``tests/redis_server.py``).

``ThrowawayServer``: a server of our own whose files (data, socket, ``server.log``) live
in one temp dir, removed when it stops, however it stops. ``session_server``: the body
of a session fixture that finds the server's program, skips without it (fails under CI,
``CI`` set, where ``make test`` installs it), starts the server and stops it at the end.
Each server module states only what is particular to it: how it starts and stops, and
where its program is.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

Program = TypeVar("Program")
Server = TypeVar("Server", bound="ThrowawayServer")


class ThrowawayServer(ABC):
    """A server whose files are in ``root`` (a new temp dir), its log ``root/server.log``."""

    def __init__(self, prefix: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix=prefix))
        self.log = self.root / "server.log"

    @abstractmethod
    def start(self) -> None:
        """Start the server; return once it answers."""

    @abstractmethod
    def _shut_down(self) -> None:
        """Stop the server if it runs (``stop`` removes its files after this)."""

    def stop(self) -> None:
        try:
            self._shut_down()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def log_text(self) -> str:
        return self.log.read_text() if self.log.exists() else "(no log)"


def session_server(
    find: Callable[[], Program | None], missing: str, server: Callable[[Program], Server]
) -> Iterator[Server]:
    """Yield ``server(find())`` started, stopped after; skip (CI: fail) with ``missing``."""
    program = find()
    if program is None:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    started = server(program)
    try:
        started.start()
        yield started
    finally:
        started.stop()

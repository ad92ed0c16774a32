"""A client that hangs up before its request body is all in, and what a server logged
of it: shared by the tests of the bot server's stateless route and of the game server's
REST bodies, which read bodies with the same helper (``bot.stateless_route.read_body``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

__all__ = ["logged_of_a_hang_up", "records_of"]


class _Keeper(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def records_of(name: str) -> Iterator[list[logging.LogRecord]]:
    """The records the logger ``name`` emits while the block runs, whatever the
    propagation uvicorn's logging configuration sets up."""
    keeper = _Keeper()
    logger = logging.getLogger(name)
    logger.addHandler(keeper)
    try:
        yield keeper.records
    finally:
        logger.removeHandler(keeper)


async def logged_of_a_hang_up(
    port: int, path: str, caplog: pytest.LogCaptureFixture, timeout: float
) -> list[logging.LogRecord]:
    """POST ``path`` on 127.0.0.1:``port`` declaring 1000 bytes, send 13 and hang up;
    then the server's own "went away" record (caplog's: set its level first) and any
    error uvicorn logged, once either is there."""
    with records_of("uvicorn.error") as uvicorn_records:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST " + path.encode() + b" HTTP/1.1\r\nHost: server\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            b'{"player_x": '
        )
        await writer.drain()
        writer.close()  # the rest of the 1000 bytes never comes
        await writer.wait_closed()

        def handled() -> list[logging.LogRecord]:
            gone = [r for r in caplog.records if "went away" in r.getMessage()]
            errors = [r for r in uvicorn_records if r.levelno >= logging.ERROR]
            return gone + errors

        async with asyncio.timeout(timeout):
            while not handled():
                await asyncio.sleep(0.01)
        return handled()

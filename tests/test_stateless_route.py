"""The bot server's stateless route (``bot.stateless_route``) over real sockets on
127.0.0.1, as a client that speaks plain HTTP sees it.

The route's everyday answers (a move, 400/413/422 with the reason, the time limit) are in
``tests/test_bot_serve.py``; this module has what a raw client can do to it besides.
Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from bot.bots import CenterBot
from bot.serve import create_app, serving

TIMEOUT = 20.0  # only against hangs
TURN = "/stateless/v1-alpha/turn"


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


async def test_a_client_that_hangs_up_mid_body_is_not_an_error_of_the_bot_server(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="bot.serve")
    async with serving(create_app(CenterBot)) as server:
        with records_of("uvicorn.error") as uvicorn_records:
            _, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(
                b"POST " + TURN.encode() + b" HTTP/1.1\r\nHost: bot\r\n"
                b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                b'{"board": '
            )
            await writer.drain()
            writer.close()  # 990 bytes short
            await writer.wait_closed()

            def handled() -> list[logging.LogRecord]:
                gone = [r for r in caplog.records if "went away" in r.getMessage()]
                errors = [r for r in uvicorn_records if r.levelno >= logging.ERROR]
                return gone + errors

            async with asyncio.timeout(TIMEOUT):
                while not handled():
                    await asyncio.sleep(0.01)
    assert [r.levelno for r in handled()] == [logging.INFO]  # no "Exception in ASGI app"

"""What a bot says of itself in its HTTP answer reaches a discovery error as text fit
to print: no escape sequences or line breaks of its choosing (the error is shown on
terminals by ``htttx-tournament``, logged, and sent back in a 422's ``detail``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest

from game.discovery import BotHttpError, BotRedirected, DiscoveryError, discover

#: Clears the screen, rings the bell, and starts a line that reads like a log line.
HOSTILE = b"Not\x1b[2J\x07Found\r\n"


async def _answering(head: bytes) -> AsyncIterator[str]:
    """A server on loopback that answers every request with ``head`` and no body."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(head + b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"


@pytest.mark.parametrize(
    ("head", "refusal"),
    [
        (b"HTTP/1.1 404 " + HOSTILE, BotHttpError),
        (b"HTTP/1.1 302 Found\r\nLocation: /x\x1b[2Jy\x07\r\n", BotRedirected),
    ],
)
async def test_a_bot_s_reason_phrase_and_location_lose_their_control_characters(
    head: bytes, refusal: type[DiscoveryError]
) -> None:
    async for url in _answering(head):
        async with aiohttp.ClientSession() as session:
            with pytest.raises(refusal) as caught:
                await discover(url, session)
    message = str(caught.value)
    assert not any(ord(char) < 0x20 or ord(char) == 0x7F for char in message), repr(message)
    assert "[2J" in message  # the printable rest is kept: it may say what went wrong

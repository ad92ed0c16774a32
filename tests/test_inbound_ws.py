"""``wire.inbound_ws``'s frame reader, over real sockets: a small Starlette app on
``GuardedWebSocketProtocol`` (the bot server's uvicorn settings) on 127.0.0.1, driven by
an aiohttp client. Text frames reach the app's ``FrameReader`` as they arrive while
nothing is queued before them; what it declines, and what comes behind a queued
message, goes through ``receive`` in the order it came; a reader that raises ends its
own connection with 1011, never the server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import aiohttp
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from websockets.server import ServerProtocol
from websockets.utils import apply_mask

from bot.serve import uvicorn_config
from models import CLOSE_INTERNAL_ERROR, CLOSE_INVALID_DATA
from wire.frames import INVALID_UTF8_REFUSED
from wire.inbound_ws import READER_FAILED, refusal, set_frame_reader

TIMEOUT = 30.0  # only against hangs


@dataclass
class Seen:
    """What the app saw, in order: ("reader", text) or ("receive", text or bytes)."""

    events: list[tuple[str, str | bytes]] = field(default_factory=list)
    closed: asyncio.Future[str | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


def reader_app(seen: Seen, reader: Callable[[str], bool]) -> Starlette:
    """Registers a frame reader that takes what ``reader`` says it may, and reads the
    rest with ``receive``, until the disconnect; answers every frame with
    "<how>:<text>"."""

    async def endpoint(websocket: WebSocket) -> None:
        await websocket.accept()

        def take(text: str) -> bool:
            if not reader(text):
                return False
            seen.events.append(("reader", text))
            asyncio.get_running_loop().create_task(websocket.send_text(f"reader:{text}"))
            return True

        assert set_frame_reader(websocket.scope, take)
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                seen.closed.set_result(refusal(websocket.scope))
                return
            data: str | bytes = message.get("text") or message.get("bytes") or b""
            seen.events.append(("receive", data))
            await websocket.send_text(f"receive:{data!r}")

    return Starlette(routes=[WebSocketRoute("/ws", endpoint)])


@contextlib.asynccontextmanager
async def served(app: Starlette) -> AsyncIterator[str]:
    server = uvicorn.Server(uvicorn_config(app, host="127.0.0.1", port=0, log_level="warning"))
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not task.done(), "the server stopped during startup"
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, TIMEOUT)


@contextlib.asynccontextmanager
async def connect(url: str) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        yield ws


def every_frame(_text: str) -> bool:
    return True


async def test_text_frames_reach_the_reader_as_they_arrive_and_nothing_is_queued() -> None:
    seen = Seen()
    async with served(reader_app(seen, every_frame)) as url, connect(url) as ws:
        for text in ("a", "b", "c"):
            await ws.send_str(text)
            assert await asyncio.wait_for(ws.receive_str(), TIMEOUT) == f"reader:{text}"
        assert seen.events == [("reader", "a"), ("reader", "b"), ("reader", "c")]


async def test_a_declined_frame_and_the_frames_behind_it_keep_their_order() -> None:
    """The reader declines "wait": it is queued for ``receive``, and the frames sent
    right behind it reach the app after it, through the queue while anything is queued
    before them, through the reader once nothing is."""
    seen = Seen()
    async with (
        served(reader_app(seen, lambda text: text != "wait")) as url,
        connect(url) as ws,
    ):
        for text in ("wait", "x", "y"):
            await ws.send_str(text)
        answers = {await asyncio.wait_for(ws.receive_str(), TIMEOUT) for _ in range(3)}
        assert "receive:'wait'" in answers and len(answers) == 3
        assert seen.events[0] == ("receive", "wait")
        assert [text for _, text in seen.events] == ["wait", "x", "y"]
        # Nothing queued any more: the next frame goes to the reader.
        await ws.send_str("z")
        assert await asyncio.wait_for(ws.receive_str(), TIMEOUT) == "reader:z"
        assert seen.events[-1] == ("reader", "z")


async def test_binary_frames_still_come_through_receive() -> None:
    seen = Seen()
    async with served(reader_app(seen, every_frame)) as url, connect(url) as ws:
        await ws.send_bytes(b"\x00\x01")
        assert await asyncio.wait_for(ws.receive_str(), TIMEOUT) == "receive:b'\\x00\\x01'"
        await ws.send_str("t")
        assert await asyncio.wait_for(ws.receive_str(), TIMEOUT) == "reader:t"
    assert seen.events == [("receive", b"\x00\x01"), ("reader", "t")]


async def test_text_that_is_not_utf8_is_refused_before_any_reader_sees_it() -> None:
    seen = Seen()
    async with served(reader_app(seen, every_frame)) as url, connect(url) as ws:
        await ws.send_frame(b"\xff\xfe", aiohttp.WSMsgType.TEXT)
        message = await asyncio.wait_for(ws.receive(), TIMEOUT)
        assert message.type is aiohttp.WSMsgType.CLOSE
        assert (ws.close_code, message.extra) == (CLOSE_INVALID_DATA, INVALID_UTF8_REFUSED)
        assert await asyncio.wait_for(seen.closed, TIMEOUT) == INVALID_UTF8_REFUSED
    assert seen.events == []


async def test_a_reader_that_raises_closes_its_own_connection_with_1011(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(text: str) -> bool:
        raise ValueError(f"cannot read {text!r}")

    seen = Seen()
    async with served(reader_app(seen, broken)) as url:
        async with connect(url) as ws:
            await ws.send_str("boom")
            message = await asyncio.wait_for(ws.receive(), TIMEOUT)
            assert message.type is aiohttp.WSMsgType.CLOSE
            assert (ws.close_code, message.extra) == (CLOSE_INTERNAL_ERROR, READER_FAILED)
            assert await asyncio.wait_for(seen.closed, TIMEOUT) == READER_FAILED
        # The server goes on: the next connection is served (and refused the same way).
        async with connect(url) as again:
            await again.send_str("boom")
            message = await asyncio.wait_for(again.receive(), TIMEOUT)
            assert (again.close_code, message.extra) == (CLOSE_INTERNAL_ERROR, READER_FAILED)
    failures = [r for r in caplog.records if r.name == "wire.inbound_ws"]
    assert failures and failures[0].exc_info is not None
    assert "cannot read 'boom'" in str(failures[0].exc_info[1])


async def test_a_reader_that_declines_everything_leaves_every_frame_to_receive() -> None:
    seen = Seen()
    async with served(reader_app(seen, lambda _text: False)) as url, connect(url) as ws:
        for text in ("p", "q"):
            await ws.send_str(text)
            assert await asyncio.wait_for(ws.receive_str(), TIMEOUT) == f"receive:{text!r}"
    assert seen.events == [("receive", "p"), ("receive", "q")]


# ------------------------------------------------ whole text frames, read at once

# A text frame that is the whole of one read of the socket (what a client that writes
# each frame at once sends: every move) is read by the protocol itself, straight to the
# frame reader; anything else goes through websockets' parser as before. These tests
# write raw bytes to split and join frames across reads as no well-behaved client would.


def masked_text_frame(text: str, mask: bytes = b"\x01\x02\x03\x04") -> bytes:
    """A final, masked text frame of ``text`` (under 64 KiB), as a client writes it."""
    payload = text.encode()
    size = len(payload)
    header = bytes([0x81, 0x80 | size]) if size < 126 else bytes([0x81, 0x80 | 126])
    if size >= 126:
        header += size.to_bytes(2, "big")
    return header + mask + apply_mask(payload, mask)


@contextlib.asynccontextmanager
async def raw_socket(url: str) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """A TCP connection to ``url`` (ws://host:port/path) past the opening handshake."""
    address, _, path = url.removeprefix("ws://").partition("/")
    host, _, port = address.partition(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(
            f"GET /{path} HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
        assert head.startswith(b"HTTP/1.1 101"), head
        yield reader, writer
    finally:
        writer.close()


async def read_text(reader: asyncio.StreamReader) -> str:
    """The next text frame the server sent (unmasked, unfragmented, as it writes them)."""
    first, second = await asyncio.wait_for(reader.readexactly(2), TIMEOUT)
    assert first == 0x81, f"not a final text frame: {first:#x}"
    size = second & 0x7F
    if size == 126:
        size = int.from_bytes(await reader.readexactly(2), "big")
    return (await asyncio.wait_for(reader.readexactly(size), TIMEOUT)).decode()


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every chunk of the socket that went through websockets' parser."""
    chunks: list[bytes] = []
    receive_data = ServerProtocol.receive_data

    def counted(self: ServerProtocol, data: bytes) -> None:
        chunks.append(data)
        receive_data(self, data)

    monkeypatch.setattr(ServerProtocol, "receive_data", counted)
    return chunks


async def test_a_text_frame_that_is_a_whole_read_skips_websockets_parser(
    parsed: list[bytes],
) -> None:
    # The point of the shortcut is speed, which no test can see: this one sees that it
    # is taken, for a short frame and one with a 16-bit length (a board), or it would
    # silently never be.
    seen = Seen()
    async with served(reader_app(seen, every_frame)) as url, connect(url) as ws:
        handshake = len(parsed)
        texts = ["short", "é" * 300, '{"type": "move_request"}']
        for text in texts:
            await ws.send_str(text)
            assert await asyncio.wait_for(ws.receive_str(), TIMEOUT) == f"reader:{text}"
        assert len(parsed) == handshake
    assert seen.events == [("reader", text) for text in texts]


async def test_frames_split_and_joined_across_reads_are_read_whole_and_in_order(
    parsed: list[bytes],
) -> None:
    seen = Seen()
    async with served(reader_app(seen, every_frame)) as url, raw_socket(url) as (reader, writer):
        frame = masked_text_frame("split")
        writer.write(frame[:3])  # a frame in two reads
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(frame[3:])
        assert await read_text(reader) == "reader:split"
        # Two frames in one read, then a whole one again.
        writer.write(masked_text_frame("one") + masked_text_frame("two"))
        assert [await read_text(reader), await read_text(reader)] == ["reader:one", "reader:two"]
        before = len(parsed)
        writer.write(masked_text_frame("whole"))
        assert await read_text(reader) == "reader:whole"
        assert len(parsed) == before  # read at once, the parser between frames again
    assert [text for _, text in seen.events] == ["split", "one", "two", "whole"]


async def test_the_rest_of_a_frame_whose_header_came_alone_is_not_read_as_a_frame() -> None:
    """The header of a frame comes alone; the rest (mask, payload) is chosen to look
    like a whole masked text frame itself. websockets' parser is then in the middle of
    a frame, and the rest is read as what it is: the payload of that frame."""
    text = "payload of ten"  # 14 bytes: the rest is 18 bytes, a frame of 12 would be
    mask = bytes([0x81, 0x80 | (len(text) - 2), 0x00, 0x00])
    frame = masked_text_frame(text, mask)
    assert frame[2:4] == mask[:2]  # the rest starts like a text frame of 12 bytes
    seen = Seen()
    async with served(reader_app(seen, every_frame)) as url, raw_socket(url) as (reader, writer):
        writer.write(frame[:2])
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(frame[2:])
        assert await read_text(reader) == f"reader:{text}"
    assert seen.events == [("reader", text)]

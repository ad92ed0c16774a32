"""Outbox: a seat's packets, written at once when nothing waits, else by its writer task,
in order, never making the sender wait (game/outboxes.py)."""

from __future__ import annotations

import asyncio

from game.frames import text_frame
from game.outboxes import Outbox, SpectatorQueue, Update

TIMEOUT = 30.0  # only against hangs


class Sink:
    """A connection whose sends complete at once, or wait while ``gate`` is closed."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closed: tuple[int, str] | None = None
        self.gate = asyncio.Event()
        self.gate.set()
        self.broken = False

    async def send_text(self, data: str) -> None:
        if self.broken:
            raise ConnectionError("gone")
        if not self.gate.is_set():
            await self.gate.wait()
        self.sent.append(data)

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)


async def test_a_packet_to_an_idle_outbox_is_written_by_the_caller_at_once() -> None:
    sink = Sink()
    outbox = Outbox(sink, "test")

    assert outbox.send("a") and outbox.send("b")

    assert sink.sent == ["a", "b"]  # no await in between: no hop through the writer task
    assert not outbox.pending
    outbox.close(1000, "done")
    await outbox.wait_closed(TIMEOUT)
    assert sink.closed == (1000, "done")


async def test_a_send_that_must_wait_is_finished_by_the_writer_and_the_rest_queue_behind() -> None:
    sink = Sink()
    outbox = Outbox(sink, "test")
    sink.gate.clear()  # the peer does not read for now

    assert outbox.send("a") and outbox.send("b")  # the sender never waits

    assert sink.sent == [] and outbox.pending
    sink.gate.set()
    outbox.close(1000, "done")
    await outbox.wait_closed(TIMEOUT)
    assert sink.sent == ["a", "b"]
    assert sink.closed == (1000, "done")


async def test_a_send_that_waits_too_long_fails_the_connection() -> None:
    sink = Sink()
    failures: list[str] = []
    reported = asyncio.Event()

    async def failed(why: str) -> None:
        failures.append(why)
        reported.set()

    outbox = Outbox(sink, "test", on_failed=failed, send_timeout=0.05)
    sink.gate.clear()  # never opened: the peer stopped reading

    assert outbox.send("a")

    await asyncio.wait_for(reported.wait(), TIMEOUT)
    assert failures[0].startswith("sending failed: TimeoutError")
    assert not outbox.send("b")  # closed: the owner learned of it
    await outbox.wait_closed(TIMEOUT)


async def test_a_send_that_fails_at_once_is_reported_by_the_writer() -> None:
    sink = Sink()
    sink.broken = True
    failures: list[str] = []
    reported = asyncio.Event()

    async def failed(why: str) -> None:
        failures.append(why)
        reported.set()

    outbox = Outbox(sink, "test", on_failed=failed)

    assert outbox.send("a")

    await asyncio.wait_for(reported.wait(), TIMEOUT)
    assert failures == ["sending failed: ConnectionError('gone')"]
    assert sink.closed is not None
    await outbox.wait_closed(TIMEOUT)


async def test_a_full_outbox_refuses_packets() -> None:
    sink = Sink()
    outbox = Outbox(sink, "test", size=2)
    sink.gate.clear()

    assert outbox.send("a")  # begun, waiting in the writer's queue
    assert outbox.send("b")
    assert not outbox.send("c")  # the peer does not read: its owner learns of it

    outbox.close(1000, "done")
    await outbox.wait_closed(0.1)


# ------------------------------------------------------------------ spectators


class Writer:
    """A ``FrameWriter`` that takes frames while ``open``."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.open = True

    def __call__(self, frame: bytes) -> bool:
        if self.open:
            self.frames.append(frame)
        return self.open


async def test_an_update_to_an_idle_spectator_is_written_as_a_frame_at_once() -> None:
    writer = Writer()
    spectator = SpectatorQueue(8, writer)
    assert spectator.offer("setup")  # the writer task has not started: queued
    assert spectator.offer(Update(b'{"n":1}'))  # behind the setup: queued too
    assert writer.frames == []
    assert await spectator.next() == "setup"
    assert await spectator.next() == '{"n":1}'
    # The writer task now waits for more: the next update skips the queue.
    task = asyncio.create_task(spectator.next())
    await asyncio.sleep(0)
    update = Update(b'{"n":2}')
    assert spectator.offer(update)
    assert writer.frames == [text_frame(b'{"n":2}')] and spectator.queue.empty()
    # A connection that cannot take it now (paused, closing): the queue, in order.
    writer.open = False
    assert spectator.offer(Update(b'{"n":3}'))
    writer.open = True
    assert spectator.offer(Update(b'{"n":4}'))  # behind n=3: queued, not written
    assert await asyncio.wait_for(task, TIMEOUT) == '{"n":3}'
    assert await spectator.next() == '{"n":4}'
    assert len(writer.frames) == 1


async def test_one_update_is_framed_once_for_every_spectator() -> None:
    writers = [Writer() for _ in range(3)]
    spectators = [SpectatorQueue(8, writer) for writer in writers]
    waiting = [asyncio.create_task(spectator.next()) for spectator in spectators]
    await asyncio.sleep(0)
    update = Update(b'{"type":"board_update"}')
    assert all(spectator.offer(update) for spectator in spectators)
    frames = [writer.frames[0] for writer in writers]
    assert frames[0] is frames[1] is frames[2]  # the same bytes object: built once
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)

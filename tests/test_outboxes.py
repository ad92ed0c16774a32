"""Outbox: a seat's packets, written at once when nothing waits, else by its writer task,
in order, never making the sender wait (game/outboxes.py)."""

from __future__ import annotations

import asyncio

from game.outboxes import Outbox

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

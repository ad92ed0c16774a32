"""``game.mailbox.Mailbox``: the bounded FIFO of a game's inputs, its recorder and its
seats' outboxes, with ``asyncio.Queue``'s semantics for what it keeps."""

from __future__ import annotations

import asyncio

import pytest

from game.mailbox import Mailbox


async def test_items_come_out_in_the_order_they_went_in() -> None:
    box: Mailbox[int] = Mailbox(10)
    for item in range(5):
        box.put_nowait(item)
    assert len(box) == 5 and not box.empty()
    assert [box.get_nowait() for _ in range(5)] == [0, 1, 2, 3, 4]
    assert box.empty()


async def test_put_nowait_refuses_an_item_over_the_bound_and_get_nowait_an_empty_box() -> None:
    box: Mailbox[str] = Mailbox(1)
    box.put_nowait("a")
    assert box.full()
    with pytest.raises(asyncio.QueueFull):
        box.put_nowait("b")
    assert box.get_nowait() == "a"
    with pytest.raises(asyncio.QueueEmpty):
        box.get_nowait()


async def test_a_bound_under_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Mailbox(0)


async def test_get_waits_for_an_item() -> None:
    box: Mailbox[str] = Mailbox(2)
    reader = asyncio.create_task(box.get())
    await asyncio.sleep(0)
    assert not reader.done()
    box.put_nowait("late")
    assert await reader == "late"


async def test_writers_wait_for_room_and_are_served_in_the_order_they_came() -> None:
    box: Mailbox[str] = Mailbox(1)
    box.put_nowait("first")
    writers = [asyncio.create_task(box.put(name)) for name in ("second", "third")]
    await asyncio.sleep(0)
    assert not any(writer.done() for writer in writers)
    received = [await box.get() for _ in range(3)]
    await asyncio.gather(*writers)
    assert received == ["first", "second", "third"]


async def test_a_cancelled_writer_passes_its_turn_on_and_leaves_nothing_behind() -> None:
    box: Mailbox[str] = Mailbox(1)
    box.put_nowait("first")
    cancelled = asyncio.create_task(box.put("never"))
    waiting = asyncio.create_task(box.put("second"))
    await asyncio.sleep(0)
    # Room is made (the first writer is woken), then that writer is cancelled before it
    # runs: the room goes to the next writer instead of being lost.
    assert box.get_nowait() == "first"
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    await asyncio.wait_for(waiting, 1)
    assert box.get_nowait() == "second" and box.empty()


async def test_a_second_reader_is_a_bug_and_says_so() -> None:
    box: Mailbox[int] = Mailbox(1)
    first = asyncio.create_task(box.get())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="one reader"):
        await box.get()
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    # The cancelled reader is gone: a new one may wait.
    later = asyncio.create_task(box.get())
    await asyncio.sleep(0)
    box.put_nowait(7)
    assert await later == 7

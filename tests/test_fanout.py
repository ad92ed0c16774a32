"""The spectators' fan-out: one log of frames, a cursor per spectator, coalesced writes
(game/fanout.py). Pure: the connections are ``FrameWriter`` doubles."""

from __future__ import annotations

import asyncio

from game.fanout import Fanout, Spectator, Update
from wire.frames import text_frame

TIMEOUT = 30.0  # only against hangs
NEVER = 1000.0  # a flush interval no test waits for: flushes are explicit


class Writer:
    """A ``FrameWriter`` that takes writes while ``open``."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.open = True

    def __call__(self, data: bytes) -> bool:
        if self.open:
            self.writes.append(data)
        return self.open


def frames(*packets: bytes) -> bytes:
    return b"".join(text_frame(p) for p in packets)


def idle(size: int = 8, *, compact: bool = False) -> tuple[Spectator, Writer]:
    """A spectator whose writer task is idle (past its setup), with a writer double."""
    writer = Writer()
    spectator = Spectator(size, writer, compact=compact)
    spectator.busy = False
    return spectator, writer


def fanout(dropped: list[Spectator] | None = None, flush_s: float = NEVER) -> Fanout:
    def drop(spectator: Spectator) -> None:
        out.remove(spectator)
        spectator.dropped.set()
        if dropped is not None:
            dropped.append(spectator)

    out = Fanout(drop, flush_s=flush_s)
    return out


async def test_the_first_update_after_a_quiet_spell_is_written_at_once() -> None:
    out = fanout()
    spectator, writer = idle()
    out.add(spectator)
    out.publish(Update(b'{"n":1}'))
    # In the same call: no timer, no loop turn in between.
    assert writer.writes == [frames(b'{"n":1}')] and out.writes == 1


async def test_a_burst_goes_out_in_fewer_writes_than_packets_all_in_order() -> None:
    out = fanout()
    spectator, writer = idle()
    out.add(spectator)
    packets = [b'{"n":%d}' % n for n in range(6)]
    for packet in packets:
        out.publish(Update(packet))
    assert writer.writes == [frames(packets[0])]  # the rest wait for the interval
    out.flush()
    assert writer.writes == [frames(packets[0]), frames(*packets[1:])]
    assert out.writes == 2 < len(packets)


async def test_the_flush_timer_writes_what_accumulated() -> None:
    out = fanout(flush_s=0.01)
    spectator, writer = idle()
    out.add(spectator)
    out.publish(Update(b"1"))
    out.publish(Update(b"2"))
    out.publish(Update(b"3"))
    assert writer.writes == [frames(b"1")]
    async with asyncio.timeout(TIMEOUT):
        while len(writer.writes) < 2:
            await asyncio.sleep(0.005)
    assert writer.writes == [frames(b"1"), frames(b"2", b"3")] and out.flushes == 2


async def test_spectators_at_one_place_share_one_joined_write_per_variant() -> None:
    out = fanout()
    pairs = [idle() for _ in range(3)] + [idle(compact=True) for _ in range(2)]
    for spectator, _ in pairs:
        out.add(spectator)
    built = {"full": 0, "compact": 0}

    def build(kind: str, data: bytes) -> bytes:
        built[kind] += 1
        return data

    def update(n: int) -> Update:
        full, compact = b'{"board":1,"n":%d}' % n, b'{"n":%d}' % n
        return Update(lambda: build("full", full), lambda: build("compact", compact))

    for n in range(3):
        out.publish(update(n))
    out.flush()
    firsts = [w.writes[1] for _, w in pairs]
    assert firsts[0] is firsts[1] is firsts[2] and firsts[3] is firsts[4]
    assert firsts[0] == frames(b'{"board":1,"n":1}', b'{"board":1,"n":2}')
    assert firsts[3] == frames(b'{"n":1}', b'{"n":2}')
    assert built == {"full": 3, "compact": 3}  # each variant once per packet


async def test_a_variant_nobody_watches_is_never_encoded() -> None:
    out = fanout()
    spectator, writer = idle(compact=True)
    out.add(spectator)

    def full() -> bytes:
        raise AssertionError("the full board_update was built")

    out.publish(Update(full, b'{"n":1}'))
    assert writer.writes == [frames(b'{"n":1}')]


async def test_a_late_joiner_skips_the_updates_its_setup_has_but_no_analysis() -> None:
    out = fanout()
    early, early_writer = idle()
    out.add(early)
    out.publish(Update(b"u1"), skippable=True)
    late, late_writer = idle()
    out.add(late, skip=2)  # its setup has u2 and u3, not yet broadcast
    out.publish(Update(b"u2"), skippable=True)
    out.publish(Update(b"a"))  # an analysis packet: never skipped
    out.publish(Update(b"u3"), skippable=True)
    out.publish(Update(b"u4"), skippable=True)
    out.flush()
    out.publish(Update(b"end"), urgent=True)
    assert b"".join(early_writer.writes) == frames(b"u1", b"u2", b"a", b"u3", b"u4", b"end")
    assert b"".join(late_writer.writes) == frames(b"a", b"u4", b"end")


async def test_a_spectator_that_cannot_take_a_write_is_left_to_its_writer_task() -> None:
    out = fanout()
    spectator, writer = idle()
    out.add(spectator)
    writer.open = False  # a full socket buffer
    out.publish(Update(b"1"))
    assert spectator.busy and spectator.wake.is_set()
    out.publish(Update(b"2"))
    writer.open = True
    out.flush()  # behind the writer task: not written past it
    assert writer.writes == []
    assert spectator.take() == ["1", "2"] and spectator.take() == []


async def test_a_spectator_too_far_behind_is_dropped_and_the_log_trimmed() -> None:
    dropped: list[Spectator] = []
    out = fanout(dropped)
    slow = Spectator(3, None)  # no FrameWriter: its writer task sends; it never does
    keeping_up, writer = idle(size=100)
    out.add(slow)
    out.add(keeping_up)
    for n in range(5):
        out.publish(Update(b"%d" % n))
    out.flush()
    assert dropped == []  # woken for 5: not yet behind what it was woken for
    out.flush()
    assert dropped == [slow] and slow.dropped.is_set()
    assert b"".join(writer.writes) == frames(b"0", b"1", b"2", b"3", b"4")
    assert out.end == 5 and len(out._log) == 0  # everyone still here has passed it all


async def test_a_spectator_that_keeps_up_is_never_dropped_however_long_the_burst() -> None:
    dropped: list[Spectator] = []
    out = fanout(dropped)
    idle_one, writer = idle(size=4)
    tasked = Spectator(4, None)  # its writer task takes what it is woken for
    out.add(idle_one)
    out.add(tasked)
    taken: list[str] = []
    for n in range(30):
        out.publish(Update(b"%d" % n))
        if tasked.wake.is_set():
            tasked.wake.clear()
            taken += tasked.take() or []
    out.flush()
    taken += tasked.take() or []
    assert dropped == []
    assert b"".join(writer.writes) == frames(*(b"%d" % n for n in range(30)))
    assert taken == [str(n) for n in range(30)]
    assert out.flushes < 30 and len(out._log) <= 8


async def test_the_log_is_bounded_by_the_spectators_queue_size() -> None:
    dropped: list[Spectator] = []
    out = fanout(dropped)
    slow = Spectator(4, None)
    out.add(slow)
    for n in range(20):
        out.publish(Update(b"%d" % n))
    assert dropped == [slow] and len(out._log) <= 12


async def test_a_spectator_without_a_frame_writer_gets_everything_through_its_task() -> None:
    out = fanout()
    spectator = Spectator(8, None)
    out.add(spectator)
    spectator.busy = False
    out.publish(Update(b"1"))
    assert spectator.wake.is_set()
    out.publish(Update(b"2"))
    out.close()
    assert spectator.take() == ["1", "2"]
    assert spectator.take() is None  # closed, all taken: the writer task ends


async def test_close_writes_what_is_pending_and_closes_every_spectator() -> None:
    out = fanout()
    spectator, writer = idle()
    out.add(spectator)
    out.publish(Update(b"1"))
    out.publish(Update(b"2"))
    out.close()
    assert writer.writes == [frames(b"1"), frames(b"2")]
    assert spectator.closed and spectator.take() is None
    out.publish(Update(b"3"))  # nothing after the close
    assert len(writer.writes) == 2


async def test_idle_returns_when_woken_and_marks_the_writer_busy() -> None:
    spectator = Spectator(8, Writer())
    task = asyncio.create_task(spectator.idle())
    await asyncio.sleep(0)
    assert not spectator.busy
    spectator.wake.set()
    await asyncio.wait_for(task, TIMEOUT)
    assert spectator.busy and not spectator.wake.is_set()

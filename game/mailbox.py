"""``Mailbox``: a bounded FIFO between tasks with one reader, for the per-move paths.

A running game takes its inputs (a seat's frames, its own alarms) from a mailbox, and
its recorder takes the moves to write from another: two hand-overs per move. They need
less than ``asyncio.Queue`` offers (no ``join``/``task_done``, never more than one task
waiting to read), and ``asyncio.Queue`` is pure Python that pays for all of it on every
call: a hand-over through it runs a dozen Python calls, a mailbox's three or four.

The semantics are ``asyncio.Queue``'s for what is kept: ``put_nowait`` raises
``asyncio.QueueFull`` at ``maxsize`` items, ``put`` waits for room (writers are served
in the order they came), ``get`` waits for an item, ``get_nowait`` raises
``asyncio.QueueEmpty``. A second task calling ``get`` while one waits is a bug, and
raises ``RuntimeError``.

>>> import asyncio
>>> async def demo() -> list[str]:
...     box: Mailbox[str] = Mailbox(2)
...     box.put_nowait("a")
...     await box.put("b")
...     return [await box.get(), box.get_nowait()]
>>> asyncio.run(demo())
['a', 'b']
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

__all__ = ["Mailbox"]

T = TypeVar("T")


class Mailbox(Generic[T]):
    """A FIFO of at most ``maxsize`` items (more than 0), read by one task at a time."""

    __slots__ = ("_getter", "_items", "_loop", "_maxsize", "_putters")

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self._maxsize = maxsize
        self._items: deque[T] = deque()
        self._getter: asyncio.Future[None] | None = None  # the reader, waiting
        self._putters: deque[asyncio.Future[None]] = deque()  # writers waiting for room
        self._loop = asyncio.get_running_loop()

    def __len__(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def full(self) -> bool:
        return len(self._items) >= self._maxsize

    def put_nowait(self, item: T) -> None:
        """Add ``item``; ``asyncio.QueueFull`` if there is no room."""
        if len(self._items) >= self._maxsize:
            raise asyncio.QueueFull
        self._items.append(item)
        getter = self._getter
        if getter is not None:
            self._getter = None
            if not getter.done():
                getter.set_result(None)

    async def put(self, item: T) -> None:
        """Add ``item``, waiting for room first."""
        while len(self._items) >= self._maxsize:
            putter = self._loop.create_future()
            self._putters.append(putter)
            try:
                await putter
            except BaseException:
                putter.cancel()
                if putter in self._putters:
                    self._putters.remove(putter)
                elif len(self._items) < self._maxsize:
                    self._wake_putter()  # it was woken for room it will not use: pass it on
                raise
        self.put_nowait(item)

    async def get(self) -> T:
        """The oldest item, waiting for one if there is none."""
        while not self._items:
            if self._getter is not None:
                raise RuntimeError("a Mailbox has one reader: another task is waiting in get()")
            getter = self._getter = self._loop.create_future()
            try:
                await getter
            finally:
                if self._getter is getter:
                    self._getter = None
        return self.get_nowait()

    def get_nowait(self) -> T:
        """The oldest item; ``asyncio.QueueEmpty`` if there is none."""
        if not self._items:
            raise asyncio.QueueEmpty
        item = self._items.popleft()
        if self._putters:
            self._wake_putter()
        return item

    def _wake_putter(self) -> None:
        while self._putters:
            putter = self._putters.popleft()
            if not putter.done():
                putter.set_result(None)
                return

"""The worker threads bots think in: a lean pool that hands each call's outcome straight
to the event loop.

``concurrent.futures.ThreadPoolExecutor`` makes a ``Future`` per call (a condition
variable, state changes under its lock, done callbacks) and takes and gives back an
idle semaphore around every call: about as much work on the two threads as the hop
itself, for features the bot server does not use. Here a call is a queue item, and its
outcome goes to the loop with one ``call_soon_threadsafe``.

>>> import asyncio
>>> async def demo() -> object:
...     threads = WorkerThreads(2, name="demo")
...     loop = asyncio.get_running_loop()
...     done: asyncio.Future[object] = loop.create_future()
...     threads.submit(sum, ([1, 2, 3],), loop, lambda error, result: done.set_result(result))
...     try:
...         return await done
...     finally:
...         threads.shutdown()
>>> asyncio.run(demo())
6
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeAlias

__all__ = ["Finished", "PoolShutDownError", "WorkerThreads"]

#: Called on the event loop with a call's error (None if it returned) and result.
Finished: TypeAlias = Callable[[BaseException | None, Any], None]

_Item: TypeAlias = tuple[Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop, Finished]


class PoolShutDownError(RuntimeError):
    """The call was dropped: the pool was shut down before a thread took it."""

    def __init__(self) -> None:
        super().__init__("the bot pool was shut down")


class WorkerThreads:
    """Up to ``workers`` threads (named ``<name>_N``) that run calls in submission order;
    a thread is started when a call finds none idle. ``shutdown`` drops the calls no
    thread has taken (they finish with ``PoolShutDownError``); a thread busy in a call
    finishes it, then stops.
    """

    def __init__(self, workers: int, *, name: str) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self._workers = workers
        self._name = name
        self._numbers = itertools.count()
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        # Threads done with a call and not yet counted out by a new one (under the lock).
        self._idle = 0
        self._lock = threading.Lock()
        self._shut_down = False

    def submit(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        loop: asyncio.AbstractEventLoop,
        finished: Finished,
    ) -> None:
        """Run ``fn(*args)`` in a thread; ``finished(error, result)`` runs on ``loop``."""
        with self._lock:  # nothing is queued behind shutdown's end mark
            if self._shut_down:
                raise PoolShutDownError
            self._queue.put((fn, args, loop, finished))
            # As ThreadPoolExecutor's idle semaphore: a call takes an idle thread's turn,
            # else starts a thread, else waits for one.
            start = False
            if self._idle > 0:
                self._idle -= 1
            else:
                start = len(self._threads) < self._workers
        if start:
            self._start_thread()

    def _start_thread(self) -> None:
        with self._lock:
            if self._shut_down or len(self._threads) >= self._workers:
                return
            thread = threading.Thread(
                target=self._work, name=f"{self._name}_{next(self._numbers)}", daemon=True
            )
            self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        get = self._queue.get
        lock = self._lock
        while True:
            item = get()
            if item is None:  # shutdown's end mark: every call before it is answered
                self._queue.put(None)  # for the next thread to stop too
                return
            if self._shut_down:  # dropped: tell, and go on to the end mark
                _tell(item[2], item[3], PoolShutDownError(), None)
                continue
            fn, args, loop, finished = item
            try:
                result = fn(*args)
            except BaseException as error:  # the call's failure is its outcome
                _tell(loop, finished, error, None)
            else:
                _tell(loop, finished, None, result)
            del item, fn, args, finished  # hold nothing of the call while idle
            with lock:
                self._idle += 1

    def shutdown(self) -> None:
        """Stop the threads once they are done with their calls; calls not taken yet
        finish with ``PoolShutDownError``. Does not wait."""
        with self._lock:
            if not self._shut_down:
                self._shut_down = True
                self._queue.put(None)


def _tell(
    loop: asyncio.AbstractEventLoop, finished: Finished, error: BaseException | None, result: Any
) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
        loop.call_soon_threadsafe(finished, error, result)

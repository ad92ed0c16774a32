"""Local bot programs for the tournament runner: started on a free port, limited, stopped.

A bot given as a command (``cmd=python -m bot.serve --bot my_bot:MyBot --port {port}``)
is run by the runner itself, the way cutechess-cli and fastchess run engines. This module
holds that edge, in two layers:

- **pure parts** (in :mod:`game.local_bot_spec`, importable from here too), tested
  without a process: :class:`BotLimits` (memory, CPU time,
  processes/threads, core dumps, each checked with its own error), :class:`LocalBotSpec`
  (a name and a shell-like command with ``{port}``), :func:`command_argv` (``shlex.split``,
  never a shell) and :class:`ExitStatus` (how a program ended, in words);
- **the asyncio edge**, :class:`LocalBot`: an async context manager that picks a free
  loopback port, starts the program with :func:`asyncio.create_subprocess_exec` in its
  own session (so its process group holds the whole tree), appends its stdout and stderr
  to ``<log_dir>/<name>.log``, sets the limits in the child before ``exec``, waits (with a
  deadline) until ``http://127.0.0.1:{port}/capabilities.json`` answers 200, and stops the
  group with SIGTERM, then SIGKILL after a grace period. It never leaves a process behind:
  not when the ``async with`` body raises, nor when the task is cancelled.

Limits per operating system (set with :func:`resource.setrlimit` in ``preexec_fn``):

- **Linux**: all of them. ``RLIMIT_AS`` (memory: an allocation past it fails, so Python
  raises ``MemoryError``), ``RLIMIT_CPU`` (the soft limit sends SIGXCPU, the hard one a
  second later SIGKILL), ``RLIMIT_NPROC`` and ``RLIMIT_CORE = 0`` unless core dumps are
  asked for. ``RLIMIT_NPROC`` counts every process and thread of the user, not of the
  program: the limit set is ``max_processes`` more than the user runs at the start (read
  from ``/proc``), and the kernel does not apply it to root.
- **macOS**: the same calls are made, but ``RLIMIT_AS`` is not enforced by the kernel
  (memory is then unlimited in practice); CPU, processes and core dumps are.
- **Windows**: unsupported (no ``resource`` module, no process groups of this kind):
  :class:`LocalBot` raises :class:`UnsupportedPlatformError` before starting anything.

Registering a cleanup on the runner's own SIGINT/SIGTERM is the runner's job; it calls
:func:`stop_all` there. On Linux each program is also started with
``prctl(PR_SET_PDEATHSIG, SIGKILL)``, so the kernel kills it if the runner dies without
a chance to clean up (kill -9); this covers the program itself, not processes it forks.

>>> limits = BotLimits(memory_mb=512, cpu_seconds=60)
>>> limits.max_processes, limits.core_dumps
(64, False)
>>> BotLimits(memory_mb=0)
Traceback (most recent call last):
...
game.local_bot_spec.MemoryLimitError: memory_mb must be a positive whole number ... not 0
>>> spec = LocalBotSpec("mine", "python -m bot.serve --bot 'my bot:MyBot' --port {port}")
>>> spec.argv(9001)
['python', '-m', 'bot.serve', '--bot', 'my bot:MyBot', '--port', '9001']
>>> ExitStatus(-9).describe()
'killed by SIGKILL'
>>> ExitStatus(1, memory_error=True).describe()
'exited with status 1 (MemoryError: out of its memory limit)'
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType

import aiohttp

from game.local_bot_spec import (
    BotLimits,
    BotNameError,
    CommandError,
    CommandSyntaxError,
    CpuLimitError,
    EmptyCommandError,
    ExitStatus,
    LimitError,
    LocalBotError,
    LocalBotSpec,
    MemoryLimitError,
    PortPlaceholderError,
    ProcessLimitError,
    command_argv,
)

__all__ = [
    "DEFAULT_GRACE",
    "DEFAULT_START_TIMEOUT",
    "BotExitedError",
    "BotLaunchError",
    "BotLimits",
    "BotNameError",
    "BotStartTimeoutError",
    "CommandError",
    "CommandSyntaxError",
    "CpuLimitError",
    "EmptyCommandError",
    "ExitStatus",
    "LimitError",
    "LocalBot",
    "LocalBotError",
    "LocalBotSpec",
    "MemoryLimitError",
    "NotRunningError",
    "PortPlaceholderError",
    "ProcessLimitError",
    "UnsupportedPlatformError",
    "command_argv",
    "free_port",
    "stop_all",
]

#: Seconds to wait for ``capabilities.json`` before giving up on a start: a bot server
#: answers only once its bots are warmed up (``BaseBot.warm_up``), and SearchBot's first
#: start compiles for some 15 s on an idle core, over a minute on a busy one. A bot that
#: is ready sooner is played sooner; only a broken one waits this long.
DEFAULT_START_TIMEOUT = 120.0
#: Seconds between SIGTERM and SIGKILL when stopping.
DEFAULT_GRACE = 3.0
#: How much of a log a start error quotes.
LOG_TAIL_BYTES = 2000

_POLL = 0.05


class UnsupportedPlatformError(LocalBotError):
    """Local programs with limits need a POSIX system (Linux or macOS)."""


class NotRunningError(LocalBotError):
    """The bot has not been started (or was stopped) and has no URL."""


class BotLaunchError(LocalBotError):
    """The program could not be started at all (not found, not executable, limits refused)."""


class BotExitedError(LocalBotError):
    """The program ended before it answered on ``capabilities.json``."""

    def __init__(self, name: str, status: ExitStatus, log_tail: str) -> None:
        self.status = status
        self.log_tail = log_tail
        super().__init__(
            f"local bot {name!r} {status.describe()} before serving capabilities.json; "
            f"the end of its log:\n{log_tail}"
        )


class BotStartTimeoutError(LocalBotError):
    """The program did not answer on ``capabilities.json`` before the deadline."""

    def __init__(self, name: str, url: str, timeout: float, log_tail: str) -> None:
        self.log_tail = log_tail
        super().__init__(
            f"local bot {name!r} did not answer 200 on {url}/capabilities.json within "
            f"{timeout:g} s; the end of its log:\n{log_tail}"
        )


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (the system picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def read_tail(path: Path, size: int = LOG_TAIL_BYTES, *, start: int = 0) -> str:
    """The last ``size`` bytes past ``start`` of the file at ``path`` ('' if none)."""
    try:
        with path.open("rb") as file:
            file.seek(0, os.SEEK_END)
            file.seek(max(start, file.tell() - size))
            return file.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def _user_processes() -> int:
    """Processes and threads of this user now (Linux ``/proc``; 0 where unknown)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    uid, count = os.getuid(), 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_uid == uid:
                count += sum(1 for _ in (entry / "task").iterdir())
    return count


def _group_alive(pgid: int) -> bool:
    """Some live process is still in process group ``pgid``.

    Zombies do not count where ``/proc`` tells them apart (Linux): a member whose parent
    died is reaped by init in its own time, and it holds nothing any more.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
                return True
        except (OSError, IndexError, ValueError):
            continue
    return False


def _limiter(limits: list[tuple[str, int, int]]) -> Callable[[], None]:
    """The ``preexec_fn`` that sets ``limits`` in the child before ``exec``."""
    import resource  # POSIX only; checked before any start

    values = [(getattr(resource, name), soft, hard) for name, soft, hard in limits]
    die_with_parent = _parent_death_signal()

    def apply() -> None:
        for which, soft, hard in values:
            resource.setrlimit(which, (soft, hard))
        die_with_parent()

    return apply


def _parent_death_signal() -> Callable[[], None]:
    """On Linux, a function for the child that makes the kernel SIGKILL it when the
    runner dies, even by SIGKILL (``prctl(PR_SET_PDEATHSIG)``): a runner killed with
    kill -9 cannot stop its bots itself. Elsewhere a no-op (the next run's bots use new
    ports, so a leftover program is only a leftover, not a conflict)."""
    if not sys.platform.startswith("linux"):
        return lambda: None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):  # pragma: no cover - every glibc/musl has it
        return lambda: None
    pr_set_pdeathsig = 1

    def apply() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)

    return apply


class LocalBot:
    """A local bot program on a free loopback port, with limits; an async context manager.

    ``async with LocalBot(spec, log_dir) as bot:`` starts it and waits until it serves
    ``bot.url + "/capabilities.json"``; leaving the block stops it and its whole process
    group. After a crash (``bot.crashed``), ``await bot.restart()`` starts it again on a
    new port and the log goes on in the same file.
    """

    def __init__(
        self,
        spec: LocalBotSpec,
        log_dir: Path | str,
        *,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        grace: float = DEFAULT_GRACE,
        env: dict[str, str] | None = None,
        cwd: Path | str | None = None,
    ) -> None:
        if os.name != "posix":
            raise UnsupportedPlatformError(
                f"local bot programs with limits need Linux or macOS, not {sys.platform}; "
                "start the bot yourself and give its URL instead"
            )
        self.spec = spec
        self.log_path = Path(log_dir) / f"{spec.name}.log"
        self.start_timeout = start_timeout
        self.grace = grace
        self.env = env
        self.cwd = cwd
        self._process: asyncio.subprocess.Process | None = None
        self._port: int | None = None
        self._stopping = False
        self._status: ExitStatus | None = None
        self._log_start = 0
        self._group_gone = False

    # -- what it is -----------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The program's process id (also its process group's), once started."""
        return None if self._process is None else self._process.pid

    @property
    def url(self) -> str:
        """``http://127.0.0.1:{port}`` of the running program."""
        if self._port is None or self._process is None:
            raise NotRunningError(f"local bot {self.spec.name!r} is not running")
        return f"http://127.0.0.1:{self._port}"

    @property
    def running(self) -> bool:
        """The program has been started and has not been seen to end."""
        return self._process is not None and self.exit_status is None

    @property
    def exit_status(self) -> ExitStatus | None:
        """How the program ended, or None while it runs (or before it starts)."""
        if self._status is None and self._process is not None:
            code = self._process.returncode
            if code is not None:
                memory = "MemoryError" in read_tail(self.log_path, start=self._log_start)
                self._status = ExitStatus(code, memory_error=memory, stopped=self._stopping)
        return self._status

    @property
    def crashed(self) -> bool:
        """The program ended by itself (not through :meth:`stop` or :meth:`kill_now`).

        One that dies in the very instant it is being stopped counts as stopped.
        """
        status = self.exit_status
        return status is not None and status.crashed

    def log_tail(self, size: int = LOG_TAIL_BYTES) -> str:
        """The end of the program's log."""
        return read_tail(self.log_path, size)

    # -- start and stop -----------------------------------------------------------

    async def start(self) -> None:
        """Start the program and wait until it serves ``capabilities.json``.

        Raises :class:`BotLaunchError` if it cannot be started, :class:`BotExitedError`
        if it ends first and :class:`BotStartTimeoutError` past ``start_timeout``; either
        way (and on cancellation) nothing is left running.
        """
        if self.running:
            raise LocalBotError(f"local bot {self.spec.name!r} is already running")
        if self._process is not None:
            await self.stop()  # what is left of the last run: children of a crashed program
        port = free_port()
        argv = self.spec.argv(port)
        counted = self.spec.limits.max_processes is not None
        limits = self.spec.limits.rlimits(
            await asyncio.to_thread(_user_processes) if counted else 0
        )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._status, self._stopping, self._port = None, False, port
        self._group_gone = False
        with self.log_path.open("ab") as log:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            log.write(f"--- {stamp} start on port {port}: {shlex.join(argv)}\n".encode())
            log.flush()
            self._log_start = log.tell()
            try:
                self._process = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log,
                    stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_limiter(limits),
                    env=self.env,
                    cwd=self.cwd,
                )
            except (OSError, subprocess.SubprocessError) as error:
                self._process, self._port = None, None
                log.write(f"--- could not start: {error}\n".encode())
                raise BotLaunchError(
                    f"local bot {self.spec.name!r} could not be started "
                    f"({shlex.join(argv)}): {error}"
                ) from None
        try:
            await self._wait_ready()
        except BaseException:
            self._kill_group()
            await self._reap()
            raise

    async def restart(self) -> None:
        """Stop the program if it still runs, then start it again (on a new port)."""
        await self.stop()
        await self.start()

    async def wait(self) -> ExitStatus:
        """Wait until the program ends by itself; how it ended."""
        if self._process is None:
            raise NotRunningError(f"local bot {self.spec.name!r} was never started")
        await self._process.wait()
        status = self.exit_status
        assert status is not None
        return status

    async def stop(self) -> ExitStatus | None:
        """SIGTERM to the process group, SIGKILL after ``grace`` seconds; how it ended.

        The group is sent SIGKILL in the end whatever the program did, so no child it
        started outlives it. Safe to call more than once, and on a program that crashed.
        """
        process = self._process
        if process is None:
            return None
        if process.returncode is None:
            self._stopping = True
        try:
            self._signal_group(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), self.grace)
        finally:
            self._kill_group()
        await self._reap()
        self._port = None
        return self.exit_status

    def kill_now(self) -> None:
        """SIGKILL to the process group at once, without waiting (for signal handlers)."""
        if self._process is not None and self._process.returncode is None:
            self._stopping = True
        self._kill_group()

    def _signal_group(self, signum: signal.Signals) -> None:
        # Once the group is seen empty its id may be reused: never signal it again.
        if self._process is not None and not self._group_gone:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signum)

    def _kill_group(self) -> None:
        self._signal_group(signal.SIGKILL)

    async def _reap(self) -> None:
        """Wait (at most ``grace``) for the program, then for the rest of its group."""
        if self._process is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._process.wait(), self.grace)
        # SIGKILL is sent to the group at once but each member dies in its own time: wait
        # until none is left alive (bounded, in case one cannot be killed).
        deadline = asyncio.get_running_loop().time() + self.grace
        while await asyncio.to_thread(_group_alive, self._process.pid):
            if asyncio.get_running_loop().time() >= deadline:
                return
            await asyncio.sleep(0.01)
        self._group_gone = self._process.returncode is not None

    async def _wait_ready(self) -> None:
        assert self._process is not None
        url = self.url
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.start_timeout
        timeout = aiohttp.ClientTimeout(total=1.0)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            while True:
                if self._process.returncode is not None:
                    status = self.exit_status
                    assert status is not None
                    raise BotExitedError(self.spec.name, status, self.log_tail())
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    async with http.get(f"{url}/capabilities.json") as response:
                        if response.status == 200:
                            return
                if loop.time() >= deadline:
                    raise BotStartTimeoutError(
                        self.spec.name, url, self.start_timeout, self.log_tail()
                    )
                await asyncio.sleep(_POLL)

    async def __aenter__(self) -> LocalBot:
        await self.start()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            await self.stop()
        finally:
            self._kill_group()


async def stop_all(bots: Iterable[LocalBot]) -> None:
    """Stop every bot at once (for the runner's SIGINT/SIGTERM cleanup).

    Each is stopped even if another one's stop fails; the first error is raised after.
    """
    results = await asyncio.gather(*(bot.stop() for bot in bots), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result

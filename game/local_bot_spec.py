"""The pure parts of local bot programs: limits, commands, how a program ended.

No process is started here (that is :mod:`game.local_bots`): a :class:`BotLimits` is
checked with one error per bad value and turned into the ``resource.RLIMIT_*`` values
to set in the child; a :class:`LocalBotSpec` names a bot and its command, split like a
POSIX shell would with :func:`command_argv` (no shell ever runs it) with its port put in
for ``{port}``; an :class:`ExitStatus` tells how a program ended in words.

>>> BotLimits(memory_mb=512).rlimits()
[('RLIMIT_AS', 536870912, 536870912), ('RLIMIT_NPROC', 64, 64), ('RLIMIT_CORE', 0, 0)]
>>> LocalBotSpec("mine", "my-bot --port {port}").argv(9001)
['my-bot', '--port', '9001']
"""

from __future__ import annotations

import re
import shlex
import signal
from dataclasses import dataclass, field

__all__ = [
    "PORT",
    "BotLimits",
    "BotNameError",
    "CommandError",
    "CommandSyntaxError",
    "CpuLimitError",
    "EmptyCommandError",
    "ExitStatus",
    "LimitError",
    "LocalBotError",
    "LocalBotSpec",
    "MemoryLimitError",
    "PortPlaceholderError",
    "ProcessLimitError",
    "command_argv",
]

#: The placeholder of the port in a command.
PORT = "{port}"

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")


class LocalBotError(Exception):
    """Base class of this module's errors."""


class LimitError(LocalBotError, ValueError):
    """A resource limit that cannot be applied."""


class MemoryLimitError(LimitError):
    """``memory_mb`` is not a positive whole number (or None)."""


class CpuLimitError(LimitError):
    """``cpu_seconds`` is not a positive whole number (or None)."""


class ProcessLimitError(LimitError):
    """``max_processes`` is not a positive whole number (or None)."""


class BotNameError(LocalBotError, ValueError):
    """A bot name that cannot name its log file."""


class CommandError(LocalBotError, ValueError):
    """Base class of the errors of a bot's command."""


class EmptyCommandError(CommandError):
    """The command has no program in it."""


class CommandSyntaxError(CommandError):
    """The command cannot be split like a shell would (an unclosed quote)."""


class PortPlaceholderError(CommandError):
    """The command does not say where the port goes (``{port}``)."""


def _check_limit(value: object, name: str, unit: str, error: type[LimitError]) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise error(
            f"{name} must be a positive whole number of {unit} or None (no limit), not {value!r}"
        )


@dataclass(frozen=True)
class BotLimits:
    """Resource limits of one local bot program; ``None`` means no limit.

    ``memory_mb`` is address space (``RLIMIT_AS``): it counts what a program maps, not
    what it touches, so leave room for its threads' stacks and libraries (a ``bot.serve``
    process maps about 300 MB). ``cpu_seconds`` is CPU time over the program's whole
    life, not per move: off by default, since a tournament's clock already bounds
    thinking. ``max_processes`` bounds processes and threads together.

    >>> BotLimits()
    BotLimits(memory_mb=1024, cpu_seconds=None, max_processes=64, core_dumps=False)
    >>> BotLimits(cpu_seconds=1.5)
    Traceback (most recent call last):
    ...
    game.local_bot_spec.CpuLimitError: cpu_seconds must be a positive whole number ... not 1.5
    >>> BotLimits(max_processes=-1)
    Traceback (most recent call last):
    ...
    game.local_bot_spec.ProcessLimitError: max_processes must be a positive ... not -1
    """

    memory_mb: int | None = 1024
    cpu_seconds: int | None = None
    max_processes: int | None = 64
    core_dumps: bool = False

    def __post_init__(self) -> None:
        _check_limit(self.memory_mb, "memory_mb", "megabytes", MemoryLimitError)
        _check_limit(self.cpu_seconds, "cpu_seconds", "seconds", CpuLimitError)
        _check_limit(self.max_processes, "max_processes", "processes", ProcessLimitError)

    def rlimits(self, user_processes: int = 0) -> list[tuple[str, int, int]]:
        """``(name, soft, hard)`` for each ``resource.RLIMIT_*`` to set in the child.

        ``user_processes`` is what the user already runs (RLIMIT_NPROC counts those too).
        The CPU hard limit is a second past the soft one, so SIGXCPU comes first.

        >>> BotLimits(memory_mb=200, cpu_seconds=1, max_processes=8).rlimits(100)
        [('RLIMIT_AS', 209715200, 209715200), ('RLIMIT_CPU', 1, 2), ('RLIMIT_NPROC', 108, 108),
         ('RLIMIT_CORE', 0, 0)]
        >>> BotLimits(memory_mb=None, max_processes=None, core_dumps=True).rlimits()
        []
        """
        limits: list[tuple[str, int, int]] = []
        if self.memory_mb is not None:
            size = self.memory_mb * 1024 * 1024
            limits.append(("RLIMIT_AS", size, size))
        if self.cpu_seconds is not None:
            limits.append(("RLIMIT_CPU", self.cpu_seconds, self.cpu_seconds + 1))
        if self.max_processes is not None:
            count = user_processes + self.max_processes
            limits.append(("RLIMIT_NPROC", count, count))
        if not self.core_dumps:
            limits.append(("RLIMIT_CORE", 0, 0))
        return limits


def command_argv(cmd: str, port: int) -> list[str]:
    """Split ``cmd`` like a POSIX shell (no shell runs) and put ``port`` in for ``{port}``.

    Only the exact text ``{port}`` is replaced, so other braces stay as they are.

    >>> command_argv('python -c "print({})" --port={port}', 8001)
    ['python', '-c', 'print({})', '--port=8001']
    >>> command_argv("bot --port 1", 8001)
    Traceback (most recent call last):
    ...
    game.local_bot_spec.PortPlaceholderError: the command must say where the port goes ...
    """
    try:
        words = shlex.split(cmd)
    except ValueError as error:
        raise CommandSyntaxError(f"cannot split the command {cmd!r}: {error}") from None
    if not words:
        raise EmptyCommandError("the command is empty; expected a program and its arguments")
    if not any(PORT in word for word in words):
        raise PortPlaceholderError(
            f"the command must say where the port goes with {PORT}, "
            f"as in 'my-bot --port {PORT}': {cmd!r}"
        )
    return [word.replace(PORT, str(port)) for word in words]


@dataclass(frozen=True)
class LocalBotSpec:
    """A local bot: its name (also its log file's), its command and its limits.

    >>> LocalBotSpec("../x", "bot --port {port}")
    Traceback (most recent call last):
    ...
    game.local_bot_spec.BotNameError: a local bot's name is 1-64 letters, digits, ... not '../x'
    >>> LocalBotSpec("a", "bot 'unclosed --port {port}")
    Traceback (most recent call last):
    ...
    game.local_bot_spec.CommandSyntaxError: cannot split the command ...: No closing quotation
    """

    name: str
    cmd: str
    limits: BotLimits = field(default_factory=BotLimits)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise BotNameError(
                "a local bot's name is 1-64 letters, digits, '_', '.' or '-' not starting "
                f"with '.' or '-' (it names its log file), not {self.name!r}"
            )
        command_argv(self.cmd, 0)

    def argv(self, port: int) -> list[str]:
        """The program and its arguments for ``port``."""
        return command_argv(self.cmd, port)


@dataclass(frozen=True)
class ExitStatus:
    """How a program ended: ``returncode`` as asyncio gives it (``-N``: signal N).

    ``memory_error`` says its log ends with a ``MemoryError`` (its memory limit, for a
    Python program); ``stopped`` that :meth:`LocalBot.stop` ended it (not a crash).

    >>> status = ExitStatus(-signal.SIGXCPU)
    >>> status.signal_name, status.describe()
    ('SIGXCPU', 'killed by SIGXCPU (its CPU time limit)')
    >>> ExitStatus(0).describe(), ExitStatus(3).describe()
    ('exited with status 0', 'exited with status 3')
    """

    returncode: int
    memory_error: bool = False
    stopped: bool = False

    @property
    def signal_name(self) -> str | None:
        """The name of the signal that killed the program, if one did."""
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"

    @property
    def crashed(self) -> bool:
        """It ended by itself, not through :meth:`LocalBot.stop` (a bot is not meant to)."""
        return not self.stopped

    def describe(self) -> str:
        """The end in a few words."""
        name = self.signal_name
        if name is None:
            words = f"exited with status {self.returncode}"
        else:
            words = f"killed by {name}"
            if name == "SIGXCPU":
                words += " (its CPU time limit)"
        if self.memory_error:
            words += " (MemoryError: out of its memory limit)"
        return words

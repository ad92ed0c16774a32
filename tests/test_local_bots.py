"""game.local_bots: the pure parts without processes, then real programs on loopback."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import aiohttp
import pytest

from game.local_bots import (
    BotExitedError,
    BotLaunchError,
    BotLimits,
    BotNameError,
    BotStartTimeoutError,
    CommandSyntaxError,
    CpuLimitError,
    EmptyCommandError,
    ExitStatus,
    LocalBot,
    LocalBotSpec,
    MemoryLimitError,
    NotRunningError,
    PortPlaceholderError,
    ProcessLimitError,
    UnsupportedPlatformError,
    command_argv,
    stop_all,
)

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
RANDOM_BOT = f"{PYTHON} -m bot.serve --bot bot.bots:RandomBot --port {{port}}"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

# A program that serves capabilities.json, starts a child, and ignores SIGTERM: only
# SIGKILL to its whole group ends both. It prints the child's pid.
STUBBORN = """
import http.server, signal, subprocess, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import signal, time; "
    "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"])
print("child", child.pid, flush=True)
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/capabilities.json" else 404)
        self.end_headers()
        self.wfile.write(b"{}")
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


# -- the pure parts ---------------------------------------------------------------------


def test_default_limits_cap_memory_and_processes_and_forbid_core_dumps() -> None:
    limits = BotLimits()
    assert (limits.memory_mb, limits.cpu_seconds, limits.max_processes) == (1024, None, 64)
    names = [name for name, _, _ in limits.rlimits()]
    assert names == ["RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_CORE"]
    assert ("RLIMIT_CORE", 0, 0) in limits.rlimits()


@pytest.mark.parametrize(
    ("field", "error"),
    [
        ("memory_mb", MemoryLimitError),
        ("cpu_seconds", CpuLimitError),
        ("max_processes", ProcessLimitError),
    ],
)
@pytest.mark.parametrize("value", [0, -5, 2.5, True, "64"])
def test_each_bad_limit_has_its_own_error_naming_the_field(
    field: str, error: type[Exception], value: object
) -> None:
    with pytest.raises(error, match=f"^{field} must be a positive whole number"):
        BotLimits(**{field: value})  # type: ignore[arg-type]


def test_the_cpu_hard_limit_leaves_a_second_for_sigxcpu() -> None:
    assert ("RLIMIT_CPU", 5, 6) in BotLimits(cpu_seconds=5).rlimits()


def test_the_process_limit_counts_on_top_of_what_the_user_already_runs() -> None:
    assert ("RLIMIT_NPROC", 310, 310) in BotLimits(max_processes=10).rlimits(300)


def test_a_command_is_split_like_a_shell_and_only_port_is_replaced() -> None:
    argv = command_argv("""bot --name 'my bot' -c "x = {'a': 1}" --port={port}""", 9001)
    assert argv == ["bot", "--name", "my bot", "-c", "x = {'a': 1}", "--port=9001"]


def test_a_command_runs_no_shell() -> None:
    argv = command_argv("bot --port {port}; rm -rf /", 1)
    assert argv == ["bot", "--port", "1;", "rm", "-rf", "/"]


@pytest.mark.parametrize(
    ("cmd", "error"),
    [
        ("", EmptyCommandError),
        ("   ", EmptyCommandError),
        ("bot 'open {port}", CommandSyntaxError),
        ("bot --port 8001", PortPlaceholderError),
    ],
)
def test_a_bad_command_has_its_own_error(cmd: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        LocalBotSpec("bot", cmd)


@pytest.mark.parametrize("name", ["", "../up", "a/b", ".hidden", "-x", "x" * 65, "sp ace"])
def test_a_name_that_cannot_name_a_log_file_is_refused(name: str) -> None:
    with pytest.raises(BotNameError, match="names its log file"):
        LocalBotSpec(name, "bot {port}")


def test_an_exit_status_tells_signals_by_name_and_memory_errors() -> None:
    assert ExitStatus(-signal.SIGKILL).describe() == "killed by SIGKILL"
    assert ExitStatus(-signal.SIGXCPU).signal_name == "SIGXCPU"
    assert "MemoryError" in ExitStatus(1, memory_error=True).describe()
    assert ExitStatus(3).crashed and not ExitStatus(-15, stopped=True).crashed


def test_a_bot_never_started_has_no_url(tmp_path: Path) -> None:
    bot = LocalBot(LocalBotSpec("bot", RANDOM_BOT), tmp_path)
    with pytest.raises(NotRunningError):
        _ = bot.url
    assert bot.exit_status is None and not bot.crashed


def test_windows_is_refused_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = LocalBotSpec("bot", RANDOM_BOT)
    monkeypatch.setattr(os, "name", "nt")
    with pytest.raises(UnsupportedPlatformError, match="need Linux or macOS"):
        LocalBot(spec, tmp_path)


# -- real programs ----------------------------------------------------------------------


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (a container's init may not reap)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
        except (OSError, IndexError):
            return False
    return True


def group_members(pgid: int) -> list[int]:
    """Live processes in process group ``pgid`` (from /proc)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def local_bot(tmp_path: Path, name: str, cmd: str, **options: object) -> LocalBot:
    limits = options.pop("limits", BotLimits())
    assert isinstance(limits, BotLimits)
    return LocalBot(
        LocalBotSpec(name, cmd, limits),
        tmp_path / "logs",
        env=ENV,
        cwd=ROOT,
        **options,  # type: ignore[arg-type]
    )


def script(tmp_path: Path, text: str) -> str:
    path = tmp_path / "program.py"
    path.write_text(text)
    return f"{PYTHON} {path} {{port}}"


async def capabilities(url: str) -> dict[str, object]:
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"{url}/capabilities.json") as response,
    ):
        assert response.status == 200
        body: dict[str, object] = await response.json()
        return body


async def test_a_bot_serve_program_serves_its_capabilities_on_a_free_port(tmp_path: Path) -> None:
    async with local_bot(tmp_path, "random", RANDOM_BOT) as bot:
        assert bot.url.startswith("http://127.0.0.1:")
        body = await capabilities(bot.url)
        assert body["meta"]["name"] == "RandomBot"  # type: ignore[index]
    assert bot.exit_status is not None and not bot.crashed


async def test_the_log_holds_the_programs_output(tmp_path: Path) -> None:
    async with local_bot(tmp_path, "random", RANDOM_BOT) as bot:
        url = bot.url
    log = (tmp_path / "logs" / "random.log").read_text()
    assert f"start on port {url.rsplit(':', 1)[1]}" in log
    assert f"RandomBot: {url}/capabilities.json" in log  # bot.serve's stdout
    assert "GET /capabilities.json" in log  # uvicorn's access log on stderr


async def test_a_program_that_exits_at_once_fails_with_the_tail_of_its_log(tmp_path: Path) -> None:
    cmd = f"{PYTHON} -c \"import sys; print('no bot here'); sys.exit(3)\" {{port}}"
    bot = local_bot(tmp_path, "quits", cmd)
    with pytest.raises(BotExitedError, match="exited with status 3") as caught:
        await bot.start()
    assert "no bot here" in str(caught.value)
    assert caught.value.status.returncode == 3
    assert bot.crashed and not bot.running


async def test_a_program_that_does_not_exist_is_a_launch_error(tmp_path: Path) -> None:
    bot = local_bot(tmp_path, "ghost", f"{tmp_path}/no-such-bot --port {{port}}")
    with pytest.raises(BotLaunchError, match="could not be started"):
        await bot.start()
    assert not bot.running
    assert "could not start" in bot.log_tail()
    with pytest.raises(NotRunningError):
        _ = bot.url


async def test_a_program_past_its_memory_limit_ends_with_memory_error(tmp_path: Path) -> None:
    cmd = script(tmp_path, "print('allocating', flush=True)\nblock = bytearray(2 * 1024**3)\n")
    bot = local_bot(tmp_path, "greedy", cmd, limits=BotLimits(memory_mb=200))
    with pytest.raises(BotExitedError, match="MemoryError") as caught:
        await bot.start()
    status = bot.exit_status
    assert status is not None and status.memory_error and status.returncode != 0
    assert "allocating" in caught.value.log_tail


async def test_a_program_past_its_cpu_time_is_killed_by_sigxcpu(tmp_path: Path) -> None:
    cmd = script(tmp_path, "while True:\n    pass\n")
    bot = local_bot(tmp_path, "busy", cmd, limits=BotLimits(cpu_seconds=1))
    with pytest.raises(BotExitedError, match="killed by SIGXCPU"):
        await bot.start()
    status = bot.exit_status
    assert status is not None and status.signal_name == "SIGXCPU" and bot.crashed


async def test_the_memory_limit_does_not_stop_a_bot_within_it(tmp_path: Path) -> None:
    async with local_bot(tmp_path, "small", RANDOM_BOT, limits=BotLimits(memory_mb=512)) as bot:
        assert (await capabilities(bot.url))["meta"]
    assert not bot.crashed


async def test_a_program_that_never_answers_times_out_and_is_stopped(tmp_path: Path) -> None:
    cmd = script(tmp_path, "import time\nprint('thinking', flush=True)\ntime.sleep(60)\n")
    bot = local_bot(tmp_path, "silent", cmd, start_timeout=0.5)
    with pytest.raises(BotStartTimeoutError, match=r"within 0\.5 s") as caught:
        await bot.start()
    assert "thinking" in caught.value.log_tail
    assert bot.pid is not None and not alive(bot.pid)


@linux_only
async def test_stop_ends_the_whole_group_even_a_child_that_ignores_sigterm(tmp_path: Path) -> None:
    bot = local_bot(tmp_path, "stubborn", script(tmp_path, STUBBORN), grace=0.3)
    async with bot:
        assert bot.pid is not None
        members = group_members(bot.pid)
        assert len(members) == 2 and bot.pid in members
    assert group_members(bot.pid) == []
    assert not any(alive(pid) for pid in members)
    status = bot.exit_status
    assert status is not None and status.signal_name == "SIGKILL" and not bot.crashed


@linux_only
async def test_no_process_is_left_when_the_block_raises(tmp_path: Path) -> None:
    bot = local_bot(tmp_path, "stubborn", script(tmp_path, STUBBORN), grace=0.3)
    with pytest.raises(RuntimeError, match="the runner failed"):
        async with bot:
            pid = bot.pid
            assert pid is not None and len(group_members(pid)) == 2
            raise RuntimeError("the runner failed")
    assert pid is not None and group_members(pid) == []


@linux_only
async def test_no_process_is_left_when_the_task_is_cancelled(tmp_path: Path) -> None:
    bot = local_bot(tmp_path, "stubborn", script(tmp_path, STUBBORN), grace=0.3)
    entered = asyncio.Event()

    async def run() -> None:
        async with bot:
            entered.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(run())
    await asyncio.wait_for(entered.wait(), 15)
    assert bot.pid is not None and len(group_members(bot.pid)) == 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert group_members(bot.pid) == []


@linux_only
async def test_no_process_is_left_when_a_start_is_cancelled(tmp_path: Path) -> None:
    cmd = script(tmp_path, "import time\ntime.sleep(60)\n")
    bot = local_bot(tmp_path, "slow", cmd)
    task = asyncio.create_task(bot.start())
    while bot.pid is None or not group_members(bot.pid):
        await asyncio.sleep(0.02)
    pid = bot.pid
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert group_members(pid) == []


@linux_only
async def test_kill_now_ends_the_group_at_once_for_a_signal_handler(tmp_path: Path) -> None:
    bot = local_bot(tmp_path, "stubborn", script(tmp_path, STUBBORN))
    await bot.start()
    assert bot.pid is not None and len(group_members(bot.pid)) == 2
    bot.kill_now()
    status = await asyncio.wait_for(bot.wait(), 10)
    assert status.signal_name == "SIGKILL" and not status.crashed
    # The signal is sent, not waited for: the child dies in its own time, but it dies.
    for _ in range(500):
        if not group_members(bot.pid):
            break
        await asyncio.sleep(0.01)
    assert group_members(bot.pid) == []


async def test_a_crashed_bot_reports_the_signal_and_restarts(tmp_path: Path) -> None:
    async with local_bot(tmp_path, "random", RANDOM_BOT) as bot:
        first = bot.pid
        assert first is not None
        os.killpg(first, signal.SIGKILL)
        status = await asyncio.wait_for(bot.wait(), 10)
        assert status.describe() == "killed by SIGKILL"
        assert bot.crashed and not bot.running
        await bot.restart()
        assert bot.running and bot.pid != first and not bot.crashed
        assert (await capabilities(bot.url))["meta"]
    assert bot.log_path.read_text().count(" start on port ") == 2


@linux_only
async def test_the_children_of_a_crashed_program_are_stopped_with_it(tmp_path: Path) -> None:
    async with local_bot(tmp_path, "stubborn", script(tmp_path, STUBBORN), grace=0.3) as bot:
        first = bot.pid
        assert first is not None
        (child,) = (pid for pid in group_members(first) if pid != first)
        os.kill(first, signal.SIGKILL)  # the program alone: its child lives on
        await asyncio.wait_for(bot.wait(), 10)
        assert bot.crashed and alive(child)
        await bot.restart()
        assert not alive(child) and bot.pid != first
    assert bot.pid is not None and group_members(bot.pid) == []


async def test_stop_all_stops_every_bot(tmp_path: Path) -> None:
    bots = [local_bot(tmp_path, f"random{i}", RANDOM_BOT) for i in range(2)]
    await asyncio.gather(*(bot.start() for bot in bots))
    pids = [bot.pid for bot in bots]
    await stop_all(bots)
    assert all(bot.exit_status is not None and not bot.crashed for bot in bots)
    assert not any(pid is not None and alive(pid) for pid in pids)

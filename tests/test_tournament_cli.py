"""``htttx-tournament``: its arguments, and whole runs with local bot programs."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from game import notation
from game.local_bot_spec import BotLimits
from game.store import GameStore
from game.tournament_args import UsageError, parse_arguments
from game.tournament_cli import OutputError, export_games, main
from models import EndCause, GameRecord, Player
from tests.http_json import get_json, get_ok, post_json, wait_for

Json = dict[str, Any]
PYTHON = sys.executable
THREAT = f"{PYTHON} -m bot.serve --bot bot.bots:ThreatBot --port {{port}}"
RANDOM = f"{PYTHON} -m bot.serve --bot bot.bots:RandomBot --port {{port}}"
#: A bound on whole runs, against hangs only.
RUN_TIMEOUT = 240


# -------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bot", "name=a,url=http://x"], "at least two --bot"),
        (["--bot", "url=http://x", "--bot", "name=b,url=http://y"], "give the bot a name"),
        (["--bot", "name=a", "--bot", "name=b,url=http://y"], "exactly one of 'url' and 'cmd'"),
        (["--bot", "name=a,url=http://x", "--bot", "name=a,url=http://y"], "unique"),
        (["--bot", "name=a b,url=http://x", "--bot", "name=b,url=http://y"], "bot name"),
        (["--sprt", "elo0=10,elo1=0"], "elo0 must be less than elo1"),
        (["--sprt", "elo0=0,elo1=5,alpha=0.7"], "alpha"),
        (["--sprt", "elo=3"], "expected elo0=E0,elo1=E1"),
        (["--openings", "/no/such/book.htttx"], "cannot read it"),
        (["--format", "swiss"], "format"),
        (["--rounds", "0"], "rounds"),
        (["--bot-memory-mb", "0"], "memory_mb"),
        (["--bot", "name=a,cmd=", "--bot", "name=b,url=http://y"], "the command is empty"),
        (["--bot", "name=a,cmd=my-bot", "--bot", "name=b,url=http://y"], "with {port}"),
        (["--bot", "name=a,url=localhost:9001", "--bot", "name=b,url=http://y"], "no scheme"),
        (["--bot", "name=a,url=ftp://h", "--bot", "name=b,url=http://y"], "unsupported scheme"),
        (["--bot", "name=a,url=http://h:99999", "--bot", "name=b,url=http://y"], "not a valid"),
        (["--address-policy", "allow=moon"], "--address-policy"),
        (["--turn-limit", "0"], "turn_limit"),
        (["--clock", "40/10"], "--clock: time control '40/10': expected"),
        (["--clock", "turn=0"], "--clock: time control 'turn=0': clock: expected more than 0, got"),
        (["--clock", "99999999"], "'99999999': clock: expected at most 2147483.647, got"),
        (["--resign", "moves=3"], "expected moves=K,score=S"),
        (["--resign", "moves=0,score=0.9"], "moves"),
        (["--bot", "name=a,tc=soon,url=http://x", "--bot", "name=b,url=http://y"], "tc"),
        (["--bot", "name=a,board=yes,url=http://x", "--bot", "name=b,url=http://y"], "board"),
        (["--series", "best7"], "expected boN"),
        (["--series", "bo0"], "best_of: expected at least 1"),
        (["--series", "bo3", "--concurrency", "2"], "one game at a time"),
        (["--series", "ft2", "--sprt", "elo0=0,elo1=5"], "without an SPRT"),
    ],
)
def test_bad_arguments_are_one_clear_line(argv: list[str], message: str) -> None:
    bots = ["--bot", "name=a,url=http://127.0.0.1:1", "--bot", "name=b,url=http://127.0.0.1:2"]
    full = argv if any(arg == "--bot" for arg in argv) else bots + argv
    with pytest.raises(UsageError, match=message) as caught:
        parse_arguments(full)
    assert "\n" not in str(caught.value)


def test_local_bots_get_the_default_limits_unless_told_none() -> None:
    bots = ["--bot", "name=a,url=http://127.0.0.1:1", "--bot", "name=b,url=http://127.0.0.1:2"]
    assert parse_arguments(bots).limits == BotLimits()  # 1024 MB, as documented
    told = parse_arguments([*bots, "--bot-memory-mb", "none", "--bot-cpu-seconds", "30"])
    assert (told.limits.memory_mb, told.limits.cpu_seconds) == (None, 30)


@pytest.mark.parametrize(
    ("option", "where", "message"),
    [
        ("--export", "a_file", "exists and is not a directory"),
        ("--export", "a_file/games", "a_file is a file, not a directory"),
        ("--report", "a_file/r.json", "a_file is a file, not a directory"),
        ("--report", "a_dir", "is a directory; expected a file to write"),
        ("--export-bundle", "a_dir", "is a directory; expected a file to write"),
        ("--export-bundle", "a_file/deeper/all.htttx", "a_file is a file, not a directory"),
    ],
)
def test_an_output_path_that_cannot_be_written_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, where: str, message: str
) -> None:
    (tmp_path / "a_file").write_text("")
    (tmp_path / "a_dir").mkdir()
    bots = ["--bot", "name=a,url=http://127.0.0.1:1", "--bot", "name=b,url=http://127.0.0.1:2"]
    db = tmp_path / "r.sqlite"
    assert main([*bots, "--db", str(db), option, str(tmp_path / where)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"htttx-tournament: {option} {tmp_path / where}: ") and message in err
    assert err.count("\n") == 1 and not db.exists()  # nothing was started


async def test_an_export_that_fails_at_the_end_names_its_option(tmp_path: Path) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("")  # became a file during the run
    async with await GameStore.open(f"sqlite+aiosqlite:///{tmp_path / 'r.sqlite'}") as store:
        await store.tournaments.create(
            "t1", name=None, request_json="{}", games_total=2, created_at=datetime.now(UTC)
        )
        await store.tournaments.start_game("t1", 0, "g1")
        await store.tournaments.finish_game("t1", 0, {"winner": None})
        await store.create_game(
            GameRecord.model_validate({"game_id": "g1", "started_at": datetime.now(UTC)})
        )
        with pytest.raises(OutputError, match=r"^--export: .*taken"):
            await export_games(store, "t1", blocker, None, games_counted=2)
        with pytest.raises(OutputError, match=r"^--export-bundle: .*taken"):
            await export_games(store, "t1", None, blocker / "all.htttx", games_counted=2)


def test_a_command_keeps_its_commas_and_config_values_are_json() -> None:
    options = parse_arguments(
        [
            "--bot",
            "name=a,config.x-seed=7,cmd=my-bot --flags a,b --port {port}",
            "--bot",
            "name=b,url=http://127.0.0.1:9",
            "--format",
            "gauntlet",
        ]
    )
    assert options.request is not None
    first = options.request.bots[0]
    assert first.cmd == "my-bot --flags a,b --port {port}"
    assert first.config == {"x-seed": 7}
    assert options.request.format == "gauntlet"


def test_clocks_and_adjudication_reach_the_request() -> None:
    options = parse_arguments(
        [
            "--bot",
            "name=a,tc=turn=2,board=true,url=http://127.0.0.1:1",
            "--bot",
            "name=b,url=http://127.0.0.1:2",
            "--clock",
            "10+0.1",
            "--resign",
            "moves=3,score=0.9",
        ]
    )
    request = options.request
    assert request is not None and request.adjudication is not None
    a, b = request.bots
    assert (a.send_board, b.send_board) == (True, None)
    clock_a, clock_b = request.time_control_of(a), request.time_control_of(b)
    assert clock_a is not None and clock_a.text == "turn=2"
    assert clock_b is not None and clock_b.text == "10+0.1"
    assert request.adjudication.resign is not None
    assert (request.adjudication.resign.moves, request.adjudication.resign.score) == (3, 0.9)


def test_main_prints_one_line_for_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--bot", "name=a,url=http://x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("htttx-tournament: ") and err.count("\n") == 1


def test_an_illegal_opening_in_a_book_file_names_the_file_and_line(tmp_path: Path) -> None:
    book = tmp_path / "mine.htttx"
    book.write_text(
        "version[2] name[Good]; 1. [1,0] [0,1];\n\nversion[2] name[Bad]; 1. [1,0] [0,0];\n"
    )
    argv = ["--bot", "name=a,url=http://127.0.0.1:1", "--bot", "name=b,url=http://127.0.0.1:2"]
    with pytest.raises(UsageError, match=r"mine\.htttx line 3, column \d+: opening 'Bad'"):
        parse_arguments([*argv, "--openings", str(book)])


def test_a_clock_the_server_does_not_host_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--bot", "name=a,url=http://127.0.0.1:1", "--bot", "name=b,url=http://127.0.0.1:2"]
    status = main([*argv, "--clock", "10+99999", "--db", str(tmp_path / "r.sqlite")])
    err = capsys.readouterr().err
    assert status == 2  # a bad argument, as a malformed clock is
    assert "time_control.increment: expected at most 3600" in err and err.count("\n") == 1


def test_an_unreachable_bot_is_one_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    status = main(
        [
            "--bot",
            f"name=gone,url=http://127.0.0.1:{port}",
            "--bot",
            f"name=local,cmd={THREAT}",
            "--db",
            str(tmp_path / "r.sqlite"),
            "--log-dir",
            str(tmp_path / "logs"),
        ]
    )
    err = capsys.readouterr().err
    assert status == 1
    assert "bot 'gone'" in err and "Traceback" not in err and err.count("\n") == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("db", "message"),
    [
        ("foo://bar", "--db foo://bar: unsupported database 'foo'"),
        ("postgresql+asyncpg://u:p@127.0.0.1:{port}/x", ": connection refused; is PostgreSQL"),
        ("postgresql+asyncpg://u:p@127.0.0.1:5432x/x", "URL's port is not a number"),
        ("{tmp}/a_file/r.sqlite", "a_file is a file, so"),
        ("{tmp}", "is a directory, not a database file"),
    ],
)
def test_a_database_that_cannot_be_opened_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], db: str, message: str
) -> None:
    (tmp_path / "a_file").write_text("not a directory")
    bots = ["--bot", "name=a,url=http://127.0.0.1:1", "--bot", "name=b,url=http://127.0.0.1:2"]
    status = main([*bots, "--db", db.format(tmp=tmp_path, port=_closed_port())])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.startswith("htttx-tournament: --db") and message in err
    assert "Traceback" not in err and err.count("\n") == 1
    assert ":p@" not in err  # the password is hidden


def test_a_taken_port_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bots = ["--bot", "name=a,url=http://127.0.0.1:1", "--bot", "name=b,url=http://127.0.0.1:2"]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        status = main([*bots, "--db", str(tmp_path / "r.sqlite"), "--port", str(port)])
    err = capsys.readouterr().err
    assert status == 2, err
    in_use = f"cannot listen on 127.0.0.1:{port}: the port is already in use"
    assert err == f"htttx-tournament: {in_use}\n"


# ------------------------------------------------------------------- whole runs


def _done_rows(db: Path) -> list[tuple[int, str]]:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute(
                "select idx, game_id from tournament_games where status = 'done'"
            ).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> Json:
    """``htttx-tournament *argv`` with its database, logs, report and games in
    ``tmp_path``; it must finish (exit 0). The JSON report."""
    report = tmp_path / "report.json"
    status = main(
        [
            *argv,
            "--db",
            str(tmp_path / "r.sqlite"),
            "--log-dir",
            str(tmp_path / "logs"),
            "--report",
            str(report),
            "--export",
            str(tmp_path / "games"),
            "--no-progress",
        ]
    )
    assert status == 0, capsys.readouterr()
    view: Json = json.loads(report.read_text())
    assert view["status"] == "finished"
    return view


def exported(tmp_path: Path) -> list[GameRecord]:
    return [notation.loads(f.read_text()) for f in sorted((tmp_path / "games").iterdir())]


def test_the_runners_server_runs_no_program_a_request_names(tmp_path: Path) -> None:
    """The runner's port is open to whoever reaches it (a page in the operator's
    browser can POST there): only the command line's own tournament runs programs."""
    port = _closed_port()
    base = f"http://127.0.0.1:{port}"
    argv = [
        *("--bot", f"name=a,url={base}/bots/center", "--bot", f"name=b,url={base}/bots/random"),
        *("--rounds", "100000", "--port", str(port), "--db", str(tmp_path / "r.sqlite")),
        *("--log-dir", str(tmp_path / "logs"), "--quiet"),
    ]
    statuses: list[int] = []
    runner = threading.Thread(target=lambda: statuses.append(main(argv)))
    runner.start()
    marker = tmp_path / "ran"
    program = f"{PYTHON} -c 'import pathlib, sys; pathlib.Path(sys.argv[1]).touch()'"
    try:
        ours = wait_for(lambda: _running_tournaments(base), RUN_TIMEOUT)
        status, answer = post_json(
            f"{base}/tournaments",
            {
                "bots": [
                    {"name": "evil", "cmd": f"{program} {marker} {{port}}"},
                    {"name": "b", "url": f"{base}/bots/random"},
                ],
                "openings": "none",
            },
        )
        assert status == 422, answer
        assert "the server does not run programs on request" in answer["detail"]
        assert not marker.exists()
    finally:
        for tournament_id in _running_tournaments(base) or ours:
            post_json(f"{base}/tournaments/{tournament_id}/stop", None)
        runner.join(RUN_TIMEOUT)
    assert not runner.is_alive() and len(statuses) == 1  # stopped: the run is over


def _running_tournaments(base: str) -> list[str]:
    """The ids of the tournaments running on the server at ``base`` (none while it
    does not answer yet)."""
    try:
        status, _ = get_json(f"{base}/health")
    except OSError:
        return []
    page = get_ok(f"{base}/tournaments") if status == 200 else {"tournaments": []}
    return [t["tournament_id"] for t in page["tournaments"] if t["status"] == "running"]


def test_a_run_reports_exports_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    view = run(
        tmp_path,
        capsys,
        "--bot",
        f"name=threat,cmd={THREAT}",
        "--bot",
        f"name=random,config.x-seed=3,cmd={RANDOM}",
        "--rounds",
        "2",
        "--concurrency",
        "2",
        "--export-bundle",
        str(tmp_path / "all.htttx"),
    )
    out = capsys.readouterr().out
    assert "Results of threat vs random:" in out and "Ptnml(0-2):" in out
    assert view["status"] == "finished" and view["games_counted"] == 4
    # Off a terminal, each counted pair's line gives the match's running score, Elo and
    # LOS, as cutechess and fastchess print theirs (a CI log shows nothing else).
    assert re.search(
        r"^\S+: running, 2/4 games counted, \d+ running \| Score of threat vs random: "
        r"\d - \d - \d \[\d\.\d{3}\] 2, Elo: \S+ \+/- \S+, LOS: [\d.]+ %$",
        out,
        re.MULTILINE,
    ), out
    files = sorted((tmp_path / "games").glob("*.htttx"))
    assert [f.name for f in files] == [f"{n:06d}.htttx" for n in range(1, 5)]
    records = exported(tmp_path)
    assert all(r.result is not None for r in records)
    assert {r.player_x.name for r in records} == {"threat", "random"}
    assert (tmp_path / "all.htttx").read_text().count("version[2]") == 4
    assert (tmp_path / "logs" / "threat.log").exists()


def test_a_series_on_the_command_line_stops_once_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    view = run(
        tmp_path,
        capsys,
        "--bot",
        f"name=threat,cmd={THREAT}",
        "--bot",
        f"name=random,cmd={RANDOM}",
        "--series",
        "bo5",
        "--openings",
        "none",
    )
    out = capsys.readouterr().out
    series = view["series"]
    assert view["status"] == "finished" and series["decided"] and series["rule"] == "best of 5"
    assert view["games_total"] == 5 and view["games_counted"] == series["games"] <= 5
    assert f"Series (best of 5): {series['text']}" in out and "wins the series" in out
    records = exported(tmp_path)
    assert len(records) == series["games"]
    # Sides alternate, and each record says the score before it.
    assert [r.player_x.name for r in records] == ["threat", "random", "threat", "random", "threat"][
        : len(records)
    ]
    assert records[0].tags["SeriesScore"] == "threat 0-0 random"


def marked_command(mark: str, db: Path, *argv: str, random: str = "") -> list[str]:
    """``htttx-tournament`` as a process of its own: threat against random (``random``
    its options first), both programs run with ``HTTTX_TEST_MARK=mark`` in their
    environment (for ``_marked_processes``); its database ``db``, its logs in
    ``logs`` next to it, then ``argv``."""
    return [
        PYTHON,
        "-m",
        "game.tournament_cli",
        "--bot",
        f"name=threat,cmd=env HTTTX_TEST_MARK={mark} {THREAT}",
        "--bot",
        f"name=random,{random}cmd=env HTTTX_TEST_MARK={mark} {RANDOM}",
        "--db",
        str(db),
        "--log-dir",
        str(db.parent / "logs"),
        "--no-progress",
        *argv,
    ]


def _marked_processes(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"HTTTX_TEST_MARK={mark}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_in_the_middle_then_the_same_command_resumes_to_the_same_result(
    tmp_path: Path,
) -> None:
    mark = f"resume-{os.getpid()}"
    db, fresh_db = tmp_path / "r.sqlite", tmp_path / "fresh.sqlite"

    def command(database: Path) -> list[str]:
        return marked_command(
            mark,
            database,
            "--rounds",
            "12",
            "--concurrency",
            "2",
            "--report",
            str(database.with_suffix(".json")),
            random="config.x-seed=5,",
        )

    runner = subprocess.Popen(command(db), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT
        while len(_done_rows(db)) < 4:
            assert runner.poll() is None, runner.stdout.read() if runner.stdout else ""
            assert time.monotonic() < deadline
            time.sleep(0.05)
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=10)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert len(_done_rows(db)) < 24
    # The kernel stops the local bots of a runner killed with -9.
    deadline = time.monotonic() + 10
    while _marked_processes(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _marked_processes(mark) == []

    again = subprocess.run(command(db), capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Resuming tournament" in again.stdout
    rows = _done_rows(db)
    assert sorted(idx for idx, _ in rows) == list(range(24))  # each game once
    assert len({game_id for _, game_id in rows}) == 24

    fresh = subprocess.run(command(fresh_db), capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    resumed_view = json.loads(db.with_suffix(".json").read_text())
    fresh_view = json.loads(fresh_db.with_suffix(".json").read_text())
    for key in ("standings", "pairs", "games_counted"):
        assert resumed_view[key] == fresh_view[key]
    assert _marked_processes(mark) == []


CRASHY_BOT = '''
import os
import re
from bot.bot import BaseBot
from bot.bots import CenterBot


class CrashBot(CenterBot):
    """Plays like CenterBot, but its process dies on its third move."""

    moves = 0

    def choose_move(self, cells, player, match):
        CrashBot.moves += 1
        if CrashBot.moves == 3:
            os._exit(3)
        return super().choose_move(cells, player, match)


class SlowBot(BaseBot):
    """Takes a second a move, and declares no move_time_limit: it never learns its time
    (the framework would otherwise answer in time with a fallback move)."""

    def choose_move(self, cells, player, match):
        import time

        from game.game import valid_placement_cells

        time.sleep(1.0)
        return valid_placement_cells(cells, match.view_distance)[:2]


class SureBot(CenterBot):
    """Plays like CenterBot and says X is winning, whatever the position."""

    def choose_move(self, cells, player, match):
        from bot.bot import MoveDecision
        from models import PositionEvaluation

        pieces = MoveDecision.of(super().choose_move(cells, player, match)).pieces
        return MoveDecision(pieces, evaluation=PositionEvaluation(heuristic=1.0))


class HungryBot(CenterBot):
    """Asks for 2 GiB on every move (more than its memory limit allows)."""

    def choose_move(self, cells, player, match):
        hoard = bytearray(2 << 30)
        return super().choose_move(cells, player, match) if hoard else None
'''


@pytest.fixture
def test_bots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bots of ``CRASHY_BOT`` importable by local programs as ``crashy``."""
    (tmp_path / "crashy.py").write_text(CRASHY_BOT)
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.getcwd()}")
    return tmp_path


def served(bot_class: str) -> str:
    """The command of a local program serving ``crashy.<bot_class>``."""
    return f"{PYTHON} -m bot.serve --bot crashy:{bot_class} --port {{port}}"


def test_a_local_program_that_crashes_loses_with_crash_and_is_restarted(
    test_bots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    view = run(
        test_bots,
        capsys,
        "--bot",
        f"name=threat,cmd={THREAT}",
        "--bot",
        f"name=crashy,cmd={served('CrashBot')}",
        "--rounds",
        "3",
    )
    assert view["games_counted"] == 6
    crashy = next(line for line in view["standings"] if line["name"] == "crashy")
    assert crashy["failures"]["crash"] >= 1
    # Started again after a crash (before its next game): LocalBot marks each start.
    starts = (test_bots / "logs" / "crashy.log").read_text().count(" start on port ")
    assert 2 <= starts <= 1 + crashy["failures"]["crash"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux's")
def test_a_local_program_cannot_allocate_past_its_memory_limit(
    test_bots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    view = run(
        test_bots,
        capsys,
        "--bot",
        f"name=threat,cmd={THREAT}",
        "--bot",
        f"name=hungry,cmd={served('HungryBot')}",
        "--bot-memory-mb",
        "1024",
    )
    assert view["games_counted"] == 2
    # The 2 GiB never came: the framework logged the MemoryError and played on.
    assert "MemoryError" in (test_bots / "logs" / "hungry.log").read_text()


def test_a_local_program_that_overruns_its_own_clock_loses_on_time(
    test_bots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    view = run(
        test_bots,
        capsys,
        "--bot",
        f"name=threat,cmd={THREAT}",
        "--bot",
        f"name=slow,tc=turn=0.3,cmd={served('SlowBot')}",
        "--clock",
        "60+1",
        "--openings",
        "none",
    )
    slow = next(line for line in view["standings"] if line["name"] == "slow")
    assert slow["losses"] == 2 and slow["failures"]["time"] == 2
    for record in exported(test_bots):
        clocks = {
            record.player_x.name: record.player_x.time_control,
            record.player_o.name: record.player_o.time_control,
        }
        assert clocks["slow"] is not None and clocks["slow"].text == "turn=0.3"
        assert clocks["threat"] is not None and clocks["threat"].text == "60+1"


def test_resign_adjudication_ends_games_both_bots_call_won(
    test_bots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    view = run(
        test_bots,
        capsys,
        "--bot",
        f"name=sure1,cmd={served('SureBot')}",
        "--bot",
        f"name=sure2,cmd={served('SureBot')}",
        "--resign",
        "moves=2,score=0.9",
        "--openings",
        "none",
    )
    records = exported(test_bots)
    assert len(records) == 2
    for record in records:
        assert record.result is not None
        assert record.result.cause is EndCause.ADJUDICATION
        assert record.result.winner is Player.X
        assert len(record.moves) <= 6  # two moves each of agreement after O's first
    assert {line["points"] for line in view["standings"]} == {1.0}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_run_and_its_programs_and_says_how_to_resume(
    tmp_path: Path, signum: signal.Signals
) -> None:
    mark = f"signal-{os.getpid()}-{signum.name}"
    db = tmp_path / "r.sqlite"
    command = marked_command(mark, db, "--rounds", "200")
    runner = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT
        while len(_done_rows(db)) < 2:
            assert runner.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert _marked_processes(mark)  # the programs run
        runner.send_signal(signum)
        out, _ = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 130, out
    assert f"Stopped by {signum.name}: run the same command again to resume." in out
    assert _marked_processes(mark) == []  # stopped by the runner itself
    with sqlite3.connect(db) as conn:
        [(status,)] = conn.execute("select status from tournaments").fetchall()
    assert status == "stopped"


def test_on_a_terminal_the_run_shows_a_live_table(tmp_path: Path) -> None:
    import asyncio
    import io

    from rich.console import Console

    from game.tournament_cli import run_tournament

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120, color_system=None)
    options = parse_arguments(
        [
            "--bot",
            f"name=threat,cmd={THREAT}",
            "--bot",
            f"name=random,cmd={RANDOM}",
            "--rounds",
            "2",
            "--sprt",
            "elo0=0,elo1=10",
            "--db",
            str(tmp_path / "r.sqlite"),
            "--log-dir",
            str(tmp_path / "logs"),
        ]
    )
    assert asyncio.run(run_tournament(options, console)) == 0
    shown = screen.getvalue()
    assert "games" in shown and "4/4" in shown  # the progress bar, full
    assert "threat" in shown and "Failures" in shown  # the standings table
    assert "LLR:" in shown and "Results of threat vs random:" in shown
    # The table left on screen above the report shows the end, not the last frame drawn
    # while games ran.
    ended = "finished, 4/4 games counted, 0 running"
    live_part = shown[: shown.rindex(ended)]
    last_title = live_part[live_part.rindex("games counted") - 40 :]
    assert ended in last_title, last_title


def test_a_local_program_that_cannot_start_from_an_opening_fails_before_any_game(
    test_bots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "--bot",
            f"name=threat,cmd={THREAT}",
            "--bot",
            f"name=slow,cmd={served('SlowBot')}",  # declares neither free_setup nor move_skips
            "--openings",
            "default",
            "--db",
            str(test_bots / "r.sqlite"),
            "--log-dir",
            str(test_bots / "logs"),
            "--report",
            str(test_bots / "report.json"),
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    view = json.loads((test_bots / "report.json").read_text())
    assert status == 1 and view["status"] == "failed"
    assert view["reason"].startswith(
        "bot 'slow': the bot declares neither free_setup nor move_skips"
    )
    assert view["games_done"] == 0 and _done_rows(test_bots / "r.sqlite") == []
    assert view["reason"] in out

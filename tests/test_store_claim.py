"""One server per database (``game.store_claim``): ``htttx-server`` and
``htttx-tournament`` as processes of their own, on a SQLite file in ``tmp_path`` and on a
database of the test PostgreSQL server. A second process on a database in use is
refused, one line, exit status 2, before it touches the database: the first one's
running game (a silent bot never moves) stays running. A server killed with ``kill -9``
leaves nothing that blocks its restart; a lost lock connection is taken again; a
cluster's workers share their database, and refuse it to a server that is no worker.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from game.store import LEFT_RUNNING_RESULT
from game.store_claim import ADVISORY_LOCK, Owner, StoreInUseError, claim, lock_file_path
from models import GameResult
from tests.http_json import get_ok, post_ok, wait_for
from tests.postgres import PostgresCluster
from tests.redis_server import RedisServer
from tests.silent_bot import silent_bot

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60.0  # only against hangs
#: "(pid 123, http://127.0.0.1:4567, since 2026-05-01 12:00:00 UTC)"
SINCE = r"since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"


def shown(db_url: str) -> str:
    """The database as the refusal names it: a SQLite file's path, as given."""
    parsed = make_url(db_url)
    if parsed.drivername.startswith("sqlite"):
        return str(parsed.database)
    return parsed.render_as_string(hide_password=True)


@contextmanager
def server(db_url: str, *options: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``htttx-server`` on a free loopback port: its process and base URL (stderr
    read only after it stopped)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "game.serve", "--port", "0", "--log-level", "warning",
         "--db", db_url, *options],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("htttx-arena game server on http://127.0.0.1:"), first + (
            process.stderr.read() if process.poll() is not None and process.stderr else ""
        )
        yield process, first.rsplit(" ", 1)[-1].strip()
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(TIMEOUT)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def refused(*command: str) -> str:
    """Run ``command`` (a module and its arguments), which must exit with status 2 and
    one line on stderr; that line."""
    done = subprocess.run(
        [sys.executable, "-m", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    return done.stderr.rstrip("\n")


def silent_game(base: str, bot_url: str) -> str:
    """A game between two silent bots: it stays running; its id."""
    seat = {"type": "bot", "bot_url": bot_url}
    return str(post_ok(f"{base}/game/new", {"player_x": seat, "player_o": seat})["game_id"])


def status_of(base: str, game_id: str) -> str:
    """The game's status as stored (a live game's own record is served from memory)."""
    [status] = [
        item["status"] for item in get_ok(f"{base}/games")["items"] if item["game_id"] == game_id
    ]
    return str(status)


def test_a_second_server_on_a_database_in_use_is_refused_and_aborts_nothing(
    db_url: str, tmp_path: Path
) -> None:
    second_url = db_url
    if db_url.startswith("sqlite"):  # the same file by another path: one lock
        (tmp_path / "link").symlink_to(tmp_path / "data", target_is_directory=True)
        second_url = f"sqlite+aiosqlite:///{tmp_path / 'link' / 'htttx.sqlite'}"
    with silent_bot() as bot_url, server(db_url) as (first, base):
        game_id = silent_game(base, bot_url)
        line = refused("game.serve", "--port", "0", "--log-level", "warning", "--db", second_url)
        assert re.fullmatch(
            re.escape(
                f"htttx-server: error: database {shown(second_url)} is in use by another "
                f"htttx-server (pid {first.pid}, {base}, "
            )
            + SINCE
            + re.escape("); stop it or pass another --db"),
            line,
        ), line
        # The refused server never started, so it marked no game aborted.
        assert status_of(base, game_id) == "running"


def test_a_server_killed_with_sigkill_does_not_block_its_restart(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    with silent_bot() as bot_url:
        with server(db_url) as (first, base):
            game_id = silent_game(base, bot_url)
            first.send_signal(signal.SIGKILL)
            first.wait(TIMEOUT)
        # The lock file stays, naming the dead server; the kernel let go of its lock.
        record = json.loads(lock_file_path(str(tmp_path / "games.sqlite")).read_text())
        assert record["pid"] == first.pid and record["program"] == "htttx-server"
        with server(db_url) as (_again, base):
            result = GameResult.model_validate(get_ok(f"{base}/games/{game_id}")["result"])
            assert result == LEFT_RUNNING_RESULT


def test_a_record_of_a_process_gone_names_no_one(tmp_path: Path) -> None:
    """The holder has locked the file and not written yet: the record there is the last
    holder's, a process that has ended, and is not named."""
    database = tmp_path / "games.sqlite"
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait(TIMEOUT)
    last = replace(Owner.of_this_process("htttx-server", "http://127.0.0.1:1"), pid=ended.pid)
    lock = lock_file_path(str(database))
    lock.write_text(last.to_record())
    with lock.open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(StoreInUseError) as refusal:
            claim(f"sqlite:///{database}", Owner("htttx-tournament"))
    assert str(refusal.value) == (
        f"database {database} is in use by another process; stop it or pass another --db"
    )


# ----------------------------------------------------------------------- tournaments


def tournament(db: Path, bot_url: str) -> list[str]:
    return [
        "game.tournament_cli",
        "--bot", f"name=a,url={bot_url}",
        "--bot", f"name=b,url={bot_url}",
        "--db", str(db),
        "--openings", "none",  # the silent bot declares no free_setup
        "--no-progress",
    ]  # fmt: skip


def test_a_second_tournament_run_on_its_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "results.sqlite"
    with silent_bot() as bot_url:
        command = tournament(db, bot_url)
        first = subprocess.Popen(
            [sys.executable, "-m", *command],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert first.stdout is not None
            started = first.stdout.readline()
            found = re.fullmatch(r"Tournament (\w+): \d+ games; standings at (\S+)\n", started)
            assert found, started
            tournament_id, standings = found.groups()
            base = standings.split("/tournaments/")[0]
            # Asked after that line, a server that answers has its signal handlers set.
            game_id = wait_for(
                lambda: next(iter(get_ok(f"{base}/games?status=running")["items"]), None)
            )["game_id"]

            holder = f"htttx-tournament (pid {first.pid}, {base}, "
            # The same command again would have resumed the same tournament beside it.
            assert re.fullmatch(
                re.escape(f"htttx-tournament: database {db} is in use by another {holder}")
                + SINCE
                + re.escape("); stop it or pass another --db"),
                refused(*command),
            )
            # A server on its file would have marked its games aborted.
            line = refused(
                "game.serve", "--port", "0", "--log-level", "warning", "--db", f"sqlite:///{db}"
            )
            assert line.startswith(f"htttx-server: error: database {db} is in use by {holder}")
            assert get_ok(standings)["status"] == "running"
            assert status_of(base, game_id) == "running"

            first.send_signal(signal.SIGINT)
            assert first.wait(TIMEOUT) == 130
        finally:
            if first.poll() is None:
                first.kill()
                first.wait(TIMEOUT)
            if first.stdout is not None:
                first.stdout.close()
        # Stopped, it let go: the same command resumes its tournament.
        again = subprocess.Popen(
            [sys.executable, "-m", *command],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert again.stdout is not None
            assert again.stdout.readline().startswith(f"Resuming tournament {tournament_id}")
            # It sets its signal handlers as it prints this line, before it answers
            # anything on its port.
            resumed = again.stdout.readline()
            assert resumed.startswith(f"Tournament {tournament_id}:"), resumed
            assert get_ok(resumed.split(" standings at ")[1].strip())["status"] == "running"
            again.send_signal(signal.SIGINT)
            assert again.wait(TIMEOUT) == 130
        finally:
            if again.poll() is None:
                again.kill()
                again.wait(TIMEOUT)
            if again.stdout is not None:
                again.stdout.close()


# ------------------------------------------------------------------------- PostgreSQL


async def _lock_holders(db_url: str) -> list[int]:
    """The backends that hold the store's advisory lock."""
    first, second = ADVISORY_LOCK
    engine = create_async_engine(db_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                text(
                    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    f"AND classid = {first} AND objid = {second} AND objsubid = 2"
                )
            )
            pids: list[int] = list(rows.scalars())
            return pids
    finally:
        await engine.dispose()


async def _terminate(db_url: str, pid: int) -> None:
    engine = create_async_engine(db_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            await connection.execute(text(f"SELECT pg_terminate_backend({pid})"))
    finally:
        await engine.dispose()


def test_a_lost_lock_connection_is_taken_again(postgres_cluster: PostgresCluster) -> None:
    db_url = postgres_cluster.new_database()
    with server(db_url) as (first, base):
        [backend] = asyncio.run(_lock_holders(db_url))
        asyncio.run(_terminate(db_url, backend))

        def taken_again() -> list[int]:
            return [pid for pid in asyncio.run(_lock_holders(db_url)) if pid != backend]

        assert len(wait_for(taken_again)) == 1
        line = refused("game.serve", "--port", "0", "--log-level", "warning", "--db", db_url)
        assert f"is in use by another htttx-server (pid {first.pid}, {base}, " in line


def test_a_cluster_and_a_server_that_is_no_worker_refuse_each_other(
    postgres_cluster: PostgresCluster, redis_server: RedisServer
) -> None:
    db_url = postgres_cluster.new_database()
    # A Redis database of its own (tests/test_cluster.py counts up from 1, and
    # tests/test_cluster_recovery.py down from 15; keys left behind expire with the lease).
    redis_url = redis_server.url.rsplit("/", 1)[0] + "/8"
    worker = ("--redis", redis_url, "--lease", "1")
    with server(db_url, *worker) as (one, one_base), server(db_url, *worker) as (_two, _base):
        # Workers share it. A lone server's startup would abort the cluster's games.
        line = refused("game.serve", "--port", "0", "--log-level", "warning", "--db", db_url)
        assert line.startswith(
            f"htttx-server: error: database {shown(db_url)} is in use by the workers of a "
            f"cluster: htttx-server (pid {one.pid}, {one_base}, "
        ), line
        assert line.endswith(
            " and 1 more; stop them or pass another --db (or --redis, to join them)"
        ), line
    with server(db_url) as (lone, lone_base):
        line = refused(
            "game.serve", "--port", "0", "--log-level", "warning", "--db", db_url, *worker
        )
        assert re.fullmatch(
            re.escape(
                f"htttx-server: error: database {shown(db_url)} is in use by another "
                f"htttx-server (pid {lone.pid}, {lone_base}, "
            )
            + SINCE
            + re.escape("), which is no worker of a cluster; stop it or pass another --db"),
            line,
        ), line

"""What ``htttx-server`` and ``htttx-tournament`` say when their database or Redis
cannot be used at startup: one line naming the URL, its password hidden, and what to
fix; exit status 2; never a traceback (``game.startup_checks``,
``game.store.open_errors``, ``game.cluster_redis_connect``).

Against real servers on this machine: the suite's PostgreSQL (``tests/postgres.py``:
its ``PASSWORD_ROLE`` must give a password) and Redis (``tests/redis_server.py``), a
Redis of this module's own that wants a password, and ports found closed.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import pytest

from game.cluster_redis_connect import connect_redis
from game.serve import main as serve_main
from game.startup_checks import check_store
from game.tournament_cli import main as tournament_main
from tests.postgres import PostgresCluster
from tests.redis_server import RedisServer, redis_executable

ROOT = Path(__file__).resolve().parents[1]

#: The password in every refused URL: it must never be printed.
SECRET = "s3cret-pw"
#: A --db that is PostgreSQL, for --redis (which needs one): Redis is checked first.
SOME_POSTGRES = "postgresql+asyncpg://htttx@127.0.0.1:1/arena"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _refusal(
    capsys: pytest.CaptureFixture[str], main: Callable[[Sequence[str]], int], argv: list[str]
) -> str:
    """What ``main(argv)`` printed as it refused to start: it must be one line, without
    the password, and the status 2."""
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert SECRET not in err
    return err.removesuffix("\n")


def _server_refusal(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    return _refusal(capsys, serve_main, ["--port", "0", *argv])


# ---------------------------------------------------------------- PostgreSQL


def test_a_missing_postgresql_socket_is_named_by_its_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"postgresql://htttx:{SECRET}@/arena?host={tmp_path}/nowhere"
    assert _server_refusal(capsys, "--db", url) == (
        f"htttx-server: error: --db postgresql://htttx:***@/arena?host={tmp_path}/nowhere: "
        f"cannot connect to PostgreSQL at the socket {tmp_path}/nowhere/.s.PGSQL.5432: "
        "there is no such socket; is PostgreSQL running, and is that its socket?"
    )


def test_a_closed_postgresql_port_is_a_refused_connection(
    capsys: pytest.CaptureFixture[str],
) -> None:
    port = _closed_port()
    url = f"postgresql+asyncpg://htttx:{SECRET}@127.0.0.1:{port}/arena"
    assert _server_refusal(capsys, "--db", url) == (
        f"htttx-server: error: --db postgresql+asyncpg://htttx:***@127.0.0.1:{port}/arena: "
        f"cannot connect to PostgreSQL at 127.0.0.1:{port}: connection refused; is "
        "PostgreSQL running, and listening on that address and port?"
    )


def test_an_unknown_postgresql_host_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"postgresql://htttx:{SECRET}@no-such-host.invalid/arena"
    err = _server_refusal(capsys, "--db", url)
    assert "--db postgresql://htttx:***@no-such-host.invalid/arena: cannot connect to " in err
    assert "at no-such-host.invalid:5432: unknown host (" in err
    assert err.endswith("; check the host name")


@pytest.mark.parametrize(
    ("login", "said"),
    [
        (
            "wrong password",
            'password authentication failed for user "htttx_with_password"; check the user '
            "and password in the URL",
        ),
        (
            "no such role",
            'role "no_such_role" does not exist; create the role (createuser no_such_role) '
            "or give another user in the URL",
        ),
        (
            "no such database",
            'database "no_such_database" does not exist; create it (createdb -O postgres '
            "no_such_database) or fix the database name in the URL",
        ),
        (
            "may not create tables",
            "permission denied for schema public; the user must connect to the database "
            "and create tables in it: make it the database's owner (ALTER DATABASE {database} "
            "OWNER TO htttx_with_password)",
        ),
    ],
)
def test_what_postgresql_refuses_is_said_with_what_to_do(
    capsys: pytest.CaptureFixture[str], postgres_cluster: PostgresCluster, login: str, said: str
) -> None:
    database = postgres_cluster.new_database().split("@/", 1)[1].split("?", 1)[0]
    role, password = postgres_cluster.PASSWORD_ROLE, postgres_cluster.PASSWORD
    if login == "wrong password":
        url = postgres_cluster.url(database, role, SECRET)
    elif login == "no such role":
        url = postgres_cluster.url(database, "no_such_role", SECRET)
    elif login == "no such database":
        url = postgres_cluster.url("no_such_database")
    else:  # what PostgreSQL 15 does by default, said for every version
        postgres_cluster.sql(database, "REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        url = postgres_cluster.url(database, role, password)
    socket_path = f"{postgres_cluster.socket_dir}/.s.PGSQL.{postgres_cluster.PORT}"
    err = _server_refusal(capsys, "--db", url)
    assert err.endswith(
        f": PostgreSQL at the socket {socket_path} refused: {said.format(database=database)}"
    ), err


def test_a_postgresql_role_with_its_password_opens_the_store(
    postgres_cluster: PostgresCluster,
) -> None:
    """The good path of the refusals above: the right password, a database of its own."""
    role = postgres_cluster.PASSWORD_ROLE
    database = postgres_cluster.new_database(owner=role).split("@/", 1)[1].split("?", 1)[0]
    asyncio.run(check_store(postgres_cluster.url(database, role, postgres_cluster.PASSWORD)))


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (
            f"mysql://htttx:{SECRET}@db/arena",
            "--db mysql://htttx:***@db/arena: unsupported database 'mysql': expected a "
            "sqlite+aiosqlite:// or postgresql+asyncpg:// URL",
        ),
        (
            f"postgresql://htttx:{SECRET}@db:5432x/arena",
            "--db postgresql://htttx:***@db:5432x/arena: the database URL's port is not a number",
        ),
        (
            f"postgresql://htttx:{SECRET}@127.0.0.1:1/arena?sslmode=require",
            "--db postgresql://htttx:***@127.0.0.1:1/arena?sslmode=require: ?sslmode= is not "
            "an option asyncpg takes (asyncpg spells it ?ssl=require); remove it from the URL",
        ),
    ],
)
def test_a_database_url_that_is_wrong_in_itself_is_said_so(
    capsys: pytest.CaptureFixture[str], url: str, said: str
) -> None:
    assert _server_refusal(capsys, "--db", url) == f"htttx-server: error: {said}"


# -------------------------------------------------------------------- SQLite


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc, where no one writes")
def test_a_sqlite_file_where_no_one_may_write_is_said_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Not a directory made read-only: root, as the tests may run, writes there anyway.
    err = _server_refusal(capsys, "--db", "sqlite+aiosqlite:////proc/htttx-test.sqlite")
    # Checked before opening it (os.access), or found by SQLite (root).
    assert err.startswith("htttx-server: error: --db sqlite+aiosqlite:////proc/htttx-test.sqlite:")
    assert "write in /proc" in err


def test_a_file_that_is_not_a_sqlite_database_is_said_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database, but long enough for SQLite to read its header\n" * 4)
    assert _server_refusal(capsys, "--db", f"sqlite:///{notes}") == (
        f"htttx-server: error: --db sqlite:///{notes}: {notes} is not a SQLite database; "
        "give a new file or the arena's own"
    )


def test_a_sqlite_file_in_directories_not_made_yet_opens(tmp_path: Path) -> None:
    database = tmp_path / "new" / "dirs" / "htttx.sqlite"
    asyncio.run(check_store(f"sqlite+aiosqlite:///{database}"))
    assert database.is_file()


def test_a_wrong_db_is_said_so_whatever_listens_on_the_port(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The URL is checked before the port is bound: a busy port (another server, ``make
    run``) does not hide what is wrong with ``--db``."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        err = _refusal(capsys, serve_main, ["--port", port, "--db", "mysql://x/y"])
    assert err.startswith("htttx-server: error: --db mysql://x/y: unsupported database 'mysql'")


def _banner(lines: Iterable[str]) -> Iterator[str]:
    """The server's banner, up to its last line (or the end of its output)."""
    for line in lines:
        yield line
        if line.startswith("Ctrl-C stops the server"):
            return


def test_a_path_as_db_is_a_sqlite_file(tmp_path: Path) -> None:
    """``--db games.sqlite`` is a SQLite file, as ``htttx-tournament --db`` takes it,
    made absolute where the server was started."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "game.serve", "--port", "0", "--db", "games.sqlite"]
    with subprocess.Popen(
        command, cwd=tmp_path, env=environment, stdout=subprocess.PIPE, text=True
    ) as server:
        stop = threading.Timer(60.0, server.kill)  # only against a hang
        stop.start()
        try:
            assert server.stdout is not None
            banner = list(_banner(server.stdout))
        finally:
            stop.cancel()
            server.kill()
    store = f"sqlite+aiosqlite:///{tmp_path.resolve() / 'games.sqlite'}"
    assert any(line.split() == ["store", store] for line in banner), banner
    assert (tmp_path / "games.sqlite").is_file()


# --------------------------------------------------------------------- Redis


@pytest.fixture(scope="module")
def redis_with_password() -> Iterator[RedisServer]:
    """A redis-server of this module's own that wants ``PostgresCluster.PASSWORD``."""
    executable = redis_executable()
    if executable is None:
        pytest.skip("redis-server not found (install it with `make test`)")
    server = RedisServer(executable, "--requirepass", PostgresCluster.PASSWORD)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def _redis_refusal(capsys: pytest.CaptureFixture[str], redis_url: str) -> str:
    return _server_refusal(capsys, "--db", SOME_POSTGRES, "--redis", redis_url)


def test_a_closed_redis_port_is_a_refused_connection(capsys: pytest.CaptureFixture[str]) -> None:
    port = _closed_port()
    assert _redis_refusal(capsys, f"redis://:{SECRET}@127.0.0.1:{port}/0") == (
        f"htttx-server: error: --redis redis://:***@127.0.0.1:{port}/0: cannot connect to "
        f"Redis at 127.0.0.1:{port}: connection refused; is Redis running, and listening on "
        "that address and port?"
    )


def test_a_missing_redis_socket_is_named_by_its_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = _redis_refusal(capsys, f"unix://:{SECRET}@{tmp_path}/redis.sock")
    assert err.endswith(
        f": cannot connect to Redis at the socket {tmp_path}/redis.sock: there is no such "
        "socket; is Redis running, and is that its socket?"
    )


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (
            "http://127.0.0.1:6379",
            "not a Redis URL; expected redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], "
            "rediss://... (TLS) or unix:///PATH",
        ),
        ("redis://127.0.0.1:99999/0", "the port must be a number from 1 to 65535"),
        (
            # redis-py alone would take this for database 0 (and /0/1 for 1)
            "redis://127.0.0.1:{closed}/cache",
            "the database after the host must be a number, as in redis://HOST:6379/0, got '/cache'",
        ),
    ],
)
def test_a_malformed_redis_url_is_said_so(
    capsys: pytest.CaptureFixture[str], url: str, said: str
) -> None:
    url = url.format(closed=_closed_port())
    assert _redis_refusal(capsys, url) == f"htttx-server: error: --redis {url}: {said}"


def test_a_redis_database_out_of_range_is_said_so(
    capsys: pytest.CaptureFixture[str], redis_server: RedisServer
) -> None:
    url = redis_server.url.rsplit("/", 1)[0] + "/99"
    assert _redis_refusal(capsys, url).endswith(
        "has no database 99; its databases are numbered from 0 to its 'databases' setting "
        "less 1 (16 by default)"
    )


def test_a_redis_password_left_out_or_wrong_is_said_so(
    capsys: pytest.CaptureFixture[str], redis_with_password: RedisServer
) -> None:
    where = f"127.0.0.1:{redis_with_password.port}"
    assert _redis_refusal(capsys, f"redis://{where}/0").endswith(
        f": Redis at {where} wants a password; give it in the URL: "
        "redis://:PASSWORD@HOST:PORT/DB (redis://USER:PASSWORD@... for an ACL user)"
    )
    assert _redis_refusal(capsys, f"redis://:{SECRET}@{where}/0") == (
        f"htttx-server: error: --redis redis://:***@{where}/0: Redis at {where} refused the "
        "user or password; check them in the URL"
    )


def test_redis_with_its_password_is_connected(redis_with_password: RedisServer) -> None:
    """The good path of the refusals above."""

    async def ping() -> None:
        where = f"127.0.0.1:{redis_with_password.port}"
        client = await connect_redis(f"redis://:{PostgresCluster.PASSWORD}@{where}/0")
        await client.aclose()

    asyncio.run(ping())


# ------------------------------------------------------------- htttx-tournament


def test_htttx_tournament_says_the_same_of_its_db(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bots = ["--bot", "name=a,url=http://127.0.0.1:1", "--bot", "name=b,url=http://127.0.0.1:2"]
    url = f"postgresql://htttx:{SECRET}@/arena?host={tmp_path}/nowhere"
    assert _refusal(capsys, tournament_main, [*bots, "--db", url]) == (
        f"htttx-tournament: --db postgresql://htttx:***@/arena?host={tmp_path}/nowhere: "
        f"cannot connect to PostgreSQL at the socket {tmp_path}/nowhere/.s.PGSQL.5432: "
        "there is no such socket; is PostgreSQL running, and is that its socket?"
    )

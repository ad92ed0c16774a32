"""A throwaway PostgreSQL server for the tests: ``postgres_cluster`` (session scope).

initdb into a temporary directory, unix socket only, as the ``postgres`` user when
running as root; ``new_database`` gives each test a fresh database in it. Without
PostgreSQL's server binaries the fixture skips, except under CI (``CI`` set), where
that is a failure: ``make test`` installs them. Registered for every test module by
``tests/conftest.py``.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.throwaway_server import ThrowawayServer, session_server


class PostgresCluster(ThrowawayServer):
    """A PostgreSQL server of our own: a data directory and a unix socket in one temp dir.

    Every user logs in without a password (trust), except ``PASSWORD_ROLE``, which must
    give ``PASSWORD``: a wrong one is refused as a real server refuses it.
    """

    PORT = 5432  # only names the socket file; the socket directory is private
    PASSWORD_ROLE = "htttx_with_password"
    PASSWORD = "correct horse"

    def __init__(self, bindir: Path) -> None:
        super().__init__(prefix="htttx-pg-")
        self.bindir = bindir
        self.data = self.root / "data"
        self.socket_dir = self.root / "socket"
        self._names = itertools.count()
        # The server refuses to run as root; the postgres user needs to own its files.
        self._as_server: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, user="postgres")
            self._as_server = ["runuser", "-u", "postgres", "--"]

    def _run(self, *command: str, as_server: bool = True) -> None:
        prefix = self._as_server if as_server else []
        subprocess.run([*prefix, *command], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self._run("mkdir", str(self.socket_dir))
        self._run(
            str(self.bindir / "initdb"),
            "--pgdata", str(self.data),
            "--username", "postgres",
            "--auth", "trust",
            "--encoding", "UTF8",
            "--locale", "C",
            "--no-sync",
        )  # fmt: skip
        # Read from the top, first match wins: the password role before everyone's trust.
        (self.data / "pg_hba.conf").write_text(
            f"local all {self.PASSWORD_ROLE} scram-sha-256\nlocal all all trust\n"
        )
        options = (
            f"-p {self.PORT} -k {self.socket_dir} -c listen_addresses='' "
            "-c fsync=off -c full_page_writes=off"
        )
        try:
            self._run(
                str(self.bindir / "pg_ctl"),
                "--pgdata", str(self.data),
                "--log", str(self.log),
                "--options", options,
                "--wait",
                "start",
            )  # fmt: skip
        except subprocess.CalledProcessError as exc:
            log = self.log_text()
            raise RuntimeError(f"PostgreSQL did not start: {exc.stderr!r}\n{log}") from exc
        self.sql("postgres", f"CREATE ROLE {self.PASSWORD_ROLE} LOGIN PASSWORD '{self.PASSWORD}'")

    def _shut_down(self) -> None:
        if self.data.exists():
            self._run(
                str(self.bindir / "pg_ctl"), "--pgdata", str(self.data),
                "--mode", "immediate", "stop",
            )  # fmt: skip

    def new_database(self, owner: str = "postgres") -> str:
        """Create an empty database owned by ``owner`` and return its SQLAlchemy URL
        (as the ``postgres`` superuser)."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        self._run(
            str(self.bindir / "createdb"),
            "--host", str(self.socket_dir),
            "--port", str(self.PORT),
            "--username", "postgres",
            "--owner", owner,
            name,
            as_server=False,
        )  # fmt: skip
        return self.url(name)

    def sql(self, database: str, command: str) -> None:
        """Run ``command`` in ``database`` as the ``postgres`` superuser."""
        self._run(
            str(self.bindir / "psql"),
            "--host", str(self.socket_dir),
            "--port", str(self.PORT),
            "--username", "postgres",
            "--dbname", database,
            "--set", "ON_ERROR_STOP=1",
            "--command", command,
            as_server=False,
        )  # fmt: skip

    def url(self, database: str, user: str = "postgres", password: str | None = None) -> str:
        """The SQLAlchemy URL of ``database`` on this server, as ``user``."""
        login = user if password is None else f"{user}:{password}"
        return f"postgresql+asyncpg://{login}@/{database}?host={self.socket_dir}&port={self.PORT}"


def _postgres_bindir() -> Path | None:
    """Where initdb and pg_ctl are: $PG_BINDIR, Debian's versioned dirs, or the PATH."""
    if configured := os.environ.get("PG_BINDIR"):
        return Path(configured)
    debian = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda path: int(path.parent.parent.name) if path.parent.parent.name.isdigit() else 0,
    )
    if debian:
        return debian[-1].parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    yield from session_server(
        _postgres_bindir,
        "PostgreSQL server binaries not found (install them with `make test`)",
        PostgresCluster,
    )

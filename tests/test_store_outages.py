"""``game.store.outages.is_outage`` on the errors real databases raise: SQLite files and
the suite's PostgreSQL server (tests/postgres.py), through SQLAlchemy as the store
reaches them (pysqlite; asyncpg)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from game.store.outages import is_outage
from tests.postgres import PostgresCluster
from tests.test_cluster import _free_port

TABLE = "CREATE TABLE seats (id INTEGER PRIMARY KEY, name VARCHAR(4))"


def sqlite_error(tmp_path: Path, *statements: str) -> BaseException:
    """What the last of ``statements`` raises on a new SQLite file (the others go through)."""
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'errors.sqlite'}")
    try:
        with engine.begin() as conn:
            for statement in statements[:-1]:
                conn.execute(text(statement))
            with pytest.raises(DBAPIError) as raised:
                conn.execute(text(statements[-1]))
        return raised.value
    finally:
        engine.dispose()


def test_a_sqlite_constraint_violation_is_no_outage(tmp_path: Path) -> None:
    insert = "INSERT INTO seats VALUES (1, 'x')"
    error = sqlite_error(tmp_path, TABLE, insert, insert)
    assert isinstance(error, IntegrityError) and not is_outage(error)


def test_a_sqlite_statement_naming_no_table_is_no_outage(tmp_path: Path) -> None:
    # sqlite3 raises OperationalError for it, as for a locked file: the code tells.
    error = sqlite_error(tmp_path, "SELECT * FROM nowhere")
    assert isinstance(error, OperationalError) and not is_outage(error)


def test_a_sqlite_file_locked_by_another_writer_is_an_outage(tmp_path: Path) -> None:
    path = tmp_path / "locked.sqlite"
    holder = sqlalchemy.create_engine(f"sqlite:///{path}")
    waiter = sqlalchemy.create_engine(f"sqlite:///{path}", connect_args={"timeout": 0})
    try:
        with holder.connect() as holding:
            holding.exec_driver_sql("BEGIN IMMEDIATE")
            with waiter.connect() as waiting, pytest.raises(OperationalError) as raised:
                waiting.exec_driver_sql("BEGIN IMMEDIATE")
            holding.exec_driver_sql("ROLLBACK")
    finally:
        holder.dispose()
        waiter.dispose()
    assert "locked" in str(raised.value) and is_outage(raised.value)


@pytest.fixture
async def postgres(postgres_cluster: PostgresCluster) -> AsyncIterator[AsyncEngine]:
    """An engine on a new database of the suite's PostgreSQL, with TABLE in it."""
    engine = create_async_engine(postgres_cluster.new_database())
    async with engine.begin() as conn:
        await conn.execute(text(TABLE))
    try:
        yield engine
    finally:
        await engine.dispose()


async def postgres_error(engine: AsyncEngine, *statements: str) -> BaseException:
    """What the last of ``statements`` raises (the others go through)."""
    async with engine.connect() as conn:
        for statement in statements[:-1]:
            await conn.execute(text(statement))
        with pytest.raises(DBAPIError) as raised:
            await conn.execute(text(statements[-1]))
    return raised.value


async def test_a_postgresql_constraint_violation_is_no_outage(postgres: AsyncEngine) -> None:
    insert = "INSERT INTO seats VALUES (1, 'x')"
    error = await postgres_error(postgres, insert, insert)
    assert isinstance(error, IntegrityError) and not is_outage(error)


async def test_a_postgresql_value_too_long_is_no_outage(postgres: AsyncEngine) -> None:
    # asyncpg's DataError comes as the DB-API base class, as an outage does: SQLSTATE
    # 22001 tells them apart.
    error = await postgres_error(postgres, "INSERT INTO seats VALUES (1, 'longer')")
    assert type(error) is DBAPIError and not is_outage(error)


async def test_a_postgresql_statement_naming_no_table_is_no_outage(postgres: AsyncEngine) -> None:
    error = await postgres_error(postgres, "SELECT * FROM nowhere")
    assert isinstance(error, ProgrammingError) and not is_outage(error)


async def test_a_postgresql_connection_the_server_terminated_is_an_outage(
    postgres: AsyncEngine,
) -> None:
    async with postgres.connect() as victim, postgres.connect() as admin:
        pid: int = (await victim.execute(text("SELECT pg_backend_pid()"))).scalar_one()
        # Returns once the backend is gone (up to 30 s), not once it is told to go.
        await admin.execute(text("SELECT pg_terminate_backend(:pid, 30000)"), {"pid": pid})
        with pytest.raises(DBAPIError) as raised:
            await victim.execute(text("SELECT 1"))
    assert is_outage(raised.value)


async def test_a_postgresql_server_refusing_connections_is_an_outage() -> None:
    engine = create_async_engine(f"postgresql+asyncpg://postgres@127.0.0.1:{_free_port()}/none")
    try:
        with pytest.raises(OSError) as raised:
            async with asyncio.timeout(30), engine.connect():
                pass
    finally:
        await engine.dispose()
    assert is_outage(raised.value)

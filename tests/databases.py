"""The store's fixtures, for every test module (imported by ``tests/conftest.py``).

``db_url`` is an empty database, once a SQLite file in ``tmp_path`` and once a new
database on the suite's PostgreSQL server (``tests.postgres``): a test that takes it runs
against both. ``store`` is a ``GameStore`` opened on it and closed after the test. A
module may define its own fixture of the same name (one database only, say).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from game.store import GameStore
from tests.postgres import PostgresCluster

__all__ = ["db_url", "store"]


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL to an empty database: a SQLite file in tmp_path, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'data' / 'htttx.sqlite'}"
    cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
    return cluster.new_database()


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[GameStore]:
    """A ``GameStore`` on ``db_url``, closed after the test."""
    async with await GameStore.open(db_url) as opened:
        yield opened

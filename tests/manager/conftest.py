"""The game manager's fixtures: a SQLite file store, the manager's HTTP client, a manager
on them (short no-show limit, fast pings) and a bot server with the example bots.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.bots import RandomBot, ThreatBot
from bot.serve import create_app, serving
from game.discovery import DEFAULT_POLICY
from game.manager import GameManager
from game.store import GameStore
from tests.manager.harness import (
    LIMITS,
    StatelessBot,
)


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """The SQLite file of ``store`` (a test may open it itself, as another process would)."""
    return tmp_path / "games.sqlite"


@pytest.fixture
async def store(store_path: Path) -> AsyncIterator[GameStore]:
    async with await GameStore.open(f"sqlite+aiosqlite:///{store_path}") as s:
        yield s


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(connector=DEFAULT_POLICY.connector()) as session:
        yield session


@pytest.fixture
async def manager(store: GameStore, http: aiohttp.ClientSession) -> AsyncIterator[GameManager]:
    games = GameManager(store, http, limits=LIMITS, ping_interval=0.2)
    yield games
    await games.shutdown()


@pytest.fixture
async def bots() -> AsyncIterator[str]:
    """The example bots and a stateless-only bot on one server: ``<url>/threat`` ..."""
    app = create_app({"/threat": ThreatBot, "/random": RandomBot, "/stateless": StatelessBot})
    async with serving(app) as server:
        yield server.url

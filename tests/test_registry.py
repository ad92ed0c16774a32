"""BotRegistry: registering, owning, checking bots; people's names; the ladder's view.

Bots are real servers on 127.0.0.1 (``bot.serve`` hosting ThreatBot, or a small
aiohttp app whose capabilities can be switched off), the store a SQLite file (its
tables are tested on PostgreSQL too in tests/test_arena_store.py).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from bot.bots import ThreatBot
from bot.serve import create_app, serving
from game.arena_errors import (
    BotRetired,
    InvalidPlayerName,
    NameTaken,
    ServerOwnedBot,
    UnknownBot,
    WrongToken,
)
from game.discovery import (
    DEFAULT_POLICY,
    AddressPolicy,
    BadBotUrl,
    BotUnreachable,
    ForbiddenAddress,
)
from game.registry import BotRegistry, hash_token
from game.store import GameStore
from game.store.ratings import SideOutcome
from models import BotRegistration, BotUpdate
from tests.loopback_app import serving_app

T0 = datetime(2026, 11, 24, 20, 0, tzinfo=UTC)
TIMEOUT = 30.0


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[GameStore]:
    async with await GameStore.open(f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}") as s:
        yield s


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(connector=DEFAULT_POLICY.connector()) as session:
        yield session


@pytest.fixture
async def registry(store: GameStore, http: aiohttp.ClientSession) -> AsyncIterator[BotRegistry]:
    bots = BotRegistry(store, http, discovery_timeout=5.0)
    yield bots
    await bots.close()


@pytest.fixture
async def threat() -> AsyncIterator[str]:
    async with serving(create_app({"/threat": ThreatBot})) as server:
        yield f"{server.url}/threat"


class SwitchableBot:
    """A bot whose capabilities document can be switched off (503) and on again."""

    def __init__(self) -> None:
        self.up = True

    async def capabilities(self, request: web.Request) -> web.Response:
        if not self.up:
            return web.Response(status=503, text="down for maintenance")
        return web.json_response(
            {
                "meta": {"name": "Switch", "version": "2"},
                "basic_websocket": {"versions": {"v1-alpha": {}}},
            }
        )


@pytest.fixture
async def switchable() -> AsyncIterator[tuple[SwitchableBot, str]]:
    bot = SwitchableBot()
    app = web.Application()
    app.add_routes([web.get("/capabilities.json", bot.capabilities)])
    async with serving_app(app) as url:
        yield bot, url


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# ----------------------------------------------------------------- registering


async def test_a_registered_bot_is_checked_and_its_token_shown_once(
    registry: BotRegistry, store: GameStore, threat: str
) -> None:
    registered = await registry.register(
        BotRegistration(name="Hexa", url=threat, description="threats")
    )
    assert (registered.name, registered.url, registered.status) == ("Hexa", threat, "active")
    assert registered.owner == "token" and registered.ladder
    assert registered.meta is not None and registered.meta.name == "ThreatBot"
    assert (registered.rating, registered.uncertainty, registered.provisional) == (1500, 1000, True)
    token = registered.owner_token
    player = await store.arena.player("hexa")
    assert player is not None and player.token_hash == hash_token(token) != token
    seen = await registry.get("HEXA")
    assert seen is not None and seen.name == "Hexa"
    assert not hasattr(seen, "owner_token")
    assert [bot.name for bot in await registry.registered()] == ["Hexa"]
    assert await registry.kind_of("hexa") == "bot"


async def test_a_name_is_one_players_whatever_the_case(registry: BotRegistry, threat: str) -> None:
    await registry.register(BotRegistration(name="Hexa", url=threat))
    with pytest.raises(NameTaken, match="taken"):
        await registry.register(BotRegistration(name="HEXA", url=threat))
    with pytest.raises(NameTaken, match="bot's name"):
        await registry.claim_person("hexa", None)
    await registry.claim_person("Alice", None)
    with pytest.raises(NameTaken):
        await registry.register(BotRegistration(name="alice", url=threat))


async def test_urls_that_cannot_be_played_are_refused_with_the_reason(
    registry: BotRegistry, store: GameStore, http: aiohttp.ClientSession, threat: str
) -> None:
    with pytest.raises(BadBotUrl):
        await registry.register(BotRegistration(name="A", url="ftp://example.com/bot"))
    with pytest.raises(BotUnreachable, match=r"127\.0\.0\.1"):
        await registry.register(BotRegistration(name="B", url=f"http://127.0.0.1:{free_port()}"))
    strict = BotRegistry(store, http, policy=AddressPolicy.parse("allow=public"))
    with pytest.raises(ForbiddenAddress, match="policy"):
        await strict.register(BotRegistration(name="C", url=threat))
    assert await registry.registered() == []
    assert await registry.kind_of("A") is None  # a refused bot claims no name


# -------------------------------------------------------------------- owning


async def test_the_owner_changes_and_retires_a_bot_with_its_token(
    registry: BotRegistry, threat: str, switchable: tuple[SwitchableBot, str]
) -> None:
    token = (await registry.register(BotRegistration(name="Hexa", url=threat))).owner_token
    with pytest.raises(WrongToken):
        await registry.update("Hexa", "not-the-token", BotUpdate(ladder=False))
    with pytest.raises(WrongToken):
        await registry.update("Hexa", None, BotUpdate(ladder=False))
    with pytest.raises(UnknownBot):
        await registry.update("Nobody", token, BotUpdate(ladder=False))
    changed = await registry.update("hexa", token, BotUpdate(ladder=False, description="new"))
    assert (changed.ladder, changed.description, changed.url) == (False, "new", threat)
    _, other_url = switchable
    moved = await registry.update("Hexa", token, BotUpdate(url=other_url))
    assert moved.url == other_url and moved.meta is not None and moved.meta.name == "Switch"
    with pytest.raises(BotUnreachable):
        await registry.update("Hexa", token, BotUpdate(url=f"http://127.0.0.1:{free_port()}"))
    kept = await registry.get("Hexa")
    assert kept is not None and kept.url == other_url  # a refused URL changes nothing

    retired = await registry.retire("Hexa", token)
    assert retired.status == "retired" and retired.retired_at is not None
    assert (await registry.retire("Hexa", token)).retired_at == retired.retired_at
    with pytest.raises(BotRetired):
        await registry.update("Hexa", token, BotUpdate(ladder=True))
    with pytest.raises(NameTaken):  # the name stays the retired bot's
        await registry.register(BotRegistration(name="hexa", url=threat))
    assert await registry.ladder_entrants() == []
    assert [bot.status for bot in await registry.registered()] == ["retired"]


async def test_the_servers_own_bots_have_no_owner_token(registry: BotRegistry, threat: str) -> None:
    own = await registry.register_server_bot("ThreatBot", threat)
    assert own.owner == "server" and own.status == "active"
    with pytest.raises(ServerOwnedBot):
        await registry.retire("ThreatBot", "anything")
    again = await registry.register_server_bot("threatbot", threat, ladder=False)
    assert (again.name, again.ladder) == ("ThreatBot", False)
    unreachable = await registry.register_server_bot("Later", f"http://127.0.0.1:{free_port()}")
    assert unreachable.status == "unreachable" and unreachable.check_error
    await registry.register(BotRegistration(name="Theirs", url=threat))
    with pytest.raises(NameTaken):
        await registry.register_server_bot("theirs", threat)


# ------------------------------------------------------------------- checking


async def test_a_bot_that_stops_answering_is_unreachable_until_it_is_back(
    registry: BotRegistry, switchable: tuple[SwitchableBot, str]
) -> None:
    bot, url = switchable
    await registry.register(BotRegistration(name="Switch", url=url))
    assert [e.name for e in await registry.ladder_entrants()] == ["Switch"]
    bot.up = False
    assert await registry.recheck_all() == 0
    down = await registry.get("Switch")
    assert down is not None and down.status == "unreachable"
    assert down.check_error is not None and "503" in down.check_error
    assert await registry.ladder_entrants() == []
    bot.up = True
    assert await registry.recheck_all() == 1
    up = await registry.check("switch")
    assert up.status == "active" and up.check_error is None
    assert [e.name for e in await registry.ladder_entrants()] == ["Switch"]


async def test_rechecks_run_every_interval_until_closed(
    registry: BotRegistry, switchable: tuple[SwitchableBot, str]
) -> None:
    bot, url = switchable
    await registry.register(BotRegistration(name="Switch", url=url))
    bot.up = False
    registry.start_rechecks(0.05)
    async with asyncio.timeout(TIMEOUT):
        while (seen := await registry.get("Switch")) is not None and seen.status == "active":
            await asyncio.sleep(0.02)
    await registry.close()
    with pytest.raises(ValueError, match="more than 0"):
        registry.start_rechecks(0)


# --------------------------------------------------------------------- ladder


async def test_one_games_results_are_recorded_together(registry: BotRegistry, threat: str) -> None:
    for name in ("Hexa", "Tri", "Quad"):
        await registry.register(BotRegistration(name=name, url=threat))
    await registry.record_ladder_result("Tri", "no_show", None, T0)  # backed off
    later = T0 + timedelta(minutes=1)
    await registry.record_ladder_results(
        {"Hexa": ("timeout", "x: out of time"), "tri": None}, later
    )
    entrants = {e.name: e for e in await registry.ladder_entrants()}
    assert entrants["Hexa"].backoff_reason == "timeout: x: out of time"
    assert entrants["Hexa"].failures_in_row == 1
    assert (entrants["Tri"].backoff_until, entrants["Tri"].failures_in_row) == (None, 0)
    assert entrants["Tri"].last_game_at == later
    assert entrants["Quad"].last_game_at is None  # not in that game
    with pytest.raises(UnknownBot):
        await registry.record_ladder_results({"Quad": None, "Nobody": None}, later)
    quad = {e.name: e for e in await registry.ladder_entrants()}["Quad"]
    assert quad.last_game_at == later  # the known one is recorded all the same


async def test_failing_ladder_games_back_a_bot_off_exponentially(
    registry: BotRegistry, store: GameStore, threat: str
) -> None:
    await registry.register(BotRegistration(name="Hexa", url=threat))
    await registry.register(BotRegistration(name="Quiet", url=threat, ladder=False))
    [entrant] = await registry.ladder_entrants()
    assert (entrant.name, entrant.url, entrant.games, entrant.backoff_until) == (
        "Hexa",
        threat,
        0,
        None,
    )
    await registry.record_ladder_result("Hexa", "no_show", "nobody home", T0)
    [entrant] = await registry.ladder_entrants()
    assert entrant.backoff_until == T0 + timedelta(seconds=30)
    assert entrant.backoff_reason == "no_show: nobody home" and entrant.failures_in_row == 1
    later = T0 + timedelta(minutes=5)
    await registry.record_ladder_result("hexa", "timeout", None, later)
    [entrant] = await registry.ladder_entrants()
    assert (entrant.backoff_until, entrant.backoff_reason) == (
        later + timedelta(seconds=60),
        "timeout",
    )
    shown = await registry.get("Hexa")
    assert shown is not None and shown.backoff_reason == "timeout" and shown.failures_in_row == 2
    await registry.record_ladder_result("Hexa", None, None, later)
    [entrant] = await registry.ladder_entrants()
    assert (entrant.backoff_until, entrant.failures_in_row, entrant.last_game_at) == (
        None,
        0,
        later,
    )
    with pytest.raises(UnknownBot):
        await registry.record_ladder_result("Nobody", None, None, later)

    # Ratings and records come from the rated games.
    assert await store.ratings.track("g", ("hexa", "Hexa"), ("quiet", "Quiet"), T0)
    hexa = SideOutcome("hexa", "Hexa", "bot", 1.0)
    quiet = SideOutcome("quiet", "Quiet", "bot", 0.0, failure="timeout")
    assert await store.ratings.settle("g", hexa, quiet, T0) is not None
    [entrant] = await registry.ladder_entrants()
    assert entrant.games == 1 and entrant.rating.mu > 1500
    quiet_view = await registry.get("Quiet")
    assert quiet_view is not None
    assert (quiet_view.losses, quiet_view.failures, quiet_view.games) == (1, {"timeout": 1}, 1)


# --------------------------------------------------------------------- people


async def test_a_person_claims_a_name_and_keeps_it_with_the_token(registry: BotRegistry) -> None:
    token = await registry.claim_person("Alice", None)
    assert token is not None and len(token) >= 40
    assert await registry.claim_person("ALICE", token) is None
    with pytest.raises(NameTaken, match="player token"):
        await registry.claim_person("alice", None)
    with pytest.raises(WrongToken):
        await registry.claim_person("alice", "guess")
    assert await registry.kind_of("Alice") == "human"
    second = await registry.claim_person("Bob", "a token for another name is ignored")
    assert second is not None and second != token
    for bad in ("", " Alice", "x" * 65, "bad\x00name"):
        with pytest.raises(InvalidPlayerName):
            await registry.claim_person(bad, None)
    # Its reason in the wire contract's words, not pydantic's ("String should have ...").
    with pytest.raises(InvalidPlayerName, match=r"expected at most 64 characters, got 65$"):
        await registry.claim_person("x" * 65, None)

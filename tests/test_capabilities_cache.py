"""Capabilities reused while fresh (``game.capabilities_cache``): the freshness a
response's headers allow, the cache itself, ``discover`` with it against servers on
127.0.0.1, the ``Cache-Control`` that ``bot.serve`` sends, and a game manager that
fetches a bot's capabilities once for back-to-back games and again once the bot cannot
be dialled, or a stateless bot's turn cannot be posted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from bot.bots import CenterBot
from bot.serve import MAX_CAPABILITIES_MAX_AGE, bot_routes, create_app, serving
from bot.serve_cli import main
from game.capabilities_cache import MAX_FRESH_S, CapabilitiesCache, freshness_s
from game.discovery import DEFAULT_POLICY, BotEndpoint, BotUnreachable, discover
from game.manager import GameManager
from game.store import GameStore
from models import NewGameRequest, PlayerConfig, PlayerType
from tests.loopback_app import serving_app

TIMEOUT = 30.0  # only against hangs


# ------------------------------------------------------------------ freshness_s


@pytest.mark.parametrize(
    ("cache_control", "age", "seconds"),
    [
        ("max-age=5", None, 5.0),
        ("MAX-AGE=5", None, 5.0),  # directive names are case-insensitive
        ('max-age="7"', None, 7.0),  # quoted: not to be sent, but to be read
        ("private, max-age=10", None, 10.0),  # this cache is a private one
        ("public,max-age=60", "20", 40.0),  # what a cache on the way held it for
        ("max-age=10", "30", 0.0),
        ("max-age=10", "soon", 10.0),  # an unreadable Age adds nothing
        ("no-store, max-age=5", None, 0.0),
        ("max-age=5, no-cache", None, 0.0),  # no revalidation here: fetched again
        ("s-maxage=5", None, 0.0),  # for shared caches only
        (None, None, 0.0),  # no heuristic freshness: a silent bot is fetched every time
        ("", None, 0.0),
        ("max-age=", None, 0.0),
        ("max-age=-1", None, 0.0),
        ("max-age=1e3", None, 0.0),
        ("max-age=99999999999", None, 0.0),  # 11 digits: refused before int()
    ],
)
def test_the_freshness_a_response_allows(
    cache_control: str | None, age: str | None, seconds: float
) -> None:
    assert freshness_s(cache_control, age) == seconds


# ---------------------------------------------------------------- the cache


def test_an_entry_lives_for_its_freshness_capped_and_then_is_gone() -> None:
    cache: CapabilitiesCache[str] = CapabilitiesCache(max_fresh_s=60.0)
    cache.keep("a", "A", fresh_s=10.0, now=0.0)
    cache.keep("b", "B", fresh_s=10_000.0, now=0.0)  # capped at 60 s
    assert cache.get("a", now=9.9) == "A" and cache.get("a", now=10.0) is None
    assert cache.get("b", now=59.9) == "B" and cache.get("b", now=60.0) is None
    assert len(cache) == 0  # expired entries are dropped when read


def test_the_least_recently_used_entry_goes_first_when_full() -> None:
    cache: CapabilitiesCache[str] = CapabilitiesCache(max_entries=2)
    cache.keep("a", "A", fresh_s=10.0, now=0.0)
    cache.keep("b", "B", fresh_s=10.0, now=0.0)
    assert cache.get("a", now=1.0) == "A"  # a is now the most recently used
    cache.keep("c", "C", fresh_s=10.0, now=1.0)
    assert (cache.get("a", 2.0), cache.get("b", 2.0), cache.get("c", 2.0)) == ("A", None, "C")


def test_a_response_that_may_not_be_reused_or_a_forget_drops_the_entry() -> None:
    cache: CapabilitiesCache[str] = CapabilitiesCache()
    cache.keep("a", "A", fresh_s=10.0, now=0.0)
    cache.keep("a", "A2", fresh_s=0.0, now=1.0)
    assert cache.get("a", now=1.0) is None
    cache.keep("a", "A3", fresh_s=10.0, now=1.0)
    cache.forget("a")
    cache.forget("never kept")
    assert cache.get("a", now=1.0) is None
    with pytest.raises(ValueError, match="max_entries must be at least 1"):
        CapabilitiesCache(max_entries=0)
    assert CapabilitiesCache().max_fresh_s == MAX_FRESH_S


# --------------------------------------------------- discover, over real sockets

_DOCUMENT = {"meta": {"name": "Counted"}, "basic_websocket": {"versions": {"v1-alpha": {}}}}


@dataclass
class CountedBot:
    """A capabilities document on 127.0.0.1 that counts its fetches and answers with
    ``cache_control`` (None: no such header)."""

    url: str = ""
    fetches: int = 0
    cache_control: str | None = None
    age: str | None = None


@asynccontextmanager
async def counted_bot(
    cache_control: str | None, document: dict[str, object] = _DOCUMENT
) -> AsyncIterator[CountedBot]:
    bot = CountedBot(cache_control=cache_control)

    async def capabilities(request: web.Request) -> web.Response:
        bot.fetches += 1
        headers = {}
        if bot.cache_control is not None:
            headers["Cache-Control"] = bot.cache_control
        if bot.age is not None:
            headers["Age"] = bot.age
        return web.json_response(document, headers=headers)

    app = web.Application()
    app.router.add_get("/capabilities.json", capabilities)
    async with serving_app(app) as url:
        bot.url = url
        yield bot


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(connector=DEFAULT_POLICY.connector()) as session:
        yield session


async def test_discover_reuses_what_a_fresh_response_allows(
    http: aiohttp.ClientSession,
) -> None:
    cache: CapabilitiesCache[BotEndpoint] = CapabilitiesCache()
    async with counted_bot("max-age=60") as bot:
        first = await discover(bot.url, http, cache=cache)
        second = await discover(bot.url, http, cache=cache)
        assert bot.fetches == 1 and second is first
        await discover(bot.url, http)  # no cache: fetched, as before
        assert bot.fetches == 2


@pytest.mark.parametrize(
    ("cache_control", "age"), [(None, None), ("no-store", None), ("max-age=30", "30")]
)
async def test_discover_fetches_again_what_its_response_does_not_let_it_keep(
    http: aiohttp.ClientSession, cache_control: str | None, age: str | None
) -> None:
    cache: CapabilitiesCache[BotEndpoint] = CapabilitiesCache()
    async with counted_bot(cache_control) as bot:
        bot.age = age
        await discover(bot.url, http, cache=cache)
        await discover(bot.url, http, cache=cache)
        assert bot.fetches == 2 and len(cache) == 0


async def test_a_failed_fetch_is_not_kept(http: aiohttp.ClientSession) -> None:
    cache: CapabilitiesCache[BotEndpoint] = CapabilitiesCache()
    async with counted_bot("max-age=60") as bot:
        url = bot.url
    with pytest.raises(BotUnreachable):  # the server is gone
        await discover(url, http, cache=cache)
    assert len(cache) == 0


# ----------------------------------------------------- what bot.serve sends


async def _cache_control_of(app_url: str) -> str | None:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{app_url}/capabilities.json") as response,
    ):
        assert response.status == 200
        return response.headers.get("Cache-Control")


async def test_a_bot_server_lets_its_capabilities_be_reused_for_five_seconds_by_default() -> None:
    async with serving(create_app(CenterBot)) as server:
        assert await _cache_control_of(server.url) == "max-age=5"
    async with serving(create_app({"/center": CenterBot}, capabilities_max_age=0)) as server:
        assert await _cache_control_of(f"{server.url}/center") == "no-cache"


def test_a_capabilities_max_age_out_of_range_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(ValueError, match="capabilities_max_age must be from 0 to"):
        bot_routes(CenterBot, pool=None, capabilities_max_age=-1)  # type: ignore[arg-type]
    for value in ("-1", str(MAX_CAPABILITIES_MAX_AGE + 1)):
        assert main(["--capabilities-max-age", value]) == 2
        assert "--capabilities-max-age must be from 0 to 86400 seconds" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: not an integer
        main(["--capabilities-max-age", "soon"])


# ------------------------------------------------------------ the game manager


def _self_play(url: str) -> NewGameRequest:
    seat = PlayerConfig(type=PlayerType.BOT, bot_url=url)
    return NewGameRequest(player_x=seat, player_o=seat)


@asynccontextmanager
async def counting_manager(tmp_path: Path) -> AsyncIterator[tuple[GameManager, list[str]]]:
    """A game manager whose HTTP client notes every capabilities document it fetches."""
    fetched: list[str] = []

    async def on_request_start(
        session: aiohttp.ClientSession, context: object, params: aiohttp.TraceRequestStartParams
    ) -> None:
        if params.url.path.endswith("/capabilities.json"):
            fetched.append(str(params.url))

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_request_start)
    async with (
        await GameStore.open(f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}") as store,
        aiohttp.ClientSession(connector=DEFAULT_POLICY.connector(), trace_configs=[trace]) as http,
    ):
        games = GameManager(store, http)
        try:
            yield games, fetched
        finally:
            await games.shutdown()


async def test_back_to_back_games_of_a_bot_fetch_its_capabilities_once(tmp_path: Path) -> None:
    async with (
        counting_manager(tmp_path) as (games, fetched),
        serving(create_app(CenterBot)) as server,
    ):
        results = []
        for _ in range(3):
            created = await games.create_game(_self_play(server.url))
            async with asyncio.timeout(TIMEOUT):
                results.append(await games.end_of(created.game_id))
    assert len(fetched) == 1  # CenterBot's server says max-age=5
    assert all(result is not None and result.reason is not None for result in results)


async def test_a_bot_that_cannot_be_dialled_has_its_capabilities_fetched_again(
    tmp_path: Path,
) -> None:
    async with counting_manager(tmp_path) as (games, fetched), counted_bot("max-age=60") as bot:
        # Its document names a socket that nothing serves: every dial fails.
        await games.create_game(_self_play(bot.url))
        async with asyncio.timeout(TIMEOUT):
            while games.capabilities.get(bot.url, now=0.0) is not None:
                await asyncio.sleep(0.01)  # dropped at the first failed dial
        await games.create_game(_self_play(bot.url))
    assert len(fetched) == bot.fetches == 2


async def test_a_stateless_bot_whose_turn_fails_has_its_capabilities_fetched_again(
    tmp_path: Path,
) -> None:
    stateless = {"meta": {"name": "Counted"}, "stateless": {"versions": {"v1-alpha": {}}}}
    async with (
        counting_manager(tmp_path) as (games, fetched),
        counted_bot("max-age=60", stateless) as bot,
    ):
        # Its document names a turn route that nothing serves: every turn is a 404.
        created = await games.create_game(_self_play(bot.url))
        async with asyncio.timeout(TIMEOUT):
            await games.end_of(created.game_id)
        await games.create_game(_self_play(bot.url))
    assert len(fetched) == bot.fetches == 2

"""The ladder's scheduler (game.ladder.Ladder) on a real GameManager, RatingBook and
BotRegistry over a SQLite file, with real bot servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.bots import CenterBot, RandomBot, ThreatBot
from bot.serve import create_app, serving
from game.discovery import DEFAULT_POLICY
from game.ladder import Ladder, LadderSettings
from game.manager import GameManager
from game.rating_book import RatingBook
from game.registry import BotRegistry
from game.session import SessionLimits
from game.store import GameStore
from models import BotRegistration, GameRecord, NewGameRequest
from tests.manager.harness import scripted_bot

TIMEOUT = 60.0
FAST = LadderSettings(concurrency=2, rate=6000, time_control="none", seed=3)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[GameStore]:
    async with await GameStore.open(f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}") as s:
        yield s


@pytest.fixture
async def parts(store: GameStore) -> AsyncIterator[tuple[GameManager, RatingBook, BotRegistry]]:
    async with aiohttp.ClientSession(connector=DEFAULT_POLICY.connector()) as http:
        manager = GameManager(store, http, limits=SessionLimits(no_show_s=2.0))
        book = RatingBook(store, running=manager.awaits_end_hooks)
        manager.add_end_hook(book.on_game_end, wants=book.tracks)
        registry = BotRegistry(store, http)
        yield manager, book, registry
        await manager.shutdown()
        await registry.close()


@pytest.fixture
async def bots() -> AsyncIterator[dict[str, str]]:
    table = {"/threat": ThreatBot, "/center": CenterBot, "/random": RandomBot}
    async with serving(create_app(table)) as server:
        yield {name: f"{server.url}/{name}" for name in ("threat", "center", "random")}


async def until(done: Callable[[], Any]) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not await done():
            await asyncio.sleep(0.05)


async def register(registry: BotRegistry, urls: dict[str, str]) -> None:
    for name, url in urls.items():
        await registry.register(BotRegistration(name=name, url=url))


async def test_it_plays_rated_games_between_every_entrant(
    parts: tuple[GameManager, RatingBook, BotRegistry], bots: dict[str, str]
) -> None:
    manager, book, registry = parts
    await register(registry, bots)
    ladder = Ladder(manager, registry, book, FAST)
    ladder.start()
    seen_in_flight = 0

    async def enough() -> bool:
        nonlocal seen_in_flight
        seen_in_flight = max(seen_in_flight, len(ladder.live))
        return ladder.games_finished >= 12

    await until(enough)
    await ladder.shutdown()
    assert not ladder.running and ladder.live == {}
    assert seen_in_flight <= FAST.concurrency
    rows = {name: await book.row_of(name) for name in bots}
    assert all(row is not None and row.games > 0 for row in rows.values())
    # Every finished game was rated (the void ones, cut by the shutdown, were not).
    rated = sum(row.games for row in rows.values() if row is not None) // 2
    assert rated == ladder.games_finished
    for entrant in await registry.ladder_entrants():
        assert entrant.last_game_at is not None and entrant.backoff_until is None
    # Sides stay balanced: with 3 bots, nobody has had X more than twice as O, or back.
    assert max(abs(lean) for lean in ladder._sides.values()) <= 2
    status = await ladder.status()
    assert status.games_started == ladder.games_finished + ladder.games_void


async def test_a_bot_that_drops_its_games_is_backed_off_and_others_play_on(
    parts: tuple[GameManager, RatingBook, BotRegistry], bots: dict[str, str]
) -> None:
    manager, book, registry = parts

    async def hang_up(websocket: Any, packet: Any) -> bool:
        return False  # closes its socket at the first move_request

    async with scripted_bot(hang_up) as dropper:
        await register(registry, {**bots, "dropper": dropper})
        ladder = Ladder(manager, registry, book, FAST)
        ladder.start()

        async def backed_off() -> bool:
            bot = await registry.get("dropper")
            return bot is not None and bot.backoff_until is not None

        await until(backed_off)
        dropped = await registry.get("dropper")
        assert dropped is not None and dropped.backoff_reason is not None
        assert dropped.backoff_reason.startswith(("disconnect", "protocol_error"))
        assert dropped.failures_in_row >= 1
        status = await ladder.status()
        assert [b.name for b in status.backoffs] == ["dropper"]
        assert status.backoffs[0].reason == dropped.backoff_reason
        # Backed off (30 s at first): the others' games go on without it.
        finished = ladder.games_finished
        in_games: set[str] = set()

        async def more() -> bool:
            for pair in ladder.live.values():
                in_games.update((pair.x, pair.o))
            return ladder.games_finished >= finished + 6

        await until(more)
        await ladder.shutdown()
        assert "dropper" not in in_games
        row = await book.row_of("dropper")
        assert row is not None and sum(row.failures.values()) >= 1


async def test_a_bot_that_is_gone_is_blamed_not_its_opponent(
    parts: tuple[GameManager, RatingBook, BotRegistry], bots: dict[str, str]
) -> None:
    manager, book, registry = parts
    await register(registry, bots)
    async with serving(create_app(RandomBot)) as doomed:
        await registry.register(BotRegistration(name="gone", url=doomed.url, ladder=True))
    ladder = Ladder(manager, registry, book, FAST)
    ladder.start()

    async def backed_off() -> bool:
        bot = await registry.get("gone")
        return bot is not None and bot.backoff_until is not None

    await until(backed_off)
    gone = await registry.get("gone")
    assert gone is not None and gone.backoff_reason is not None
    assert gone.backoff_reason.startswith("no_show")
    await until(lambda: _at_least(ladder, 3))
    await ladder.shutdown()
    assert ladder.failed_starts >= 1
    for name in bots:  # their games with it never started: nothing against them
        bot = await registry.get(name)
        assert bot is not None and bot.failures_in_row == 0


async def _at_least(ladder: Ladder, games: int) -> bool:
    return ladder.games_finished >= games


async def test_pick_opponent_for_a_person(
    parts: tuple[GameManager, RatingBook, BotRegistry], bots: dict[str, str]
) -> None:
    manager, book, registry = parts
    await register(registry, bots)
    ladder = Ladder(manager, registry, book, FAST)  # not started: nobody is busy
    picked = await ladder.pick_opponent_for(1500.0)
    assert picked is not None and picked.name in bots


async def test_a_game_declared_rated_just_after_its_end_hooks_ran_is_settled_all_the_same(
    parts: tuple[GameManager, RatingBook, BotRegistry], store: GameStore
) -> None:
    """A queued game (``game.cluster_work``) is declared rated once created: a quick
    game may end meanwhile, its end hooks not wanting it yet, while it still runs."""
    manager, book, _registry = parts
    hooks_ran, release = asyncio.Event(), asyncio.Event()

    async def hold(_record: GameRecord) -> None:  # after the ratings' hook
        hooks_ran.set()
        await release.wait()

    manager.add_end_hook(hold)
    people = {"type": "human"}
    created = await manager.create_game(
        NewGameRequest.model_validate({"player_x": people, "player_o": people})
    )
    game_id = created.game_id
    ended = manager.end_of(game_id)
    manager.abort_game(game_id, "stopped")
    async with asyncio.timeout(TIMEOUT):
        await hooks_ran.wait()
    assert manager.runs(game_id)  # still: its end is on its way
    await book.track(game_id, "alice", "bob")
    release.set()
    await ended
    assert await store.ratings.status(game_id) == "void"  # settled, not left pending

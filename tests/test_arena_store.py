"""The arena's tables (``store.arena``, ``store.ratings``) on SQLite and PostgreSQL.

Every test runs on both backends (a SQLite file, a fresh database of the session's
throwaway PostgreSQL server; see tests/postgres.py).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from game.ratings import Rating
from game.store import GameStore
from game.store.ratings import SideOutcome
from models import GameRecord, GameResult, Player, ResultReason

T0 = datetime(2026, 11, 24, 20, 0, tzinfo=UTC)


def bot_columns(url: str = "http://127.0.0.1:9001") -> dict[str, object]:
    return {
        "url": url,
        "ladder": True,
        "description": "a test bot",
        "status": "active",
        "checked_at": T0,
        "meta": {"name": "Hexa", "version": "1.0"},
        "registered_at": T0,
        "failures_in_row": 0,
    }


def side(name: str, score: float, **fields: object) -> SideOutcome:
    return SideOutcome(key=name.casefold(), name=name, kind="bot", score=score, **fields)  # type: ignore[arg-type]


# ------------------------------------------------------------------ players


async def test_one_namespace_of_names_whatever_the_case(store: GameStore) -> None:
    assert await store.arena.claim("hexa", "Hexa", "bot", "ab" * 32, T0, bot=bot_columns())
    assert not await store.arena.claim("hexa", "HEXA", "human", None, T0)
    player = await store.arena.player("hexa")
    assert player is not None
    assert (player.name, player.kind, player.token_hash) == ("Hexa", "bot", "ab" * 32)
    assert await store.arena.claim("alice", "Alice", "human", "cd" * 32, T0)
    assert await store.arena.bot("alice") is None  # a person is no bot
    found = await store.arena.players(["alice", "hexa", "nobody"])
    assert sorted(found) == ["alice", "hexa"]


async def test_a_bot_row_round_trips_and_updates(store: GameStore) -> None:
    assert await store.arena.claim("hexa", "Hexa", "bot", None, T0, bot=bot_columns())
    bot = await store.arena.bot("hexa")
    assert bot is not None
    assert (bot.name, bot.url, bot.ladder, bot.status) == (
        "Hexa",
        "http://127.0.0.1:9001",
        True,
        "active",
    )
    assert bot.meta == {"name": "Hexa", "version": "1.0"}
    assert bot.registered_at == T0 and bot.token_hash is None
    until = T0 + timedelta(seconds=30)
    assert await store.arena.update_bot(
        "hexa", failures_in_row=1, backoff_until=until, backoff_reason="no_show", ladder=False
    )
    bot = await store.arena.bot("hexa")
    assert bot is not None
    assert (bot.failures_in_row, bot.backoff_until, bot.backoff_reason) == (1, until, "no_show")
    assert bot.ladder is False
    assert not await store.arena.update_bot("nobody", ladder=True)
    with pytest.raises(ValueError, match="registered_at"):
        await store.arena.update_bot("hexa", registered_at=T0)
    assert [b.key for b in await store.arena.bots()] == ["hexa"]


# ------------------------------------------------------------------ ratings


async def test_a_game_is_rated_exactly_once(store: GameStore) -> None:
    assert await store.ratings.track("g1", ("hexa", "Hexa"), ("tri", "Tri"), T0)
    assert not await store.ratings.track("g1", ("hexa", "Hexa"), ("tri", "Tri"), T0)
    assert await store.ratings.status("g1") == "pending"
    x = side("Hexa", 1.0, think_ms=900, think_moves=3)
    o = side("Tri", 0.0, failure="timeout", think_ms=100, think_moves=2)
    settled = await store.ratings.settle("g1", x, o, T0)
    assert settled is not None
    new_x, new_o = settled
    assert new_x.mu > 1500 > new_o.mu
    # Again, or voided after: nothing changes.
    assert await store.ratings.settle("g1", x, o, T0) is None
    assert not await store.ratings.void("g1", T0)
    assert await store.ratings.status("g1") == "rated"
    hexa, tri = await store.ratings.get("hexa"), await store.ratings.get("tri")
    assert hexa is not None and tri is not None
    assert (hexa.games, hexa.wins, hexa.losses, hexa.draws) == (1, 1, 0, 0)
    assert (tri.games, tri.wins, tri.losses) == (1, 0, 1)
    assert tri.failures == {"timeout": 1} and hexa.failures == {}
    assert hexa.rating == new_x and hexa.avg_think_ms == 300 and tri.avg_think_ms == 50
    assert hexa.last_seen == T0
    [point] = await store.ratings.history("tri", 10)
    assert (point.game_id, point.opponent, point.score, point.rating) == ("g1", "Hexa", 0.0, new_o)


async def test_an_untracked_game_is_never_rated_and_a_void_one_counts_for_nobody(
    store: GameStore,
) -> None:
    assert await store.ratings.settle("nope", side("A", 1.0), side("B", 0.0), T0) is None
    assert await store.ratings.status("nope") is None
    assert await store.ratings.track("g2", ("a", "A"), ("b", "B"), T0)
    assert await store.ratings.void("g2", T0)
    assert await store.ratings.settle("g2", side("A", 1.0), side("B", 0.0), T0) is None
    assert await store.ratings.status("g2") == "void"
    assert await store.ratings.all() == []


async def test_settling_many_games_of_one_player_at_once_loses_none(store: GameStore) -> None:
    games = [f"g{n}" for n in range(12)]
    for n, game_id in enumerate(games):
        assert await store.ratings.track(game_id, ("hub", "Hub"), (f"p{n}", f"P{n}"), T0)
    results = await asyncio.gather(
        *(
            store.ratings.settle(game_id, side("Hub", 0.5), side(f"P{n}", 0.5), T0)
            for n, game_id in enumerate(games)
        )
    )
    assert all(result is not None for result in results)
    hub = await store.ratings.get("hub")
    assert hub is not None and (hub.games, hub.draws) == (12, 12)
    assert len(await store.ratings.history("hub", 100)) == 12
    assert [p.game_id for p in await store.ratings.history("hub", 3)] == [
        point.game_id for point in (await store.ratings.history("hub", 100))[:3]
    ]


async def test_games_rated_at_once_have_times_in_the_order_of_the_history(
    store: GameStore,
) -> None:
    # Rated without a time of the caller's, as the rating book rates them: each game's
    # time is read as it is written, so newest first by the history is newest first
    # by time too (a time read before the write could be older than a game written
    # first). A player's current rating is the newest point's.
    games = [f"g{n}" for n in range(12)]
    for n, game_id in enumerate(games):
        assert await store.ratings.track(game_id, ("hub", "Hub"), (f"p{n}", f"P{n}"), T0)
    await asyncio.gather(
        *(
            store.ratings.settle(game_id, side("Hub", 1.0), side(f"P{n}", 0.0))
            for n, game_id in enumerate(games)
        )
    )
    history = await store.ratings.history("hub", 100)
    assert len(history) == 12
    times = [point.at for point in history]
    assert times == sorted(times, reverse=True) and times[-1] > T0
    hub = await store.ratings.get("hub")
    assert hub is not None and hub.rating == history[0].rating
    assert hub.last_seen == history[0].at


async def test_pending_games_come_with_the_status_of_their_record(store: GameStore) -> None:
    record = GameRecord(game_id="live", started_at=T0)
    await store.create_game(record)
    await store.create_game(record.model_copy(update={"game_id": "over"}))
    draw = GameResult(winner=None, reason=ResultReason.DRAW)
    await store.finish_game("over", draw, ended_at=T0)
    for game_id in ("live", "over", "lost"):
        assert await store.ratings.track(game_id, ("a", "A"), ("b", "B"), T0)
    pending = {p.game_id: p for p in await store.ratings.pending()}
    assert {k: p.game_status for k, p in pending.items()} == {
        "live": "running",
        "over": "finished",
        "lost": None,
    }
    assert (pending["over"].x_name, pending["over"].o_name) == ("A", "B")


async def test_ratings_start_from_the_default(store: GameStore) -> None:
    assert await store.ratings.get("nobody") is None
    assert await store.ratings.track("g", ("a", "A"), ("b", "B"), T0)
    settled = await store.ratings.settle("g", side("A", 0.5), side("B", 0.5), T0)
    assert settled is not None
    assert round(settled[0].mu) == round(Rating().mu)


async def test_pending_games_are_rated_at_startup_in_the_order_they_ended(
    store: GameStore,
) -> None:
    # A previous run finished two games of A and B but rated neither: "first" was
    # declared first and ended last. A live server rates games as they end, and the
    # model is order-dependent, so the startup's settlement must follow their ends too.
    from game.rating_book import RatingBook
    from game.ratings import rate

    won = GameResult(winner=Player.X, reason=ResultReason.WIN)
    drawn = GameResult(winner=None, reason=ResultReason.DRAW)
    for at, (game_id, result, ended) in enumerate(
        (("first", won, T0 + timedelta(minutes=9)), ("second", drawn, T0 + timedelta(minutes=2)))
    ):
        await store.create_game(GameRecord(game_id=game_id, started_at=T0))
        await store.finish_game(game_id, result, ended_at=ended)
        created = T0 + timedelta(seconds=at)
        assert await store.ratings.track(game_id, ("a", "A"), ("b", "B"), created)
    assert await RatingBook(store).settle_pending() == 2
    a, b = rate(Rating(), Rating(), 0.5)  # "second" ended first
    a, b = rate(a, b, 1.0)
    row = await store.ratings.get("a")
    assert row is not None
    assert row.rating.mu == pytest.approx(a.mu), (row.rating, a)
    assert [p.game_id for p in await store.ratings.history("a", 10)] == ["first", "second"]


async def test_the_rating_book_remembers_the_kinds_of_a_bounded_number_of_players(
    store: GameStore,
) -> None:
    # A server rates games for months: it must not keep every player who ever played.
    from game.rating_book import RatingBook

    book = RatingBook(store, known_kinds_max=3)
    won = GameResult(winner=Player.X, reason=ResultReason.WIN)
    for game in range(5):
        names = (f"ada{game}", f"bo{game}")
        for name in names:
            assert await store.arena.claim(name, name, "human", None, T0)
        game_id = f"g{game}"
        # No seat types in the record: only the arena says these are people.
        await store.create_game(GameRecord(game_id=game_id, started_at=T0))
        await store.finish_game(game_id, won, ended_at=T0 + timedelta(minutes=game))
        await book.track(game_id, *names)  # over already: rated at once
        rows = [await store.ratings.get(name) for name in names]
        assert [row.kind if row else None for row in rows] == ["human", "human"]
    assert len(book._kinds) <= 3

"""RatingBook: tracked games rated once, before their ``end`` reaches anyone.

Real games on a real ``GameManager`` (SQLite file; the store's tables are tested on
PostgreSQL too in tests/test_arena_store.py): people as in-memory connections, bots
as real bot servers on 127.0.0.1.
"""

from __future__ import annotations

import asyncio

import pytest

from game.manager import GameManager
from game.rating_book import RatingBook, UnratableGame
from game.store import GameStore
from models import EndCause, GameRecord, NewGameRequest, Player
from tests.manager.harness import (
    TIMEOUT,
    FakeConnection,
    bot,
    finished,
    play_until_o_wins,
    scripted_bot,
    seat,
    start_humans,
)


@pytest.fixture
def book(store: GameStore, manager: GameManager) -> RatingBook:
    ratings = RatingBook(store, running=manager.runs)
    manager.add_end_hook(ratings.on_game_end, wants=ratings.tracks)
    return ratings


async def test_a_tracked_game_is_rated_before_anyone_gets_its_end(
    manager: GameManager, store: GameStore, book: RatingBook
) -> None:
    game_id, token_x, token_o = await start_humans(manager)  # Xena against Otto
    await book.track(game_id, "Xena", "Otto")
    x, o = FakeConnection(), FakeConnection()
    seats = [seat(manager, token_x, x), seat(manager, token_o, o)]
    await play_until_o_wins(x, o)  # returns when O has its `end`
    otto, xena = await store.ratings.get("otto"), await store.ratings.get("xena")
    assert otto is not None and xena is not None
    assert (otto.wins, xena.losses) == (1, 1)
    assert otto.kind == xena.kind == "human"  # from the record's seats
    assert otto.rating.mu > 1500 > xena.rating.mu
    assert await store.ratings.status(game_id) == "rated"
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    # Rated once: the ratings did not move again when the game task finished.
    assert (await book.rating_of("OTTO")) == otto.rating
    [point] = await book.history("otto")
    assert (point.game_id, point.opponent, point.score) == (game_id, "Xena", 1.0)
    standings = await book.standings()
    assert [s.name for s in standings] == ["Otto", "Xena"]
    assert standings[0].provisional and standings[0].status is None
    assert [s.name for s in await book.standings("bot")] == []


async def test_a_forfeit_is_a_loss_counted_by_cause(
    manager: GameManager, store: GameStore, book: RatingBook, bots: str
) -> None:
    async with scripted_bot(None) as unreachable:  # capabilities, but no socket
        created = await manager.create_game(
            NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=bot(unreachable))
        )
        await book.track(created.game_id, "Threat", "Ghost")
        record = await finished(manager, store, created.game_id)
    assert record.result is not None and record.result.cause is EndCause.NO_SHOW
    ghost = await store.ratings.get("ghost")
    threat = await store.ratings.get("threat")
    assert ghost is not None and threat is not None
    assert (ghost.losses, ghost.failures, ghost.kind) == (1, {"no_show": 1}, "bot")
    assert (threat.wins, threat.failures) == (1, {})
    [leader, last] = await book.standings()
    assert (leader.name, last.name) == ("Threat", "Ghost")
    assert last.failures == {"no_show": 1}


async def test_bots_thinking_time_is_averaged_over_their_moves(
    manager: GameManager, store: GameStore, book: RatingBook, bots: str
) -> None:
    created = await manager.create_game(
        NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=bot(f"{bots}/random"))
    )
    await book.track(created.game_id, "Threat", "Random")
    record = await finished(manager, store, created.game_id)
    row = await store.ratings.get("random")
    assert row is not None and row.games == 1
    mine = [m.thinking_ms for m in record.moves if m.side is Player.O and m.thinking_ms is not None]
    assert row.think_moves == len(mine) > 0 and row.think_ms == sum(mine)


async def test_untracked_and_aborted_games_change_no_rating(
    manager: GameManager, store: GameStore, book: RatingBook
) -> None:
    plain, token_x, token_o = await start_humans(manager)
    x, o = FakeConnection(), FakeConnection()
    seats = [seat(manager, token_x, x), seat(manager, token_o, o)]
    await play_until_o_wins(x, o)
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)

    aborted, _, _ = await start_humans(manager)
    await book.track(aborted, "Xena", "Otto")
    assert manager.abort_game(aborted, "test")
    await finished(manager, store, aborted)
    assert await store.ratings.status(aborted) == "void"
    assert await store.ratings.status(plain) is None
    assert await store.ratings.all() == []


async def test_an_end_hook_gets_only_the_games_it_wants_with_their_final_record(
    manager: GameManager, store: GameStore
) -> None:
    wanted, token_x, token_o = await start_humans(manager)
    _other, other_x, other_o = await start_humans(manager)
    got: list[GameRecord] = []

    async def hook(record: GameRecord) -> None:
        got.append(record)

    manager.add_end_hook(hook, wants=lambda game_id: game_id == wanted)
    for tokens in ((token_x, token_o), (other_x, other_o)):
        x, o = FakeConnection(), FakeConnection()
        seats = [seat(manager, tokens[0], x), seat(manager, tokens[1], o)]
        await play_until_o_wins(x, o)  # returns when O has its `end`: the hooks have run
        await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    assert [record.game_id for record in got] == [wanted]
    assert got[0].result is not None and got[0].result.winner is Player.O


async def test_a_game_tracked_after_it_ended_is_rated_by_track(
    manager: GameManager, store: GameStore, book: RatingBook
) -> None:
    game_id, token_x, token_o = await start_humans(manager)
    x, o = FakeConnection(), FakeConnection()
    seats = [seat(manager, token_x, x), seat(manager, token_o, o)]
    await play_until_o_wins(x, o)
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    await finished(manager, store, game_id)
    await book.track(game_id, "Xena", "Otto")
    assert await store.ratings.status(game_id) == "rated"
    await book.track(game_id, "Xena", "Otto")  # again: nothing more
    otto = await store.ratings.get("otto")
    assert otto is not None and otto.games == 1


async def test_settle_pending_rates_what_a_previous_run_finished(
    manager: GameManager, store: GameStore
) -> None:
    # A book whose hook is not installed: the server "crashed" before rating the game.
    unhooked = RatingBook(store)
    game_id, token_x, token_o = await start_humans(manager)
    await unhooked.track(game_id, "Xena", "Otto")
    left_running, _, _ = await start_humans(manager)
    await unhooked.track(left_running, "Ada", "Bob")
    x, o = FakeConnection(), FakeConnection()
    seats = [seat(manager, token_x, x), seat(manager, token_o, o)]
    await play_until_o_wins(x, o)
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    await finished(manager, store, game_id)
    assert await store.ratings.status(game_id) == "pending"

    restarted = RatingBook(store)
    assert await restarted.settle_pending() == 1  # the other game still runs
    assert await store.ratings.status(game_id) == "rated"
    assert await store.ratings.status(left_running) == "pending"
    await manager.shutdown()  # stops it: an aborted record
    assert await restarted.settle_pending() == 1
    assert await store.ratings.status(left_running) == "void"
    assert await restarted.settle_pending() == 0


async def test_settle_pending_of_given_games_leaves_the_others_pending(
    manager: GameManager, store: GameStore
) -> None:
    unhooked = RatingBook(store)
    swept, _, _ = await start_humans(manager)
    await unhooked.track(swept, "Ada", "Bob")
    other, _, _ = await start_humans(manager)
    await unhooked.track(other, "Cy", "Di")
    await manager.shutdown()  # both aborted (as a dead worker's games are swept)
    assert await unhooked.settle_pending([swept, "unknown"]) == 1
    assert await store.ratings.status(swept) == "void"
    assert await store.ratings.status(other) == "pending"


async def test_a_game_needs_two_players(store: GameStore) -> None:
    book = RatingBook(store)
    with pytest.raises(UnratableGame, match="one player"):
        await book.track("g", "Hexa", "HEXA")
    with pytest.raises(UnratableGame, match="too long"):
        await book.track("g", "Hexa", "x" * 500)
    assert await book.rating_of("nobody") == (await book.rating_of("anybody"))
    assert await book.history("x" * 500) == []
    assert await store.ratings.status("g") is None

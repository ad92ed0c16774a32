"""The cluster's work queue in the store (``game.store.work``), on SQLite and PostgreSQL;
on PostgreSQL also with two stores leasing side by side, as two workers do."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from game.store import GameStore, RecordStatus
from game.store.schema import lease_lapsed_result, unsettled_result
from game.store.work import tournament_source
from models import EndCause, GameRecord
from tests.postgres import PostgresCluster
from tests.test_store import record as make_record

LEASE = 10.0
NOW = 1_000_000.0
ENDED = datetime(2026, 11, 24, tzinfo=UTC)


async def lease(
    store: GameStore,
    worker: str,
    limit: int = 1,
    *,
    now: float = NOW,
    playing: tuple[int, ...] = (),
) -> list[int]:
    items = await store.work.lease(
        worker, limit, now=now, until=now + LEASE, ended_at=ENDED, playing=playing
    )
    return [item.item_id for item in items]


async def test_a_game_is_queued_once_and_leased_in_order(store: GameStore) -> None:
    source = tournament_source("t1")
    first = await store.work.enqueue(source, 0, "{}", rated=False)
    second = await store.work.enqueue(source, 1, "{}", rated=True)
    again = await store.work.enqueue(source, 0, '{"other": 1}', rated=True)
    assert again.item_id == first.item_id and again.request == "{}" and not again.rated
    assert first.tournament_id == "t1" and second.rated
    assert await lease(store, "w1") == [first.item_id]
    assert await lease(store, "w2", 5) == [second.item_id]
    assert await lease(store, "w3", 5) == []  # both held
    assert await store.work.counts() == {"leased": 2}


async def test_an_expired_lease_is_taken_over_and_its_game_recorded_aborted(
    store: GameStore,
) -> None:
    record: GameRecord = make_record("g1")
    await store.create_game(record)
    game_id = "g1"
    await store.tournaments.create(
        "t1", name=None, request_json="{}", games_total=1, created_at=ENDED
    )
    item = await store.work.enqueue(tournament_source("t1"), 0, "{}", rated=False)
    [mine] = await store.work.lease("w1", 1, now=NOW, until=NOW + LEASE, ended_at=ENDED)
    assert await store.work.started(mine, "w1", game_id)
    # Within the lease, nobody else gets it; after it, the next worker does (not the
    # holder itself: stalled past its lease, it still plays the game, and renews it).
    assert await lease(store, "w2", now=NOW + LEASE - 1) == []
    assert await lease(store, "w1", now=NOW + LEASE + 1, playing=(item.item_id,)) == []
    [taken] = await store.work.lease("w2", 1, now=NOW + LEASE + 1, until=NOW + 99, ended_at=ENDED)
    assert taken.item_id == item.item_id
    assert taken.worker == "w1" and taken.game_id == game_id  # what was abandoned
    assert await store.game_status(game_id) is RecordStatus.ABORTED
    stored = await store.get_game(game_id)
    assert (
        stored is not None and stored.result is not None and stored.result.cause is EndCause.ABORTED
    )
    assert stored.result.detail == lease_lapsed_result("w1").detail
    # The old holder's writes change nothing now: the game counts once, w2's.
    assert not await store.work.complete(item.item_id, "w1", "{}")
    assert not await store.work.hand_back(item.item_id, "w1")
    assert await store.work.renew("w1", [item.item_id], NOW + 50) == [item.item_id]
    assert await store.work.renew("w2", [item.item_id], NOW + 50) == []
    assert await store.work.complete(item.item_id, "w2", '{"winner": "X"}')
    [done] = await store.work.items([item.item_id])
    assert done.status == "done" and done.result == {"winner": "X"}


async def test_a_worker_takes_back_an_expired_item_of_its_own_that_it_no_longer_plays(
    store: GameStore,
) -> None:
    await store.create_game(make_record("g1"))
    await store.tournaments.create(
        "t1", name=None, request_json="{}", games_total=1, created_at=ENDED
    )
    item = await store.work.enqueue(tournament_source("t1"), 0, "{}", rated=False)
    [mine] = await store.work.lease("w1", 1, now=NOW, until=NOW + LEASE, ended_at=ENDED)
    assert await store.work.started(mine, "w1", "g1")
    # w1 gave it up unsettled (it could not hand it back: the store was out of reach).
    # Once its lease has expired, w1 takes it back, and says why its game was aborted.
    assert await lease(store, "w1", now=NOW + LEASE - 1) == []
    [again] = await store.work.lease("w1", 1, now=NOW + LEASE + 1, until=NOW + 99, ended_at=ENDED)
    assert again.item_id == item.item_id and again.game_id == "g1"
    stored = await store.get_game("g1")
    assert stored is not None and stored.result is not None
    assert stored.result.detail == unsettled_result("w1").detail
    assert await store.work.counts() == {"leased": 1}


async def test_a_handed_back_game_is_leased_again_and_a_cancelled_one_is_dropped(
    store: GameStore,
) -> None:
    source = tournament_source("t1")
    first = await store.work.enqueue(source, 0, "{}", rated=False)
    await store.work.enqueue(source, 1, "{}", rated=False)
    await store.work.enqueue(source, 2, "{}", rated=False)
    assert await lease(store, "w1", 2) == [first.item_id, first.item_id + 1]
    assert await store.work.hand_back(first.item_id, "w1")
    assert await lease(store, "w2") == [first.item_id]
    # Cancelling drops what is queued and marks what is held; the holder learns it on
    # its next renewal, aborts the game and drops the item.
    assert await store.work.cancel(source) == 2
    assert await store.work.renew("w1", [first.item_id + 1], NOW + 50) == [first.item_id + 1]
    await store.work.drop_cancelled(first.item_id + 1)
    assert await store.work.counts() == {"cancelled": 1}
    # w2 died holding the other: once its lease expires it is forgotten, not played.
    assert await lease(store, "w3", now=NOW + LEASE + 1) == []
    assert await store.work.counts() == {}
    await store.work.enqueue(source, 3, "{}", rated=False)
    assert await store.work.clear() == 1  # a cold start forgets what is not done
    assert await store.work.counts() == {}


async def test_two_workers_leasing_at_once_never_get_the_same_game(
    postgres_cluster: PostgresCluster,
) -> None:
    url = postgres_cluster.new_database()
    async with await GameStore.open(url) as one, await GameStore.open(url) as two:
        source = tournament_source("t1")
        for idx in range(60):
            await one.work.enqueue(source, idx, "{}", rated=False)

        async def take_all(store: GameStore, worker: str) -> list[int]:
            taken: list[int] = []
            while batch := await lease(store, worker, 3):
                taken += batch
            return taken

        a, b = await asyncio.gather(take_all(one, "w1"), take_all(two, "w2"))
        assert len(a) + len(b) == 60 and set(a).isdisjoint(b)
        assert a and b  # they took turns: neither was locked out until the other ended

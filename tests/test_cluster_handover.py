"""A tournament's coordinator taking over from one that still counts: the old one
(cut off from Redis, it learns it lost its lease only at its next renewal) may count
games after the new one loaded the store. The store's count is the truth: the new
coordinator takes those games as counted, neither missing them in its standings (its
run then ended "finished" short of its games) nor queuing them again.

One worker in this test process on a real PostgreSQL and a real Redis
(tests/test_cluster.py); the old coordinator's count is made through the same store
call it uses, at the moment the race leaves it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from game.cluster_work import Coordinators
from game.store import GameStore
from game.store.work import WorkItem
from game.tournament_games import _outcome_json
from game.tournament_standings import outcome_of
from models import GameResult
from tests.test_cluster import TIMEOUT, Cluster, workers
from tests.test_cluster_tournament import (
    LEASES,
    GatedBot,
    create,
    gated_bots,
    runtime,
    tournament,
    until_over,
    until_view,
)

#: The game the old coordinator counts (the second of a pair: the pair's count waits on it).
RACED = 3
GAMES = 8


def coordinators(worker: Any) -> Coordinators:
    remote = runtime(worker).tournaments.remote
    assert remote is not None
    return remote


async def count_as_the_old_coordinator(
    remote: Coordinators, item: WorkItem, tournament_id: str
) -> None:
    """Count ``item``'s done game as the tournament's previous coordinator does."""
    assert item.result is not None and item.game_id is not None
    request = tournament_request(item)
    outcome = outcome_of(
        GameResult.model_validate(item.result), request["player_x"], request["player_o"]
    )
    data = _outcome_json(outcome, item.game_id)
    assert await remote.work.count(item, tournament_id, item.game_id, data)


def tournament_request(item: WorkItem) -> dict[str, str]:
    data = json.loads(item.request)
    return {seat: data[seat]["name"] for seat in ("player_x", "player_o")}


async def finished_item(remote: Coordinators, item_id: int) -> WorkItem:
    async with asyncio.timeout(TIMEOUT):
        while True:
            (now,) = await remote.work.items([item_id])
            if now.status == "done":
                return now
            await asyncio.sleep(0.02)


async def assert_counted_once(db_url: str, tournament_id: str) -> None:
    async with await GameStore.open(db_url) as store:
        rows = await store.tournaments.games(tournament_id)
        assert sorted(row.idx for row in rows) == list(range(GAMES))
        assert all(row.status == "done" for row in rows)
        assert await store.work.counts() == {}


async def test_a_game_the_old_coordinator_counted_last_is_in_the_new_ones_standings(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with workers(cluster, "worker-a", leases=LEASES) as (a,):
        remote = coordinators(a)
        real_outcome = remote.outcome
        raced: list[str] = []

        async def outcome(item: WorkItem, on_game: Any) -> WorkItem | None:
            settled = await real_outcome(item, on_game)
            if item.idx == RACED and settled is not None and settled.status == "done":
                # Between this coordinator's read of the done item and its count.
                assert item.tournament_id is not None
                await count_as_the_old_coordinator(remote, settled, item.tournament_id)
                raced.append(item.tournament_id)
            return settled

        monkeypatch.setattr(remote, "outcome", outcome)
        tournament_id = await create(
            cluster, a.base, tournament(f"{a.base}/bots", rounds=GAMES // 2, concurrency=2)
        )
        view = await until_over(cluster, a.base, tournament_id)
    assert raced == [tournament_id]
    assert view["status"] == "finished", view["reason"]
    assert view["reason"] == f"all {GAMES} games played"
    assert view["games_done"] == view["games_counted"] == GAMES
    assert sum(line["games"] for line in view["standings"]) == 2 * GAMES
    await assert_counted_once(cluster.db_url, tournament_id)


async def test_a_game_the_old_coordinator_counted_is_not_queued_again(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with workers(cluster, "worker-a", leases=LEASES) as (a,):
        remote = coordinators(a)
        real_enqueue = remote.enqueue
        raced: list[str] = []

        async def enqueue(source: str, idx: int, request: str, *, rated: bool) -> WorkItem:
            item = await real_enqueue(source, idx, request, rated=rated)
            if idx == RACED and not raced:
                # The old coordinator queued it, a worker played it, the old coordinator
                # counted it (the item is gone): then this one, loaded before, queues it.
                assert item.tournament_id is not None
                settled = await finished_item(remote, item.item_id)
                await count_as_the_old_coordinator(remote, settled, item.tournament_id)
                raced.append(item.tournament_id)
                item = await real_enqueue(source, idx, request, rated=rated)
            return item

        monkeypatch.setattr(remote, "enqueue", enqueue)
        tournament_id = await create(
            cluster, a.base, tournament(f"{a.base}/bots", rounds=GAMES // 2, concurrency=2)
        )
        view = await until_over(cluster, a.base, tournament_id)
        played = runtime(a).work.played  # type: ignore[union-attr]
    assert raced == [tournament_id]
    assert view["status"] == "finished", view["reason"]
    assert view["games_done"] == view["games_counted"] == GAMES
    assert played == GAMES  # the counted game was not played a second time
    await assert_counted_once(cluster.db_url, tournament_id)


async def test_the_coordinator_shows_its_tournament_while_the_store_is_out_of_reach(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its view takes the games in flight from the store: with PostgreSQL restarting,
    # GET /tournaments/<id> was a 500 and a traceback even on the worker that has the
    # tournament in memory.
    async with gated_bots() as bots, workers(cluster, "worker-a", leases=LEASES) as (a,):
        body = {
            "bots": [{"name": "one", "url": f"{bots}/a"}, {"name": "two", "url": f"{bots}/b"}],
            "rounds": 1,
            "concurrency": 2,
            "openings": "none",
            "match": {"turn_limit": 8},
        }
        tournament_id = await create(cluster, a.base, body)
        shown = await until_view(
            cluster, a.base, tournament_id, lambda view: view["games_running"] == 2
        )

        async def live_games(tournament_id: str) -> dict[int, str]:
            raise ConnectionRefusedError(111, "the database is restarting")

        monkeypatch.setattr(runtime(a).store.tournaments, "live_games", live_games)
        status, view = await cluster.get(f"{a.base}/tournaments/{tournament_id}")
        assert status == 200, view
        assert view["status"] == "running"
        assert view["live_games"] == shown["live_games"]
        monkeypatch.undo()
        GatedBot.gate.set()
        over = await until_over(cluster, a.base, tournament_id)
    assert over["status"] == "finished", over["reason"]

"""A worker settling a queued game (``WorkPlayer._settling``): the store out of reach
is waited for, a write the store refuses is not tried again. One worker in this test
process (tests/test_cluster.py) on a real PostgreSQL and a real Redis; the outage is
simulated as tests/test_recorder.py does (the write raises what a refused connection
raises), the refusal is PostgreSQL's own (a foreign key the write breaks)."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable

import pytest

from game.cluster_work import UNSETTLED_TRIES, WorkPlayer
from game.store.work import LADDER_SOURCE, WorkItem, tournament_source
from models import NewGameRequest
from tests.test_cluster import TIMEOUT, Cluster, Worker, _record, workers

PEOPLE = NewGameRequest.model_validate(
    {"player_x": {"type": "human", "name": "ann"}, "player_o": {"type": "human", "name": "bo"}}
)

Started = Callable[[WorkItem, str, str], Awaitable[bool]]


def work_player(worker: Worker) -> WorkPlayer:
    player: WorkPlayer | None = worker.server.app.state.arena.work
    assert player is not None
    return player


def counting_started(
    player: WorkPlayer, monkeypatch: pytest.MonkeyPatch, *, unreachable_for: int = 0
) -> Counter[str]:
    """Count the worker's writes of "this game is played for this item", by game id;
    the first ``unreachable_for`` of them fail as a store out of reach does."""
    calls: Counter[str] = Counter()
    real: Started = player.work.started

    async def started(item: WorkItem, worker: str, game_id: str) -> bool:
        calls[game_id] += 1
        if calls.total() <= unreachable_for:
            raise ConnectionRefusedError(111, "the database is restarting")
        return await real(item, worker, game_id)

    monkeypatch.setattr(player.work, "started", started)
    return calls


async def first_game(calls: Counter[str]) -> str:
    async with asyncio.timeout(TIMEOUT):
        while not calls:
            await asyncio.sleep(0.01)
    return next(iter(calls))


async def test_a_settlement_the_store_refuses_is_not_tried_again_and_aborts_the_game(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async with workers(cluster, "worker-a") as (a,):
        player = work_player(a)
        calls = counting_started(player, monkeypatch)
        # A game of a tournament the store does not have: noting it breaks the
        # tournament_games foreign key, every time it is tried.
        await player.work.enqueue(
            tournament_source("gone"), 0, PEOPLE.model_dump_json(), rated=False
        )
        game_id = await first_game(calls)
        # Over, or tried again (the old loop tried for two minutes): whichever is first.
        async with asyncio.timeout(TIMEOUT):
            while calls[game_id] < 2:
                status, record = await cluster.get(f"{a.base}/games/{game_id}")
                if status == 200 and record["result"] is not None:
                    break
                await asyncio.sleep(0.02)
        assert calls[game_id] == 1
        record = await _record(cluster, a.base, game_id)
    result = record["result"]
    assert (result["winner"], result["cause"]) == (None, "aborted")
    assert result["detail"] == "its worker could not keep its record: the store refused it"
    logged = [
        entry
        for entry in caplog.records
        if entry.name == "game.cluster" and entry.levelno == logging.ERROR
    ]
    assert logged and "the store refused it" in logged[0].getMessage()
    assert logged[0].exc_info is not None and "ForeignKeyViolation" in repr(logged[0].exc_info[1])


async def test_a_settlement_is_tried_again_while_the_store_is_out_of_reach(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with workers(cluster, "worker-a") as (a,):
        player = work_player(a)
        calls = counting_started(player, monkeypatch, unreachable_for=2)
        item = await player.work.enqueue(
            LADDER_SOURCE + "outage", 0, PEOPLE.model_dump_json(), rated=False
        )
        game_id = await first_game(calls)
        async with asyncio.timeout(TIMEOUT):
            while True:
                (now,) = await player.work.items([item.item_id])
                if now.game_id is not None:
                    break
                await asyncio.sleep(0.02)
        assert now.game_id == game_id and now.status == "leased"
        assert calls == {game_id: 3}  # twice refused a connection, then written
        assert a.server.app.state.arena.manager.runs(game_id)  # played on, not aborted


async def test_a_settlement_the_store_refuses_lease_after_lease_fails_its_item(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same refused write as above: the item, left to its lease, is leased again and
    # refused again. It was played again every lease period, forever; now it is failed
    # after UNSETTLED_TRIES leases, with the cause, for its coordinator to act on.
    async with workers(cluster, "worker-a") as (a,):
        player = work_player(a)
        calls = counting_started(player, monkeypatch)
        item = await player.work.enqueue(
            tournament_source("gone"), 0, PEOPLE.model_dump_json(), rated=False
        )
        async with asyncio.timeout(TIMEOUT):
            while True:
                (now,) = await player.work.items([item.item_id])
                if now.status != "leased" and now.status != "queued":
                    break
                await asyncio.sleep(0.05)
        game_ids = list(calls)
        # Each aborted with the cause, as the first one above.
        causes = [(await _record(cluster, a.base, game_id))["result"] for game_id in game_ids]
    assert [result["cause"] for result in causes] == ["aborted"] * len(game_ids)
    assert now.status == "failed"
    assert calls.total() == len(game_ids) == UNSETTLED_TRIES
    assert now.error is not None
    assert now.error.startswith(
        f"could not be settled after {UNSETTLED_TRIES} tries: the store refused it "
        "(ForeignKeyViolationError: "
    ), now.error


async def test_a_coordinator_watching_its_games_logs_an_outage_once(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The coordinator reads the games it waits on ten times a second: with PostgreSQL
    # down for a minute, a warning each time was 600 lines, of "[Errno 2] No such file
    # or directory" (its unix socket gone) that did not say what was unreachable.
    failing_reads = 25
    async with workers(cluster, "worker-a", work_slots=0) as (a,):
        remote = a.server.app.state.arena.tournaments.remote
        item = await remote.enqueue(
            LADDER_SOURCE + "watched", 0, PEOPLE.model_dump_json(), rated=False
        )
        reads = Counter[str]()

        async def items(item_ids: list[int]) -> list[WorkItem]:
            reads["read"] += 1
            if reads["read"] <= failing_reads:
                raise FileNotFoundError(2, "No such file or directory")
            return []  # gone: the wait ends

        monkeypatch.setattr(remote.work, "items", items)
        caplog.set_level(logging.WARNING, "game.cluster")
        async with asyncio.timeout(TIMEOUT):
            assert await remote.outcome(item, lambda game_id: None) is None
    logged = [
        entry.getMessage()
        for entry in caplog.records
        if entry.name == "game.cluster" and "reading the queued games" in entry.getMessage()
    ]
    assert logged == [
        "reading the queued games failed: the store was unreachable (FileNotFoundError: "
        "[Errno 2] No such file or directory); trying again, quietly until it works",
        f"reading the queued games works again, after {failing_reads} failed tries",
    ]

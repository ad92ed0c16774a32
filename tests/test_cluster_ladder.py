"""The ladder on a cluster: one worker schedules (the one holding the ladder's lease),
every worker plays its games from the queue; the scheduler shut down, another takes
over. Two workers in this test process, sharing a real PostgreSQL and a real Redis.

The leases are short (``LEASES``), and both workers share one event loop: on a loaded
machine a stall longer than a lease hands the ladder's lease (or a worker's) to the
other worker, which is what a lease is for. What the test checks holds whatever the
timing: a worker schedules only once it took the lease; every game counted as played
was rated, and at the end the ratings are exactly what the records say."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest

from game.cluster_work import Coordinators
from game.ladder import Ladder, LadderSettings
from game.ladder_games import LADDER_LEASE, QueuedGames
from game.store import GameStore
from game.store.schema import MAX_PAGE_SIZE
from tests.test_cluster import Cluster, Worker, workers
from tests.test_cluster_tournament import LEASES, TIMEOUT, post, runtime
from tests.test_ladder import registered_of, three_bots

FAST = LadderSettings(concurrency=2, rate=6000, time_control="none", seed=1)

Json = dict[str, Any]


def ladder_of(worker: Worker) -> Ladder:
    ladder = runtime(worker).ladder
    assert ladder is not None and isinstance(ladder.games, QueuedGames)
    return ladder


def schedules(worker: Worker) -> bool:
    remote = runtime(worker).tournaments.remote
    return remote is not None and LADDER_LEASE in remote.held


def finished(*among: Worker) -> int:
    """The ladder games counted as played by the schedulers of ``among`` (each game is
    counted by one: a scheduler that loses the lease leaves the books of its games in
    play to the next one)."""
    return sum(ladder_of(worker).games_finished for worker in among)


async def until(check: Callable[[], bool]) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not check():
            await asyncio.sleep(0.05)


def ladder_claims(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times each worker took the ladder's lease, from now on."""
    taken: dict[str, int] = defaultdict(int)
    claim = Coordinators.claim

    async def counted(
        self: Coordinators, tournament_id: str, *, on_lost: Callable[[str], None] | None = None
    ) -> bool:
        got = await claim(self, tournament_id, on_lost=on_lost)
        if got and tournament_id == LADDER_LEASE:
            taken[self.worker_id.split("/")[0]] += 1  # "<worker id>/<run>"
        return got

    monkeypatch.setattr(Coordinators, "claim", counted)
    return taken


async def rated_as_recorded(db_url: str) -> tuple[int, int]:
    """Once every worker stopped: each ladder game's rating as its record says (a game
    finished is rated, an aborted or void one is not), and the leaderboard's games.
    Returns (games rated, the players' games summed)."""
    store = await GameStore.open(db_url)
    try:
        rated = 0
        before = None
        while True:
            page = await store.list_games(limit=MAX_PAGE_SIZE, before=before)
            for game in page.items:
                status = await store.ratings.status(game.game_id)
                counts = game.result is not None and not game.result.void
                # (A game aborted before it was declared rated is not tracked at all.)
                assert status in (("rated",) if counts else ("void", None)), (game, status)
                rated += counts
            if page.next_cursor is None:
                break
            before = page.next_cursor
        games = sum(row.games for row in await store.ratings.all())
    finally:
        await store.close()
    return rated, games


async def test_one_worker_schedules_the_ladder_and_every_worker_plays_it(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = {"leases": LEASES, "ladder": FAST, "host_example_bots": False}
    claims = ladder_claims(monkeypatch)
    async with (
        three_bots() as urls,
        workers(cluster, "worker-a", "worker-b", **options) as (a, b),
    ):
        for name, url in urls.items():
            status, answer = await post(
                cluster, f"{a.base}/bots", {"name": name, "url": url, "ladder": True}
            )
            assert status == 201, answer
        await until(lambda: schedules(a) or schedules(b))
        leader, other = (a, b) if schedules(a) else (b, a)
        await until(lambda: finished(a, b) >= 12)
        # One scheduler at a time: the other waits to lead, and schedules only
        # once it took the lease (under load, a stall longer than the lease may
        # hand it over: then it goes on with the games in play).
        for worker in (a, b):
            assert ladder_of(worker).games_started == 0 or claims[worker.id], claims
        assert claims[leader.id] >= 1
        played = {w.id: runtime(w).work.played for w in (a, b)}  # type: ignore[union-attr]
        assert all(count > 0 for count in played.values()), played
        # Rated where they were played, before they were counted, once each.
        counted = finished(a, b)
        _, board = await cluster.get(f"{other.base}/leaderboard?kind=bot")
        assert sum(entry["games"] for entry in board["entries"]) >= 2 * counted
        _, bots = await cluster.get(f"{other.base}/bots")
        assert all(bot["games"] > 0 for bot in registered_of(bots).values())
        # The scheduler stops: the other worker takes over and goes on.
        before = ladder_of(other).games_finished
        await leader.stop()  # (stopped again on the way out: that does nothing)
        await until(lambda: schedules(other))
        await until(lambda: ladder_of(other).games_finished >= before + 6)
        _, status_now = await cluster.get(f"{other.base}/ladder")
        assert status_now["running"] and status_now["games_finished"] >= before + 6
    # Everything stopped: the ratings are the records', exactly.
    rated, games = await rated_as_recorded(cluster.db_url)
    assert rated >= 12 and games == 2 * rated

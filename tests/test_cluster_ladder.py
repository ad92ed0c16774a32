"""The ladder on a cluster: one worker schedules (the one holding the ladder's lease),
every worker plays its games from the queue; the scheduler shut down, another takes
over. Two workers in this test process, sharing a real PostgreSQL and a real Redis."""

from __future__ import annotations

import asyncio
from typing import Any

from game.ladder import Ladder, LadderSettings
from game.ladder_games import LADDER_LEASE, QueuedGames
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


async def until(check: Any) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not check():
            await asyncio.sleep(0.05)


async def test_one_worker_schedules_the_ladder_and_every_worker_plays_it(cluster: Cluster) -> None:
    options = {"leases": LEASES, "ladder": FAST, "host_example_bots": False}
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
        assert not schedules(other)
        await until(lambda: ladder_of(leader).games_finished >= 12)
        assert ladder_of(other).games_started == 0  # it waits to lead
        played = {w.id: runtime(w).work.played for w in (a, b)}  # type: ignore[union-attr]
        assert all(count > 0 for count in played.values()), played
        # Rated where they were played, and counted in the registry once each.
        _, board = await cluster.get(f"{other.base}/leaderboard?kind=bot")
        rated = sum(entry["games"] for entry in board["entries"])
        assert rated >= 2 * 12
        _, bots = await cluster.get(f"{other.base}/bots")
        assert all(bot["games"] > 0 for bot in registered_of(bots).values())
        # The scheduler stops: the other worker takes over and goes on.
        await leader.stop()  # (stopped again on the way out: that does nothing)
        await until(lambda: schedules(other))
        await until(lambda: ladder_of(other).games_finished >= 6)
        _, status_now = await cluster.get(f"{other.base}/ladder")
        assert status_now["running"] and status_now["games_finished"] >= 6

"""A bot plays one game at a time across a cluster's workers: the ladder's scheduler and
the queue's leader may be two workers, and they share the bots in play in Redis
(``game.cluster_bots_in_play``). Workers in this test process sharing a real PostgreSQL
and a real Redis (``tests.test_cluster``), bot servers and people on real sockets over
loopback; the shared count itself on the real Redis, reached directly or through a
proxy that can play dead.

Every new bot and person is rated 1500, so a person waiting for a bot gets the free one
that has waited longest, then by name: ``alpha`` before ``beta`` before ``gamma``.
Timeouts only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.bots import RandomBot
from bot.serve import create_app as create_bot_app
from bot.serve import serving as serving_bots
from game.bots_in_play import BotsInPlayUnknown
from game.cluster import Leases
from game.cluster_bots_in_play import ClusterBotsInPlay
from game.ladder import Ladder, LadderSettings
from game.ladder_games import LADDER_LEASE
from tests.silent_bot import silent_bot
from tests.tcp_proxy import TcpProxy
from tests.test_cluster import TIMEOUT, Cluster, Worker
from tests.test_cluster_queue import join, leader, runtime
from tests.test_server import until

#: Long enough for a loaded machine not to stall past a hold's lapse (three leases).
LEASES = Leases(1.0)
#: One ladder game at a time, at once, between bots that answer at once (or never).
ONE_GAME = LadderSettings(concurrency=1, rate=6000, time_control="none", seed=1)
TWO_GAMES = LadderSettings(concurrency=2, rate=6000, time_control="none", seed=1)

Json = dict[str, Any]


@asynccontextmanager
async def started(
    cluster: Cluster, *workers: tuple[str, LadderSettings | None]
) -> AsyncIterator[list[Worker]]:
    """Workers started in turn (the first leads the queue: it takes the key first), each
    with its ladder settings (None: no ``--ladder``); stopped in reverse order."""
    async with AsyncExitStack() as stack:
        running = []
        for worker_id, ladder in workers:
            worker = await cluster.worker(
                worker_id, leases=LEASES, ladder=ladder, host_example_bots=False
            )
            stack.push_async_callback(worker.stop)
            running.append(worker)
        yield running


def ladder_of(worker: Worker) -> Ladder:
    ladder = runtime(worker).ladder
    assert ladder is not None
    return ladder


def schedules(worker: Worker) -> bool:
    remote = runtime(worker).tournaments.remote
    return remote is not None and LADDER_LEASE in remote.held


async def eventually(done: Callable[[], bool]) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not done():
            await asyncio.sleep(0.02)


async def register(cluster: Cluster, worker: Worker, name: str, url: str) -> None:
    body = {"name": name, "url": url, "ladder": True}
    async with cluster.http.post(f"{worker.base}/bots", json=body) as response:
        assert response.status == 201, await response.text()


async def ladder_games_of(cluster: Cluster, worker: Worker, bot: str) -> list[str]:
    """The names of ``bot``'s ladder games, running or over (``ladder: x vs y``)."""
    status, page = await cluster.get(f"{worker.base}/games?player={bot}&limit=200")
    assert status == 200, page
    return [item["name"] for item in page["items"] if item["name"].startswith("ladder:")]


async def test_a_bot_in_a_ladder_game_one_worker_schedules_is_not_given_to_a_person_on_another(
    cluster: Cluster,
) -> None:
    with silent_bot() as silent_url:  # its ladder game lasts while the test looks
        async with (
            serving_bots(create_bot_app({"/beta": RandomBot, "/gamma": RandomBot})) as bots,
            started(cluster, ("worker-a", None), ("worker-b", ONE_GAME)) as (a, b),
        ):
            assert await leader(a) == "worker-a"
            await register(cluster, a, "alpha", silent_url)
            await register(cluster, a, "beta", f"{bots.url}/beta")
            await eventually(lambda: len(ladder_of(b).live) == 1)  # alpha vs beta
            assert schedules(b)
            [pair] = ladder_of(b).live.values()
            assert {pair.x, pair.o} == {"alpha", "beta"}
            await register(cluster, a, "gamma", f"{bots.url}/gamma")
            ws = await join(cluster, a, "ann", bot_after_s=0, time_control="none")
            matched = await until(ws, "matched")
            # Not alpha nor beta, in the ladder game worker-b scheduled: gamma.
            assert matched["opponent"]["name"] == "gamma"
            assert ladder_of(b).games_started == 1


async def test_a_bot_given_to_a_person_on_one_worker_sits_out_the_ladder_another_schedules(
    cluster: Cluster,
) -> None:
    table = {"/alpha": RandomBot, "/beta": RandomBot, "/gamma": RandomBot}
    async with (
        serving_bots(create_bot_app(table)) as bots,
        started(cluster, ("worker-a", None), ("worker-b", TWO_GAMES)) as (a, b),
    ):
        assert await leader(a) == "worker-a"
        await register(cluster, a, "alpha", f"{bots.url}/alpha")  # alone: no ladder game
        ws = await join(cluster, a, "ann", bot_after_s=0, time_control="none")
        matched = await until(ws, "matched")
        assert matched["opponent"]["name"] == "alpha"
        async with cluster.http.ws_connect(a.ws_base + matched["ws_url"]) as game:
            # Ann sits and does not move; the ladder gets two more bots.
            await register(cluster, a, "beta", f"{bots.url}/beta")
            await register(cluster, a, "gamma", f"{bots.url}/gamma")
            await eventually(lambda: ladder_of(b).games_finished >= 1)
            assert schedules(b)
            # Alpha, first in the ladder's line (it never played), is in ann's game.
            assert await ladder_games_of(cluster, a, "alpha") == []
            assert await ladder_games_of(cluster, a, "beta")
            await game.send_str('{"type": "resign"}')
            await until(game, "end")
        # Its game with ann over, alpha is paired again.
        async with asyncio.timeout(TIMEOUT):
            while not await ladder_games_of(cluster, a, "alpha"):
                await asyncio.sleep(0.05)


async def test_a_scheduler_that_takes_over_holds_the_ladder_games_it_inherits(
    cluster: Cluster,
) -> None:
    with silent_bot() as silent_url:
        async with (
            serving_bots(create_bot_app({"/beta": RandomBot, "/gamma": RandomBot})) as bots,
            started(
                cluster, ("worker-a", None), ("worker-b", ONE_GAME), ("worker-d", ONE_GAME)
            ) as (a, b, d),
        ):
            await register(cluster, a, "alpha", silent_url)
            await register(cluster, a, "beta", f"{bots.url}/beta")
            await eventually(lambda: any(len(ladder_of(w).live) == 1 for w in (b, d)))
            old, new = (b, d) if schedules(b) else (d, b)
            await old.stop()  # its ladder game goes on, played by a worker still there
            await eventually(lambda: schedules(new))
            await eventually(lambda: {"alpha", "beta"} <= ladder_of(new).bots_in_play.playing())
            await register(cluster, a, "gamma", f"{bots.url}/gamma")
            ws = await join(cluster, a, "ann", bot_after_s=0, time_control="none")
            matched = await until(ws, "matched")
            assert matched["opponent"]["name"] == "gamma"


# ------------------------------------------------------------- the count in Redis


@asynccontextmanager
async def shared_count(url: str, leases: Leases = LEASES) -> AsyncIterator[ClusterBotsInPlay]:
    """One worker's share of the count (its renewals and writes running)."""
    client = aioredis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    bots = ClusterBotsInPlay(client, leases)
    bots.start()
    try:
        yield bots
    finally:
        await bots.close()
        await client.aclose()


async def test_two_workers_taking_a_bots_last_game_at_once_one_gets_it(cluster: Cluster) -> None:
    async with shared_count(cluster.redis_url) as one, shared_count(cluster.redis_url) as two:
        takes = [
            worker.take(f"queue:{worker_no}-{i}", "Alpha")
            for i in range(10)
            for worker_no, worker in enumerate((one, two))
        ]
        assert sorted(await asyncio.gather(*takes)) == [False] * 19 + [True]
        assert await one.busy() == await two.busy() == frozenset({"alpha"})
        # A pair is held whole or not at all: beta is not held with alpha busy.
        assert not await two.take("ladder:p1", "beta", "ALPHA")
        assert await one.take("ladder:p2", "beta", "gamma")
        assert await two.busy() == frozenset({"alpha", "beta", "gamma"})
        winner = one if "alpha" in one.playing() else two
        [hold] = [hold for hold, bots in winner.holds.items() if bots == ("alpha",)]
        winner.release(hold)
        await eventually_async(lambda: two.busy(), lambda busy: "alpha" not in busy)
        assert await two.take("queue:again", "alpha")


async def eventually_async(read: Callable[[], Any], done: Callable[[Any], bool]) -> Any:
    async with asyncio.timeout(TIMEOUT):
        while not done(value := await read()):
            await asyncio.sleep(0.02)
    return value


async def test_a_dead_workers_holds_lapse_and_a_successor_keeps_them(cluster: Cluster) -> None:
    short = Leases(0.3)  # its holds lapse 0.9 s after its last renewal
    async with shared_count(cluster.redis_url, short) as survivor:
        async with shared_count(cluster.redis_url, short) as doomed:
            assert await doomed.take("ladder:p1", "alpha", "beta")
            assert await doomed.take("queue:q1", "gamma")
            assert await survivor.busy() == frozenset({"alpha", "beta", "gamma"})
            for task in doomed._tasks:  # as if killed: no renewal, no release
                task.cancel()
        await eventually_async(survivor.busy, lambda busy: not busy)
        # A scheduler taking over a game still on holds its bots, lapsed or not.
        survivor.keep("ladder:p1", "alpha", "beta")
        await eventually_async(survivor.busy, lambda busy: busy == {"alpha", "beta"})
        assert not await survivor.take("queue:q2", "beta")
        survivor.release("ladder:p1")
        await eventually_async(survivor.busy, lambda busy: not busy)


async def test_with_redis_out_of_reach_nobody_is_given_a_bot_and_its_holds_lapse(
    cluster: Cluster,
) -> None:
    port = int(cluster.redis_url.rsplit(":", 1)[1].split("/")[0])
    database = cluster.redis_url.rsplit("/", 1)[1]
    with TcpProxy(port) as proxy:
        through = f"redis://127.0.0.1:{proxy.port}/{database}"
        async with (
            shared_count(cluster.redis_url, Leases(0.3)) as direct,
            shared_count(through, Leases(0.3)) as cut_off,
        ):
            assert await cut_off.take("queue:q1", "alpha")
            proxy.refusing = True
            proxy.cut()
            with pytest.raises(BotsInPlayUnknown, match="the cluster's Redis"):
                await cut_off.busy()
            with pytest.raises(BotsInPlayUnknown, match="the cluster's Redis"):
                await cut_off.take("queue:q2", "beta")
            cut_off.release("queue:q1")  # queued: it cannot go through now
            cut_off.keep("ladder:p1", "delta", "eps")
            # Nothing was held on beta's behalf; alpha stays held until it lapses.
            assert "beta" not in await direct.busy()
            await eventually_async(direct.busy, lambda busy: "alpha" not in busy)
            proxy.refusing = False
            # Back: the hold kept meanwhile is written by the next renewal.
            await eventually_async(direct.busy, lambda busy: busy == {"delta", "eps"})
            assert await cut_off.take("queue:q3", "alpha")

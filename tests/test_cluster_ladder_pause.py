"""The ladder's pause on a cluster (``game.cluster_ladder``): ``POST /ladder/pause`` and
``/resume`` through any worker reach the one that schedules, the games in flight play
on and are counted once, the pause outlives a takeover and a worker's restart, and a
cluster started afresh runs its ladder again; a scheduler a bug stopped lets another
worker take over, and waits to lead again once resumed. Workers in this test process sharing a
real PostgreSQL and a real Redis (``tests.test_cluster``), bot servers on loopback; the
switch itself on the real Redis, reached directly or through a proxy that can play dead.

What a test waits for is a state the workers reach; nothing is timed. The leases are
short (``LEASES``): on a loaded machine a stall longer than one may hand the ladder's
lease to the other worker, so the checks look at both workers, not at one scheduler.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import redis.asyncio as aioredis

from bot.bots import CenterBot, RandomBot, ThreatBot
from bot.serve import create_app as create_bot_app
from bot.serve import serving as serving_bots
from game.cluster_ladder import ClusterLadderSwitch
from game.ladder_pairing import Pairing, choose_pairs
from game.ladder_switch import LadderSwitchUnknown
from tests.tcp_proxy import TcpProxy
from tests.test_cluster import Cluster, Worker, workers
from tests.test_cluster_ladder import FAST, finished, ladder_of, rated_as_recorded, schedules
from tests.test_cluster_tournament import LEASES, TIMEOUT, post

Json = dict[str, Any]
OPTIONS: Json = {"leases": LEASES, "ladder": FAST, "host_example_bots": False}


@asynccontextmanager
async def four_bots() -> AsyncIterator[dict[str, str]]:
    """Four bots that answer at once: two ladder games at a time (a bot plays one)."""
    table = {"/threat": ThreatBot, "/center": CenterBot, "/random": RandomBot, "/rand": RandomBot}
    async with serving_bots(create_bot_app(table)) as bots:
        yield {name.lstrip("/"): f"{bots.url}{name}" for name in table}


async def register(cluster: Cluster, worker: Worker, urls: dict[str, str]) -> None:
    for name, url in urls.items():
        status, answer = await post(
            cluster, f"{worker.base}/bots", {"name": name, "url": url, "ladder": True}
        )
        assert status == 201, answer


async def control(cluster: Cluster, worker: Worker, action: str) -> Json:
    """``POST /ladder/<action>`` through ``worker``: the status it answers."""
    status, answer = await post(cluster, f"{worker.base}/ladder/{action}", {})
    assert status == 200, answer
    return answer


async def ladder_status(cluster: Cluster, worker: Worker) -> Json:
    status, answer = await cluster.get(f"{worker.base}/ladder")
    assert status == 200, answer
    return dict(answer)


async def until(check: Callable[[], bool]) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not check():
            await asyncio.sleep(0.05)


def in_flight(*among: Worker) -> int:
    return sum(len(ladder_of(worker)._games) for worker in among)


def paused_everywhere(*among: Worker) -> bool:
    """No worker pairs bots, and one has seen the pause as it went to pair (the
    scheduler: a worker that waits for the lease never reads it)."""
    phases = [ladder_of(worker).phase for worker in among]
    return "pairing" not in phases and "paused" in phases


async def drained(*among: Worker) -> int:
    """Once paused everywhere and the games in flight have ended: the games counted as
    played so far. Their holds on the bots were released as they ended: none is left
    here, and none in Redis once the releases are written."""
    await until(lambda: paused_everywhere(*among) and in_flight(*among) == 0)
    for worker in among:
        assert ladder_of(worker).bots_in_play.playing() == frozenset(), worker.id
    shared = ladder_of(among[0]).bots_in_play
    async with asyncio.timeout(TIMEOUT):
        while await shared.busy():
            await asyncio.sleep(0.05)
    return finished(*among)


def waits_or_schedules(worker: Worker) -> bool:
    """Its ladder's task is alive: it schedules, or waits to take over."""
    task = ladder_of(worker).task
    return task is not None and not task.done()


async def test_a_pause_and_a_resume_through_the_scheduler_go_on_where_it_was(
    cluster: Cluster,
) -> None:
    async with four_bots() as urls, workers(cluster, "worker-a", "worker-b", **OPTIONS) as both:
        a, b = both
        await until(lambda: schedules(a) or schedules(b))
        scheduler = a if schedules(a) else b
        await register(cluster, scheduler, urls)
        await until(lambda: finished(a, b) >= 4)
        paused = await control(cluster, scheduler, "pause")
        assert paused["enabled"] and paused["running"] is False
        # Its games in flight play on and end (counted once: checked at the end);
        # then no bot is held, and every worker says the ladder is paused.
        played = await drained(a, b)
        for worker in (a, b):
            assert (await ladder_status(cluster, worker))["running"] is False
        resumed = await control(cluster, scheduler, "resume")
        assert resumed["running"] is True
        # It schedules again (before the fix: it kept the lease it could no longer
        # claim, and nobody scheduled).
        await until(lambda: finished(a, b) >= played + 4)
        for worker in (a, b):
            assert (await ladder_status(cluster, worker))["running"] is True
    rated, games = await rated_as_recorded(cluster.db_url)
    assert rated >= finished(a, b) and games == 2 * rated


async def test_a_pause_and_a_resume_through_the_other_worker_reach_the_scheduler(
    cluster: Cluster,
) -> None:
    async with four_bots() as urls, workers(cluster, "worker-a", "worker-b", **OPTIONS) as both:
        a, b = both
        await until(lambda: schedules(a) or schedules(b))
        scheduler, other = (a, b) if schedules(a) else (b, a)
        await register(cluster, other, urls)
        await until(lambda: finished(a, b) >= 4)
        paused = await control(cluster, other, "pause")
        assert paused["running"] is False
        # The scheduler says so too (before the fix it played on, and the other worker
        # stopped waiting to take over instead).
        assert (await ladder_status(cluster, scheduler))["running"] is False
        played = await drained(a, b)
        assert waits_or_schedules(a) and waits_or_schedules(b)
        resumed = await control(cluster, other, "resume")
        assert resumed["running"] is True
        await until(lambda: finished(a, b) >= played + 4)
        assert (await ladder_status(cluster, scheduler))["running"] is True


async def test_the_pause_outlives_a_takeover_and_a_restart_not_a_fresh_cluster(
    cluster: Cluster,
) -> None:
    async with four_bots() as urls:
        async with workers(cluster, "worker-a", "worker-b", **OPTIONS) as both:
            a, b = both
            await until(lambda: schedules(a) or schedules(b))
            scheduler, other = (a, b) if schedules(a) else (b, a)
            await register(cluster, other, urls)
            await until(lambda: finished(a, b) >= 2)
            await control(cluster, scheduler, "pause")
            # The scheduler stops: the other takes the ladder over, keeps the books and
            # the holds of the games it inherits, and pairs nobody.
            await scheduler.stop()
            await until(lambda: schedules(other))
            assert (await ladder_status(cluster, other))["running"] is False
            await drained(other)
            # A worker restarted beside a live one (no ladder of its own) stays paused.
            async with workers(cluster, "worker-c", leases=LEASES, host_example_bots=False):
                await other.stop()
                async with workers(cluster, "worker-d", **OPTIONS) as (restarted,):
                    await until(lambda: schedules(restarted))
                    assert (await ladder_status(cluster, restarted))["running"] is False
                    assert await drained(restarted) == 0
                    assert ladder_of(restarted).games_started == 0
        # Every worker stopped: a cluster started afresh runs its ladder again.
        async with workers(cluster, "worker-e", **OPTIONS) as (fresh,):
            assert (await ladder_status(cluster, fresh))["running"] is True
            await until(lambda: ladder_of(fresh).games_finished >= 2)


async def test_a_scheduler_a_bug_stopped_hands_the_ladder_over_and_resumes_as_a_standby(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    broke: list[str] = []

    def pairs_once_broken(*args: Any, **kwargs: Any) -> list[Pairing]:
        if not broke:  # the next pairing, on whichever worker schedules
            broke.append("once")
            raise RuntimeError("a bug in the pairing")
        return choose_pairs(*args, **kwargs)

    async with four_bots() as urls, workers(cluster, "worker-a", "worker-b", **OPTIONS) as both:
        a, b = both
        await register(cluster, a, urls)
        await until(lambda: finished(a, b) >= 2)
        monkeypatch.setattr("game.ladder.choose_pairs", pairs_once_broken)
        await until(lambda: bool(broke) and not (waits_or_schedules(a) and waits_or_schedules(b)))
        stopped, other = (b, a) if waits_or_schedules(a) else (a, b)
        assert (await ladder_status(cluster, stopped))["running"] is False
        # It let the lease go with its games' books: the other worker takes over (before
        # the fix nobody did, and a resume waited for the lease it held itself).
        await until(lambda: schedules(other))
        played = finished(a, b)
        await until(lambda: finished(a, b) >= played + 4)
        resumed = await control(cluster, stopped, "resume")
        assert resumed["running"] is True and waits_or_schedules(stopped)
    rated, games = await rated_as_recorded(cluster.db_url)
    assert rated >= finished(a, b) and games == 2 * rated


async def test_the_switch_is_shared_and_says_when_redis_is_out_of_reach(
    cluster: Cluster,
) -> None:
    port = int(cluster.redis_url.rsplit(":", 1)[1].split("/")[0])
    database = cluster.redis_url.rsplit("/", 1)[1]
    direct_client = aioredis.from_url(cluster.redis_url)
    with TcpProxy(port) as proxy:
        proxied_client = aioredis.from_url(f"redis://127.0.0.1:{proxy.port}/{database}")
        try:
            here = ClusterLadderSwitch(direct_client, "worker-a")
            there = ClusterLadderSwitch(proxied_client, "worker-b")
            assert not await there.read()
            await here.pause()
            assert here.paused and await there.read() and there.paused
            assert await direct_client.get("htttx:ladder-paused") == b"worker-a"
            await there.resume()
            assert not await here.read()
            await here.pause()
            assert await there.read()
            proxy.refusing = True
            proxy.cut()
            # Out of reach: nothing changes, it says why, and it keeps what it knew.
            with pytest.raises(LadderSwitchUnknown, match="the cluster's Redis"):
                await there.resume()
            with pytest.raises(LadderSwitchUnknown, match="the cluster's Redis"):
                await there.read()
            assert there.paused and await here.read()
            proxy.refusing = False
            await there.resume()
            assert not await here.read()
            await here.pause()
            await there.reset()  # a cluster started afresh
            assert not there.paused and not await here.read()
        finally:
            await proxied_client.aclose()
            await direct_client.aclose()


async def test_a_worker_that_cannot_reach_redis_refuses_to_pause_with_a_reason(
    cluster: Cluster,
) -> None:
    port = int(cluster.redis_url.rsplit(":", 1)[1].split("/")[0])
    database = cluster.redis_url.rsplit("/", 1)[1]
    with TcpProxy(port) as proxy:
        through = dataclasses.replace(
            cluster, redis_url=f"redis://127.0.0.1:{proxy.port}/{database}"
        )
        async with workers(through, "worker-a", **OPTIONS) as (a,):
            await until(lambda: schedules(a) and ladder_of(a).phase == "pairing")
            proxy.refusing = True
            proxy.cut()
            for action in ("pause", "resume"):
                status, answer = await post(cluster, f"{a.base}/ladder/{action}", {})
                assert status == 503, answer
                assert answer["detail"].startswith(f"cannot {action} the ladder now: ")
                assert "the cluster's Redis" in answer["detail"]
            # GET /ladder answers all the same, with what the worker knew.
            assert (await ladder_status(cluster, a))["running"] is True
            proxy.refusing = False
            assert (await control(cluster, a, "pause"))["running"] is False

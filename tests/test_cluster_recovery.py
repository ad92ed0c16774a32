"""A cluster's workers as processes of their own (``python -m game.serve --redis ...``),
sharing a real PostgreSQL (tests/postgres.py) and Redis (tests/redis_server.py): a
worker killed with ``kill -9`` leaves its live games to another worker, which records
them aborted with the cause (``game.cluster_sweep``); and the analysis of a game
reaches its spectators on other workers. Where a test looks into a worker (its game,
its heartbeats), the workers run in the test's process (tests/test_cluster.py)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis.asyncio as aioredis

from game.cluster import Leases, Message, encode_message, games_of_key, runs_key, spectate_channel
from game.cluster_redis import ClusterNode, _Mirror, _Setup
from game.fanout import Spectator
from game.rating_book import RatingBook
from game.store import GameStore
from tests.postgres import PostgresCluster
from tests.redis_server import RedisServer
from tests.test_cluster import Cluster as InProcessCluster
from tests.test_cluster import _free_port
from tests.test_cluster import _record as in_process_record
from tests.test_cluster import open_cluster as open_in_process_cluster
from tests.test_cluster import workers as in_process_workers
from tests.test_server import choose, closed, until

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60.0  # only against hangs (workers start slowly on a loaded machine)
#: Short leases: a killed worker is found dead about a second after its last heartbeat.
LEASE = 1.0
DETAIL = "aborted: the worker worker-a running it stopped (its lease expired)"
MATCH = {"win_distance": 4, "turn_limit": 30}

Json = dict[str, Any]
#: A Redis database per test, from the top (tests/test_cluster.py counts from 1).
_databases = itertools.count(15, -1)


@dataclass
class WorkerProcess:
    """One worker: ``python -m game.serve`` on a loopback port of its own."""

    id: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_base(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def kill(self) -> None:
        """``kill -9``: no close, no cleanup, its keys stay until their leases end."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    async def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                await asyncio.to_thread(self.process.wait, 30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                await asyncio.to_thread(self.process.wait)


@dataclass
class Cluster:
    db_url: str
    redis_url: str
    http: aiohttp.ClientSession
    redis: aioredis.Redis
    logs: Path
    workers: list[WorkerProcess] = field(default_factory=list)

    def command(self, worker_id: str, port: int, *options: str) -> list[str]:
        return [
            sys.executable, "-m", "game.serve",
            "--port", str(port),
            "--db", self.db_url,
            "--redis", self.redis_url,
            "--worker-id", worker_id,
            "--lease", str(LEASE),
            "--log-level", "warning",
            *options,
        ]  # fmt: skip

    def spawn(
        self, worker_id: str, port: int, *options: str
    ) -> tuple[subprocess.Popen[bytes], Path]:
        """The worker's process, its stderr in a log file of its own."""
        log = self.logs / f"{worker_id}-{len(self.workers)}-{port}.log"
        with log.open("wb") as stderr:
            command = self.command(worker_id, port, *options)
            return subprocess.Popen(
                command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr, env=os.environ
            ), log

    async def start(self, worker_id: str, *options: str) -> WorkerProcess:
        port = _free_port()
        process, log = self.spawn(worker_id, port, *options)
        worker = WorkerProcess(worker_id, port, process, log)
        self.workers.append(worker)
        async with asyncio.timeout(TIMEOUT):
            while True:
                assert process.poll() is None, f"{worker_id} exited:\n{log.read_text()}"
                try:
                    async with self.http.get(f"{worker.base}/health") as response:
                        if response.status == 200:
                            return worker
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)

    async def get(self, url: str) -> tuple[int, Any]:
        async with self.http.get(url) as response:
            return response.status, await response.json()

    async def run_of(self, base: str, worker_id: str) -> str:
        """The id of the run of ``worker_id``, as the worker at ``base`` lists it."""
        _, listed = await self.get(f"{base}/cluster")
        return str(next(info["run"] for info in listed["workers"] if info["id"] == worker_id))

    async def new_game(self, base: str) -> Json:
        """A game of two people, which stays live as long as nobody moves."""
        body = {"player_x": {"type": "human"}, "player_o": {"type": "human"}, "match_config": MATCH}
        async with self.http.post(f"{base}/game/new", json=body) as response:
            assert response.status == 200, await response.text()
            created: Json = await response.json()
            return created

    async def record(self, base: str, game_id: str, *, moves: int = 0) -> Json:
        """The game's record once it has a result (or ``moves`` moves, while it runs)."""
        async with asyncio.timeout(TIMEOUT):
            while True:
                status, record = await self.get(f"{base}/games/{game_id}")
                assert status == 200, record
                if record["result"] is not None or (moves and len(record["moves"]) >= moves):
                    return dict(record)
                await asyncio.sleep(0.05)


@asynccontextmanager
async def open_cluster(
    postgres_cluster: PostgresCluster, redis_server: RedisServer
) -> AsyncIterator[Cluster]:
    redis_url = redis_server.url.rsplit("/", 1)[0] + f"/{next(_databases) % 16}"
    client = aioredis.from_url(redis_url)
    await client.flushdb()  # what an earlier test left there
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    with tempfile.TemporaryDirectory(prefix="htttx-workers-") as logs:
        async with aiohttp.ClientSession(timeout=timeout) as http:
            cluster = Cluster(postgres_cluster.new_database(), redis_url, http, client, Path(logs))
            try:
                yield cluster
            finally:
                await asyncio.gather(*(worker.stop() for worker in cluster.workers))
                await client.aclose()


@pytest.fixture
async def cluster(
    postgres_cluster: PostgresCluster, redis_server: RedisServer
) -> AsyncIterator[Cluster]:
    """This module's ``cluster``: worker processes (tests/test_cluster.py's runs in this one)."""
    async with open_cluster(postgres_cluster, redis_server) as opened:
        yield opened


async def test_a_killed_workers_live_games_are_recorded_aborted_by_another_worker(
    cluster: Cluster,
) -> None:
    a = await cluster.start("worker-a")
    b = await cluster.start("worker-b")
    played, idle = await cluster.new_game(a.base), await cluster.new_game(a.base)
    game_id = played["game_id"]
    # The played one is rated (as the arena's games are): pending until it ends.
    store = await GameStore.open(cluster.db_url)
    try:
        await RatingBook(store).track(game_id, "alice", "bob")
        run_a = await cluster.run_of(b.base, "worker-a")
        assert await cluster.redis.smembers(games_of_key(run_a)) == {
            played["game_id"].encode(),
            idle["game_id"].encode(),
        }
        seats = [  # all seated (a seat that never comes forfeits): through A or B
            await cluster.http.ws_connect(f"{base}/ws?token={game[token]}")
            for game in (played, idle)
            for base, token in ((a.ws_base, "token_x"), (b.ws_base, "token_o"))
        ]
        o = seats[1]
        async with cluster.http.ws_connect(f"{b.ws_base}/spectate/{game_id}") as spectator:
            await until(spectator, "setup")
            request = await until(o, "move_request")
            await o.send_str(json.dumps(choose(request, MATCH)))
            await until(spectator, "board_update")
            await cluster.record(b.base, game_id, moves=1)  # the move is in the database
            a.kill()
            # B's spectator is told; the seats relayed through B are cut.
            end = await until(spectator, "end")
        cut = [await closed(seat) for seat in seats[1::2]]
        for seat in seats:
            await seat.close()
        records = [await cluster.record(b.base, g["game_id"]) for g in (played, idle)]
        _, aborted = await cluster.get(f"{b.base}/games?status=aborted")
        rating = await store.ratings.status(game_id)
        pending = await store.ratings.pending()
    finally:
        await store.close()
    # Swept: the dead run's set and entry are gone; B alone is listed.
    assert not await cluster.redis.exists(games_of_key(run_a))
    assert not await cluster.redis.hexists(runs_key(), run_a)
    _, listed = await cluster.get(f"{b.base}/cluster")
    assert [info["id"] for info in listed["workers"]] == ["worker-b"]
    assert end["winner"] is None and end["reason"] == "draw" and end["detail"] == DETAIL
    for record in records:
        result = record["result"]
        assert (result["winner"], result["reason"], result["cause"]) == (None, "draw", "aborted")
        assert "aborted: " + result["detail"] == DETAIL
    assert len(records[0]["moves"]) == 1 and records[1]["moves"] == []  # the moves stay
    assert {played["game_id"], idle["game_id"]} <= {g["game_id"] for g in aborted["items"]}
    # kill -9: the kernel closes A's sockets, so the relays see it before the lease ends.
    assert cut == [(1011, "the connection to the game's worker broke")] * 2
    assert rating == "void" and pending == []  # an aborted game counts for nobody


async def test_a_worker_that_stops_cleanly_leaves_nothing_to_sweep(cluster: Cluster) -> None:
    a = await cluster.start("worker-a")
    b = await cluster.start("worker-b")
    created = await cluster.new_game(a.base)
    run_a = await cluster.run_of(b.base, "worker-a")
    await a.stop()  # its games end as a shutdown ends them, recorded by A itself
    record = await cluster.record(b.base, created["game_id"])
    assert not await cluster.redis.exists(games_of_key(run_a))
    assert run_a.encode() not in await cluster.redis.hkeys(runs_key())
    assert record["result"]["cause"] == "aborted"
    assert "worker-a" not in record["result"]["detail"]  # not swept: stopped by its worker


async def test_a_worker_restarted_with_its_id_after_kill_9_waits_for_its_lease_to_end(
    cluster: Cluster,
) -> None:
    a = await cluster.start("worker-a")
    b = await cluster.start("worker-b")
    created = await cluster.new_game(a.base)
    run_a = await cluster.run_of(b.base, "worker-a")
    a.kill()
    again = await cluster.start("worker-a")  # its previous run's key expires first
    record = await cluster.record(again.base, created["game_id"])
    _, listed = await cluster.get(f"{again.base}/cluster")
    # Yet a second process of a live worker's id is refused: they would take each
    # other for dead.
    port = _free_port()
    duplicate, log = cluster.spawn("worker-b", port)
    cluster.workers.append(WorkerProcess("worker-b", port, duplicate, log))  # stopped at the end
    status = await asyncio.to_thread(duplicate.wait, TIMEOUT)
    refused = log.read_text()
    assert "aborted: " + record["result"]["detail"] == DETAIL
    assert sorted(info["id"] for info in listed["workers"]) == ["worker-a", "worker-b"]
    assert run_a not in {info["run"] for info in listed["workers"]}  # a new run
    assert status == 2
    assert "--worker-id worker-b: a live worker of the cluster has this id" in refused


async def test_a_spectator_on_another_worker_gets_the_analysis_of_each_position(
    cluster: Cluster,
) -> None:
    a = await cluster.start("worker-a", "--analysis-bot", "threat")
    b = await cluster.start("worker-b")
    created = await cluster.new_game(a.base)
    game_id = created["game_id"]
    async with (
        cluster.http.ws_connect(f"{a.ws_base}/ws?token={created['token_x']}") as x,
        cluster.http.ws_connect(f"{a.ws_base}/ws?token={created['token_o']}") as o,
        cluster.http.ws_connect(f"{b.ws_base}/spectate/{game_id}") as spectator,
    ):
        await until(spectator, "setup")
        seats = {"x": x, "o": o}
        seen: list[Json] = []
        for ply in range(1, 4):
            side = "o" if ply % 2 else "x"
            request = await until(seats[side], "move_request")
            await seats[side].send_str(json.dumps(choose(request, MATCH)))
            # Analysed on A, which runs the game, though nobody watches it there.
            seen.append(await _analysis(spectator, ply))
        # A latecomer on B gets the analysis so far right after its setup.
        async with cluster.http.ws_connect(f"{b.ws_base}/spectate/{game_id}") as late:
            setup = await until(late, "setup")
            backlog = [await until(late, "analysis") for _ in range(4)]
    assert all(p["bot"] == "ThreatBot" for p in seen)
    assert len(setup["moves"]) == 3
    assert [p["ply"] for p in backlog] == [0, 1, 2, 3]
    assert backlog[1:] == seen


async def _analysis(ws: aiohttp.ClientWebSocketResponse, ply: int) -> Json:
    """The next ``analysis`` packet of position ``ply``, skipping any other packet."""
    while True:
        packet = await until(ws, "analysis")
        if packet["ply"] == ply:
            return packet


async def _people_game(cluster: InProcessCluster, base: str) -> Json:
    """A game of two people on the in-process worker at ``base``: its ``/game/new`` answer."""
    body = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}
    async with cluster.http.post(f"{base}/game/new", json=body) as response:
        created: Json = await response.json()
        return created


async def test_the_owner_stops_analysing_for_other_workers_once_their_spectators_leave(
    postgres_cluster: PostgresCluster, redis_server: RedisServer
) -> None:
    # Workers in this process: the owner's game is looked at directly.
    async with (
        open_in_process_cluster(postgres_cluster, redis_server) as in_process,
        in_process_workers(in_process, "worker-a", "worker-b") as (a, b),
    ):
        game_id = (await _people_game(in_process, a.base))["game_id"]
        game = a.server.app.state.arena.manager._games[game_id]
        assert not game.watched_remotely
        async with in_process.http.ws_connect(f"{b.ws_base}/spectate/{game_id}") as spectator:
            await until(spectator, "setup")
            assert game.watched_remotely  # from its setup on
        # B's relay unsubscribes as its last spectator leaves; A sees it at a heartbeat.
        async with asyncio.timeout(TIMEOUT):
            while game.watched_remotely:
                await asyncio.sleep(0.05)


async def test_a_worker_taken_for_dead_while_it_runs_ends_the_games_recorded_aborted(
    postgres_cluster: PostgresCluster, redis_server: RedisServer
) -> None:
    async with (
        open_in_process_cluster(postgres_cluster, redis_server) as in_process,
        in_process_workers(in_process, "worker-a", "worker-b") as (a, b),
    ):
        created = await _people_game(in_process, a.base)
        game_id = created["game_id"]
        x = await in_process.http.ws_connect(f"{a.ws_base}/ws?token={created['token_x']}")
        o = await in_process.http.ws_connect(f"{a.ws_base}/ws?token={created['token_o']}")
        await until(o, "move_request")
        # A's heartbeats stop (a long pause): B takes it for dead and sweeps its game.
        node = a.server.app.state.arena.manager.cluster
        renew = node._tasks[0]
        renew.cancel()
        async with asyncio.timeout(TIMEOUT):
            while (await in_process.get(f"{b.base}/games/{game_id}"))[1]["result"] is None:
                await asyncio.sleep(0.05)
        # A game started on A meanwhile is A's own: kept when A finds out.
        later = (await _people_game(in_process, a.base))["game_id"]
        node._tasks[0] = asyncio.get_running_loop().create_task(node._renew())
        ends = [await until(seat, "end") for seat in (x, o)]
        await x.close()
        await o.close()
        _, record = await in_process.get(f"{b.base}/games/{game_id}")
        assert a.server.app.state.arena.manager.runs(later)
        kept = await node.redis.smembers(games_of_key(node.run))
    assert ends[0] == ends[1] and ends[0]["detail"] == DETAIL
    assert "aborted: " + record["result"]["detail"] == DETAIL  # as the sweeper recorded it
    assert kept == {later.encode()}


async def test_a_worker_that_dies_right_after_writing_a_games_record_leaves_it_to_the_sweeper(
    postgres_cluster: PostgresCluster, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``kill -9`` between a new game's commit and whatever comes after it: the record
    says running, and the sweeper must still find the game among the dead run's."""
    async with (
        open_in_process_cluster(postgres_cluster, redis_server) as in_process,
        in_process_workers(in_process, "worker-a", "worker-b") as (a, b),
    ):
        manager = a.server.app.state.arena.manager
        create_game = manager.store.create_game
        written: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        revived = asyncio.Event()

        async def commit_then_die(record: Any) -> None:
            await create_game(record)
            written.set_result(record.game_id)
            await revived.wait()  # dead: nothing after the commit runs until the end

        monkeypatch.setattr(manager.store, "create_game", commit_then_die)
        creating = asyncio.create_task(_people_game(in_process, a.base))
        async with asyncio.timeout(TIMEOUT):
            game_id = await written
        status, running = await in_process.get(f"{b.base}/games/{game_id}")
        assert status == 200 and running["result"] is None, running
        node = manager.cluster
        node._tasks[0].cancel()  # A's heartbeats stop: its lease runs out
        record = await in_process_record(in_process, b.base, game_id)
        revived.set()  # let the request end, so that A stops cleanly
        await creating
    assert record["result"]["cause"] == "aborted"
    assert "aborted: " + record["result"]["detail"] == DETAIL


async def test_a_game_whose_record_is_written_while_its_worker_is_swept_stays_that_workers(
    postgres_cluster: PostgresCluster, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker taken for dead (a pause longer than its lease) while a new game's record
    is on its way: the game plays on there, and is back in its run's set, so that the
    sweeper still finds it should the worker die later."""
    async with (
        open_in_process_cluster(postgres_cluster, redis_server) as in_process,
        in_process_workers(in_process, "worker-a", "worker-b") as (a, _b),
    ):
        manager = a.server.app.state.arena.manager
        node = manager.cluster
        create_game = manager.store.create_game
        writing: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        resumed = asyncio.Event()

        async def slow_commit(record: Any) -> None:
            writing.set_result(record.game_id)
            await resumed.wait()
            await create_game(record)

        monkeypatch.setattr(manager.store, "create_game", slow_commit)
        creating = asyncio.create_task(_people_game(in_process, a.base))
        async with asyncio.timeout(TIMEOUT):
            game_id = await writing
            assert await node.redis.sismember(games_of_key(node.run), game_id)
            node._tasks[0].cancel()  # A's heartbeats stop: B sweeps its run
            while await node.redis.hexists(runs_key(), node.run):
                await asyncio.sleep(0.05)
            node._tasks[0] = asyncio.get_running_loop().create_task(node._renew())
            while not await node.redis.sismember(games_of_key(node.run), game_id):
                await asyncio.sleep(0.05)  # A rejoined, and took the game back
            resumed.set()
            created = await creating
            _, record = await in_process.get(f"{a.base}/games/{game_id}")
            running = manager.runs(game_id)
    assert created["game_id"] == game_id
    assert running and record["result"] is None


async def test_a_relay_passes_on_the_analyses_to_a_spectator_whose_setup_is_ahead(
    redis_server: RedisServer,
) -> None:
    # A worker relaying game g: its spectator's setup shows 3 updates (seq 0 to 2), of
    # which none has reached this worker yet (the first came before it subscribed).
    redis_url = redis_server.url.rsplit("/", 1)[0] + f"/{next(_databases) % 16}"
    node = await ClusterNode.open(
        redis_url, worker_id="b", url="http://127.0.0.1:1", leases=Leases(LEASE), max_games=1
    )
    texts = {
        "u1": '{"type":"board_update","n":1}',
        "a2": '{"type":"analysis","ply":3}',
        "u2": '{"type":"board_update","n":2}',
        "u3": '{"type":"board_update","n":3}',
        "end": '{"type":"end"}',
    }
    messages = [
        Message("u", 1, texts["u1"]),
        Message("a", 2, texts["a2"]),  # of the position its setup shows
        Message("u", 2, texts["u2"]),
        Message("u", 3, texts["u3"]),
        Message("e", 4, texts["end"]),
    ]
    try:
        mirror = await _Mirror.open(node, "g", 0.0)
        spectator = Spectator(64)
        mirror.join(spectator, _Setup(3, ['{"type":"setup"}'], False))
        for message in messages:
            await node.redis.publish(spectate_channel("g"), encode_message(message))
        got: list[str] = []
        async with asyncio.timeout(TIMEOUT):
            while texts["end"] not in got:
                got += spectator.take() or []
                await asyncio.sleep(0.01)
        await mirror.close()
    finally:
        await node.close()
    # The updates its setup shows are left out; the analysis and the rest come.
    assert got == [texts["a2"], texts["u3"], texts["end"]]

"""Two workers of a cluster in one test process: two game servers sharing a PostgreSQL
database (tests/postgres.py) and a Redis (tests/redis_server.py), each on a loopback
port of its own."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from game.cluster import DEFAULT_WORK_SLOTS, ClusterSettings, Leases, game_key, token_key
from game.serve import main as serve_main
from game.server import GameServer, create_app, serving
from tests.postgres import PostgresCluster
from tests.redis_server import RedisServer
from tests.test_openapi_contract import Contract
from tests.test_server import (
    HUMAN_MATCH,
    choose,
    closed,
    play_until_end,
    receive,
    receive_type,
    until,
)

TIMEOUT = 15.0  # only against hangs
#: Short leases, so a stopped worker drops out soon.
LEASES = Leases(0.6)

Json = dict[str, Any]
_databases = itertools.count(1)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Worker:
    id: str
    server: GameServer
    stack: AsyncExitStack

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    @property
    def ws_base(self) -> str:
        return "ws" + self.base[4:]

    async def stop(self) -> None:
        await self.stack.aclose()


@dataclass
class Cluster:
    db_url: str
    redis_url: str
    http: aiohttp.ClientSession

    async def worker(
        self,
        worker_id: str,
        *,
        leases: Leases = LEASES,
        work_slots: int = DEFAULT_WORK_SLOTS,
        **options: Any,
    ) -> Worker:
        """A worker listening on a port of its own; ``options`` for ``create_app``."""
        port = _free_port()
        settings = ClusterSettings(
            redis_url=self.redis_url,
            url=f"http://127.0.0.1:{port}",
            worker_id=worker_id,
            leases=leases,
            work_slots=work_slots,
        )
        stack = AsyncExitStack()
        app = create_app(db_url=self.db_url, cluster=settings, **options)
        server = await stack.enter_async_context(serving(app, port=port))
        return Worker(worker_id, server, stack)

    async def get(self, url: str) -> tuple[int, Any]:
        async with self.http.get(url) as response:
            return response.status, await response.json()

    async def worker_ids(self, base: str) -> list[str]:
        status, answer = await self.get(f"{base}/cluster")
        assert status == 200, answer
        return [info["id"] for info in answer["workers"]]


@asynccontextmanager
async def open_cluster(
    postgres_cluster: PostgresCluster, redis_server: RedisServer
) -> AsyncIterator[Cluster]:
    # A Redis database of its own per test: no worker of another test is listed.
    redis_url = redis_server.url.rsplit("/", 1)[0] + f"/{next(_databases) % 16}"
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        yield Cluster(postgres_cluster.new_database(), redis_url, http)


@pytest.fixture
async def cluster(
    postgres_cluster: PostgresCluster, redis_server: RedisServer
) -> AsyncIterator[Cluster]:
    """The test's ``cluster`` on the suite's servers, the workers for the test to start.
    For every module (``tests/conftest.py``); ``tests/test_cluster_recovery.py`` has its
    own, of worker processes."""
    async with open_cluster(postgres_cluster, redis_server) as opened:
        yield opened


@asynccontextmanager
async def workers(
    cluster: Cluster, *worker_ids: str, **options: Any
) -> AsyncIterator[list[Worker]]:
    """The workers ``worker_ids``, started in turn with ``Cluster.worker(id, **options)``;
    stopped in reverse order on exit, those a test stopped itself too (a second stop
    does nothing)."""
    async with AsyncExitStack() as stack:
        started = []
        for worker_id in worker_ids:
            worker = await cluster.worker(worker_id, **options)
            stack.push_async_callback(worker.stop)
            started.append(worker)
        yield started


async def _new_game(cluster: Cluster, base: str, player_o: Json) -> Json:
    """A game of a person (X) and ``player_o`` on ``base``: its ``/game/new`` answer."""
    body = {"player_x": {"type": "human"}, "player_o": player_o, "match_config": HUMAN_MATCH}
    async with cluster.http.post(f"{base}/game/new", json=body) as response:
        assert response.status == 200
        created: Json = await response.json()
        return created


async def _record(cluster: Cluster, base: str, game_id: str) -> Json:
    """The game's record on ``base`` once it has its result."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            status, record = await cluster.get(f"{base}/games/{game_id}")
            assert status == 200
            if record["result"] is not None:
                return dict(record)
            await asyncio.sleep(0.05)


async def test_each_worker_lists_both_and_says_so_in_health(cluster: Cluster) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        for worker in (a, b):
            assert sorted(await cluster.worker_ids(worker.base)) == ["worker-a", "worker-b"]
        status, listed = await cluster.get(f"{a.base}/cluster")
        assert listed["worker"] == "worker-a"
        first = next(info for info in listed["workers"] if info["id"] == "worker-a")
        assert first["url"] == a.base and first["status"] == "live"
        assert first["live_games"] == 0 and first["load"] == 0
        status, health = await cluster.get(f"{b.base}/health")
        assert status == 200
        assert health["worker"] == "worker-b" and health["workers"] == 2
        status, document = await cluster.get(f"{a.base}/openapi.json")
        assert {"/cluster", "/cluster/games/{game_id}/setup"} <= set(document["paths"])
        # A worker's answers fit the schemas a generated client reads them with.
        contract = Contract(document)
        json_type = "application/json"
        assert contract.problems("get", "/cluster", 200, json_type, listed) == []
        assert contract.problems("get", "/health", 200, json_type, health) == []


async def test_a_spectator_on_b_follows_a_game_run_by_a_move_by_move(cluster: Cluster) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        created = await _new_game(
            cluster, a.base, {"type": "bot", "bot_url": f"{a.base}/bots/center"}
        )
        game_id = created["game_id"]
        node = a.server.app.state.arena.manager.cluster
        owners = await node.redis.mget([game_key(game_id), token_key(created["token_x"])])
        assert owners == [b"worker-a", b"worker-a"]  # registered before the answer
        # Any worker lists each worker's games when asked.
        _, listed = await cluster.get(f"{b.base}/cluster?games=true")
        games = {info["id"]: info["games"] for info in listed["workers"]}
        assert games == {"worker-a": [game_id], "worker-b": []}
        _, plain = await cluster.get(f"{b.base}/cluster")
        assert all("games" not in info for info in plain["workers"])
        _, off = await cluster.get(f"{b.base}/cluster?games=false")
        assert all("games" not in info for info in off["workers"])
        status, refused = await cluster.get(f"{b.base}/cluster?games=banana")
        assert (status, refused) == (422, {"detail": "games: expected true or false, got 'banana'"})
        human_url = f"{a.ws_base}/ws?token={created['token_x']}"
        async with cluster.http.ws_connect(human_url) as human:
            await receive_type(human, "setup")
            request = await receive_type(human, "move_request")
            async with cluster.http.ws_connect(f"{b.ws_base}/spectate/{game_id}") as spectator:
                setup = await receive_type(spectator, "setup")
                assert setup["game_id"] == game_id
                assert [m["side"] for m in setup["moves"]] == ["o"]
                # Each move of the human, then of the bot, reaches B's spectator.
                await human.send_str(json.dumps(choose(request, HUMAN_MATCH)))
                for side in ("x", "o"):
                    update = await receive_type(spectator, "board_update")
                    assert update["move"]["side"] == side, update
                end = await play_until_end(human, HUMAN_MATCH)
                updates = []
                while (packet := await receive(spectator)) is not None:
                    updates.append(packet)
        # Over: B reads its record from the shared database, and shows it too.
        record = await _record(cluster, b.base, game_id)
        async with cluster.http.ws_connect(f"{b.ws_base}/spectate/{game_id}?board=0") as late:
            replay = await receive_type(late, "setup")
            assert len(replay["moves"]) == len(record["moves"])
            assert (await receive_type(late, "end"))["winner"] == end["winner"]
        # One publish per move from B's fetch of the setup on (it showed one
        # move), and one for the end, whatever the spectators.
        node = a.server.app.state.arena.manager.cluster
        published = node.published
        # Its owner's keys (the game's, the seats') go once it is over.
        keys = [game_key(game_id), token_key(created["token_x"])]
        async with asyncio.timeout(TIMEOUT):
            while await node.redis.exists(*keys):
                await asyncio.sleep(0.05)
    assert updates[-1]["type"] == "end" and updates[-1]["winner"] == end["winner"]
    assert [p["type"] for p in updates[:-1]] == ["board_update"] * (len(record["moves"]) - 3)
    assert published == len(record["moves"]) - 1 + 1


async def test_a_game_nobody_watches_from_another_worker_is_not_published(cluster: Cluster) -> None:
    async with workers(cluster, "worker-a") as (a,):
        body = {
            "player_x": {"type": "bot", "bot_url": f"{a.base}/bots/center"},
            "player_o": {"type": "bot", "bot_url": f"{a.base}/bots/random"},
            "match_config": {"turn_limit": 30},
        }
        async with cluster.http.post(f"{a.base}/game/new", json=body) as response:
            assert response.status == 200
            game_id = (await response.json())["game_id"]
        # A spectator on the owner itself: no other worker needs a message.
        async with cluster.http.ws_connect(f"{a.ws_base}/spectate/{game_id}") as spectator:
            await receive_type(spectator, "setup")
            while (packet := await receive(spectator)) is not None:
                last = packet
        assert last["type"] == "end"
        node = a.server.app.state.arena.manager.cluster
        assert node.published == 0


async def test_a_compact_spectator_on_b_joining_mid_game_gets_the_same_stream(
    cluster: Cluster,
) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        center = {"type": "bot", "bot_url": f"{a.base}/bots/center"}
        created = await _new_game(cluster, b.base, center)  # on B this time: A relays
        game_id = created["game_id"]
        async with cluster.http.ws_connect(f"{b.ws_base}/ws?token={created['token_x']}") as human:
            await receive_type(human, "setup")
            request = await receive_type(human, "move_request")
            await human.send_str(json.dumps(choose(request, HUMAN_MATCH)))
            request = await receive_type(human, "move_request")
            streams = []
            for base in (b.ws_base, a.ws_base):  # the owner's, then the relayed one
                socket_ = await cluster.http.ws_connect(f"{base}/spectate/{game_id}?board=0")
                streams.append(socket_)
                assert len((await receive_type(socket_, "setup"))["moves"]) == 3
            await human.send_str(json.dumps(choose(request, HUMAN_MATCH)))
            end = await play_until_end(human, HUMAN_MATCH)
            got = []
            for socket_ in streams:
                packets = []
                while (packet := await receive(socket_)) is not None:
                    packets.append(packet)
                got.append(packets)
                await socket_.close()
    owner, relayed = got
    assert relayed == owner and relayed[-1]["type"] == "end"
    assert relayed[-1]["winner"] == end["winner"]
    assert all("board" not in p for p in relayed if p["type"] == "board_update")


async def test_a_persons_seat_reconnects_through_a_different_worker(cluster: Cluster) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        created = await _new_game(cluster, a.base, {"type": "human"})
        game_id = created["game_id"]
        # X through B (relayed to A, which runs the game), O through A.
        x = await cluster.http.ws_connect(f"{b.ws_base}/ws?token={created['token_x']}")
        async with cluster.http.ws_connect(f"{a.ws_base}/ws?token={created['token_o']}") as o:
            assert len((await until(x, "setup"))["board"]["cells"]) == 1  # X's first
            await until(o, "setup")
            request = await until(o, "move_request")
            await o.send_str(json.dumps(choose(request, HUMAN_MATCH)))
            request = await until(x, "move_request")
            await x.send_str(json.dumps(choose(request, HUMAN_MATCH)))
            pending = await until(o, "move_request")
            # X drops (through B); A sees a drop like any other and tells O.
            await x.close()
            away = await until(o, "opponent_status")
            assert away["side"] == "x" and away["connected"] is False
            # X is back within the reconnect window, through A this time.
            x = await cluster.http.ws_connect(f"{a.ws_base}/ws?token={created['token_x']}")
            setup = await until(x, "setup")
            assert len(setup["board"]["cells"]) == 5  # X at the origin, O's 2, X's 2
            back = await until(o, "opponent_status")
            assert back == {"type": "opponent_status", "side": "x", "connected": True}
            await o.send_str(json.dumps(choose(pending, HUMAN_MATCH)))
            ends = await asyncio.gather(
                play_until_end(o, HUMAN_MATCH), play_until_end(x, HUMAN_MATCH)
            )
            assert await receive(x) is None
        await x.close()
        record = await _record(cluster, b.base, game_id)
    assert ends[0] == ends[1]
    assert ends[0]["winner"] == record["result"]["winner"]
    result = record["result"]  # played out: neither seat forfeited for its drop
    assert result["reason"] == "win" or result["cause"] == "turn_limit", result
    assert [m["side"] for m in record["moves"][:3]] == ["o", "x", "o"]


async def test_a_relayed_seat_ends_as_the_owner_closes_it(cluster: Cluster) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        created = await _new_game(
            cluster, a.base, {"type": "bot", "bot_url": f"{a.base}/bots/center"}
        )
        async with cluster.http.ws_connect(f"{b.ws_base}/ws?token={created['token_x']}") as x:
            await until(x, "move_request")
            await x.send_str("{not json")  # A's nope, its end and its close reach X
            nope = await until(x, "nope")
            end = await until(x, "end")
            code, reason = await closed(x)
        # The game is over: its token is unknown on both workers now.
        async with cluster.http.ws_connect(f"{b.ws_base}/ws?token={created['token_x']}") as late:
            refused = await closed(late)
    assert nope["reason"] and end["winner"] == "o" and end["reason"] == "forfeit"
    assert code == 1000, (code, reason)
    assert refused == (1008, "unknown token, or its game is over")


async def test_an_unknown_token_on_another_worker_is_refused_with_a_reason(
    cluster: Cluster,
) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (
        _,
        b,
    ):  # a: the owner a token names below
        async with cluster.http.ws_connect(f"{b.ws_base}/ws?token=made-up") as ws:
            refused = await closed(ws)
        # A token whose key names A (say, its game just ended): B relays it, and A's
        # refusal reaches the person as it is.
        node = b.server.app.state.arena.manager.cluster
        await node.redis.set(token_key("just-ended"), "worker-a", px=60_000)
        async with cluster.http.ws_connect(f"{b.ws_base}/ws?token=just-ended") as ws:
            passed_on = await closed(ws)
    assert refused == (1008, "unknown token, or its game is over")
    assert passed_on == refused


async def test_a_relay_ends_when_the_owners_lease_is_gone(cluster: Cluster) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        created = await _new_game(
            cluster, a.base, {"type": "bot", "bot_url": f"{a.base}/bots/center"}
        )
        async with cluster.http.ws_connect(f"{b.ws_base}/ws?token={created['token_x']}") as x:
            await until(x, "move_request")
            # A falls silent (its heartbeats stop): its lease runs out, B lets go.
            for task in a.server.app.state.arena.manager.cluster._tasks:
                task.cancel()
            refused = await closed(x)
    assert refused == (1011, "the game's worker is gone (its lease expired)")


async def test_a_relaying_worker_that_stops_leaves_the_seat_to_come_back_elsewhere(
    cluster: Cluster,
) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        center = {"type": "bot", "bot_url": f"{a.base}/bots/center"}
        created = await _new_game(cluster, a.base, center)
        url = f"/ws?token={created['token_x']}"
        async with cluster.http.ws_connect(b.ws_base + url) as x:
            request = await until(x, "move_request")
            await b.stop()  # B goes away with the relay: X is closed, A sees a drop
            code, _ = await closed(x)
        async with cluster.http.ws_connect(a.ws_base + url) as x:
            again = await until(x, "move_request")
            assert again["board"] == request["board"]
            await x.send_str(json.dumps(choose(again, HUMAN_MATCH)))
            end = await play_until_end(x, HUMAN_MATCH)
        record = await _record(cluster, a.base, created["game_id"])
    assert code in (1001, 1012), code  # by the relay, or by uvicorn closing first
    assert end["winner"] == record["result"]["winner"]
    assert record["result"]["cause"] != "disconnect"


async def test_a_stopped_worker_drops_out_of_the_cluster(cluster: Cluster) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        assert sorted(await cluster.worker_ids(a.base)) == ["worker-a", "worker-b"]
        # Gone without a word: its heartbeats stop, its key stays until the lease ends.
        b_node = b.server.app.state.arena.manager.cluster
        for task in b_node._tasks:
            task.cancel()
        async with asyncio.timeout(TIMEOUT):
            while await cluster.worker_ids(a.base) != ["worker-a"]:
                await asyncio.sleep(0.05)


async def test_without_redis_there_is_no_cluster(tmp_path: Any) -> None:
    app = create_app(db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}")
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with serving(app) as server, aiohttp.ClientSession(timeout=timeout) as http:
        base = f"http://127.0.0.1:{server.port}"
        async with http.get(f"{base}/cluster") as response:
            assert response.status == 404
            assert "started without --redis" in (await response.json())["detail"]
        async with http.get(f"{base}/health") as response:
            assert set(await response.json()) == {"status", "live_games"}


def test_redis_needs_a_postgresql_database_and_a_reachable_redis(
    capsys: pytest.CaptureFixture[str],
    postgres_cluster: PostgresCluster,
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    db_url = postgres_cluster.new_database()
    dead = f"redis://127.0.0.1:{_free_port()}/0"
    assert serve_main(["--db", db_url, "--redis", dead, "--port", "0"]) == 2
    assert f"--redis {dead}: cannot connect to Redis at" in capsys.readouterr().err
    assert serve_main(["--db", db_url, "--redis", "http://nope", "--port", "0"]) == 2
    assert "--redis http://nope:" in capsys.readouterr().err
    # postgres:// is PostgreSQL too, as the store takes it: not "a SQLite file".
    bare = "postgres://" + db_url.split("://", 1)[1]
    assert serve_main(["--db", bare, "--redis", dead, "--port", "0"]) == 2
    assert f"--redis {dead}: cannot connect to Redis at" in capsys.readouterr().err
    sqlite = tmp_path / "x.db"
    assert serve_main(["--redis", redis_server.url, "--db", f"sqlite+aiosqlite:///{sqlite}"]) == 2
    assert "a cluster's workers share one database" in capsys.readouterr().err
    assert not sqlite.exists()  # refused before the store is opened
    assert serve_main(["--public-url", "http://h:1"]) == 2
    assert "--public-url is for a cluster's worker: add --redis URL" in capsys.readouterr().err

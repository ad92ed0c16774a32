"""The people's queue across the workers of a cluster (``game.cluster_queue``): workers
in this test process sharing a PostgreSQL database and a Redis (``tests.test_cluster``),
people on real sockets over loopback. Timeouts only stop a broken test from hanging."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp

from game.cluster import queue_leader_key
from game.relay import QUEUE
from game.server_state import _Runtime
from models import BotRegistration
from tests.test_cluster import TIMEOUT, Cluster, Worker, _free_port, workers
from tests.test_queue_server import play_line
from tests.test_server import closed, until

Json = dict[str, Any]


def runtime(worker: Worker) -> _Runtime:
    state: _Runtime = worker.server.app.state.arena
    return state


async def leader(worker: Worker) -> str | None:
    """The queue's leader, as Redis names it."""
    node = runtime(worker).manager.cluster
    assert node is not None
    value = await node.redis.get(queue_leader_key())
    return value.decode() if isinstance(value, bytes) else value


async def join(
    cluster: Cluster, worker: Worker, name: str, **fields: Any
) -> aiohttp.ClientWebSocketResponse:
    """A ``/queue`` socket on ``worker`` that has joined the queue as ``name``."""
    ws = await cluster.http.ws_connect(f"{worker.ws_base}/queue")
    await ws.send_str(json.dumps({"type": "queue_join", "name": name, **fields}))
    return ws


async def waiting_in_queue(
    cluster: Cluster, worker: Worker, name: str, **fields: Any
) -> tuple[aiohttp.ClientWebSocketResponse, str]:
    """A ``/queue`` socket on ``worker`` whose person (``name``) has joined and waits;
    their player token, to come back with."""
    ws = await join(cluster, worker, name, **fields)
    token = (await until(ws, "player_token"))["token"]
    await until(ws, "queue_waiting")
    return ws, token


async def play(cluster: Cluster, matched: list[tuple[Worker, Json]]) -> list[Json]:
    """Each person plays their seat through the worker they queued on: the ``end``s."""
    seats = [
        await cluster.http.ws_connect(worker.ws_base + packet["ws_url"])
        for worker, packet in matched
    ]
    try:
        sides = [packet["side"] for _worker, packet in matched]
        return list(
            await asyncio.gather(
                *(play_line(ws, side) for ws, side in zip(seats, sides, strict=True))
            )
        )
    finally:
        for ws in seats:
            await ws.close()


async def record(cluster: Cluster, base: str, game_id: str) -> Json:
    """The game's record once it has its result."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            status, found = await cluster.get(f"{base}/games/{game_id}")
            if status == 200 and found["result"] is not None:
                answer: Json = found
                return answer
            await asyncio.sleep(0.05)


async def test_two_people_on_two_workers_that_do_not_lead_are_paired_and_play(
    cluster: Cluster,
) -> None:
    async with (
        # worker-a, the first, leads the queue.
        workers(cluster, "worker-a", "worker-b", "worker-d") as (a, b, d),
    ):
        assert await leader(b) == "worker-a"
        status, listed = await cluster.get(f"{d.base}/cluster")
        assert status == 200 and listed["queue_leader"] == "worker-a"
        ann = await join(cluster, b, "ann")
        assert (await until(ann, "player_token"))["name"] == "ann"
        waiting = await until(ann, "queue_waiting")
        assert waiting["players_waiting"] == 1
        bo = await join(cluster, d, "bo")
        matched = [(b, await until(ann, "matched")), (d, await until(bo, "matched"))]
        for ws in (ann, bo):
            assert (await closed(ws))[0] == 1000
        (_, ann_seat), (_, bo_seat) = matched
        game_id = ann_seat["game_id"]
        assert bo_seat["game_id"] == game_id
        assert ann_seat["opponent"]["name"] == "bo" and bo_seat["opponent"]["name"] == "ann"
        assert game_id in runtime(a).manager.live_game_ids()  # the leader runs it
        ends = await play(cluster, matched)
        found = await record(cluster, d.base, game_id)
    assert ends[0] == ends[1] and ends[0]["winner"] == "o"
    assert found["result"]["winner"] == "o"
    names = {found["player_x"]["name"], found["player_o"]["name"]}
    assert names == {"ann", "bo"}


async def test_when_the_leader_stops_a_new_one_takes_over_and_the_waiting_are_paired(
    cluster: Cluster,
) -> None:
    async with workers(cluster, "worker-a", "worker-b", "worker-d") as (a, b, d):
        ann, token = await waiting_in_queue(cluster, b, "ann")
        await a.stop()  # the leader: its queue closes, and the key is given up
        code, reason = await closed(ann)
        # A's own close, or B's relay seeing the key given up just before it.
        assert (code, reason) in (
            (1001, "the game server is shutting down"),
            (1011, QUEUE.gone),
        ), (code, reason)
        # B or D takes the queue over at its next heartbeat (or as a socket comes).
        ann = await join(cluster, b, "ann", player_token=token)
        await until(ann, "queue_waiting")
        new = await leader(b)
        assert new in ("worker-b", "worker-d")
        successor = b if new == "worker-b" else d
        leadership = runtime(successor).queue_leadership
        assert leadership is not None and leadership.leading
        bo = await join(cluster, d, "bo")
        matched = [(b, await until(ann, "matched")), (d, await until(bo, "matched"))]
        game_id = matched[0][1]["game_id"]
        assert game_id in runtime(successor).manager.live_game_ids()
        ends = await play(cluster, matched)
        found = await record(cluster, d.base, game_id)
    assert ends[0] == ends[1] and found["result"]["winner"] == "o"


async def test_a_leader_that_lost_the_key_tells_its_waiting_people_to_join_again(
    cluster: Cluster,
) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        # Not paired: they wait for different time controls.
        direct = await join(cluster, a, "ann", time_control="300")
        relayed = await join(cluster, b, "bo", time_control="600")
        for ws in (direct, relayed):
            await until(ws, "queue_waiting")
        node = runtime(a).manager.cluster
        assert node is not None
        # As if A had missed its renewals and B had taken the queue over.
        await node.redis.set(queue_leader_key(), "worker-b", px=60_000)
        codes = [await closed(ws) for ws in (direct, relayed)]
        leadership = runtime(a).queue_leadership
        assert leadership is not None and not leadership.leading
    for code, reason in codes:
        assert code == 1011 and "join again" in reason, (code, reason)


async def test_a_challenge_accepted_on_another_worker_seats_its_creator_waiting_elsewhere(
    cluster: Cluster,
) -> None:
    async with (
        # worker-a leads the queue: ann's socket is relayed to it.
        workers(cluster, "worker-a", "worker-b", "worker-d") as (a, b, d),
    ):
        ann = await cluster.http.ws_connect(f"{b.ws_base}/queue")
        await ann.send_str(json.dumps({"type": "challenge_create", "name": "ann"}))
        token = (await until(ann, "player_token"))["token"]
        created = await until(ann, "challenge_created")
        challenge_id = created["challenge_id"]
        # Its page is on the worker ann uses, not on the leader that made it.
        assert created["url"] == f"{b.base}/c/{challenge_id}"
        # Bo accepts it on D, which runs its game.
        url = f"{d.base}/challenges/{challenge_id}/accept"
        async with cluster.http.post(url, json={"name": "bo"}) as response:
            assert response.status == 200
            accepted = await response.json()
        mine = await until(ann, "matched")
        assert (await closed(ann))[0] == 1000
        assert mine["game_id"] == accepted["game_id"]
        assert mine["challenge_id"] == challenge_id
        assert {mine["side"], accepted["side"]} == {"x", "o"}
        assert accepted["game_id"] in runtime(d).manager.live_game_ids()
        # Ann's seat, asked of a worker that neither runs the game nor took it.
        status, view = await cluster.get(f"{a.base}/challenges/{challenge_id}?token={token}")
        assert status == 200 and view["status"] == "accepted"
        assert view["matched"]["token"] == mine["token"]
        ends = await play(cluster, [(b, mine), (d, accepted)])
        found = await record(cluster, a.base, accepted["game_id"])
    assert ends[0] == ends[1] and found["result"]["winner"] == "o"
    assert found["tags"]["Challenge"] == challenge_id


async def test_a_leader_that_stops_renewing_loses_the_queue_as_its_lease_ends(
    cluster: Cluster,
) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        ann, token = await waiting_in_queue(cluster, b, "ann")
        # A hangs (as a dead worker would): its lead is not renewed, and expires.
        leadership = runtime(a).queue_leadership
        assert leadership is not None and leadership._task is not None
        leadership._task.cancel()
        code, reason = await closed(ann)  # B's relay sees the leader change
        ann = await join(cluster, b, "ann", player_token=token)
        await until(ann, "queue_waiting")
        assert await leader(b) == "worker-b"  # at its heartbeat, or as ann came
        bo = await join(cluster, b, "bo")
        game_id = (await until(ann, "matched"))["game_id"]
        assert (await until(bo, "matched"))["game_id"] == game_id
        assert game_id in runtime(b).manager.live_game_ids()
    assert code == 1011 and "join again" in reason, (code, reason)


async def test_a_leader_killed_mid_wait_is_replaced_and_its_waiting_person_is_paired(
    cluster: Cluster,
) -> None:
    # The leader is a process of its own, to be killed with SIGKILL.
    port = _free_port()
    command = [
        sys.executable, "-m", "game.serve", "--port", str(port), "--db", cluster.db_url,
        "--redis", cluster.redis_url, "--worker-id", "worker-a", "--lease", "1",
        "--log-level", "warning",
    ]  # fmt: skip
    root = Path(__file__).resolve().parent.parent
    a = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL)
    b: Worker | None = None
    try:
        async with asyncio.timeout(60):  # a process's start, on a busy machine
            while True:
                assert a.poll() is None, "worker-a exited"
                try:
                    status, listed = await cluster.get(f"http://127.0.0.1:{port}/cluster")
                    if status == 200 and listed["queue_leader"] == "worker-a":
                        break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
        b = await cluster.worker("worker-b")
        ann, token = await waiting_in_queue(cluster, b, "ann")
        a.kill()
        await asyncio.to_thread(a.wait)
        code, reason = await closed(ann)  # the relay to A broke
        assert code == 1011, (code, reason)
        # Ann comes back (as the desktop client does, again while refused with
        # 1013): B leads once A's lease has ended, and pairs her.
        async with asyncio.timeout(TIMEOUT):
            while True:
                ann = await join(cluster, b, "ann", player_token=token)
                message = await ann.receive()
                if message.type is aiohttp.WSMsgType.TEXT:
                    assert json.loads(message.data)["type"] == "queue_waiting"
                    break
                assert message.type is aiohttp.WSMsgType.CLOSE and message.data == 1013
                await asyncio.sleep(0.1)
        assert await leader(b) == "worker-b"
        bo = await join(cluster, b, "bo")
        game_id = (await until(ann, "matched"))["game_id"]
        assert (await until(bo, "matched"))["game_id"] == game_id
        assert game_id in runtime(b).manager.live_game_ids()
    finally:
        a.kill()
        await asyncio.to_thread(a.wait)
        if b is not None:
            await b.stop()


async def test_a_person_on_another_worker_gets_a_ladder_bot_from_the_leader(
    cluster: Cluster,
) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):  # a leads the queue
        # Registered on B (the registry is the shared database's), served by B.
        registration = BotRegistration(name="Randy", url=f"{b.base}/bots/random")
        await runtime(b).registry.register(registration)
        ann = await join(cluster, b, "ann", bot_after_s=0.2, time_control="none")
        matched = await until(ann, "matched")
        assert matched["opponent"] == {"name": "Randy", "kind": "bot", "rating": 1500}
        assert matched["game_id"] in runtime(a).manager.live_game_ids()
        async with cluster.http.ws_connect(b.ws_base + matched["ws_url"]) as game:
            await game.send_str('{"type": "resign"}')
            end = await until(game, "end")
        found = await record(cluster, b.base, matched["game_id"])
    assert end["winner"] != matched["side"] and end["detail"].startswith("resign")
    bot_side = found["player_x"] if matched["side"] == "o" else found["player_o"]
    assert bot_side["name"] == "Randy"


async def test_a_relaying_worker_that_stops_takes_its_people_out_of_the_leaders_queue(
    cluster: Cluster,
) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):  # a leads the queue
        hub = runtime(a).queue
        assert hub is not None
        ann, token = await waiting_in_queue(cluster, b, "ann")
        assert hub.waiting_count() == 1
        await b.stop()
        code, reason = await closed(ann)
        async with asyncio.timeout(TIMEOUT):
            while hub.waiting_count():  # A saw the relay's socket close
                await asyncio.sleep(0.05)
        # Ann comes back through A and waits there, once.
        ann = await join(cluster, a, "ann", player_token=token)
        waiting = await until(ann, "queue_waiting")
    assert code in (1001, 1012), (code, reason)  # the relay's, or uvicorn's as B stops
    assert waiting["players_waiting"] == 1

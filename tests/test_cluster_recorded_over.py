"""A game recorded over by another worker while its own worker still plays it: the
record is the truth. Worker A's heartbeats stop (as if it were cut off from Redis, or
paused for longer than its lease) while it runs a game; worker B takes A for dead and
records the game aborted (``game.cluster_sweep``). A still plays the game in memory;
when it ends there, or its next move is refused, A must tell everyone what the record
says: the players' ``end``, ``GET /games/<id>`` on every worker, the ratings and the
work queue agree. Workers in this test process (tests/test_cluster.py), sharing a real
PostgreSQL and a real Redis."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from game.server_state import _Runtime
from game.store.work import LADDER_SOURCE, WorkItem, WorkRecords
from models import NewGameRequest, Player
from tests.test_cluster import TIMEOUT, Cluster, Worker, _record, workers
from tests.test_server import choose, until

Json = dict[str, Any]
DETAIL = "aborted: the worker worker-a running it stopped (its lease expired)"


def runtime(worker: Worker) -> _Runtime:
    arena: _Runtime = worker.server.app.state.arena
    return arena


async def people_game(cluster: Cluster, worker: Worker) -> Json:
    """A game of two people on ``worker``, declared rated (alice as X, bob as O)."""
    body = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}
    async with cluster.http.post(f"{worker.base}/game/new", json=body) as response:
        assert response.status == 200, await response.text()
        created: Json = await response.json()
    await runtime(worker).ratings.track(created["game_id"], "alice", "bob")
    return created


async def seated(
    cluster: Cluster, worker: Worker, token_x: str, token_o: str
) -> tuple[aiohttp.ClientWebSocketResponse, aiohttp.ClientWebSocketResponse, Json]:
    """Both seats of a game on ``worker``, connected; O's first ``move_request``."""
    x = await cluster.http.ws_connect(f"{worker.ws_base}/ws?token={token_x}")
    o = await cluster.http.ws_connect(f"{worker.ws_base}/ws?token={token_o}")
    return x, o, await until(o, "move_request")


async def swept_by(cluster: Cluster, a: Worker, b: Worker, game_id: str) -> Json:
    """A's heartbeats stop for good (it is cut off from Redis); B takes it for dead and
    records ``game_id`` aborted: that record, as B serves it."""
    node = runtime(a).manager.cluster
    assert node is not None
    node._tasks[0].cancel()  # the heartbeat
    record = await _record(cluster, b.base, game_id)
    assert runtime(a).manager.runs(game_id)  # A plays on: it has not heard
    return record


async def records_on(cluster: Cluster, workers: list[Worker], game_id: str) -> list[Json]:
    """``GET /games/<id>`` on each of ``workers``."""
    answers = []
    for worker in workers:
        status, record = await cluster.get(f"{worker.base}/games/{game_id}")
        assert status == 200, record
        answers.append(record)
    return answers


def aborted_as_swept(result: Json) -> bool:
    return (result["winner"], result["reason"], result["cause"]) == (None, "draw", "aborted") and (
        "aborted: " + result["detail"] == DETAIL
    )


async def test_a_game_recorded_aborted_elsewhere_ends_as_recorded_when_a_player_resigns(
    cluster: Cluster,
) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        created = await people_game(cluster, a)
        game_id = created["game_id"]
        x, o, _request = await seated(cluster, a, created["token_x"], created["token_o"])
        swept = await swept_by(cluster, a, b, game_id)
        # A still plays it: X resigns there. Its end cannot be recorded (the record is
        # over): what the players are told is what the record says.
        await x.send_str(json.dumps({"type": "resign"}))
        ends = [await until(seat, "end") for seat in (x, o)]
        on_a, on_b = await records_on(cluster, [a, b], game_id)
        rating = await runtime(a).store.ratings.status(game_id)
        _, board = await cluster.get(f"{b.base}/leaderboard")
        await x.close()
        await o.close()
    assert aborted_as_swept(swept["result"])
    assert ends[0] == ends[1]
    assert (ends[0]["winner"], ends[0]["reason"], ends[0]["detail"]) == (None, "draw", DETAIL)
    assert on_a["result"] == on_b["result"] == swept["result"]
    assert rating == "void" and board["entries"] == []  # an aborted game is not rated


async def test_a_move_refused_because_the_game_was_recorded_aborted_ends_it_at_once(
    cluster: Cluster,
) -> None:
    async with workers(cluster, "worker-a", "worker-b") as (a, b):
        created = await people_game(cluster, a)
        game_id = created["game_id"]
        x, o, request = await seated(cluster, a, created["token_x"], created["token_o"])
        await swept_by(cluster, a, b, game_id)
        # O moves on A: the store refuses the move, and the game ends there and then,
        # with the stored result (nobody has to resign or run out of time).
        await o.send_str(json.dumps(choose(request, {})))
        ends = [await until(seat, "end") for seat in (x, o)]
        on_a, on_b = await records_on(cluster, [a, b], game_id)
        rating = await runtime(a).store.ratings.status(game_id)
        await x.close()
        await o.close()
    assert all(end["detail"] == DETAIL and end["winner"] is None for end in ends)
    assert aborted_as_swept(on_a["result"]) and on_a["result"] == on_b["result"]
    assert on_b["moves"] == []  # the store took no move after the abort
    assert rating == "void"


async def test_a_queued_game_recorded_aborted_elsewhere_is_handed_back_not_done(
    cluster: Cluster,
) -> None:
    # A plays the queue's games; B none (it only sweeps).
    async with (
        workers(cluster, "worker-a") as (a,),
        workers(cluster, "worker-b", work_slots=0) as (b,),
    ):
        player = runtime(a).work
        assert player is not None
        people = {"type": "human"}
        request = NewGameRequest.model_validate(
            {"player_x": {**people, "name": "alice"}, "player_o": {**people, "name": "bob"}}
        )
        item = await player.work.enqueue(
            LADDER_SOURCE + "recorded-over", 0, request.model_dump_json(), rated=True
        )
        game_id = await _game_of(player.playing, item)
        slots = runtime(a).manager._games[game_id].slots
        token_x, token_o = slots[Player.X].token, slots[Player.O].token
        assert token_x is not None and token_o is not None
        x, o, _request = await seated(cluster, a, token_x, token_o)
        await swept_by(cluster, a, b, game_id)
        await x.send_str(json.dumps({"type": "resign"}))
        end = await until(o, "end")
        await x.close()
        await o.close()
        # The item is settled from the record: aborted, so handed back (to be played
        # again), never done with the result A had in memory.
        now = await _moved_on(player.work, item, game_id)
        _, on_b = await cluster.get(f"{b.base}/games/{game_id}")
        rating = await runtime(a).store.ratings.status(game_id)
        _, board = await cluster.get(f"{b.base}/leaderboard")
    assert now.status in ("queued", "leased") and now.result is None, now
    assert player.played == 0
    assert end["detail"] == DETAIL
    assert aborted_as_swept(on_b["result"])
    assert rating == "void" and board["entries"] == []


async def _game_of(playing: dict[int, str | None], item: WorkItem) -> str:
    """The game a worker plays for ``item``, once created."""
    async with asyncio.timeout(TIMEOUT):
        while (game_id := playing.get(item.item_id)) is None:
            await asyncio.sleep(0.02)
    return game_id


async def _moved_on(work: WorkRecords, item: WorkItem, game_id: str) -> WorkItem:
    """``item`` as it is once no longer leased for ``game_id``: settled, or handed back
    (and perhaps leased again, for another game)."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            (now,) = await work.items([item.item_id])
            if now.status != "leased" or now.game_id not in (None, game_id):
                return now
            await asyncio.sleep(0.02)

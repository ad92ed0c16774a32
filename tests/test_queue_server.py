"""Matchmaking for people over real sockets on 127.0.0.1: the ``/queue`` WebSocket,
open challenges, and what people do in their games (resign, drop and come back).

Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.bots import RandomBot
from bot.serve import create_app as create_bot_app
from bot.serve import serving as serving_bot
from game.server_state import _Runtime
from game.session import SessionLimits
from models import BotRegistration, EndCause, Player, ResultReason
from tests.test_server import Arena, arena, closed, receive, until

Json = dict[str, Any]

# O builds a line on r = -2, X on r = 2: O (who moves first) wins with its third move.
LINES: dict[str, list[list[tuple[int, int]]]] = {
    "o": [[(0, -2), (1, -2)], [(2, -2), (3, -2)], [(4, -2), (5, -2)]],
    "x": [[(0, 2), (1, 2)], [(2, 2), (3, 2)], [(4, 2), (5, 2)]],
}


def runtime(a: Arena) -> _Runtime:
    state: _Runtime = a.server.app.state.arena
    return state


@asynccontextmanager
async def queue(a: Arena) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
    async with a.http.ws_connect(f"{a.ws_base}/queue") as ws:
        yield ws


async def join(ws: aiohttp.ClientWebSocketResponse, name: str, **fields: Any) -> None:
    await ws.send_str(json.dumps({"type": "queue_join", "name": name, **fields}))


async def seat(a: Arena, matched: Json) -> aiohttp.ClientWebSocketResponse:
    return await a.http.ws_connect(a.ws_base + matched["ws_url"])


async def play_line(ws: aiohttp.ClientWebSocketResponse, side: str) -> Json:
    """Answer each move_request with the next move of ``side``'s line; the ``end``."""
    moves = iter(LINES[side])
    while True:
        packet = await receive(ws)
        assert packet is not None, "closed before the end"
        if packet["type"] == "move_request":
            pieces = [{"q": q, "r": r} for q, r in next(moves)]
            await ws.send_str(json.dumps({"type": "move_response", "move": {"pieces": pieces}}))
        elif packet["type"] == "end":
            return packet


async def paired(a: Arena, first: str = "ann", second: str = "bo") -> dict[str, Json]:
    """Two new people join the queue and are matched: their ``matched`` by name."""
    async with queue(a) as one, queue(a) as two:
        await join(one, first)
        await until(one, "queue_waiting")
        await join(two, second)
        found = {first: await until(one, "matched"), second: await until(two, "matched")}
        for ws in (one, two):
            assert (await closed(ws))[0] == 1000
    return found


# ---------------------------------------------------------------------- queue


async def test_two_people_are_paired_and_play_their_game_to_the_end(tmp_path: Path) -> None:
    async with arena(tmp_path) as a, queue(a) as ann, queue(a) as bo:
        await join(ann, "Ann", time_control="300+5")
        token = await until(ann, "player_token")
        assert token["name"] == "Ann" and token["token"]
        waiting = await until(ann, "queue_waiting")
        assert (waiting["players_waiting"], waiting["rating"]) == (1, 1500)
        assert waiting["time_control"] == "300+5"
        await join(bo, "Bo", time_control="300+5.0")
        matched = {"Ann": await until(ann, "matched"), "Bo": await until(bo, "matched")}
        assert {m["side"] for m in matched.values()} == {"x", "o"}
        assert matched["Ann"]["game_id"] == matched["Bo"]["game_id"]
        assert matched["Ann"]["opponent"] == {"name": "Bo", "kind": "human", "rating": 1500}
        assert matched["Ann"]["rated"] is True and matched["Ann"]["time_control"] == "300+5"
        game_id = matched["Ann"]["game_id"]
        seats = {name: await seat(a, m) for name, m in matched.items()}
        ends = await asyncio.gather(
            *(play_line(seats[name], matched[name]["side"]) for name in seats)
        )
        assert {end["winner"] for end in ends} == {"o"}
        for ws in seats.values():
            await ws.close()
        record = await a.finished_record(game_id)
        assert record.result is not None and record.result.reason is ResultReason.WIN
        names = {record.player_x.name, record.player_o.name}
        assert names == {"Ann", "Bo"} and record.tags["Event"] == "htttx-arena queue"
        # The game was rated when it ended: the winner gained.
        winner = matched["Ann"] if matched["Ann"]["side"] == "o" else matched["Bo"]
        winner_name = "Ann" if winner is matched["Ann"] else "Bo"
        loser_name = "Bo" if winner_name == "Ann" else "Ann"
        ratings = runtime(a).ratings
        assert (await ratings.rating_of(winner_name)).mu > (await ratings.rating_of(loser_name)).mu


async def test_a_known_name_needs_its_token(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        async with queue(a) as ws:
            await join(ws, "ann")
            token = (await until(ws, "player_token"))["token"]
        async with queue(a) as ws:
            await join(ws, "ANN")
            nope = await until(ws, "nope")
            assert "player token" in nope["reason"]
            assert (await closed(ws))[0] == 1008
        async with queue(a) as ws:
            await join(ws, "ann", player_token="not-it")
            assert "not the player token" in (await until(ws, "nope"))["reason"]
        async with queue(a) as ws:
            await join(ws, "ann", player_token=token)
            waiting = await until(ws, "queue_waiting")
            assert waiting["players_waiting"] == 1


async def test_a_name_waits_once_and_a_socket_waits_once(tmp_path: Path) -> None:
    async with arena(tmp_path) as a, queue(a) as first, queue(a) as second:
        await join(first, "ann", time_control="60")
        token = (await until(first, "player_token"))["token"]
        await until(first, "queue_waiting")
        await join(second, "Ann", player_token=token, time_control="60")
        assert "already waiting" in (await until(second, "nope"))["reason"]
        await join(first, "bo", time_control="60")
        assert "queue_leave first" in (await until(first, "nope"))["reason"]


async def test_a_refused_time_control_does_not_use_up_a_new_name(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        async with queue(a) as ws:
            await join(ws, "ann", time_control="40/10")
            assert "time_control" in (await until(ws, "nope"))["reason"]
        async with queue(a) as ws:
            await join(ws, "ann")
            assert (await until(ws, "player_token"))["name"] == "ann"


async def test_people_who_leave_are_not_paired_and_are_told_the_count(tmp_path: Path) -> None:
    async with arena(tmp_path) as a, queue(a) as ann, queue(a) as bo:
        await join(ann, "ann", time_control="60")
        await until(ann, "queue_waiting")
        await ann.send_str('{"type": "queue_leave"}')
        await join(bo, "bo", time_control="60")
        assert (await until(bo, "queue_waiting"))["players_waiting"] == 1
        await join(ann, "cy", time_control="60")  # the same socket, another name
        matched = await until(ann, "matched")
        assert matched["opponent"]["name"] == "bo"


async def test_a_person_plays_a_registered_ladder_bot_after_their_wait(tmp_path: Path) -> None:
    async with (
        serving_bot(create_bot_app({"/random": RandomBot})) as bot_server,
        arena(tmp_path) as a,
        queue(a) as ws,
    ):
        await runtime(a).registry.register(
            BotRegistration(name="Randy", url=f"{bot_server.url}/random")
        )
        await join(ws, "ann", bot_after_s=0.2, time_control="none")
        waiting = await until(ws, "queue_waiting")
        assert waiting["bot_in_ms"] <= 200
        matched = await until(ws, "matched")
        assert matched["opponent"]["name"] == "Randy" and matched["opponent"]["kind"] == "bot"
        async with await seat(a, matched) as game:
            await game.send_str('{"type": "resign"}')
            end = await until(game, "end")
        assert end["winner"] != matched["side"] and end["detail"].startswith("resign")
        record = await a.finished_record(matched["game_id"])
        bot_side = record.player_x if matched["side"] == "o" else record.player_o
        assert bot_side.name == "Randy" and bot_side.bot_url == f"{bot_server.url}/random"


async def test_without_a_free_bot_the_person_waits_on_and_is_told_when_the_next_try_is(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a, queue(a) as ws:
        await join(ws, "ann", bot_after_s=0)
        first = await until(ws, "queue_waiting")
        assert first["bot_in_ms"] == 0
        again = await until(ws, "queue_waiting")  # no bot is registered: a later try
        assert 0 < again["bot_in_ms"] <= 10_000 and again["players_waiting"] == 1
        await join(ws, "bo")  # still waiting on this socket
        assert "queue_leave first" in (await until(ws, "nope"))["reason"]


async def test_a_bot_name_cannot_be_taken_by_a_person(tmp_path: Path) -> None:
    async with (
        serving_bot(create_bot_app({"/random": RandomBot})) as bot_server,
        arena(tmp_path) as a,
        queue(a) as ws,
    ):
        await runtime(a).registry.register(
            BotRegistration(name="Randy", url=f"{bot_server.url}/random", ladder=False)
        )
        await join(ws, "randy")
        assert "bot" in (await until(ws, "nope"))["reason"]


async def test_bad_queue_packets_get_nope_and_a_close(tmp_path: Path) -> None:
    bad = {
        "not json": ("hello", "not valid JSON"),
        "unknown type": ('{"type": "play_now"}', "unknown type 'play_now'"),
        "bad time control": (
            '{"type": "queue_join", "name": "ann", "time_control": "40/10"}',
            "time_control",
        ),
        "unhosted clock": (
            '{"type": "queue_join", "name": "ann", "time_control": "99999999+0"}',
            "time_control",
        ),
        "no name": ('{"type": "queue_join"}', "name"),
        "a number no float holds": (
            '{"type": "queue_join", "name": "ann", "bot_after_s": 1e400}',
            "bot_after_s: a number out of range",
        ),
        "a game packet": ('{"type": "resign"}', "not accepted here"),
    }
    async with arena(tmp_path) as a:
        for what, (frame, reason) in bad.items():
            async with queue(a) as ws:
                await ws.send_str(frame)
                nope = await until(ws, "nope")
                assert reason in nope["reason"], (what, nope)
                assert (await closed(ws))[0] == 1008, what
        async with queue(a) as ws:
            await ws.send_bytes(b"\x00")
            assert "binary" in (await until(ws, "nope"))["reason"]


# --------------------------------------------------------------- challenges


async def post(a: Arena, path: str, body: Json) -> tuple[int, Json]:
    async with a.http.post(a.base + path, json=body) as response:
        return response.status, await response.json()


async def test_a_challenge_is_created_and_accepted_and_both_get_seats(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        status, created = await post(
            a, "/challenges", {"name": "ann", "time_control": "600", "side": "x"}
        )
        assert status == 201, created
        challenge_id, ann_token = created["challenge_id"], created["player_token"]
        assert created["url"] == f"{a.base}/c/{challenge_id}"
        assert (created["status"], created["creator"], created["side"]) == ("open", "ann", "x")
        status, view = await a.get_json(f"/challenges/{challenge_id}")
        assert status == 200 and "player_token" not in view and "matched" not in view
        status, accepted = await post(a, f"/challenges/{challenge_id}/accept", {"name": "bo"})
        assert status == 200, accepted
        assert accepted["side"] == "o" and accepted["player_token"]
        assert accepted["opponent"]["name"] == "ann"
        # The creator finds their seat with their person token.
        status, view = await a.get_json(f"/challenges/{challenge_id}?token={ann_token}")
        assert status == 200 and view["status"] == "accepted"
        assert view["matched"]["side"] == "x" and view["matched"]["game_id"] == view["game_id"]
        status, _ = await a.get_json(f"/challenges/{challenge_id}?token=wrong")
        assert status == 403
        # A challenge makes one game.
        status, again = await post(a, f"/challenges/{challenge_id}/accept", {"name": "cy"})
        assert status == 409 and "accepted" in again["detail"]
        x_ws = await a.http.ws_connect(a.ws_base + view["matched"]["ws_url"])
        o_ws = await a.http.ws_connect(a.ws_base + accepted["ws_url"])
        ends = await asyncio.gather(play_line(x_ws, "x"), play_line(o_ws, "o"))
        assert ends[0]["winner"] == "o"
        for ws in (x_ws, o_ws):
            await ws.close()
        record = await a.finished_record(accepted["game_id"])
        assert record.tags["Challenge"] == challenge_id
        assert record.match.clock_type == "match"


async def test_the_creator_on_the_queue_socket_gets_matched_when_accepted(tmp_path: Path) -> None:
    async with arena(tmp_path) as a, queue(a) as ws:
        await ws.send_str(json.dumps({"type": "challenge_create", "name": "ann"}))
        await until(ws, "player_token")
        created = await until(ws, "challenge_created")
        assert created["url"].endswith(f"/c/{created['challenge_id']}")
        status, accepted = await post(
            a, f"/challenges/{created['challenge_id']}/accept", {"name": "bo"}
        )
        assert status == 200, accepted
        matched = await until(ws, "matched")
        assert matched["game_id"] == accepted["game_id"]
        assert {matched["side"], accepted["side"]} == {"x", "o"}
        assert matched["challenge_id"] == created["challenge_id"]
        assert (await closed(ws))[0] == 1000


async def test_bad_challenge_requests_are_refused_with_the_reason(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        status, answer = await post(a, "/challenges", {"name": "ann", "time_control": "x"})
        assert status == 422 and "time_control" in answer["detail"]
        status, answer = await post(a, "/challenges", {"name": " ann"})
        assert status == 422 and "spaces" in answer["detail"]
        status, answer = await a.get_json("/challenges/nothing")
        assert status == 404
        status, created = await post(a, "/challenges", {"name": "ann"})
        status, answer = await post(
            a,
            f"/challenges/{created['challenge_id']}/accept",
            {"name": "ann", "player_token": created["player_token"]},
        )
        assert status == 409 and "your own challenge" in answer["detail"]
        status, answer = await post(a, f"/challenges/{created['challenge_id']}/accept", {})
        assert status == 422


async def test_a_challenge_body_with_a_field_it_does_not_know_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    # As POST /bots, /series and /tournaments do: a misspelt field is not ignored.
    async with arena(tmp_path) as a:
        refused = await post(a, "/challenges", {"name": "ann", "extra": 1})
        status, created = await post(a, "/challenges", {"name": "ann"})
        assert status == 201, created
        accept = f"/challenges/{created['challenge_id']}/accept"
        refused_accept = await post(a, accept, {"name": "bo", "player_tokn": "x"})
    assert refused == (422, {"detail": "extra: extra inputs are not permitted, got 1"})
    assert refused_accept == (
        422,
        {"detail": "player_tokn: extra inputs are not permitted, got 'x'"},
    )


@pytest.mark.parametrize(
    ("time_control", "reason"),
    [
        ("90000", "clock: expected at most 86400 on this server, got 90000.0"),
        (  # every problem once, each named as in a time control (no seat, no match_config)
            "100000+5000",
            "clock: expected at most 86400 on this server, got 100000.0; "
            "increment: expected at most 3600 on this server, got 5000.0",
        ),
        ("stall=100000", "stall_limit: expected at most 86400 on this server, got 100000.0"),
        ("99999999", "clock: expected at most 2147483.647, got 99999999.0"),
        ("turn=0", "clock: expected more than 0, got 0.0"),
    ],
)
async def test_a_time_control_the_server_does_not_take_is_refused_in_the_apis_words(
    tmp_path: Path, time_control: str, reason: str
) -> None:
    # As a body's field is named (time_control: ...), not in pydantic's words ("Value
    # error, ...", "Input should be ..."), nor with the text twice.
    async with arena(tmp_path) as a, queue(a) as ws:
        refused = await post(a, "/challenges", {"name": "ann", "time_control": time_control})
        await ws.send_str(
            json.dumps({"type": "queue_join", "name": "bo", "time_control": time_control})
        )
        nope = await until(ws, "nope")
    expected = f"time_control: {reason}"
    assert refused == (422, {"detail": expected})
    assert expected in nope["reason"]


async def delete(a: Arena, path: str) -> tuple[int, Json]:
    async with a.http.delete(a.base + path) as response:
        return response.status, await response.json()


async def test_the_creator_cancels_an_open_challenge_and_nobody_can_accept_it(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        _, created = await post(a, "/challenges", {"name": "ann"})
        path = f"/challenges/{created['challenge_id']}"
        status, answer = await delete(a, path)
        assert status == 403 and "player token" in answer["detail"]
        status, answer = await delete(a, f"{path}?token=wrong")
        assert status == 403
        status, cancelled = await delete(a, f"{path}?token={created['player_token']}")
        assert status == 200 and cancelled["status"] == "cancelled"
        status, answer = await post(a, f"{path}/accept", {"name": "bo"})
        assert status == 409 and "cancelled" in answer["detail"]
        status, answer = await delete(a, f"{path}?token={created['player_token']}")
        assert status == 409 and "cancelled" in answer["detail"]
        status, answer = await delete(a, "/challenges/nothing?token=x")
        assert status == 404


async def test_cancelling_frees_a_place_among_the_most_open_challenges(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        _, first = await post(a, "/challenges", {"name": "ann"})
        token = first["player_token"]
        for _ in range(4):
            status, _ = await post(a, "/challenges", {"name": "ann", "player_token": token})
            assert status == 201
        status, _ = await post(a, "/challenges", {"name": "ann", "player_token": token})
        assert status == 429
        await delete(a, f"/challenges/{first['challenge_id']}?token={token}")
        status, _ = await post(a, "/challenges", {"name": "ann", "player_token": token})
        assert status == 201


async def test_a_challenge_is_cancelled_when_its_queue_socket_closes(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        async with queue(a) as ws:
            await ws.send_str(json.dumps({"type": "challenge_create", "name": "ann"}))
            created = await until(ws, "challenge_created")
        path = f"/challenges/{created['challenge_id']}"
        async with asyncio.timeout(30):  # the server notices the close on its own time
            while (await a.get_json(path))[1]["status"] == "open":
                await asyncio.sleep(0.05)
        _, view = await a.get_json(path)
        assert view["status"] == "cancelled"
        status, _ = await post(a, f"{path}/accept", {"name": "bo"})
        assert status == 409


async def test_queue_leave_cancels_the_challenge_the_socket_waits_on(tmp_path: Path) -> None:
    async with arena(tmp_path) as a, queue(a) as ws:
        await ws.send_str(json.dumps({"type": "challenge_create", "name": "ann"}))
        token = (await until(ws, "player_token"))["token"]
        created = await until(ws, "challenge_created")
        await ws.send_str('{"type": "queue_leave"}')
        path = f"/challenges/{created['challenge_id']}"
        async with asyncio.timeout(30):
            while (await a.get_json(path))[1]["status"] == "open":
                await asyncio.sleep(0.05)
        await join(ws, "ann", player_token=token)  # the socket may be used again
        assert (await until(ws, "queue_waiting"))["players_waiting"] == 1


async def test_an_open_challenge_survives_a_restart(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        _, created = await post(a, "/challenges", {"name": "ann"})
    async with arena(tmp_path) as a:
        status, view = await a.get_json(f"/challenges/{created['challenge_id']}")
        assert status == 200 and view["status"] == "open"
        status, accepted = await post(
            a, f"/challenges/{created['challenge_id']}/accept", {"name": "bo"}
        )
        assert status == 200, accepted


async def test_an_accepted_challenge_nobody_comes_to_is_void_not_a_rated_draw(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path, limits=SessionLimits(no_show_s=0.5)) as a:
        _, created = await post(a, "/challenges", {"name": "ann"})
        status, accepted = await post(
            a, f"/challenges/{created['challenge_id']}/accept", {"name": "bo"}
        )
        assert status == 200, accepted
        record = await a.finished_record(accepted["game_id"])  # neither seat connects
        assert record.result is not None and record.result.cause is EndCause.NO_SHOW
        ratings = runtime(a).ratings
        async with asyncio.timeout(30):
            while ratings.tracks(accepted["game_id"]):  # settled by the end hook
                await asyncio.sleep(0.05)
        assert await ratings.row_of("ann") is None and await ratings.row_of("bo") is None


async def test_a_queue_socket_challenge_stays_open_over_a_restart(tmp_path: Path) -> None:
    # The outside session closes after the server stops: the server closes the socket.
    async with aiohttp.ClientSession() as outside, arena(tmp_path) as a:
        ws = await outside.ws_connect(f"{a.ws_base}/queue")
        await ws.send_str(json.dumps({"type": "challenge_create", "name": "ann"}))
        created = await until(ws, "challenge_created")
    async with arena(tmp_path) as a:  # the server stopped with the socket still open
        status, view = await a.get_json(f"/challenges/{created['challenge_id']}")
        assert status == 200 and view["status"] == "open"


# ------------------------------------------------------------- in the game


async def test_a_person_who_resigns_loses_and_both_are_told(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        matched = await paired(a)
        ann, bo = await seat(a, matched["ann"]), await seat(a, matched["bo"])
        await until(ann, "setup")
        await until(bo, "setup")
        await ann.send_str('{"type": "resign"}')
        for ws in (ann, bo):
            end = await until(ws, "end")
            assert end["winner"] == matched["bo"]["side"] and end["reason"] == "forfeit"
            assert end["detail"].startswith("resign")
            await ws.close()
        record = await a.finished_record(matched["ann"]["game_id"])
        assert record.result is not None and record.result.cause is EndCause.RESIGN
        async with a.http.get(f"{a.base}/games/{record.game_id}/notation") as response:
            assert "endreason[resign]" in await response.text()


async def test_the_opponent_sees_a_person_drop_and_come_back(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        matched = await paired(a)
        ann = await seat(a, matched["ann"])
        bo = await seat(a, matched["bo"])
        await until(ann, "setup")
        await until(bo, "setup")
        await bo.close()
        away = await until(ann, "opponent_status")
        assert away["side"] == matched["bo"]["side"] and away["connected"] is False
        assert 0 < away["reconnect_by_ms"] <= 60_000
        bo = await seat(a, matched["bo"])
        back = await until(ann, "opponent_status")
        assert back == {"type": "opponent_status", "side": matched["bo"]["side"], "connected": True}
        await until(bo, "setup")
        await bo.send_str('{"type": "resign"}')
        end = await until(ann, "end")
        assert end["winner"] == matched["ann"]["side"]
        for ws in (ann, bo):
            await ws.close()
        assert Player(matched["ann"]["side"]) in (Player.X, Player.O)

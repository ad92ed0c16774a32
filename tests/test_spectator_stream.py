"""Spectators over real sockets on loopback: the compact stream (``?board=0``), the
default stream unchanged, coalesced writes, a slow spectator dropped (game/fanout.py,
game/sockets.py)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
from typing import Any

import pytest

from game.running import RunningGame
from game.server_state import _Runtime
from models import Board, GameRecord
from tests.test_server import (
    HUMAN_MATCH,
    TIMEOUT,
    Arena,
    Json,
    arena,
    choose,
    closed,
    play_until_end,
    receive,
    receive_type,
    until,
)

Stones = dict[tuple[int, int], str]


def stones_of_board(board: Json) -> Stones:
    return {(c["q"], c["r"]): c["p"] for c in board["cells"]}


def with_move(stones: Stones, move: Json) -> Stones:
    return stones | {(p["q"], p["r"]): move["side"] for p in move["pieces"]}


def record_stones(record: GameRecord) -> Stones:
    stones = {(c.q, c.r): c.p.value for c in Board.standard().cells}
    for move in record.moves:
        stones |= {(p.q, p.r): move.side.value for p in move.pieces}
    return stones


async def everything(ws: Any) -> list[Json]:
    packets: list[Json] = []
    while (packet := await receive(ws)) is not None:
        packets.append(packet)
    return packets


def human_against_random(a: Arena, match: Any) -> dict[str, Any]:
    """A game of the test's human (X, token_x) against the hosted RandomBot."""
    return {"player_x": {"type": "human"}, "player_o": a.bot("random"), "match_config": match}


def running(a: Arena, game_id: str) -> RunningGame:
    runtime: _Runtime = a.server.app.state.arena
    game = runtime.manager._games[game_id]
    return game


async def test_the_compact_stream_omits_the_board_and_rebuilds_the_same_game(
    tmp_path: Any,
) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(human_against_random(a, HUMAN_MATCH))
        game_id = created["game_id"]
        base = f"{a.ws_base}/spectate/{game_id}"
        async with (
            a.http.ws_connect(f"{a.ws_base}/ws?token={created['token_x']}") as human,
            a.http.ws_connect(f"{base}?board=0") as compact,
            a.http.ws_connect(f"{base}?board=false") as compact_too,
            a.http.ws_connect(base) as full,
        ):
            setups = [await receive_type(ws, "setup") for ws in (compact, compact_too, full)]
            await receive_type(human, "setup")
            await play_until_end(human, HUMAN_MATCH)
            compact_packets = await everything(compact)
            compact_too_packets = await everything(compact_too)
            full_packets = await everything(full)
        record = await a.finished_record(game_id)
    # Each joined at its own position (O may have moved meanwhile): from there on, the
    # same packets, but for ``board``.
    common = min(len(compact_packets), len(compact_too_packets), len(full_packets))
    assert compact_packets[-common:] == compact_too_packets[-common:]
    updates = [p for p in compact_packets if p["type"] == "board_update"]
    full_updates = [p for p in full_packets if p["type"] == "board_update"]
    assert updates and all("board" not in p for p in updates)
    assert full_updates and all("board" in p for p in full_updates)
    assert [{k: v for k, v in p.items() if k != "board"} for p in full_packets[-common:]] == [
        {k: v for k, v in p.items() if k != "board"} for p in compact_packets[-common:]
    ]
    assert compact_packets[-1]["type"] == "end"
    # A client rebuilds the board from the setup and the moves: the record's, stone by stone.
    for setup, packets in zip(setups, (compact_packets, compact_too_packets), strict=False):
        stones = stones_of_board(setup["board"])
        for update in packets:
            if update["type"] == "board_update":
                stones = with_move(stones, update["move"])
        assert stones == record_stones(record)
    assert record_stones(record) == stones_of_board(full_updates[-1]["board"])


async def test_a_spectator_waiting_with_the_game_learns_when_it_begins(tmp_path: Any) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(human_against_random(a, HUMAN_MATCH))
        async with a.http.ws_connect(f"{a.ws_base}/spectate/{created['game_id']}") as spectator:
            waiting = await receive_type(spectator, "setup")
            async with a.http.ws_connect(f"{a.ws_base}/ws?token={created['token_x']}") as human:
                begun = await receive_type(spectator, "setup")  # before O's first move
                await receive_type(human, "setup")
                await play_until_end(human, HUMAN_MATCH)
    assert (waiting["status"], begun["status"], begun["to_move"]) == (
        "waiting",
        "in_progress",
        "o",
    )
    assert begun["moves"] == [] and begun["board"] == waiting["board"]


@pytest.mark.parametrize("value", ["1", "true", "", "no"])
async def test_any_other_board_value_is_refused_with_1008(tmp_path: Any, value: str) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(human_against_random(a, HUMAN_MATCH))
        url = f"{a.ws_base}/spectate/{created['game_id']}?board={value}"
        async with a.http.ws_connect(url) as ws:
            code, reason = await closed(ws)
    assert code == 1008 and "board=0" in reason


async def test_a_burst_of_moves_reaches_spectators_in_fewer_writes_than_moves(
    tmp_path: Any,
) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(human_against_random(a, HUMAN_MATCH))
        game_id = created["game_id"]
        url = f"{a.ws_base}/spectate/{game_id}?board=0"
        async with (
            a.http.ws_connect(f"{a.ws_base}/ws?token={created['token_x']}") as human,
            a.http.ws_connect(url) as spectator,
        ):
            await receive_type(spectator, "setup")
            await receive_type(human, "setup")
            fanout = running(a, game_id).fanout
            # The game waits for X (the human): nothing else is broadcast meanwhile.
            request = await receive_type(human, "move_request")
            before = fanout.writes
            for n in range(20):  # a burst: published in one loop turn, as instant bots do
                fanout.publish(_analysis(game_id, n))
            at_once = fanout.writes - before
            # (after O's first update, if this spectator joined before it)
            got = [await until(spectator, "analysis")]
            got += [await receive_type(spectator, "analysis") for _ in range(19)]
            in_burst = fanout.writes - before
            await human.send_str(json.dumps(choose(request, HUMAN_MATCH)))
            await play_until_end(human, HUMAN_MATCH)
            rest = await everything(spectator)
    assert [p["ply"] for p in got] == list(range(20))  # all, in order
    assert at_once <= 1  # the first at once if the stream was quiet; the rest wait
    assert in_burst <= 2  # then one write for the rest: 2 writes, not 20
    assert rest[-1]["type"] == "end"


def _analysis(game_id: str, ply: int, pad: int = 0) -> Any:
    from game.fanout import Update
    from models import AnalysisPacket, dump_packet

    packet = AnalysisPacket.model_validate(
        {"ply": ply, "bot": f"test {game_id} " + "x" * pad, "evaluation": {"heuristic": 0.0}}
    )
    return Update(dump_packet(packet))


def _handshake(host: str, port: int, path: str) -> socket.socket:
    """A WebSocket client that reads almost nothing: a tiny receive buffer."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    sock.connect((host, port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


async def test_a_slow_spectator_is_dropped_and_the_game_goes_on(tmp_path: Any) -> None:
    match = {"win_distance": 6, "turn_limit": 400}
    async with arena(tmp_path) as a:
        created = await a.new_game(human_against_random(a, match))
        game_id = created["game_id"]
        host, port = a.base[len("http://") :].split(":")
        game = running(a, game_id)
        stuck_socket = await asyncio.to_thread(_handshake, host, int(port), f"/spectate/{game_id}")
        async with asyncio.timeout(TIMEOUT):
            while not game.spectators:
                await asyncio.sleep(0.01)
        (stuck,) = game.spectators
        async with (
            a.http.ws_connect(f"{a.ws_base}/ws?token={created['token_x']}") as human,
            a.http.ws_connect(f"{a.ws_base}/spectate/{game_id}") as keeping_up,
        ):
            await receive_type(keeping_up, "setup")
            await receive_type(human, "setup")
            reader = asyncio.create_task(everything(keeping_up))
            sent = 0
            async with asyncio.timeout(TIMEOUT):
                while stuck in game.spectators:
                    # A flood, flushed packet by packet, until the stuck one falls behind.
                    for _ in range(100):
                        game.fanout.publish(_analysis(game_id, sent, pad=4000))
                        game.fanout.flush()
                        sent += 1
                    await asyncio.sleep(0.01)
            await play_until_end(human, match)
            packets = await reader
        stuck_socket.close()  # (its close frame waits behind what it never read)
        record = await a.finished_record(game_id)
    assert (
        stuck.dropped.is_set()
    )  # closed with 1008 "too slow" (tests/manager/test_spectators.py checks the close)
    # The game went on, and the spectator that reads got everything, in order.
    assert record.result is not None and packets[-1]["type"] == "end"
    assert [p["ply"] for p in packets if p["type"] == "analysis"] == list(range(sent))

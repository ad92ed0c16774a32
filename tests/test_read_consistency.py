"""The read routes agree with what was broadcast (``game.reads``), over real sockets.

Fast hosted bots play many games at once; a spectator of each reads ``GET /games/<id>``
after each ``board_update``, and ``/games/<id>``, ``/games/<id>/notation`` and
``GET /games`` the moment it gets ``end``: the record must never have fewer moves than
were broadcast, and at the end it must carry the broadcast result and exactly the
broadcast moves. With group commit (10 ms) and without (0), on SQLite. The database
file itself, read by a store of the test's own, already has the end and every move
when `end` arrives: the record is committed before `end` is sent.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from game import notation
from game.server import create_app, serving
from game.store import GameStore
from models import GameRecord, GameResult, Match

TIMEOUT = 120.0  # only against hangs
GAMES = 12

Json = dict[str, Any]


async def _get(http: aiohttp.ClientSession, url: str) -> tuple[int, bytes]:
    async with http.get(url) as response:
        return response.status, await response.read()


async def _watch_and_read(
    http: aiohttp.ClientSession, base: str, game_id: str, disk: GameStore
) -> int:
    """Spectate ``game_id``, checking the read routes against each packet; the number of
    moves broadcast."""
    broadcast = 0
    ws_url = "ws" + base[4:] + f"/spectate/{game_id}"
    async with http.ws_connect(ws_url, max_msg_size=0) as ws:
        async for message in ws:
            assert message.type is aiohttp.WSMsgType.TEXT, message
            packet: Json = json.loads(message.data)
            if packet["type"] == "setup":
                broadcast = len(packet["moves"])
            elif packet["type"] == "board_update":
                broadcast += 1
                status, body = await _get(http, f"{base}/games/{game_id}")
                assert status == 200
                live = GameRecord.model_validate_json(body)
                assert len(live.moves) >= broadcast, "the record is behind the broadcast"
            elif packet["type"] == "end":
                committed = await disk.get_game(game_id)
                assert committed is not None
                assert committed.result == GameResult.model_validate(_result_of(packet))
                assert len(committed.moves) == broadcast
                await _check_final(http, base, game_id, packet, broadcast)
    return broadcast


def _result_of(end: Json) -> Json:
    return {"winner": end["winner"], "reason": end["reason"], "cause": end.get("detail")}


async def _check_final(
    http: aiohttp.ClientSession, base: str, game_id: str, end: Json, broadcast: int
) -> None:
    # Everything at once, as a tournament runner would right after `end`.
    (s1, body), (s2, text), (s3, page) = await asyncio.gather(
        _get(http, f"{base}/games/{game_id}"),
        _get(http, f"{base}/games/{game_id}/notation"),
        _get(http, f"{base}/games?limit=200"),
    )
    assert (s1, s2, s3) == (200, 200, 200)
    expected = GameResult.model_validate(_result_of(end))
    record = GameRecord.model_validate_json(body)
    assert record.result == expected
    assert len(record.moves) == broadcast
    written = notation.loads(text.decode())
    assert written.result is not None
    assert (written.result.winner, written.result.reason) == (expected.winner, expected.reason)
    assert len(written.moves) == broadcast
    summary = next(item for item in json.loads(page)["items"] if item["game_id"] == game_id)
    assert GameResult.model_validate(summary["result"]) == expected
    assert summary["moves"] == broadcast
    assert summary["status"] in ("finished", "aborted")


async def _play_and_watch(db_url: str, commit_interval: float, games: int) -> list[int]:
    """``games`` games between hosted bots, each watched by ``_watch_and_read``."""
    app = create_app(db_url=db_url, commit_interval=commit_interval)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with (
        serving(app) as server,
        aiohttp.ClientSession(timeout=timeout) as http,
        await GameStore.open(db_url) as disk,
    ):
        base = server.url

        async def one_game(index: int) -> int:
            sides = ("threat", "random") if index % 2 else ("random", "threat")
            body = {
                "player_x": {"type": "bot", "bot_url": f"{base}/bots/{sides[0]}"},
                "player_o": {"type": "bot", "bot_url": f"{base}/bots/{sides[1]}"},
                "match_config": Match(turn_limit=60).model_dump(mode="json"),
            }
            async with http.post(f"{base}/game/new", json=body) as response:
                assert response.status == 200, await response.text()
                game_id = (await response.json())["game_id"]
            return await _watch_and_read(http, base, game_id, disk)

        async with asyncio.timeout(TIMEOUT):
            return await asyncio.gather(*(one_game(i) for i in range(games)))


@pytest.mark.parametrize("commit_interval", [0.010, 0.0])
async def test_a_spectator_reads_the_broadcast_game_at_once_after_each_packet(
    tmp_path: Path, commit_interval: float
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    moves = await _play_and_watch(db_url, commit_interval, GAMES)
    assert all(count > 0 for count in moves)


async def test_a_slow_store_delays_the_end_until_the_record_is_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every write of the server's store lands 50 ms late (a slow disk): an `end` sent
    # before its commit would reach the spectator before the database has the result.
    for name in ("add_moves", "finish_game"):
        write = getattr(GameStore, name)

        async def slow(self: GameStore, *args: Any, _write: Any = write, **kwargs: Any) -> None:
            await asyncio.sleep(0.05)
            await _write(self, *args, **kwargs)

        monkeypatch.setattr(GameStore, name, slow)
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    moves = await _play_and_watch(db_url, 0.010, 4)
    assert all(count > 0 for count in moves)


async def test_a_game_whose_end_is_not_committed_yet_is_listed_by_its_coming_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store holds the result back until the test lets it go; meanwhile the record
    # read from memory already shows it, and so must the filtered lists.
    release = asyncio.Event()
    finish = GameStore.finish_game

    async def held(self: GameStore, *args: Any, **kwargs: Any) -> None:
        await release.wait()
        await finish(self, *args, **kwargs)

    monkeypatch.setattr(GameStore, "finish_game", held)
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with (
        serving(create_app(db_url=db_url)) as server,
        aiohttp.ClientSession(timeout=timeout) as http,
        await GameStore.open(db_url) as disk,
    ):
        base = server.url
        body = {
            "player_x": {"type": "bot", "bot_url": f"{base}/bots/threat"},
            "player_o": {"type": "bot", "bot_url": f"{base}/bots/random"},
            "match_config": Match(turn_limit=20).model_dump(mode="json"),
        }
        async with http.post(f"{base}/game/new", json=body) as response:
            game_id = (await response.json())["game_id"]

        async def listed(status: str) -> list[str]:
            _, page = await _get(http, f"{base}/games?status={status}")
            return [item["game_id"] for item in json.loads(page)["items"]]

        async with asyncio.timeout(TIMEOUT):
            while True:
                _, record = await _get(http, f"{base}/games/{game_id}")
                if GameRecord.model_validate_json(record).result is not None:
                    break
                await asyncio.sleep(0.02)
        running, finished = await listed("running"), await listed("finished")
        stored = await disk.game_status(game_id)
        release.set()
    assert stored is not None and stored.value == "running"  # the window is real
    assert (running, finished) == ([], [game_id])

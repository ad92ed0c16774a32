"""Big reads (``game.reads``): chunked encodes equal the plain ones, the cache of
finished games is bounded and encodes once, summaries are bounded, and a record of
thousands of moves is served to many readers at once over real sockets while
``/health`` keeps answering.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest

import game.reads as reads
from bot.bots.lattice_bot import LatticeBot
from bot.serve import create_app as create_bot_app
from bot.serve import serving as serve_bots
from game import notation
from game.reads import Built, EncodedCache, encode_record, encode_setup, snapshot_of
from game.server import create_app, serving
from game.store import GameStore
from game.store.schema import SUMMARY_TEXT_MAX
from models import (
    Coord,
    EndCause,
    GameRecord,
    GameResult,
    Meta,
    MoveOption,
    Player,
    PlayerType,
    PositionEvaluation,
    RecordedMove,
    RecordPlayer,
    ResultReason,
    dump_packet,
)
from tests.random_games import unfinished_game

TIMEOUT = 120.0  # only against hangs
BIG = 3000  # moves
READERS = 10
SPECTATORS = 8


def big_record(moves: int, *, game_id: str = "big", name: str = "a long game") -> GameRecord:
    """A legal game of ``moves`` moves, with evaluations and considerations, won by O."""
    stones = unfinished_game(2 * moves + 1, seed=3, reach=3, recent=40).stones[1:]
    recorded = []
    for index in range(moves):
        (q1, r1, side), (q2, r2, _) = stones[2 * index], stones[2 * index + 1]
        recorded.append(
            RecordedMove(
                side=Player(side),
                pieces=[Coord(q=q1, r=r1), Coord(q=q2, r=r2)],
                evaluation=PositionEvaluation(heuristic=index / moves, depth=3),
                considerations=[MoveOption(pieces=[Coord(q=q1, r=r1), Coord(q=q2, r=r2)])],
                clock_ms=1000 + index,
                thinking_ms=index % 7,
            )
        )
    return GameRecord(
        game_id=game_id,
        name=name,
        player_x=RecordPlayer(name="ünïcode X", type=PlayerType.BOT, meta=Meta(name="x")),
        player_o=RecordPlayer(name="O", type=PlayerType.HUMAN),
        started_at=datetime(2026, 11, 24, 9, 0, tzinfo=UTC),
        moves=recorded,
        result=GameResult(winner=Player.O, reason=ResultReason.FORFEIT, cause=EndCause.TIMEOUT),
    )


async def store_record(db_url: str, record: GameRecord) -> None:
    """Write ``record`` through the store, as a game would have."""
    async with await GameStore.open(db_url) as store:
        await store.create_game(record.model_copy(update={"moves": [], "result": None}))
        await store.add_moves(record.game_id or "", 0, [(m, None) for m in record.moves])
        assert record.result is not None
        await store.finish_game(record.game_id or "", record.result, ended_at=datetime.now(UTC))


# ------------------------------------------------------------------ encoding


def test_the_chunked_record_encode_is_the_plain_one() -> None:
    record = big_record(700)
    assert encode_record(record) == record.model_dump_json().encode()
    empty = record.model_copy(update={"moves": []})
    assert encode_record(empty) == empty.model_dump_json().encode()


def test_the_chunked_setup_encode_is_dump_packet() -> None:
    setup, end = snapshot_of(big_record(700))
    assert end is not None
    assert encode_setup(setup) == dump_packet(setup)


# --------------------------------------------------------------------- cache


async def test_the_cache_drops_the_least_recently_used_once_over_its_bytes() -> None:
    cache = EncodedCache(max_bytes=10)
    cache.put("a", b"aaaa", 4)
    cache.put("b", b"bbbb", 4)
    assert cache.get("a") == b"aaaa"  # now "b" is the least recently used
    cache.put("c", b"cccc", 4)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (b"aaaa", None, b"cccc")
    assert cache.size == 8
    cache.put("huge", b"x" * 11, 11)  # bigger than the whole cache: not kept
    assert cache.get("huge") is None and cache.size == 8


async def test_concurrent_readers_of_one_key_share_one_build() -> None:
    cache = EncodedCache(max_bytes=100)
    builds = 0
    gate = asyncio.Event()

    async def build() -> Built[bytes] | None:
        nonlocal builds
        builds += 1
        await gate.wait()
        return Built(b"encoded", 7, final=True)

    readers = [asyncio.create_task(cache.get_or_build("k", build)) for _ in range(5)]
    await asyncio.sleep(0)
    gate.set()
    assert await asyncio.gather(*readers) == [b"encoded"] * 5
    assert await cache.get_or_build("k", build) == b"encoded"
    assert builds == 1


async def test_a_value_that_is_not_final_is_not_kept() -> None:
    cache = EncodedCache(max_bytes=100)

    async def build() -> Built[bytes] | None:
        return Built(b"running", 7, final=False)

    assert await cache.get_or_build("k", build) == b"running"
    assert cache.get("k") is None and cache.size == 0


# ----------------------------------------------------------------- summaries


async def test_summaries_are_bounded_whatever_the_names_and_meta(tmp_path: Path) -> None:
    long = "n" * 50_000
    bot = RecordPlayer(
        name=long,
        type=PlayerType.BOT,
        bot_url="http://127.0.0.1/" + long,
        meta=Meta(name=long, version="1.0", description=long, authors=[long] * 20),
    )
    record = GameRecord(game_id="long", name=long, player_x=bot, player_o=bot)
    async with await GameStore.open(f"sqlite+aiosqlite:///{tmp_path / 'g.sqlite'}") as store:
        await store.create_game(record)
        page = await store.list_games()
        stored = await store.get_game("long")
    summary = page.items[0]
    assert summary.name is not None and len(summary.name) == SUMMARY_TEXT_MAX
    assert summary.name.startswith("nnn") and summary.name.endswith("\u2026")
    assert summary.player_x.meta == Meta(name=summary.player_x.name, version="1.0")
    # Seven clipped texts and a few fixed fields, out of 400 kB of names and meta.
    assert len(page.model_dump_json().encode()) < 2_000
    assert stored is not None and stored.name == long  # the record keeps it all


# -------------------------------------------------------- over real sockets


async def test_a_big_record_is_served_to_many_readers_at_once_and_encoded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    record = big_record(BIG)
    await store_record(db_url, record)
    encodes: list[str] = []
    for name in ("_encode_notation", "_encode_snapshot"):
        encode = getattr(reads, name)

        def counted(game: GameRecord, _encode: Any = encode, _name: str = name) -> Any:
            encodes.append(_name)
            return _encode(game)

        monkeypatch.setattr(reads, name, counted)
    read_json = GameStore.get_game_json

    async def counted_read(store: GameStore, game_id: str) -> Any:
        encodes.append("get_game_json")
        return await read_json(store, game_id)

    monkeypatch.setattr(GameStore, "get_game_json", counted_read)

    app = create_app(db_url=db_url)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with serving(app) as server, aiohttp.ClientSession(timeout=timeout) as http:
        base = server.url
        readers_done = asyncio.Event()
        health_answers: list[int] = []

        async def read_record() -> GameRecord:
            async with http.get(f"{base}/games/big") as response:
                assert response.status == 200
                return GameRecord.model_validate_json(await response.read())

        async def read_notation() -> GameRecord:
            async with http.get(f"{base}/games/big/notation") as response:
                assert response.status == 200
                return notation.loads(await response.text())

        async def spectate() -> list[dict[str, Any]]:
            packets = []
            async with http.ws_connect(f"ws{base[4:]}/spectate/big", max_msg_size=0) as ws:
                async for message in ws:
                    packets.append(json.loads(message.data))
            return packets

        async def health() -> None:
            # Asked again and again while the readers run: each must be answered. On a
            # connection of its own, always busy: from the readers' shared pool it would
            # take the readers' idle connections in turn, and those the server closes
            # after its keep-alive timeout (5 s) all at once when the readers finished
            # together; aiohttp asks again only once, and the second one is closed too.
            one = aiohttp.TCPConnector(limit=1)
            async with aiohttp.ClientSession(timeout=timeout, connector=one) as own:
                while not readers_done.is_set():
                    async with own.get(f"{base}/health") as response:
                        health_answers.append(response.status)
                    await asyncio.sleep(0)

        async def readers() -> tuple[Any, ...]:
            try:
                return tuple(
                    await asyncio.gather(
                        *(read_record() for _ in range(READERS)),
                        *(read_notation() for _ in range(READERS)),
                        *(spectate() for _ in range(READERS)),
                    )
                )
            finally:
                readers_done.set()

        async with asyncio.timeout(TIMEOUT):
            got, _ = await asyncio.gather(readers(), health())

    records, notations, spectated = (
        got[:READERS],
        got[READERS : 2 * READERS],
        got[2 * READERS :],
    )
    assert all(r == record for r in records)
    assert all(len(n.moves) == BIG and n.result is not None for n in notations)
    for packets in spectated:
        assert [p["type"] for p in packets] == ["setup", "end"]
        assert len(packets[0]["moves"]) == BIG
    assert health_answers and set(health_answers) == {200}
    # Ten readers of each kind, one encode of each: the others waited for it or hit the
    # cache.
    assert sorted(encodes) == ["_encode_notation", "_encode_snapshot", "get_game_json"]


async def test_a_late_spectator_of_a_long_live_game_gets_every_move_then_each_update(
    tmp_path: Path,
) -> None:
    # LatticeBots never make a line: the game lasts its turn limit. The spectator comes
    # once the game is past INLINE_ENCODE_MOVES, so its setup is encoded off the loop
    # while the updates queue behind it.
    limit = 800
    bots_app = create_bot_app({"/lattice": LatticeBot})
    app = create_app(db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}")
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with (
        serve_bots(bots_app) as bots,
        serving(app) as server,
        aiohttp.ClientSession(timeout=timeout) as http,
    ):
        lattice = {"type": "bot", "bot_url": f"{bots.url}/lattice"}
        body = {"player_x": lattice, "player_o": lattice, "match_config": {"turn_limit": limit}}
        async with http.post(f"{server.url}/game/new", json=body) as response:
            game_id = (await response.json())["game_id"]
        async with asyncio.timeout(TIMEOUT):
            while True:
                async with http.get(f"{server.url}/games/{game_id}") as response:
                    live = GameRecord.model_validate_json(await response.read())
                if len(live.moves) > reads.INLINE_ENCODE_MOVES:
                    break
                await asyncio.sleep(0.01)
            url = f"ws{server.url[4:]}/spectate/{game_id}"

            async def spectate() -> list[dict[str, Any]]:
                packets = []
                async with http.ws_connect(url, max_msg_size=0) as ws:
                    async for message in ws:
                        packets.append(json.loads(message.data))
                return packets

            # One after another, each at some point of a move being carried out.
            spectators = []
            for _ in range(SPECTATORS):
                spectators.append(asyncio.create_task(spectate()))
                await asyncio.sleep(0.003)
            seen_by = await asyncio.gather(*spectators)
            async with http.get(f"{server.url}/games/{game_id}") as response:
                final = GameRecord.model_validate_json(await response.read())
    assert len(final.moves) == limit
    for packets in seen_by:
        setup, *updates, end = packets
        assert setup["type"] == "setup" and end["type"] == "end"
        assert len(setup["moves"]) >= len(live.moves) > reads.INLINE_ENCODE_MOVES
        assert updates and {p["type"] for p in updates} == {"board_update"}
        # Every move exactly once: those in the setup, then one update per move.
        seen = [RecordedMove.model_validate(m) for m in setup["moves"]]
        assert seen == final.moves[: len(seen)]
        moves = [u["move"]["pieces"] for u in updates]
        expected = [m.model_dump(mode="json")["pieces"] for m in final.moves[len(seen) :]]
        assert moves == expected

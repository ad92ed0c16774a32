"""The game manager over real sockets on 127.0.0.1, with a real SQLite file: spectators.

Bots are real bot servers (``bot.serve``) hosting the example bots, or small scripted
Starlette apps that misbehave in one way each. Humans and spectators are in-memory
``InboundConnection`` fakes (the server's tests cover the real ``/ws`` route).
Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from pydantic import BaseModel

import game.running as game_running
import game.running_spectators as running_spectators
import game.session as game_session
import game.spectating as game_spectating
from game.manager import GameManager, UnknownGame
from game.reads import encode_setup
from game.session_packets import board_update
from game.store import GameStore
from models import (
    BoardUpdatePacket,
    NewGameRequest,
    Player,
    ResultReason,
    dump_packet,
)
from tests.manager.harness import (
    TIMEOUT,
    FakeConnection,
    bot,
    finished,
    move,
    play_until_o_wins,
    seat,
    seated_humans,
    start_humans,
)

# -------------------------------------------------------------- spectators


async def test_a_late_spectator_gets_the_whole_history_then_every_move(
    manager: GameManager, store: GameStore
) -> None:
    game_id, x, o, seats = await seated_humans(manager)
    await o.until("move_request")
    o.say(move((1, 0), (2, 0)))
    await x.until("move_request")
    x.say(move((0, 1), (0, 2)))
    await o.until("move_request")

    watcher = FakeConnection()
    watching = asyncio.create_task(manager.spectate(game_id, watcher))
    setup = await watcher.next()
    assert setup is not None and setup["type"] == "setup"
    assert setup["game_id"] == game_id and len(setup["moves"]) == 2
    assert setup["player_x"]["name"] == "Xena" and setup["to_move"] == "o"

    o.say(move((3, 0), (4, 0)))
    await x.until("move_request")
    x.hang_up()  # X gives up: with a reconnect window; shutdown ends it below
    update = await watcher.next()
    assert update is not None and update["type"] == "board_update"
    assert update["move"]["pieces"] == [{"q": 3, "r": 0}, {"q": 4, "r": 0}]

    await manager.shutdown()
    rest = await watcher.rest()
    assert [p["type"] for p in rest] == ["end"]
    assert rest[0]["detail"].partition(": ")[0] == "aborted"
    await asyncio.wait_for(asyncio.gather(watching, *seats), TIMEOUT)
    assert watcher.close_code == 1000


async def test_spectators_joining_a_long_game_at_one_position_share_one_setup_encode(
    manager: GameManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every setup counts as long here, so it is encoded off the loop.
    monkeypatch.setattr(running_spectators, "INLINE_ENCODE_MOVES", -1)
    encodes: list[int] = []

    def counting(setup: Any) -> bytes:
        encodes.append(len(setup.moves))
        return encode_setup(setup)

    monkeypatch.setattr(running_spectators, "encode_setup", counting)
    game_id, _x, o, seats = await seated_humans(manager)
    await o.until("move_request")
    watchers = [FakeConnection() for _ in range(10)]
    watching = [asyncio.create_task(manager.spectate(game_id, w)) for w in watchers]
    setups = [await w.next() for w in watchers]
    assert all(s is not None and s["type"] == "setup" for s in setups)
    assert encodes == [0]

    o.say(move((1, 0), (2, 0)))  # a new position: a new setup for the next spectator
    for watcher in watchers:
        assert (await watcher.until("board_update"))["move"]["side"] == "o"
    late = FakeConnection()
    watching.append(asyncio.create_task(manager.spectate(game_id, late)))
    late_setup = await late.next()
    assert late_setup is not None and len(late_setup["moves"]) == 1
    assert encodes == [0, 1]
    await manager.shutdown()
    await asyncio.wait_for(asyncio.gather(*watching, *seats), TIMEOUT)


async def test_a_spectator_joining_while_the_end_is_committed_gets_the_end(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The game is decided, but its `end` waits for the store: a spectator joining then
    # sees the final position, then the `end` (not a close without it).
    release = asyncio.Event()
    committing = asyncio.Event()
    finish_game = store.finish_game

    async def slow(*args: Any, **kwargs: Any) -> None:
        committing.set()
        await release.wait()
        await finish_game(*args, **kwargs)

    monkeypatch.setattr(store, "finish_game", slow)
    game_id, x, o, seats = await seated_humans(manager)
    winning = asyncio.create_task(play_until_o_wins(x, o))
    await asyncio.wait_for(committing.wait(), TIMEOUT)
    watcher = FakeConnection()
    watching = asyncio.create_task(manager.spectate(game_id, watcher))
    setup = await watcher.next()
    assert setup is not None and setup["type"] == "setup" and len(setup["moves"]) == 5
    release.set()
    rest = await watcher.rest()
    assert [p["type"] for p in rest] == ["end"] and rest[0]["winner"] == "o"
    await asyncio.wait_for(asyncio.gather(winning, watching, *seats), TIMEOUT)


async def test_a_slow_spectator_is_dropped_and_the_game_goes_on(
    store: GameStore, http: aiohttp.ClientSession, bots: str
) -> None:
    games = GameManager(store, http, spectator_queue=2)
    try:
        game_id, token_x, token_o = await start_humans(games)
        slow = FakeConnection(reads=False)
        watching = asyncio.create_task(games.spectate(game_id, slow))
        x, o = FakeConnection(), FakeConnection()
        seats = [seat(games, token_x, x), seat(games, token_o, o)]
        await play_until_o_wins(x, o)
        await asyncio.wait_for(watching, TIMEOUT)
        assert slow.close_code == 1008 and slow.close_reason is not None
        assert "too slow" in slow.close_reason
        record = await finished(games, store, game_id)
        await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    finally:
        await games.shutdown()
    assert record.result is not None
    assert (record.result.winner, record.result.reason) == (Player.O, ResultReason.WIN)


async def test_a_spectator_taking_no_data_is_closed_after_the_send_limit(
    manager: GameManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(game_spectating, "DEFAULT_SEND_TIMEOUT", 0.2)
    game_id, _token_x, _token_o = await start_humans(manager)
    stuck = FakeConnection(reads=False)  # its first send (the setup) never ends

    await asyncio.wait_for(manager.spectate(game_id, stuck), TIMEOUT)

    assert stuck.close_code == 1008 and stuck.close_reason is not None
    assert stuck.close_reason.startswith("too slow: an update took 0.2 s or more")
    assert game_id in manager.live_game_ids()  # nobody has moved: the game goes on


def count_encodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The type of every packet the manager encodes from now on (still encoded)."""
    encoded: list[str] = []

    def counting(packet: BaseModel) -> bytes:
        encoded.append(getattr(packet, "type", type(packet).__name__))
        return dump_packet(packet)

    # The game's task encodes what goes to the seats, its spectators' side the updates.
    monkeypatch.setattr(game_running, "dump_packet", counting)
    monkeypatch.setattr(running_spectators, "dump_packet", counting)
    return encoded


async def test_many_spectators_cost_one_encode_per_update(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded = count_encodes(monkeypatch)
    game_id, token_x, token_o = await start_humans(manager)
    watchers = [FakeConnection() for _ in range(200)]
    watching = [asyncio.create_task(manager.spectate(game_id, w)) for w in watchers]
    for watcher in watchers:
        assert (await watcher.next() or {}).get("type") == "setup"
    x, o = FakeConnection(), FakeConnection()
    seats = [seat(manager, token_x, x), seat(manager, token_o, o)]

    await play_until_o_wins(x, o)

    for watcher in watchers:
        # The game's start (a fresh setup), its five moves, its end.
        assert [p["type"] for p in await watcher.rest()] == ["setup"] + ["board_update"] * 5 + [
            "end"
        ]
    assert encoded.count("board_update") == 5
    # A setup for each as it joined, one for each seat, and the start's once for all.
    assert encoded.count("setup") == len(watchers) + 2 + 1
    await asyncio.wait_for(asyncio.gather(*watching, *seats), TIMEOUT)
    await finished(manager, store, game_id)


async def test_an_unwatched_game_encodes_no_update_but_keeps_its_end_for_latecomers(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded = count_encodes(monkeypatch)
    game_id, x, o, seats = await seated_humans(manager)

    await play_until_o_wins(x, o)
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)

    assert "board_update" not in encoded
    record = await finished(manager, store, game_id)
    assert len(record.moves) == 5
    late = FakeConnection()
    await asyncio.wait_for(manager.spectate(game_id, late), TIMEOUT)
    assert [p["type"] for p in await late.rest()] == ["setup", "end"]


async def test_an_unwatched_game_builds_no_board_update(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[BoardUpdatePacket] = []

    def counting(*args: Any, **kwargs: Any) -> BoardUpdatePacket:
        built.append(board_update(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(game_session, "board_update", counting)
    game_id, x, o, seats = await seated_humans(manager)

    await play_until_o_wins(x, o)
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)

    assert built == []  # not built, so no board copied, move after move
    assert len((await finished(manager, store, game_id)).moves) == 5


async def test_spectating_a_finished_game_gives_its_snapshot_then_end(
    manager: GameManager, store: GameStore, bots: str
) -> None:
    request = NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=bot(f"{bots}/random"))
    created = await manager.create_game(request)
    record = await finished(manager, store, created.game_id)

    watcher = FakeConnection()
    await manager.spectate(created.game_id, watcher)

    packets = await watcher.rest()
    assert [p["type"] for p in packets] == ["setup", "end"]
    setup, end = packets
    assert len(setup["moves"]) == len(record.moves)
    assert len(setup["board"]["cells"]) == 1 + sum(len(m.pieces) for m in record.moves)
    assert end["reason"] == "win" and end["board"] == setup["board"]
    assert watcher.close_code == 1000


async def test_spectating_an_unknown_game_is_refused(manager: GameManager) -> None:
    watcher = FakeConnection()
    with pytest.raises(UnknownGame):
        await manager.spectate("no-such-game", watcher)
    assert watcher.close_code == 1008

"""The game manager over real sockets on 127.0.0.1, with a real SQLite file:
people's seats, tokens and the record's commits.

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
from game.manager import GameManager, UnknownToken
from game.session import SessionLimits
from game.store import GameStore
from models import (
    EndCause,
    NewGameRequest,
    Player,
    dump_packet,
)
from tests.manager.harness import (
    LIMITS,
    TIMEOUT,
    FakeConnection,
    bot,
    finished,
    human,
    move,
    seat,
    seated_humans,
    start_humans,
)

# ------------------------------------------------------------------ humans


async def test_humans_play_reconnect_and_win(manager: GameManager, store: GameStore) -> None:
    game_id, token_x, token_o = await start_humans(manager)
    x, o = FakeConnection(), FakeConnection()
    seats = [seat(manager, token_x, x), seat(manager, token_o, o)]
    await x.until("setup")
    await o.until("setup")
    await o.until("move_request")
    o.say(move((1, 0), (2, 0)))
    await x.until("move_request")
    x.say(move((0, 1), (0, 2)))
    await o.until("move_request")

    # O drops and comes back with the same token: the position, then the request.
    o.hang_up()
    await asyncio.wait_for(seats[1], TIMEOUT)
    o = FakeConnection()
    seats[1] = seat(manager, token_o, o)
    setup = await o.next()
    assert setup is not None and setup["type"] == "setup"
    assert len(setup["board"]["cells"]) == 5
    request = await o.next()
    assert request is not None and request["type"] == "move_request"

    o.say(move((3, 0), (4, 0)))
    await x.until("move_request")
    x.say(move((0, 3), (0, 4)))
    await o.until("move_request")
    o.say(move((5, 0), (6, 0)))

    end_x, end_o = await x.until("end"), await o.until("end")
    assert end_x == end_o
    assert (end_o["winner"], end_o["reason"]) == ("o", "win")
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    assert x.close_code == 1000 and o.close_code == 1000
    record = await finished(manager, store, game_id)
    assert len(record.moves) == 5
    assert record.player_x.name == "Xena"


async def until_stored(store: GameStore, game_id: str, moves: int) -> None:
    """Wait until the store holds ``moves`` moves of the game."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            record = await store.get_game(game_id)
            assert record is not None
            if len(record.moves) >= moves:
                return
            await asyncio.sleep(0.01)


def count_commits(store: GameStore, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of moves of each transaction that writes moves from now on: each
    ``add_moves`` call, and a ``finish_game`` call that carries the last moves with the
    result; the calls still reach the real store."""
    commits: list[int] = []
    add_moves, finish_game = store.add_moves, store.finish_game

    async def counted(game_id: str, first_index: int, moves: Any) -> None:
        commits.append(len(moves))
        await add_moves(game_id, first_index, moves)

    async def counted_end(game_id: str, result: Any, **options: Any) -> None:
        if options.get("moves"):
            commits.append(len(options["moves"]))
        await finish_game(game_id, result, **options)

    monkeypatch.setattr(store, "add_moves", counted)
    monkeypatch.setattr(store, "finish_game", counted_end)
    return commits


async def test_moves_are_committed_in_groups_and_the_end_commits_at_once(
    store: GameStore, http: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    commits = count_commits(store, monkeypatch)
    # An hour between commits: only what the group commit itself decides is committed.
    games = GameManager(store, http, limits=LIMITS, commit_interval=3600)
    try:
        game_id, x, o, seats = await seated_humans(games)
        await o.until("move_request")
        o.say(move((1, 0), (2, 0)))
        # The first move after a quiet spell is committed at once...
        await until_stored(store, game_id, 1)
        # ... the next ones wait for the next commit, an hour away ...
        await x.until("move_request")
        x.say(move((0, 1), (0, 2)))
        await o.until("move_request")
        o.say(move((3, 0), (4, 0)))
        await x.until("move_request")
        x.say(move((0, 3), (0, 4)))
        await o.until("move_request")
        o.say(move((5, 0), (6, 0)))
        await o.until("end")
        # ... but the end commits them at once, all together, with the result.
        record = await finished(games, store, game_id)
        assert commits == [1, 4]
        assert len(record.moves) == 5 and record.result is not None
        assert record.result.winner is Player.O
        await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    finally:
        await games.shutdown()


async def test_without_a_commit_interval_each_move_is_committed_alone(
    store: GameStore, http: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    commits = count_commits(store, monkeypatch)
    games = GameManager(store, http, limits=LIMITS, commit_interval=0)
    try:
        game_id, x, o, seats = await seated_humans(games)
        for stored, (side, stones) in enumerate(
            [(o, ((1, 0), (2, 0))), (x, ((0, 1), (0, 2))), (o, ((3, 0), (4, 0)))], start=1
        ):
            await side.until("move_request")
            side.say(move(*stones))
            await until_stored(store, game_id, stored)
        assert commits == [1, 1, 1]
        for connection in (x, o):
            connection.hang_up()
        await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    finally:
        await games.shutdown()


async def test_a_stop_commits_the_moves_waiting_for_their_group(
    store: GameStore, http: aiohttp.ClientSession
) -> None:
    games = GameManager(store, http, limits=LIMITS, commit_interval=3600)
    game_id, x, o, seats = await seated_humans(games)
    await o.until("move_request")
    o.say(move((1, 0), (2, 0)))
    await x.until("move_request")
    x.say(move((0, 1), (0, 2)))
    await o.until("move_request")

    await asyncio.wait_for(games.shutdown(), TIMEOUT)

    record = await store.get_game(game_id)
    assert record is not None and len(record.moves) == 2
    assert record.result is not None and record.result.cause is EndCause.ABORTED
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)


@pytest.mark.parametrize(
    ("setting", "message"),
    [("commit_interval", "0 or more seconds"), ("pong_timeout", "more than 0 seconds")],
)
@pytest.mark.parametrize("value", [-0.001, float("nan"), float("inf")])
def test_the_managers_intervals_must_be_finite_numbers_of_seconds(
    store: GameStore, http: aiohttp.ClientSession, setting: str, message: str, value: float
) -> None:
    settings: dict[str, Any] = {setting: value}
    with pytest.raises(ValueError, match=f"^{setting} must be {message}, got"):
        GameManager(store, http, **settings)


def test_a_pong_timeout_of_zero_is_refused(store: GameStore, http: aiohttp.ClientSession) -> None:
    with pytest.raises(ValueError, match="pong_timeout must be more than 0 seconds"):
        GameManager(store, http, pong_timeout=0)


async def test_a_second_connection_with_the_token_takes_the_seat_over(
    manager: GameManager,
) -> None:
    _game_id, token_x, token_o = await start_humans(manager)
    x, o = FakeConnection(), FakeConnection()
    seats = [seat(manager, token_x, x), seat(manager, token_o, o)]
    await o.until("move_request")

    again = FakeConnection()
    seats.append(seat(manager, token_o, again))
    assert (await again.next() or {}).get("type") == "setup"
    assert (await again.next() or {}).get("type") == "move_request"
    await asyncio.wait_for(seats[1], TIMEOUT)
    assert o.close_code == 1008

    again.say(move((1, 0), (2, 0)))
    request = await x.until("move_request")
    assert request["previous"][-1]["pieces"] == [{"q": 1, "r": 0}, {"q": 2, "r": 0}]


async def test_a_human_who_does_not_come_back_forfeits_with_disconnect(
    store: GameStore, http: aiohttp.ClientSession
) -> None:
    games = GameManager(store, http, limits=SessionLimits(reconnect_s=0.2))
    try:
        game_id, x, o, seats = await seated_humans(games)
        await o.until("move_request")
        o.hang_up()
        end = await x.until("end")
        await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
        record = await finished(games, store, game_id)
    finally:
        await games.shutdown()
    assert (end["winner"], end["reason"], end["detail"].partition(": ")[0]) == (
        "x",
        "forfeit",
        "disconnect",
    )
    assert end["detail"].endswith("did not reconnect within 0.2 s")
    assert record.result is not None and record.result.cause is EndCause.DISCONNECT


async def test_a_human_plays_a_bot(manager: GameManager, store: GameStore, bots: str) -> None:
    created = await manager.create_game(
        NewGameRequest(player_x=bot(f"{bots}/threat"), player_o=human())
    )
    assert created.token_o is not None and created.token_x is None
    o = FakeConnection()
    seated = seat(manager, created.token_o, o)
    await o.until("setup")
    await o.until("move_request")
    o.say(move((1, 0), (2, 0)))

    request = await o.until("move_request")

    assert [m["side"] for m in request["previous"]] == ["o", "x"]
    assert len(request["board"]["cells"]) == 5
    await manager.shutdown()
    await asyncio.wait_for(seated, TIMEOUT)
    record = await store.get_game(created.game_id)
    assert record is not None and len(record.moves) == 2


async def test_an_error_in_a_game_task_aborts_that_game_only(
    manager: GameManager, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(packet: BaseModel) -> bytes:
        if getattr(packet, "type", None) == "move_request":  # X's, after O's move
            raise RuntimeError("a bug")
        return dump_packet(packet)

    game_id, x, o, seats = await seated_humans(manager)
    await o.until("move_request")
    monkeypatch.setattr(game_running, "dump_packet", failing)
    o.say(move((1, 0), (2, 0)))

    end = await x.until("end")
    assert (end["winner"], end["detail"].partition(": ")[0]) == (None, "aborted")
    await asyncio.wait_for(asyncio.gather(*seats), TIMEOUT)
    record = await finished(manager, store, game_id)
    assert record.result is not None and record.result.cause is EndCause.ABORTED
    monkeypatch.undo()
    assert await manager.create_game(NewGameRequest(player_x=human(), player_o=human()))


async def test_an_unknown_token_is_refused_with_1008(manager: GameManager) -> None:
    connection = FakeConnection()
    with pytest.raises(UnknownToken):
        await manager.play_human("not-a-token", connection)
    assert connection.close_code == 1008


async def test_a_token_is_used_up_when_its_game_ends(
    manager: GameManager, store: GameStore
) -> None:
    game_id, token_x, _token_o = await start_humans(manager)
    await manager.shutdown()
    await finished(manager, store, game_id)
    with pytest.raises(UnknownToken):
        await manager.play_human(token_x, FakeConnection())

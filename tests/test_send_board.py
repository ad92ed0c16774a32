"""Who gets ``board`` in ``move_request``, over real sockets on 127.0.0.1.

The spec's ``move_request`` holds ``previous`` only; ``board`` (the full board) is our
extension for the prototype's bots and clients. A websocket bot gets it only when its
seat says ``send_board: true`` or the server runs with ``--send-board always``; a human
gets it unless its seat says ``send_board: false``. Our own bots must play whole games
from ``previous`` alone. The stand-in bot here reads raw frames, so a ``board`` sent as
``null`` would show. Timeouts are generous and only stop a broken test from hanging;
nothing is timed.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from game import serve
from game.rules import Position
from models import ResultReason
from tests.loopback_app import serving_app
from tests.test_server import Arena, arena, receive

Json = dict[str, Any]
Stone = tuple[int, int, str]

# Short games against the hosted random bot: long enough for every kind of previous.
MATCH: Json = {"turn_limit": 20}


@dataclass
class StandIn:
    """What a stand-in bot saw: its raw move_requests, and the board it kept from
    ``setup`` and each ``previous``, as a spec bot must."""

    url: str
    requests: list[Json] = field(default_factory=list)
    boards_seen: list[tuple[set[Stone], set[Stone]]] = field(default_factory=list)
    ended: list[Json] = field(default_factory=list)


@asynccontextmanager
async def stand_in_bot() -> AsyncIterator[StandIn]:
    """A websocket bot declaring base features only: it keeps its board from
    ``setup`` plus ``previous`` and answers the first two legal cells; when a request
    has a ``board``, it records that board next to its own for the test to compare."""
    seen = StandIn(url="")

    async def capabilities(_request: web.Request) -> web.Response:
        return web.json_response({"basic_websocket": {"versions": {"v1-alpha": {}}}})

    async def game(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        position = Position()
        async for message in ws:
            packet = json.loads(message.data)
            if packet["type"] == "setup":
                stones = [(c["q"], c["r"], c["p"]) for c in packet["board"]["cells"]]
                position = Position(setup=stones, to_move="o")
            elif packet["type"] == "move_request":
                seen.requests.append(packet)
                for move in packet["previous"]:
                    for piece in move["pieces"]:
                        position.place(piece["q"], piece["r"])
                if "board" in packet:
                    theirs = {(c["q"], c["r"], c["p"]) for c in packet["board"]["cells"]}
                    seen.boards_seen.append((theirs, set(position.stones)))
                # Both were legal before the first is placed, which only adds cells.
                first, second = sorted(position.legal_cells())[:2]
                pieces = [{"q": q, "r": r} for q, r in (first, second)]
                await ws.send_str(json.dumps({"type": "move_response", "move": {"pieces": pieces}}))
            elif packet["type"] == "end":
                seen.ended.append(packet)
        return ws

    app = web.Application()
    app.router.add_get("/capabilities.json", capabilities)
    app.router.add_get("/bws/v1-alpha/game", game)
    async with serving_app(app) as url:
        seen.url = url
        yield seen


def stand_in_seat(bot: StandIn, send_board: bool | None = None) -> Json:
    seat: Json = {"type": "bot", "bot_url": bot.url}
    if send_board is not None:
        seat["send_board"] = send_board
    return seat


async def played(a: Arena, x: Json, o: Json, match: Json = MATCH) -> Any:
    """Play a game to its end; its record. A seat that could not follow the game would
    forfeit it: the caller checks the result."""
    created = await a.new_game({"player_x": x, "player_o": o, "match_config": match})
    return await a.finished_record(created["game_id"])


def no_forfeit(record: Any) -> None:
    assert record.result is not None
    assert record.result.reason is not ResultReason.FORFEIT, record.result.detail


# ------------------------------------------------------------- websocket bots


async def test_a_websocket_bots_requests_carry_no_board_by_default(tmp_path: Path) -> None:
    async with stand_in_bot() as bot, arena(tmp_path) as a:
        record = await played(a, a.bot("random"), stand_in_seat(bot))
    no_forfeit(record)
    assert len(bot.requests) >= 5 and bot.ended
    # Left off the wire, not sent as null.
    assert all("board" not in request for request in bot.requests)
    assert bot.requests[0]["previous"] == []  # O's first request


async def test_a_seat_with_send_board_gets_the_full_board_in_every_request(
    tmp_path: Path,
) -> None:
    async with stand_in_bot() as bot, arena(tmp_path) as a:
        record = await played(a, a.bot("random"), stand_in_seat(bot, send_board=True))
    no_forfeit(record)
    assert len(bot.boards_seen) == len(bot.requests) >= 5
    for theirs, ours in bot.boards_seen:
        assert theirs == ours  # the board is exactly the stones of setup and previous


async def test_send_board_always_gives_every_bot_the_board_unless_its_seat_says_no(
    tmp_path: Path,
) -> None:
    async with (
        stand_in_bot() as with_board,
        stand_in_bot() as without,
        arena(tmp_path, send_board="always") as a,
    ):
        no_forfeit(await played(a, a.bot("random"), stand_in_seat(with_board)))
        no_forfeit(await played(a, a.bot("random"), stand_in_seat(without, send_board=False)))
    assert with_board.requests and all("board" in r for r in with_board.requests)
    assert without.requests and all("board" not in r for r in without.requests)


@pytest.mark.parametrize("send_board", [None, True])
async def test_two_hosted_bots_play_a_whole_game_with_or_without_the_board(
    tmp_path: Path, send_board: bool | None
) -> None:
    """Our bot framework plays from ``previous`` alone (the default) and from a board."""
    async with arena(tmp_path) as a:
        x, o = a.bot("threat"), a.bot("center")
        if send_board is not None:
            x, o = {**x, "send_board": send_board}, {**o, "send_board": send_board}
        record = await played(a, x, o, {"turn_limit": 60})
    no_forfeit(record)
    assert len(record.moves) >= 4  # several requests each, every one with a previous


async def test_send_board_must_be_a_boolean(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        seat = {**a.bot("random"), "send_board": "yes"}
        status, answer = await a.post({"player_x": seat, "player_o": a.bot("random")})
    assert status == 422 and "send_board" in json.dumps(answer)


# --------------------------------------------------------------------- humans


async def human_request(a: Arena, seat: Json) -> Json:
    """The first move_request of a human seat O (X is a hosted bot)."""
    created = await a.new_game({"player_x": a.bot("random"), "player_o": seat})
    url = f"{a.ws_base}/ws?token={created['token_o']}"
    async with a.http.ws_connect(url) as ws:
        while True:
            packet = await receive(ws)
            assert packet is not None, "closed before a move_request"
            if packet["type"] == "move_request":
                return packet


async def test_a_human_gets_the_board_unless_its_seat_says_no(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        request = await human_request(a, {"type": "human"})
        assert request["board"] == {"cells": [{"q": 0, "r": 0, "p": "x"}]}
        request = await human_request(a, {"type": "human", "send_board": False})
        assert "board" not in request and request["previous"] == []


# ------------------------------------------------------------------ the option


def test_the_server_option_reaches_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    given: dict[str, Any] = {}

    class Stop(Exception):
        pass

    def fake_app(**options: Any) -> None:
        given.update(options)
        raise Stop

    listener = socket.socket()
    monkeypatch.setattr(serve, "_open_store", lambda url: None)
    monkeypatch.setattr(serve, "_listen", lambda host, port: listener)
    monkeypatch.setattr(serve, "create_app", fake_app)
    try:
        with pytest.raises(Stop):
            serve.main(["--send-board", "always"])
        assert given["send_board"] == "always"
        with pytest.raises(Stop):
            serve.main([])
        assert given["send_board"] == "auto"
    finally:
        listener.close()


def test_an_unknown_send_board_value_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        serve.main(["--send-board", "never"])
    assert exit_.value.code == 2
    assert "invalid choice: 'never'" in capsys.readouterr().err


def test_create_app_refuses_an_unknown_policy() -> None:
    from game.server import create_app

    with pytest.raises(ValueError, match="send_board"):
        create_app(send_board="never")  # type: ignore[arg-type]

"""The bot server (``bot.serve``) over real sockets on 127.0.0.1.

Each test starts uvicorn in-process on an ephemeral port and talks to it with aiohttp:
the test plays the game server's part (``setup``, ``move_request`` with ``previous``,
and ``board`` where the server sends it, heartbeats, ``end``) and checks every answer
against the rules and the spec.
Timeouts are generous and only stop a broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import aiohttp
import pytest
import uvicorn
import yaml  # type: ignore[import-untyped]  # PyYAML comes with uvicorn[standard]

import bot.serve
from bot.bot import BaseBot, Deadline, MoveDecision
from bot.capabilities import BwsConfigCapability, BwsV1Alpha, Capabilities, default_capabilities
from bot.serve import (
    MAX_BODY_BYTES,
    MAX_FRAME_BYTES,
    BotPool,
    BotServer,
    create_app,
    mount_bot,
    serving,
    uvicorn_config,
)
from game.rules import Position
from models import (
    CLOSE_INVALID_DATA,
    CLOSE_POLICY_VIOLATION,
    Match,
    Player,
    PositionEvaluation,
)
from tests.json_schema import schema_problems
from tests.ping_flood import flood
from wire.frames import CONTROL_FLOOD_REFUSED, CONTROL_FRAME_BURST, INVALID_UTF8_REFUSED

ROOT = Path(__file__).resolve().parents[1]
SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec"
TIMEOUT = 20.0  # only against hangs

Json = dict[str, Any]


# ------------------------------------------------------------ the spec's schemas


@cache
def _spec(name: str) -> Json:
    document: Json = yaml.safe_load((SPEC / name).read_text())
    return document


def check_against(value: Any, spec_file: str, schema_name: str) -> None:
    document = _spec(spec_file)
    schema = document["components"]["schemas"][schema_name]
    assert schema_problems(value, schema, document) == []


# --------------------------------------------------------------------- test bots


def line_move(position: Position, side: Player) -> tuple[tuple[int, int], tuple[int, int]]:
    """The two nearest free cells at q >= 1 on the side's row (X: r=0 through its stone
    at the origin, O: r=2): each side builds a line, so a game ends in 3 moves."""
    row = 0 if side is Player.X else 2
    free = [(q, row) for q in range(1, 40) if position.piece_at(q, row) is None]
    return free[0], free[1]


class LineBot(BaseBot):
    """Builds a straight line; the default capabilities (WebSocket and stateless)."""

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        return line_move(position, player)


class SlowBot(LineBot):
    """Thinks 300 ms a move: three heartbeat intervals of 100 ms."""

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        time.sleep(0.3)
        return line_move(position, player)


class OverrunBot(LineBot):
    """Declares move_time_limit; its first move reports a best move and then keeps
    thinking until the test releases it."""

    release: ClassVar[threading.Event] = threading.Event()
    expired_when_released: ClassVar[list[bool]] = []

    def __init__(self) -> None:
        super().__init__()
        self.moves = 0

    @classmethod
    def capabilities(cls) -> Capabilities:
        return default_capabilities(BwsV1Alpha(move_time_limit=True))

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        self.moves += 1
        best = line_move(position, player)
        if self.moves == 1:
            deadline.report(best)
            self.release.wait(TIMEOUT)
            self.expired_when_released.append(deadline.expired)
            return (best[1], best[0])  # a different answer, which must be ignored
        return best


class FailingBot(LineBot):
    """Raises on its first move, then plays."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        if not self.failed:
            self.failed = True
            raise RuntimeError("the bot's own bug")
        return line_move(position, player)


class RecordingBot(LineBot):
    """Declares config, evaluation and interruptible, and records every call."""

    calls: ClassVar[list[tuple[str, Any]]] = []

    @classmethod
    def capabilities(cls) -> Capabilities:
        return default_capabilities(
            BwsV1Alpha(config=BwsConfigCapability(), evaluation=True, interruptible=True)
        )

    def on_config(self, depth: int | None, extras: dict[str, Any]) -> None:
        self.calls.append(("config", (depth, extras.get("x-seed"))))

    def on_setup(self, position: Position) -> None:
        self.calls.append(("setup", len(position)))

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        self.calls.append(("play", match.view_distance))
        if (
            len(position) == 1
            and player is Player.O
            and not any(name == "interrupted" for name, _ in self.calls)
        ):
            # The first request is interrupted: think until the deadline is cancelled.
            while not deadline.expired:
                time.sleep(0.005)
            self.calls.append(("interrupted", deadline.cancelled))
        return line_move(position, player)

    def evaluate_position(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> PositionEvaluation:
        self.calls.append(("evaluate", len(position)))
        return PositionEvaluation(heuristic=0.25)


class CountingBot(LineBot):
    """Says which process it runs in and how many moves this instance has made."""

    def __init__(self) -> None:
        super().__init__()
        self.moves = 0

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        self.moves += 1
        first, second = line_move(position, player)
        evaluation = PositionEvaluation.model_validate({"win_in": self.moves, "pid": os.getpid()})
        return MoveDecision(pieces=MoveDecision.of([first, second]).pieces, evaluation=evaluation)


class ThreadRecordingBot(LineBot):
    """Records the thread of every call into it."""

    threads: ClassVar[list[threading.Thread]] = []

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        self.threads.append(threading.current_thread())
        return line_move(position, player)


class OnLoopBot(ThreadRecordingBot):
    """Declares that it answers in microseconds: called on the event loop."""

    answers_on_loop: ClassVar[bool] = True
    threads: ClassVar[list[threading.Thread]] = []


class TaskRecordingOnLoopBot(LineBot):
    """Answers on the loop and records the task each call runs in (None: a callback)."""

    answers_on_loop: ClassVar[bool] = True
    tasks: ClassVar[list[asyncio.Task[Any] | None]] = []

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        self.tasks.append(asyncio.current_task())
        return line_move(position, player)


class FailingOnLoopBot(FailingBot):
    answers_on_loop: ClassVar[bool] = True


class CountingOnLoopBot(CountingBot):
    answers_on_loop: ClassVar[bool] = True


class OriginBot(LineBot):
    """Always answers the occupied origin: an illegal move, replaced by the fallback."""

    def play(self, position: Position, player: Player, match: Match, deadline: Deadline) -> Any:
        return [(0, 0), (1, 0)]


class OriginOnLoopBot(OriginBot):
    answers_on_loop: ClassVar[bool] = True


class FreeSetupBot(LineBot):
    """Declares free_setup: it plays from any board."""

    @classmethod
    def capabilities(cls) -> Capabilities:
        return default_capabilities(BwsV1Alpha(free_setup=True))


class SocketOnlyBot(LineBot):
    @classmethod
    def capabilities(cls) -> Capabilities:
        return default_capabilities(stateless=False)


# ------------------------------------------------------ a scripted game server


@asynccontextmanager
async def served(app: Any) -> AsyncIterator[BotServer]:
    async with serving(app) as server:
        yield server


@asynccontextmanager
async def connect(url: str) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
    async with aiohttp.ClientSession() as client, client.ws_connect(url) as ws:
        yield ws


def socket_url(server: BotServer, path: str = "/bws/v1-alpha/game") -> str:
    return f"ws://127.0.0.1:{server.port}{path}"


def board_of(position: Position) -> Json:
    return {"cells": [{"q": q, "r": r, "p": p} for q, r, p in position.stones]}


async def send(ws: aiohttp.ClientWebSocketResponse, packet: Json) -> None:
    await ws.send_str(json.dumps(packet))


async def next_packet(ws: aiohttp.ClientWebSocketResponse) -> Json:
    message = await asyncio.wait_for(ws.receive(), TIMEOUT)
    assert message.type is aiohttp.WSMsgType.TEXT, (message.type, message.data, message.extra)
    packet: Json = json.loads(message.data)
    return packet


async def closed_with(ws: aiohttp.ClientWebSocketResponse) -> tuple[int | None, str]:
    """Waits for the server to close; returns the close code and reason."""
    message = await asyncio.wait_for(ws.receive(), TIMEOUT)
    assert message.type is aiohttp.WSMsgType.CLOSE, (message.type, message.data)
    return ws.close_code, str(message.extra or "")


@contextmanager
def heartbeats(ws: aiohttp.ClientWebSocketResponse, every: float | None) -> Iterator[list[float]]:
    """While the block runs, sends ``heartbeat`` with ``waiting: true`` every ``every``
    seconds (as a game server does while it waits); the list counts them."""
    sent: list[float] = []

    async def beat() -> None:
        assert every is not None
        while True:
            await asyncio.sleep(every)
            await send(ws, {"type": "heartbeat", "waiting": True})
            sent.append(time.monotonic())

    task = asyncio.ensure_future(beat()) if every else None
    try:
        yield sent
    finally:
        if task is not None:
            task.cancel()


def opponent_move(position: Position) -> list[tuple[int, int]]:
    """Stones with gaps on row -4, going left: never a line, never in the bot's way."""
    stones: list[tuple[int, int]] = []
    q = -1
    while len(stones) < 2:
        if position.is_legal(q, -4):
            stones.append((q, -4))
            position.place(q, -4)
        q -= 2
    return stones


@dataclass
class Game:
    """What a scripted game ended with."""

    position: Position
    answers: list[Json] = field(default_factory=list)
    heartbeats: int = 0


async def play_game(
    ws: aiohttp.ClientWebSocketResponse,
    side: Player,
    *,
    heartbeat: float | None = None,
    time_limit: float | None = None,
    send_board: bool = False,
) -> Game:
    """Plays a whole game against the bot on ``ws``, as the game server would; checks
    each answer against the spec and the rules, then sends ``end`` and sees the bot
    close normally. Heartbeats (``waiting: true``) go out every ``heartbeat`` seconds
    while the bot thinks. Requests hold ``previous`` only, as the server sends a
    websocket bot by default; with ``send_board``, also ``board`` (a seat whose
    ``send_board`` is on)."""
    position = Position()
    game = Game(position)
    answers = game.answers
    await send(ws, {"type": "setup", "board": board_of(position)})
    previous: list[Json] = []
    while position.outcome is None:
        mover = Player(position.to_move)
        if mover is not side:
            stones = opponent_move(position)
            previous.append({"side": mover.value, "pieces": [{"q": q, "r": r} for q, r in stones]})
            continue
        request: Json = {"type": "move_request", "side": side.value, "previous": previous}
        if send_board:
            request["board"] = board_of(position)
        if time_limit is not None:
            request["move_time_limit"] = time_limit
        await send(ws, request)
        with heartbeats(ws, heartbeat) as beats:
            answer = await next_packet(ws)
        game.heartbeats += len(beats)
        check_against(answer, "bws-v1-alpha.yaml", "MoveResponsePacket")
        answers.append(answer)
        placed: list[Json] = []
        for piece in answer["move"]["pieces"]:
            assert position.is_legal(piece["q"], piece["r"]), (piece, position)
            position.place(piece["q"], piece["r"])
            placed.append(piece)
            if position.outcome is not None:
                break  # a winning first stone: the second is never placed
        previous = [{"side": side.value, "pieces": placed}]
    winner = position.outcome.winner
    await send(ws, {"type": "end", "winner": winner, "reason": "win", "board": board_of(position)})
    code, reason = await closed_with(ws)
    assert code == 1000, reason
    return game


async def play_at(url: str, side: Player, **options: Any) -> Position:
    async with connect(url) as ws:
        return (await play_game(ws, side, **options)).position


def won_by(position: Position, side: Player) -> bool:
    return position.outcome is not None and position.outcome.winner == side.value


# ------------------------------------------------------------------ capabilities


def test_the_schema_check_catches_a_bad_document() -> None:
    document = _spec("bot-api-v1.yaml")
    schema = document["components"]["schemas"]["Capabilities"]
    bad = {"meta": {"tags": ["Not A Tag"]}, "basic_websocket": {}}
    assert len(schema_problems(bad, schema, document)) == 2


async def test_capabilities_json_validates_against_the_spec() -> None:
    async with (
        served(create_app(RecordingBot)) as server,
        aiohttp.ClientSession() as client,
        client.get(f"{server.url}/capabilities.json") as response,
    ):
        assert response.status == 200
        assert response.content_type == "application/json"
        document = await response.json()
    check_against(document, "bot-api-v1.yaml", "Capabilities")
    features = document["basic_websocket"]["versions"]["v1-alpha"]
    assert features["evaluation"] is True and features["interruptible"] is True
    assert document["stateless"]["versions"]["v1-alpha"]["api_root"] == "stateless/v1-alpha"


async def test_api_root_option_moves_both_apis() -> None:
    async with served(create_app(LineBot, api_root="/api/v1/")) as server:
        async with aiohttp.ClientSession() as client:
            async with client.get(f"{server.url}/capabilities.json") as response:
                document = await response.json()
            turn = {"board": {"to_move": "o", "cells": [{"q": 0, "r": 0, "p": "x"}]}}
            async with client.post(f"{server.url}/api/v1/turn", json=turn) as response:
                assert response.status == 200
        assert document["basic_websocket"]["versions"]["v1-alpha"]["api_root"] == "api/v1"
        assert document["stateless"]["versions"]["v1-alpha"]["api_root"] == "api/v1"
        assert won_by(await play_at(socket_url(server, "/api/v1/game"), Player.X), Player.X)


# -------------------------------------------------------------------- full games


@pytest.mark.parametrize("send_board", [False, True])
@pytest.mark.parametrize("side", [Player.O, Player.X])
async def test_a_full_game_to_the_end(side: Player, send_board: bool) -> None:
    async with served(create_app(LineBot)) as server:
        position = await play_at(socket_url(server), side, send_board=send_board)
    assert won_by(position, side)


async def test_the_prototypes_doubled_socket_path_plays_too() -> None:
    async with served(create_app(LineBot)) as server:
        position = await play_at(socket_url(server, "/bws/v1-alpha/game/game"), Player.O)
    assert won_by(position, Player.O)


async def test_a_plain_get_on_the_socket_path_says_it_is_a_websocket() -> None:
    async with (
        served(create_app(LineBot)) as server,
        aiohttp.ClientSession() as client,
        client.get(f"{server.url}/bws/v1-alpha/game") as response,
    ):
        assert response.status == 426
        assert "WebSocket" in await response.text()


async def test_several_bots_under_prefixes() -> None:
    app = create_app({"/line": LineBot, "recording": RecordingBot})
    async with served(app) as server, aiohttp.ClientSession() as client:
        for prefix in ("line", "recording"):
            async with client.get(f"{server.url}/{prefix}/capabilities.json") as response:
                assert response.status == 200
                check_against(await response.json(), "bot-api-v1.yaml", "Capabilities")
        async with client.get(f"{server.url}/capabilities.json") as response:
            assert response.status == 404
        line = await play_at(socket_url(server, "/line/bws/v1-alpha/game"), Player.X)
        assert won_by(line, Player.X)


async def test_mount_bot_puts_a_bot_into_another_app() -> None:
    from starlette.applications import Starlette

    pool = BotPool()
    app = Starlette(routes=[mount_bot("/hosted/line", LineBot, pool)])
    app.state.bot_pool = pool
    try:
        async with served(app) as server:
            url = socket_url(server, "/hosted/line/bws/v1-alpha/game")
            assert won_by(await play_at(url, Player.O), Player.O)
    finally:
        await pool.close_sessions()
        pool.shutdown()


async def test_one_hundred_concurrent_sessions() -> None:
    async with served(create_app(LineBot)) as server:
        url = socket_url(server)
        sides = [Player.O if index % 2 else Player.X for index in range(100)]
        positions = await asyncio.gather(*(play_at(url, side) for side in sides))
    assert all(won_by(position, side) for position, side in zip(positions, sides, strict=True))


# --------------------------------------------------------------- time and threads


async def test_a_bot_thinking_three_heartbeats_keeps_its_connection_and_wins() -> None:
    async with served(create_app(SlowBot)) as server, connect(socket_url(server)) as ws:
        game = await play_game(ws, Player.O, heartbeat=0.1)
    assert won_by(game.position, Player.O)
    assert game.heartbeats > 0  # they did arrive while the bot was thinking


async def test_an_overrunning_bot_answers_with_its_best_move_in_time() -> None:
    OverrunBot.release.clear()
    OverrunBot.expired_when_released.clear()
    async with served(create_app(OverrunBot)) as server, connect(socket_url(server)) as ws:
        await send(ws, {"type": "setup"})
        request = {"type": "move_request", "side": "o", "previous": [], "move_time_limit": 0.3}
        await send(ws, request)
        answer = await next_packet(ws)
        # Sent while the bot is still thinking: its reported best move.
        assert not OverrunBot.release.is_set()
        assert answer["move"]["pieces"] == [{"q": 1, "r": 2}, {"q": 2, "r": 2}]
        OverrunBot.release.set()
        x_move = {"side": "x", "pieces": [{"q": -1, "r": -4}, {"q": -3, "r": -4}]}
        await send(
            ws,
            {
                "type": "move_request",
                "side": "o",
                "previous": [{"side": "o", "pieces": answer["move"]["pieces"]}, x_move],
            },
        )
        second = await next_packet(ws)
        assert second["move"]["pieces"] == [{"q": 3, "r": 2}, {"q": 4, "r": 2}]
    # Answered for it, the first job had its deadline expired.
    assert OverrunBot.expired_when_released == [True]


async def test_a_timed_move_is_answered_without_a_task_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A timer answers for the bot if its time comes; awaiting the answer in a task with
    # a timeout cost a loop iteration and tens of µs a move (every move of a game with a
    # clock, or of any game our server plays: it tells the stall limit).
    names: list[str | None] = []
    create_task = asyncio.create_task

    def counting(coro: Any, *, name: str | None = None, **options: Any) -> Any:
        names.append(name)
        return create_task(coro, name=name, **options)

    monkeypatch.setattr(asyncio, "create_task", counting)
    OverrunBot.release.set()  # an OverrunBot that does not overrun: it answers at once
    async with served(create_app(OverrunBot)) as server, connect(socket_url(server)) as ws:
        await send(ws, {"type": "setup"})
        request = {"type": "move_request", "side": "o", "previous": [], "move_time_limit": 5}
        await send(ws, request)
        answer = await next_packet(ws)
    assert answer["type"] == "move_response"
    assert not [name for name in names if name is not None and name.endswith(" job")]


@pytest.mark.parametrize("bot_class", ["FailingBot", "FailingOnLoopBot"])
async def test_a_bot_that_raises_is_logged_and_the_game_goes_on(
    caplog: pytest.LogCaptureFixture, bot_class: str
) -> None:
    # In a worker thread or on the event loop (answers_on_loop), alike.
    async with served(create_app(globals()[bot_class])) as server:
        position = await play_at(socket_url(server), Player.X)
    assert position.outcome is not None
    failures = [r for r in caplog.records if r.name == "bot.serve" and r.exc_info]
    assert failures and "the bot's own bug" in str(failures[0].exc_info[1])  # type: ignore[index]


@pytest.mark.parametrize("bot_class", ["OriginBot", "OriginOnLoopBot"])
async def test_an_illegal_answer_is_replaced_and_its_warning_logged_once(
    caplog: pytest.LogCaptureFixture, bot_class: str
) -> None:
    async with (
        served(create_app(globals()[bot_class])) as server,
        connect(socket_url(server)) as ws,
    ):
        await send(ws, {"type": "setup"})
        await send(ws, {"type": "move_request", "side": "o", "previous": []})
        answer = await next_packet(ws)
    pieces = [(p["q"], p["r"]) for p in answer["move"]["pieces"]]
    assert len(pieces) == 2 and (0, 0) not in pieces
    warned = [r for r in caplog.records if r.name == "bot.serve" and "fallback" in r.message]
    assert [r.levelno for r in warned] == [logging.WARNING]
    assert "is illegal" in warned[0].message


async def test_config_setup_eval_and_interrupt_reach_the_bot_in_order() -> None:
    RecordingBot.calls.clear()
    async with served(create_app(RecordingBot)) as server, connect(socket_url(server)) as ws:
        await send(ws, {"type": "config", "depth": 3, "x-seed": 7, "x-match": {"view_distance": 6}})
        await send(ws, {"type": "setup"})
        await send(ws, {"type": "eval_request", "side": "o"})
        evaluation = await next_packet(ws)
        assert evaluation == {"type": "eval_response", "evaluation": {"heuristic": 0.25}}
        await send(ws, {"type": "move_request", "side": "o", "previous": []})
        while ("play", 6) not in RecordingBot.calls:  # the bot is thinking
            await asyncio.sleep(0.01)
        await send(ws, {"type": "interrupt"})
        await send(ws, {"type": "move_request", "side": "o", "previous": []})
        answer = await next_packet(ws)  # only the second request is answered
        assert answer["move"]["pieces"] == [{"q": 1, "r": 2}, {"q": 2, "r": 2}]
    assert RecordingBot.calls == [
        ("config", (3, 7)),
        ("setup", 1),
        ("evaluate", 1),
        ("play", 6),
        ("interrupted", True),
        ("play", 6),
    ]


# ------------------------------------------------------------------- bad input


async def test_garbage_closes_that_session_while_others_play_on() -> None:
    async with served(create_app(SlowBot)) as server:
        url = socket_url(server)
        game = asyncio.ensure_future(play_at(url, Player.X))
        async with connect(url) as bad:
            await bad.send_str("this is not JSON")
            code, reason = await closed_with(bad)
        assert code == 1002 and "bad packet" in reason
        async with connect(url) as bad:
            await send(bad, {"type": "move_request", "side": "purple", "previous": []})
            code, reason = await closed_with(bad)
        assert code == 1002 and "side" in reason
        assert won_by(await asyncio.wait_for(game, TIMEOUT), Player.X)


async def test_an_oversized_frame_closes_with_1009() -> None:
    async with served(create_app(LineBot)) as server, connect(socket_url(server)) as ws:
        await ws.send_str(" " * (MAX_FRAME_BYTES + 1))
        code, reason = await closed_with(ws)
    assert code == 1009 and "at most" in reason


async def test_a_binary_frame_closes_with_1003_while_others_play_on() -> None:
    async with served(create_app(SlowBot)) as server:
        url = socket_url(server)
        game = asyncio.ensure_future(play_at(url, Player.X))
        async with connect(url) as bad:
            await bad.send_bytes(b'{"type": "setup"}')
            code, reason = await closed_with(bad)
        assert code == 1003 and "binary frame of 17 bytes" in reason and "text frame" in reason
        assert won_by(await asyncio.wait_for(game, TIMEOUT), Player.X)


async def test_text_that_is_not_utf8_closes_with_1007_and_the_reason_while_others_play_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with served(create_app(SlowBot)) as server:
        url = socket_url(server)
        game = asyncio.ensure_future(play_at(url, Player.X))
        async with connect(url) as bad:
            await bad.send_frame(b'{"type": "\xff"}', aiohttp.WSMsgType.TEXT)
            code, reason = await closed_with(bad)
        assert (code, reason) == (CLOSE_INVALID_DATA, INVALID_UTF8_REFUSED)
        assert won_by(await asyncio.wait_for(game, TIMEOUT), Player.X)
    # The bot's operator reads why, without a traceback.
    said = [
        r for r in caplog.records if r.name == "bot.serve" and INVALID_UTF8_REFUSED in r.message
    ]
    assert [r.levelno for r in said] == [logging.WARNING] and not any(r.exc_info for r in said)


async def test_a_flood_of_pings_closes_with_1008_and_the_reason_while_others_play_on() -> None:
    async with served(create_app(SlowBot)) as server:
        url = socket_url(server)
        game = asyncio.ensure_future(play_at(url, Player.X))
        async with connect(url) as bad:
            flooding = asyncio.create_task(flood(bad))
            code, reason = await closed_with(bad)
            sent = await flooding
        assert (code, reason) == (CLOSE_POLICY_VIOLATION, CONTROL_FLOOD_REFUSED)
        assert sent > CONTROL_FRAME_BURST
        assert won_by(await asyncio.wait_for(game, TIMEOUT), Player.X)


@pytest.fixture
def plain_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    """``bot.serve`` runs uvicorn's own WebSocket protocol, as another ASGI server would:
    no ``FrameWriter``, no ``FrameReader``."""

    def config_of(app: Any, **options: Any) -> uvicorn.Config:
        config = uvicorn_config(app, **options)
        config.ws = "websockets-sansio"
        return config

    monkeypatch.setattr(bot.serve, "uvicorn_config", config_of)


@pytest.mark.usefixtures("plain_protocol")
async def test_under_a_protocol_without_a_frame_writer_packets_go_through_asgi_sends() -> None:
    """uvicorn's own WebSocket protocol (as another ASGI server) offers no
    ``FrameWriter``: the connection sends every packet through ASGI, and plays the same."""
    async with served(create_app(SlowBot)) as server:
        assert server.config.ws == "websockets-sansio"
        assert won_by(
            await asyncio.wait_for(play_at(socket_url(server), Player.X), TIMEOUT), Player.X
        )


async def test_a_move_request_before_setup_closes_with_1002() -> None:
    async with served(create_app(LineBot)) as server, connect(socket_url(server)) as ws:
        await send(ws, {"type": "move_request", "side": "o", "previous": []})
        code, reason = await closed_with(ws)
    assert code == 1002 and "move_request before setup" in reason


def stones_far_apart(count: int) -> list[Json]:
    """The hostile board: X's opening, then one stone per row at |q| near 2**19, on
    alternate sides, with the stone counts of a real game (O to move)."""
    far = 2**19 - 10
    cells: list[Json] = [{"q": 0, "r": 0, "p": "x"}]
    for r in range(1, count + 1):
        side = "o" if r % 4 in (1, 2) else "x"
        cells.append({"q": far if r % 2 else -far, "r": r, "p": side})
    return cells


async def test_a_board_of_stones_far_apart_closes_with_1008_before_any_work() -> None:
    """Thousands of stones a game cannot have placed cost the bot server nothing: the
    session is closed with the reason, and the server plays on."""
    async with served(create_app(LineBot)) as server:
        url = socket_url(server)
        async with connect(url) as bad:
            await send(bad, {"type": "setup"})
            board = {"cells": stones_far_apart(4000)}
            await send(bad, {"type": "move_request", "side": "o", "previous": [], "board": board})
            code, reason = await closed_with(bad)
        assert code == 1008
        assert "impossible board" in reason and "from the origin" in reason
        assert won_by(await play_at(url, Player.X), Player.X)


async def test_a_free_setup_bot_plays_from_stones_far_apart() -> None:
    """A bot that declares free_setup takes any board; far apart, its stones cost what
    they would cost near the origin (O(view area) each), so the move comes back."""
    async with served(create_app(FreeSetupBot)) as server, connect(socket_url(server)) as ws:
        await send(ws, {"type": "setup", "board": {"cells": stones_far_apart(4000)}})
        await send(ws, {"type": "move_request", "side": "o", "previous": []})
        answer = await next_packet(ws)
    assert answer["move"]["pieces"] == [{"q": 1, "r": 2}, {"q": 2, "r": 2}]


# ------------------------------------------------------------------- stateless


TURN = "/stateless/v1-alpha/turn"


async def test_stateless_turn_refuses_boards_no_game_can_reach_with_422() -> None:
    async with served(create_app(LineBot)) as server:
        hostile = {"board": {"to_move": "o", "cells": stones_far_apart(4000)}}
        status, text = await post_turn(server, hostile)
        assert status == 422 and "from the origin" in text and "'free_setup'" in text
        status, text = await post_turn(server, {"board": {"to_move": "o", "cells": []}})
        assert status == 422 and "the board is empty" in text
        status, _ = await post_turn(
            server, {"board": {"to_move": "o", "cells": [{"q": 0, "r": 0, "p": "x"}]}}
        )
        assert status == 200


async def post_turn(server: BotServer, body: Any, path: str = TURN) -> tuple[int, str]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with aiohttp.ClientSession() as client:
        headers = {"Content-Type": "application/json"}
        async with client.post(f"{server.url}{path}", data=data, headers=headers) as response:
            return response.status, await response.text()


async def test_stateless_turn_answers_a_legal_move() -> None:
    position = Position()
    position.place(-3, 1)
    position.place(-4, 1)
    body = {"board": {"to_move": "x", **board_of(position)}}
    async with served(create_app(LineBot)) as server:
        status, text = await post_turn(server, body)
    assert status == 200
    answer = json.loads(text)
    check_against(answer, "stateless-v1-alpha.yaml", "MoveResponse")
    for piece in answer["move"]["pieces"]:
        assert position.is_legal(piece["q"], piece["r"])
        position.place(piece["q"], piece["r"])


async def test_stateless_turn_refuses_bad_requests_with_the_reason() -> None:
    async with served(create_app(LineBot)) as server:
        status, text = await post_turn(server, b"{not json")
        assert (status, text.startswith("not valid JSON")) == (400, True)
        status, text = await post_turn(server, {"board": {"cells": []}})
        assert status == 422 and "board.to_move" in text
        two_on_one = [{"q": 0, "r": 0, "p": "x"}, {"q": 0, "r": 0, "p": "o"}]
        status, text = await post_turn(server, {"board": {"to_move": "o", "cells": two_on_one}})
        assert status == 422 and "two stones" in text
        status, text = await post_turn(server, b"[" * 10 + b" " * MAX_BODY_BYTES)
        assert status == 413
        async with aiohttp.ClientSession() as client, client.get(f"{server.url}{TURN}") as got:
            assert got.status == 405


async def test_stateless_turn_of_an_overrunning_bot_answers_its_best_in_time() -> None:
    OverrunBot.release.clear()
    body = {"board": {"to_move": "o", "cells": [{"q": 0, "r": 0, "p": "x"}]}, "time_limit": 0.3}
    async with served(create_app(OverrunBot)) as server:
        status, text = await post_turn(server, body)
        released = OverrunBot.release.is_set()
        OverrunBot.release.set()
    assert status == 200 and not released
    assert json.loads(text)["move"]["pieces"] == [{"q": 1, "r": 2}, {"q": 2, "r": 2}]


async def test_no_stateless_route_for_a_bot_that_does_not_declare_it() -> None:
    async with served(create_app(SocketOnlyBot)) as server:
        body = {"board": {"to_move": "o", "cells": [{"q": 0, "r": 0, "p": "x"}]}}
        status, _ = await post_turn(server, body)
    assert status == 404


# ------------------------------------------------------------- answers_on_loop


@pytest.mark.parametrize("side", [Player.O, Player.X])
async def test_a_bot_that_answers_on_the_loop_plays_a_full_game_on_the_loop_thread(
    side: Player,
) -> None:
    OnLoopBot.threads.clear()
    async with served(create_app(OnLoopBot)) as server:
        position = await play_at(socket_url(server), side)
    assert won_by(position, side)
    # The server runs on this test's event loop, so its thread is this one.
    assert OnLoopBot.threads and set(OnLoopBot.threads) == {threading.current_thread()}


async def test_an_on_loop_bot_answers_within_the_callback_that_reads_the_request() -> None:
    """Under ``bot.serve``'s protocol a request is handed to the connection as it is read
    (``wire.inbound_ws``'s frame reader): the bot is called, and its answer written,
    in the protocol's callback, outside any task. (The first request may come before
    the connection has registered its reader, and be read by its reader task.)"""
    TaskRecordingOnLoopBot.tasks.clear()
    async with served(create_app(TaskRecordingOnLoopBot)) as server:
        position = await play_at(socket_url(server), Player.O)
    assert won_by(position, Player.O)
    calls = TaskRecordingOnLoopBot.tasks
    assert len(calls) == 3 and calls[1:] == [None, None]


@pytest.mark.usefixtures("plain_protocol")
async def test_under_a_protocol_without_a_frame_reader_the_reader_task_calls_the_bot() -> None:
    TaskRecordingOnLoopBot.tasks.clear()
    async with served(create_app(TaskRecordingOnLoopBot)) as server:
        position = await play_at(socket_url(server), Player.O)
    assert won_by(position, Player.O)
    calls = TaskRecordingOnLoopBot.tasks
    assert len(calls) == 3 and all(isinstance(task, asyncio.Task) for task in calls)


async def test_without_answers_on_loop_the_bot_runs_in_a_worker_thread() -> None:
    ThreadRecordingBot.threads.clear()
    async with served(create_app(ThreadRecordingBot)) as server:
        position = await play_at(socket_url(server), Player.O)
    assert won_by(position, Player.O)
    assert ThreadRecordingBot.threads
    assert threading.current_thread() not in ThreadRecordingBot.threads


async def test_an_on_loop_bot_answers_the_stateless_api_too() -> None:
    OnLoopBot.threads.clear()
    async with served(create_app(OnLoopBot)) as server:
        body = {"board": {"to_move": "o", "cells": [{"q": 0, "r": 0, "p": "x"}]}}
        status, answer = await post_turn(server, body)
    assert status == 200, answer
    assert set(OnLoopBot.threads) == {threading.current_thread()}


# ---------------------------------------------------------------- process pool


async def play_in_a_process_pool(bot_class: type[BaseBot], workers: int) -> Game:
    """One game as O against ``bot_class`` served by a pool of ``workers`` processes."""
    pool = BotPool(workers, processes=True)
    try:
        async with (
            served(create_app(bot_class, pool=pool)) as server,
            connect(socket_url(server)) as ws,
        ):
            return await play_game(ws, Player.O)
    finally:
        await pool.close_sessions()
        pool.shutdown()


async def test_a_game_in_a_process_pool_keeps_one_bot_per_session() -> None:
    game = await play_in_a_process_pool(CountingBot, 2)
    assert won_by(game.position, Player.O)
    evaluations = [answer["move"]["evaluation"] for answer in game.answers]
    assert [e["win_in"] for e in evaluations] == [1, 2, 3]  # the same instance each move
    assert {e["pid"] for e in evaluations} != {os.getpid()}
    assert len({e["pid"] for e in evaluations}) == 1


async def test_answers_on_loop_is_ignored_with_worker_processes() -> None:
    game = await play_in_a_process_pool(CountingOnLoopBot, 1)
    assert won_by(game.position, Player.O)
    assert {answer["move"]["evaluation"]["pid"] for answer in game.answers} != {os.getpid()}


# ------------------------------------------------------------------------- CLI


def run_cli(*args: str) -> tuple[int, str]:
    import subprocess

    result = subprocess.run(
        [sys.executable, "-m", "bot.serve", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
        check=False,
    )
    return result.returncode, result.stderr


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope", "'nope' is not module:Class"),
        ("no_such_module:Bot", "no module named 'no_such_module'"),
        ("bot.bots:NoSuchBot", "has no 'NoSuchBot'"),
        ("bot.bot:cells_of", "is not a BaseBot subclass"),
    ],
)
def test_cli_rejects_a_bad_bot_in_one_line(spec: str, message: str) -> None:
    status, stderr = run_cli("--bot", spec)
    assert status == 2
    assert stderr.count("\n") == 1 and message in stderr and "Traceback" not in stderr


def test_cli_refuses_a_port_out_of_range_in_one_line() -> None:
    # The kernel would take 99999 modulo 65536: the server would listen on 34463 while
    # uvicorn's own line said 99999.
    status, stderr = run_cli("--port", "99999")
    assert status == 2
    assert stderr == "htttx-bot: error: --port must be from 0 to 65535, got 99999\n"


def test_cli_refuses_a_huge_worker_count_in_one_line() -> None:
    # A process pool of that many opened pipes until the open-file limit, and the
    # OSError came out as a traceback.
    status, stderr = run_cli("--process-pool", "--workers", "100000", "--port", "0")
    assert status == 2
    assert stderr == "htttx-bot: error: --workers must be from 1 to 1024, got 100000\n"


def test_cli_says_in_one_line_when_the_pool_meets_the_open_file_limit() -> None:
    import resource
    import subprocess

    def few_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    result = subprocess.run(
        [sys.executable, "-m", "bot.serve", "--process-pool", "--workers", "200", "--port", "0"],
        capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT, check=False,
        preexec_fn=few_files,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.startswith("htttx-bot: error: cannot start the bot pool: ")
    assert result.stderr.count("\n") == 1 and "Too many open files" in result.stderr


def test_cli_refuses_a_taken_port_in_one_line() -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        status, stderr = run_cli("--port", str(port))
    assert status == 2
    assert (
        stderr
        == f"htttx-bot: error: cannot listen on 127.0.0.1:{port}: the port is already in use\n"
    )


def readme_bot() -> str:
    """The README's ``my_bot.py``, as written there."""
    text = (ROOT / "README.md").read_text()
    start = text.index("```python\n# my_bot.py\n") + len("```python\n")
    return text[start : text.index("```", start)]


async def test_the_readmes_bot_is_served_by_htttx_bot_from_its_own_directory(
    tmp_path: Path,
) -> None:
    (tmp_path / "my_bot.py").write_text(readme_bot())
    script = Path(sys.executable).parent / "htttx-bot"  # installed by `make`
    process = await asyncio.create_subprocess_exec(
        script, "--bot", "my_bot:MyBot", "--port", "0",
        cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stdout is not None and process.stderr is not None
        first = (await asyncio.wait_for(process.stdout.readline(), TIMEOUT)).decode()
        if not first:
            raise AssertionError((await process.stderr.read()).decode())
        url = re.search(r"http://\S+/capabilities\.json", first)
        assert first.startswith("MyBot:") and url, first
        async with aiohttp.ClientSession() as client, client.get(url.group()) as response:
            capabilities = await response.json()
        assert capabilities["meta"]["name"] == "MyBot"
        # It declares no config itself, yet may be told a game's rules.
        declared = capabilities["basic_websocket"]["versions"]["v1-alpha"]
        assert declared["config"]["x-match"] is True
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


async def test_cli_serves_centerbot_and_closes_sessions_with_1001_on_sigterm() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.serve",
        "--port",
        "0",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        first = (await asyncio.wait_for(process.stdout.readline(), TIMEOUT)).decode()
        url = re.search(r"http://\S+/capabilities\.json", first)
        assert first.startswith("CenterBot:") and url, first
        socket = (await asyncio.wait_for(process.stdout.readline(), TIMEOUT)).decode().split()[-1]
        async with aiohttp.ClientSession() as client:
            async with client.get(url.group()) as response:
                assert (await response.json())["meta"]["name"] == "CenterBot"
            async with client.ws_connect(socket) as ws:
                await send(ws, {"type": "setup"})
                process.send_signal(signal.SIGTERM)
                code, reason = await closed_with(ws)
        assert code == 1001 and "shutting down" in reason
        assert await asyncio.wait_for(process.wait(), TIMEOUT) in (0, -signal.SIGTERM)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

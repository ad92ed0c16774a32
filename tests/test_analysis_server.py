"""The analysis bot over real sockets on 127.0.0.1 (``game.analyst``, ``--analysis-bot``).

The players are bots that report no evaluation (a slowed ``CenterBot``, deterministic)
or humans the test moves; the analysis bot is our ``ThreatBot`` (``bot.serve``) or a
stand-in that records what it is sent and answers as told, well or badly.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.bots import CenterBot
from bot.bots.threat_bot import ThreatBot
from bot.serve import create_app as create_bot_app
from bot.serve import serving as serving_bots
from game.analysis import NoEvaluation, NoFreeSetup
from game.analyst import open_analyst
from game.discovery import AddressPolicy, BadBotUrl, ForbiddenAddress
from game.serve import main as serve_main
from game.server import create_app, serving
from models import Cell, Coord, GameRecord, Match, Player
from tests.loopback_app import serving_app
from tests.test_server import choose

TIMEOUT = 60.0  # only against hangs
Json = dict[str, Any]
MATCH: Json = {"win_distance": 4, "turn_limit": 30}


class SlowCenterBot(CenterBot):
    """``CenterBot`` taking 20 ms a move, so a spectator sees the game being played."""

    def choose_move(self, cells: list[Cell], player: Player, match: Match) -> tuple[Coord, Coord]:
        time.sleep(0.02)  # on the bot pool's thread, not the event loop
        return super().choose_move(cells, player, match)


@dataclass
class StandIn:
    """An analysis bot that records every packet and answers ``eval_request`` as
    ``mode`` says: ``answer`` (the stones on the board it was set up with and the side
    asked, in extra fields), ``close``, ``garbage`` or ``silent``."""

    mode: str = "answer"
    declares: Json = field(
        default_factory=lambda: {
            "evaluation": True,
            "free_setup": True,
            "resettable_state": True,
            "dual_sided": True,
            "evaluation_time_limit": True,
        }
    )
    packets: list[Json] = field(default_factory=list)
    connections: int = 0
    hung_up: int = 0  # sockets the server closed (or that broke)

    @property
    def eval_requests(self) -> list[Json]:
        return [p for p in self.packets if p["type"] == "eval_request"]

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/capabilities.json", self._capabilities)
        app.router.add_get("/bws/v1-alpha/game", self._socket)
        return app

    async def _capabilities(self, request: web.Request) -> web.Response:
        document = {
            "meta": {"name": "StandIn"},
            "basic_websocket": {"versions": {"v1-alpha": self.declares}},
        }
        return web.json_response(document)

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.connections += 1
        cells: list[Json] = []
        async for message in ws:
            packet: Json = json.loads(message.data)
            self.packets.append(packet)
            if packet["type"] == "setup":
                cells = packet["board"]["cells"]
            elif packet["type"] == "eval_request":
                if self.mode == "close":
                    await ws.close()
                elif self.mode == "garbage":
                    await ws.send_str("{not json")
                elif self.mode == "answer":
                    evaluation = {
                        "heuristic": 0.5,
                        "x-stones": len(cells),
                        "x-side": packet["side"],
                    }
                    await ws.send_str(
                        json.dumps({"type": "eval_response", "evaluation": evaluation})
                    )
        self.hung_up += 1
        return ws


@asynccontextmanager
async def players() -> AsyncIterator[str]:
    """A bot server with ``SlowCenterBot`` at its root; yields its URL."""
    async with serving_bots(create_bot_app(SlowCenterBot)) as server:
        yield server.url


@asynccontextmanager
async def game_server(
    tmp_path: Path, **options: Any
) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    app = create_app(db_url=db_url, host_example_bots=False, **options)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with serving(app) as server, aiohttp.ClientSession(timeout=timeout) as http:
        yield server.url, http


async def new_game(http: aiohttp.ClientSession, base: str, body: Json) -> Json:
    async with http.post(f"{base}/game/new", json=body) as response:
        answer: Json = await response.json()
        assert response.status == 200, answer
        return answer


async def finished_record(http: aiohttp.ClientSession, base: str, game_id: str) -> GameRecord:
    async with asyncio.timeout(TIMEOUT):
        while True:
            async with http.get(f"{base}/games/{game_id}") as response:
                record = GameRecord.model_validate_json(await response.read())
            if record.result is not None:
                return record
            await asyncio.sleep(0.05)


async def receive(ws: aiohttp.ClientWebSocketResponse) -> Json | None:
    """The next packet; None once the socket has closed."""
    message = await asyncio.wait_for(ws.receive(), TIMEOUT)
    if message.type is not aiohttp.WSMsgType.TEXT:
        return None
    packet: Json = json.loads(message.data)
    return packet


async def watch_to_the_end(http: aiohttp.ClientSession, base: str, game_id: str) -> list[Json]:
    async with http.ws_connect(f"{base.replace('http', 'ws', 1)}/spectate/{game_id}") as ws:
        packets = []
        while (packet := await receive(ws)) is not None:
            packets.append(packet)
    return packets


def bots_game(url: str) -> Json:
    return {
        "player_x": {"type": "bot", "bot_url": url},
        "player_o": {"type": "bot", "bot_url": url},
        "match_config": MATCH,
    }


def stones_at(record: GameRecord, ply: int) -> int:
    """Stones on the board after ``ply`` moves (X's first stone included)."""
    return 1 + sum(len(move.pieces) for move in record.moves[:ply])


# ------------------------------------------------------------------- watched


async def test_a_spectator_of_bots_without_evaluation_gets_the_analysis_of_each_position(
    tmp_path: Path,
) -> None:
    judge = StandIn()
    async with (
        serving_app(judge.app()) as judge_url,
        players() as player,
        game_server(tmp_path, analysis_bot=judge_url) as (base, http),
    ):
        game_id = (await new_game(http, base, bots_game(player)))["game_id"]
        packets = await watch_to_the_end(http, base, game_id)
        record = await finished_record(http, base, game_id)
    updates = [p for p in packets if p["type"] == "board_update"]
    assert updates and all("evaluation" not in p for p in updates)  # the players say none
    analyses = [p for p in packets if p["type"] == "analysis"]
    assert len(analyses) >= 2
    plies = [p["ply"] for p in analyses]
    assert plies == sorted(set(plies))  # each position once, in order
    assert all(0 <= ply < len(record.moves) for ply in plies)  # never the final position
    for packet in analyses:
        ply, evaluation = packet["ply"], packet["evaluation"]
        assert packet["bot"] == "StandIn"
        # The bot was shown the position of that ply, with the right side to move.
        assert evaluation["x-stones"] == stones_at(record, ply)
        assert evaluation["x-side"] == ("o" if ply % 2 == 0 else "x")
    assert set(analyses[0]) == {"type", "ply", "evaluation", "bot"}
    # Never more than one request in flight: setup, eval_request, answer, setup, ...
    assert [p["type"] for p in judge.packets[:4]] == ["setup", "eval_request"] * 2
    assert record.result is not None and record.result.cause is None  # played out, no forfeit
    assert "analysis" not in record.model_dump_json()  # the record is what players said


async def test_threatbot_analyses_a_watched_game(tmp_path: Path) -> None:
    async with (
        serving_bots(create_bot_app(ThreatBot)) as judge,
        players() as player,
        game_server(tmp_path, analysis_bot=judge.url, analysis_time=0.5) as (base, http),
    ):
        game_id = (await new_game(http, base, bots_game(player)))["game_id"]
        packets = await watch_to_the_end(http, base, game_id)
    analyses = [p for p in packets if p["type"] == "analysis"]
    assert analyses and all(p["bot"] == "ThreatBot" for p in analyses)
    assert all({"heuristic", "win_in"} & set(p["evaluation"]) for p in analyses)


async def test_a_hosted_bot_named_analyses_in_the_servers_own_process(tmp_path: Path) -> None:
    async with (
        players() as player,
        game_server(tmp_path, analysis_bot="threat", analysis_time=0.5) as (base, http),
    ):
        game_id = (await new_game(http, base, bots_game(player)))["game_id"]
        packets = await watch_to_the_end(http, base, game_id)
    analyses = [p for p in packets if p["type"] == "analysis"]
    assert analyses and all(p["bot"] == "ThreatBot" for p in analyses)
    assert [p["ply"] for p in analyses] == sorted({p["ply"] for p in analyses})


async def test_a_hosted_analysis_bot_is_not_held_to_the_policy_for_others_bots(
    tmp_path: Path,
) -> None:
    # The policy refuses loopback, where the in-process analysis bot listens: it is the
    # server's own, so the server starts all the same.
    policy = AddressPolicy.parse("allow=public")
    async with (
        game_server(tmp_path, analysis_bot="threat", policy=policy) as (base, http),
        http.get(base + "/health") as response,
    ):
        assert response.status == 200


def test_a_name_that_is_no_hosted_bot_is_a_malformed_url() -> None:
    with pytest.raises(BadBotUrl):
        create_app(analysis_bot="thread")


def test_a_hosted_bot_that_cannot_analyse_fails_when_the_app_is_made() -> None:
    with pytest.raises(NoEvaluation, match="the hosted bot 'center'"):
        create_app(analysis_bot="center")


@pytest.mark.parametrize("name", ["random", "center"])
def test_the_command_line_refuses_a_hosted_bot_that_cannot_analyse_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # As the README says of any analysis bot: one line and exit status 2, not a
    # traceback from the server's startup (uvicorn's exit status 3).
    db = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    assert serve_main(["--port", "0", "--db", db, "--analysis-bot", name]) == 2
    error = capsys.readouterr().err
    assert error.splitlines() == [
        f"htttx-server: error: --analysis-bot: the hosted bot '{name}': the analysis bot "
        "must declare 'evaluation' (basic_websocket v1-alpha), so that it may be sent "
        "eval_request; it does not"
    ]


async def next_of(ws: aiohttp.ClientWebSocketResponse, kind: str, **fields: Any) -> Json:
    """The next packet of type ``kind`` (with those ``fields``), skipping the others."""
    while True:
        packet = await receive(ws)
        assert packet is not None, f"closed before a {kind}"
        if packet["type"] == kind and all(packet.get(k) == v for k, v in fields.items()):
            return packet
        assert packet["type"] != "analysis" or kind != "move_request", "a seat got analysis"


async def test_a_late_spectator_gets_the_analysis_so_far_right_after_the_setup(
    tmp_path: Path,
) -> None:
    judge = StandIn()
    humans = {"player_x": {"type": "human"}, "player_o": {"type": "human"}, "match_config": MATCH}
    async with (
        serving_app(judge.app()) as judge_url,
        game_server(tmp_path, analysis_bot=judge_url) as (base, http),
    ):
        created = await new_game(http, base, humans)
        ws_base = base.replace("http", "ws", 1)
        game_id = created["game_id"]
        async with (
            http.ws_connect(f"{ws_base}/ws?token={created['token_x']}") as x,
            http.ws_connect(f"{ws_base}/ws?token={created['token_o']}") as o,
            http.ws_connect(f"{ws_base}/spectate/{game_id}") as first,
        ):
            seats = {"x": x, "o": o}
            seen: list[Json] = []
            for ply in range(1, 4):
                side = "o" if ply % 2 else "x"
                request = await next_of(seats[side], "move_request")  # never an analysis
                await seats[side].send_str(json.dumps(choose(request, MATCH)))
                # Each position is analysed before the next move is made.
                seen.append(await next_of(first, "analysis", ply=ply))
            async with http.ws_connect(f"{ws_base}/spectate/{game_id}") as late:
                setup = await receive(late)
                backlog = [await receive(late) for _ in range(4)]
    assert setup is not None and setup["type"] == "setup" and len(setup["moves"]) == 3
    assert [p["ply"] if p else None for p in backlog] == [0, 1, 2, 3]
    assert backlog[1:] == seen


async def test_positions_reached_while_nobody_watches_are_never_analysed(
    tmp_path: Path,
) -> None:
    judge = StandIn()
    humans = {"player_x": {"type": "human"}, "player_o": {"type": "human"}, "match_config": MATCH}
    async with (
        serving_app(judge.app()) as judge_url,
        game_server(tmp_path, analysis_bot=judge_url) as (base, http),
    ):
        created = await new_game(http, base, humans)
        ws_base = base.replace("http", "ws", 1)
        spectate = f"{ws_base}/spectate/{created['game_id']}"
        async with (
            http.ws_connect(f"{ws_base}/ws?token={created['token_x']}") as x,
            http.ws_connect(f"{ws_base}/ws?token={created['token_o']}") as o,
        ):
            async with http.ws_connect(spectate) as first:
                await next_of(first, "analysis", ply=0)
            async with asyncio.timeout(TIMEOUT):  # unwatched: the server hangs up on it
                while not judge.hung_up:
                    await asyncio.sleep(0.01)
            for seat in (o, x):  # plies 1 and 2, with nobody watching
                request = await next_of(seat, "move_request")
                await seat.send_str(json.dumps(choose(request, MATCH)))
            await next_of(o, "move_request")  # ply 2 is reached
            async with http.ws_connect(spectate) as second:
                newest = await next_of(second, "analysis", ply=2)
    assert newest["evaluation"]["x-stones"] == 5
    # The bot was shown the start position and then the newest one only.
    assert [len(p["board"]["cells"]) for p in judge.packets if p["type"] == "setup"] == [1, 5]


async def test_an_unwatched_game_causes_no_eval_request(tmp_path: Path) -> None:
    judge = StandIn()
    async with (
        serving_app(judge.app()) as judge_url,
        players() as player,
        game_server(tmp_path, analysis_bot=judge_url) as (base, http),
    ):
        game_id = (await new_game(http, base, bots_game(player)))["game_id"]
        record = await finished_record(http, base, game_id)
    assert record.moves
    assert judge.connections == 0 and judge.packets == []


# --------------------------------------------------------------------- broken


@pytest.mark.parametrize("mode", ["close", "garbage", "silent"])
async def test_a_broken_analysis_bot_leaves_the_game_as_it_would_be(
    tmp_path: Path, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    judge = StandIn(mode=mode)
    async with serving_app(judge.app()) as judge_url, players() as player:
        async with game_server(tmp_path / "plain") as (base, http):
            game_id = (await new_game(http, base, bots_game(player)))["game_id"]
            reference = await finished_record(http, base, game_id)
        with caplog.at_level(logging.WARNING, logger="game.analysis"):
            options = {"analysis_bot": judge_url, "analysis_time": 0.1}
            async with game_server(tmp_path / "analysed", **options) as (base, http):
                game_id = (await new_game(http, base, bots_game(player)))["game_id"]
                packets = await watch_to_the_end(http, base, game_id)
                record = await finished_record(http, base, game_id)
    assert judge.eval_requests  # the analysis bot was asked, and failed
    assert [m.pieces for m in record.moves] == [m.pieces for m in reference.moves]
    assert record.result is not None and reference.result is not None
    assert record.result.model_dump(exclude={"detail"}) == reference.result.model_dump(
        exclude={"detail"}
    )
    assert [p["type"] for p in packets if p["type"] != "analysis"][-1] == "end"
    assert not [p for p in packets if p["type"] == "analysis"]
    if mode != "silent":  # a silent bot may not have timed out before the game ended
        assert any("analysis of game" in r.getMessage() for r in caplog.records)


# -------------------------------------------------------------------- startup


async def test_a_bot_without_evaluation_is_refused_at_startup(tmp_path: Path) -> None:
    judge = StandIn(declares={"free_setup": True, "resettable_state": True})
    async with serving_app(judge.app()) as judge_url, aiohttp.ClientSession() as http:
        with pytest.raises(NoEvaluation, match="must declare 'evaluation'"):
            await open_analyst(judge_url, http)
        db = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
        argv = ["--port", "0", "--db", db, "--analysis-bot", judge_url]
        status = await asyncio.to_thread(serve_main, argv)
    assert status == 2


async def test_the_command_line_names_the_analysis_bot_and_why_it_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge = StandIn(declares={"evaluation": True})
    async with serving_app(judge.app()) as judge_url:
        db = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
        argv = ["--port", "0", "--db", db, "--analysis-bot", judge_url]
        assert await asyncio.to_thread(serve_main, argv) == 2
    error = capsys.readouterr().err
    assert f"--analysis-bot: {judge_url}/capabilities.json" in error
    assert "must declare 'free_setup'" in error


async def test_an_unreachable_analysis_bot_fails_the_startup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with serving_app(web.Application()) as gone:
        pass  # its port is closed now
    db = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    argv = ["--port", "0", "--db", db, "--analysis-bot", gone]
    assert await asyncio.to_thread(serve_main, argv) == 2
    assert (
        f"--analysis-bot: {gone}/capabilities.json: connection refused" in capsys.readouterr().err
    )


def test_a_malformed_analysis_bot_url_fails_when_the_app_is_made() -> None:
    with pytest.raises(BadBotUrl):
        create_app(analysis_bot="ftp://127.0.0.1/bot")


async def test_the_analysis_bot_is_held_to_the_address_policy(tmp_path: Path) -> None:
    judge = StandIn()
    async with serving_app(judge.app()) as judge_url, aiohttp.ClientSession() as http:
        with pytest.raises(ForbiddenAddress):
            await open_analyst(judge_url, http, policy=AddressPolicy.parse("allow=public"))
    assert judge.packets == []


async def test_a_bot_without_free_setup_is_refused(tmp_path: Path) -> None:
    judge = StandIn(declares={"evaluation": True, "resettable_state": True})
    async with serving_app(judge.app()) as judge_url, aiohttp.ClientSession() as http:
        with pytest.raises(NoFreeSetup):
            await open_analyst(judge_url, http)

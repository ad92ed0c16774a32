"""The game server (``game.server``, ``game.serve``) over real sockets on 127.0.0.1.

Each test starts the whole app under uvicorn on an ephemeral port, with a SQLite file in
``tmp_path`` and the example bots hosted on the same port, and talks to it with aiohttp
as a client, a human seat or a spectator would. Timeouts are generous and only stop a
broken test from hanging; nothing is timed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.bot import BaseBot
from bot.serve import create_app as create_bot_app
from bot.serve import serving as serving_bot
from game import notation
from game.discovery import AddressPolicy
from game.game import valid_placement_cells
from game.rules import Position
from game.serve import main as serve_main
from game.serve_intro import curl_command
from game.server import GameServer, create_app, redact_tokens, serving
from game.store import GameStore, RecordStatus
from models import Cell, Coord, EndCause, GameRecord, Match, Player, ResultReason
from tests.loopback_app import serving_app

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60.0  # only against hangs

Json = dict[str, Any]


# ------------------------------------------------------------------- helpers


@dataclass
class Arena:
    server: GameServer
    http: aiohttp.ClientSession
    db_url: str

    @property
    def base(self) -> str:
        return self.server.url

    @property
    def ws_base(self) -> str:
        return "ws" + self.base[4:]

    def bot(self, name: str) -> Json:
        return {"type": "bot", "bot_url": f"{self.base}/bots/{name}"}

    async def post(self, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Json]:
        data = body if isinstance(body, str | bytes) else json.dumps(body)
        async with self.http.post(
            f"{self.base}/game/new",
            data=data,
            headers={"content-type": "application/json", **(headers or {})},
        ) as response:
            return response.status, await response.json()

    async def new_game(self, body: Json) -> Json:
        status, answer = await self.post(body)
        assert status == 200, answer
        return answer

    async def get_json(self, path: str) -> tuple[int, Any]:
        async with self.http.get(self.base + path) as response:
            return response.status, await response.json()

    async def finished_record(self, game_id: str) -> GameRecord:
        """Poll until the game has a result (bounded only against hangs)."""
        async with asyncio.timeout(TIMEOUT):
            while True:
                status, data = await self.get_json(f"/games/{game_id}")
                assert status == 200, data
                record = GameRecord.model_validate(data)
                if record.result is not None:
                    return record
                await asyncio.sleep(0.05)


@asynccontextmanager
async def arena(tmp_path: Path, **options: Any) -> AsyncIterator[Arena]:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    app = create_app(db_url=db_url, **options)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with serving(app) as server, aiohttp.ClientSession(timeout=timeout) as http:
        yield Arena(server, http, db_url)


async def stored(db_url: str, game_id: str) -> tuple[GameRecord, RecordStatus]:
    async with await GameStore.open(db_url) as store:
        record = await store.get_game(game_id)
        assert record is not None
        page = await store.list_games(limit=200)
    status = next(item.status for item in page.items if item.game_id == game_id)
    return record, status


async def receive(ws: aiohttp.ClientWebSocketResponse) -> Json | None:
    """The next JSON packet other than a heartbeat; None once the socket has closed."""
    while True:
        message = await asyncio.wait_for(ws.receive(), TIMEOUT)
        if message.type is not aiohttp.WSMsgType.TEXT:
            return None
        packet: Json = json.loads(message.data)
        if packet["type"] != "heartbeat":
            return packet


async def closed(ws: aiohttp.ClientWebSocketResponse) -> tuple[int, str]:
    """Read up to the close frame: its code and reason."""
    while True:
        message = await asyncio.wait_for(ws.receive(), TIMEOUT)
        if message.type is aiohttp.WSMsgType.CLOSE:
            return int(message.data), str(message.extra or "")
        assert message.type is aiohttp.WSMsgType.TEXT, message


async def until(ws: aiohttp.ClientWebSocketResponse, kind: str) -> Json:
    """Skip packets up to the first of type ``kind``."""
    while True:
        packet = await receive(ws)
        assert packet is not None, f"closed before a {kind}"
        if packet["type"] == kind:
            return packet


async def receive_type(ws: aiohttp.ClientWebSocketResponse, *types: str) -> Json:
    packet = await receive(ws)
    assert packet is not None and packet["type"] in types, packet
    return packet


def choose(request: Json, match: Json) -> Json:
    """A legal 2-stone answer to ``request``: extend X's row from the origin if
    possible (a quick win against a random bot), else the first legal cells."""
    side = request["side"]
    stones = [(c["q"], c["r"], c["p"]) for c in request["board"]["cells"]]
    position = Position(
        match.get("view_distance", 8), match.get("win_distance", 6), setup=stones, to_move=side
    )
    pieces: list[Json] = []
    for _ in range(2):
        if position.outcome is not None:
            pieces.append(pieces[-1])  # ignored: the first stone already won
            continue
        row = [(q, 0) for q in range(1, 20) if position.is_legal(q, 0)]
        q, r = row[0] if row else min(position.legal_cells())
        position.place(q, r)
        pieces.append({"q": q, "r": r})
    return {"type": "move_response", "move": {"pieces": pieces}}


async def play_until_end(ws: aiohttp.ClientWebSocketResponse, match: Json) -> Json:
    """Answer every move_request until the end; returns the ``end`` packet."""
    while True:
        packet = await receive(ws)
        assert packet is not None, "closed before the end"
        if packet["type"] == "move_request":
            await ws.send_str(json.dumps(choose(packet, match)))
        elif packet["type"] == "end":
            return packet


# The hosted bots play by the default view distance (the session sends them no x-match
# config), so only the win distance and the turn limit are shortened.
HUMAN_MATCH: Json = {"win_distance": 4, "turn_limit": 30}


# --------------------------------------------------------------------- REST


async def test_two_hosted_bots_play_to_the_end_and_the_record_reads_back(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(
            {"player_x": a.bot("threat"), "player_o": a.bot("random"), "name": "smoke"}
        )
        assert set(created) <= {"game_id", "token_x", "token_o"}
        assert created.get("token_x") is None and created.get("token_o") is None
        record = await a.finished_record(created["game_id"])
        assert record.moves and record.result is not None
        assert record.player_x.bot_url == f"{a.base}/bots/threat"
        # The record names the bots by their capabilities meta.
        assert record.player_x.meta is not None and record.player_x.meta.name == "ThreatBot"
        async with a.http.get(f"{a.base}/games/{created['game_id']}/notation") as response:
            assert response.status == 200
            assert response.content_type == "text/plain"
            text = await response.text()
    replayed = notation.loads(text)  # replays every stone through the rules
    assert [m.pieces for m in replayed.moves] == [m.pieces for m in record.moves]
    assert replayed.result is not None and replayed.result.winner == record.result.winner


class FirstLegalCellsBot(BaseBot):
    """The README's first bot: it declares no ``config`` of its own."""

    def choose_move(self, cells: list[Cell], player: Player, match: Match) -> tuple[Coord, Coord]:
        candidates = valid_placement_cells(cells, match.view_distance)
        return candidates[0], candidates[1]


@pytest.mark.parametrize("rules", [{"view_distance": 3}, {"view_distance": 12, "win_distance": 8}])
async def test_a_framework_bot_that_declares_no_config_is_told_the_games_rules(
    tmp_path: Path, rules: Json
) -> None:
    # Its bot server declares config with x-match for it: a bot playing the standard
    # rules would play out of view at 3, and refuse the server's boards (a stone out of
    # its view, a line of 6 that does not win) at 12 and 8.
    match = {**rules, "turn_limit": 40}
    async with (
        serving_bot(create_bot_app({"/plain": FirstLegalCellsBot})) as bot_server,
        arena(tmp_path) as a,
    ):
        plain = {"type": "bot", "bot_url": f"{bot_server.url}/plain"}
        for x, o in ((plain, a.bot("random")), (a.bot("threat"), plain)):
            created = await a.new_game({"player_x": x, "player_o": o, "match_config": match})
            record = await a.finished_record(created["game_id"])
            assert record.result is not None
            assert record.result.reason is not ResultReason.FORFEIT, record.result
            notation.loads(notation.dumps(record))  # every stone legal under these rules
            # No meta of its own: its served capabilities name it by its class.
            seat = record.player_x if x is plain else record.player_o
            assert seat.meta is not None and seat.meta.name == "FirstLegalCellsBot"


@pytest.mark.parametrize("view_distance", [2, 3, 12])
async def test_hosted_bots_play_by_the_games_own_settings(
    tmp_path: Path, view_distance: int
) -> None:
    # The bots learn the settings from their config (x-match): a bot assuming the
    # default view distance of 8 would soon play out of view and forfeit.
    match = {"view_distance": view_distance, "win_distance": 5, "turn_limit": 60}
    async with arena(tmp_path) as a:
        for x, o in (("threat", "random"), ("random", "center")):
            created = await a.new_game(
                {"player_x": a.bot(x), "player_o": a.bot(o), "match_config": match}
            )
            record = await a.finished_record(created["game_id"])
            assert record.result is not None
            assert record.result.cause is not EndCause.ILLEGAL_MOVE, record.result
            assert record.result.reason is not ResultReason.FORFEIT, record.result
            notation.loads(notation.dumps(record))  # every stone legal under these rules


async def test_a_name_notation_cannot_hold_still_exports(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(
            {"player_x": a.bot("threat"), "player_o": a.bot("random"), "name": "semi]final"}
        )
        await a.finished_record(created["game_id"])
        async with a.http.get(f"{a.base}/games/{created['game_id']}/notation") as response:
            assert response.status == 200
            assert notation.loads(await response.text()).name == "semi)final"


async def test_names_and_bot_config_are_accepted(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(
            {
                "player_x": {**a.bot("random"), "name": "rnd", "config": {"x-seed": 3}},
                "player_o": {**a.bot("center"), "name": "ctr"},
            }
        )
        record = await a.finished_record(created["game_id"])
    assert (record.player_x.name, record.player_o.name) == ("rnd", "ctr")


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got a list"),
        ({"player_x": {"type": "human"}}, "player_o: missing required field"),
        (
            {
                "player_x": {"type": "human"},
                "player_o": {"type": "human"},
                "match_config": {"heartbeat": 99},
            },
            "match_config.heartbeat: expected at least 100, got 99",
        ),
        ({"player_x": {"type": "bot"}, "player_o": {"type": "human"}}, "needs 'bot_url'"),
        (
            {"player_x": {"type": "robot"}, "player_o": {"type": "human"}},
            "player_x.type: expected 'bot' or 'human', got 'robot'",
        ),
        (
            {
                "player_x": {"type": "bot", "bot_url": "http://169.254.169.254/"},
                "player_o": {"type": "human"},
            },
            "169.254.169.254: denied by the bot address policy (metadata)",
        ),
        (
            {
                "player_x": {"type": "bot", "bot_url": "ftp://127.0.0.1/"},
                "player_o": {"type": "human"},
            },
            "unsupported scheme 'ftp'",
        ),
        (
            {"player_x": {"type": "human"}, "player_o": {"type": "human"}, "adjudicaton": {}},
            "adjudicaton: extra inputs are not permitted, got an object",
        ),
        (
            {"player_x": {"type": "human", "bot_ur1": "http://h/"}, "player_o": {"type": "human"}},
            "player_x.bot_ur1: extra inputs are not permitted",
        ),
        (
            {
                "player_x": {"type": "human"},
                "player_o": {"type": "human"},
                "adjudication": {"resign": {"moves": 3, "score": 0.9, "twosided": True}},
            },
            "adjudication.resign.twosided: extra inputs are not permitted",
        ),
    ],
    ids=[
        "malformed-json",
        "not-an-object",
        "missing-player",
        "bad-match-config",
        "bot-without-url",
        "bad-type",
        "forbidden-address",
        "bad-scheme",
        "unknown-field",
        "unknown-seat-field",
        "unknown-adjudication-field",
    ],
)
async def test_an_invalid_request_is_422_with_the_reason(
    tmp_path: Path, body: Any, detail: str
) -> None:
    async with arena(tmp_path) as a:
        status, answer = await a.post(body)
    assert status == 422
    assert detail in answer["detail"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_unreachable_bot_is_422(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/nobody"
    async with arena(tmp_path) as a:
        status, answer = await a.post(
            {"player_x": {"type": "bot", "bot_url": url}, "player_o": a.bot("random")}
        )
    assert status == 422
    assert f"{url}/capabilities.json: connection refused" in answer["detail"]


@asynccontextmanager
async def capabilities_server(document: Json) -> AsyncIterator[str]:
    """A bot that serves ``document`` as its capabilities and nothing else."""

    async def capabilities(_request: web.Request) -> web.Response:
        return web.json_response(document)

    app = web.Application()
    app.router.add_get("/capabilities.json", capabilities)
    async with serving_app(app) as url:
        yield url


async def test_a_bot_with_no_usable_protocol_is_422(tmp_path: Path) -> None:
    document: Json = {"basic_websocket": {"versions": {"v2": {}}}}
    async with capabilities_server(document) as url, arena(tmp_path) as a:
        status, answer = await a.post(
            {"player_x": {"type": "bot", "bot_url": url}, "player_o": a.bot("random")}
        )
    assert status == 422
    assert "declares neither basic_websocket v1-alpha nor stateless v1-alpha" in answer["detail"]
    assert "basic_websocket v2" in answer["detail"]


async def test_the_api_token_is_required_when_set(tmp_path: Path) -> None:
    body = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}
    async with arena(tmp_path, api_token="s3cret") as a:
        without = await a.post(body)
        wrong = await a.post(body, {"authorization": "Bearer nope"})
        right = await a.post(body, {"authorization": "Bearer s3cret"})
        listed, _ = await a.get_json("/games")  # reading needs no token
    assert without[0] == 401 and "Authorization: Bearer" in without[1]["detail"]
    assert wrong[0] == 401
    assert right[0] == 200 and right[1]["token_x"] and right[1]["token_o"]
    assert right[1]["token_x"] != right[1]["token_o"]
    assert listed == 200


async def test_a_body_over_the_cap_is_413(tmp_path: Path) -> None:
    async with arena(tmp_path, max_body_bytes=1000) as a:
        status, answer = await a.post({"player_x": {"type": "human"}, "name": "x" * 2000})
    assert status == 413 and "1000 bytes" in answer["detail"]


async def test_a_client_over_its_game_cap_gets_429(tmp_path: Path) -> None:
    body = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}
    async with arena(tmp_path, max_games_per_client=1) as a:
        first = await a.post(body)
        second = await a.post(body)
    assert first[0] == 200
    assert second[0] == 429 and "already has 1 live game," in second[1]["detail"]


async def test_games_are_listed_newest_first_by_page_and_by_status(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        finished = []
        for _ in range(2):
            created = await a.new_game({"player_x": a.bot("center"), "player_o": a.bot("random")})
            await a.finished_record(created["game_id"])
            finished.append(created["game_id"])
        running = (
            await a.new_game({"player_x": {"type": "human"}, "player_o": {"type": "human"}})
        )["game_id"]
        _, first = await a.get_json("/games?limit=2")
        _, second = await a.get_json(f"/games?limit=2&cursor={first['next_cursor']}")
        _, live = await a.get_json("/games?status=running")
        _, over = await a.get_json("/games?status=finished")
        bad = [
            await a.get_json(query)
            for query in ("/games?status=won", "/games?limit=0", "/games?cursor=abc")
        ]
    assert [g["game_id"] for g in first["items"]] == [running, finished[1]]
    assert [g["game_id"] for g in second["items"]] == [finished[0]]
    assert second["next_cursor"] is None
    assert [g["game_id"] for g in live["items"]] == [running]
    assert [g["game_id"] for g in over["items"]] == finished[::-1]
    assert first["items"][1]["moves"] > 0 and first["items"][1]["result"] is not None
    assert [status for status, _ in bad] == [422, 422, 422]
    assert "status: expected one of running, finished, aborted" in bad[0][1]["detail"]
    assert "limit: expected an integer from 1 to 200" in bad[1][1]["detail"]
    assert "cursor" in bad[2][1]["detail"]


async def test_unknown_games_and_routes_are_404_with_a_detail(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        record = await a.get_json("/games/nope")
        async with a.http.get(f"{a.base}/games/nope/notation") as response:
            text = (response.status, await response.json())
        route = await a.get_json("/nothing/here")
    assert record == (404, {"detail": "no game 'nope'"})
    assert text == (404, {"detail": "no game 'nope'"})
    assert route[0] == 404 and route[1]["detail"]


async def test_health_answers_ok(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        status, answer = await a.get_json("/health")
    assert status == 200
    assert answer == {"status": "ok", "live_games": 0}


async def test_hosted_bots_are_listed_with_urls_that_seat_them(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        status, answer = await a.get_json("/bots")
        assert status == 200
        bots = {bot["name"]: bot for bot in answer["bots"]}
        assert list(bots) == ["random", "center", "threat", "search"]
        assert bots["threat"]["url"] == f"{a.base}/bots/threat"
        assert bots["threat"]["meta"]["name"] == "ThreatBot"
        body = {
            "player_x": {"type": "bot", "bot_url": bots["threat"]["url"]},
            "player_o": {"type": "bot", "bot_url": bots["random"]["url"]},
        }
        await a.finished_record((await a.new_game(body))["game_id"])


async def test_a_bad_cursor_asks_for_the_next_cursor_of_a_page_of_get_games(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path, host_example_bots=False) as a:
        answer = await a.get_json("/games?cursor=abc")
    expected = "cursor: expected the next_cursor of a page of GET /games, got 'abc'"
    assert answer == (422, {"detail": expected})


async def test_a_server_hosting_no_bots_lists_none(tmp_path: Path) -> None:
    async with arena(tmp_path, host_example_bots=False) as a:
        status, answer = await a.get_json("/bots")
    assert (status, answer) == (200, {"bots": [], "registered": []})


async def test_the_openapi_document_describes_the_rest_routes(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        status, document = await a.get_json("/openapi.json")
        async with a.http.get(f"{a.base}/docs") as response:
            page = await response.text()
            page_type = response.content_type
    assert status == 200 and document["openapi"].startswith("3.1")
    assert set(document["paths"]) == {
        "/cluster",
        "/cluster/games/{game_id}/setup",
        "/game/new",
        "/games",
        "/games/{game_id}",
        "/games/{game_id}/notation",
        "/bots",
        "/health",
        "/tournaments",
        "/tournaments/{tournament_id}",
        "/tournaments/{tournament_id}/games",
        "/tournaments/{tournament_id}/stop",
        "/tournaments/{tournament_id}/resume",
        "/series",
        "/series/{series_id}",
        "/series/{series_id}/stop",
        "/series/{series_id}/resume",
        "/bots/{name}",
        "/bots/{name}/ratings",
        "/leaderboard",
        "/challenges",
        "/challenges/{challenge_id}",
        "/challenges/{challenge_id}/accept",
        "/ladder",
        "/ladder/pause",
        "/ladder/resume",
    }
    assert set(document["paths"]["/bots"]) == {"get", "post"}
    assert set(document["paths"]["/tournaments"]) == {"get", "post"}
    schemas = document["components"]["schemas"]
    assert {"TournamentRequest", "TournamentView", "TournamentPage"} <= set(schemas)
    assert {"SeriesRequest", "SeriesView", "SeriesPage"} <= set(schemas)
    assert {"NewGameRequest", "NewGameResponse", "GameRecord", "GamePage", "HostedBots"} <= set(
        schemas
    )
    # Every reference resolves inside the document.
    refs = [
        part.split('"')[0]
        for part in json.dumps(document).split('"$ref": "#/components/schemas/')[1:]
    ]
    assert refs and all(ref in schemas for ref in refs)
    assert page_type == "text/html" and "/openapi.json" in page and "/game/new" in page
    assert "<script" not in page and "https://" not in page  # nothing from the internet


# ---------------------------------------------------------------- sockets


async def test_a_human_plays_a_hosted_bot_over_ws_and_can_reconnect(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(
            {
                "player_x": {"type": "human", "name": "me"},
                "player_o": a.bot("random"),
                "match_config": HUMAN_MATCH,
            }
        )
        url = f"{a.ws_base}/ws?token={created['token_x']}"
        async with a.http.ws_connect(url) as ws:
            await receive_type(ws, "setup")
            request = await receive_type(ws, "move_request")
            assert request["side"] == "x"
        # Gone without answering; back with the same token: the position and the
        # pending request again.
        async with a.http.ws_connect(url) as ws:
            setup = await receive_type(ws, "setup")
            assert len(setup["board"]["cells"]) == 3  # X at the origin, O's move
            again = await receive_type(ws, "move_request")
            assert again["side"] == "x" and again["board"] == request["board"]
            await ws.send_str(json.dumps(choose(again, HUMAN_MATCH)))
            end = await play_until_end(ws, HUMAN_MATCH)
            assert await receive(ws) is None  # then the socket closes
        record = await a.finished_record(created["game_id"])
    assert record.player_x.name == "me"
    assert record.result is not None
    assert end["winner"] == (record.result.winner.value if record.result.winner else None)
    assert record.moves[0].side is Player.O and record.moves[1].side is Player.X


async def test_a_persons_first_stone_is_in_the_record_the_moment_the_end_shows_it(
    tmp_path: Path,
) -> None:
    # The person places one stone (everyone sees it), then resigns: the end's board and
    # the record, read as the end arrives, hold the same stones.
    async with arena(tmp_path) as a:
        created = await a.new_game(
            {"player_x": {"type": "human"}, "player_o": a.bot("center"), "match_config": {}}
        )
        game_id = created["game_id"]
        async with a.http.ws_connect(f"{a.ws_base}/ws?token={created['token_x']}") as human:
            await receive_type(human, "setup")
            request = await receive_type(human, "move_request")
            stone = choose(request, HUMAN_MATCH)["move"]["pieces"][0]
            await human.send_str(json.dumps({"type": "move_response", "move": {"pieces": [stone]}}))
            await receive_type(human, "move_request")  # the second stone's
            await human.send_str('{"type": "resign"}')
            end = await receive_type(human, "end")
            status, record = await a.get_json(f"/games/{game_id}")
            async with a.http.get(f"{a.base}/games/{game_id}/notation") as response:
                text = await response.text()
    assert status == 200 and record["result"]["cause"] == "resign"
    assert record["moves"][-1]["side"] == "x" and record["moves"][-1]["pieces"] == [stone]
    recorded = {(0, 0)} | {(p["q"], p["r"]) for m in record["moves"] for p in m["pieces"]}
    assert {(c["q"], c["r"]) for c in end["board"]["cells"]} == recorded
    assert text.rstrip().endswith(f"[{stone['q']},{stone['r']}] [/];")


async def test_an_unknown_token_is_closed_with_1008_and_a_reason(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        async with a.http.ws_connect(f"{a.ws_base}/ws?token=made-up") as ws:
            unknown = await closed(ws)
        async with a.http.ws_connect(f"{a.ws_base}/ws") as ws:
            missing = await closed(ws)
    assert unknown[0] == 1008 and unknown[1]
    assert missing == (1008, "missing token: connect to /ws?token=<token_x or token_o>")


async def test_a_late_spectator_gets_the_history_then_every_move_and_the_end(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(
            {
                "player_x": {"type": "human"},
                "player_o": a.bot("center"),
                "match_config": HUMAN_MATCH,
            }
        )
        game_id = created["game_id"]
        async with a.http.ws_connect(f"{a.ws_base}/ws?token={created['token_x']}") as human:
            await receive_type(human, "setup")
            request = await receive_type(human, "move_request")
            await human.send_str(json.dumps(choose(request, HUMAN_MATCH)))
            request = await receive_type(human, "move_request")  # O has moved twice
            async with a.http.ws_connect(f"{a.ws_base}/spectate/{game_id}") as spectator:
                setup = await receive_type(spectator, "setup")
                assert setup["game_id"] == game_id
                assert [m["side"] for m in setup["moves"]] == ["o", "x", "o"]
                await human.send_str(json.dumps(choose(request, HUMAN_MATCH)))
                end = await play_until_end(human, HUMAN_MATCH)
                updates = []
                while (packet := await receive(spectator)) is not None:
                    updates.append(packet)
        record = await a.finished_record(game_id)
    assert [p["type"] for p in updates[:-1]] == ["board_update"] * (len(record.moves) - 3)
    assert updates[-1] == end


async def test_a_game_full_of_spectators_turns_more_away_until_one_leaves(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path, max_spectators=2) as a:
        created = await a.new_game(
            {
                "player_x": {"type": "human"},
                "player_o": a.bot("center"),
                "match_config": HUMAN_MATCH,
            }
        )
        url = f"{a.ws_base}/spectate/{created['game_id']}"
        async with a.http.ws_connect(url) as first, a.http.ws_connect(url) as second:
            await receive_type(first, "setup")
            await receive_type(second, "setup")
            async with a.http.ws_connect(url) as third:
                code, reason = await closed(third)
            assert code == 1013 and "2 spectators" in reason and "try again later" in reason
        # The two left: there is room again (once the server has seen them go).
        async with asyncio.timeout(TIMEOUT):
            while True:
                async with a.http.ws_connect(url) as fourth:
                    packet = await receive(fourth)
                if packet is not None:
                    break
                await asyncio.sleep(0.02)
        assert packet["type"] == "setup" and packet["game_id"] == created["game_id"]


async def test_spectating_an_unknown_game_is_closed_with_1008(tmp_path: Path) -> None:
    async with arena(tmp_path) as a, a.http.ws_connect(f"{a.ws_base}/spectate/nope") as ws:
        code, reason = await closed(ws)
    assert code == 1008 and reason


# ------------------------------------------------------------------- logs


def test_tokens_are_redacted_from_request_lines() -> None:
    line = '127.0.0.1:1 - "GET /ws?token=abc-DEF_1&x=1 HTTP/1.1" 101'
    assert redact_tokens(line) == '127.0.0.1:1 - "GET /ws?token=[redacted]&x=1 HTTP/1.1" 101'
    assert redact_tokens("/ws?x=1&TOKEN=abc") == "/ws?x=1&TOKEN=[redacted]"
    assert redact_tokens("/games?tokens=1") == "/games?tokens=1"


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextmanager
def captured(*names: str) -> Iterator[list[str]]:
    handler = _Lines()
    loggers = [logging.getLogger(name) for name in names]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler.lines
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


async def test_access_logs_never_show_a_token(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    app = create_app(db_url=db_url, host_example_bots=False)
    async with serving(app, log_level="info") as server, aiohttp.ClientSession() as http:
        # After the start: uvicorn's logging setup replaces the handlers of its loggers.
        with captured("uvicorn.access", "uvicorn.error") as lines:
            async with http.post(
                f"{server.url}/game/new",
                json={"player_x": {"type": "human"}, "player_o": {"type": "human"}},
            ) as response:
                token = (await response.json())["token_x"]
            async with http.ws_connect(f"ws{server.url[4:]}/ws?token={token}"):
                pass  # the handshake is what gets logged
            # A route that takes a token in its query (no such challenge: a 404).
            async with http.get(f"{server.url}/challenges/nope?token={token}") as response:
                assert response.status == 404
    requests = [line for line in lines if "/ws?" in line or "/challenges/" in line]
    assert any("WebSocket /ws?token=[redacted]" in line for line in requests), lines
    assert any("/challenges/nope?token=[redacted]" in line for line in requests), lines
    assert not any(token in line for line in lines)


# --------------------------------------------------------------- shutdown


async def test_stopping_the_server_mid_game_ends_it_as_aborted(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game(
            {
                "player_x": {"type": "human"},
                "player_o": a.bot("random"),
                "match_config": HUMAN_MATCH,
            }
        )
        human = await a.http.ws_connect(f"{a.ws_base}/ws?token={created['token_x']}")
        await receive_type(human, "setup")
        await receive_type(human, "move_request")
        spectator = await a.http.ws_connect(f"{a.ws_base}/spectate/{created['game_id']}")
        await receive_type(spectator, "setup")
        a.server.should_exit = True  # what SIGTERM does
        end = await until(human, "end")
        seen = await until(spectator, "end")
        assert await receive(human) is None
        await human.close()
        await spectator.close()
    assert end["detail"].partition(": ")[0] == "aborted" and end["winner"] is None and seen == end
    record, status = await stored(a.db_url, created["game_id"])
    assert status is RecordStatus.ABORTED
    assert record.result is not None and record.result.cause is EndCause.ABORTED
    assert len(record.moves) == 1  # O's first move is kept


async def test_games_left_running_by_a_crash_are_aborted_at_startup(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}"
    async with await GameStore.open(db_url) as store:
        await store.create_game(GameRecord(game_id="crashed"))
    async with arena(tmp_path) as a:
        _, page = await a.get_json("/games?status=aborted")
    assert [g["game_id"] for g in page["items"]] == ["crashed"]


# -------------------------------------------------------------------- CLI


def test_a_busy_port_is_a_one_line_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "game.serve",
                "--port",
                str(port),
                "--db",
                f"sqlite+aiosqlite:///{tmp_path / 'g.sqlite'}",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"htttx-server: error: cannot listen on 127.0.0.1:{port}: the port is already in use"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--db", "mysql://x/y"], "--db mysql://x/y: unsupported database 'mysql'"),
        (["--db", "sqlite+aiosqlite:////"], "is a directory, not a database file"),
        (["--db", "sqlite+aiosqlite:////dev/null/g.sqlite"], "/dev/null is a file, so"),
        (["--address-policy", "allow=moon"], "'moon' is neither a network"),
        (["--allow", "any", "--address-policy", "deny="], "not both"),
        (["--demo", "--no-example-bots"], "--demo plays two hosted example bots"),
        (["--max-spectators", "0"], "--max-spectators must be at least 1"),
        (["--spectator-flush", "-1"], "--spectator-flush must be from 0 to 1000 ms, got -1"),
        (["--spectator-flush", "nan"], "--spectator-flush must be from 0 to 1000 ms, got nan"),
        (["--spectator-flush", "2000"], "--spectator-flush must be from 0 to 1000 ms"),
        (["--commit-interval", "-5"], "--commit-interval must be from 0 to 60000 ms, got -5"),
        (["--commit-interval", "nan"], "--commit-interval must be from 0 to 60000 ms, got nan"),
        (["--stall-limit", "0"], "--stall-limit must be a finite number of seconds > 0, got 0"),
        (["--stall-limit", "inf"], "--stall-limit must be a finite number of seconds > 0, got inf"),
        (["--lease", "0"], "--lease is for a cluster's worker: add --redis URL"),
        (["--work-slots", "-1"], "--work-slots is for a cluster's worker: add --redis URL"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert serve_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_the_printed_curl_pairs_two_hosted_bots() -> None:
    command = curl_command("http://127.0.0.1:8001", with_token=False)
    assert command == (
        "curl -s -X POST http://127.0.0.1:8001/game/new -H 'content-type: application/json' "
        '-d \'{"player_x":{"type":"bot","bot_url":"http://127.0.0.1:8001/bots/threat"},'
        '"player_o":{"type":"bot","bot_url":"http://127.0.0.1:8001/bots/random"}}\''
    )


@contextmanager
def server_process(
    tmp_path: Path, *args: str, log: Path | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``python -m game.serve`` on a free port; yields the process and its base URL.
    Its log (stderr) goes to ``log`` when given."""
    command = [
        sys.executable, "-m", "game.serve", "--port", "0", "--log-level", "warning",
        "--db", f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}", *args,
    ]  # fmt: skip
    with contextlib.ExitStack() as files:
        stderr = None if log is None else files.enter_context(log.open("w"))
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr, text=True
        )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("htttx-arena game server on http://127.0.0.1:"), first
        yield process, first.rsplit(" ", 1)[-1].strip()
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(TIMEOUT)
        if process.stdout is not None:
            process.stdout.close()


def test_make_run_plays_a_demo_game_and_stops_cleanly_on_sigint(tmp_path: Path) -> None:
    with server_process(tmp_path, "--demo") as (process, base):
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Its record:"):
                break
        out = "".join(lines)
        assert f"curl -s -X POST {base}/game/new" in out
        record = notation.loads(out[out.index("version[2]") : out.index("Its record:")])
        assert record.result is not None and record.moves
        process.send_signal(signal.SIGINT)
        assert process.wait(TIMEOUT) == 0


async def test_the_server_logs_its_games_at_the_log_level(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with server_process(tmp_path, "--log-level", "info", log=log) as (process, base):
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as http:
            body = {
                "player_x": {"type": "bot", "bot_url": f"{base}/bots/threat"},
                "player_o": {"type": "bot", "bot_url": f"{base}/bots/center"},
            }
            async with http.post(f"{base}/game/new", json=body) as response:
                game_id = (await response.json())["game_id"]
            async with http.get(f"{base}/games/{game_id}?wait=60") as response:
                result = (await response.json())["result"]
        process.send_signal(signal.SIGINT)
        await asyncio.to_thread(process.wait, TIMEOUT)
    text = log.read_text()
    # Each line has its time, level and logger (uvicorn's own lines keep their format).
    assert f" INFO game.manager: game {game_id} created\n" in text
    assert f" INFO game.manager: game {game_id} over: " in text  # and why (its detail)
    assert result is not None


async def test_sigterm_aborts_the_running_games_and_records_them(tmp_path: Path) -> None:
    with server_process(tmp_path) as (process, base):
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as http:
            async with http.post(
                f"{base}/game/new",
                json={
                    "player_x": {"type": "human"},
                    "player_o": {"type": "bot", "bot_url": f"{base}/bots/center"},
                },
            ) as response:
                created = await response.json()
            async with http.ws_connect(f"ws{base[4:]}/ws?token={created['token_x']}") as ws:
                await receive_type(ws, "setup")
                process.send_signal(signal.SIGTERM)
                end = await until(ws, "end")
                code, _ = await closed(ws)
                assert code == 1001
        await asyncio.to_thread(process.wait, TIMEOUT)
    assert end["detail"].partition(": ")[0] == "aborted"
    _, status = await stored(f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}", created["game_id"])
    assert status is RecordStatus.ABORTED


async def test_concurrent_requests_of_one_client_cannot_pass_its_cap_together(
    tmp_path: Path,
) -> None:
    body = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}
    async with arena(tmp_path, max_games_per_client=2) as a:
        answers = await asyncio.gather(*(a.post(body) for _ in range(5)))
    assert sorted(status for status, _ in answers) == [200, 200, 429, 429, 429]


async def test_a_full_server_answers_503(tmp_path: Path) -> None:
    body = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}
    async with arena(tmp_path, max_games=1) as a:
        first = await a.post(body)
        second = await a.post(body)
    assert first[0] == 200
    assert second[0] == 503 and "1 games are running" in second[1]["detail"]


async def test_the_address_policy_is_the_servers(tmp_path: Path) -> None:
    async with arena(tmp_path, policy=AddressPolicy.parse("allow=public")) as a:
        status, answer = await a.post({"player_x": a.bot("random"), "player_o": a.bot("center")})
    assert status == 422
    assert "127.0.0.1: not allowed by the bot address policy (allowed: public)" in answer["detail"]


async def test_a_running_game_has_a_record_and_notation_so_far(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        created = await a.new_game({"player_x": {"type": "human"}, "player_o": {"type": "human"}})
        status, record = await a.get_json(f"/games/{created['game_id']}")
        async with a.http.get(f"{a.base}/games/{created['game_id']}/notation") as response:
            text = await response.text()
    assert status == 200 and record["result"] is None and record["moves"] == []
    assert notation.loads(text).moves == []


async def test_the_games_list_shows_who_is_to_move_and_the_clocks_of_a_running_game(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path) as a:
        finished = await a.new_game({"player_x": a.bot("center"), "player_o": a.bot("random")})
        await a.finished_record(finished["game_id"])
        running = await a.new_game(
            {
                "player_x": {"type": "human"},
                "player_o": {"type": "human"},
                "match_config": {"clock_type": "match", "clock": 60.0},
            }
        )
        _, page = await a.get_json("/games")
    live, over = page["items"]
    assert live["game_id"] == running["game_id"]
    # O moves first after X's opening stone; neither clock has run yet (nobody is seated).
    assert live["to_move"] == "o"
    assert live["clock_x_ms"] == 60_000 and live["clock_o_ms"] == 60_000
    assert (over["to_move"], over["clock_x_ms"], over["clock_o_ms"]) == (None, None, None)

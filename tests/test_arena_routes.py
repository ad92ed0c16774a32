"""The arena's routes (``/bots``, ``/leaderboard``) on the whole server, over loopback.

Each test starts the app under uvicorn on an ephemeral port with a SQLite file and the
example bots hosted on the same port; bots are registered by their hosted URLs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from starlette.applications import Starlette

from game.discovery import AddressPolicy
from game.serve import main as serve_main
from game.server import create_app, serving
from game.server_state import _Runtime

TIMEOUT = 60.0
Json = dict[str, Any]


@dataclass
class Server:
    app: Starlette
    base: str
    http: aiohttp.ClientSession

    @property
    def runtime(self) -> _Runtime:
        runtime: _Runtime = self.app.state.arena
        return runtime

    async def call(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> tuple[int, Any]:
        headers = {"content-type": "application/json"}
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        data = None if body is None else (body if isinstance(body, str) else json.dumps(body))
        async with self.http.request(
            method, self.base + path, data=data, headers=headers
        ) as response:
            return response.status, await response.json()

    async def register(self, name: str, bot: str = "threat", **fields: Any) -> Json:
        status, answer = await self.call(
            "POST", "/bots", {"name": name, "url": f"{self.base}/bots/{bot}", **fields}
        )
        assert status == 201, answer
        return dict(answer)


@asynccontextmanager
async def arena(tmp_path: Path, **options: Any) -> AsyncIterator[Server]:
    app = create_app(db_url=f"sqlite+aiosqlite:///{tmp_path / 'games.sqlite'}", **options)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with serving(app) as server, aiohttp.ClientSession(timeout=timeout) as http:
        yield Server(app, server.url, http)


async def test_a_bot_is_registered_listed_and_shown(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        registered = await a.register("Hexa", description="threats, hosted")
        assert registered["owner_token"] and registered["status"] == "active"
        assert (registered["rating"], registered["uncertainty"]) == (1500, 1000)
        assert registered["meta"]["name"] == "ThreatBot"
        status, listed = await a.call("GET", "/bots")
        assert status == 200
        assert "threat" in {bot["name"] for bot in listed["bots"]}  # the hosted ones stay
        [shown] = listed["registered"]
        assert shown["name"] == "Hexa" and "owner_token" not in shown
        status, one = await a.call("GET", "/bots/hexa")
        assert status == 200 and one == shown
        status, missing = await a.call("GET", "/bots/nobody")
        assert status == 404 and "nobody" in missing["detail"]


async def test_registrations_that_cannot_be_taken_say_why(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        await a.register("Hexa")
        url = f"{a.base}/bots/threat"
        status, answer = await a.call("POST", "/bots", {"name": "HEXA", "url": url})
        assert status == 409 and "taken" in answer["detail"]
        status, answer = await a.call("POST", "/bots", {"name": "B", "url": "ftp://x/bot"})
        assert status == 422 and "ftp" in answer["detail"]
        status, answer = await a.call("POST", "/bots", {"name": "C", "url": f"{a.base}/nothing"})
        assert status == 422 and "/nothing/capabilities.json" in answer["detail"]
        status, answer = await a.call("POST", "/bots", {"name": " D", "url": url})
        assert status == 422 and "spaces" in answer["detail"]
        status, answer = await a.call("POST", "/bots", {"name": "E", "url": url, "x": 1})
        assert status == 422 and "x" in answer["detail"]
        status, answer = await a.call("POST", "/bots", "not json")
        assert status == 422
    async with arena(tmp_path, policy=AddressPolicy.parse("allow=public")) as strict:
        url = f"{strict.base}/bots/threat"
        status, answer = await strict.call("POST", "/bots", {"name": "F", "url": url})
        assert status == 422 and "policy" in answer["detail"]


async def test_a_game_seat_cannot_take_a_registered_players_name(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        await a.register("Hexa")  # ThreatBot, at /bots/threat
        await a.runtime.registry.claim_person("alice", None)

        def seat(bot: str, name: str) -> Json:
            return {"type": "bot", "bot_url": f"{a.base}/bots/{bot}", "name": name}

        random = {"type": "bot", "bot_url": f"{a.base}/bots/random"}
        status, answer = await a.call(
            "POST", "/game/new", {"player_x": seat("random", "hexa"), "player_o": random}
        )
        assert status == 422 and answer["detail"].startswith("player_x.name: 'Hexa'")
        assert f"{a.base}/bots/threat" in answer["detail"]
        human = {"type": "human", "name": "ALICE"}
        status, answer = await a.call("POST", "/game/new", {"player_x": random, "player_o": human})
        assert status == 422 and "player_o.name: 'alice' is a registered person" in answer["detail"]
        # The registered bot itself, at its registered URL, plays under its name.
        status, answer = await a.call(
            "POST", "/game/new", {"player_x": seat("threat", "Hexa"), "player_o": random}
        )
        assert status == 200, answer
        status, answer = await a.call(
            "POST", "/game/new", {"player_x": seat("threat", "Someone"), "player_o": random}
        )
        assert status == 200, answer


async def test_the_owner_token_changes_and_retires_a_bot(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        token = (await a.register("Hexa"))["owner_token"]
        status, answer = await a.call("PATCH", "/bots/Hexa", {"ladder": False})
        assert status == 401 and "owner token" in answer["detail"]
        status, answer = await a.call("PATCH", "/bots/Hexa", {"ladder": False}, token="guess")
        assert status == 403
        status, answer = await a.call("PATCH", "/bots/Hexa", {"ladder": 3}, token=token)
        assert status == 422
        status, answer = await a.call(
            "PATCH", "/bots/hexa", {"ladder": False, "url": f"{a.base}/bots/random"}, token=token
        )
        assert status == 200 and answer["ladder"] is False
        assert answer["url"].endswith("/bots/random") and answer["meta"]["name"] == "RandomBot"
        status, answer = await a.call("PATCH", "/bots/nobody", {"ladder": False}, token=token)
        assert status == 404
        status, answer = await a.call("DELETE", "/bots/Hexa", token=token)
        assert status == 200 and answer["status"] == "retired"
        status, answer = await a.call("PATCH", "/bots/Hexa", {"ladder": True}, token=token)
        assert status == 409 and "retired" in answer["detail"]
        status, listed = await a.call("GET", "/bots")
        assert [bot["status"] for bot in listed["registered"]] == ["retired"]


async def test_an_api_token_guards_registration_but_not_the_owners_changes(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path, api_token="s3cret") as a:
        body = {"name": "Hexa", "url": f"{a.base}/bots/threat"}
        status, answer = await a.call("POST", "/bots", body)
        assert status == 401 and "API token" in answer["detail"]
        status, answer = await a.call("POST", "/bots", body, token="s3cret")
        assert status == 201
        owner = answer["owner_token"]
        status, answer = await a.call("PATCH", "/bots/Hexa", {"description": "mine"}, token=owner)
        assert status == 200 and answer["description"] == "mine"
        status, _ = await a.call("DELETE", "/bots/Hexa", token="s3cret")  # not the owner's
        assert status == 403


async def watched_to_the_end(a: Server, game_id: str) -> Json:
    """The ``end`` packet a spectator of the game gets."""
    async with a.http.ws_connect(f"ws{a.base[4:]}/spectate/{game_id}") as ws:
        while True:
            message = await asyncio.wait_for(ws.receive(), TIMEOUT)
            assert message.type is aiohttp.WSMsgType.TEXT, message
            packet: Json = json.loads(message.data)
            if packet["type"] == "end":
                return packet


async def test_rated_games_make_the_leaderboard_and_the_bots_history(tmp_path: Path) -> None:
    async with arena(tmp_path) as a:
        await a.register("Hexa", "threat")
        await a.register("Drunk", "random")
        status, board = await a.call("GET", "/leaderboard")
        assert (status, board) == (200, {"entries": []})
        games = []
        for _ in range(2):
            status, created = await a.call(
                "POST",
                "/game/new",
                {
                    "player_x": {"type": "bot", "bot_url": f"{a.base}/bots/threat"},
                    "player_o": {"type": "bot", "bot_url": f"{a.base}/bots/random"},
                },
            )
            assert status == 200, created
            # What the ladder does for its games: declare them rated.
            await a.runtime.ratings.track(created["game_id"], "Hexa", "Drunk")
            games.append(created["game_id"])
        ends = [await watched_to_the_end(a, game_id) for game_id in games]
        # Whoever was told `end` finds the game in the ratings already.
        status, board = await a.call("GET", "/leaderboard?kind=bot&limit=10")
        assert status == 200
        entries = board["entries"]
        assert [e["rank"] for e in entries] == [1, 2]
        assert {e["name"] for e in entries} == {"Hexa", "Drunk"}
        assert all(e["games"] == 2 and e["kind"] == "bot" for e in entries)
        assert all(e["provisional"] and e["status"] == "active" for e in entries)
        assert sum(e["wins"] for e in entries) + sum(e["draws"] for e in entries) // 2 == 2
        hexa = next(e for e in entries if e["name"] == "Hexa")
        assert hexa["avg_think_ms"] is not None and hexa["last_seen"] is not None
        status, top = await a.call("GET", "/leaderboard?limit=1")
        assert status == 200 and top["entries"] == entries[:1]
        status, people = await a.call("GET", "/leaderboard?kind=human")
        assert (status, people) == (200, {"entries": []})
        for bad in ("kind=robots", "limit=0", "limit=abc", "limit=1001"):
            status, answer = await a.call("GET", f"/leaderboard?{bad}")
            assert status == 422 and answer["detail"], bad

        status, history = await a.call("GET", "/bots/HEXA/ratings?limit=5")
        assert status == 200 and history["name"] == "Hexa"
        # Newest first: the games ran at once, so either may have ended first.
        assert sorted(p["game_id"] for p in history["points"]) == sorted(games)
        assert history["points"][0]["at"] >= history["points"][1]["at"]
        assert history["points"][0]["opponent"] == "Drunk"
        assert history["points"][0]["rating"] == hexa["rating"]
        status, listed = await a.call("GET", "/bots")
        shown = {bot["name"]: bot for bot in listed["registered"]}
        assert shown["Hexa"]["games"] == 2 and shown["Hexa"]["rating"] == hexa["rating"]
        assert len(ends) == 2
        status, _ = await a.call("GET", "/bots/nobody/ratings")
        assert status == 404


def test_the_recheck_interval_is_a_server_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert serve_main(["--bot-recheck", "-1"]) == 2
    assert "--bot-recheck" in capsys.readouterr().err
    with pytest.raises(ValueError, match="bot_recheck"):
        create_app(bot_recheck=-5)

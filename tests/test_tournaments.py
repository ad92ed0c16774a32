"""Tournaments through the game server's REST routes, with real bots on loopback."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from game.server import GameServer, create_app, serving
from game.store import GameStore, RecordStatus
from game.tournament_cli import export_games
from models import GameRecord, Player
from tests.json_schema import schema_problems
from tests.postgres import PostgresCluster
from tests.test_server import capabilities_server

Json = dict[str, Any]
TIMEOUT = 120.0


@dataclass
class Arena:
    server: GameServer
    http: aiohttp.ClientSession
    db_url: str
    #: The control token of each tournament and series created here, by id.
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return self.server.url

    def bot(self, name: str, hosted: str | None = None) -> Json:
        return {"name": name, "url": f"{self.base}/bots/{hosted or name}"}

    async def post(
        self, path: str, body: Any = None, *, token: str | None = None
    ) -> tuple[int, Json]:
        data = body if isinstance(body, str | bytes) else json.dumps(body or {})
        headers = {"content-type": "application/json"}
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        async with self.http.post(self.base + path, data=data, headers=headers) as response:
            return response.status, await response.json()

    async def post_as_creator(self, path: str) -> tuple[int, Json]:
        """POST ``path`` (``/tournaments/<id>/stop``, ``/series/<id>/resume``...) as the
        creator of its tournament or series: with the control token it was given."""
        return await self.post(path, token=self.tokens[path.split("/")[2]])

    async def get(self, path: str) -> tuple[int, Any]:
        async with self.http.get(self.base + path) as response:
            return response.status, await response.json()

    async def create(self, body: Json) -> str:
        status, answer = await self.post("/tournaments", body)
        assert status == 201, answer
        self.tokens[answer["tournament_id"]] = answer["control_token"]
        return str(answer["tournament_id"])

    async def until(self, tournament_id: str, done: Any) -> Json:
        """Poll the tournament until ``done(view)`` (bounded only against hangs)."""
        async with asyncio.timeout(TIMEOUT):
            while True:
                status, view = await self.get(f"/tournaments/{tournament_id}")
                assert status == 200, view
                if done(view):
                    return dict(view)
                await asyncio.sleep(0.05)

    async def finished(self, tournament_id: str) -> Json:
        return await self.until(tournament_id, lambda view: view["status"] != "running")


@asynccontextmanager
async def arena(db: Path | str, port: int = 0, **options: Any) -> AsyncIterator[Arena]:
    db_url = db if isinstance(db, str) else f"sqlite+aiosqlite:///{db}"
    app = create_app(db_url=db_url, **options)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with (
        serving(app, port=port) as server,
        aiohttp.ClientSession(timeout=timeout) as http,
    ):
        yield Arena(server, http, db_url)


def three_bots(arena: Arena) -> list[Json]:
    return [arena.bot("threat"), arena.bot("center"), arena.bot("random")]


async def test_a_round_robin_plays_every_game_and_each_is_an_ordinary_record(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        tournament_id = await a.create(
            {
                "name": "rr",
                "bots": three_bots(a),
                "rounds": 2,
                "concurrency": 3,
                "openings": "none",
                "match": {"turn_limit": 80},
            }
        )
        view = await a.finished(tournament_id)
        assert view["status"] == "finished", view["reason"]
        assert view["games_total"] == view["games_done"] == view["games_counted"] == 12
        standings = {line["name"]: line for line in view["standings"]}
        assert sum(line["games"] for line in standings.values()) == 24
        assert sum(line["points"] for line in standings.values()) == 12
        assert all(line["elo"] is not None for line in standings.values())
        assert view["crosstable"] is not None and "threat" in view["crosstable"]
        assert len(view["pairs"]) == 3
        assert all(sum(pair["pentanomial"]) == 2 for pair in view["pairs"])

        # The results are those of the games' own records (the source of truth).
        async with await GameStore.open(a.db_url) as store:
            rows = await store.tournaments.games(tournament_id)
            assert sorted(row.idx for row in rows) == list(range(12))
            wins: dict[str, int] = {}
            for row in rows:
                record = await store.get_game(row.game_id)
                assert record is not None and record.result is not None
                assert record.name is not None and record.name.startswith("rr: game")
                winner = record.result.winner
                if winner is not None:
                    seat = record.player_x if winner is Player.X else record.player_o
                    assert seat.name is not None
                    wins[seat.name] = wins.get(seat.name, 0) + 1
                assert row.outcome is not None
                winning_seat = record.player_x if winner is Player.X else record.player_o
                assert row.outcome["winner"] == (None if winner is None else winning_seat.name)
        assert wins == {name: line["wins"] for name, line in standings.items() if line["wins"]}

        status, page = await a.get("/tournaments")
        assert status == 200
        [summary] = page["tournaments"]
        assert summary["tournament_id"] == tournament_id and summary["status"] == "finished"


async def test_a_gauntlet_plays_the_first_bot_against_the_others(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        tournament_id = await a.create(
            {
                "format": "gauntlet",
                "bots": three_bots(a),
                "rounds": 1,
                "concurrency": 2,
                "openings": "none",
            }
        )
        view = await a.finished(tournament_id)
        assert view["status"] == "finished"
        assert [(p["bot"], p["opponent"]) for p in view["pairs"]] == [
            ("threat", "center"),
            ("threat", "random"),
        ]
        standings = {line["name"]: line for line in view["standings"]}
        assert standings["threat"]["games"] == 4 and standings["center"]["games"] == 2


async def test_an_sprt_stops_as_soon_as_it_decides(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        tournament_id = await a.create(
            {
                "bots": [a.bot("threat"), a.bot("random")],
                "rounds": 500,
                "concurrency": 4,
                "openings": "none",
                "sprt": {"elo0": 0, "elo1": 100, "alpha": 0.05, "beta": 0.05},
            }
        )
        view = await a.finished(tournament_id)
        sprt = view["sprt"]
        assert view["status"] == "finished" and sprt["decision"] == "H1"
        assert sprt["llr"] >= sprt["upper"] and "SPRT: H1 accepted" in view["reason"]
        assert view["games_counted"] < view["games_total"] // 10
        assert view["games_running"] == 0
        [pair] = view["pairs"]
        assert pair["games"] == view["games_counted"]


async def test_stop_then_resume_plays_every_game_once(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        tournament_id = await a.create(
            {
                "bots": [a.bot("threat"), a.bot("random")],
                "rounds": 30,
                "concurrency": 2,
                "openings": "none",
            }
        )
        await a.until(tournament_id, lambda view: view["games_done"] >= 4)
        status, view = await a.post_as_creator(f"/tournaments/{tournament_id}/stop")
        assert status == 200 and view["status"] == "stopped"
        assert view["games_running"] == 0
        assert (await a.post_as_creator(f"/tournaments/{tournament_id}/stop"))[0] == 409
        status, view = await a.post_as_creator(f"/tournaments/{tournament_id}/resume")
        assert status == 200 and view["status"] == "running"
        status, busy = await a.post_as_creator(f"/tournaments/{tournament_id}/resume")
        assert status == 409, busy
        view = await a.finished(tournament_id)
        assert view["status"] == "finished" and view["games_counted"] == 60
        async with await GameStore.open(a.db_url) as store:
            rows = await store.tournaments.games(tournament_id)
        assert sorted(row.idx for row in rows) == list(range(60))
        assert all(row.status == "done" for row in rows)


async def test_the_answer_to_resume_counts_the_games_played_before(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        tournament_id = await a.create(
            {"bots": [a.bot("threat"), a.bot("random")], "rounds": 30, "openings": "none"}
        )
        await a.until(tournament_id, lambda view: view["games_counted"] >= 4)
        status, stopped = await a.post_as_creator(f"/tournaments/{tournament_id}/stop")
        assert status == 200 and stopped["status"] == "stopped", stopped
        status, resumed = await a.post_as_creator(f"/tournaments/{tournament_id}/resume")
        assert status == 200 and resumed["status"] == "running", resumed
        # Not 0 of 60 until the run has read the store: what was played, at least.
        assert resumed["games_done"] >= stopped["games_done"] >= 4
        assert resumed["games_counted"] >= stopped["games_counted"] >= 4
        games = {line["name"]: line["games"] for line in resumed["standings"]}
        assert games["threat"] == games["random"] >= stopped["games_counted"]
        await a.post_as_creator(f"/tournaments/{tournament_id}/stop")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_tournament_cut_short_by_a_restart_resumes_where_it_was(tmp_path: Path) -> None:
    db, port = tmp_path / "t.sqlite", free_port()
    body: Json = {"rounds": 20, "concurrency": 2, "openings": "none"}
    async with arena(db, port) as a:
        tournament_id = await a.create({**body, "bots": three_bots(a)[:2]})
        await a.until(tournament_id, lambda view: view["games_done"] >= 3)
        tokens = a.tokens
    async with arena(db, port) as a:  # the first server stopped: interrupted
        a.tokens.update(tokens)  # the control token is stored: it outlives the server
        status, view = await a.get(f"/tournaments/{tournament_id}")
        assert view["status"] == "interrupted" and view["games_done"] >= 3
        status, view = await a.post_as_creator(f"/tournaments/{tournament_id}/resume")
        assert status == 200, view
        view = await a.finished(tournament_id)
        assert view["status"] == "finished" and view["games_counted"] == 40
        async with await GameStore.open(a.db_url) as store:
            rows = await store.tournaments.games(tournament_id)
            aborted = await store.list_games(status=RecordStatus.ABORTED, limit=100)
        assert sorted(row.idx for row in rows) == list(range(40))
        # The games cut short stay in the records, aborted, and were played again.
        assert {row.game_id for row in rows}.isdisjoint(g.game_id for g in aborted.items)


async def test_resuming_with_a_bot_gone_says_which_bot(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    async with arena(db) as a:
        tournament_id = await a.create(
            {"bots": three_bots(a)[:2], "rounds": 50, "openings": "none"}
        )
        await a.until(tournament_id, lambda view: view["games_done"] >= 1)
        tokens = a.tokens
    async with arena(db) as a:  # another port: the URLs of the old server are gone
        a.tokens.update(tokens)
        status, answer = await a.post_as_creator(f"/tournaments/{tournament_id}/resume")
        assert status == 422 and "bot 'threat'" in answer["detail"], answer
        status, view = await a.get(f"/tournaments/{tournament_id}")
        assert view["status"] == "interrupted"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bots": []}, "at least 2 bots"),
        ({"sprt": {"elo0": 5, "elo1": 0}}, "elo0 must be less than elo1"),
        ({"round": 50}, "round: extra inputs are not permitted"),
        ({"sprt": {"elo0": 0, "elo1": 5, "alfa": 0.1}}, "sprt.alfa: extra inputs"),
        ({"adjudication": {"resing": {}}}, "adjudication.resing: extra inputs"),
        ({"series": {"best_of": 3, "x": 1}}, "series.x: extra inputs"),
        ({"bots": "extra"}, "bots[1].colour: extra inputs are not permitted"),
        ({"bots": "dup"}, "names must be unique"),
        ({"concurrency": 0}, "concurrency"),
        ({"openings": "book", "book": "version[2] name[Bad]; 1. [1,0] [0,0];"}, "opening 'Bad'"),
        ({"openings": "book"}, "give 'book'"),
        ({"rounds": 10**6}, "at most 1000000"),
        ({"bots": "cmd"}, "the server does not run programs"),
        ({"bots": "closed"}, "'nobody'"),
        ({"match": {"view_distance": 30}}, "view_distance"),
    ],
)
async def test_a_bad_request_gets_one_clear_422(tmp_path: Path, change: Json, message: str) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        body: Json = {"bots": [a.bot("threat"), a.bot("random")], **change}
        if change.get("bots") == "dup":
            body["bots"] = [a.bot("threat"), a.bot("threat", "random")]
        elif change.get("bots") == "extra":
            body["bots"] = [a.bot("threat"), {**a.bot("random"), "colour": "red"}]
        elif change.get("bots") == "cmd":
            body["bots"] = [a.bot("threat"), {"name": "local", "cmd": "my-bot --port {port}"}]
        elif change.get("bots") == "closed":
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            body["bots"] = [a.bot("threat"), {"name": "nobody", "url": f"http://127.0.0.1:{port}"}]
        status, answer = await a.post("/tournaments", body)
        assert status == 422, answer
        assert message in answer["detail"]
        assert "\n" not in answer["detail"]
        status, page = await a.get("/tournaments")
        assert page["tournaments"] == []  # nothing stored for a refused request


async def test_unknown_tournaments_are_404(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        assert (await a.get("/tournaments/nope"))[0] == 404
        assert (await a.post("/tournaments/nope/stop"))[0] == 404
        assert (await a.post("/tournaments/nope/resume"))[0] == 404


async def test_tournament_changes_need_the_api_token(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite", api_token="s3cret") as a:
        status, answer = await a.post("/tournaments", {"bots": three_bots(a)})
        assert status == 401, answer
        assert (await a.post("/tournaments/x/stop"))[0] == 401
        assert (await a.get("/tournaments"))[0] == 200  # reading is open, like GET /games


async def test_spectators_can_watch_a_tournament_game(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        tournament_id = await a.create(
            {
                "bots": [a.bot("random"), a.bot("random2", "random")],
                "rounds": 5,
                "openings": "none",
                "match": {"turn_limit": 200},
            }
        )
        # Random bots take hundreds of moves: a game is still live when it is seen.
        view = await a.until(tournament_id, lambda view: bool(view["live_games"]))
        game_id = view["live_games"][0]
        ws_url = "ws" + a.base[4:] + f"/spectate/{game_id}"
        async with a.http.ws_connect(ws_url) as ws:
            first = json.loads((await ws.receive()).data)
            assert first["type"] == "setup"
        await a.post_as_creator(f"/tournaments/{tournament_id}/stop")
        record = GameRecord.model_validate((await a.get(f"/games/{game_id}"))[1])
        assert record.name is not None and "game" in record.name


async def test_on_postgresql_a_stopped_tournament_resumes_to_the_end(
    postgres_cluster: PostgresCluster,
) -> None:
    db_url = postgres_cluster.new_database()
    async with arena(db_url) as a:
        tournament_id = await a.create(
            {"bots": three_bots(a), "rounds": 4, "concurrency": 3, "openings": "none"}
        )
        await a.until(tournament_id, lambda view: view["games_done"] >= 3)
        assert (await a.post_as_creator(f"/tournaments/{tournament_id}/stop"))[0] == 200
        assert (await a.post_as_creator(f"/tournaments/{tournament_id}/resume"))[0] == 200
        view = await a.finished(tournament_id)
        assert view["status"] == "finished" and view["games_counted"] == 24
        async with await GameStore.open(db_url) as store:
            rows = await store.tournaments.games(tournament_id)
        assert sorted(row.idx for row in rows) == list(range(24))


async def test_each_pair_plays_one_book_opening_with_colours_swapped(tmp_path: Path) -> None:
    from game.openings import default_book

    async with arena(tmp_path / "t.sqlite") as a:
        tournament_id = await a.create(
            {
                "bots": [a.bot("threat"), a.bot("center")],
                "rounds": 3,
                "concurrency": 2,
                "opening_order": "random",
                "seed": 4,
            }
        )
        view = await a.finished(tournament_id)
        assert view["status"] == "finished" and view["games_counted"] == 6
        async with await GameStore.open(a.db_url) as store:
            rows = await store.tournaments.games(tournament_id)
            records = {row.idx: await store.get_game(row.game_id) for row in rows}
    book = default_book().order(seed=4)
    for pair in range(3):
        first, second = records[2 * pair], records[2 * pair + 1]
        assert first is not None and second is not None
        opening = book[pair]
        played = len(opening.moves)
        for record in (first, second):
            assert record.tags["opening"] == opening.name
            assert record.tags["opening_moves"] == str(played)
            assert record.tags["tournament"] == tournament_id
            assert [tuple((c.q, c.r) for c in m.pieces) for m in record.moves[:played]] == [
                tuple(move) for move in opening.moves
            ]
        assert (first.player_x.name, first.player_o.name) == (
            second.player_o.name,
            second.player_x.name,
        )


async def test_a_full_server_is_waited_for_not_a_failure(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite", max_games=2) as a:
        tournament_id = await a.create(
            {"bots": three_bots(a), "rounds": 2, "concurrency": 6, "openings": "none"}
        )
        view = await a.finished(tournament_id)
        assert view["status"] == "finished" and view["games_counted"] == 12


async def test_a_bot_that_goes_away_fails_the_tournament_which_resumes_when_it_is_back(
    tmp_path: Path,
) -> None:
    host_port = free_port()
    host_db = tmp_path / "host.sqlite"
    async with arena(tmp_path / "t.sqlite") as a:
        async with arena(host_db, host_port) as host:
            bots = [a.bot("threat"), {"name": "far", "url": f"{host.base}/bots/center"}]
            tournament_id = await a.create(
                {"bots": bots, "rounds": 100, "concurrency": 2, "openings": "none"}
            )
            await a.until(tournament_id, lambda view: view["games_done"] >= 4)
        # The host is gone: games in flight end (a forfeit of the far bot, counted);
        # new ones cannot start, and after CREATE_ATTEMPTS tries the tournament fails.
        view = await a.finished(tournament_id)
        assert view["status"] == "failed", view
        assert "could not start after 3 tries" in view["reason"]
        assert "/bots/center" in view["reason"]
        async with arena(host_db, host_port):
            status, view = await a.post_as_creator(f"/tournaments/{tournament_id}/resume")
            assert status == 200, view
            view = await a.finished(tournament_id)
        assert view["status"] == "finished" and view["games_counted"] == 200


async def test_a_tournaments_games_are_listed_in_game_order_with_their_bots_and_results(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        tournament_id = await a.create(
            {
                "bots": three_bots(a),
                "openings": "none",
                "concurrency": 2,
                "match": {"turn_limit": 40},
            }
        )
        view = await a.finished(tournament_id)
        status, page = await a.get(f"/tournaments/{tournament_id}/games")
        _, head = await a.get(f"/tournaments/{tournament_id}/games?limit=4")
        _, tail = await a.get(f"/tournaments/{tournament_id}/games?offset=4&limit=5")
        _, exact = await a.get(f"/tournaments/{tournament_id}/games?offset=2&limit=4")
        bad_limit, _ = await a.get(f"/tournaments/{tournament_id}/games?limit=0")
        missing, _ = await a.get("/tournaments/nope/games")
        records = {}
        for item in page["items"]:
            _, records[item["game_id"]] = await a.get(f"/games/{item['game_id']}")
    assert status == 200 and view["games_done"] == page["games_total"] == 6
    assert [item["number"] for item in page["items"]] == [1, 2, 3, 4, 5, 6]
    # Each pair plays twice, colours swapped; the sides named are the records' own.
    assert [(item["x"], item["o"]) for item in page["items"][:2]] == [
        ("threat", "center"),
        ("center", "threat"),
    ]
    for item in page["items"]:
        record = records[item["game_id"]]
        assert (record["player_x"]["name"], record["player_o"]["name"]) == (item["x"], item["o"])
        assert item["result"] == record["result"] and item["counted"]
        assert item["round"] == 1 and item["status"] == "finished"
    assert [item["number"] for item in tail["items"]] == [5, 6] and tail["offset"] == 4
    # Another page follows while a game is left; a page that ends on the last has none.
    assert page["next_offset"] is None and head["next_offset"] == 4
    assert tail["next_offset"] is None and exact["next_offset"] is None
    assert [item["number"] for item in exact["items"]] == [3, 4, 5, 6]
    assert (bad_limit, missing) == (422, 404)


async def test_the_tournament_routes_answer_what_the_served_openapi_schemas_describe(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        tournament_id = await a.create(
            {
                "bots": three_bots(a),
                "openings": "none",
                "concurrency": 3,
                "match": {"turn_limit": 100},
            }
        )
        view = await a.finished(tournament_id)
        _, document = await a.get("/openapi.json")
        _, page = await a.get("/tournaments")
        _, games = await a.get(f"/tournaments/{tournament_id}/games")
    # threat beats random in both games: an infinite Elo, sent as a string.
    pairs = {(pair["bot"], pair["opponent"]): pair for pair in view["pairs"]}
    assert pairs["threat", "random"]["elo"] == "Infinity", pairs
    schemas = document["components"]["schemas"]
    for name, answer in (
        ("TournamentView", view),
        ("TournamentPage", page),
        ("TournamentGames", games),
    ):
        assert schema_problems(answer, schemas[name], document) == [], name


async def test_a_game_that_ends_after_the_sprt_decided_is_neither_counted_nor_exported(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        tournament_id = await a.create(
            {
                "bots": [a.bot("threat"), a.bot("random")],
                "rounds": 500,
                "openings": "none",
                "sprt": {"elo0": 0, "elo1": 100},
            }
        )
        view = await a.finished(tournament_id)
        counted = view["games_counted"]
        assert view["sprt"]["decision"] == "H1" and counted < view["games_total"]
        # A game in flight at the decision that ended anyway (the race with the stop,
        # with several games at once) is stored done, past the counted games.
        async with await GameStore.open(a.db_url) as store:
            rows = await store.tournaments.games(tournament_id)
            await store.tournaments.start_game(tournament_id, counted, rows[0].game_id)
            assert await store.tournaments.finish_game(tournament_id, counted, {"winner": "X"})
            written = await export_games(
                store, tournament_id, tmp_path / "games", None, games_counted=counted
            )
        status, page = await a.get(f"/tournaments/{tournament_id}/games?limit=500")
    assert status == 200 and len(page["items"]) == counted + 1
    assert [item["counted"] for item in page["items"]] == [True] * counted + [False]
    assert written == counted == len(list((tmp_path / "games").iterdir()))


#: A websocket bot with the base features only: it cannot be told an opening, nor rules
#: that are not the standard ones.
BASE_ONLY: Json = {"basic_websocket": {"versions": {"v1-alpha": {}}}}
STATELESS_ONLY: Json = {"stateless": {"versions": {"v1-alpha": {}}}}


@pytest.mark.parametrize(
    ("document", "change", "message"),
    [
        (
            BASE_ONLY,
            {"openings": "default"},
            "bot 'plain': the bot declares neither free_setup nor move_skips, so it cannot "
            "start from an opening (openings 'none' starts every game without one)",
        ),
        (
            STATELESS_ONLY,
            {"openings": "none", "match": {"win_distance": 5}},
            "bot 'plain': this game's rules are not the standard ones (win_distance 5), and "
            "the bot cannot be told them: a stateless request carries no rules",
        ),
    ],
)
async def test_a_bot_that_cannot_be_seated_for_the_openings_or_rules_is_refused_with_422(
    tmp_path: Path, document: Json, change: Json, message: str
) -> None:
    async with capabilities_server(document) as url, arena(tmp_path / "t.sqlite") as a:
        body = {"bots": [a.bot("threat"), {"name": "plain", "url": url}], **change}
        status, answer = await a.post("/tournaments", body)
        _, page = await a.get("/tournaments")
    assert status == 422 and answer["detail"] == message
    assert page["tournaments"] == []  # refused before anything was stored


async def test_a_bad_sprt_is_named_once(tmp_path: Path) -> None:
    async with arena(tmp_path / "t.sqlite") as a:
        body = {"bots": [a.bot("threat"), a.bot("random")], "sprt": {"elo0": 5, "elo1": 0}}
        status, answer = await a.post("/tournaments", body)
    assert (status, answer["detail"]) == (422, "sprt: elo0 must be less than elo1, got 5 and 0")

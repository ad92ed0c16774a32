"""Series (best of N, first to K) through the game server's REST routes, with the
server's hosted bots on loopback as the players."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from game.series_score import SeriesRule, SeriesScore
from game.store import GameStore, RecordStatus
from models import GameRecord
from tests.postgres import PostgresCluster
from tests.test_tournaments import Arena, arena, free_port
from wire.series import SeriesRequest

Json = dict[str, Any]


def player(a: Arena, name: str, hosted: str | None = None) -> Json:
    return {"name": name, "bot_url": f"{a.base}/bots/{hosted or name}"}


async def create(a: Arena, body: Json) -> str:
    status, answer = await a.post("/series", body)
    assert status == 201, answer
    a.tokens[answer["series_id"]] = answer["control_token"]
    return str(answer["series_id"])


async def series_finished(a: Arena, series_id: str) -> Json:
    # A series is a tournament: its status first. After a restart it is interrupted
    # until it resumes by itself.
    await a.until(series_id, lambda view: view["status"] in ("finished", "failed", "stopped"))
    status, view = await a.get(f"/series/{series_id}")
    assert status == 200, view
    return dict(view)


def replay(view: Json) -> SeriesScore:
    """The score from the counted games' results, by the rule: what the server says."""
    request = view["request"]["series"]
    score = SeriesScore(
        SeriesRule(request["best_of"], request["first_to"]), view["player_a"], view["player_b"]
    )
    for game in view["games"]:
        if not game["counted"]:
            continue
        assert not score.decided, "a game was counted after the series was decided"
        assert game["score_before"] == score.text
        winner = game["result"]["winner"]
        score.add(None if winner is None else game[winner])
    return score


async def check_records(a: Arena, view: Json) -> None:
    """Sides alternate, and each record's tags say the series and the score before it."""
    for game in view["games"]:
        expected_x = view["player_a"] if game["number"] % 2 == 1 else view["player_b"]
        assert game["x"] == expected_x and {game["x"], game["o"]} == {
            view["player_a"],
            view["player_b"],
        }
        status, data = await a.get(game["links"]["record"])
        assert status == 200, data
        record = GameRecord.model_validate(data)
        assert record.player_x.name == game["x"] and record.player_o.name == game["o"]
        assert record.tags["Series"] == view["series_id"]
        assert record.tags["SeriesScore"] == game["score_before"]
        assert record.tags["SeriesRule"] == view["rule"]
        assert record.tags["game"] == str(game["number"])


async def test_a_best_of_series_ends_as_soon_as_it_is_decided(tmp_path: Path) -> None:
    async with arena(tmp_path / "s.sqlite") as a:
        series_id = await create(
            a,
            {
                "name": "bo5",
                "player_a": player(a, "threat"),
                "player_b": player(a, "random"),
                "best_of": 5,
                "openings": "none",
            },
        )
        view = await series_finished(a, series_id)
        assert view["status"] == "finished", view["reason"]
        assert view["rule"] == "best of 5" and view["best_of"] == 5 and view["first_to"] is None
        score = replay(view)
        assert score.decided and view["score"]["decided"]
        assert view["score"]["winner"] == score.winner and score.winner is not None
        assert view["score"]["text"] == score.text
        assert max(score.points_a, score.points_b) > 2.5  # a majority of 5
        assert len(view["games"]) == score.games <= 5
        assert all(game["counted"] for game in view["games"])
        assert view["reason"].startswith(f"{score.winner} wins the series, {score.text}")
        await check_records(a, view)

        status, page = await a.get("/series")
        assert status == 200
        [summary] = page["series"]
        assert summary["series_id"] == series_id and summary["score"]["text"] == score.text
        # A series is a tournament too, with its score next to the standings.
        status, tournament = await a.get(f"/tournaments/{series_id}")
        assert status == 200 and tournament["series"]["text"] == score.text
        assert tournament["games_total"] == 5


async def test_a_first_to_series_plays_until_a_bot_has_k_points(tmp_path: Path) -> None:
    async with arena(tmp_path / "s.sqlite") as a:
        series_id = await create(
            a,
            {
                "player_a": player(a, "random"),
                "player_b": player(a, "threat"),
                "first_to": 2,
                "openings": "default",
            },
        )
        view = await series_finished(a, series_id)
        assert view["status"] == "finished", view["reason"]
        score = replay(view)
        assert score.decided and max(score.points_a, score.points_b) >= 2
        assert len(view["games"]) == score.games <= 4
        await check_records(a, view)
        # Games 1 and 2 play one opening with sides swapped, as a tournament's pair.
        async with await GameStore.open(a.db_url) as store:
            records = [await store.get_game(game["game_id"]) for game in view["games"][:2]]
        assert all(r is not None for r in records)
        openings = [r.tags.get("opening") for r in records if r is not None]
        if len(openings) == 2:
            assert openings[0] == openings[1] is not None


async def test_a_series_stops_and_resumes_counting_every_game_once(tmp_path: Path) -> None:
    async with arena(tmp_path / "s.sqlite") as a:
        series_id = await create(
            a,
            {
                "player_a": player(a, "random"),
                "player_b": player(a, "random2", "random"),
                "best_of": 3,
                "openings": "none",
                "match": {"turn_limit": 300},
            },
        )
        await a.until(series_id, lambda view: bool(view["live_games"]))
        status, view = await a.post_as_creator(f"/series/{series_id}/stop")
        assert status == 200 and view["status"] == "stopped", view
        assert view["games_running"] == 0
        assert (await a.post_as_creator(f"/series/{series_id}/stop"))[0] == 409
        status, view = await a.post_as_creator(f"/series/{series_id}/resume")
        assert status == 200 and view["status"] == "running", view
        view = await series_finished(a, series_id)
        assert view["status"] == "finished", view["reason"]
        score = replay(view)
        assert score.decided and [g["number"] for g in view["games"]] == list(
            range(1, score.games + 1)
        )
        assert (await a.post_as_creator(f"/series/{series_id}/resume"))[0] == 409


async def test_the_answer_to_resume_has_the_score_so_far(tmp_path: Path) -> None:
    async with arena(tmp_path / "s.sqlite") as a:
        series_id = await create(
            a,
            {
                "player_a": player(a, "threat"),
                "player_b": player(a, "random"),
                "best_of": 201,  # threat wins every game: long enough to stop it midway
                "openings": "none",
            },
        )
        await a.until(series_id, lambda view: view["series"]["games"] >= 2)
        status, stopped = await a.post_as_creator(f"/series/{series_id}/stop")
        assert status == 200 and stopped["status"] == "stopped", stopped
        status, resumed = await a.post_as_creator(f"/series/{series_id}/resume")
        assert status == 200 and resumed["status"] == "running", resumed
        # Not 0-0 until the run has read the store: the score it stopped at, at least.
        assert resumed["score"]["games"] >= stopped["score"]["games"] >= 2
        assert resumed["score"]["points_a"] >= stopped["score"]["points_a"] >= 1
        await a.post_as_creator(f"/series/{series_id}/stop")


async def test_a_series_cut_short_by_a_restart_resumes_by_itself(tmp_path: Path) -> None:
    db, port = tmp_path / "s.sqlite", free_port()
    async with arena(db, port) as a:
        series_id = await create(
            a,
            {
                "player_a": player(a, "r1", "random"),
                "player_b": player(a, "r2", "random"),
                "best_of": 3,
                "openings": "none",
                "match": {"turn_limit": 300},
            },
        )
        # Random bots take hundreds of moves: the game seen live is cut short.
        view = await a.until(series_id, lambda view: bool(view["live_games"]))
        cut_short = view["live_games"][0]
    async with arena(db, port) as a:  # the first server stopped mid-series
        view = await series_finished(a, series_id)
        assert view["status"] == "finished", view["reason"]
        score = replay(view)
        assert score.decided
        assert [g["number"] for g in view["games"]] == list(range(1, score.games + 1))
        assert cut_short not in {g["game_id"] for g in view["games"]}
        async with await GameStore.open(a.db_url) as store:
            aborted = await store.list_games(status=RecordStatus.ABORTED, limit=100)
            record = await store.get_game(cut_short)
        # The game cut short stays in the records, aborted; it was played again.
        assert [g.game_id for g in aborted.items] == [cut_short]
        assert record is not None and record.tags["Series"] == series_id
        await check_records(a, view)


async def test_without_resume_series_an_interrupted_series_waits_for_resume(
    tmp_path: Path,
) -> None:
    db, port = tmp_path / "s.sqlite", free_port()
    body: Json = {"best_of": 3, "openings": "none", "match": {"turn_limit": 300}}
    async with arena(db, port) as a:
        series_id = await create(
            a,
            {**body, "player_a": player(a, "r1", "random"), "player_b": player(a, "r2", "random")},
        )
        await a.until(series_id, lambda view: bool(view["live_games"]))
        tokens = a.tokens
    # As htttx-tournament runs its server: it resumes what it is asked to itself.
    async with arena(db, port, resume_series=False) as a:
        a.tokens.update(tokens)
        status, view = await a.get(f"/series/{series_id}")
        assert status == 200 and view["status"] == "interrupted", view
        status, view = await a.post_as_creator(f"/series/{series_id}/resume")
        assert status == 200 and view["status"] == "running", view
        view = await series_finished(a, series_id)
        assert view["status"] == "finished" and replay(view).decided


async def test_spectators_see_the_series_score_in_their_setup(tmp_path: Path) -> None:
    async with arena(tmp_path / "s.sqlite") as a:
        series_id = await create(
            a,
            {
                "player_a": player(a, "r1", "random"),
                "player_b": player(a, "r2", "random"),
                "best_of": 3,
                "openings": "none",
                "match": {"turn_limit": 300},
            },
        )
        # Random bots take hundreds of moves: a game is still live when it is seen.
        view = await a.until(series_id, lambda view: bool(view["live_games"]))
        game_id = view["live_games"][0]
        ws_url = "ws" + a.base[4:] + f"/spectate/{game_id}"
        async with a.http.ws_connect(ws_url) as ws:
            setup = json.loads((await ws.receive()).data)
        assert setup["type"] == "setup"
        assert setup["tags"]["Series"] == series_id
        assert setup["tags"]["SeriesScore"] == "r1 0-0 r2"
        assert setup["tags"]["SeriesRule"] == "best of 3"
        await a.post_as_creator(f"/series/{series_id}/stop")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({}, "give exactly one of best_of and first_to"),
        ({"best_of": 3, "first_to": 2}, "give exactly one of best_of and first_to"),
        ({"best_of": 0}, "best_of: expected at least 1"),
        ({"best_of": 3, "player_a": {"name": "me", "type": "human"}}, "bots only"),
        ({"best_of": 3, "rated": True}, "'threat' is not a registered bot"),
        ({"best_of": 3, "rated": 1}, "rated: expected true or false, got 1"),
        ({"best_of": 3, "colour": "red"}, "colour: extra inputs are not permitted"),
        ({"best_of": 3, "player_b": "dup"}, "names must be unique"),
        ({"best_of": 3, "player_b": "closed"}, "'nobody'"),
    ],
)
async def test_a_bad_series_gets_one_clear_422(tmp_path: Path, change: Json, message: str) -> None:
    async with arena(tmp_path / "s.sqlite") as a:
        body: Json = {"player_a": player(a, "threat"), "player_b": player(a, "random"), **change}
        if change.get("player_b") == "dup":
            body["player_b"] = player(a, "threat", "random")
        elif change.get("player_b") == "closed":
            body["player_b"] = {"name": "nobody", "bot_url": f"http://127.0.0.1:{free_port()}"}
        status, answer = await a.post("/series", body)
        assert status == 422, answer
        assert message in answer["detail"], answer
        status, page = await a.get("/series")
        assert page["series"] == []  # nothing stored for a refused request


async def register(a: Arena, name: str, hosted: str) -> None:
    body = {"name": name, "url": f"{a.base}/bots/{hosted}", "ladder": False}
    status, answer = await a.post("/bots", body)
    assert status == 201, answer


async def test_a_rated_series_counts_each_game_once_for_the_ratings(tmp_path: Path) -> None:
    async with arena(tmp_path / "s.sqlite") as a:
        await register(a, "Hexa", "threat")
        await register(a, "Rando", "random")
        body: Json = {
            "player_a": player(a, "Hexa", "threat"),
            "player_b": player(a, "Rando", "random"),
            "first_to": 3,
            "openings": "none",
            "rated": True,
        }
        series_id = await create(a, body)
        view = await series_finished(a, series_id)
        assert view["status"] == "finished" and view["rated"], view["reason"]
        score = replay(view)
        status, hexa = await a.get("/bots/Hexa")
        assert status == 200, hexa
        status, rando = await a.get("/bots/Rando")
        assert hexa["games"] == rando["games"] == score.games
        assert (hexa["wins"], rando["wins"]) == (
            sum(
                1
                for g in view["games"]
                if g["result"]["winner"] and g[g["result"]["winner"]] == "Hexa"
            ),
            sum(
                1
                for g in view["games"]
                if g["result"]["winner"] and g[g["result"]["winner"]] == "Rando"
            ),
        )
        assert hexa["rating"] > rando["rating"] or score.winner != "Hexa"
        status, board = await a.get("/leaderboard?kind=bot")
        assert status == 200
        assert {entry["name"] for entry in board["entries"]} == {"Hexa", "Rando"}

        # A rating belongs to the bot registered under its name, at its URL.
        wrong_url = {**body, "player_b": player(a, "Rando", "center")}
        status, answer = await a.post("/series", wrong_url)
        assert status == 422 and "'Rando' is registered at" in answer["detail"], answer
        one_player = {**body, "player_b": player(a, "hexa", "threat")}
        status, answer = await a.post("/series", one_player)
        assert status == 422 and "one player's name" in answer["detail"], answer
        # An unrated series between them changes no rating.
        unrated = await create(a, {**body, "rated": False})
        await series_finished(a, unrated)
        assert (await a.get("/bots/Hexa"))[1]["games"] == score.games


async def test_a_void_game_or_one_stored_after_the_decision_changes_no_score(
    tmp_path: Path,
) -> None:
    a_wins: Json = {"winner": "a", "failures": {}}
    nobody_came: Json = {"winner": None, "failures": {"a": "no_show", "b": "no_show"}, "void": True}
    # Won 3-0 at game 4 (game 3 void); game 5 ended once it was decided, as the store
    # can hold one (an SPRT's tournament does): listed, not counted.
    outcomes = [a_wins, a_wins, nobody_came, a_wins, {"winner": "b", "failures": {}}]
    view = await stored_series_view(tmp_path, {"best_of": 5}, outcomes, series_status="stopped")
    assert view["score"]["text"] == "a 3-0 b" and view["score"]["decided"]
    games = view["games"]
    assert [g["counted"] for g in games] == [True, True, True, True, False]
    assert [g["score_before"] for g in games] == [
        "a 0-0 b",
        "a 1-0 b",
        "a 2-0 b",
        "a 2-0 b",  # the void game was no draw
        "a 3-0 b",
    ]


async def stored_series_view(
    tmp_path: Path, rule: Json, outcomes: list[Json], *, series_status: str = "finished"
) -> Json:
    """``GET /series/s1`` of a series stored with these games' outcomes (and ``series_status``),
    on a real server."""
    db = tmp_path / "s.sqlite"
    series = SeriesRequest.model_validate(
        {
            "player_a": {"name": "a", "bot_url": "http://127.0.0.1:1"},
            "player_b": {"name": "b", "bot_url": "http://127.0.0.1:2"},
            "openings": "none",
            **rule,
        }
    ).tournament()
    async with await GameStore.open(f"sqlite+aiosqlite:///{db}") as store:
        await store.series.create(
            "s1",
            name="stored",
            request_json=series.model_dump_json(),
            games_total=series.games,
            created_at=datetime.now(UTC),
        )
        for idx, outcome in enumerate(outcomes):
            await store.tournaments.start_game("s1", idx, f"g{idx}")
            assert await store.tournaments.finish_game("s1", idx, {**outcome, "game_id": f"g{idx}"})
        await store.tournaments.set_status("s1", series_status, reason="stored")
    async with arena(db) as arena_:
        status, view = await arena_.get("/series/s1")
    assert status == 200, view
    return dict(view)


NOBODY_CAME: Json = {"winner": None, "failures": {"a": "no_show", "b": "no_show"}, "void": True}


async def test_a_void_game_is_one_of_the_series_games_so_the_schedule_decides_it(
    tmp_path: Path,
) -> None:
    # Best of 2 has a schedule of 2 games: one void and one won leave no game to play.
    # Counting only the played game, the series ended "undecided" with its schedule done.
    view = await stored_series_view(
        tmp_path, {"best_of": 2}, [NOBODY_CAME, {"winner": "a", "failures": {}}]
    )
    score = view["score"]
    assert score["decided"] and score["winner"] == "a" and score["text"] == "a 1-0 b", score
    assert [g["counted"] for g in view["games"]] == [True, True]


async def test_best_of_n_with_a_void_game_is_decided_once_the_lead_cannot_be_caught(
    tmp_path: Path,
) -> None:
    # Best of 4, game 1 void, a won games 2 and 3: one game left, a is 2 ahead. The old
    # rule (more than N/2 points) waited for a third point and counted game 4.
    b_wins: Json = {"winner": "b", "failures": {}}
    a_wins: Json = {"winner": "a", "failures": {}}
    view = await stored_series_view(tmp_path, {"best_of": 4}, [NOBODY_CAME, a_wins, a_wins, b_wins])
    score = view["score"]
    assert score["decided"] and score["winner"] == "a" and score["text"] == "a 2-0 b", score
    assert [g["counted"] for g in view["games"]] == [True, True, True, False]


async def test_tournaments_are_not_series_and_unknown_series_are_404(tmp_path: Path) -> None:
    async with arena(tmp_path / "s.sqlite") as a:
        tournament_id = await a.create(
            {"bots": [a.bot("threat"), a.bot("random")], "rounds": 1, "openings": "none"}
        )
        await a.finished(tournament_id)
        for path in (f"/series/{tournament_id}", "/series/nope"):
            assert (await a.get(path))[0] == 404
        assert (await a.post("/series/nope/stop"))[0] == 404
        assert (await a.post_as_creator(f"/series/{tournament_id}/resume"))[0] == 404
        assert (await a.get("/series"))[1] == {"series": []}


async def test_series_changes_need_the_api_token(tmp_path: Path) -> None:
    async with arena(tmp_path / "s.sqlite", api_token="s3cret") as a:
        body = {"player_a": player(a, "threat"), "player_b": player(a, "random"), "best_of": 1}
        assert (await a.post("/series", body))[0] == 401
        assert (await a.post("/series/x/stop"))[0] == 401
        assert (await a.get("/series"))[0] == 200


async def test_on_postgresql_a_series_plays_to_its_decision(
    postgres_cluster: PostgresCluster,
) -> None:
    db_url = postgres_cluster.new_database()
    async with arena(db_url) as a:
        series_id = await create(
            a,
            {
                "player_a": player(a, "threat"),
                "player_b": player(a, "random"),
                "first_to": 2,
                "openings": "none",
            },
        )
        view = await series_finished(a, series_id)
        assert view["status"] == "finished" and replay(view).decided
        assert [s["series_id"] for s in (await a.get("/series"))[1]["series"]] == [series_id]

"""The query of a REST request (``game.route_query``): every route of the API, whatever
its method, refuses a parameter it does not take with a 422 that names it, the routes
that take none included; the web page's paths leave theirs to the page, the WebSockets
read theirs. Over real sockets, as in tests/test_server.py."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.routing import Route

from game.web_routes import web_routes
from tests.test_server import Arena, Json, arena, receive_type

#: The API's GET routes that take no query parameter at all.
TAKING_NONE = {
    "/health",
    "/openapi.json",
    "/docs",
    "/bots",
    "/bots/{name}",
    "/ladder",
    "/tournaments/{tournament_id}",
    "/series/{series_id}",
    "/cluster/games/{game_id}/setup",
}
#: The API's routes that change something: all take no query parameter but
#: ``DELETE /challenges/{challenge_id}`` (the creator's ``token``).
CHANGING = {
    ("POST", "/game/new"),
    ("POST", "/bots"),
    ("PATCH", "/bots/{name}"),
    ("DELETE", "/bots/{name}"),
    ("POST", "/tournaments"),
    ("POST", "/tournaments/{tournament_id}/stop"),
    ("POST", "/tournaments/{tournament_id}/resume"),
    ("POST", "/series"),
    ("POST", "/series/{series_id}/stop"),
    ("POST", "/series/{series_id}/resume"),
    ("POST", "/challenges"),
    ("POST", "/challenges/{challenge_id}/accept"),
    ("DELETE", "/challenges/{challenge_id}"),
    ("POST", "/ladder/pause"),
    ("POST", "/ladder/resume"),
}


async def post_json(a: Arena, path: str, body: Json) -> tuple[int, Json]:
    async with a.http.post(a.base + path, json=body) as response:
        return response.status, await response.json()


async def test_games_refuses_a_query_parameter_it_does_not_take_rather_than_loop(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path, host_example_bots=False) as a:
        for _ in range(3):
            await a.new_game({"player_x": {"type": "human"}, "player_o": {"type": "human"}})
        _, first = await a.get_json("/games?limit=2")
        # ?before= is no page 2: it was ignored, answering page 1 and its cursor again.
        before = await a.get_json(f"/games?limit=2&before={first['next_cursor']}")
        offset = await a.get_json("/games?offset=5")
        _, second = await a.get_json(f"/games?limit=2&cursor={first['next_cursor']}")
        _, document = await a.get_json("/openapi.json")
    takes = "this route takes status, player, bot_url, limit, cursor"
    assert before == (422, {"detail": f"before: unknown query parameter; {takes}"})
    assert offset == (422, {"detail": f"offset: unknown query parameter; {takes}"})
    assert len(second["items"]) == 1 and second["next_cursor"] is None
    # The schema names the parameter that pages: a client following it gets page 2.
    page = " ".join(document["components"]["schemas"]["GamePage"]["description"].split())
    parameters = [p["name"] for p in document["paths"]["/games"]["get"]["parameters"]]
    assert "as ``cursor``" in page and "before" not in page and "cursor" in parameters


async def test_every_list_route_refuses_a_query_parameter_it_does_not_take(
    tmp_path: Path,
) -> None:
    async with arena(tmp_path, host_example_bots=False) as a:
        answers = {
            path: await a.get_json(f"{path}?limit=1&sort=name")
            for path in (
                "/tournaments",
                "/tournaments/nope/games",
                "/series",
                "/leaderboard",
                "/bots/nobody/ratings",
            )
        }
    takes = {
        "/tournaments": "limit",
        "/tournaments/nope/games": "offset, limit",
        "/series": "limit",
        "/leaderboard": "kind, limit",
        "/bots/nobody/ratings": "limit",
    }
    assert answers == {
        path: (422, {"detail": f"sort: unknown query parameter; this route takes {names}"})
        for path, names in takes.items()
    }


async def test_a_misspelt_query_parameter_is_refused_not_ignored(tmp_path: Path) -> None:
    # ?wiat=60 once answered at once, as if no wait had been asked for.
    async with arena(tmp_path, host_example_bots=False) as a:
        answers = {
            path: await a.get_json(path)
            for path in (
                "/games/nope?wiat=60",
                "/games/nope/notation?downlaod=1",
                "/challenges/nope?tokn=t",
                "/cluster?game=1",
            )
        }
    assert answers == {
        "/games/nope?wiat=60": (
            422,
            {"detail": "wiat: unknown query parameter; this route takes wait"},
        ),
        "/games/nope/notation?downlaod=1": (
            422,
            {"detail": "downlaod: unknown query parameter; this route takes download"},
        ),
        "/challenges/nope?tokn=t": (
            422,
            {"detail": "tokn: unknown query parameter; this route takes token"},
        ),
        "/cluster?game=1": (
            422,
            {"detail": "game: unknown query parameter; this route takes games"},
        ),
    }


async def test_a_route_that_takes_no_query_parameter_refuses_one(tmp_path: Path) -> None:
    async with arena(tmp_path, host_example_bots=False) as a:
        plain = await a.get_json("/health")
        refused = await a.get_json("/health?foo=1")
    assert plain[0] == 200
    assert refused == (422, {"detail": "foo: unknown query parameter; this route takes none"})


async def test_every_route_of_the_api_refuses_a_query_parameter_it_does_not_take(
    tmp_path: Path,
) -> None:
    # The app's own route table, so a route added later is checked too; an API token, so
    # the query is seen to be refused before a missing token is.
    page_paths = {route.path for route in web_routes() if isinstance(route, Route)}
    async with arena(tmp_path, host_example_bots=False, api_token="s3cret") as a:
        operations = [
            (method, route.path)
            for route in a.server.app.routes
            if isinstance(route, Route) and route.path not in page_paths
            for method in sorted(route.methods or ())
            if method != "HEAD"
        ]
        answers = {}
        for method, path in operations:
            url = a.base + re.sub(r"\{[^}]+\}", "nope", path) + "?foo=1"
            async with a.http.request(method, url) as response:
                answers[method, path] = response.status, await response.json()
    assert {path for method, path in answers if method == "GET"} >= TAKING_NONE
    assert {operation for operation in answers if operation[0] != "GET"} >= CHANGING
    for (method, path), (status, answer) in answers.items():
        assert status == 422, (method, path, status, answer)
        detail = answer["detail"]
        assert detail.startswith("foo: unknown query parameter; this route takes "), path
        takes_some = (method, path) in {("DELETE", "/challenges/{challenge_id}")} or (
            method == "GET" and path not in TAKING_NONE
        )
        assert detail.endswith(" none") != takes_some, (method, path, answer)


async def test_a_request_that_would_change_something_with_an_option_it_lacks_changes_nothing(
    tmp_path: Path,
) -> None:
    # ?wait=1 and ?dry_run=1 were ignored: the game and the tournament started all the same.
    async with arena(tmp_path) as a:
        humans = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}
        waited = await post_json(a, "/game/new?wait=1", humans)
        entrants = [{"name": n, "url": f"{a.base}/bots/{n}"} for n in ("threat", "random")]
        tried = await post_json(a, "/tournaments?dry_run=1", {"bots": entrants, "rounds": 1})
        _, games = await a.get_json("/games")
        _, tournaments = await a.get_json("/tournaments")
    takes_none = "unknown query parameter; this route takes none"
    assert waited == (422, {"detail": f"wait: {takes_none}"})
    assert tried == (422, {"detail": f"dry_run: {takes_none}"})
    assert games["items"] == [] and tournaments["tournaments"] == []


async def test_the_challenge_routes_take_a_token_only_where_they_read_one(
    tmp_path: Path,
) -> None:
    # The creator's token in the query of GET and DELETE; the accepter's in the body.
    async with arena(tmp_path, host_example_bots=False) as a:
        status, opened = await post_json(a, "/challenges", {"name": "ann"})
        assert status == 201, opened
        ann, challenge = opened["player_token"], f"/challenges/{opened['challenge_id']}"
        seen = await a.get_json(f"{challenge}?token={ann}")
        accepted = await post_json(a, f"{challenge}/accept?token={ann}", {"name": "bob"})
        async with a.http.delete(f"{a.base}{challenge}?token={ann}") as response:
            cancelled = response.status, await response.json()
    assert seen[0] == 200 and seen[1]["status"] == "open"
    assert accepted == (
        422,
        {"detail": "token: unknown query parameter; this route takes none"},
    )
    assert cancelled[0] == 200 and cancelled[1]["status"] == "cancelled"


async def test_the_web_page_s_paths_leave_their_query_to_the_page(tmp_path: Path) -> None:
    # /web/games keeps its filters in the address, for the page's script to read.
    async with arena(tmp_path, host_example_bots=False) as a:
        for path in ("/web/games?status=finished&player=ann", "/g/nope?t=1", "/static/app.js?v=2"):
            async with a.http.get(a.base + path) as response:
                assert response.status == 200, path


async def test_the_sockets_read_their_own_parameters_and_leave_others(tmp_path: Path) -> None:
    # Not in scope: a socket has no 422 to answer, and closes only on a bad value of its own.
    async with arena(tmp_path) as a:
        created = await a.new_game({"player_x": {"type": "human"}, "player_o": a.bot("center")})
        seat = f"{a.ws_base}/ws?token={created['token_x']}&foo=1"
        watch = f"{a.ws_base}/spectate/{created['game_id']}?board=0&foo=1"
        async with a.http.ws_connect(seat) as human:
            await receive_type(human, "setup")  # seated: the token was read
            async with a.http.ws_connect(watch) as spectator:
                watched = await receive_type(spectator, "setup")
    assert watched["game_id"] == created["game_id"]

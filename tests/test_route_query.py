"""The query of a REST request (``game.route_query``): every ``GET`` route of the API
refuses a parameter it does not take with a 422 that names it, the routes that take
none included; the web page's paths leave theirs to the page. Over real sockets, as in
tests/test_server.py."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.routing import Route

from game.web_routes import web_routes
from tests.test_server import arena

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


async def test_every_get_route_of_the_api_refuses_a_query_parameter_it_does_not_take(
    tmp_path: Path,
) -> None:
    # The app's own route table, so a route added later is checked too.
    page_paths = {route.path for route in web_routes() if isinstance(route, Route)}
    async with arena(tmp_path, host_example_bots=False) as a:
        api_paths = [
            route.path
            for route in a.server.app.routes
            if isinstance(route, Route)
            and "GET" in (route.methods or ())
            and route.path not in page_paths
        ]
        answers = {
            path: await a.get_json(re.sub(r"\{[^}]+\}", "nope", path) + "?foo=1")
            for path in api_paths
        }
    assert set(answers) >= TAKING_NONE
    for path, (status, answer) in answers.items():
        assert status == 422, (path, status, answer)
        assert answer["detail"].startswith("foo: unknown query parameter; this route takes "), path
        assert answer["detail"].endswith(" none") == (path in TAKING_NONE), (path, answer)


async def test_the_web_page_s_paths_leave_their_query_to_the_page(tmp_path: Path) -> None:
    # /web/games keeps its filters in the address, for the page's script to read.
    async with arena(tmp_path, host_example_bots=False) as a:
        for path in ("/web/games?status=finished&player=ann", "/g/nope?t=1", "/static/app.js?v=2"):
            async with a.http.get(a.base + path) as response:
                assert response.status == 200, path

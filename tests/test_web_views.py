"""The web page's list views in headless Chromium against a real server with real bots:
live games, the games list, bots and the pair form, tournaments and their standings."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, ViewportSize, expect
from websockets.sync.client import connect

from game.session import SessionLimits
from tests.browser import LINES_PER_CELL, PHONE, WebPage
from tests.http_json import Json, finished_record, get_json, post_json, post_ok, wait_for
from tests.ui_server import game_server, restartable_game_server

HUMANS_WITH_CLOCKS = {
    "player_x": {"type": "human", "name": "alice"},
    "player_o": {"type": "human", "name": "bob"},
    "match_config": {"clock_type": "match", "clock": 300.0},
}


def leave(page: Page) -> None:
    """Leave a game page, or a list that refreshes itself, before its server stops: it
    would try to reconnect or poll (and the browser logs each refused attempt as a
    console error)."""
    page.goto("about:blank")


def bots_game(url: str, x: str = "center", o: str = "random") -> dict[str, Any]:
    return {
        "player_x": {"type": "bot", "bot_url": f"{url}/bots/{x}"},
        "player_o": {"type": "bot", "bot_url": f"{url}/bots/{o}"},
    }


def finished_game(url: str, body: dict[str, Any]) -> str:
    game_id = str(post_ok(url + "/game/new", body)["game_id"])
    finished_record(url, game_id)
    return game_id


def test_live_lists_running_games_by_itself_and_opens_one(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        page.goto(url + "/")
        expect(page.locator("main")).to_contain_text("No game is being played")
        expect(page.locator("#recent-games tbody tr")).to_have_count(0)
        expect(page.locator("main")).to_contain_text("No game has finished yet.")
        # A game created after the page loaded shows up without a reload.
        _, created = post_json(url + "/game/new", HUMANS_WITH_CLOCKS)
        card = page.locator(f'#live-games [data-game-id="{created["game_id"]}"]')
        expect(card).to_contain_text("alice")
        expect(card).to_contain_text("bob")
        expect(card).to_contain_text("move 0")
        expect(card.locator(".clock").first).to_have_text("5:00")
        card.click()
        expect(page).to_have_url(f"{url}/g/{created['game_id']}")
        leave(page)


#: How often the Live page polls GET /games, in ms (live.js's POLL_MS).
LIVE_POLL_MS = 2000


def test_live_says_no_game_is_played_as_soon_as_a_failed_poll_recovers(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    web_page.allowed_errors.append(re.compile(r"ERR_CONNECTION_REFUSED"))
    status = page.locator("main [role=status]")
    alert = page.get_by_role("alert")
    page.clock.install()
    with restartable_game_server(tmp_path) as server:
        page.goto(server.url + "/")
        expect(status).to_contain_text("No game is being played")
        # The page's clock stands still from here: it polls when the test moves it on,
        # so what the poll after the failed one shows stays until the test looks.
        page.clock.pause_at(page.evaluate("Date.now()") + 100)
        server.stop()
        page.clock.run_for(LIVE_POLL_MS)
        expect(alert).to_contain_text("the server cannot be reached")
        server.start()
        page.clock.run_for(LIVE_POLL_MS)
        expect(alert).to_have_count(0)
        expect(status).to_contain_text("No game is being played")
        leave(page)


def test_live_shows_the_games_that_just_finished(web_page: WebPage, tmp_path: Path) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        game_id = finished_game(url, bots_game(url))
        _, record = get_json(f"{url}/games/{game_id}")
        page.goto(url + "/")
        row = page.locator("#recent-games tbody tr")
        expect(row).to_have_count(1)
        expect(page.locator("main")).not_to_contain_text("No game has finished yet.")
        expect(row).to_contain_text(str(len(record["moves"])))
        expect(row).to_contain_text("wins" if record["result"]["winner"] else "draw")


def test_a_result_reads_alike_everywhere_with_its_reason_and_the_sides_as_x_and_o(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path, limits=SessionLimits(no_show_s=0.5)) as url:
        # X never comes: O wins by no-show, "x forfeits: x did not connect within 0.5 s".
        absent_x = {**bots_game(url), "player_x": {"type": "human", "name": "alice"}}
        game_id = finished_game(url, absent_x)
        page.goto(url + "/")
        expect(page.locator("#recent-games tbody tr")).to_contain_text("O wins by no-show")
        page.goto(url + "/web/games")
        expect(page.locator(f'#games tr[data-game-id="{game_id}"]')).to_contain_text(
            "O wins by no-show"
        )
        page.goto(f"{url}/g/{game_id}")
        expect(page.locator(".result")).to_have_text(
            "O wins by no-show — X forfeits: X did not connect within 0.5 s"
        )


def test_the_games_list_filters_by_status_and_pages_with_the_cursor(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        finished = [finished_game(url, bots_game(url)) for _ in range(3)]
        _, running = post_json(url + "/game/new", HUMANS_WITH_CLOCKS)
        page.goto(url + "/web/games?limit=2")
        ids = page.locator("#games tbody tr")
        expect(ids).to_have_count(2)
        assert ids.nth(0).get_attribute("data-game-id") == running["game_id"]
        page.get_by_role("button", name="Older →").click()
        expect(ids).to_have_count(2)
        assert [ids.nth(i).get_attribute("data-game-id") for i in range(2)] == finished[1::-1]
        page.get_by_role("button", name="← Newer").click()
        expect(ids.nth(0)).to_have_attribute("data-game-id", running["game_id"])
        page.get_by_label("Status").select_option("finished")
        expect(page).to_have_url(re.compile(r"status=finished"))
        expect(ids).to_have_count(2)
        assert ids.nth(0).get_attribute("data-game-id") == finished[2]
        leave(page)


def test_the_bots_page_lists_hosted_bots_and_pairs_two_of_them(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        page.goto(url + "/web/bots")
        rows = page.locator("#bots tbody tr")
        expect(rows).to_have_count(4)
        for name in ("random", "center", "threat", "search"):
            expect(page.locator(f'#bots tr[data-url="{url}/bots/{name}"]')).to_have_count(1)
        page.get_by_label("X bot", exact=True).select_option(f"{url}/bots/threat")
        page.get_by_label("O bot", exact=True).select_option(f"{url}/bots/center")
        page.get_by_label("Name of the game").fill("from the page")
        page.get_by_role("button", name="Start the game").click()
        page.wait_for_url(re.compile(r"/g/[^/]+$"))
        game_id = page.url.rsplit("/", 1)[-1]
        leave(page)
        status, record = get_json(f"{url}/games/{game_id}")
    assert status == 200 and record["name"] == "from the page"
    assert record["player_x"]["bot_url"] == f"{url}/bots/threat"
    assert record["player_o"]["bot_url"] == f"{url}/bots/center"


def test_a_hosted_bots_games_are_its_own_not_its_namesakes(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        threat = f"{url}/bots/threat"
        own = finished_game(url, bots_game(url, "threat", "random"))
        # CenterBot in a seat named ThreatBot: ThreatBot's name, not ThreatBot.
        namesake = bots_game(url, "center", "random")
        namesake["player_x"]["name"] = "ThreatBot"
        other = finished_game(url, namesake)
        page.goto(url + "/web/bots")
        row = page.locator(f'#bots tr[data-url="{threat}"]')
        expect(row.locator("td.num")).to_have_text("1")
        expect(page.locator(f'#bots tr[data-url="{url}/bots/search"] td.num')).to_have_text("0")
        row.get_by_role("link", name="games").click()
        expect(page).to_have_url(re.compile(r"bot_url="))
        rows = page.locator("#games tbody tr")
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-game-id", own)
        expect(page.locator("#bot-filter")).to_contain_text(threat)
        page.locator("#bot-filter").get_by_role("link", name="any bot").click()
        expect(rows).to_have_count(2)
        expect(rows.first).to_have_attribute("data-game-id", other)
        leave(page)


def test_the_pair_form_asks_for_the_api_token_when_the_server_has_one(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    web_page.allowed_errors.append(re.compile(r"status of 401"))
    with game_server(tmp_path, api_token="s3cret") as url:
        page.goto(url + "/web/bots")
        page.get_by_role("button", name="Start the game").click()
        expect(page.get_by_role("alert")).to_contain_text("an API token is required")
        page.get_by_label("API token").fill("s3cret")
        page.get_by_role("button", name="Start the game").click()
        page.wait_for_url(re.compile(r"/g/[^/]+$"))
        leave(page)


def test_a_bot_url_that_cannot_be_seated_is_refused_with_the_servers_reason(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    web_page.allowed_errors.append(re.compile(r"status of 422"))
    with game_server(tmp_path) as url:
        page.goto(url + "/web/bots")
        page.get_by_label("X bot", exact=True).select_option("")
        page.get_by_label("X bot URL").fill(url + "/no-bot-here")
        page.get_by_role("button", name="Start the game").click()
        expect(page.get_by_role("alert")).to_contain_text("/no-bot-here")
        assert page.url == url + "/web/bots"


def test_tournaments_show_standings_sprt_and_a_link_to_every_game(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        status, created = post_json(
            url + "/tournaments",
            {
                "name": "web rr",
                "bots": [
                    {"name": "threat", "url": url + "/bots/threat"},
                    {"name": "random", "url": url + "/bots/random"},
                ],
                "rounds": 2,
                "openings": "none",
                "match": {"turn_limit": 40},
                "sprt": {"elo0": 0, "elo1": 10},
            },
        )
        assert status == 201, created
        tournament_id = created["tournament_id"]
        view = wait_for(
            lambda: (
                (v := get_json(f"{url}/tournaments/{tournament_id}")[1])["status"] != "running"
                and v
            )
        )
        page.goto(url + "/web/tournaments")
        listed = page.locator(f'#tournaments tr[data-tournament-id="{tournament_id}"]')
        expect(listed).to_contain_text("web rr")
        listed.click()
        expect(page).to_have_url(f"{url}/t/{tournament_id}")
        standings = page.locator("#standings tbody tr")
        expect(standings).to_have_count(2)
        expect(standings.first).to_contain_text(view["standings"][0]["name"])
        expect(page.locator("#sprt")).to_have_attribute("data-decision", view["sprt"]["decision"])
        games = page.locator("#tournament-games tbody tr")
        expect(games).to_have_count(view["games_done"])
        first = games.first.get_attribute("data-game-id")
        games.first.locator("a").click()
        expect(page).to_have_url(f"{url}/g/{first}")
        leave(page)


def test_the_games_list_filters_by_player(web_page: WebPage, tmp_path: Path) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        _, alices = post_json(url + "/game/new", HUMANS_WITH_CLOCKS)
        others = finished_game(url, bots_game(url))
        page.goto(url + "/web/games")
        rows = page.locator("#games tbody tr")
        expect(rows).to_have_count(2)
        page.get_by_label("Player").fill("Alice")  # names match whatever their case
        page.get_by_role("button", name="Filter").click()
        expect(page).to_have_url(re.compile(r"player=Alice"))
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-game-id", alices["game_id"])
        page.get_by_label("Player").fill("CenterBot")
        page.get_by_label("Player").press("Enter")
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-game-id", others)
        page.get_by_label("Player").fill("nobody")
        page.get_by_label("Player").press("Enter")
        expect(rows).to_have_count(0)
        expect(page.get_by_role("status")).to_contain_text("No game matches")
        leave(page)


def human_against_random(url: str) -> Json:
    """A game of the person "tester" (X, who has not come yet) against RandomBot."""
    o = {"type": "bot", "bot_url": f"{url}/bots/random"}
    return post_ok(
        url + "/game/new", {"player_x": {"type": "human", "name": "tester"}, "player_o": o}
    )


def resign(url: str, token: str) -> None:
    """X takes its seat with ``token`` and resigns; returns once the game is over."""
    with connect("ws" + url[4:] + f"/ws?token={token}", open_timeout=30) as ws:
        ws.send(json.dumps({"type": "resign"}))
        for message in ws:
            if json.loads(message)["type"] == "end":
                return


def test_the_games_list_shows_a_game_end_where_the_reader_is_without_a_reload(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        older, newer = human_against_random(url), human_against_random(url)
        finished_game(url, bots_game(url))  # not the player's: filtered out
        # The second page of the player's games, one a page: the older game.
        page.goto(url + "/web/games?player=tester&limit=1")
        rows = page.locator("#games tbody tr")
        expect(rows.first).to_have_attribute("data-game-id", newer["game_id"])
        page.get_by_role("button", name="Older →").click()
        expect(rows.first).to_have_attribute("data-game-id", older["game_id"])
        shown = page.url
        expect(rows.first).to_contain_text("playing")
        expect(rows.first.locator(".badge.live")).to_have_count(1)
        resign(url, older["token_x"])
        expect(rows.first).to_contain_text("O wins by resignation")
        expect(rows.first.locator(".badge.live")).to_have_count(0)
        expect(rows).to_have_count(1)
        assert page.url == shown  # the same page, filter and cursor
        expect(page.get_by_label("Player")).to_have_value("tester")
        leave(page)


#: tests.browser.PHONE as Playwright's types have it.
PHONE_SIZE: ViewportSize = {"width": PHONE["width"], "height": PHONE["height"]}


def test_on_a_phone_a_games_side_letter_stays_beside_its_players_name(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    page.set_viewport_size(PHONE_SIZE)
    with game_server(tmp_path) as url:
        for x, o in (("threat", "random"), ("random", "center")):
            finished_game(url, bots_game(url, x, o))
        page.goto(url + "/web/games")
        seats = page.locator("#games tbody td:nth-child(2), #games tbody td:nth-child(3)")
        expect(seats).to_have_count(4)
        texts = seats.all_text_contents()
        assert "X ThreatBot" in texts, texts
        lines = seats.evaluate_all(LINES_PER_CELL)
        assert set(lines) == {1}, list(zip(texts, lines, strict=True))

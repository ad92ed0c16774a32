"""A tournament's page (/t/<id>) in headless Chromium against a real server, while the
tournament runs: a bot that never moves (``tests.silent_bot``) keeps its games in flight
for as long as a test looks, the hosted bots finish theirs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser import WebPage
from tests.http_json import get_json, post_json, wait_for
from tests.silent_bot import silent_bot
from tests.ui_server import game_server

Json = dict[str, Any]


def running_tournament(url: str, silent_url: str) -> tuple[str, Json]:
    """Two rounds of threat, random and the silent bot, all 12 games at once: the games
    with the silent bot play on; threat and random's four end, the first two counted,
    round 2's two not (their pair comes after round 1's, which are not over)."""
    status, created = post_json(
        url + "/tournaments",
        {
            "name": "web running",
            "bots": [
                {"name": "threat", "url": url + "/bots/threat"},
                {"name": "random", "url": url + "/bots/random"},
                {"name": "silent", "url": silent_url},
            ],
            "rounds": 2,
            "concurrency": 12,
            "openings": "none",
            "match": {"turn_limit": 40},
        },
    )
    assert status == 201, created
    tournament_id = str(created["tournament_id"])
    view = wait_for(
        lambda: (
            (v := get_json(f"{url}/tournaments/{tournament_id}")[1])["games_done"] == 4
            and len(v["live_games"]) == 8
            and v
        )
    )
    return tournament_id, view


def test_a_running_tournament_links_to_each_of_its_games_in_flight(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with silent_bot() as silent_url, game_server(tmp_path) as url:
        tournament_id, view = running_tournament(url, silent_url)
        page.goto(f"{url}/t/{tournament_id}")
        links = page.locator("#tournament-live a")
        expect(links).to_have_count(len(view["live_games"]))
        hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
        assert hrefs == [f"/g/{game_id}" for game_id in view["live_games"]]
        expect(page.locator("#tournament-live")).not_to_contain_text("http")
        page.goto("about:blank")

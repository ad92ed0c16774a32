"""A series on the web page, in headless Chromium against a real server and its hosted
bots: the tournaments list shows its rule, the tournament page its score, a game's page
the score before it."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from tests.browser import WebPage
from tests.http_json import get_json, post_json, wait_for
from tests.ui_server import game_server


def test_a_series_shows_its_score_on_its_page_and_on_each_game(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        status, created = post_json(
            url + "/series",
            {
                "name": "web bo3",
                "player_a": {"name": "threat", "bot_url": url + "/bots/threat"},
                "player_b": {"name": "random", "bot_url": url + "/bots/random"},
                "best_of": 3,
                "openings": "none",
                "match": {"turn_limit": 40},
            },
        )
        assert status == 201, created
        series_id = created["series_id"]
        view = wait_for(
            lambda: (v := get_json(f"{url}/series/{series_id}")[1])["status"] != "running" and v
        )
        assert view["score"]["decided"], view
        page.goto(url + "/web/tournaments")
        listed = page.locator(f'#tournaments tr[data-tournament-id="{series_id}"]')
        expect(listed).to_contain_text("series, best of 3")
        listed.click()
        expect(page).to_have_url(f"{url}/t/{series_id}")
        panel = page.locator("#series")
        expect(panel).to_have_attribute("data-decided", "true")
        expect(panel).to_contain_text("best of 3")
        expect(panel).to_contain_text(view["score"]["text"])
        expect(page.locator("#tournament-status")).to_contain_text("best of 3")

        last = view["games"][-1]
        page.goto(url + last["links"]["page"])
        line = page.locator(".series-line")
        expect(line).to_contain_text(f"game {last['number']}")
        expect(line.locator(".series-score")).to_have_text(last["score_before"])
        line.locator("a").click()
        expect(page).to_have_url(f"{url}/t/{series_id}")
        # Off the page before the server stops: a poll in between would be refused.
        page.goto("about:blank")


def _series(url: str, **fields: object) -> tuple[str, str]:
    """A series of threat and random: its id and its control token."""
    status, created = post_json(
        url + "/series",
        {
            "player_a": {"name": "threat", "bot_url": url + "/bots/threat"},
            "player_b": {"name": "random", "bot_url": url + "/bots/random"},
            "openings": "none",
            **fields,
        },
    )
    assert status == 201, created
    return str(created["series_id"]), str(created["control_token"])


def test_a_series_decided_early_shows_a_full_progress_bar_in_the_list_and_on_its_page(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        series_id, _ = _series(url, best_of=3, match={"turn_limit": 40})
        view = wait_for(
            lambda: (v := get_json(f"{url}/series/{series_id}")[1])["status"] != "running" and v
        )
        assert view["status"] == "finished" and view["score"]["decided"], view
        listed = get_json(f"{url}/tournaments")[1]
        summary = next(t for t in listed["tournaments"] if t["tournament_id"] == series_id)
        done = summary["games_done"]
        assert done < summary["games_total"], summary  # decided before its last game
        page.goto(url + "/web/tournaments")
        bar = page.locator(f'#tournaments tr[data-tournament-id="{series_id}"] progress')
        expect(bar).to_have_attribute("value", str(done))
        expect(bar).to_have_attribute("max", str(done))
        # Its own page says the same: complete, not a part of its games played.
        page.goto(f"{url}/t/{series_id}")
        own_bar = page.locator("progress.wide-progress")
        expect(own_bar).to_have_attribute("value", str(done))
        expect(own_bar).to_have_attribute("max", str(done))
        expect(page.locator("#tournament-status")).to_contain_text(
            f"decided after {done} of at most {summary['games_total']} games"
        )
        page.goto("about:blank")


def test_a_stopped_series_does_not_say_it_is_playing(web_page: WebPage, tmp_path: Path) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        # Slow enough to stop undecided: a move a second at most, a long series.
        series_id, control_token = _series(url, first_to=50, match={"turn_limit": 40})
        creator = {"authorization": f"Bearer {control_token}"}
        status, _ = post_json(f"{url}/series/{series_id}/stop", {}, creator)
        assert status == 200
        wait_for(lambda: get_json(f"{url}/series/{series_id}")[1]["status"] == "stopped")
        page.goto(f"{url}/t/{series_id}")
        panel = page.locator("#series")
        expect(panel).to_have_attribute("data-decided", "false")
        expect(panel).to_contain_text("stopped")
        expect(panel).not_to_contain_text("playing")
        page.goto("about:blank")

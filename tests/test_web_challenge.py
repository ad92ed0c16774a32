"""The page of an open challenge (``/c/<id>``, ``game/webpage/challenge.js``) in
headless Chromium against a real server: what it shows, and accepting it."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from game.session import SessionLimits
from tests.browser import WebPage
from tests.http_json import get_json, post_ok
from tests.ui_server import game_server


def test_the_challenge_page_shows_it_and_the_command_that_plays_it(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        created = post_ok(url + "/challenges", {"name": "ann", "time_control": "600", "side": "x"})
        page.goto(created["url"])
        facts = page.locator("#challenge-facts")
        expect(facts).to_contain_text("ann (1500)")
        expect(facts).to_contain_text("600")
        expect(facts).to_contain_text("open")
        expect(page.locator("#challenge-command")).to_have_text(
            f"htttx-ui --open {url}/c/{created['challenge_id']}"
        )
        page.goto("about:blank")
    assert web_page.unexpected_errors() == []


def test_a_person_accepts_a_challenge_on_its_page_and_gets_a_seat(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        created = post_ok(url + "/challenges", {"name": "ann", "side": "o"})
        page.goto(created["url"])
        form = page.locator("#accept-form")
        form.get_by_label("Your name").fill("bo")
        form.get_by_role("button", name="Accept the challenge").click()
        seat = page.locator("#challenge-seat")
        expect(seat).to_contain_text("You play X against ann (1500)")
        expect(seat).to_contain_text("/ws?token=")
        status, view = get_json(f"{url}/challenges/{created['challenge_id']}")
        assert status == 200 and view["status"] == "accepted" and view["accepted_by"] == "bo"
        expect(seat.get_by_role("link", name="Watch the game")).to_have_attribute(
            "href", f"/g/{view['game_id']}"
        )
        page.goto("about:blank")
    assert web_page.unexpected_errors() == []


def test_a_challenge_page_says_when_it_is_taken(web_page: WebPage, tmp_path: Path) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        created = post_ok(url + "/challenges", {"name": "ann"})
        post_ok(f"{url}/challenges/{created['challenge_id']}/accept", {"name": "bo"})
        page.goto(created["url"])
        expect(page.locator("main")).to_contain_text("This challenge is accepted")
        expect(page.locator("#accept-form")).to_have_count(0)
        page.goto("about:blank")
    assert web_page.unexpected_errors() == []


def test_an_accepted_seat_says_the_servers_no_show_limit_and_the_facts_follow(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path, limits=SessionLimits(no_show_s=45)) as url:
        created = post_ok(url + "/challenges", {"name": "ann", "side": "o"})
        page.goto(created["url"])
        form = page.locator("#accept-form")
        form.get_by_label("Your name").fill("bo")
        form.get_by_role("button", name="Accept the challenge").click()
        expect(page.locator("#challenge-seat")).to_contain_text("within 45 s")
        facts = page.locator("#challenge-facts")
        expect(facts).to_contain_text("accepted")
        expect(facts).to_contain_text("Accepted by")
        page.goto("about:blank")
    assert web_page.unexpected_errors() == []

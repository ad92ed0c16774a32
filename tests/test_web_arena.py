"""The web page's arena views in headless Chromium against a real server: the
leaderboard (``/web/leaderboard``) and the registered bots on the bots page.

The leaderboard's ratings are seeded in the server's database before it starts (rated
games come from the ladder and the queue, which these tests do not run); bots are
registered through the page's form with the server's own hosted bots.
"""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from playwright.sync_api import ViewportSize, expect

from game.ladder import LadderSettings
from game.store import GameStore
from game.store.ratings import SideOutcome
from tests.browser import WebPage
from tests.http_json import get_ok, post_ok, wait_for
from tests.silent_bot import silent_bot
from tests.ui_server import game_server

T0 = datetime(2026, 11, 24, 20, 0, tzinfo=UTC)


async def _seed(directory: Path) -> None:
    """Three rated games: the bot Hexa beats the person Alice twice (once on time) and
    the bot Drunk once; Hexa is a registered bot."""
    async with await GameStore.open(f"sqlite+aiosqlite:///{directory / 'games.sqlite'}") as store:
        bot = {
            "url": "http://127.0.0.1:9/",
            "ladder": True,
            "status": "active",
            "registered_at": T0,
            "failures_in_row": 0,
        }
        assert await store.arena.claim("hexa", "Hexa", "bot", None, T0, bot=bot)
        games = [("g1", "Alice", "human", None), ("g2", "Alice", "human", "timeout")]
        games.append(("g3", "Drunk", "bot", None))
        for game_id, loser, kind, failure in games:
            key = loser.casefold()
            assert await store.ratings.track(game_id, ("hexa", "Hexa"), (key, loser), T0)
            hexa = SideOutcome("hexa", "Hexa", "bot", 1.0, think_ms=1200, think_moves=4)
            other = SideOutcome(key, loser, kind, 0.0, failure=failure)
            assert await store.ratings.settle(game_id, hexa, other, T0) is not None


def test_the_leaderboard_ranks_players_and_filters_by_kind(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    # On a thread of its own: Playwright's sync API runs an event loop on this one.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, _seed(tmp_path)).result()
    with game_server(tmp_path) as url:
        board = get_ok(url + "/leaderboard")["entries"]
        page.goto(url + "/")
        page.get_by_role("link", name="Leaderboard").click()
        expect(page).to_have_url(url + "/web/leaderboard")
        expect(page.get_by_role("link", name="Leaderboard")).to_have_attribute(
            "aria-current", "page"
        )
        rows = page.locator("#leaderboard tbody tr")
        expect(rows).to_have_count(3)
        for index, entry in enumerate(board):
            expect(rows.nth(index)).to_have_attribute("data-name", entry["name"])
            expect(rows.nth(index)).to_contain_text(str(entry["rating"]))
        hexa = page.locator('#leaderboard tr[data-name="Hexa"]')
        expect(hexa).to_contain_text("3 / 0 / 0")
        expect(hexa).to_contain_text("300 ms")  # 1200 ms over 4 moves
        expect(hexa).to_contain_text("active")
        alice = page.locator('#leaderboard tr[data-name="Alice"]')
        expect(alice).to_contain_text("1 timeout")  # one: not "1 timeouts"
        expect(alice).not_to_contain_text("timeouts")
        page.get_by_label("Players").select_option("human")
        expect(page).to_have_url(re.compile(r"kind=human"))
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-name", "Alice")
        page.reload()
        expect(rows).to_have_count(1)  # the filter is in the address


def test_a_bot_is_registered_from_the_bots_page(web_page: WebPage, tmp_path: Path) -> None:
    page = web_page.page
    web_page.allowed_errors.append(re.compile(r"status of 409"))
    with game_server(tmp_path) as url:
        page.goto(url + "/web/bots")
        expect(page.locator("main")).to_contain_text("No bot is registered yet")
        page.get_by_label("Bot name", exact=True).fill("Hexa")
        page.get_by_label("Bot URL", exact=True).fill(url + "/bots/threat")
        page.get_by_label("Description").fill("threats, from the page")
        page.get_by_role("button", name="Register the bot").click()
        token = page.locator("#owner-token code.token")
        expect(token).to_have_text(re.compile(r"^[A-Za-z0-9_-]{40,}$"))
        row = page.locator('#registered-bots tr[data-name="Hexa"]')
        expect(row).to_contain_text("active")
        expect(row).to_contain_text("1500")
        registered = get_ok(url + "/bots/Hexa")
        assert registered["description"] == "threats, from the page"

        # The same name again, in other letters: the server's reason.
        page.get_by_label("Bot name", exact=True).fill("HEXA")
        page.get_by_role("button", name="Register the bot").click()
        expect(page.get_by_role("alert")).to_contain_text("taken")

        page.reload()
        expect(page.locator("#registered-bots tbody tr")).to_have_count(1)
        expect(page.locator("#bots tbody tr")).to_have_count(4)  # the hosted ones
        # A registered bot can be picked for a game, by its registered name.
        picker = page.get_by_label("X bot", exact=True)
        expect(picker.locator("option", has_text="Hexa")).to_have_count(1)


def test_two_registered_bots_at_one_url_are_paired_under_their_names(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        for name in ("Hexa", "Ext"):
            post_ok(url + "/bots", {"name": name, "url": url + "/bots/threat"})
        page.goto(url + "/web/bots")
        page.get_by_label("X bot", exact=True).select_option("registered:Hexa")
        page.get_by_label("O bot", exact=True).select_option("registered:Ext")
        page.get_by_role("button", name="Start the game").click()
        page.wait_for_url(re.compile(r"/g/[^/]+$"))
        game_id = page.url.rsplit("/", 1)[-1]
        page.goto("about:blank")  # before the server stops: no reconnecting page
        record = get_ok(f"{url}/games/{game_id}")
    assert (record["player_x"]["name"], record["player_o"]["name"]) == ("Hexa", "Ext")


#: A registered bot's description as long as people write them: it takes a column's room.
DESCRIPTION = "threats first, then the longest open line, from the page"


def register_hexa(url: str) -> None:
    """Registers the server's own ThreatBot as Hexa, with a description."""
    post_ok(
        url + "/bots", {"name": "Hexa", "url": url + "/bots/threat", "description": DESCRIPTION}
    )


#: The narrowest phone the page is laid out for (tests.browser.PHONE is 390 px).
NARROW_PHONE: ViewportSize = {"width": 360, "height": 800}


def test_the_bots_page_fits_a_narrow_phone_and_scrolls_no_table_out_of_it(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    page.set_viewport_size(NARROW_PHONE)
    with game_server(tmp_path) as url:
        register_hexa(url)
        page.goto(url + "/web/bots")
        expect(page.locator('#registered-bots tr[data-name="Hexa"]')).to_be_visible()
        expect(page.locator("#bots tbody tr")).to_have_count(4)
        # A table wider than the phone scrolls in its own box; the page does not.
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= NARROW_PHONE["width"]


def test_a_registered_bots_record_stays_on_one_line(web_page: WebPage, tmp_path: Path) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        register_hexa(url)
        page.goto(url + "/web/bots")
        record = page.locator('#registered-bots tr[data-name="Hexa"] td', has_text="0 / 0 / 0")
        expect(record).to_be_visible()
        # One line box for the text "0 / 0 / 0", not one a number.
        lines = record.evaluate(
            "cell => { const range = document.createRange(); range.selectNodeContents(cell);"
            " return new Set([...range.getClientRects()].map((rect) => rect.top)).size; }"
        )
        assert lines == 1


#: A ladder whose clock a bot that never moves runs out of at once: its first game is a
#: timeout, and the ladder backs it off (30 s, the first failure's backoff).
QUICK_FLAG_LADDER = LadderSettings(concurrency=1, rate=6000, time_control="0.2+0", seed=1)


def sides_as_the_page_writes_them(detail: str) -> str:
    """api.js's detailText: a side opening the detail or a clause of it, upper case."""
    return re.sub(r"(^|: )([xo])(?= )", lambda m: m.group(1) + m.group(2).upper(), detail)


def test_a_backed_off_bots_reason_names_the_sides_x_and_o(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with silent_bot() as silent_url, game_server(tmp_path, ladder=QUICK_FLAG_LADDER) as url:
        post_ok(url + "/bots", {"name": "Mute", "url": silent_url})
        register_hexa(url)

        def mute_backoff() -> str | None:
            backoffs = get_ok(url + "/ladder")["backoffs"]
            return next((b["reason"] for b in backoffs if b["name"] == "Mute"), None)

        # "timeout: x forfeits: x ran out of time" (or o's): the server's lower case.
        reason = wait_for(mute_backoff)
        assert re.search(r": [xo] forfeits: [xo] ", reason), reason
        page.goto(url + "/web/bots")
        shown = page.locator('#registered-bots tr[data-name="Mute"]')
        expect(shown).to_contain_text(sides_as_the_page_writes_them(reason))
        expect(shown).not_to_contain_text(re.compile(r"\b[xo] forfeits"))

"""A tournament's page (/t/<id>) in headless Chromium against a real server, while the
tournament runs: a bot that never moves (``tests.silent_bot``) keeps its games in flight
for as long as a test looks, the hosted bots finish theirs."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from playwright.sync_api import ViewportSize, expect

from game.store import GameStore
from models import GameRecord, GameResult, Player, ResultReason
from tests.browser import LINES_PER_CELL, PHONE, WebPage
from tests.http_json import get_json, post_json, wait_for
from tests.silent_bot import silent_bot
from tests.ui_server import game_server, restartable_game_server
from wire.tournaments import TournamentRequest

Json = dict[str, Any]


def created_tournament(
    url: str, body: Json, ready: Callable[[Json], bool]
) -> tuple[str, Json, str]:
    """``POST /tournaments`` with ``body``, then its view once ``ready`` says so: its id,
    that view, and the control token that stops and resumes it."""
    status, created = post_json(url + "/tournaments", body)
    assert status == 201, created
    tournament_id = str(created["tournament_id"])
    view = wait_for(
        lambda: v if ready(v := get_json(f"{url}/tournaments/{tournament_id}")[1]) else None
    )
    return tournament_id, view, str(created["control_token"])


def running_tournament(url: str, silent_url: str) -> tuple[str, Json, str]:
    """Two rounds of threat, random and the silent bot, all 12 games at once: the games
    with the silent bot play on; threat and random's four end, the first two counted,
    round 2's two not (their pair comes after round 1's, which are not over). Its id,
    its view, and the control token that stops and resumes it."""
    body = {
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
    }
    return created_tournament(
        url, body, lambda v: v["games_done"] == 4 and len(v["live_games"]) == 8
    )


def test_a_running_tournament_links_to_each_of_its_games_in_flight(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with silent_bot() as silent_url, game_server(tmp_path) as url:
        tournament_id, view, _ = running_tournament(url, silent_url)
        page.goto(f"{url}/t/{tournament_id}")
        links = page.locator("#tournament-live a")
        expect(links).to_have_count(len(view["live_games"]))
        hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
        assert hrefs == [f"/g/{game_id}" for game_id in view["live_games"]]
        expect(page.locator("#tournament-live")).not_to_contain_text("http")
        page.goto("about:blank")


def finished_tournament(url: str, **fields: Any) -> tuple[str, Json]:
    """threat against random, one round (two games) unless ``fields`` say otherwise."""
    body = {
        "name": "web finished",
        "bots": [
            {"name": "threat", "url": url + "/bots/threat"},
            {"name": "random", "url": url + "/bots/random"},
        ],
        "rounds": 1,
        "openings": "none",
        "match": {"turn_limit": 40},
        **fields,
    }
    tournament_id, view, _ = created_tournament(url, body, lambda v: v["status"] != "running")
    return tournament_id, view


#: tests.browser.PHONE as Playwright's types have it.
PHONE_SIZE: ViewportSize = {"width": PHONE["width"], "height": PHONE["height"]}


def test_numbers_sit_right_aligned_and_each_on_one_line_even_on_a_phone(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        tournament_id, _ = finished_tournament(url)
        page.goto(f"{url}/t/{tournament_id}")
        numbers = page.locator("#standings td.num, #pairs td.num, #pairs th.num")
        expect(numbers.first).to_be_visible()
        aligned = numbers.evaluate_all("cells => cells.map((c) => getComputedStyle(c).textAlign)")
        assert set(aligned) == {"right"}, aligned
        headers = page.locator("#pairs th").all_text_contents()
        right = page.locator("#pairs th.num").all_text_contents()
        assert right == [h for h in headers if h in ("Games", "Elo", "nElo", "LOS", "Draws")]

        page.set_viewport_size(PHONE_SIZE)
        cells = page.locator("#standings td.num, #pairs td.num, #pairs td.record")
        expect(cells.first).to_be_visible()
        texts = cells.all_text_contents()
        lines = cells.evaluate_all(LINES_PER_CELL)
        assert lines and set(lines) == {1}, list(zip(texts, lines, strict=True))


def test_on_a_phone_a_games_side_letter_stays_beside_its_bots_name(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    page.set_viewport_size(PHONE_SIZE)
    with game_server(tmp_path) as url:
        tournament_id, _ = finished_tournament(url)
        page.goto(f"{url}/t/{tournament_id}")
        games = "#tournament-games tbody"
        seats = page.locator(f"{games} td:nth-child(3), {games} td:nth-child(4)")
        expect(seats).to_have_count(4)
        texts = seats.all_text_contents()
        assert set(texts) == {"X threat", "X random", "O threat", "O random"}, texts
        lines = seats.evaluate_all(LINES_PER_CELL)
        assert set(lines) == {1}, list(zip(texts, lines, strict=True))


def test_a_record_reads_wins_losses_draws_as_on_the_leaderboard_and_the_bots_page(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        tournament_id, view = finished_tournament(url)
        page.goto(f"{url}/t/{tournament_id}")
        standings = page.locator("#standings")
        expect(standings.locator("th")).to_have_text(
            ["#", "Bot", "Games", "W", "L", "D", "Points", "Score", "Elo", "Failures"]
        )
        for line in view["standings"]:
            cells = standings.locator("tbody tr", has_text=line["name"]).locator("td")
            for column, count in ((3, "wins"), (4, "losses"), (5, "draws")):
                expect(cells.nth(column)).to_have_text(str(line[count]))
        (pair,) = view["pairs"]
        expect(page.locator("#pairs th.record")).to_have_text("W / L / D")
        expect(page.locator("#pairs td.record").first).to_have_text(
            f"{pair['wins']} / {pair['losses']} / {pair['draws']}"
        )


def test_an_sprt_that_ran_out_of_games_says_it_ended_undecided_not_running(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        # One pair of games cannot take the LLR to a bound of ±2.94.
        tournament_id, view = finished_tournament(url, sprt={"elo0": 0, "elo1": 10})
        assert view["status"] == "finished" and view["sprt"]["decision"] == "continue", view
        page.goto(f"{url}/t/{tournament_id}")
        panel = page.locator("#sprt")
        expect(panel).to_have_attribute("data-decision", "continue")
        expect(panel).to_contain_text("no decision")
        expect(panel).not_to_contain_text("running")


def test_a_finished_game_waiting_for_the_pairs_before_it_is_not_counted_yet(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with silent_bot() as silent_url, game_server(tmp_path) as url:
        tournament_id, _, _ = running_tournament(url, silent_url)
        games = get_json(f"{url}/tournaments/{tournament_id}/games")[1]["items"]
        waiting = [g for g in games if g["status"] == "finished" and not g["counted"]]
        counted = [g for g in games if g["counted"]]
        assert len(waiting) == 2 and len(counted) == 2, games
        page.goto(f"{url}/t/{tournament_id}")
        for game in waiting:
            row = page.locator(f'#tournament-games tr[data-game-id="{game["game_id"]}"]')
            expect(row).to_contain_text("(not counted yet)")
        for game in counted:
            row = page.locator(f'#tournament-games tr[data-game-id="{game["game_id"]}"]')
            expect(row).not_to_contain_text("counted")
        page.goto("about:blank")


def test_a_table_scrolled_sideways_on_a_phone_keeps_its_place_when_the_page_refreshes(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    page.set_viewport_size(PHONE_SIZE)
    with silent_bot() as silent_url, game_server(tmp_path) as url:
        tournament_id, _, _ = running_tournament(url, silent_url)
        page.goto(f"{url}/t/{tournament_id}")
        box = page.locator(".scroll-x:has(#pairs)")
        expect(box).to_be_visible()
        width = box.evaluate("box => box.scrollWidth - box.clientWidth")
        assert width > 0  # wider than the phone: it scrolls
        box.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
        scrolled = box.evaluate("box => box.scrollLeft")
        assert scrolled > 0
        # The page is drawn again after each poll: two polls on, one was drawn since.
        view_url = f"{url}/tournaments/{tournament_id}"
        for _ in range(2):
            with page.expect_response(view_url):
                pass
        # Retried: the last poll's answer may still be on its way to being drawn.
        expect(box).to_have_js_property("scrollLeft", scrolled)
        page.goto("about:blank")


def test_elo_with_its_error_bar_reads_as_the_record_has_it_an_infinite_one_as_infinity(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        tournament_id, view = finished_tournament(url)
        (pair,) = view["pairs"]
        # ThreatBot wins both games against RandomBot: a perfect score, Elo without bound.
        assert (pair["wins"], pair["elo"], pair["elo_error"]) == (2, "Infinity", "Infinity"), pair
        page.goto(f"{url}/t/{tournament_id}")
        elo = page.locator("#pairs tbody tr td").nth(4)
        expect(elo).to_have_text("+∞ ± ∞")
        expect(page.locator("#pairs")).not_to_contain_text("Infinity")
        for line in view["standings"]:
            row = page.locator("#standings tbody tr", has_text=line["name"])
            expect(row.locator("td").nth(8)).to_have_text(
                f"{line['elo']:+.1f} ± {line['elo_error']:.1f}"
            )


def test_a_tournament_game_links_back_to_its_tournament(web_page: WebPage, tmp_path: Path) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        tournament_id, _ = finished_tournament(url)
        first = get_json(f"{url}/tournaments/{tournament_id}/games")[1]["items"][0]
        page.goto(f"{url}/g/{first['game_id']}")
        line = page.locator(".tournament-line")
        expect(line).to_have_text(f"Tournament: game {first['number']} (round {first['round']})")
        line.get_by_role("link").click()
        expect(page).to_have_url(f"{url}/t/{tournament_id}")
        expect(page.locator("#standings")).to_be_visible()
        page.goto("about:blank")


#: Only against hangs: a page that is not running polls every 10 s.
IDLE_REFRESH_TIMEOUT_MS = 60_000


def test_the_list_shows_a_tournament_started_while_none_ran(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with game_server(tmp_path) as url:
        page.goto(url + "/web/tournaments")
        expect(page.get_by_role("status")).to_contain_text("No tournament yet.")
        tournament_id, _ = finished_tournament(url)
        row = page.locator(f'#tournaments tr[data-tournament-id="{tournament_id}"]')
        expect(row).to_contain_text("web finished", timeout=IDLE_REFRESH_TIMEOUT_MS)
        page.goto("about:blank")


def test_a_stopped_tournament_resumed_elsewhere_shows_it_running_again(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with silent_bot() as silent_url, game_server(tmp_path) as url:
        tournament_id, _, control_token = running_tournament(url, silent_url)
        creator = {"authorization": f"Bearer {control_token}"}
        status, _ = post_json(f"{url}/tournaments/{tournament_id}/stop", {}, creator)
        assert status == 200
        page.goto(f"{url}/t/{tournament_id}")
        badge = page.locator("#tournament-status .badge")
        expect(badge).to_have_text("stopped")
        status, _ = post_json(f"{url}/tournaments/{tournament_id}/resume", {}, creator)
        assert status == 200
        expect(badge).to_have_text("running", timeout=IDLE_REFRESH_TIMEOUT_MS)
        page.goto("about:blank")


def test_a_failed_refresh_says_so_above_the_standings_it_keeps(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    web_page.allowed_errors.append(re.compile(r"ERR_CONNECTION_REFUSED"))
    with silent_bot() as silent_url, restartable_game_server(tmp_path) as server:
        tournament_id, view, _ = running_tournament(server.url, silent_url)
        page.goto(f"{server.url}/t/{tournament_id}")
        standings = page.locator("#standings tbody tr")
        expect(standings).to_have_count(len(view["standings"]))
        server.stop()
        expect(page.get_by_role("alert")).to_contain_text("the server cannot be reached")
        expect(page.locator("h1")).to_have_text("web running")
        expect(standings).to_have_count(len(view["standings"]))
        server.start()  # the tournament comes back interrupted, as a restart leaves it
        expect(page.locator("#tournament-status .badge")).to_have_text("interrupted")
        expect(page.get_by_role("alert")).to_have_count(0)
        page.goto("about:blank")


def silent_tournament(url: str, silent_url: str, games: int, concurrency: int) -> tuple[str, str]:
    """Two silent bots, ``games`` games (an even number) of which ``concurrency`` start
    at once and play on: that many are started, the rest wait for them. Its id and its
    control token."""
    body = {
        "name": "silent",
        "bots": [{"name": "mute", "url": silent_url}, {"name": "still", "url": silent_url}],
        "rounds": games // 2,
        "concurrency": concurrency,
        "openings": "none",
    }
    tournament_id, _, control_token = created_tournament(
        url, body, lambda v: len(v["live_games"]) == concurrency
    )
    return tournament_id, control_token


#: How many games the page lists before More games (tournament.js's GAMES_PAGE).
GAMES_PAGE = 100


def test_more_games_is_offered_only_while_the_server_has_more_started_games(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    more = page.get_by_role("button", name="More games")
    rows = page.locator("#tournament-games tbody tr")
    with silent_bot() as silent_url, game_server(tmp_path, max_games_per_client=256) as url:
        # A page's worth started, more scheduled: nothing more to list yet.
        first, control_token = silent_tournament(
            url, silent_url, games=GAMES_PAGE + 2, concurrency=GAMES_PAGE
        )
        page.goto(f"{url}/t/{first}")
        expect(rows).to_have_count(GAMES_PAGE)
        expect(page.locator("#tournament-status")).to_contain_text(f"{GAMES_PAGE} playing")
        expect(more).to_have_count(0)
        creator = {"authorization": f"Bearer {control_token}"}
        status, _ = post_json(f"{url}/tournaments/{first}/stop", {}, creator)  # room for more
        assert status == 200
        # One more started than a page holds: More lists it, and then there are no more.
        second, _ = silent_tournament(
            url, silent_url, games=GAMES_PAGE + 2, concurrency=GAMES_PAGE + 1
        )
        page.goto(f"{url}/t/{second}")
        expect(rows).to_have_count(GAMES_PAGE)
        more.click()
        expect(rows).to_have_count(GAMES_PAGE + 1)
        expect(more).to_have_count(0)
        page.goto("about:blank")


#: The most games one GET /tournaments/<id>/games answers (tournament.js's
#: MOST_GAMES_AN_ANSWER): the page asks for more in several answers.
MOST_GAMES_AN_ANSWER = 500


async def store_stopped_tournament(db: Path, tournament_id: str, games: int) -> None:
    """A stopped tournament of two bots with ``games`` games played (each won by X),
    written to the store at ``db`` as its runner writes them, not played: games
    enough to page through in a moment."""
    request = TournamentRequest.model_validate(
        {
            "bots": [
                {"name": "a", "url": "http://127.0.0.1:1"},
                {"name": "b", "url": "http://127.0.0.1:2"},
            ],
            "rounds": games // 2 + 1,
            "openings": "none",
        }
    )
    now = datetime.now(UTC)
    won = GameResult(winner=Player.X, reason=ResultReason.WIN)
    # Not synced to disk at each commit, as the server's are: thousands of them.
    async with await GameStore.open(f"sqlite+aiosqlite:///{db}?synchronous=normal") as store:
        records = store.tournaments
        await records.create(
            tournament_id,
            name="paged",
            request_json=request.model_dump_json(),
            games_total=request.games,
            created_at=now,
        )
        for idx in range(games):
            game_id = f"{tournament_id}-{idx}"
            await store.create_game(
                GameRecord.model_validate({"game_id": game_id, "started_at": now})
            )
            await store.finish_game(game_id, won, ended_at=now)
            await records.start_game(tournament_id, idx, game_id)
            outcome: Json = {
                "winner": "a" if idx % 2 == 0 else "b",
                "failures": {},
                "game_id": game_id,
            }
            assert await records.finish_game(tournament_id, idx, outcome)
        await records.set_status(tournament_id, "stopped", reason="stopped on request")


def test_more_games_pages_past_the_most_games_one_answer_holds(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    more = page.get_by_role("button", name="More games")
    rows = page.locator("#tournament-games tbody tr")
    played = MOST_GAMES_AN_ANSWER + GAMES_PAGE + 1  # the sixth More lists the last one
    # On a thread of its own: Playwright's sync API runs an event loop on this one.
    with ThreadPoolExecutor(1) as thread:
        stored = store_stopped_tournament(tmp_path / "games.sqlite", "paged", played)
        thread.submit(asyncio.run, stored).result()
    with game_server(tmp_path) as url:
        page.goto(f"{url}/t/paged")
        for shown in range(GAMES_PAGE, MOST_GAMES_AN_ANSWER + GAMES_PAGE + 1, GAMES_PAGE):
            expect(rows).to_have_count(shown)
            more.click()
        expect(rows).to_have_count(played)
        expect(more).to_have_count(0)
        # In game order, none twice or left out where one answer ends and the next begins.
        numbers = rows.locator("td:first-child").all_text_contents()
        assert numbers == [str(number) for number in range(1, played + 1)]
        expect(rows.nth(played - 1)).to_contain_text("X wins")
        page.goto("about:blank")


def test_a_figure_with_no_value_yet_reads_n_a_not_a_blank(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    with silent_bot() as silent_url, game_server(tmp_path) as url:
        tournament_id, _ = silent_tournament(url, silent_url, games=2, concurrency=2)
        view = get_json(f"{url}/tournaments/{tournament_id}")[1]
        assert all(line["score"] is None and line["elo"] is None for line in view["standings"])
        page.goto(f"{url}/t/{tournament_id}")
        standings = page.locator("#standings tbody tr")
        expect(standings).to_have_count(2)
        for index in range(2):
            cells = standings.nth(index).locator("td")
            expect(cells.nth(7)).to_have_text("n/a")  # Score
            expect(cells.nth(8)).to_have_text("n/a")  # Elo
        pair = page.locator("#pairs tbody tr td")
        headers = page.locator("#pairs th").all_text_contents()
        for name in ("Elo", "nElo", "LOS", "Draws"):
            expect(pair.nth(headers.index(name))).to_have_text("n/a")
        page.goto("about:blank")


def test_an_unknown_tournament_says_so_and_links_back_to_the_list(
    web_page: WebPage, tmp_path: Path
) -> None:
    page = web_page.page
    web_page.allowed_errors.append(re.compile(r"status of 404"))
    with game_server(tmp_path) as url:
        page.goto(f"{url}/t/nope")
        expect(page.get_by_role("alert")).to_contain_text("no tournament 'nope'")
        page.get_by_role("link", name="All tournaments").click()
        expect(page).to_have_url(f"{url}/web/tournaments")
        expect(page.get_by_role("status")).to_contain_text("No tournament yet.")
        page.goto("about:blank")

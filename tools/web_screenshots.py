"""Screenshots of the web page for the README, from the real server in headless Chromium.

    python tools/web_screenshots.py OUT_DIR        (make screenshots runs it)

Starts a game server on a free loopback port (a throw-away database), plays a few games
between the hosted bots and a small tournament, keeps two games running with people's
seats and clocks, and photographs the pages at a laptop's and a phone's width:

* ``web_live.png`` — the live games and the ones that just finished;
* ``web_game.png`` — a finished game: board, winning line, players, move list;
* ``web_game_phone.png`` and ``web_game_dark.png`` — the same at 390 px, and dark;
* ``web_tournament.png`` — a tournament's standings, pairs, crosstable and games;
* ``web_leaderboard.png`` — the arena's ratings after a rated series of registered bots;
* ``web_bots.png`` — the hosted and registered bots;
* ``web_challenge.png`` — an open challenge's page (``/c/<id>``);
* ``web_series.png`` — a series decided 3-0 in a best of 5.

Chromium comes from the system (``make test`` installs Debian's); set ``HTTTX_CHROMIUM``
to use another executable.
"""

from __future__ import annotations

import functools
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.browser import CHROMIUM_FLAGS, DESKTOP, PHONE, chromium_executable
from tests.http_json import get_json, post_json, wait_for
from tests.ui_server import game_server


def _bot(url: str, name: str) -> dict[str, Any]:
    return {"type": "bot", "bot_url": f"{url}/bots/{name}"}


def _stage(url: str) -> tuple[str, str]:
    """Games and a tournament to show: the id of a long finished game and the tournament."""
    finished = []
    for x, o in (("threat", "center"), ("center", "threat"), ("threat", "random")):
        _, created = post_json(
            url + "/game/new", {"player_x": _bot(url, x), "player_o": _bot(url, o)}
        )
        finished.append(created["game_id"])
    for people in (("alice", "bob"), ("carol", None)):
        seat_o = {"type": "human", "name": people[1]} if people[1] else _bot(url, "threat")
        post_json(
            url + "/game/new",
            {
                "player_x": {"type": "human", "name": people[0]},
                "player_o": seat_o,
                "match_config": {"clock_type": "incremental", "clock": 300.0, "increment": 2.0},
            },
        )
    status, created = post_json(
        url + "/tournaments",
        {
            "name": "weekly",
            "bots": [{"name": n, "url": f"{url}/bots/{n}"} for n in ("threat", "center", "random")],
            "rounds": 2,
            "match": {"turn_limit": 80},
        },
    )
    assert status == 201, created
    tournament_id = created["tournament_id"]
    wait_for(lambda: get_json(f"{url}/tournaments/{tournament_id}")[1]["status"] != "running", 300)
    lengths = {g: len(get_json(f"{url}/games/{g}")[1]["moves"]) for g in finished}
    return max(lengths, key=lambda g: lengths[g]), tournament_id


def _stage_arena(url: str) -> tuple[str, str]:
    """Registered bots, two rated series between them and an open challenge: the first
    series' id and the challenge's."""
    for name in ("threat", "center", "random"):
        status, body = post_json(url + "/bots", {"name": name.title(), "url": f"{url}/bots/{name}"})
        assert status == 201, body
    series = []
    for a, b in (("Threat", "Center"), ("Center", "Random")):
        status, created = post_json(
            url + "/series",
            {
                "player_a": {"name": a, "bot_url": f"{url}/bots/{a.lower()}"},
                "player_b": {"name": b, "bot_url": f"{url}/bots/{b.lower()}"},
                "best_of": 5,
                "rated": True,
                "match": {"turn_limit": 80},
            },
        )
        assert status == 201, created
        series.append(created["series_id"])

    def over(series_id: str) -> bool:
        return bool(get_json(f"{url}/series/{series_id}")[1]["status"] != "running")

    for series_id in series:
        wait_for(functools.partial(over, series_id), 300)
    status, challenge = post_json(
        url + "/challenges", {"name": "alice", "time_control": "300+2", "side": "random"}
    )
    assert status == 201, challenge
    return series[0], challenge["challenge_id"]


def _shoot(browser: Browser, url: str, out: Path, name: str, **context: Any) -> None:
    page = browser.new_context(**context).new_page()
    page.goto(url)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(400)  # the live list's first poll and the clocks' first tick
    page.screenshot(path=str(out / name), full_page=name == "web_tournament.png")
    page.context.close()
    print(f"wrote {out / name}")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tools/web_screenshots.py OUT_DIR", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder, game_server(Path(folder)) as url:
        game_id, tournament_id = _stage(url)
        series_id, challenge_id = _stage_arena(url)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_executable(), args=list(CHROMIUM_FLAGS)
            )
            _shoot(browser, url + "/", out, "web_live.png", viewport=DESKTOP)
            _shoot(browser, f"{url}/g/{game_id}", out, "web_game.png", viewport=DESKTOP)
            _shoot(browser, f"{url}/g/{game_id}", out, "web_game_phone.png", viewport=PHONE)
            _shoot(
                browser,
                f"{url}/g/{game_id}",
                out,
                "web_game_dark.png",
                viewport=DESKTOP,
                color_scheme="dark",
            )
            _shoot(browser, f"{url}/t/{tournament_id}", out, "web_tournament.png", viewport=DESKTOP)
            _shoot(browser, f"{url}/web/leaderboard", out, "web_leaderboard.png", viewport=DESKTOP)
            _shoot(browser, f"{url}/web/bots", out, "web_bots.png", viewport=DESKTOP)
            _shoot(browser, f"{url}/c/{challenge_id}", out, "web_challenge.png", viewport=DESKTOP)
            _shoot(browser, f"{url}/t/{series_id}", out, "web_series.png", viewport=DESKTOP)
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Benchmark: the first render of a long finished game on the web page, /g/<id>.

A game server (``tests.ui_server.game_server``, SQLite in a temporary directory) plays
one game between two hosted RandomBots that cannot end early (win distance 20, turn
limit 500: about 1000 stones). Headless Chromium (the system's, as in ``tests.browser``)
then opens ``/g/<id>`` several times and measures, from navigation start, the time until
the page marks its first full board render (``performance.mark("board-rendered")``,
``document.body.dataset.rendered``). The baseline, measured in the same run, is the
empty shell (``/web/nothing``, the page's "not found" view: the same HTML, CSS and
router, no game). Target: the game page under 300 ms.

Nothing is asserted; the script prints the medians and their ratio. Run:
``.venv/bin/python bench/web_first_render.py`` (``--runs N``, ``--moves N``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import Page, sync_playwright

from tests.browser import CHROMIUM_FLAGS, DESKTOP, chromium_executable
from tests.ui_server import game_server

TARGET_MS = 300.0

# From navigation start: the game page's own mark, or the shell's view being shown.
_GAME_RENDERED = """() => {
  const mark = performance.getEntriesByName("board-rendered")[0];
  return mark ? mark.startTime : null;
}"""
_SHELL_RENDERED = "() => performance.now()"


@dataclass(frozen=True)
class FirstRender:
    game_ms: float
    shell_ms: float
    stones: int

    @property
    def ratio(self) -> float:
        return self.game_ms / self.shell_ms if self.shell_ms else float("inf")


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        answer: dict[str, Any] = json.load(response)
    return answer


def long_game(url: str, moves: int) -> tuple[str, int]:
    """Play a game of exactly ``moves`` moves between hosted RandomBots; its id and
    number of stones."""
    match = {"win_distance": 20, "turn_limit": moves}
    bot = {"type": "bot", "bot_url": f"{url}/bots/random"}
    created = _post(f"{url}/game/new", {"player_x": bot, "player_o": bot, "match_config": match})
    game_id = str(created["game_id"])
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{url}/games/{game_id}", timeout=60) as response:
            record = json.load(response)
        if record["result"] is not None:
            stones = len(record["setup"]) + sum(len(m["pieces"]) for m in record["moves"])
            return game_id, stones
        time.sleep(0.2)
    raise RuntimeError(f"the benchmark game {game_id} did not finish")


def _timed(page: Page, url: str, ready: str, script: str) -> float:
    page.goto(url)
    page.wait_for_selector(ready)
    value = page.evaluate(script)
    if value is None:
        raise RuntimeError(f"{url} rendered without marking it")
    return float(value)


def first_render(url: str, game_id: str, stones: int, runs: int = 7) -> FirstRender:
    """Median first-render times of ``/g/<game_id>`` and of the empty shell, each page
    opened ``runs`` times in a fresh tab (alternating, after one warm-up of each)."""
    game_times: list[float] = []
    shell_times: list[float] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_executable(), args=list(CHROMIUM_FLAGS), headless=True
        )
        try:
            context = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
            for run in range(runs + 1):
                for is_game, times in ((True, game_times), (False, shell_times)):
                    page = context.new_page()
                    if is_game:
                        took = _timed(
                            page, f"{url}/g/{game_id}", "body[data-rendered='1']", _GAME_RENDERED
                        )
                    else:
                        took = _timed(page, f"{url}/web/nothing", "main h1", _SHELL_RENDERED)
                    page.close()
                    if run:  # the first of each warms the caches
                        times.append(took)
            context.close()
        finally:
            browser.close()
    return FirstRender(statistics.median(game_times), statistics.median(shell_times), stones)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--moves", type=int, default=500, help="moves of the game (2 stones each)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory, game_server(Path(directory)) as url:
        game_id, stones = long_game(url, args.moves)
        result = first_render(url, game_id, stones, runs=args.runs)
    print(f"first render of /g/<id>, {result.stones} stones, median of {args.runs} runs:")
    print(f"  game page   {result.game_ms:7.1f} ms  (target under {TARGET_MS:.0f} ms)")
    print(f"  empty shell {result.shell_ms:7.1f} ms  (baseline: /web/nothing)")
    print(f"  ratio       {result.ratio:7.2f}x")


if __name__ == "__main__":
    main()

"""A finished game of the server in the desktop client, however it is opened: watched
(``--spectate``, the browser's Watch: the spectator stream sends its record as one
``setup`` and its ``end``) or replayed (the browser's Open: ``GET /games/ID``). The real
window against a real game server on loopback. Run with ``QT_QPA_PLATFORM=offscreen``."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from models import GameRecord
from tests.http_json import post_ok
from tests.test_ui_app import WAIT_MS, finished_record
from ui.main_window import MainWindow
from ui.player_text import format_clock


def timed_bot_game(qtbot: QtBot, url: str) -> GameRecord:
    """The threat bot against the random bot, a minute a side, played to its end."""
    body = {
        "player_x": {"type": "bot", "bot_url": f"{url}/bots/threat"},
        "player_o": {"type": "bot", "bot_url": f"{url}/bots/random"},
        "match_config": {"clock_type": "match", "clock": 60},
    }
    # A blocking call is fine here: the server runs in its own thread.
    game_id = post_ok(f"{url}/game/new", body)["game_id"]
    return finished_record(qtbot, url, game_id)


def shown_clocks(window: MainWindow) -> tuple[str, str]:
    return window.panel.card_x.clock.text(), window.panel.card_o.clock.text()


def test_a_finished_game_shows_its_final_clocks_watched_or_replayed(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    record = timed_bot_game(qtbot, server_url)
    assert record.game_id is not None
    last_clock = {
        side: next(m.clock_ms for m in reversed(record.moves) if m.side.value == side)
        for side in ("x", "o")
    }
    expected = (format_clock(last_clock["x"]), format_clock(last_clock["o"]))
    assert "\u2014" not in expected  # the record holds both sides' times

    window.setup.set_server_url(server_url)
    window.open_server_game(record.game_id)
    qtbot.waitUntil(lambda: window.controller.model is not None, timeout=WAIT_MS)
    assert shown_clocks(window) == expected

    window.spectate(record.game_id)
    qtbot.waitUntil(
        lambda: window.controller.model is not None and window.controller.model.result is not None,
        timeout=WAIT_MS,
    )
    qtbot.wait(250)  # the panel's clocks tick: they must not move either
    assert shown_clocks(window) == expected

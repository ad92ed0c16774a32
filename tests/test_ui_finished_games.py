"""A finished game of the server in the desktop client, however it is opened: watched
(``--spectate``, the browser's Watch: the spectator stream sends its record as one
``setup`` and its ``end``) or replayed (the browser's Open: ``GET /games/ID``), and a
game watched to an end that came between a move's two stones. The real window against
a real game server on loopback. Run with ``QT_QPA_PLATFORM=offscreen``."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from game import notation
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


def test_a_first_stone_left_alone_by_a_resignation_is_the_last_move_watched(
    qtbot: QtBot, window: MainWindow, server_url: str, tmp_path: Path
) -> None:
    # A person plays stone by stone (the web page does; the protocol allows it): O's
    # first stone, then a resignation. The server keeps that stone as the game's last
    # move, "1. [1,0] [/]"; a watcher showed it on the board but not in the move list,
    # and the game saved from the window lost it.
    body = {
        "player_x": {"type": "bot", "bot_url": f"{server_url}/bots/threat"},
        "player_o": {"type": "human", "name": "Ada"},
        "match_config": {"clock_type": "match", "clock": 60},
        "name": "Ada's first game",
        "tags": {"event": "club night"},
    }
    created = post_ok(f"{server_url}/game/new", body)
    game_id, token = created["game_id"], created["token_o"]
    assert isinstance(game_id, str) and isinstance(token, str)
    window.spectate(game_id, server_url)
    qtbot.waitUntil(lambda: window.panel.connection.text() == "Watching live", timeout=WAIT_MS)
    seat = window.network.open_socket(window.client(server_url).seat_url(token))
    heard: list[str] = []
    seat.message.connect(heard.append)

    def requests() -> int:
        return sum('"move_request"' in text for text in heard)

    qtbot.waitUntil(lambda: requests() == 1, timeout=WAIT_MS)
    seat.send('{"type":"move_response","move":{"pieces":[{"q":1,"r":0}]}}')
    qtbot.waitUntil(lambda: requests() == 2, timeout=WAIT_MS)  # asked for the second
    seat.send('{"type":"resign"}')
    watched = window.controller.model
    assert watched is not None
    qtbot.waitUntil(lambda: watched.result is not None, timeout=WAIT_MS)

    record = finished_record(qtbot, server_url, game_id)
    assert [[p.as_tuple() for p in m.pieces] for m in record.moves] == [[(1, 0)]]
    assert [[p.as_tuple() for p in m.pieces] for m in watched.moves] == [[(1, 0)]]
    assert window.panel.moves.count() == 2  # Start, then "1. O [1,0]"
    assert window.replay.index == window.replay.count == 1
    assert window.controller.shown.stones == {(0, 0): "x", (1, 0): "o"}
    saved = tmp_path / "resigned.htttx"
    assert window.export_file(saved)
    assert "1. [1,0] [/]" in saved.read_text()
    exported = notation.loads(saved.read_text())
    assert exported.moves == watched.to_record().moves
    # The record's name, start and tags came with the spectator's setup: the file says
    # what the server's own notation says.
    assert exported.name == record.name == "Ada's first game"
    assert record.started_at is not None and exported.started_at is not None
    assert exported.started_at == record.started_at.replace(microsecond=0)
    assert exported.tags.get("event") == "club night"
    seat.close()

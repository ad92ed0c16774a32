"""What the window shows when the server says no: a seat token it refuses while the game
goes on, a seat of a game that does not exist, a new game it will not create. The real
window against a real game server on loopback. Run with ``QT_QPA_PLATFORM=offscreen``."""

from __future__ import annotations

import socket
from pathlib import Path

from pytestqt.qtbot import QtBot

from tests.test_ui_app import (
    WAIT_MS,
    click,
    connect,
    pick_far_cells,
    start_human_against_threat,
)
from tests.ui_fixtures import make_window
from ui.main_window import MainWindow
from ui.setup_panel import FormValues, SeatChoice

#: A game id the server never handed out.
UNKNOWN_GAME = "0123456789abcdef0123456789abcdef"


def test_a_seat_taken_over_elsewhere_says_why_and_the_game_is_watched_on(
    qtbot: QtBot, window: MainWindow, server_url: str, tmp_path: Path
) -> None:
    controller = start_human_against_threat(qtbot, window, server_url)
    model, entry = controller.model, controller.seats[0]
    assert model is not None and model.game_id is not None
    # The same seat token opened in another window: the server gives it the seat and
    # closes this window's with 1008 and its reason; the spectator stream stays.
    (tmp_path / "other").mkdir()
    other = make_window(qtbot, tmp_path / "other")
    other.controller.take_seat(other.client(server_url), model.game_id, "o", entry.token)
    session = controller.session
    assert session is not None
    qtbot.waitUntil(lambda: entry.lost and session.spectator_connected, timeout=WAIT_MS)

    assert window.panel.message.text() == (
        "The server refused the seat of O: replaced by a new connection to this seat. "
        "You are watching the game, not playing in it."
    )
    assert window.panel.message.property("level") == "error"
    # Not "Disconnected": the game is shown live, as to any watcher.
    state = "Watching live \u00b7 seat of O refused"
    assert window.panel.connection.text() == window.connection_label.text() == state
    assert not controller.playing
    assert not window.seat_bar.resign_button.isVisibleTo(window)

    # The game goes on: the move played in the other window shows here, live.
    qtbot.waitUntil(lambda: other.controller.active_seat() is not None, timeout=WAIT_MS)
    seat = other.controller.active_seat()
    assert seat is not None and seat.request is not None
    first, second = pick_far_cells(other, seat.request.legal)
    click(qtbot, other, first)
    click(qtbot, other, second)
    qtbot.waitUntil(lambda: len(model.moves) >= 1, timeout=WAIT_MS)
    assert {piece.as_tuple() for piece in model.moves[0].pieces} == {first, second}
    assert not model.stream_lost and model.result is None
    assert not window.panel.status.text().startswith("Connection to the server lost")
    assert window.replay.live_button.isVisibleTo(window)
    assert window.panel.connection.text() == state
    other.close()


def test_a_seat_of_a_game_that_does_not_exist_shows_only_the_refusal(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    window.controller.take_seat(window.client(server_url), UNKNOWN_GAME, "x", "not-a-token")
    window.tabs.setCurrentIndex(0)
    controller = window.controller
    # Both the seat and the spectator stream are refused, in either order.
    qtbot.waitUntil(
        lambda: controller.session is None or controller.session.cut_off, timeout=WAIT_MS
    )
    assert window.panel.message.text() == "The server cannot show this game: no such game."
    # No made-up game: no X stone, no "Player X vs Player O", no "result unknown".
    assert controller.model is None
    assert controller.shown.stones == {}
    assert window.windowTitle() == "HTTTX Arena"
    assert window.panel.status.text().startswith("No game")
    assert window.panel.connection.text() == window.connection_label.text() == ""
    assert not window.replay.live_button.isVisibleTo(window)
    assert not window.export_action.isEnabled()


def test_a_new_game_the_server_refuses_leaves_the_shown_game_and_says_so(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    connect(qtbot, window, server_url)
    threat, random = f"{server_url}/bots/threat", f"{server_url}/bots/random"
    window.setup.set_values(
        FormValues(x=SeatChoice("hosted", threat), o=SeatChoice("hosted", random))
    )
    window.setup.new_game_button.click()
    qtbot.waitUntil(
        lambda: (model := window.controller.model) is not None and model.result is not None,
        timeout=WAIT_MS,
    )
    finished = window.controller.model
    result = window.panel.status.text()

    with socket.socket() as closed:  # bound, not listening: the bot is unreachable
        closed.bind(("127.0.0.1", 0))
        unreachable = f"http://127.0.0.1:{closed.getsockname()[1]}"
        window.setup.set_values(
            FormValues(x=SeatChoice("url", unreachable), o=SeatChoice("hosted", random))
        )
        window.show_setup()
        window.setup.new_game_button.click()
        qtbot.waitUntil(lambda: window.setup.new_game_button.isEnabled(), timeout=WAIT_MS)

    # The form, where the person asked, says why, and stays in front to be corrected.
    reason = window.setup.error.text()
    assert reason.startswith("The server refused the game (422): player_x: ")
    assert "connection refused" in reason
    assert window.tabs.currentIndex() == 1
    # The Game tab still shows the game from before, and its message says the new one
    # failed rather than reading as news of that game.
    assert window.controller.model is finished
    assert window.panel.status.text() == result
    assert window.panel.message.text() == (
        f"The new game was not started. {reason}. The game shown is still the one from before."
    )
    assert window.panel.message.property("level") == "error"

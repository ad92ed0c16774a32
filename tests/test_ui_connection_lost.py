"""The desktop client once it gives up reaching the server: the real window against a
real game server on loopback, reached through a TCP forwarder the test closes (as if
the server were killed: every socket drops and reconnections are refused). The game
goes on on the server; the window must stop showing it as running.
Run with ``QT_QPA_PLATFORM=offscreen``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PyQt5.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from tests.tcp_proxy import TcpProxy
from tests.test_ui_app import (
    WAIT_MS,
    click,
    pick_far_cells,
    start_human_against_threat,
)
from tests.ui_fixtures import make_window
from ui.main_window import MainWindow
from ui.seat import SeatError

#: Reconnection attempts, short: the test waits for the client to give up.
QUICK_RETRIES_S = (0.05, 0.1)


@pytest.fixture
def proxy(server_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TcpProxy]:
    monkeypatch.setattr("ui.game_session.RECONNECT_DELAYS_S", QUICK_RETRIES_S)
    with TcpProxy(int(server_url.rsplit(":", 1)[1])) as forwarder:
        yield forwarder


def clock_stands_still(qtbot: QtBot, window: MainWindow, side: str) -> bool:
    card = window.panel.card_x if side == "x" else window.panel.card_o
    before = card.clock.text()
    qtbot.wait(400)  # four ticks of the panel's clock
    return card.clock.text() == before


def test_a_player_cut_off_for_good_sees_the_game_stopped(
    qtbot: QtBot,
    window: MainWindow,
    proxy: TcpProxy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    via_proxy = f"http://127.0.0.1:{proxy.port}"
    controller = start_human_against_threat(qtbot, window, via_proxy, clock_type="turn")
    assert window.seat_bar.resign_button.isVisibleTo(window)
    assert not clock_stands_still(qtbot, window, "o")  # the person's clock runs

    proxy.close()
    # The seat and the spectator stream give up in turn; then the game is shown stopped.
    qtbot.waitUntil(
        lambda: window.panel.status.text().startswith("Connection to the server lost"),
        timeout=WAIT_MS,
    )

    # The player's message, not the watcher's.
    assert "seat of O could not be taken back" in window.panel.message.text()
    assert "keep watching" not in window.panel.message.text()
    assert window.panel.connection.text() == "Disconnected"
    assert clock_stands_still(qtbot, window, "o")
    assert window.panel.card_o.turn.text() == ""
    assert not window.replay.live_button.isVisibleTo(window)
    assert not controller.playing
    assert not window.seat_bar.resign_button.isVisibleTo(window)
    with pytest.raises(SeatError):
        controller.resign()
    # Nothing is left to lose by leaving: the window does not ask.
    window.confirm_leaving = True
    asked: list[object] = []
    monkeypatch.setattr(QMessageBox, "question", lambda *args: asked.append(args))
    assert window.leave_current_game()
    assert asked == []
    window.confirm_leaving = False


def test_resigning_while_the_seat_reconnects_is_refused_not_pretended(
    qtbot: QtBot, window: MainWindow, proxy: TcpProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Retries far apart: the seat stays down (and reconnecting) while the person resigns.
    monkeypatch.setattr("ui.game_session.RECONNECT_DELAYS_S", (60.0,))
    controller = start_human_against_threat(qtbot, window, f"http://127.0.0.1:{proxy.port}")
    window.online.confirm_resign = False
    proxy.close()
    entry = controller.seats[0]
    # The seat's socket dropped and waits to be retaken (not the connection label: a
    # spectator socket the forwarder had just accepted may still come up after it).
    qtbot.waitUntil(lambda: not entry.connected and entry.attempts == 1, timeout=WAIT_MS)
    assert controller.playing and window.seat_bar.resign_button.isVisibleTo(window)
    window.seat_bar.resign_button.click()
    assert window.panel.message.text().startswith("Not connected to the server")
    assert "resigned" not in window.panel.message.text()
    assert not entry.seat.resigned  # still the person's to resign once back


def test_a_watcher_cut_off_for_good_sees_the_game_stopped(
    qtbot: QtBot, window: MainWindow, server_url: str, proxy: TcpProxy, tmp_path: Path
) -> None:
    # Someone plays O against the threat bot in a window of their own, directly; this
    # window watches through the forwarder once O's clock runs (after a first move).
    (tmp_path / "player").mkdir()
    player = make_window(qtbot, tmp_path / "player")
    seat = start_human_against_threat(qtbot, player, server_url, clock_type="turn").active_seat()
    assert seat is not None and seat.request is not None
    first, second = pick_far_cells(player, seat.request.legal)
    click(qtbot, player, first)
    click(qtbot, player, second)
    game = player.controller.model
    assert game is not None and game.game_id is not None
    qtbot.waitUntil(lambda: game.to_move == "o" and len(game.moves) == 2, timeout=WAIT_MS)

    window.spectate(game.game_id, f"http://127.0.0.1:{proxy.port}")
    qtbot.waitUntil(lambda: "(O) to move" in window.panel.status.text(), timeout=WAIT_MS)
    assert not clock_stands_still(qtbot, window, "o")

    proxy.close()
    qtbot.waitUntil(lambda: "keep watching" in window.panel.message.text(), timeout=WAIT_MS)
    assert window.panel.status.text().startswith("Connection to the server lost")
    assert clock_stands_still(qtbot, window, "o")
    assert window.panel.card_o.turn.text() == ""
    assert not window.replay.live_button.isVisibleTo(window)
    player.close()

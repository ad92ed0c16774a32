"""Looking back at an older position while it is your move: the real window against a
real game server on loopback, the person (O) against the hosted threat bot. As in a
chess program, the status keeps saying it is your move, and a click on the board
brings back the current position. Run with ``QT_QPA_PLATFORM=offscreen``."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from models import Player
from tests.test_ui_app import (
    WAIT_MS,
    click,
    pick_far_cells,
    start_human_against_threat,
)
from ui.main_window import MainWindow

BACK_HINT = "Back to the current position \u2014 click again to play."


def play_one_move(qtbot: QtBot, window: MainWindow) -> None:
    """O plays two stones far from the others; returns once the bot has answered."""
    controller = window.controller
    entry = controller.active_seat()
    model = controller.model
    assert entry is not None and entry.request is not None and model is not None
    before = len(model.moves)
    first, second = pick_far_cells(window, entry.request.legal)
    click(qtbot, window, first)
    click(qtbot, window, second)
    qtbot.waitUntil(
        lambda: len(model.moves) >= before + 2 and controller.active_seat() is not None,
        timeout=WAIT_MS,
    )


def test_a_click_while_looking_back_on_your_move_brings_back_the_current_position(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    controller = start_human_against_threat(qtbot, window, server_url)
    play_one_move(qtbot, window)
    model = controller.model
    assert model is not None
    latest = len(model.moves)

    window.replay.first()
    assert controller.shown.index == 0 and controller.shown.interactive_side is None
    # Looking back changes nothing about whose move it is.
    assert window.panel.status.text().startswith("Your move as O")
    assert window.panel.card_o.turn.text() == "your move"

    # Any cell will do: the click is not a stone, it brings the game back.
    click(qtbot, window, (0, 0))
    assert window.replay.index == latest and window.replay.following
    assert controller.shown.interactive_side == "o"
    assert controller.pending is None
    assert window.panel.message.text() == BACK_HINT
    assert window.panel.status.text().startswith("Your move as O")

    # The next two clicks play as usual.
    entry = controller.active_seat()
    assert entry is not None and entry.request is not None
    first, second = pick_far_cells(window, entry.request.legal)
    click(qtbot, window, first)
    assert controller.pending == first
    assert not window.panel.message.isVisibleTo(window)  # the hint has done its work
    click(qtbot, window, second)
    qtbot.waitUntil(lambda: len(model.moves) > latest, timeout=WAIT_MS)
    assert model.moves[latest].side is Player.O

"""The replay bar: stepping, following the live end, keys; its slider in the narrowest
window (the real window, a game opened offline)."""

from __future__ import annotations

from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QApplication, QStyle
from pytestqt.qtbot import QtBot

from game import notation
from ui.main_window import MainWindow
from ui.replay_bar import ReplayBar


def test_stepping_and_following(qtbot: QtBot) -> None:
    bar = ReplayBar()
    qtbot.addWidget(bar)
    seen: list[int] = []
    bar.indexChanged.connect(seen.append)
    bar.reset(3, live=True)
    assert (bar.index, bar.following, seen) == (3, True, [3])
    bar.set_count(4)  # a new move arrives while following: the view moves with it
    assert bar.index == 4 and seen[-1] == 4
    bar.previous()
    assert (bar.index, bar.following) == (3, False)
    bar.set_count(5)  # not following: the view stays
    assert bar.index == 3 and bar.slider.maximum() == 5
    assert not bar.live_button.isChecked()
    bar.live_button.click()
    assert (bar.index, bar.following) == (5, True)
    bar.first()
    assert bar.index == 0 and not bar.prev_button.isEnabled()
    bar.slider.setValue(2)
    assert bar.index == 2 and bar.label.text() == "2 / 5"
    bar.last()
    assert bar.following and not bar.next_button.isEnabled()


def test_keys(qtbot: QtBot) -> None:
    bar = ReplayBar()
    qtbot.addWidget(bar)
    bar.reset(4, live=False, index=0)
    assert bar.handle_key(Qt.Key.Key_Right) and bar.index == 1
    assert bar.handle_key(Qt.Key.Key_End) and bar.index == 4
    assert bar.handle_key(Qt.Key.Key_Left) and bar.index == 3
    assert bar.handle_key(Qt.Key.Key_Home) and bar.index == 0
    assert not bar.handle_key(Qt.Key.Key_A)
    bar.handle_key(Qt.Key.Key_Left)
    assert bar.index == 0


def test_a_finished_game_has_no_live_toggle(qtbot: QtBot) -> None:
    bar = ReplayBar()
    qtbot.addWidget(bar)
    bar.show()
    bar.reset(2, live=False)
    assert not bar.live_button.isVisible()
    bar.set_live_game(True)
    assert bar.live_button.isVisible()


def test_the_narrowest_window_keeps_a_slider_to_drag(qtbot: QtBot, window: MainWindow) -> None:
    # A live game shows Live too. At the window's narrowest, the slider was squeezed to
    # its lone handle: nothing to drag it along.
    window.controller.show_record(notation.loads("version[2]; 1. [1,0] [2,0]; 2. [0,1] [0,2];"))
    window.replay.set_live_game(True)
    window.resize(300, 300)  # less than it can be: it stops at its minimum
    for _ in range(3):
        QApplication.processEvents()  # the layout settles
    slider = window.replay.slider
    style = slider.style()
    assert style is not None
    handle = style.pixelMetric(QStyle.PixelMetric.PM_SliderLength, None, slider)
    assert window.replay.live_button.isVisibleTo(window)
    assert slider.width() >= 4 * handle  # room to drag the handle along


def test_stepping_to_a_move_off_screen_brings_it_into_view(window: MainWindow) -> None:
    # Zoomed in on one corner of a game, a person steps back: the move stepped to was
    # played elsewhere, and the board stood still, only the move list changing.
    window.controller.show_record(
        notation.loads("version[2]; 1. [1,0] [2,0]; 2. [0,1] [0,2]; 3. [-1,0] [-2,0];")
    )
    window.tabs.setCurrentIndex(0)
    board = window.board
    board.zoom_by(3.0)
    board.viewport.pan(-board.width(), 0)  # looking at empty board to the right
    scale = board.viewport.scale
    window.replay.previous()
    last = window.controller.shown.last_move
    assert set(last) == {(0, 1), (0, 2)}
    for cell in last:
        assert board.rect().contains(board.center_of(cell)), cell
    assert board.viewport.scale == scale  # panned, at the zoom the person chose
    # A move already in view leaves the view alone.
    offsets = board.viewport.offset_x, board.viewport.offset_y
    window.replay.previous()
    assert all(board.rect().contains(board.center_of(c)) for c in window.controller.shown.last_move)
    assert (board.viewport.offset_x, board.viewport.offset_y) == offsets

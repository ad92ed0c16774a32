"""The board widget: clicks, drags, zoom, keys and what it draws (pytest-qt, offscreen).

Run with ``QT_QPA_PLATFORM=offscreen``.
"""

from __future__ import annotations

import itertools
import random

import pytest
from PyQt5.QtCore import QEvent, QPoint, QPointF, Qt
from PyQt5.QtGui import QColor, QImage, QKeyEvent, QMouseEvent, QWheelEvent
from PyQt5.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from game.hexgrid import Hex, hexagon
from game.rules import Position
from tests.random_games import unfinished_game
from ui.board_widget import STONE_RADIUS, BoardWidget
from ui.stones import X_COLOR, stone_icon

# A small mid-game position: X at the origin, then a few moves around it.
STONES: dict[Hex, str] = {
    (0, 0): "x",
    (1, 0): "o",
    (0, 1): "o",
    (-1, 1): "x",
    (-1, 0): "x",
    (2, -1): "o",
    (1, -2): "o",
}


def shown_board(qtbot: QtBot, width: int, height: int) -> BoardWidget:
    """An empty board of ``width`` x ``height`` pixels, shown."""
    widget = BoardWidget()
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture
def board(qtbot: QtBot) -> BoardWidget:
    widget = shown_board(qtbot, 640, 480)
    widget.set_position(STONES, legal=_legal(STONES))
    return widget


def _legal(stones: dict[Hex, str], reach: int = 3) -> frozenset[Hex]:
    near = {(q + dq, r + dr) for q, r in stones for dq, dr in hexagon((0, 0), reach)}
    return frozenset(near - set(stones))


def _image(widget: BoardWidget) -> QImage:
    return widget.grab().toImage()


def _color_at(image: QImage, point: QPoint | QPointF) -> QColor:
    return image.pixelColor(round(point.x()), round(point.y()))


# Input is sent as events, like the platform would: QTest's helpers are untyped (pytest-qt)
# or typed as instance methods of a namespace (PyQt5's stubs), and QTest.mouseMove only
# moves the cursor, which the offscreen platform does not turn into events.


def _button(widget: BoardWidget, kind: QEvent.Type, button: Qt.MouseButton, at: QPoint) -> None:
    held = button if kind == QEvent.Type.MouseButtonPress else Qt.MouseButton.NoButton
    event = QMouseEvent(
        kind, QPointF(at), button, Qt.MouseButtons(held), Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(widget, event)


def _click(widget: BoardWidget, button: Qt.MouseButton, at: QPoint) -> None:
    _button(widget, QEvent.Type.MouseButtonPress, button, at)
    _button(widget, QEvent.Type.MouseButtonRelease, button, at)


def _key(widget: BoardWidget, key: Qt.Key) -> None:
    for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        QApplication.sendEvent(widget, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier))


def _move(
    widget: BoardWidget, at: QPoint, buttons: Qt.MouseButton = Qt.MouseButton.NoButton
) -> None:
    event = QMouseEvent(
        QEvent.Type.MouseMove,
        QPointF(at),
        Qt.MouseButton.NoButton,
        Qt.MouseButtons(buttons),
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(widget, event)


def _wheel(widget: BoardWidget, at: QPoint, notches: float) -> None:
    event = QWheelEvent(
        QPointF(at),
        QPointF(widget.mapToGlobal(at)),
        QPoint(0, 0),
        QPoint(0, round(120 * notches)),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


# ----------------------------------------------------------------------- clicks


def test_a_click_on_a_cell_emits_that_cell_while_interactive(
    qtbot: QtBot, board: BoardWidget
) -> None:
    board.set_interactive(True, "o")
    for cell in [(2, 0), (-2, 1), (0, -1)]:
        with qtbot.waitSignal(board.cellClicked, timeout=2000) as blocker:
            _click(board, Qt.MouseButton.LeftButton, board.center_of(cell))
        assert tuple(blocker.args or ()) == cell


def test_a_click_while_not_interactive_is_no_move_but_is_heard(
    qtbot: QtBot, board: BoardWidget
) -> None:
    # The owner may answer it (the controller brings back the current position).
    board.set_interactive(False)
    with (
        qtbot.assertNotEmitted(board.cellClicked, wait=50),
        qtbot.waitSignal(board.inactiveCellClicked, timeout=2000) as blocker,
    ):
        _click(board, Qt.MouseButton.LeftButton, board.center_of((2, 0)))
    assert tuple(blocker.args or ()) == (2, 0)


def test_a_press_that_moves_a_little_is_still_a_click(qtbot: QtBot, board: BoardWidget) -> None:
    board.set_interactive(True, "o")
    start = board.center_of((2, 0))
    with qtbot.waitSignal(board.cellClicked, timeout=2000) as blocker:
        _button(board, QEvent.Type.MouseButtonPress, Qt.MouseButton.LeftButton, start)
        _move(board, start + QPoint(2, 1), Qt.MouseButton.LeftButton)
        _button(
            board, QEvent.Type.MouseButtonRelease, Qt.MouseButton.LeftButton, start + QPoint(2, 1)
        )
    assert tuple(blocker.args or ()) == (2, 0)


@pytest.mark.parametrize("button", [Qt.MouseButton.LeftButton, Qt.MouseButton.MiddleButton])
def test_a_drag_pans_and_does_not_click(
    qtbot: QtBot, board: BoardWidget, button: Qt.MouseButton
) -> None:
    board.set_interactive(True, "o")
    start = board.center_of((0, 0))
    before = (board.viewport.offset_x, board.viewport.offset_y)
    with qtbot.assertNotEmitted(board.cellClicked, wait=50):
        _button(board, QEvent.Type.MouseButtonPress, button, start)
        for step in range(1, 11):
            _move(board, start + QPoint(6 * step, 3 * step), button)
        _button(board, QEvent.Type.MouseButtonRelease, button, start + QPoint(60, 30))
    after = (board.viewport.offset_x, board.viewport.offset_y)
    assert after == pytest.approx((before[0] + 60, before[1] + 30))
    # The board moved under the mouse: the origin now sits where the drag ended.
    assert board.center_of((0, 0)) == start + QPoint(60, 30)


def test_the_wheel_zooms_around_the_cursor(qtbot: QtBot, board: BoardWidget) -> None:
    cursor = board.center_of((2, -1)) + QPoint(5, -3)
    world_before = board.viewport.to_world(cursor.x(), cursor.y())
    scale_before = board.viewport.scale
    _wheel(board, cursor, 2)
    assert board.viewport.scale > scale_before
    assert board.viewport.cell_at(cursor.x(), cursor.y()) == (2, -1)
    assert board.viewport.to_world(cursor.x(), cursor.y()) == pytest.approx(world_before)
    _wheel(board, cursor, -5)
    assert board.viewport.scale < scale_before
    assert board.viewport.cell_at(cursor.x(), cursor.y()) == (2, -1)


# -------------------------------------------------------------------- keyboard


def test_escape_emits_escape_pressed(qtbot: QtBot, board: BoardWidget) -> None:
    with qtbot.waitSignal(board.escapePressed, timeout=2000):
        _key(board, Qt.Key.Key_Escape)


def test_plus_minus_zoom_and_f_frames_the_stones(qtbot: QtBot, board: BoardWidget) -> None:
    framed = board.viewport.scale
    _key(board, Qt.Key.Key_Plus)
    assert board.viewport.scale > framed
    _key(board, Qt.Key.Key_Minus)
    _key(board, Qt.Key.Key_Minus)
    assert board.viewport.scale < framed
    board.viewport.pan(500, 500)
    _key(board, Qt.Key.Key_F)
    assert board.viewport.scale == pytest.approx(framed)
    assert all(board.rect().contains(board.center_of(cell)) for cell in STONES)


# ----------------------------------------------------------------------- hover


def test_hover_emits_the_cell_under_the_mouse(qtbot: QtBot, board: BoardWidget) -> None:
    with qtbot.waitSignal(board.cellHovered, timeout=2000) as blocker:
        _move(board, board.center_of((3, -2)))
    assert blocker.args == [(3, -2)]
    assert board.hovered_cell == (3, -2)


def test_hover_previews_the_stone_on_legal_cells_only(qtbot: QtBot, board: BoardWidget) -> None:
    legal_cell, occupied = (2, 0), (1, 0)
    board.set_interactive(True, "x")
    plain = _image(board)
    _move(board, board.center_of(legal_cell))
    preview = _image(board)
    assert board.cursor().shape() == Qt.CursorShape.PointingHandCursor
    center = board.center_of(legal_cell)
    assert _color_at(preview, center) != _color_at(plain, center)
    # An occupied cell shows no preview, and a "not allowed" cursor.
    _move(board, board.center_of(occupied))
    assert board.cursor().shape() == Qt.CursorShape.ForbiddenCursor
    assert _image(board) == plain


# ---------------------------------------------------------------------- framing


def test_the_first_position_is_framed_and_later_ones_keep_the_view(qtbot: QtBot) -> None:
    widget = shown_board(qtbot, 500, 400)
    far = {(0, 0): "x", (14, -3): "o", (15, -3): "o"}
    widget.set_position(far)
    assert all(widget.rect().contains(widget.center_of(cell)) for cell in far)
    widget.viewport.pan(-200, 0)
    view = (widget.viewport.scale, widget.viewport.offset_x, widget.viewport.offset_y)
    widget.set_position({**far, (-20, 5): "x"})
    assert (widget.viewport.scale, widget.viewport.offset_x, widget.viewport.offset_y) == view
    # A cleared board (a new game) frames its first stones again.
    widget.set_position({})
    elsewhere = {(40, 10): "x", (44, 9): "o"}
    widget.set_position(elsewhere)
    assert all(widget.rect().contains(widget.center_of(cell)) for cell in elsewhere)


def test_fit_to_stones_shows_every_stone(qtbot: QtBot, board: BoardWidget) -> None:
    rng = random.Random(5)
    stones = {(rng.randint(-40, 40), rng.randint(-30, 30)): "xo"[i % 2] for i in range(80)}
    board.set_position(stones)
    board.viewport.zoom_at(10, 10, 3.0)
    board.viewport.pan(400, -300)
    board.fit_to_stones()
    assert all(board.rect().contains(board.center_of(cell)) for cell in stones)


# ---------------------------------------------------------------------- drawing


def _thousand_stone_game() -> Position:
    """A legal game of 1000 stones, each near an earlier one, that nobody has won."""
    return unfinished_game(1000, seed=11, reach=3)


def _is_red(color: QColor) -> bool:
    return color.red() > color.blue() + 40


def _is_blue(color: QColor) -> bool:
    return color.blue() > color.red() + 40


def test_a_thousand_stones_render_in_both_colours(qtbot: QtBot) -> None:
    widget = shown_board(qtbot, 1200, 900)
    position = _thousand_stone_game()
    stones = {(q, r): side for q, r, side in position.stones}
    widget.set_position(stones, legal=position.legal_cells())
    image = _image(widget)
    assert image.width() == 1200
    # Half-way out from the centre (to the right) a stone shows its disc colour: the
    # cross and the ring of the marks are elsewhere.
    offset = round(widget.viewport.hex_radius_px * STONE_RADIUS * 0.6)
    checked = {"x": 0, "o": 0}
    for cell, side in stones.items():
        center = widget.center_of(cell)
        if not widget.rect().adjusted(10, 10, -10, -10).contains(center):
            continue
        color = _color_at(image, center + QPoint(offset, 0))
        assert (_is_red if side == "x" else _is_blue)(color), (cell, side, color.name())
        checked[side] += 1
    assert checked["x"] > 400 and checked["o"] > 400


def test_the_winning_line_is_highlighted(qtbot: QtBot, board: BoardWidget) -> None:
    line = [(q, -3) for q in range(-2, 4)]
    stones = {**STONES, **dict.fromkeys(line, "x")}
    board.set_position(stones)
    plain = _image(board)
    board.set_position(stones, winning_line=line)
    won = _image(board)
    # Between two stones of the line (where the band runs) and on each stone's rim.
    for a, b in itertools.pairwise(line):
        between = (board.center_of(a) + board.center_of(b)) / 2
        assert _color_at(won, between) != _color_at(plain, between)
    # Elsewhere nothing changed.
    corner = QPoint(5, 5)
    assert _color_at(won, corner) == _color_at(plain, corner)


def test_the_pending_stone_is_drawn_translucent(qtbot: QtBot, board: BoardWidget) -> None:
    cell = (2, 0)
    plain = _image(board)
    board.set_pending(cell, "o")
    pending = _image(board)
    offset = QPoint(round(board.viewport.hex_radius_px * STONE_RADIUS * 0.6), 0)
    drawn = _color_at(pending, board.center_of(cell) + offset)
    assert drawn != _color_at(plain, board.center_of(cell) + offset)
    assert _is_blue(drawn)
    # Translucent: lighter than a placed O stone at the same spot of its disc.
    placed = _color_at(pending, board.center_of((1, 0)) + offset)
    assert drawn.lightness() > placed.lightness()
    board.set_pending(None)
    assert _image(board) == plain


def test_the_last_move_is_marked(qtbot: QtBot, board: BoardWidget) -> None:
    plain = _image(board)
    board.set_position(STONES, last_move=[(2, -1), (1, -2)], legal=_legal(STONES))
    marked = _image(board)
    assert marked != plain


def test_the_last_move_stands_out_among_a_thousand_stones_zoomed_out(qtbot: QtBot) -> None:
    # Zoomed out on a long game a cell is a few pixels across, and the outline of the
    # last move's cells was a dark dot the size of a stone: nobody could find it.
    widget = shown_board(qtbot, 800, 600)
    position = _thousand_stone_game()
    stones = {(q, r): side for q, r, side in position.stones}
    widget.set_position(stones, legal=position.legal_cells())
    widget.zoom_by(0.01)  # as far out as it goes
    assert widget.viewport.hex_radius_px < 4
    middle = QPoint(400, 300)
    last = sorted(stones, key=lambda c: (widget.center_of(c) - middle).manhattanLength())[:2]
    plain = _image(widget)
    widget.set_position(stones, last_move=last, legal=position.legal_cells())
    marked = _image(widget)
    for cell in last:
        center = widget.center_of(cell)
        changed = [
            QPoint(x, y)
            for x in range(center.x() - 20, center.x() + 21)
            for y in range(center.y() - 20, center.y() + 21)
            if plain.pixel(x, y) != marked.pixel(x, y)
        ]
        # The mark is a ring some 16 px across round the stone, whatever the zoom.
        width = max(p.x() for p in changed) - min(p.x() for p in changed)
        height = max(p.y() for p in changed) - min(p.y() for p in changed)
        assert width >= 14 and height >= 14, (cell, width, height)


def test_stone_icons_use_the_side_colours(qtbot: QtBot) -> None:
    icon = stone_icon("x", 32).pixmap(32, 32).toImage()
    assert _is_red(icon.pixelColor(24, 16))
    o_icon = stone_icon("o", 32).pixmap(32, 32).toImage()
    assert _is_blue(o_icon.pixelColor(24, 16))
    assert icon.pixelColor(0, 0).alpha() == 0  # round, on a transparent square
    assert X_COLOR.name() == "#d1495b"


def test_arrows_and_shortcuts_are_left_to_the_window(qtbot: QtBot, board: BoardWidget) -> None:
    """The replay bar steps with the arrow keys and Ctrl+F may be a window shortcut: the
    board must not swallow them."""
    scale = board.viewport.scale
    for key, modifiers in [
        (Qt.Key.Key_Left, Qt.KeyboardModifier.NoModifier),
        (Qt.Key.Key_Right, Qt.KeyboardModifier.NoModifier),
        (Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier),
        (Qt.Key.Key_Plus, Qt.KeyboardModifier.ControlModifier),
    ]:
        event = QKeyEvent(QEvent.Type.KeyPress, key, Qt.KeyboardModifiers(modifiers))
        QApplication.sendEvent(board, event)
        assert not event.isAccepted(), key
    assert board.viewport.scale == scale


def test_resizing_keeps_the_stones_framed_until_the_view_is_moved(qtbot: QtBot) -> None:
    widget = shown_board(qtbot, 300, 250)
    stones = {(0, 0): "x", (12, -2): "o", (-9, 7): "o"}
    widget.set_position(stones)
    small = widget.viewport.scale
    widget.resize(900, 700)
    qtbot.waitUntil(lambda: widget.width() == 900, timeout=2000)
    framed = widget.viewport.scale
    assert framed > small  # framed again for the bigger board
    assert all(widget.rect().contains(widget.center_of(c)) for c in stones)
    # Once the user has zoomed, a resize keeps the centre and the zoom.
    widget.zoom_by(1.5)
    zoomed = widget.viewport.scale
    centre = widget.viewport.to_world(450, 350)
    widget.resize(700, 500)
    qtbot.waitUntil(lambda: widget.width() == 700, timeout=2000)
    assert widget.viewport.scale == zoomed
    assert widget.viewport.to_world(350, 250) == pytest.approx(centre)


def test_a_stone_of_no_side_is_refused(board: BoardWidget) -> None:
    with pytest.raises(ValueError, match="'x' or 'o'"):
        board.set_position({(0, 0): "x", (1, 0): "z"})

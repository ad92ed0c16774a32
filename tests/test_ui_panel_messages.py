"""The side panel's message box in the real window: a long URL or game id wraps inside
the box (the message's text unchanged), and the move in view stays in view in the
move list as messages come and go above it. Against a real game server on loopback,
which says that a game does not exist. Run with ``QT_QPA_PLATFORM=offscreen``."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from tests.random_games import unfinished_game
from tests.test_ui_app import WAIT_MS
from ui.main_window import MainWindow

#: Longer than the message box is wide, with no space to wrap at.
LONG_ID = "0123456789abcdef" * 3


def long_game(path: Path, moves: int) -> Path:
    """A saved game of ``moves`` moves, none of them winning: more rows than the move
    list shows at once."""
    stones = unfinished_game(1 + 2 * moves, seed=5, reach=2).stones[1:]  # after X's first
    lines = ["version[2];"]
    for number in range(moves):
        (q1, r1, _), (q2, r2, _) = stones[2 * number : 2 * number + 2]
        lines.append(f"{number + 1}. [{q1},{r1}] [{q2},{r2}];")
    path.write_text("\n".join(lines) + "\n")
    return path


def open_unknown_game(qtbot: QtBot, window: MainWindow, server_url: str) -> str:
    """Open a game the server does not have; the message that says so."""
    window.open_url(f"{server_url}/g/{LONG_ID}")
    qtbot.waitUntil(lambda: "does not exist" in window.panel.message.text(), timeout=WAIT_MS)
    qtbot.wait(50)  # the layout settles
    return window.panel.message.text()


def current_row_in_view(window: MainWindow) -> bool:
    moves = window.panel.moves
    item = moves.currentItem()
    viewport = moves.viewport()
    assert item is not None and viewport is not None
    return viewport.rect().contains(moves.visualItemRect(item))


def test_a_long_url_and_game_id_wrap_inside_the_message_box(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    text = open_unknown_game(qtbot, window, server_url)
    assert text == f"Game {LONG_ID} does not exist on {server_url}."  # as said, unchanged
    box = window.panel.message
    # A word too long for the box no longer asks for more width than the box has...
    assert box.minimumSizeHint().width() <= box.width()
    # ...it is broken over lines, every one of which fits, and the box is tall enough.
    lines = box.shown_lines()
    assert "".join(lines) == text and len(lines) >= 3
    assert any(LONG_ID not in line and LONG_ID[:8] in line for line in lines)
    document = box.document()
    assert document is not None
    width = box.viewport().width()  # type: ignore[union-attr]
    assert all(box.fontMetrics().horizontalAdvance(line.rstrip()) <= width for line in lines)
    assert document.size().height() <= box.viewport().height()  # type: ignore[union-attr]


def test_the_move_in_view_stays_in_view_as_messages_come_and_go(
    qtbot: QtBot, window: MainWindow, server_url: str, tmp_path: Path
) -> None:
    assert window.open_file(long_game(tmp_path / "long.htttx", 30))
    qtbot.wait(50)  # the layout settles
    assert window.panel.moves.currentRow() == 30
    assert current_row_in_view(window)  # under "Replaying long.htttx."
    open_unknown_game(qtbot, window, server_url)  # a message four lines tall
    assert window.panel.moves.currentRow() == 30
    assert current_row_in_view(window)

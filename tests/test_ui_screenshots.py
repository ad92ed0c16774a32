"""`make screenshots` keeps working: the README's pictures can always be made again."""

from __future__ import annotations

from pathlib import Path

from PyQt5.QtGui import QImage
from pytestqt.qtbot import QtBot

from ui.screenshots import WINDOW_SIZE, make_screenshots


def test_the_screenshots_are_made_from_the_real_window(qtbot: QtBot, tmp_path: Path) -> None:
    saved = make_screenshots(tmp_path)
    assert [path.name for path in saved] == [
        "new_game.png",
        "game_in_progress.png",
        "game_finished.png",
        "games_browser.png",
        "play_online.png",
        "leaderboard.png",
    ]
    for path in saved[:3]:  # the main window at its set size
        image = QImage(str(path))
        assert (image.width(), image.height()) == WINDOW_SIZE, path.name
    for path in saved[3:]:  # the browser, the Play online dialog, the leaderboard
        image = QImage(str(path))
        assert not image.isNull() and image.width() > 0, path.name

"""The desktop client's shared fixtures (``tests/conftest.py`` makes them suite-wide):
``server_url``, a real game server on loopback, one per test module; ``window``, a shown
``MainWindow`` with its settings in the test's own directory (``make_window``).

Qt is imported when a fixture is first used, not when the suite starts: most of the
suite never opens a window.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.ui_server import game_server

if TYPE_CHECKING:
    from pytestqt.qtbot import QtBot

    from ui.main_window import MainWindow


def make_window(qtbot: QtBot, directory: Path) -> MainWindow:
    """A shown main window with its settings in ``directory``, for the UI tests."""
    from PyQt5.QtCore import QSettings

    from ui.main_window import MainWindow
    from ui.settings import Settings

    settings = Settings(QSettings(str(directory / "ui.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings)
    window.confirm_leaving = False  # a modal question would stop the test
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with game_server(tmp_path_factory.mktemp("server")) as url:
        yield url


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> Iterator[MainWindow]:
    main = make_window(qtbot, tmp_path)
    yield main
    main.close()

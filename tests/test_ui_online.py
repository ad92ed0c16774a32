"""Playing people online, end to end: the real window against a real game server on
loopback. People resign and hear of their opponent's drops; the queue pairs two people
(two windows) or a person with a bot; an open challenge is accepted from its link; the
leaderboard lists the rated games. Run with ``QT_QPA_PLATFORM=offscreen``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PyQt5.QtCore import QSettings
from PyQt5.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from models import EndCause, Player, ResultReason
from tests.test_ui_app import WAIT_MS, connect, start_human_against_threat
from tests.ui_server import game_server
from ui.main_window import MainWindow
from ui.settings import Settings
from ui.setup_panel import FormValues, SeatChoice


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with game_server(tmp_path_factory.mktemp("server")) as url:
        yield url


def make_window(qtbot: QtBot, directory: Path) -> MainWindow:
    settings = Settings(QSettings(str(directory / "ui.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings)
    window.confirm_leaving = False  # a modal question would stop the test
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> Iterator[MainWindow]:
    main = make_window(qtbot, tmp_path)
    yield main
    main.close()


def answer_questions(
    monkeypatch: pytest.MonkeyPatch, *answers: QMessageBox.StandardButton
) -> list[str]:
    """``QMessageBox.question`` answers ``answers`` in turn; the titles asked."""
    asked: list[str] = []
    queue = list(answers)

    def question(*args: object, **kwargs: object) -> QMessageBox.StandardButton:
        asked.append(str(args[1]))
        return queue.pop(0)

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


# ------------------------------------------------------------------ resign


def test_a_person_resigns_after_confirming_and_the_bot_wins(
    qtbot: QtBot, window: MainWindow, server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller = start_human_against_threat(qtbot, window, server_url)
    assert window.seat_bar.resign_button.isVisible()
    asked = answer_questions(
        monkeypatch, QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes
    )
    window.seat_bar.resign_button.click()  # "No": nothing happens
    model = controller.model
    assert model is not None and model.result is None
    assert controller.active_seat() is not None
    window.seat_bar.resign_button.click()  # "Yes"
    assert asked == ["Resign?", "Resign?"]
    assert controller.active_seat() is None  # no more moves from this seat
    qtbot.waitUntil(lambda: model.result is not None, timeout=WAIT_MS)
    assert model.result is not None
    assert model.result.winner is Player.X
    assert model.result.reason is ResultReason.FORFEIT
    assert model.result.cause is EndCause.RESIGN
    qtbot.waitUntil(lambda: "resigned" in window.panel.status.text(), timeout=WAIT_MS)
    assert window.panel.status.text() == "ThreatBot (X) wins: Human (O) resigned."
    qtbot.waitUntil(lambda: not window.seat_bar.resign_button.isVisible(), timeout=WAIT_MS)


def test_two_people_hear_of_each_others_drop_and_return(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    connect(qtbot, window, server_url)
    window.setup.set_values(
        FormValues(x=SeatChoice("human", name="Ann"), o=SeatChoice("human", name="Bob"))
    )
    window.setup.new_game_button.click()
    controller = window.controller
    qtbot.waitUntil(
        lambda: len(controller.seats) == 2 and all(e.connected for e in controller.seats),
        timeout=WAIT_MS,
    )
    seen: list[str] = []
    banners: list[str] = []

    def news(side: str, connected: bool, ms: int) -> None:
        # Connected after the window's own slot: the banner already shows the news.
        seen.append(f"{side} {connected} {ms > 0}")
        banners.append(window.seat_bar.banner.text())

    controller.opponentStatus.connect(news)
    bob = next(entry for entry in controller.seats if entry.side == "o")
    assert bob.link is not None
    bob.link.close()  # Bob's connection drops; the client takes the seat back
    qtbot.waitUntil(lambda: "o False True" in seen, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "o True False" in seen, timeout=WAIT_MS)
    # The banner said so: Bob dropped with a minute to come back, then he was back.
    assert banners[0] == "Bob disconnected \u2014 60 s to come back"
    assert window.seat_bar.banner.text() == "Bob is back"
    assert window.seat_bar.banner.isVisible()

"""Secondary text (a bot's details, the connection state, hints, a provisional rating)
reads well: its colour stands 4.5:1 against the background it is drawn on (WCAG AA),
measured on the pixels the real window draws. It was Qt's ``palette(dark)``, a shade for
bevels: 2.3:1; the leaderboard's provisional ratings were #7f8c8d on white: 3.5:1."""

from __future__ import annotations

from collections import Counter

from PyQt5.QtGui import QColor, QImage, QPalette
from PyQt5.QtWidgets import QComboBox, QLabel, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from game import notation
from models import Meta, PlayerType, RecordPlayer
from tests.http_json import get_ok, post_ok
from tests.test_ui_app import WAIT_MS
from ui.leaderboard import RATING_COLUMN
from ui.listing import listing_bar
from ui.main_window import MainWindow
from ui.text_style import contrast_ratio, secondary_text_color

#: WCAG AA for text of ordinary size.
READABLE = 4.5


def text_contrast(widget: QWidget) -> float:
    """The contrast of the text ``widget`` draws (``image_contrast``)."""
    return image_contrast(widget.grab().toImage())


def image_contrast(image: QImage) -> float:
    """The contrast of the text drawn in ``image``: its most common colour is the
    background, the colour farthest from it the text (the cores of the letters)."""
    counts = Counter(image.pixel(x, y) for x in range(image.width()) for y in range(image.height()))
    background = QColor(counts.most_common(1)[0][0])
    return max(contrast_ratio(QColor(pixel), background) for pixel in counts)


def test_the_secondary_colour_is_readable_on_a_light_and_a_dark_window() -> None:
    for text, window in (("#000000", "#efefef"), ("#ffffff", "#353535"), ("#000", "#fff")):
        palette = QPalette()
        palette.setColor(QPalette.ColorRole.WindowText, QColor(text))
        palette.setColor(QPalette.ColorRole.Window, QColor(window))
        secondary = secondary_text_color(palette)
        assert contrast_ratio(secondary, QColor(window)) >= READABLE, (text, window)
        # Still set apart from the main text.
        assert secondary != QColor(text)


def test_the_panel_s_secondary_text_is_readable(window: MainWindow) -> None:
    record = notation.loads("version[2] playercircle[Ann]; 1. [1,0] [2,0];")
    searcher = RecordPlayer(type=PlayerType.BOT, meta=Meta(name="SearchBot", tags=["search"]))
    window.controller.show_record(record.model_copy(update={"player_x": searcher}))
    window.tabs.setCurrentIndex(0)
    panel = window.panel
    assert panel.card_x.details.text() == "Bot \u00b7 search"
    assert panel.connection.text() == "Replay"
    for label in (panel.card_x.details, panel.connection):
        assert text_contrast(label) >= READABLE, label.text()


def test_the_play_online_hint_and_a_list_s_server_are_readable(window: MainWindow) -> None:
    dialog = window.online.show_play_online()
    dialog.time_control.setCurrentText("180+2")
    assert dialog.time_hint.text() == "3 min + 2 s"
    assert text_contrast(dialog.time_hint) >= READABLE
    dialog.close()

    server = QLabel("http://127.0.0.1:8001")
    listing_bar(QComboBox(), server, QPushButton("Refresh"))
    server.show()
    assert text_contrast(server) >= READABLE
    server.close()


def test_a_provisional_rating_in_the_leaderboard_is_readable(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    # One rated game between two registered bots: both ratings are provisional.
    for name, hosted in (("Hexa", "threat"), ("Rando", "random")):
        post_ok(f"{server_url}/bots", {"name": name, "url": f"{server_url}/bots/{hosted}"})
    series = post_ok(
        f"{server_url}/series",
        {
            "player_a": {"name": "Hexa", "bot_url": f"{server_url}/bots/threat"},
            "player_b": {"name": "Rando", "bot_url": f"{server_url}/bots/random"},
            "best_of": 1,
            "openings": "none",
            "rated": True,
        },
    )
    qtbot.waitUntil(
        lambda: get_ok(f"{server_url}/series/{series['series_id']}")["status"] != "running",
        timeout=WAIT_MS,
    )
    window.setup.set_server_url(server_url)
    board = window.online.show_leaderboard()
    assert board is not None
    qtbot.waitUntil(lambda: not board.loading and len(board.entries) == 2, timeout=WAIT_MS)
    assert all(entry.provisional for entry in board.entries)
    board.table.clearSelection()  # a selected row is drawn in the selection's colours
    viewport = board.table.viewport()
    assert viewport is not None
    for row in range(2):  # a plain row and an alternate one
        item = board.table.item(row, RATING_COLUMN)
        assert item is not None and item.text().endswith(" ?")
        cell = viewport.grab(board.table.visualItemRect(item)).toImage()
        assert image_contrast(cell) >= READABLE, item.text()

"""The desktop client shows names others chose as they typed them, never as HTML.

Qt renders a label's or a tooltip's text as HTML when it looks like HTML: a player
named ``<h1>...`` would be a heading, ``<img src=...>`` an image. Run with
``QT_QPA_PLATFORM=offscreen``; a real game server on loopback.
"""

from __future__ import annotations

import json
import urllib.request

from PyQt5.QtWidgets import QLabel, QWidget
from pytestqt.qtbot import QtBot

from ui.main_window import MainWindow
from ui.plain_text import shown_text
from ui.setup_panel import FormValues, SeatChoice

WAIT_MS = 60_000
#: Names as others may give them (a ``Name``: 64 characters, no controls).
HOSTILE_X = "<h1>Evil</h1><img src=x> & <a href='javascript:alert(1)'>x</a>"
HOSTILE_O = "<table><tr><td>Big</td></tr></table>"
HOSTILE_GAME = "<b>Cup</b> <img src=/favicon.svg>"
#: Words of those names that any rendering keeps: where they are, the whole name must be.
WORDS = ("Evil", "Big", "Cup")


def _create_game(server_url: str) -> str:
    body = {
        "name": HOSTILE_GAME,
        "player_x": {"type": "bot", "bot_url": f"{server_url}/bots/threat", "name": HOSTILE_X},
        # A human seat nobody takes keeps the game running while it is looked at.
        "player_o": {"type": "human", "name": HOSTILE_O},
    }
    request = urllib.request.Request(
        f"{server_url}/game/new",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(json.loads(response.read())["game_id"])


def _misread(widget: QWidget, hostile: tuple[str, ...]) -> list[str]:
    """Every label and tooltip under ``widget`` (itself included) holding one of the
    ``hostile`` texts that a reader would not see as written."""
    wrong = []
    for each in [widget, *widget.findChildren(QWidget)]:
        if isinstance(each, QLabel) and any(h in each.text() for h in hostile):
            seen = shown_text(each.text(), each.textFormat())
            if seen != each.text():
                wrong.append(f"{each.objectName() or type(each).__name__}: {seen!r}")
        # A tooltip holds the text escaped when Qt would read it as HTML: judged as seen.
        tip = shown_text(each.toolTip())
        if any(word in tip for word in WORDS) and not any(h in tip for h in hostile):
            wrong.append(f"tooltip of {type(each).__name__}: {tip!r}")
    return wrong


def test_hostile_names_show_as_written_in_the_browser_and_the_game(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    game_id = _create_game(server_url)
    window.setup.set_server_url(server_url)
    window.connect_server(server_url)
    window.show_browser()
    browser = window.browser
    assert browser is not None
    browser.refresh()
    qtbot.waitUntil(lambda: any(s.game_id == game_id for s in browser.summaries), timeout=WAIT_MS)
    row = next(i for i, s in enumerate(browser.summaries) if s.game_id == game_id)
    item = browser.table.item(row, 1)
    assert item is not None and shown_text(item.toolTip()) == HOSTILE_GAME
    browser.activate(row)
    qtbot.waitUntil(
        lambda: window.controller.model is not None and window.controller.model.game_id == game_id,
        timeout=WAIT_MS,
    )
    qtbot.wait(50)  # the layout settles: the long name is cut, whole in its tooltip
    panel = window.panel
    assert panel.card_x.name.full_text() == HOSTILE_X
    assert panel.card_o.name.full_text() == HOSTILE_O
    assert _misread(window, (HOSTILE_X, HOSTILE_O, HOSTILE_GAME)) == []
    assert shown_text(panel.card_x.name.toolTip()) == HOSTILE_X
    browser.close()


def test_an_error_the_server_echoes_shows_as_written(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    """A bot URL is echoed back in the server's refusal: ``<img ...>`` stays text."""
    window.setup.set_server_url(server_url)
    window.connect_server(server_url)
    qtbot.waitUntil(lambda: window.setup.seat_o.kind.count() > 2, timeout=WAIT_MS)
    hostile_url = "http://<img src=x>.invalid/"
    window.setup.set_values(
        FormValues(x=SeatChoice("url", bot_url=hostile_url), o=SeatChoice("human"))
    )
    window.setup.new_game_button.click()
    shown = [window.setup.error, window.panel.status]
    qtbot.waitUntil(
        lambda: (
            any("<img src=x>" in label.text() for label in shown)
            or "<img src=x>" in window.panel.message.text()
        ),
        timeout=WAIT_MS,
    )
    assert _misread(window, ("<img src=x>",)) == []

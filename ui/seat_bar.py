"""The bar above the side panel while a person plays: Resign, and news of the opponent.

``SeatBar`` shows a Resign button while this screen holds a seat in a running game,
and a banner from the server's ``opponent_status`` packets: "Your opponent
disconnected — 45 s to come back" counting down, then "Your opponent is back". The
button only asks: ``resignRequested`` is emitted, the window confirms and resigns.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PyQt5.QtCore import QTimer, pyqtSignal
from PyQt5.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from ui.plain_text import PlainLabel

_STYLES = {
    "warning": "QLabel { color: #7a5200; background: #fff6e0; border: 1px solid #e8c46a;"
    " border-radius: 4px; padding: 6px; }",
    "info": "QLabel { color: #1d5e2a; background: #e9f6ec; border: 1px solid #9fd2ab;"
    " border-radius: 4px; padding: 6px; }",
}


def describe_opponent(connected: bool, seconds_left: float | None, name: str = "") -> str:
    """The banner's text.

    >>> describe_opponent(False, 44.2, "Bob")
    'Bob disconnected \u2014 45 s to come back'
    >>> describe_opponent(False, None), describe_opponent(True, None, "Bob")
    ('Your opponent disconnected', 'Bob is back')
    >>> describe_opponent(False, 0)
    'Your opponent disconnected \u2014 the time to come back is over'
    """
    who = name or "Your opponent"
    if connected:
        return f"{who} is back"
    if seconds_left is None:
        return f"{who} disconnected"
    if seconds_left <= 0:
        return f"{who} disconnected \u2014 the time to come back is over"
    return f"{who} disconnected \u2014 {int(seconds_left + 0.999)} s to come back"


class SeatBar(QWidget):
    """See the module's doc."""

    resignRequested = pyqtSignal()

    def __init__(
        self, parent: QWidget | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(parent)
        self._now = clock
        self._deadline: float | None = None
        self._name = ""
        self.banner = PlainLabel("")
        self.banner.setObjectName("opponent_banner")
        self.banner.setWordWrap(True)
        self.banner.hide()
        self.resign_button = QPushButton("Resign")
        self.resign_button.setObjectName("resign")
        self.resign_button.setToolTip("Give up this game (you are asked first)")
        self.resign_button.clicked.connect(self.resignRequested.emit)
        self.resign_button.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addStretch(1)
        row.addWidget(self.resign_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.banner)
        layout.addLayout(row)
        self.timer = QTimer(self)
        self.timer.setInterval(250)
        self.timer.timeout.connect(self._tick)

    def set_playing(self, playing: bool) -> None:
        """A person at this screen holds a seat in a running game (or no longer)."""
        self.resign_button.setVisible(playing)
        self.resign_button.setEnabled(playing)
        if not playing:
            self.clear()

    def opponent_status(self, connected: bool, reconnect_ms: int | None, name: str = "") -> None:
        """The opponent dropped (``reconnect_ms`` to come back) or came back."""
        self._name = name
        if connected:
            self._deadline = None
            self.timer.stop()
            self._show(describe_opponent(True, None, name), "info")
            return
        self._deadline = None if reconnect_ms is None else self._now() + reconnect_ms / 1000
        self._tick()
        if self._deadline is not None:
            self.timer.start()

    def clear(self) -> None:
        """No news: the banner goes."""
        self._deadline = None
        self.timer.stop()
        self.banner.hide()

    def _tick(self) -> None:
        left = None if self._deadline is None else self._deadline - self._now()
        self._show(describe_opponent(False, left, self._name), "warning")
        if left is not None and left <= 0:
            self.timer.stop()

    def _show(self, text: str, level: str) -> None:
        self.banner.setText(text)
        self.banner.setProperty("level", level)
        self.banner.setStyleSheet(_STYLES[level])
        self.banner.show()

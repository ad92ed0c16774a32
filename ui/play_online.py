"""The "Play online" dialog: queue for a game against another person (or, after a wait
the person chose, a ladder bot of similar rating).

Two pages. The form: the server, the name to play under, the time control, and "play a
bot if nobody comes after N s" (off: people only). "Find a game" joins the server's
queue (``ui.online.QueueLink``); the waiting page then shows how many people wait, how
long this person has waited, their rating, and Cancel. "Challenge link" opens a
challenge instead: the waiting page shows its link to send to a friend (who opens it
with ``htttx-ui --open LINK`` or in the browser). On ``matched`` the dialog emits
``matched(base_url, Matched)`` and closes; the main window seats the person in the
game. Problems — an unreachable server, a name taken by someone else, a wrong token —
bring the form back with the reason. A connection that drops while the person waits in
the queue (the server restarts) is made again by the link: the waiting page says
"Connection lost — reconnecting (attempt N)…", keeps counting the time waited since the
person first joined, and shows the server's new countdown to a bot once back in. A
person waiting on their open challenge is seated as soon as the link sees it accepted.

The person token the server hands out the first time a name is used is saved per
server (``Settings.set_online_player``), and sent with that name from then on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from PyQt5.QtCore import Qt, QTimer, pyqtSignal
from PyQt5.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from models import TimeControl, TimeControlError
from ui.net import Network
from ui.online import QueueLink
from ui.plain_text import PlainLabel
from ui.queue_client import (
    ChallengeCreated,
    Matched,
    QueueInputError,
    QueueWaiting,
    check_time_control,
)
from ui.server_address import ServerAddressError, normalize_server_url
from ui.settings import Settings
from ui.text_style import secondary_text_style

#: Time controls offered (any other can be typed): (text, label).
TIME_CONTROLS: tuple[tuple[str, str], ...] = (
    ("180+2", "3 min + 2 s"),
    ("300", "5 min a side"),
    ("600+5", "10 min + 5 s"),
    ("turn=30", "30 s a move"),
    ("none", "no clock"),
)
DEFAULT_BOT_AFTER_S = 30


def format_waited(seconds: float) -> str:
    """Time waited as ``m:ss``.

    >>> format_waited(7.9), format_waited(754)
    ('0:07', '12:34')
    """
    whole = max(int(seconds), 0)
    return f"{whole // 60}:{whole % 60:02d}"


def describe_waiting(waiting: QueueWaiting) -> str:
    """The waiting page's line about the queue.

    >>> describe_waiting(QueueWaiting(1, 1500, 0))
    'You are the only one waiting.'
    >>> describe_waiting(QueueWaiting(3, None, 0))
    '3 players waiting (you included).'
    """
    if waiting.players_waiting <= 1:
        return "You are the only one waiting."
    return f"{waiting.players_waiting} players waiting (you included)."


def describe_time_control(text: str) -> str:
    """A time control in words, for the waiting page.

    >>> describe_time_control("180+2"), describe_time_control("turn=30")
    ('3 min + 2 s', '30 s a move')
    >>> describe_time_control("45"), describe_time_control("none")
    ('45 s a side', 'no clock')
    """
    for known, label in TIME_CONTROLS:
        if known == text:
            return label
    try:
        control = TimeControl.parse(text)
    except TimeControlError:
        return "not a time control"
    if control.clock_type == "none" or control.clock is None:
        return "no clock" if control.stall_limit is None else text
    clock = f"{control.clock:g} s"
    if control.clock_type == "turn":
        return f"{clock} a move"
    if control.clock_type == "incremental":
        return f"{clock} + {control.increment:g} s"
    return f"{clock} a side"


@dataclass(frozen=True)
class OnlineForm:
    """What the form holds: the time control as typed, ``bot_after_s`` None for people
    only."""

    server_url: str
    name: str
    time_control: str
    bot_after_s: int | None

    def to_settings(self) -> dict[str, Any]:
        return {
            "server_url": self.server_url,
            "time_control": self.time_control,
            "bot_after_s": self.bot_after_s,
        }


class PlayOnlineDialog(QDialog):
    """See the module's doc. ``matched(base_url, Matched)`` when a game is found."""

    matched = pyqtSignal(str, object)

    def __init__(self, network: Network, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.network = network
        self.settings = settings
        self.link: QueueLink | None = None
        self.last_waiting: QueueWaiting | None = None
        self._waiting_since: float | None = None
        self._bot_at: float | None = None
        self.setWindowTitle("Play online")
        self.setMinimumSize(580, 300)

        # ---- the form
        self.server = QLineEdit()
        self.server.setObjectName("online_server")
        self.server.setPlaceholderText("http://127.0.0.1:8001")
        self.server.editingFinished.connect(self._server_changed)
        self.name = QLineEdit()
        self.name.setObjectName("online_name")
        self.name.setPlaceholderText("the name others see")
        self.name.setMaxLength(40)
        self.time_control = QComboBox()
        self.time_control.setEditable(True)
        for text, label in TIME_CONTROLS:
            self.time_control.addItem(text, label)
        self.time_control.setToolTip(
            "Seconds per side ('300'), with an increment ('180+2'), per move ('turn=30') or 'none'"
        )
        self.bot_after = QCheckBox("Play a bot if nobody comes within")
        self.bot_wait = QSpinBox()
        self.bot_wait.setRange(0, 3600)
        self.bot_wait.setSuffix(" s")
        self.bot_wait.setValue(DEFAULT_BOT_AFTER_S)
        self.bot_after.toggled.connect(self.bot_wait.setEnabled)
        self.time_hint = PlainLabel("")
        self.time_hint.setObjectName("online_time_hint")
        self.time_hint.setStyleSheet(secondary_text_style())
        self.time_hint.setMinimumWidth(120)
        self.time_control.currentTextChanged.connect(
            lambda text: self.time_hint.setText(describe_time_control(text.strip()))
        )
        time_row = QHBoxLayout()
        time_row.setSpacing(10)
        time_row.addWidget(self.time_control, 1)
        time_row.addWidget(self.time_hint)
        bot_row = QHBoxLayout()
        bot_row.setSpacing(10)
        bot_row.addWidget(self.bot_after)
        bot_row.addWidget(self.bot_wait)
        bot_row.addStretch(1)
        self.identity = PlainLabel("")
        self.identity.setObjectName("online_identity")
        self.identity.setWordWrap(True)
        self.identity.setStyleSheet(secondary_text_style())
        self.error = PlainLabel("")
        self.error.setObjectName("online_error")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.setStyleSheet("color: #b00020;")
        self.error.hide()
        self.find_button = QPushButton("Find a game")
        self.find_button.setObjectName("find_game")
        self.find_button.setDefault(True)
        self.find_button.clicked.connect(self.find_game)
        self.challenge_button = QPushButton("Challenge link")
        self.challenge_button.setObjectName("create_challenge")
        self.challenge_button.setToolTip(
            "Open a game with a free seat and get its link to send to a friend"
        )
        self.challenge_button.clicked.connect(self.create_challenge)
        close_button = QPushButton("Close")
        close_button.clicked.connect(self.hide)

        form_page = QWidget()
        form = QFormLayout()
        form.addRow("Server", self.server)
        form.addRow("Your name", self.name)
        form.addRow("", self.identity)
        form.addRow("Time control", time_row)
        form.addRow("", bot_row)
        buttons = QHBoxLayout()
        buttons.addWidget(self.challenge_button)
        buttons.addStretch(1)
        buttons.addWidget(close_button)
        buttons.addWidget(self.find_button)
        form_layout = QVBoxLayout(form_page)
        form_layout.setContentsMargins(0, 0, 0, 0)
        form_layout.addLayout(form)
        form_layout.addWidget(self.error)
        form_layout.addStretch(1)
        form_layout.addLayout(buttons)

        # ---- the waiting page
        self.headline = PlainLabel("Looking for an opponent\u2026")
        self.headline.setObjectName("online_headline")
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        self.headline.setFont(font)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # an endless "busy" bar
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(8)
        self.queue_state = PlainLabel("Joining the queue\u2026")
        self.queue_state.setObjectName("online_queue_state")
        self.queue_state.setWordWrap(True)
        self.details = PlainLabel("")
        self.details.setObjectName("online_details")
        self.details.setStyleSheet(secondary_text_style())
        self.waited = PlainLabel("")
        self.waited.setObjectName("online_waited")
        self.rating = PlainLabel("")
        self.rating.setObjectName("online_rating")
        self.rating.setStyleSheet(secondary_text_style())
        self.bot_note = PlainLabel("")
        self.bot_note.setWordWrap(True)
        self.bot_note.setStyleSheet(secondary_text_style())
        self.challenge_link = QLineEdit()
        self.challenge_link.setObjectName("challenge_link")
        self.challenge_link.setReadOnly(True)
        self.copy_button = QPushButton("Copy")
        self.copy_button.clicked.connect(self._copy_link)
        self.link_row = QWidget()
        link_layout = QHBoxLayout(self.link_row)
        link_layout.setContentsMargins(0, 0, 0, 0)
        link_layout.addWidget(self.challenge_link, 1)
        link_layout.addWidget(self.copy_button)
        self.link_row.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancel_queue")
        self.cancel_button.clicked.connect(self.cancel)
        wait_page = QWidget()
        wait_layout = QVBoxLayout(wait_page)
        wait_layout.setContentsMargins(0, 0, 0, 0)
        wait_layout.setSpacing(8)
        wait_layout.addWidget(self.headline)
        wait_layout.addWidget(self.details)
        wait_layout.addWidget(self.busy)
        wait_layout.addWidget(self.queue_state)
        wait_layout.addWidget(self.waited)
        wait_layout.addWidget(self.rating)
        wait_layout.addWidget(self.bot_note)
        wait_layout.addWidget(self.link_row)
        wait_layout.addStretch(1)
        cancel_row = QHBoxLayout()
        cancel_row.addStretch(1)
        cancel_row.addWidget(self.cancel_button)
        wait_layout.addLayout(cancel_row)

        self.pages = QStackedWidget()
        self.pages.addWidget(form_page)
        self.pages.addWidget(wait_page)
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages)

        self.timer = QTimer(self)
        self.timer.setInterval(500)
        self.timer.timeout.connect(self._tick)
        self._restore()
        self.time_hint.setText(describe_time_control(self.time_control.currentText().strip()))

    # ------------------------------------------------------------------ form

    def _restore(self) -> None:
        saved = self.settings.online
        server = saved.get("server_url")
        self.server.setText(server if isinstance(server, str) else self.settings.server_url)
        time_control = saved.get("time_control")
        self.time_control.setCurrentText(
            time_control if isinstance(time_control, str) else TIME_CONTROLS[1][0]
        )
        bot_after = saved.get("bot_after_s", DEFAULT_BOT_AFTER_S)
        self.bot_after.setChecked(isinstance(bot_after, int))
        self.bot_wait.setEnabled(self.bot_after.isChecked())
        if isinstance(bot_after, int):
            self.bot_wait.setValue(bot_after)
        self._server_changed()

    def set_server(self, url: str) -> None:
        self.server.setText(url)
        self._server_changed()

    def _server_changed(self) -> None:
        """Show the name (and whether a token proves it) saved for this server."""
        try:
            base = normalize_server_url(self.server.text() or self.server.placeholderText())
        except ServerAddressError:
            self.identity.setText("")
            return
        name, token = self.settings.online_player(base)
        if name and not self.name.text().strip():
            self.name.setText(name)
        if name and token:
            self.identity.setText(f"You play as {name} on this server (your token is saved).")
        else:
            self.identity.setText(
                "A new name is yours once you play: the server hands out "
                "a token, which this client keeps."
            )

    def values(self) -> OnlineForm:
        return OnlineForm(
            server_url=self.server.text().strip() or self.server.placeholderText(),
            name=self.name.text().strip(),
            time_control=self.time_control.currentText().strip(),
            bot_after_s=self.bot_wait.value() if self.bot_after.isChecked() else None,
        )

    def show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))

    # ------------------------------------------------------------------ queue

    def find_game(self) -> None:
        """Join the queue with the form's values, or say what is wrong with them."""
        self._start(challenge=False)

    def create_challenge(self) -> None:
        """Open a challenge with the form's name and time control; its link is shown
        on the waiting page until someone accepts it."""
        self._start(challenge=True)

    def _start(self, *, challenge: bool) -> None:
        if self.link is not None and self.link.active:
            return
        form = self.values()
        try:
            base = normalize_server_url(form.server_url)
            time_control = check_time_control(form.time_control)
        except (ServerAddressError, QueueInputError) as error:
            self.show_error(str(error))
            return
        saved_name, saved_token = self.settings.online_player(base)
        token = saved_token if saved_name.casefold() == form.name.casefold() else None
        link = QueueLink(self.network, base, self)
        try:
            if challenge:
                link.create_challenge(form.name, token, time_control)
            else:
                link.join(form.name, token, time_control, form.bot_after_s)
        except QueueInputError as error:
            self.show_error(str(error))
            link.deleteLater()
            return
        self.settings.online = form.to_settings()
        self.link = link
        link.tokenIssued.connect(lambda name, token: self._token(base, name, token))
        link.waiting.connect(self._waiting)
        link.challengeCreated.connect(self._challenge_created)
        link.matched.connect(lambda matched: self._matched(base, form.name, token, matched))
        link.reconnecting.connect(self._reconnecting)
        link.failed.connect(self._failed)
        self.show_error("")
        self.last_waiting = None
        self._waiting_since = time.monotonic()
        self._bot_at = None
        self.queue_state.setText(f"Joining the queue of {base}\u2026")
        self.waited.setText("")
        self.rating.setText("")
        self.bot_note.setText(
            "People only: you wait until someone comes."
            if form.bot_after_s is None
            else f"If nobody comes within {form.bot_after_s} s, you play a bot of your strength."
        )
        self.link_row.hide()
        self.challenge_link.clear()
        self.details.setText(
            f"{form.name} \u00b7 {describe_time_control(time_control)} \u00b7 {base}"
        )
        self.headline.setText("Looking for an opponent\u2026")
        if challenge:
            self.headline.setText("Opening a challenge\u2026")
            self.queue_state.setText(f"Asking {base} for a challenge link\u2026")
            self.bot_note.setText("")
        self.pages.setCurrentIndex(1)
        self.timer.start()
        self._tick()

    @property
    def waiting_page(self) -> bool:
        """Whether the waiting page is shown."""
        return self.pages.currentIndex() == 1

    def cancel(self) -> None:
        """Leave the queue and go back to the form."""
        if self.link is not None:
            self.link.leave()
            self.link = None
        self.timer.stop()
        self.pages.setCurrentIndex(0)

    def _token(self, base: str, name: str, token: str) -> None:
        self.settings.set_online_player(base, name, token)
        self.settings.sync()

    def _waiting(self, waiting: QueueWaiting) -> None:
        self.last_waiting = waiting
        now = time.monotonic()
        # After a reconnect the server counts from the new join: the person's wait
        # started with the first one.
        since = now - waiting.since_ms / 1000
        self._waiting_since = (
            since if self._waiting_since is None else min(self._waiting_since, since)
        )
        self._bot_at = None if waiting.bot_in_ms is None else now + waiting.bot_in_ms / 1000
        self.queue_state.setText(describe_waiting(waiting))
        if waiting.rating is not None:
            self.rating.setText(f"Your rating: {waiting.rating:.0f}")
        self._tick()

    def _reconnecting(self, attempt: int, delay_s: float) -> None:
        if self.link is not None and self.link.client.challenge is not None:
            self.queue_state.setText(
                "Connection lost \u2014 your link still works; checking whether someone "
                f"accepted (attempt {attempt})\u2026"
            )
        else:
            self.queue_state.setText(
                f"Connection lost \u2014 reconnecting (attempt {attempt})\u2026"
            )
        if self._bot_at is not None:
            self._bot_at = None
            self.bot_note.setText("The wait for a bot starts again once back in the queue.")

    def _challenge_created(self, created: ChallengeCreated) -> None:
        self.headline.setText("Waiting for someone to accept")
        self.queue_state.setText(
            "Send this link to your opponent: they open it in the browser or with "
            "htttx-ui --open LINK. The game starts when they accept."
        )
        self.challenge_link.setText(created.url)
        self.link_row.show()

    def _copy_link(self) -> None:
        clipboard = QApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.challenge_link.text())

    def _tick(self) -> None:
        now = time.monotonic()
        if self._waiting_since is not None:
            waited = format_waited(now - self._waiting_since)
            self.waited.setText(f"Waited {waited}")
        if self._bot_at is not None:
            left = format_waited(max(self._bot_at - now, 0) + 0.999)
            self.bot_note.setText(f"If nobody comes, you play a bot of your strength in {left}.")

    def _matched(self, base: str, name: str, token: str | None, matched: Matched) -> None:
        self.timer.stop()
        saved_name, saved_token = self.settings.online_player(base)
        if saved_name.casefold() != name.casefold() or saved_token is None:
            self.settings.set_online_player(base, name, token or saved_token)
        self.link = None
        self.headline.setText(f"Playing {matched.opponent.name}")
        self.pages.setCurrentIndex(0)
        self.matched.emit(base, matched)
        self.hide()

    def _failed(self, text: str) -> None:
        self.timer.stop()
        self.link = None
        self.pages.setCurrentIndex(0)
        self.show_error(text)

    def reject(self) -> None:
        """Esc (or the window's close button): leave the queue too."""
        self.cancel()
        super().reject()

    def closeEvent(self, event: Any) -> None:
        self.cancel()
        super().closeEvent(event)

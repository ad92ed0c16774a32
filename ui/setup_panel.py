"""The "New game" form: server, the two seats and the match settings.

The form's state is a plain ``FormValues``; ``build_request`` turns it into the
``POST /game/new`` body or a ``FormError`` whose message is one readable sentence
(the panel shows it under the form, it never escapes as an exception). Both are pure
and tested without Qt; ``SetupPanel`` is only the widgets around them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

from pydantic import ValidationError
from PyQt5.QtCore import QEvent, QObject, QSize, Qt, pyqtSignal
from PyQt5.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from models import (
    DEFAULT_TURN_LIMIT,
    MAX_HEARTBEAT_MS,
    MAX_HOSTED_VIEW_DISTANCE,
    MAX_TURN_LIMIT,
    Match,
    Meta,
    NewGameRequest,
    PlayerConfig,
    PlayerType,
)
from ui.plain_text import PlainLabel
from ui.server_address import ServerAddressError, split_address
from ui.stones import stone_icon

SeatKind = Literal["human", "hosted", "url"]
CLOCK_TYPES: tuple[tuple[str, str], ...] = (
    ("none", "No clock"),
    ("turn", "Per move"),
    ("match", "Per game"),
    ("incremental", "Per game + increment"),
)
BOT_URL_SCHEMES = ("http", "https", "ws", "wss")
#: Hosted bots to offer first when a seat is set to "a hosted bot" (strongest first).
PREFERRED_BOTS = ("threat", "center", "random")


class FormError(ValueError):
    """The form cannot make a valid game; the message says what to fix, in one sentence."""


@dataclass(frozen=True)
class SeatChoice:
    """Who sits on one side: a person at this screen, a bot the server hosts, or any bot
    by URL. ``bot_url`` is the hosted bot's URL for ``hosted``, what was typed for
    ``url`` and ignored for ``human``."""

    kind: SeatKind = "human"
    bot_url: str = ""
    name: str = ""


@dataclass(frozen=True)
class FormValues:
    """Everything the form holds, in the units the person typed (seconds, milliseconds;
    0 turns for "no turn limit")."""

    x: SeatChoice = field(default_factory=SeatChoice)
    o: SeatChoice = field(default_factory=lambda: SeatChoice("hosted", ""))
    view_distance: int = 8
    win_distance: int = 6
    clock_type: str = "none"
    clock_seconds: float = 300.0
    increment_seconds: float = 5.0
    turn_limit: int = 0
    heartbeat_ms: int = 5000

    def to_settings(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(seats, match) as JSON-able dicts for ``Settings``."""
        seats = {"x": asdict(self.x), "o": asdict(self.o)}
        match = {k: v for k, v in asdict(self).items() if k not in ("x", "o")}
        return seats, match

    @classmethod
    def from_settings(cls, seats: Mapping[str, Any], match: Mapping[str, Any]) -> FormValues:
        """Rebuild from ``to_settings`` output; anything missing or of the wrong type
        keeps its default, so an old or damaged settings file is harmless."""
        default = cls()

        def seat(raw: Any, fallback: SeatChoice) -> SeatChoice:
            if not isinstance(raw, Mapping) or raw.get("kind") not in ("human", "hosted", "url"):
                return fallback
            return SeatChoice(
                kind=raw["kind"],
                bot_url=str(raw.get("bot_url", "")),
                name=str(raw.get("name", "")),
            )

        def number(key: str, kind: type[int] | type[float]) -> Any:
            value = match.get(key, getattr(default, key))
            if isinstance(value, bool) or not isinstance(value, int | float):
                return getattr(default, key)
            return kind(value)

        clock_type = match.get("clock_type")
        return cls(
            x=seat(seats.get("x"), default.x),
            o=seat(seats.get("o"), default.o),
            view_distance=number("view_distance", int),
            win_distance=number("win_distance", int),
            clock_type=clock_type if clock_type in dict(CLOCK_TYPES) else default.clock_type,
            clock_seconds=number("clock_seconds", float),
            increment_seconds=number("increment_seconds", float),
            turn_limit=number("turn_limit", int),
            heartbeat_ms=number("heartbeat_ms", int),
        )


# --------------------------------------------------------------------- pure core

_SIDE_LABEL = {"player_x": "Player X", "player_o": "Player O"}
_FIELD_LABEL = {
    "bot_url": "bot URL",
    "name": "name",
    "type": "seat",
    "heartbeat": "heartbeat",
    "view_distance": "view distance",
    "win_distance": "win distance",
    "turn_limit": "turn limit",
    "clock_type": "clock",
    "clock": "clock time",
    "increment": "increment",
}


def describe_validation_error(error: ValidationError) -> str:
    """A pydantic error as a sentence: "Player X bot URL: …; win distance: …"."""
    parts: list[str] = []
    for problem in error.errors(include_url=False):
        where = [
            _SIDE_LABEL.get(str(part)) or _FIELD_LABEL.get(str(part), str(part))
            for part in problem["loc"]
            if part != "match_config"
        ]
        message = str(problem["msg"]).removeprefix("Value error, ")
        # pydantic's own phrasing ("Input should be ...") reads better lower-cased mid-sentence.
        if message[:1].isupper() and not message.startswith("X") and not message.startswith("O"):
            message = message[:1].lower() + message[1:]
        parts.append(f"{' '.join(where)}: {message}" if where else message)
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _check_bot_url(side: str, url: str) -> str:
    url = url.strip()
    if not url:
        raise FormError(f"Player {side}: enter the bot's address, e.g. http://127.0.0.1:8080.")
    try:
        parts = split_address(url)
    except ServerAddressError as error:
        raise FormError(f"Player {side}: {error}.") from None
    if parts.scheme not in BOT_URL_SCHEMES or not parts.netloc:
        raise FormError(
            f"Player {side}: {url!r} is not a bot address; "
            "it should start with http://, https://, ws:// or wss://."
        )
    return url


def _player(side: str, seat: SeatChoice) -> PlayerConfig:
    name = seat.name.strip() or None
    if seat.kind == "human":
        return PlayerConfig(type=PlayerType.HUMAN, name=name)
    if seat.kind == "hosted" and not seat.bot_url.strip():
        raise FormError(
            f"Player {side}: choose a bot — connect to the server to load its bots, "
            "or pick \u201cBot at URL\u201d."
        )
    return PlayerConfig(type=PlayerType.BOT, bot_url=_check_bot_url(side, seat.bot_url), name=name)


def build_request(values: FormValues) -> NewGameRequest:
    """The ``POST /game/new`` body for the form, or ``FormError`` saying what is wrong.

    >>> build_request(FormValues(o=SeatChoice("human"))).player_o.type.value
    'human'
    """
    timed = values.clock_type != "none"
    try:
        match = Match(
            view_distance=values.view_distance,
            win_distance=values.win_distance,
            heartbeat=values.heartbeat_ms,
            turn_limit=values.turn_limit if values.turn_limit > 0 else None,
            clock_type=values.clock_type,  # checked by pydantic
            clock=float(values.clock_seconds) if timed else None,
            increment=float(values.increment_seconds)
            if values.clock_type == "incremental"
            else 0.0,
        )
        return NewGameRequest(
            player_x=_player("X", values.x),
            player_o=_player("O", values.o),
            match_config=match,
        )
    except ValidationError as error:
        raise FormError(describe_validation_error(error)) from None


# ------------------------------------------------------------------------ widgets


class HostedBotLike(Protocol):
    """What the panel needs of a hosted bot (``models.HostedBot`` has it)."""

    @property
    def name(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def meta(self) -> Meta | None: ...


def bot_tooltip(name: str, meta: Meta | None) -> str:
    """A hosted bot's capabilities meta as tooltip text."""
    if meta is None:
        return name
    lines = [f"{meta.name or name}" + (f" {meta.version}" if meta.version else "")]
    if meta.description:
        lines.append(meta.description)
    if meta.authors:
        lines.append("by " + ", ".join(meta.authors))
    if meta.tags:
        lines.append("tags: " + ", ".join(meta.tags))
    return "\n".join(lines)


class SeatEditor(QWidget):
    """One seat: a combo (Human / each hosted bot / Bot at URL), a URL field, a name."""

    def __init__(self, side: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.side = side
        self.kind = QComboBox()
        self.kind.setObjectName(f"seat_{side.lower()}_kind")
        # Long bot names must not widen the side panel: the combo elides instead.
        self.kind.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLength)
        self.kind.setMinimumContentsLength(8)
        self.url = QLineEdit()
        self.url.setObjectName(f"seat_{side.lower()}_url")
        self.url.setPlaceholderText("http://host:port/bot")
        self.name = QLineEdit()
        self.name.setObjectName(f"seat_{side.lower()}_name")
        self.name.setPlaceholderText("Name")
        self.name.setToolTip("A name to show for this player (optional)")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        row = QHBoxLayout()
        row.addWidget(self.kind, 3)
        row.addWidget(self.name, 2)
        layout.addLayout(row)
        layout.addWidget(self.url)
        self._wanted: SeatChoice | None = None
        self._fill([])
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self.kind.activated.connect(self._chosen)
        self._kind_changed()

    def _fill(self, bots: Sequence[HostedBotLike], keep: SeatChoice | None = None) -> None:
        self.kind.blockSignals(True)
        self.kind.clear()
        self.kind.addItem("Human", ("human", ""))
        for bot in bots:
            label = f"Bot: {bot.meta.name if bot.meta and bot.meta.name else bot.name}"
            self.kind.addItem(label, ("hosted", bot.url))
            self.kind.setItemData(
                self.kind.count() - 1, bot_tooltip(bot.name, bot.meta), Qt.ItemDataRole.ToolTipRole
            )
        self.kind.addItem("Bot at URL\u2026", ("url", ""))
        self.kind.blockSignals(False)
        if keep is not None:
            self.set_choice(keep)

    def set_bots(self, bots: Sequence[HostedBotLike]) -> None:
        """Refill the combo with the server's bots, keeping the current choice if it is
        still there (a hosted bot no longer offered becomes "Bot at URL"). A seat set to
        "a hosted bot" before any were known gets the strongest one offered."""
        keep = self._wanted if self._wanted is not None else self.choice()
        if keep.kind == "hosted" and not keep.bot_url and bots:
            preferred = [bot for bot in bots if bot.name in PREFERRED_BOTS]
            preferred.sort(key=lambda bot: PREFERRED_BOTS.index(bot.name))
            keep = SeatChoice("hosted", (preferred or list(bots))[0].url, keep.name)
        self._wanted = None
        self._fill(bots, keep=keep)

    def choice(self) -> SeatChoice:
        kind: SeatKind
        kind, url = self.kind.currentData() or ("human", "")
        if kind == "url":
            url = self.url.text()
        return SeatChoice(kind=kind, bot_url=url, name=self.name.text())

    def set_choice(self, choice: SeatChoice) -> None:
        # "Some hosted bot" is remembered until the server's bots are known.
        self._wanted = choice if choice.kind == "hosted" and not choice.bot_url else None
        self.name.setText(choice.name)
        index = 0
        for i in range(self.kind.count()):
            kind, url = self.kind.itemData(i)
            if kind == choice.kind and (kind != "hosted" or url == choice.bot_url):
                index = i
                break
        else:
            if choice.kind in ("hosted", "url") and choice.bot_url:
                # A hosted bot that is not (yet) listed: keep its address as a URL seat.
                index = self.kind.count() - 1
                self.url.setText(choice.bot_url)
            elif choice.kind == "hosted":
                index = 1 if self.kind.count() > 2 else 0
        self.kind.setCurrentIndex(index)
        if choice.kind == "url":
            self.url.setText(choice.bot_url)
        self._kind_changed()

    def _chosen(self) -> None:
        self._wanted = None  # the person picked something: that is the choice now

    def _kind_changed(self) -> None:
        kind, _ = self.kind.currentData() or ("human", "")
        self.url.setVisible(kind == "url")
        self.kind.setToolTip(
            self.kind.itemData(self.kind.currentIndex(), Qt.ItemDataRole.ToolTipRole) or ""
        )


class FieldsScroll(QScrollArea):
    """Scrolls the form's fields only when the page is too short for all of them.

    Its size hint is the fields' whole height (``QScrollArea``'s own stops at about 24
    lines of text), so a tall enough page shows every field with the button right
    under them, and a short one scrolls them above the button."""

    def __init__(self, fields: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Room to spare goes under the button (the page's stretch), not into here.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setWidget(fields)
        fields.installEventFilter(self)

    def sizeHint(self) -> QSize:
        fields = self.widget()
        if fields is None:
            return super().sizeHint()
        height = fields.sizeHint().height() + 2 * self.frameWidth()
        return QSize(super().sizeHint().width(), height)

    def eventFilter(self, watched: QObject | None, event: QEvent | None) -> bool:
        if event is not None and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()  # a field shown or hidden: the hint above changed
        return super().eventFilter(watched, event)


class SetupPanel(QWidget):
    """The form, a whole page of the side panel: its fields scroll when the page is too
    short for them, and under them the error and the "New game" button stay in view
    whatever the window's height.
    ``connectRequested(url)`` asks the window to load the server's bots;
    ``newGameRequested(NewGameRequest)`` is emitted only for a valid form."""

    connectRequested = pyqtSignal(str)
    newGameRequested = pyqtSignal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        page = QVBoxLayout(self)
        page.setContentsMargins(0, 0, 0, 0)
        page.setSpacing(0)
        # The fields scroll: a short window (or a bot URL field) must not push the
        # button out of reach under the bottom edge.
        fields = QWidget()
        layout = QVBoxLayout(fields)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(8)

        server_box = QGroupBox("Server")
        server_layout = QVBoxLayout(server_box)
        row = QHBoxLayout()
        self.server = QLineEdit()
        self.server.setObjectName("server_url")
        self.server.setPlaceholderText("http://127.0.0.1:8001")
        self.server.returnPressed.connect(self._connect_clicked)
        self.connect_button = QPushButton("Connect")
        self.connect_button.setToolTip("Check the server and load the bots it hosts")
        self.connect_button.clicked.connect(self._connect_clicked)
        row.addWidget(self.server, 1)
        row.addWidget(self.connect_button)
        server_layout.addLayout(row)
        self.server_status = PlainLabel("Not connected")
        self.server_status.setObjectName("server_status")
        self.server_status.setWordWrap(True)
        server_layout.addWidget(self.server_status)
        layout.addWidget(server_box)

        players_box = QGroupBox("Players")
        grid = QGridLayout(players_box)
        grid.setColumnStretch(1, 1)
        self.seat_x = SeatEditor("X")
        self.seat_o = SeatEditor("O")
        self.side_labels: dict[str, QLabel] = {}
        for row_index, (side, editor) in enumerate((("X", self.seat_x), ("O", self.seat_o))):
            label = QLabel()
            label.setPixmap(stone_icon(side.lower(), 22).pixmap(22, 22))
            label.setToolTip(f"Player {side}" + (" (moves first)" if side == "X" else ""))
            label.setAlignment(Qt.Alignment(Qt.AlignmentFlag.AlignLeft) | Qt.AlignmentFlag.AlignTop)
            label.setStyleSheet("padding-top: 3px;")
            self.side_labels[side] = label
            grid.addWidget(label, row_index, 0)
            grid.addWidget(editor, row_index, 1)
        layout.addWidget(players_box)

        match_box = QGroupBox("Match")
        form = QFormLayout(match_box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.view_distance = QSpinBox()
        self.view_distance.setRange(1, MAX_HOSTED_VIEW_DISTANCE)
        self.view_distance.setToolTip("How far from existing stones a new stone may be placed")
        self.win_distance = QSpinBox()
        self.win_distance.setRange(2, 20)
        self.win_distance.setToolTip("Stones in a row needed to win")
        self.clock_type = QComboBox()
        self.clock_type.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLength
        )
        self.clock_type.setMinimumContentsLength(10)
        self.clock_type.setToolTip(
            "Per move: each move within the time. Per game: a total per side. "
            "Increment: a total per side, plus the increment after each move."
        )
        for value, label_text in CLOCK_TYPES:
            self.clock_type.addItem(label_text, value)
        self.clock_seconds = QDoubleSpinBox()
        self.clock_seconds.setRange(0.1, 86400.0)
        self.clock_seconds.setDecimals(1)
        self.clock_seconds.setSuffix(" s")
        self.increment = QDoubleSpinBox()
        self.increment.setRange(0.0, 3600.0)
        self.increment.setDecimals(1)
        self.increment.setSuffix(" s")
        self.increment.setToolTip("Added to the mover's clock after each move")
        self.clock_seconds.setToolTip("Seconds per move, or per side for a whole game")
        self.turn_limit = QSpinBox()
        self.turn_limit.setRange(0, MAX_TURN_LIMIT)
        self.turn_limit.setSpecialValueText(f"Default ({DEFAULT_TURN_LIMIT})")
        self.heartbeat = QSpinBox()
        self.heartbeat.setRange(100, MAX_HEARTBEAT_MS)
        self.heartbeat.setSingleStep(500)
        self.heartbeat.setSuffix(" ms")
        self.heartbeat.setToolTip("How often the server tells each seat it is still there")
        self.turn_limit.setToolTip("The game is a draw after this many moves")
        form.addRow("View distance", self.view_distance)
        form.addRow("Win distance", self.win_distance)
        form.addRow("Clock", self.clock_type)
        form.addRow("Time", self.clock_seconds)
        form.addRow("Increment", self.increment)
        form.addRow("Turn limit", self.turn_limit)
        form.addRow("Heartbeat", self.heartbeat)
        self.clock_type.currentIndexChanged.connect(self._clock_changed)
        layout.addWidget(match_box)
        layout.addStretch(1)
        self.fields_scroll = FieldsScroll(fields)
        self.fields_scroll.setObjectName("setup_scroll")
        page.addWidget(self.fields_scroll)

        # Pinned under the fields: what went wrong, and the button to try again.
        footer = QVBoxLayout()
        footer.setContentsMargins(10, 6, 10, 10)
        footer.setSpacing(8)
        self.error = PlainLabel()
        self.error.setObjectName("setup_error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00020;")
        self.error.hide()
        footer.addWidget(self.error)
        self.new_game_button = QPushButton("New game")
        self.new_game_button.setObjectName("new_game")
        self.new_game_button.setDefault(True)
        self.new_game_button.clicked.connect(self.submit)
        footer.addWidget(self.new_game_button)
        page.addLayout(footer)
        page.addStretch(1)
        self.set_values(FormValues())

    # ------------------------------------------------------------------ state

    def values(self) -> FormValues:
        return FormValues(
            x=self.seat_x.choice(),
            o=self.seat_o.choice(),
            view_distance=self.view_distance.value(),
            win_distance=self.win_distance.value(),
            clock_type=str(self.clock_type.currentData()),
            clock_seconds=self.clock_seconds.value(),
            increment_seconds=self.increment.value(),
            turn_limit=self.turn_limit.value(),
            heartbeat_ms=self.heartbeat.value(),
        )

    def set_values(self, values: FormValues) -> None:
        self.seat_x.set_choice(values.x)
        self.seat_o.set_choice(values.o)
        self.view_distance.setValue(values.view_distance)
        self.win_distance.setValue(values.win_distance)
        index = self.clock_type.findData(values.clock_type)
        self.clock_type.setCurrentIndex(max(index, 0))
        self.clock_seconds.setValue(values.clock_seconds)
        self.increment.setValue(values.increment_seconds)
        self.turn_limit.setValue(values.turn_limit)
        self.heartbeat.setValue(values.heartbeat_ms)
        self._clock_changed()

    def server_url(self) -> str:
        return self.server.text().strip() or self.server.placeholderText()

    def set_server_url(self, url: str) -> None:
        self.server.setText(url)

    def set_bots(self, bots: Sequence[HostedBotLike]) -> None:
        """Offer the server's hosted bots in both seat combos."""
        self.seat_x.set_bots(bots)
        self.seat_o.set_bots(bots)

    def set_server_status(self, text: str, *, ok: bool) -> None:
        self.server_status.setText(text)
        self.server_status.setStyleSheet("" if ok else "color: #b00020;")

    def show_error(self, text: str) -> None:
        """Show a problem under the form ("" hides it)."""
        self.error.setText(text)
        self.error.setVisible(bool(text))

    def set_busy(self, busy: bool) -> None:
        """While a game is being created the button is disabled (no double games)."""
        self.new_game_button.setEnabled(not busy)
        self.new_game_button.setText("Starting\u2026" if busy else "New game")

    # ------------------------------------------------------------------ slots

    def _clock_changed(self) -> None:
        kind = self.clock_type.currentData()
        self.clock_seconds.setEnabled(kind != "none")
        self.increment.setEnabled(kind == "incremental")

    def _connect_clicked(self) -> None:
        self.connectRequested.emit(self.server_url())

    def submit(self) -> None:
        """Validate and, if valid, emit ``newGameRequested``; otherwise show why not."""
        try:
            request = build_request(self.values())
        except FormError as error:
            self.show_error(str(error))
            return
        self.show_error("")
        self.newGameRequested.emit(request)

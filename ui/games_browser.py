"""The games browser: the server's games (``GET /games``), newest first.

A live game can be watched (spectated from its current position, with its history);
a finished or aborted one opened as a record to replay. The list is paged with the
server's cursor ("More"), filtered by status, and refreshed on demand. Every request
runs on the network thread; failures are shown in the dialog, never raised.
"""

from __future__ import annotations

from datetime import datetime

from PyQt5.QtCore import Qt, pyqtSignal
from PyQt5.QtGui import QBrush, QColor, QFont
from PyQt5.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from game.store import GamePage, GameSummary, RecordStatus
from models import GameResult, ResultReason
from ui.arena_client import ArenaClient
from ui.listing import listing_bar, listing_table
from ui.plain_text import PlainLabel, plain_tooltip
from ui.player_text import player_name
from ui.stones import O_COLOR, X_COLOR, stone_icon

PAGE_SIZE = 50
STATUS_FILTERS: tuple[tuple[str, RecordStatus | None], ...] = (
    ("All games", None),
    ("Running", RecordStatus.RUNNING),
    ("Finished", RecordStatus.FINISHED),
    ("Aborted", RecordStatus.ABORTED),
)
COLUMNS = ("Started", "Game", "X", "O", "Moves", "Result")
#: Columns by meaning (the X and O columns get stone icons, Moves is right-aligned).
X_COLUMN, O_COLUMN, MOVES_COLUMN, RESULT_COLUMN = 2, 3, 4, 5
#: Longest game name shown in the table; the tooltip has the whole name.
NAME_CHARS = 40
#: The start of a game id the Game column shows for a game without a name.
ID_CHARS = 8


def format_started(started: datetime | None) -> str:
    """Start time in the viewer's local time, to the minute ("" if unknown)."""
    if started is None:
        return ""
    if started.tzinfo is not None:
        started = started.astimezone()
    return started.strftime("%Y-%m-%d %H:%M")


def describe_outcome(status: RecordStatus, result: GameResult | None) -> str:
    """The Result column: "Live", "X wins (line)", "O wins (timeout)", "Draw", "Aborted".

    >>> describe_outcome(RecordStatus.RUNNING, None)
    'Live'
    """
    if status is RecordStatus.RUNNING:
        return "Live"
    if result is None:
        return "Aborted" if status is RecordStatus.ABORTED else "Finished"
    if result.reason is ResultReason.DRAW:
        cause = f" ({result.cause.value.replace('_', ' ')})" if result.cause else ""
        return f"Draw{cause}"
    assert result.winner is not None
    why = "line" if result.reason is ResultReason.WIN else "forfeit"
    if result.cause is not None:
        why = result.cause.value.replace("_", " ")
    return f"{result.winner.value.upper()} wins ({why})"


def game_label(summary: GameSummary) -> str:
    """The Game column: the game's name (a tournament names each of its games after
    itself, "rr: game 7 (round 2)"), shortened; without one, the start of its id (as
    the web page's links and a tournament's progress show it), so every row says which
    game it is.

    >>> from models import RecordPlayer
    >>> summary = GameSummary(game_id="3b96f0c2aa11", name="rr: game 7 (round 2)",
    ...     player_x=RecordPlayer(), player_o=RecordPlayer(), status=RecordStatus.RUNNING,
    ...     result=None, started_at=None, ended_at=None, moves=0)
    >>> game_label(summary), game_label(summary.model_copy(update={"name": "n" * 50}))[-3:]
    ('rr: game 7 (round 2)', 'nn\u2026')
    >>> game_label(summary.model_copy(update={"name": None}))
    '3b96f0c2'
    """
    if summary.name is None:
        return summary.game_id[:ID_CHARS]
    name = summary.name
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "\u2026"


def summary_row(summary: GameSummary) -> tuple[str, str, str, str, str, str]:
    """The table cells of one game."""
    return (
        format_started(summary.started_at),
        game_label(summary),
        player_name(summary.player_x, "x"),
        player_name(summary.player_o, "o"),
        str(summary.moves),
        describe_outcome(summary.status, summary.result),
    )


class GamesBrowser(QDialog):
    """Lists the games of ``client``'s server. ``watchRequested(game_id)`` for a live
    game, ``openRequested(game_id)`` for a finished one; the dialog stays open so
    several games can be looked at in turn."""

    watchRequested = pyqtSignal(str)
    openRequested = pyqtSignal(str)

    def __init__(
        self, client: ArenaClient, parent: QWidget | None = None, *, page_size: int = PAGE_SIZE
    ) -> None:
        super().__init__(parent)
        self.client = client
        self.page_size = page_size
        self.setWindowTitle("Games")
        self.resize(980, 520)
        self.summaries: list[GameSummary] = []
        self.next_cursor: str | None = None
        self._generation = 0  # answers to an older refresh are dropped
        #: A page is being fetched.
        self.loading = False

        self.status_filter = QComboBox()
        for label, _status in STATUS_FILTERS:
            self.status_filter.addItem(label)
        self.status_filter.currentIndexChanged.connect(self.refresh)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.server_label = PlainLabel()
        top = listing_bar(self.status_filter, self.server_label, self.refresh_button)

        self.table = listing_table(COLUMNS, "games_table")
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        x_header = self.table.horizontalHeaderItem(X_COLUMN)
        o_header = self.table.horizontalHeaderItem(O_COLUMN)
        assert x_header is not None and o_header is not None
        x_header.setIcon(stone_icon("x", 14))
        o_header.setIcon(stone_icon("o", 14))
        rows = self.table.verticalHeader()
        header = self.table.horizontalHeader()
        assert rows is not None and header is not None  # a QTableWidget always has both
        rows.hide()
        rows.setDefaultSectionSize(30)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(X_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(O_COLUMN, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.cellDoubleClicked.connect(lambda row, _column: self.activate(row))

        self.message = PlainLabel()
        self.message.setObjectName("browser_message")
        self.message.setWordWrap(True)
        self.more_button = QPushButton("More")
        self.more_button.setToolTip("Load older games")
        self.more_button.clicked.connect(self.load_more)
        self.open_button = QPushButton("Open")
        self.open_button.setObjectName("open_game")
        self.open_button.setDefault(True)
        self.open_button.clicked.connect(lambda: self.activate(self.table.currentRow()))
        close_button = QPushButton("Close")
        close_button.clicked.connect(self.hide)
        bottom = QHBoxLayout()
        bottom.addWidget(self.message, 1)
        bottom.addWidget(self.more_button)
        bottom.addWidget(self.open_button)
        bottom.addWidget(close_button)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addLayout(bottom)
        self._selection_changed()
        self.more_button.setEnabled(False)

    def set_client(self, client: ArenaClient) -> None:
        """Browse another server (the address in the setup panel changed)."""
        self.client = client
        self.refresh()

    # ------------------------------------------------------------------ loading

    def selected_status(self) -> RecordStatus | None:
        return STATUS_FILTERS[max(self.status_filter.currentIndex(), 0)][1]

    def refresh(self) -> None:
        """Reload the first page."""
        self._generation += 1
        self.summaries = []
        self.next_cursor = None
        self.table.setRowCount(0)
        self._load(None)

    def load_more(self) -> None:
        if self.next_cursor is not None:
            self._load(self.next_cursor)

    def _load(self, cursor: str | None) -> None:
        generation = self._generation
        status = self.selected_status()
        self.server_label.setText(self.client.base_url)
        self.loading = True
        self.message.setText("Loading\u2026")
        self.message.setStyleSheet("")
        self.more_button.setEnabled(False)
        call = self.client.games(
            status=status.value if status is not None else None,
            cursor=cursor,
            limit=self.page_size,
        )
        call.finished.connect(lambda page: self._loaded(generation, page))
        call.failed.connect(lambda text: self._failed(generation, text))

    def _loaded(self, generation: int, page: object) -> None:
        if generation != self._generation:
            return
        self.loading = False
        if not isinstance(page, GamePage):
            self._failed(generation, "The server sent an unexpected answer to GET /games.")
            return
        self.next_cursor = page.next_cursor
        for summary in page.items:
            self._add_row(summary)
        count = len(self.summaries)
        self.message.setText(
            "No games yet." if count == 0 else f"{count} game{'s' if count != 1 else ''}"
        )
        self.more_button.setEnabled(page.next_cursor is not None)
        if self.table.currentRow() < 0 and count:
            self.table.selectRow(0)

    def _failed(self, generation: int, text: str) -> None:
        if generation != self._generation:
            return
        self.loading = False
        self.message.setText(text)
        self.message.setStyleSheet("color: #b00020;")
        self.more_button.setEnabled(self.next_cursor is not None)

    def _add_row(self, summary: GameSummary) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.summaries.append(summary)
        for column, text in enumerate(summary_row(summary)):
            item = QTableWidgetItem(text)
            if column == MOVES_COLUMN:
                item.setTextAlignment(
                    Qt.Alignment(Qt.AlignmentFlag.AlignRight) | Qt.AlignmentFlag.AlignVCenter
                )
            item.setToolTip(plain_tooltip(summary.name or summary.game_id))
            if column == RESULT_COLUMN:
                self._style_outcome(item, summary)
            self.table.setItem(row, column, item)

    @staticmethod
    def _style_outcome(item: QTableWidgetItem, summary: GameSummary) -> None:
        """Live games in bold red; a result in the winner's colour."""
        colour: QColor | None = None
        if summary.status is RecordStatus.RUNNING:
            colour = QColor("#c0392b")
            font = QFont(item.font())
            font.setBold(True)
            item.setFont(font)
            item.setText("\u25cf Live")
        elif summary.result is not None and summary.result.winner is not None:
            colour = X_COLOR.darker(115) if summary.result.winner.value == "x" else O_COLOR
        if colour is not None:
            item.setForeground(QBrush(colour))

    # ------------------------------------------------------------------ actions

    def _selection_changed(self) -> None:
        row = self.table.currentRow()
        summary = self.summaries[row] if 0 <= row < len(self.summaries) else None
        self.open_button.setEnabled(summary is not None)
        live = summary is not None and summary.status is RecordStatus.RUNNING
        self.open_button.setText("Watch" if live else "Open")

    def activate(self, row: int) -> None:
        """Watch (live) or open (over) the game in ``row``."""
        if not 0 <= row < len(self.summaries):
            return
        summary = self.summaries[row]
        if summary.status is RecordStatus.RUNNING:
            self.watchRequested.emit(summary.game_id)
        else:
            self.openRequested.emit(summary.game_id)

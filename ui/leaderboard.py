"""The leaderboard window: who is best on a server (``GET /leaderboard``).

One row a player, in the server's order (by the conservative rating, ``mu - 2 sigma``):
rank, name (bots and people), rating ± uncertainty with a provisional mark until the
rating has settled, games, wins/losses/draws, failures by cause (timeouts, no-shows,
crashes...), average thinking time and when the player was last seen. Filtered to bots,
people or everyone, and refreshed on demand. The request runs on the network thread
and the answer is read there too; failures are shown in the window, never raised.

The texts come from pure functions (``entry_row`` and the ones it uses), tested
without Qt; ``read_leaderboard`` reads the server's JSON with the server's own wire
type (``wire.arena.Leaderboard``), ignoring fields it does not know.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final
from urllib.parse import urlencode

import msgspec
from PyQt5.QtCore import Qt
from PyQt5.QtGui import QBrush, QColor, QFont
from PyQt5.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from models import Leaderboard, LeaderboardEntry, ProtocolError, parse_body
from ui.listing import listing_bar, listing_table
from ui.net import Call, Network
from ui.plain_text import PlainLabel
from ui.text_style import secondary_text_color, secondary_text_style

__all__ = [
    "COLUMNS",
    "KINDS",
    "LeaderboardEntry",
    "LeaderboardWindow",
    "entry_row",
    "format_failures",
    "format_last_seen",
    "format_rating",
    "format_think",
    "read_leaderboard",
]

#: The kind filter: (label, the ``kind`` query value).
KINDS: Final = (("Everyone", "all"), ("Bots", "bot"), ("People", "human"))
COLUMNS: Final = (
    "#",
    "Name",
    "Rating",
    "Games",
    "W / L / D",
    "Failures",
    "Avg think",
    "Last seen",
)
RATING_COLUMN: Final = 2
#: Rows asked for (the server may cap it).
LIMIT: Final = 200
#: The rank is right-aligned, the name left-aligned, the rest centred.
_RANK, _NAME = 0, 1
#: Pixels added to a fitted column, so right-aligned numbers keep apart from the next.
_GAP: Final = 24


def read_leaderboard(value: object) -> list[LeaderboardEntry]:
    """The entries of a ``GET /leaderboard`` answer (decoded JSON), read with the
    server's own wire type; ``ProtocolError`` saying what is wrong otherwise.

    >>> [e.name for e in read_leaderboard({"entries": [{"rank": 1, "name": "threat",
    ...     "kind": "bot", "rating": 1712, "uncertainty": 90, "provisional": False,
    ...     "games": 30, "wins": 20, "losses": 9, "draws": 1}]})]
    ['threat']
    """
    if not isinstance(value, dict):
        raise ProtocolError(
            f"not a leaderboard: expected a JSON object, got {type(value).__name__}"
        )
    return parse_body(Leaderboard, msgspec.json.encode(value)).entries


def format_rating(entry: LeaderboardEntry) -> str:
    """Rating ± uncertainty, with ``?`` while provisional.

    >>> format_rating(LeaderboardEntry(rank=1, name="a", kind="bot", rating=1712,
    ...     uncertainty=88, provisional=True, games=3, wins=2, losses=1, draws=0))
    '1712 ± 88 ?'
    """
    text = f"{entry.rating} \u00b1 {entry.uncertainty}"
    return f"{text} ?" if entry.provisional else text


def format_failures(failures: dict[str, int]) -> str:
    """Failure counts by cause, most first ("" for none).

    >>> format_failures({"no_show": 1, "timeout": 3, "illegal_move": 0})
    'timeout 3, no show 1'
    """
    counted = sorted(((n, cause) for cause, n in failures.items() if n > 0), key=lambda p: -p[0])
    return ", ".join(f"{cause.replace('_', ' ')} {n}" for n, cause in counted)


def format_think(avg_think_ms: int | float | None) -> str:
    """Average thinking time a move.

    >>> format_think(42.4), format_think(1530), format_think(None)
    ('42 ms', '1.5 s', '')
    """
    if avg_think_ms is None:
        return ""
    if avg_think_ms < 1000:
        return f"{avg_think_ms:.0f} ms"
    return f"{avg_think_ms / 1000:.1f} s"


def format_last_seen(when: datetime | None, now: datetime | None = None) -> str:
    """How long ago, roughly.

    >>> now = datetime(2026, 11, 24, 21, 0, tzinfo=UTC)
    >>> [format_last_seen(datetime(2026, 11, 24, h, m, tzinfo=UTC), now)
    ...  for h, m in ((20, 59), (20, 15), (9, 0))]
    ['just now', '45 min ago', '12 h ago']
    >>> format_last_seen(datetime(2026, 11, 1, tzinfo=UTC), now), format_last_seen(None, now)
    ('2026-11-01', '')
    """
    if when is None:
        return ""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = ((now or datetime.now(UTC)) - when).total_seconds()
    if seconds < 120:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min ago"
    if seconds < 48 * 3600:
        return f"{seconds // 3600:.0f} h ago"
    return when.astimezone().strftime("%Y-%m-%d")


def entry_row(
    entry: LeaderboardEntry, now: datetime | None = None, me: str = ""
) -> tuple[str, ...]:
    """The table cells of one entry (``COLUMNS``); ``me`` is the name this client plays
    under on the server (names compare without case, as the server's do)."""
    name = entry.name
    if entry.kind == "human":
        name += " (you)" if me and entry.name.casefold() == me.casefold() else " (person)"
    if entry.status and entry.status not in ("active", "ok"):
        name += f" \u2014 {entry.status}"
    return (
        str(entry.rank),
        name,
        format_rating(entry),
        str(entry.games),
        f"{entry.wins} / {entry.losses} / {entry.draws}",
        format_failures(entry.failures),
        format_think(entry.avg_think_ms),
        format_last_seen(entry.last_seen, now),
    )


class LeaderboardWindow(QDialog):
    """The leaderboard of the server at ``base_url``; the row of ``me`` (the name this
    client plays under there) is marked and bold."""

    def __init__(
        self, network: Network, base_url: str, parent: QWidget | None = None, *, me: str = ""
    ) -> None:
        super().__init__(parent)
        self.network = network
        self.base_url = base_url
        self.me = me
        self.entries: list[LeaderboardEntry] = []
        self.loading = False
        self._generation = 0
        self._call: Call | None = None
        self.setWindowTitle("Leaderboard")
        self.resize(940, 560)

        self.kind = QComboBox()
        self.kind.setObjectName("leaderboard_kind")
        for label, _value in KINDS:
            self.kind.addItem(label)
        self.kind.currentIndexChanged.connect(self.refresh)
        self.server_label = PlainLabel()
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        top = listing_bar(self.kind, self.server_label, self.refresh_button)

        self.table = listing_table(COLUMNS, "leaderboard_table")
        rows = self.table.verticalHeader()
        header = self.table.horizontalHeader()
        assert rows is not None and header is not None
        rows.hide()
        rows.setDefaultSectionSize(28)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(_NAME, QHeaderView.ResizeMode.Stretch)

        self.message = PlainLabel()
        self.message.setObjectName("leaderboard_message")
        self.message.setWordWrap(True)
        note = QLabel("? provisional: too few games, or the rating is still uncertain")
        note.setStyleSheet(secondary_text_style())
        close_button = QPushButton("Close")
        close_button.clicked.connect(self.hide)
        bottom = QHBoxLayout()
        bottom.addWidget(self.message, 1)
        bottom.addWidget(note)
        bottom.addWidget(close_button)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addLayout(bottom)

    def set_server(self, base_url: str, me: str = "") -> None:
        """Show another server's leaderboard."""
        self.base_url = base_url
        self.me = me
        self.refresh()

    def kind_value(self) -> str:
        return KINDS[max(self.kind.currentIndex(), 0)][1]

    def refresh(self) -> None:
        """Fetch the leaderboard again (an answer to an earlier fetch is dropped)."""
        self._generation += 1
        generation = self._generation
        if self._call is not None:
            self._call.cancel()
        self.loading = True
        self.server_label.setText(self.base_url)
        self.message.setText("Loading\u2026")
        self.message.setStyleSheet("")
        query = urlencode({"kind": self.kind_value(), "limit": LIMIT})
        call = self.network.request(
            "GET",
            f"{self.base_url}/leaderboard?{query}",
            description="the leaderboard",
            parse=read_leaderboard,
        )
        self._call = call
        call.finished.connect(lambda entries: self._loaded(generation, entries))
        call.failed.connect(lambda text: self._failed(generation, text))

    def _loaded(self, generation: int, entries: object) -> None:
        if generation != self._generation or not isinstance(entries, list):
            return
        self.loading = False
        self._call = None
        self.entries = [e for e in entries if isinstance(e, LeaderboardEntry)]
        self.table.setRowCount(0)
        now = datetime.now(UTC)
        for entry in self.entries:
            self._add_row(entry, now)
        for column in range(len(COLUMNS)):
            if column != _NAME:  # the name stretches; the others fit, with room to breathe
                self.table.resizeColumnToContents(column)
                self.table.setColumnWidth(column, self.table.columnWidth(column) + _GAP)
        count = len(self.entries)
        self.message.setText(
            "Nobody has played a rated game yet."
            if count == 0
            else f"{count} player{'s' if count != 1 else ''}"
        )

    def _failed(self, generation: int, text: str) -> None:
        if generation != self._generation:
            return
        self.loading = False
        self._call = None
        self.message.setText(text)
        self.message.setStyleSheet("color: #b00020;")

    def _add_row(self, entry: LeaderboardEntry, now: datetime) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        mine = bool(self.me) and entry.name.casefold() == self.me.casefold()
        for column, text in enumerate(entry_row(entry, now, self.me)):
            item = QTableWidgetItem(text)
            if mine:
                font = QFont(item.font())
                font.setBold(True)
                item.setFont(font)
            if column == _RANK:
                item.setTextAlignment(
                    Qt.Alignment(Qt.AlignmentFlag.AlignRight) | Qt.AlignmentFlag.AlignVCenter
                )
            elif column != _NAME:
                item.setTextAlignment(Qt.Alignment(Qt.AlignmentFlag.AlignCenter))
            if column == RATING_COLUMN:
                font = QFont(item.font())
                font.setBold(mine or not entry.provisional)
                item.setFont(font)
                if entry.provisional:
                    # Greyed, yet 4.5:1 on the table's rows (#7f8c8d was 3.5:1 on white).
                    grey = secondary_text_color(self.table.palette(), in_view=True)
                    item.setForeground(QBrush(grey))
                    item.setToolTip("Provisional: the rating is still settling")
            if column == 5 and entry.failures:
                item.setForeground(QBrush(QColor("#b03a2e")))
            self.table.setItem(row, column, item)

"""The parts the client's list windows share (the games browser, the leaderboard): a bar
with a filter, the server's address and Refresh above a read-only table of rows."""

from __future__ import annotations

from collections.abc import Sequence

from PyQt5.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
)

from ui.text_style import secondary_text_style

__all__ = ["listing_bar", "listing_table"]


def listing_bar(shown: QComboBox, server_label: QLabel, refresh: QPushButton) -> QHBoxLayout:
    """ "Show [filter]", then the server's address (greyed) and Refresh on the right."""
    server_label.setStyleSheet(secondary_text_style())
    bar = QHBoxLayout()
    bar.addWidget(QLabel("Show"))
    bar.addWidget(shown)
    bar.addStretch(1)
    bar.addWidget(server_label)
    bar.addWidget(refresh)
    return bar


def listing_table(columns: Sequence[str], object_name: str) -> QTableWidget:
    """A table of ``columns`` to read, not edit: whole rows selected, alternate row
    colours, no grid, no wrapping, cells padded."""
    table = QTableWidget(0, len(columns))
    table.setObjectName(object_name)
    table.setHorizontalHeaderLabels(list(columns))
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setAlternatingRowColors(True)
    table.setShowGrid(False)
    table.setWordWrap(False)
    table.setStyleSheet("QTableView::item { padding: 0 10px; }")
    return table

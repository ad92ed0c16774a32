"""A menu or toolbar action of the main window, made in one call.

The window makes every action it shows in its menus and toolbar with ``window_action``.
"""

from __future__ import annotations

from collections.abc import Callable

from PyQt5.QtCore import QObject
from PyQt5.QtGui import QKeySequence
from PyQt5.QtWidgets import QAction, QApplication, QStyle

__all__ = ["window_action"]


def window_action(
    parent: QObject | None,
    text: str,
    slot: Callable[[], object],
    shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
    icon: QStyle.StandardPixmap | None = None,
    tip: str = "",
) -> QAction:
    """An action labelled ``text`` that calls ``slot`` (with no argument: Qt's
    ``triggered`` passes a ``checked`` flag the slots here do not take), with its
    shortcut, the style's standard icon and ``tip`` as status and tool tip."""
    result = QAction(text, parent)
    if shortcut is not None:
        result.setShortcut(QKeySequence(shortcut))
    if icon is not None and (style := QApplication.style()) is not None:
        result.setIcon(style.standardIcon(icon))
    if tip:
        result.setStatusTip(tip)
        result.setToolTip(tip)

    def run() -> None:
        slot()

    result.triggered.connect(run)
    return result

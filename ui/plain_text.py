"""Text from others shown as typed: a label that never reads HTML, and tooltips that do not.

Qt guesses whether a label's or a tooltip's text is HTML (``Qt.mightBeRichText``: a
known tag such as ``<img`` or ``<h1>`` on its first line), and renders it so when it
looks like it. Names, bot descriptions, game names and error details come from other
people and their bots: a player named ``<img src=x>`` must read ``<img src=x>``, not
be an image (nor a link, a heading, a table that covers the window).
"""

from __future__ import annotations

from PyQt5 import QtGui  # imported first: it adds mightBeRichText and friends to Qt
from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QLabel, QWidget

__all__ = ["PlainLabel", "plain_tooltip", "shown_text"]


class PlainLabel(QLabel):
    """A ``QLabel`` whose text is always plain text, whatever it looks like."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(text)


def plain_tooltip(text: str) -> str:
    """``text`` as a tooltip shows it as typed: unchanged when Qt would not take it for
    HTML, else escaped into HTML that reads as ``text`` (a tooltip has no plain mode).

    >>> plain_tooltip("Ann & Bob"), plain_tooltip("<b>Ann</b>")
    ('Ann & Bob', '<p>&lt;b&gt;Ann&lt;/b&gt;</p>')
    """
    if not Qt.mightBeRichText(text):  # type: ignore[attr-defined]  # QtGui adds it
        return text
    plain = Qt.convertFromPlainText  # type: ignore[attr-defined]  # QtGui adds it
    return str(plain(text, Qt.WhiteSpaceMode.WhiteSpaceNormal))


def shown_text(text: str, text_format: Qt.TextFormat = Qt.TextFormat.AutoText) -> str:
    """What a reader sees of ``text`` shown in ``text_format``, as Qt decides it (a
    label's or a tooltip's auto-detection included): for tests and checks.

    >>> shown_text("<b>Ann</b>"), shown_text("<b>Ann</b>", Qt.TextFormat.PlainText)
    ('Ann', '<b>Ann</b>')
    """
    document = QtGui.QTextDocument()
    rich = text_format == Qt.TextFormat.RichText or (
        text_format == Qt.TextFormat.AutoText and Qt.mightBeRichText(text)  # type: ignore[attr-defined]
    )
    if rich:
        document.setHtml(text)
    else:
        document.setPlainText(text)
    return str(document.toPlainText())

"""The side panel's message box: a message for the person, wrapped to the panel's width.

A ``QLabel`` wraps only between words, so a long URL or game id ran past its right
edge and was clipped there. ``MessageBox`` is a read-only text view that wraps between
words where it can and inside a word too long for a line, and is exactly as tall as its
text. The text is shown as given: ``text()`` returns it unchanged, and a selection is
copied as it reads (no break characters slipped in for display).
"""

from __future__ import annotations

import math

from PyQt5.QtCore import QEvent, Qt
from PyQt5.QtGui import QKeyEvent, QKeySequence, QResizeEvent, QTextOption
from PyQt5.QtWidgets import QSizePolicy, QTextEdit, QWidget

__all__ = ["MessageBox"]


class MessageBox(QTextEdit):
    """Plain text, wrapped anywhere it must be, selectable; no scroll bars: the box
    grows and shrinks with its text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        )
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Tab and the arrow keys stay with the board and the replay (see keyPressEvent).
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        document = self.document()
        assert document is not None
        document.setDocumentMargin(0)  # the style sheet's padding is the margin
        document.contentsChanged.connect(self._fit_height)

    def text(self) -> str:
        """The message as given (``QLabel``'s name for it)."""
        return self.toPlainText()

    def setText(self, text: str | None) -> None:
        # Always plain: QTextEdit's own setText would read "<...>" in a reason as HTML.
        self.setPlainText(text or "")
        self._fit_height()

    def shown_lines(self) -> list[str]:
        """The text as the lines it is shown on (each line's trailing space included),
        so ``"".join`` gives the text back when it has no line breaks of its own."""
        document = self.document()
        assert document is not None
        lines: list[str] = []
        block = document.begin()
        while block.isValid():
            layout = block.layout()
            text = block.text()
            if layout is not None:
                for number in range(layout.lineCount()):
                    line = layout.lineAt(number)
                    lines.append(text[line.textStart() : line.textStart() + line.textLength()])
            block = block.next()
        return lines

    def resizeEvent(self, event: QResizeEvent | None) -> None:
        super().resizeEvent(event)
        self._fit_height()  # a new width wraps the text on more or fewer lines

    def changeEvent(self, event: QEvent | None) -> None:
        super().changeEvent(event)
        if event is not None and event.type() == QEvent.Type.StyleChange:
            self._fit_height()  # a new style sheet: another border and padding

    def keyPressEvent(self, event: QKeyEvent | None) -> None:
        if event is not None and event.matches(QKeySequence.StandardKey.Copy):
            self.copy()
            event.accept()
            return
        if event is not None:
            # Not for a read-only box: arrows, Home and End go on to the window, which
            # steps the replay, as they would from a label.
            event.ignore()

    def _fit_height(self) -> None:
        document = self.document()
        viewport = self.viewport()
        assert document is not None and viewport is not None
        document.setTextWidth(viewport.width())
        # The style sheet's border and padding are the margins around the text.
        margins = self.contentsMargins()
        height = math.ceil(document.size().height()) + margins.top() + margins.bottom()
        if height != self.height():
            self.setFixedHeight(height)

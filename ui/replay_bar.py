"""Step through a game: first / previous / next / last, a slider, and "Live".

The bar shows position ``index`` out of ``count`` (0 = the setup, ``count`` = after the
last move). While "following" it jumps to each new move as it arrives; any step back
stops following, and "Live" (or stepping to the end) resumes it. The main window
forwards Left / Right / Home / End here so the keys work wherever the focus is.
"""

from __future__ import annotations

from PyQt5.QtCore import Qt, pyqtSignal
from PyQt5.QtWidgets import QHBoxLayout, QLabel, QSlider, QStyle, QToolButton, QWidget

from ui.text_style import secondary_text_style

#: The slider's narrowest: a groove to drag along even in the narrowest window, where
#: it was squeezed to its lone handle (the board's column widens instead).
MIN_SLIDER_WIDTH_PX = 96


class ReplayBar(QWidget):
    """Emits ``indexChanged(index)`` whenever the shown position changes."""

    indexChanged = pyqtSignal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._index = 0
        self._count = 0
        self._following = True
        self._live_game = False
        style = self.style()
        assert style is not None  # every widget has one once QApplication exists

        def button(icon: QStyle.StandardPixmap, tip: str) -> QToolButton:
            result = QToolButton()
            result.setIcon(style.standardIcon(icon))
            result.setToolTip(tip)
            result.setAutoRaise(True)
            return result

        self.first_button = button(
            QStyle.StandardPixmap.SP_MediaSkipBackward, "First position (Home)"
        )
        self.prev_button = button(
            QStyle.StandardPixmap.SP_MediaSeekBackward, "Previous move (Left)"
        )
        self.next_button = button(QStyle.StandardPixmap.SP_MediaSeekForward, "Next move (Right)")
        self.last_button = button(
            QStyle.StandardPixmap.SP_MediaSkipForward, "Latest position (End)"
        )
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("replay_slider")
        self.slider.setRange(0, 0)
        self.slider.setMinimumWidth(MIN_SLIDER_WIDTH_PX)
        self.slider.setPageStep(10)
        self.label = QLabel()
        self.label.setMinimumWidth(64)
        self.label.setAlignment(
            Qt.Alignment(Qt.AlignmentFlag.AlignRight) | Qt.AlignmentFlag.AlignVCenter
        )
        self.live_button = QToolButton()
        self.live_button.setText("\u25cf Live")
        self.live_button.setCheckable(True)
        self.live_button.setToolTip("Follow the game as it is played")
        self.live_button.setObjectName("live_button")

        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        for widget in (self.first_button, self.prev_button):
            layout.addWidget(widget)
        layout.addWidget(self.slider, 1)
        for widget in (self.next_button, self.last_button, self.label, self.live_button):
            layout.addWidget(widget)

        self.first_button.clicked.connect(self.first)
        self.prev_button.clicked.connect(self.previous)
        self.next_button.clicked.connect(self.next)
        self.last_button.clicked.connect(self.last)
        self.slider.valueChanged.connect(self.set_index)
        self.live_button.clicked.connect(self._live_clicked)
        self._refresh()

    # ------------------------------------------------------------------ state

    @property
    def index(self) -> int:
        return self._index

    @property
    def count(self) -> int:
        return self._count

    @property
    def following(self) -> bool:
        """True while the view tracks the latest position."""
        return self._following

    def set_live_game(self, live: bool) -> None:
        """A live game shows the "Live" toggle; a finished one or a file does not."""
        self._live_game = live
        self._refresh()

    def set_count(self, count: int) -> None:
        """The game now has ``count`` moves. Following, the view moves to the new end."""
        self._count = max(count, 0)
        if self._following or self._index > self._count:
            self._go(self._count)
        else:
            self._refresh()

    def reset(self, count: int, *, live: bool, index: int | None = None) -> None:
        """A different game: ``count`` moves, shown at ``index`` (default: the end)."""
        self._live_game = live
        self._count = max(count, 0)
        target = self._count if index is None else min(max(index, 0), self._count)
        self._following = target == self._count
        self._index = -1  # so _go emits even when the index number is unchanged
        self._go(target)

    def set_index(self, index: int) -> None:
        """Show position ``index`` (clamped); stepping to the end resumes following."""
        index = min(max(index, 0), self._count)
        self._following = index == self._count
        self._go(index)

    def first(self) -> None:
        self.set_index(0)

    def previous(self) -> None:
        self.set_index(self._index - 1)

    def next(self) -> None:
        self.set_index(self._index + 1)

    def last(self) -> None:
        self.set_index(self._count)

    def follow(self) -> None:
        """Jump to the latest position and keep following it."""
        self._following = True
        self._go(self._count)

    def handle_key(self, key: int) -> bool:
        """Left / Right / Home / End from the window; True if the key was used."""
        actions = {
            int(Qt.Key.Key_Left): self.previous,
            int(Qt.Key.Key_Right): self.next,
            int(Qt.Key.Key_Home): self.first,
            int(Qt.Key.Key_End): self.last,
        }
        action = actions.get(int(key))
        if action is None:
            return False
        action()
        return True

    # ------------------------------------------------------------------ internals

    def _live_clicked(self) -> None:
        if self.live_button.isChecked():
            self.follow()
        else:
            self._following = False
            self._refresh()

    def _go(self, index: int) -> None:
        changed = index != self._index
        self._index = index
        self._refresh()
        if changed:
            self.indexChanged.emit(index)

    def _refresh(self) -> None:
        self.slider.blockSignals(True)
        self.slider.setRange(0, self._count)
        self.slider.setValue(self._index)
        self.slider.blockSignals(False)
        self.first_button.setEnabled(self._index > 0)
        self.prev_button.setEnabled(self._index > 0)
        self.next_button.setEnabled(self._index < self._count)
        self.last_button.setEnabled(self._index < self._count)
        self.label.setText(f"{max(self._index, 0)} / {self._count}")
        self.live_button.setVisible(self._live_game)
        self.live_button.setChecked(self._following)
        self.live_button.setStyleSheet(
            "color: #c0392b; font-weight: bold;" if self._following else secondary_text_style()
        )

"""The side panel's view of one game: players, clocks, connection, evaluation, moves.

``PlayerPanel`` reads everything from a ``GameModel`` (``refresh`` after each change);
only the clocks tick on their own, ten times a second, because the model counts the
side to move down from the last packet. Texts that say what happened (results,
forfeit causes, clocks) come from the pure functions of ``ui.player_text``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PyQt5.QtCore import QRectF, Qt, QTimer, pyqtSignal
from PyQt5.QtGui import QColor, QFont, QKeyEvent, QPainter, QPaintEvent, QResizeEvent
from PyQt5.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from models import (
    EndCause,
    GameResult,
    GameStatus,
    Player,
    PositionEvaluation,
    RecordPlayer,
)
from ui.game_model import Analysis, GameModel
from ui.message_box import MessageBox
from ui.plain_text import PlainLabel, plain_tooltip
from ui.player_text import (
    describe_evaluation,
    describe_result,
    describe_verdict,
    evaluation_share,
    format_clock,
    player_details,
    player_name,
)
from ui.stones import O_COLOR, X_COLOR, stone_icon
from ui.text_style import secondary_text_style

LOW_TIME_MS = 10_000
#: The evaluation bar of a game that has no verdict (aborted).
NEUTRAL_COLOR = QColor(128, 128, 128)
CLOCK_TICK_MS = 100

# ------------------------------------------------------------------------ widgets


class EvaluationBar(QWidget):
    """A horizontal bar split in X's and O's colours at X's share, with a caption."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.share = 0.5
        self.caption = ""
        #: Grey instead of the sides' colours: no side is ahead, not even evenly (an
        #: aborted game).
        self.neutral = False
        self.setMinimumHeight(22)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_evaluation(self, evaluation: PositionEvaluation) -> None:
        self.share, self.neutral = evaluation_share(evaluation), False
        self.caption = describe_evaluation(evaluation)
        self.setToolTip(f"Evaluation reported by the bot: {self.caption}")
        self.update()

    def set_analysis(self, analysis: Analysis, viewed: int) -> None:
        """The analysis bot's evaluation, labelled with its name (and the move it is of,
        when the position in view, after ``viewed`` moves, has none yet)."""
        at = "" if analysis.ply == viewed else f" (after move {analysis.ply})"
        self.share, self.neutral = evaluation_share(analysis.evaluation), False
        self.caption = f"{analysis.bot}{at}: {describe_evaluation(analysis.evaluation)}"
        self.setToolTip(f"Evaluation by the server's analysis bot: {self.caption}")
        self.update()

    def set_unknown(self) -> None:
        """No bot had given an opinion yet at the position in view."""
        self.share, self.caption, self.neutral = 0.5, "No evaluation yet", False
        self.setToolTip("No bot had reported an evaluation at this point of the game")
        self.update()

    def set_result(self, result: GameResult) -> None:
        """The game is over: no more opinions, the bar shows how it ended."""
        self.caption = describe_verdict(result)
        if result.winner is None:
            self.share = 0.5
        else:
            self.share = 1.0 if result.winner is Player.X else 0.0
        self.neutral = result.winner is None and result.cause is EndCause.ABORTED
        self.setToolTip(f"The game is over: {self.caption}")
        self.update()

    def paintEvent(self, event: QPaintEvent | None) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        split = rect.left() + rect.width() * self.share
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(NEUTRAL_COLOR if self.neutral else X_COLOR)
        painter.drawRoundedRect(rect, 4, 4)
        if not self.neutral:
            painter.setBrush(O_COLOR)
            painter.save()
            painter.setClipRect(QRectF(split, rect.top(), rect.right() - split + 1, rect.height()))
            painter.drawRoundedRect(rect, 4, 4)
            painter.restore()
        painter.setPen(QColor(255, 255, 255))
        font = painter.font()
        font.setBold(True)
        painter.setFont(font)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, self.caption)
        painter.end()


class ElidedLabel(PlainLabel):
    """A one-line label that cuts a text too long for it with "…" (the whole text in
    its tooltip) instead of pushing its neighbours aside or being clipped."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        self._full = ""
        super().__init__(parent=parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def full_text(self) -> str:
        return self._full

    def setText(self, text: str | None) -> None:
        self._full = text or ""
        self._elide()

    def resizeEvent(self, event: QResizeEvent | None) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(
            self._full, Qt.TextElideMode.ElideRight, max(self.width(), 0)
        )
        super().setText(shown)
        self.setToolTip(plain_tooltip(self._full) if shown != self._full else "")


class WrappedLabel(PlainLabel):
    """A word-wrapped label that keeps the height its lines need at its width. Qt takes
    a wrapped label's minimum for one line, so in a short window the layout squeezed
    the player card and cut a bot's tags, wrapped onto a second line, in half."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)

    def setText(self, text: str | None) -> None:
        super().setText(text)
        if self.isVisible():  # else its width is not its own yet: showing resizes it
            self._keep_lines()

    def resizeEvent(self, event: QResizeEvent | None) -> None:
        super().resizeEvent(event)
        self._keep_lines()

    def _keep_lines(self) -> None:
        needed = self.heightForWidth(self.width()) if self.text() else 0
        if needed != self.minimumHeight():
            self.setMinimumHeight(max(needed, 0))


class MoveList(QListWidget):
    """The moves, one row each; the row of the position in view stays in view when the
    list's height changes (a message shown or hidden above it), as it did when chosen.

    ``rowStepped(row)``: a key (Up, Down, Home, End, Page Up/Down) moved the highlight
    to ``row``; the board is to follow it, as it follows a click."""

    rowStepped = pyqtSignal(int)

    def keyPressEvent(self, event: QKeyEvent | None) -> None:
        before = self.currentRow()
        super().keyPressEvent(event)
        row = self.currentRow()
        if row != before and row >= 0:
            self.rowStepped.emit(row)

    def resizeEvent(self, event: QResizeEvent | None) -> None:
        super().resizeEvent(event)
        current = self.currentItem()
        if current is not None:
            self.scrollToItem(current)


class PlayerCard(QFrame):
    """One side: stone, name, human/bot and meta, clock; framed in colour when to move."""

    def __init__(self, side: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.side = side
        self.color = X_COLOR if side == "x" else O_COLOR
        self.setObjectName(f"card_{side}")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        icon = QLabel()
        icon.setPixmap(stone_icon(side, 32).pixmap(32, 32))
        icon.setFixedSize(36, 36)
        self.name = ElidedLabel(f"Player {side.upper()}")
        name_font = self.name.font()
        name_font.setBold(True)
        name_font.setPointSizeF(name_font.pointSizeF() * 1.15)
        self.name.setFont(name_font)
        self.details = WrappedLabel("")
        self.details.setStyleSheet(secondary_text_style())
        self.clock = QLabel("\u2014")
        self.clock.setObjectName(f"clock_{side}")
        clock_font = QFont("Monospace")
        clock_font.setStyleHint(QFont.StyleHint.TypeWriter)
        clock_font.setPointSizeF(name_font.pointSizeF() * 1.2)
        clock_font.setBold(True)
        self.clock.setFont(clock_font)
        self.clock.setAlignment(
            Qt.Alignment(Qt.AlignmentFlag.AlignRight) | Qt.AlignmentFlag.AlignVCenter
        )
        self.turn = QLabel("")
        self.turn.setAlignment(
            Qt.Alignment(Qt.AlignmentFlag.AlignRight) | Qt.AlignmentFlag.AlignVCenter
        )
        layout = QGridLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setHorizontalSpacing(8)
        layout.setVerticalSpacing(2)
        # Name, "to move" and clock on the first line; the details get the full width
        # of the second, so bot tags do not wrap word by word.
        layout.addWidget(icon, 0, 0, 2, 1)
        layout.addWidget(self.name, 0, 1)
        layout.addWidget(self.turn, 0, 2)
        layout.addWidget(self.clock, 0, 3)
        layout.addWidget(self.details, 1, 1, 1, 3)
        layout.setColumnStretch(1, 1)
        self._low = False
        self._turn_state: tuple[bool, str] | None = None
        self.set_to_move(False)

    def set_player(self, player: RecordPlayer) -> None:
        self.name.setText(player_name(player, self.side))
        self.details.setText(player_details(player))
        meta = player.meta
        self.setToolTip(plain_tooltip(meta.description or "") if meta is not None else "")

    def set_clock(self, ms: int | None) -> None:
        self.clock.setText(format_clock(ms))
        low = ms is not None and ms < LOW_TIME_MS
        if low != self._low:  # style sheets are costly to re-apply ten times a second
            self._low = low
            self.clock.setStyleSheet("color: #c0392b;" if low else "")

    def set_to_move(self, on: bool, text: str = "to move") -> None:
        if (on, text) == self._turn_state:
            return
        self._turn_state = (on, text)
        self.turn.setText(text if on else "")
        self.turn.setStyleSheet(f"color: {self.color.name()}; font-weight: bold;")
        border = self.color.name() if on else "palette(mid)"
        width = 2 if on else 1
        self.setStyleSheet(
            f"QFrame#card_{self.side} {{ border: {width}px solid {border}; border-radius: 6px;"
            f" background: {'palette(base)' if on else 'palette(window)'}; }}"
        )


class PlayerPanel(QWidget):
    """Players, status, evaluation, moves and messages of the shown game.

    ``moveSelected(index)`` asks to show the position after ``index`` moves (0 is the
    start) when a row of the move list is clicked or stepped to with the keys.
    """

    moveSelected = pyqtSignal(int)

    def __init__(
        self, parent: QWidget | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(parent)
        self.model: GameModel | None = None
        self._now = clock
        self._heartbeat_at: float | None = None
        #: The position in view (None: the latest), for the evaluation bar.
        self._viewed: int | None = None
        self._waiting = False
        self._connection = ""
        self._human_turn: str | None = None
        # (side, remaining ms, when): the clock a human seat's move request reported.
        self._turn_clock: tuple[str, int, float] | None = None

        self.card_x = PlayerCard("x")
        self.card_o = PlayerCard("o")
        self.status = WrappedLabel("No game")
        self.status.setObjectName("game_status")
        status_font = self.status.font()
        status_font.setBold(True)
        self.status.setFont(status_font)
        self.connection = PlainLabel("")
        self.connection.setObjectName("connection_state")
        self.connection.setStyleSheet(secondary_text_style())
        self.heartbeat = QLabel("")
        self.heartbeat.setStyleSheet(secondary_text_style())
        self.evaluation = EvaluationBar()
        self.evaluation.hide()
        #: The server's analysis bot's evaluation (spectating a server that has one).
        self.analysis = EvaluationBar()
        self.analysis.setObjectName("analysis_bar")
        self.analysis.hide()
        self.moves = MoveList()
        self.moves.setObjectName("move_list")
        self.moves.setUniformItemSizes(True)
        self.moves.setAlternatingRowColors(True)
        self.moves.itemClicked.connect(self._row_clicked)
        self.moves.rowStepped.connect(self._row_stepped)
        self.message = MessageBox()
        self.message.setObjectName("message")
        self.message.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.card_x)
        layout.addWidget(self.card_o)
        layout.addWidget(self.status)
        state_row = QHBoxLayout()
        state_row.addWidget(self.connection, 1)
        state_row.addWidget(self.heartbeat)
        layout.addLayout(state_row)
        layout.addWidget(self.evaluation)
        layout.addWidget(self.analysis)
        layout.addWidget(self.message)
        layout.addWidget(self.moves, 1)

        self.timer = QTimer(self)
        self.timer.setInterval(CLOCK_TICK_MS)
        self.timer.timeout.connect(self.tick)
        self.timer.start()
        self.set_model(None)

    # ------------------------------------------------------------------ model

    def set_model(self, model: GameModel | None) -> None:
        """Show another game (None: none); the move list is rebuilt."""
        self.model = model
        self._viewed = None  # the latest position
        self.moves.clear()
        self.evaluation.hide()
        self.analysis.hide()
        self._heartbeat_at = None
        self._waiting = False
        self._human_turn = None
        self._turn_clock = None
        self.heartbeat.setText("")
        if model is None:
            self.card_x.set_player(RecordPlayer())
            self.card_o.set_player(RecordPlayer())
            self.status.setText("No game \u2014 start one, watch one or open a file.")
        self.refresh()

    def refresh(self) -> None:
        """Bring everything up to date with the model (after each packet)."""
        model = self.model
        if model is None:
            self.tick()
            return
        self.card_x.set_player(model.player_x)
        self.card_o.set_player(model.player_o)
        self._sync_moves(model)
        self._show_evaluation(model)
        self.status.setText(self._status_text(model))
        self.tick()

    def _show_evaluation(self, model: GameModel) -> None:
        """The evaluation bar for the position in view: the last opinion a bot gave up to
        it; the result on the final position of a finished game. Hidden until some bot
        has reported an evaluation in this game. The analysis bar below it: the analysis
        bot's latest evaluation up to the position in view, hidden without one."""
        latest = len(model.moves)
        index = latest if self._viewed is None else min(self._viewed, latest)
        analysis = model.analysis_at(index)
        if analysis is None:
            self.analysis.hide()
        else:
            self.analysis.set_analysis(analysis, index)
            self.analysis.show()
        if model.latest_evaluation() is None:
            return
        if index == latest and model.result is not None:
            # A bot's last "wins in 1" reads oddly once it has won.
            self.evaluation.set_result(model.result)
            self.evaluation.show()
            return
        evaluation = model.evaluation_at(index)
        if evaluation is not None and (
            evaluation.heuristic is not None or evaluation.win_in is not None
        ):
            self.evaluation.set_evaluation(evaluation)
        else:
            self.evaluation.set_unknown()
        self.evaluation.show()

    def set_human_turn(self, side: str | None) -> None:
        """The person at this screen is to move for ``side`` (None: not now)."""
        self._human_turn = side
        if self.model is not None:
            self.status.setText(self._status_text(self.model))
        self.tick()

    def set_turn_clock(self, side: str | None, remaining_ms: int | None = None) -> None:
        """A human seat was asked to move with ``remaining_ms`` on ``side``'s clock: count
        that down (None: the request is answered). The move request is exact where the
        spectator stream may not be: spectators hear nothing until the first move, so a
        game that is waiting for its first mover looks not yet started to them."""
        if side is None or remaining_ms is None:
            self._turn_clock = None
        else:
            self._turn_clock = (side, remaining_ms, self._now())
        self.tick()

    def _clock_ms(self, model: GameModel, side: str, now: float) -> int | None:
        result = model.result
        if result is not None:
            timed_out = result.cause is EndCause.TIMEOUT and result.winner is not None
            if timed_out and result.winner is not None and result.winner.value != side:
                return 0  # lost on time: whatever was last reported, nothing is left
            return model.clock_remaining_ms(side, now)
        turn = self._turn_clock
        if turn is not None and turn[0] == side:
            return max(0, int(turn[1] - (now - turn[2]) * 1000))
        if turn is not None:
            # The other side has moved (the request says so) though the spectator stream,
            # flushed a little later, may not have said it yet: its clock stopped then.
            return model.clock_remaining_ms(side, min(now, turn[2]))
        return model.clock_remaining_ms(side, now)

    def _status_text(self, model: GameModel) -> str:
        if model.result is not None:
            return describe_result(model.result, model.player_x, model.player_o)
        if model.stream_lost:
            return "Connection to the server lost: the game's result is unknown."
        if self._human_turn is not None:
            return f"Your move as {self._human_turn.upper()}: place two stones."
        if model.status is GameStatus.WAITING:
            return "Waiting for the players\u2026"
        if model.to_move is not None and model.status is GameStatus.IN_PROGRESS:
            player = model.player_x if model.to_move == "x" else model.player_o
            return f"{player_name(player, model.to_move)} ({model.to_move.upper()}) to move."
        return ""

    def _sync_moves(self, model: GameModel) -> None:
        # Rows: "Start", then one per move. Only new moves are appended: a 1000-move
        # game must not rebuild the list on every packet.
        if self.moves.count() == 0:
            start = QListWidgetItem("Start")
            start.setData(Qt.ItemDataRole.UserRole, 0)
            self.moves.addItem(start)
        wanted = len(model.moves) + 1
        while self.moves.count() > wanted:
            self.moves.takeItem(self.moves.count() - 1)
        for index in range(self.moves.count() - 1, len(model.moves)):
            move = model.moves[index]
            item = QListWidgetItem(stone_icon(move.side.value, 14), model.move_label(index + 1))
            item.setData(Qt.ItemDataRole.UserRole, index + 1)
            self.moves.addItem(item)

    def select_index(self, index: int) -> None:
        """Position ``index`` is in view (the replay bar moved): highlight its row and
        show the evaluation as it stood there."""
        self._viewed = index
        if self.model is not None:
            self._show_evaluation(self.model)
        if 0 <= index < self.moves.count():
            self.moves.blockSignals(True)
            self.moves.setCurrentRow(index)
            self.moves.blockSignals(False)
            self.moves.scrollToItem(self.moves.item(index))

    def _row_clicked(self, item: QListWidgetItem) -> None:
        self.moveSelected.emit(int(item.data(Qt.ItemDataRole.UserRole)))

    def _row_stepped(self, row: int) -> None:
        item = self.moves.item(row)
        if item is not None:
            self._row_clicked(item)

    # ------------------------------------------------------------------ status

    def set_connection(self, text: str, *, ok: bool = True) -> None:
        """Connection state in words: "Connected", "Reconnecting…", "Closed"."""
        self._connection = text
        self.connection.setText(text)
        self.connection.setStyleSheet(secondary_text_style() if ok else "color: #c0392b;")

    def heartbeat_seen(self, waiting: bool) -> None:
        """A heartbeat arrived; ``waiting``: the server waits for us to move."""
        self._heartbeat_at = self._now()
        self._waiting = waiting
        self._show_heartbeat()

    def _show_heartbeat(self) -> None:
        if self._heartbeat_at is None:
            self.heartbeat.setText("")
            return
        age = self._now() - self._heartbeat_at
        text = f"\u2665 {age:.0f} s ago"
        if self._waiting:
            text += " \u00b7 waiting for you"
        self.heartbeat.setText(text)
        self.heartbeat.setToolTip("Last heartbeat from the server")

    def show_message(self, text: str, level: str = "info") -> None:
        """A message for the person: ``info``, ``warning`` or ``error`` ("" hides it)."""
        colours = {
            "info": ("#1d4f73", "#e8f1f8", "#9cc3df"),
            "warning": ("#7a5200", "#fff6e0", "#e8c46a"),
            "error": ("#8c1c13", "#fdecea", "#e6a19b"),
        }
        fg, bg, border = colours.get(level, colours["info"])
        self.message.setText(text)
        self.message.setProperty("level", level)
        self.message.setStyleSheet(
            f"#message {{ color: {fg}; background: {bg}; border: 1px solid {border};"
            " border-radius: 4px; padding: 6px 10px; }"
        )
        self.message.setVisible(bool(text))

    def clear_message(self) -> None:
        self.show_message("")

    # ------------------------------------------------------------------ clocks

    def tick(self) -> None:
        """Redraw clocks, "to move" and the heartbeat age (every 100 ms)."""
        model = self.model
        self._show_heartbeat()
        if model is None:
            for card in (self.card_x, self.card_o):
                card.set_clock(None)
                card.set_to_move(False)
            return
        now = self._now()
        live = (
            model.result is None
            and model.status is GameStatus.IN_PROGRESS
            and not model.stream_lost
        )
        asked = self._turn_clock[0] if self._turn_clock is not None else self._human_turn
        for card in (self.card_x, self.card_o):
            card.set_clock(self._clock_ms(model, card.side, now))
            if model.result is None and asked is not None:
                # A seat asked to move is ahead of the stream: only that side is to move.
                to_move = asked == card.side
            else:
                to_move = live and model.to_move == card.side
            text = "your move" if to_move and self._human_turn == card.side else "to move"
            card.set_to_move(to_move, text)

"""A move by two clicks on the board, for the human seat the server is waiting for.

The first click puts a pending stone (drawn faint; clicking it again or Esc takes it
back), the second sends the ``move_response`` over the seat's socket. A first stone
that already makes the line is sent at once, as the rules end the game on it. A cell
that cannot be played is refused with the reason in the panel. ``MoveInput`` only
knows the pending stone; ``ui.controller.GameController`` says which seat clicks go to
and clears the stone when the turn is no longer that seat's.
"""

from __future__ import annotations

from collections.abc import Callable

from game.hexgrid import Hex
from ui.board_widget import BoardWidget
from ui.game_session import SeatLink
from ui.player_panel import PlayerPanel
from ui.seat import SeatError, cell_text

__all__ = ["MoveInput"]


class MoveInput:
    """The pending first stone of the move being clicked; ``sent`` is called once a
    move has gone to the server (the board then shows the seat's own position)."""

    def __init__(self, board: BoardWidget, panel: PlayerPanel, *, sent: Callable[[], None]) -> None:
        self.board = board
        self.panel = panel
        self._sent = sent
        #: The first stone clicked, and for which side (None: no move begun).
        self.cell: Hex | None = None
        self.side: str | None = None

    def clear(self, side: str | None = None) -> None:
        """Forget the pending stone (only ``side``'s, when given). The board is
        redrawn by the controller's next render."""
        if side is None or self.side == side:
            self.cell = None

    def click(self, entry: SeatLink, cell: Hex) -> None:
        """``cell`` was clicked while ``entry``'s seat is asked to move."""
        assert entry.request is not None
        if self.cell is None:
            if cell not in entry.request.legal:
                self._refuse(entry, cell)
                return
            if entry.seat.winning_first_stone(cell):
                self._send(entry, cell, None)
                return
            self.cell, self.side = cell, entry.side
            self.panel.clear_message()
            self.board.set_pending(cell, entry.side)
            return
        if cell == self.cell:
            self.take_back()
            return
        self._send(entry, self.cell, cell)

    def take_back(self) -> None:
        """Remove the pending first stone (Esc, or a click on it)."""
        if self.cell is not None:
            self.cell = None
            self.board.set_pending(None)

    def _refuse(self, entry: SeatLink, cell: Hex) -> None:
        position = entry.seat.position
        why = position.why_illegal(*cell) if position is not None else None
        reason = f": {why}" if why else ""
        self.panel.show_message(f"{cell_text(cell)} cannot be played{reason}.", "warning")

    def _send(self, entry: SeatLink, first: Hex, second: Hex | None) -> None:
        try:
            text = entry.seat.answer(first, second)
        except SeatError as error:
            self.panel.show_message(f"{str(error)[:1].upper()}{str(error)[1:]}.", "warning")
            return
        assert entry.link is not None
        entry.link.send(text)
        entry.request = None
        self.panel.set_turn_clock(None)
        self.cell = None
        self.panel.clear_message()
        self._sent()

"""The main window's online side: Play online, the leaderboard, challenge links, resign.

``OnlinePlay`` belongs to the ``MainWindow`` and does what its menu actions ask:

* ``show_play_online`` opens the Play online dialog (``ui.play_online``); when the queue
  pairs the person, ``play_matched`` seats them in the game through the controller's
  human-seat logic (``GameController.take_seat``) with the seat token;
* ``show_leaderboard`` opens the server's leaderboard (``ui.leaderboard``);
* ``open_challenge`` accepts an open challenge from its link (``htttx-ui --open
  http://HOST/c/ID``) under the name saved for that server (asked for when there is
  none) and plays it;
* ``resign`` asks for confirmation, then resigns; the seat bar shows the opponent's
  drops and returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PyQt5.QtCore import QObject
from PyQt5.QtWidgets import QInputDialog, QLineEdit, QMessageBox

from models import Match, TimeControl, TimeControlError
from ui.leaderboard import LeaderboardWindow
from ui.net import Call
from ui.online import ChallengeAddressError, ChallengeSeat, accept_challenge, challenge_address
from ui.play_online import PlayOnlineDialog
from ui.player_text import player_name
from ui.queue_client import Matched, QueueInputError, check_name
from ui.seat import SeatError
from ui.server_address import ServerAddressError, normalize_server_url

if TYPE_CHECKING:
    from ui.main_window import MainWindow

__all__ = ["OnlinePlay", "match_of"]


def match_of(time_control: str | None) -> Match | None:
    """The match settings a game with ``time_control`` is played with (None: unknown).

    >>> match_of("180+2").clock_type, match_of(None), match_of("40/2h")
    ('incremental', None, None)
    """
    if time_control is None:
        return None
    try:
        return Match(**TimeControl.parse(time_control).match_settings())
    except (TimeControlError, ValueError):
        return None


class OnlinePlay(QObject):
    """See the module's doc."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.dialog: PlayOnlineDialog | None = None
        self.leaderboard: LeaderboardWindow | None = None
        #: Ask before resigning (tests turn it off).
        self.confirm_resign = True
        controller = window.controller
        controller.opponentStatus.connect(self._opponent_status)
        controller.gameChanged.connect(self._game_changed)
        window.seat_bar.resignRequested.connect(self.resign)

    # ------------------------------------------------------------------ queue

    def show_play_online(self) -> PlayOnlineDialog:
        """The Play online dialog (created once, then shown again)."""
        if self.dialog is None:
            self.dialog = PlayOnlineDialog(self.window.network, self.window.settings, self.window)
            self.dialog.matched.connect(self.play_matched)
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        return self.dialog

    def play_matched(self, base_url: str, matched: Matched) -> None:
        """Play the game the queue found."""
        client = self.window.client(base_url)
        self.window.controller.take_seat(
            client,
            matched.game_id,
            matched.side,
            matched.token,
            match=match_of(matched.time_control),
        )
        self.window.setup.set_server_url(base_url)
        kind = "a bot" if matched.opponent.kind == "bot" else "a person"
        rating = (
            f", rated {matched.opponent.rating:.0f}" if matched.opponent.rating is not None else ""
        )
        rated = "a rated game" if matched.rated else "an unrated game"
        self.window.panel.show_message(
            f"You play {matched.side.upper()} against {matched.opponent.name} ({kind}{rating}), "
            f"{rated}.",
            "info",
        )
        self._shown_game()

    # ------------------------------------------------------------ challenges

    def open_challenge(self, url: str) -> Call | None:
        """Accept the open challenge at ``url`` and play it; None (and a message) if
        it cannot be tried."""
        panel = self.window.panel
        self.window.tabs.setCurrentIndex(0)
        try:
            base, challenge_id = challenge_address(url)
        except (ChallengeAddressError, ServerAddressError) as error:
            panel.show_message(f"{error}.", "error")
            return None
        settings = self.window.settings
        name, token = settings.online_player(base)
        if not name:
            name, ok = QInputDialog.getText(
                self.window,
                "Accept the challenge",
                f"The name to play under on {base}:",
                QLineEdit.EchoMode.Normal,
                "",
            )
            if not ok:
                panel.show_message("The challenge was not accepted.", "info")
                return None
        try:
            name = check_name(name)
        except QueueInputError as error:
            panel.show_message(f"{error}.", "error")
            return None
        panel.show_message(f"Accepting the challenge at {url}\u2026", "info")
        call = accept_challenge(self.window.network, base, challenge_id, name, token)

        def accepted(seat: object) -> None:
            if not isinstance(seat, ChallengeSeat):
                return
            if seat.player_token is not None or token is None:
                settings.set_online_player(base, name, seat.player_token)
                settings.sync()
            self.play_matched(base, seat.matched)

        call.finished.connect(accepted)
        call.failed.connect(lambda text: panel.show_message(f"{text}.", "error"))
        return call

    # ------------------------------------------------------------ leaderboard

    def show_leaderboard(self) -> LeaderboardWindow | None:
        """The leaderboard of the server in the New game form."""
        try:
            base = normalize_server_url(self.window.setup.server_url())
        except ServerAddressError as error:
            self.window.panel.show_message(str(error), "error")
            return None
        me = self.window.settings.online_player(base)[0]
        if self.leaderboard is None:
            self.leaderboard = LeaderboardWindow(self.window.network, base, self.window, me=me)
            self.leaderboard.refresh()
        else:
            self.leaderboard.set_server(base, me)
        self.leaderboard.show()
        self.leaderboard.raise_()
        self.leaderboard.activateWindow()
        return self.leaderboard

    # ------------------------------------------------------------------ game

    def resign(self) -> None:
        """Resign the game being played, once the person confirms."""
        controller = self.window.controller
        if not controller.playing:
            return
        if self.confirm_resign:
            answer = QMessageBox.question(
                self.window,
                "Resign?",
                "Give up this game? It counts as a loss.",
                QMessageBox.StandardButtons(QMessageBox.StandardButton.Yes)
                | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No,
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        try:
            controller.resign()
        except SeatError as error:
            self.window.panel.show_message(f"{str(error)[:1].upper()}{str(error)[1:]}.", "error")

    def close(self) -> None:
        if self.dialog is not None:
            self.dialog.close()
        if self.leaderboard is not None:
            self.leaderboard.close()

    def _shown_game(self) -> None:
        self.window.tabs.setCurrentIndex(0)
        self.window.board.setFocus()
        self.window.seat_bar.clear()
        self._game_changed()

    def _game_changed(self) -> None:
        self.window.seat_bar.set_playing(self.window.controller.playing)

    def _opponent_status(self, side: str, connected: bool, reconnect_ms: int) -> None:
        model = self.window.controller.model
        name = ""
        if model is not None:
            name = player_name(model.player_x if side == "x" else model.player_o, side)
        self.window.seat_bar.opponent_status(
            connected, None if reconnect_ms < 0 else reconnect_ms, name
        )

"""The main window: the board in the centre, the side panel, menus and the status bar.

The side panel has two pages: "Game" (players, clocks, evaluation, moves, messages)
and "New game" (the setup form). The replay bar sits under the board. Everything the
window does that could fail — reaching the server, creating a game, reading a file —
reports in the panel or the form and leaves the window usable; nothing here waits for
the network (``ui.net`` runs it on its own thread).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PyQt5.QtCore import QSize, Qt
from PyQt5.QtGui import QCloseEvent, QKeyEvent, QKeySequence
from PyQt5.QtWidgets import (
    QApplication,
    QFileDialog,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QStyle,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from game import notation
from game.hexgrid import Hex
from models import GameRecord, HostedBot, NewGameRequest
from ui.actions import window_action
from ui.arena_client import ArenaClient
from ui.board_widget import BoardWidget
from ui.controller import GameController
from ui.games_browser import GamesBrowser
from ui.net import Call, Network
from ui.online import is_challenge_url
from ui.online_play import OnlinePlay
from ui.plain_text import PlainLabel
from ui.player_panel import PlayerPanel
from ui.player_text import player_name
from ui.record_url import RecordUrlError, fetch_record, game_address, notation_url
from ui.replay_bar import ReplayBar
from ui.seat_bar import SeatBar
from ui.server_address import ServerAddressError
from ui.settings import Settings
from ui.setup_panel import FormValues, SetupPanel

APP_TITLE = "HTTTX Arena"
NOTATION_FILTER = "HTTTX games (*.htttx);;All files (*)"


class MainWindow(QMainWindow):
    """The desktop client's window. ``network`` is started here and closed with the
    window; ``settings`` is where the form, server and geometry are remembered."""

    def __init__(
        self,
        settings: Settings,
        network: Network | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.network = network if network is not None else Network(self)
        self.network.start()
        self._clients: dict[str, ArenaClient] = {}
        self.browser: GamesBrowser | None = None
        #: Ask before a running game the person plays in is replaced by another.
        self.confirm_leaving = True
        self.setWindowTitle(APP_TITLE)

        self.board = BoardWidget()
        self.board.setObjectName("board")
        self.replay = ReplayBar()
        self.panel = PlayerPanel()
        self.seat_bar = SeatBar()
        self.setup = SetupPanel()
        self.controller = GameController(
            self.board, self.panel, self.replay, open_socket=self.network.open_socket, parent=self
        )

        centre = QWidget()
        centre_layout = QVBoxLayout(centre)
        centre_layout.setContentsMargins(0, 0, 0, 6)
        centre_layout.setSpacing(4)
        centre_layout.addWidget(self.board, 1)
        replay_holder = QWidget()
        replay_layout = QVBoxLayout(replay_holder)
        replay_layout.setContentsMargins(8, 0, 8, 0)
        replay_layout.addWidget(self.replay)
        centre_layout.addWidget(replay_holder)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        game_page = QWidget()
        game_layout = QVBoxLayout(game_page)
        game_layout.setContentsMargins(10, 10, 10, 10)
        game_layout.addWidget(self.seat_bar)
        game_layout.addWidget(self.panel)
        self.tabs.addTab(game_page, "Game")
        # The form scrolls by itself, its "New game" button pinned at the bottom.
        self.tabs.addTab(self.setup, "New game")
        self.tabs.setMinimumWidth(340)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(centre)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 0)
        splitter.setCollapsible(0, False)
        splitter.setSizes([900, 380])
        self.splitter = splitter
        self.setCentralWidget(splitter)

        self.hover_label = QLabel("")
        self.hover_label.setMinimumWidth(150)
        self.connection_label = PlainLabel("")
        status = self.statusBar()
        assert status is not None
        status.addWidget(self.hover_label)
        status.addPermanentWidget(self.connection_label)

        #: Play online, the leaderboard, challenge links and resigning.
        self.online = OnlinePlay(self)
        self._make_actions()
        self._wire()
        self._restore()

    # ------------------------------------------------------------------ set-up

    def _make_actions(self) -> None:
        style = self.style()
        assert style is not None

        action = partial(window_action, self)
        pixmap = QStyle.StandardPixmap
        self.new_action = action(
            "&New game\u2026",
            self.show_setup,
            QKeySequence.StandardKey.New,
            pixmap.SP_FileIcon,
            "Set up a new game",
        )
        self.open_action = action(
            "&Open .htttx\u2026",
            self.open_file_dialog,
            QKeySequence.StandardKey.Open,
            pixmap.SP_DialogOpenButton,
            "Replay a game saved in HTTTX notation",
        )
        self.open_url_action = action(
            "Open &URL\u2026",
            self.open_url_dialog,
            "Ctrl+U",
            pixmap.SP_DirLinkIcon,
            "Replay a game from its link on a server (/g/ID), or take up a challenge (/c/ID)",
        )
        self.export_action = action(
            "&Export .htttx\u2026",
            self.export_file_dialog,
            QKeySequence.StandardKey.Save,
            pixmap.SP_DialogSaveButton,
            "Save the shown game in HTTTX notation",
        )
        self.browse_action = action(
            "&Browse games\u2026",
            self.show_browser,
            "Ctrl+B",
            pixmap.SP_FileDialogDetailedView,
            "Watch a live game or open a finished one from the server",
        )
        self.online_action = action(
            "&Play online\u2026",
            self.online.show_play_online,
            "Ctrl+P",
            pixmap.SP_DriveNetIcon,
            "Play a person (or a bot of your strength) from the server's queue",
        )
        self.leaderboard_action = action(
            "&Leaderboard\u2026",
            self.online.show_leaderboard,
            "Ctrl+L",
            pixmap.SP_FileDialogListView,
            "Who is best on the server: ratings, games, failures",
        )
        self.quit_action = action("&Quit", self.quit, QKeySequence.StandardKey.Quit)
        self.fit_action = action(
            "&Fit to stones", self.board.fit_to_stones, "F", None, "Frame all stones (F)"
        )
        self.zoom_in_action = action(
            "Zoom &in", lambda: self.board.zoom_by(1.25), QKeySequence.StandardKey.ZoomIn
        )
        self.zoom_out_action = action(
            "Zoom &out", lambda: self.board.zoom_by(0.8), QKeySequence.StandardKey.ZoomOut
        )
        self.about_action = action("&About", self.show_about)

        menu_bar = self.menuBar()
        assert menu_bar is not None
        game_menu = menu_bar.addMenu("&Game")
        view_menu = menu_bar.addMenu("&View")
        help_menu = menu_bar.addMenu("&Help")
        assert game_menu is not None and view_menu is not None and help_menu is not None
        for item in (self.new_action, self.open_action, self.open_url_action, self.export_action):
            game_menu.addAction(item)
        game_menu.addSeparator()
        game_menu.addAction(self.online_action)
        game_menu.addAction(self.browse_action)
        game_menu.addAction(self.leaderboard_action)
        game_menu.addSeparator()
        game_menu.addAction(self.quit_action)
        for item in (self.fit_action, self.zoom_in_action, self.zoom_out_action):
            view_menu.addAction(item)
        help_menu.addAction(self.about_action)

        toolbar = self.addToolBar("Main")
        assert toolbar is not None
        toolbar.setObjectName("main_toolbar")
        toolbar.setMovable(False)
        toolbar.setIconSize(QSize(20, 20))
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for item in (
            self.new_action,
            self.online_action,
            self.open_action,
            self.export_action,
            self.browse_action,
            self.leaderboard_action,
        ):
            toolbar.addAction(item)
        toolbar.addSeparator()
        self.fit_action.setIcon(style.standardIcon(pixmap.SP_BrowserReload))
        toolbar.addAction(self.fit_action)
        self.export_action.setEnabled(False)

    def _wire(self) -> None:
        self.board.cellHovered.connect(self._hovered)
        self.setup.connectRequested.connect(self.connect_server)
        self.setup.newGameRequested.connect(self.start_game)
        self.controller.gameChanged.connect(self._game_changed)
        self.controller.connectionChanged.connect(self.connection_label.setText)
        self.controller.gameCreated.connect(self._game_created)
        self.controller.newGameFailed.connect(self._game_failed)

    def _restore(self) -> None:
        settings = self.settings
        self.setup.set_server_url(settings.server_url)
        self.setup.set_values(FormValues.from_settings(settings.seats, settings.match))
        geometry = settings.window_geometry
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(1280, 800)
        state = settings.window_state
        if state is not None:
            self.restoreState(state)
        self.tabs.setCurrentIndex(1)

    # ------------------------------------------------------------------ server

    def client(self, url: str | None = None) -> ArenaClient:
        """The REST client of ``url`` (default: the address in the form). Raises
        ``ServerAddressError`` for an address that is not one."""
        client = ArenaClient(self.network, url if url is not None else self.setup.server_url())
        return self._clients.setdefault(client.base_url, client)

    def connect_server(self, url: str | None = None, *, keep_error: bool = False) -> None:
        """Check the server and load its hosted bots into the form. Reached, it clears
        the form's error of an earlier attempt (stale now) unless ``keep_error``."""
        try:
            client = self.client(url)
        except ServerAddressError as error:
            self.setup.set_server_status(str(error), ok=False)
            return
        self.setup.set_server_status(f"Connecting to {client.base_url}\u2026", ok=True)
        if self.controller.model is None:  # else the status bar tells of the shown game
            self.connection_label.setText(f"Connecting to {client.base_url}\u2026")
        call = client.bots()

        def loaded(bots: object) -> None:
            if not isinstance(bots, list) or not all(isinstance(b, HostedBot) for b in bots):
                return
            self.setup.set_bots(bots)
            names = ", ".join(bot.name for bot in bots) or "no hosted bots"
            self.setup.set_server_status(f"Connected to {client.base_url} ({names})", ok=True)
            if not keep_error:
                self.setup.show_error("")
            self.settings.server_url = client.base_url
            if self.controller.model is None:
                self.connection_label.setText(f"Server: {client.base_url}")
                self.panel.clear_message()

        def failed(text: str) -> None:
            self.setup.set_server_status(text, ok=False)
            if self.controller.model is not None:
                # A game on screen (a replay, say) keeps its own message and state: the
                # form says the server is unreachable.
                return
            self.connection_label.setText("Server unreachable")
            self.panel.show_message(
                f"{text}. Check the address under New game \u203a Server, start the server "
                "(make run), or open a saved game from a file.",
                "error",
            )

        call.finished.connect(loaded)
        call.failed.connect(failed)

    def leave_current_game(self) -> bool:
        """Whether the shown game may be replaced: asks first when the person is seated
        in a game still running (leaving it loses it once the reconnect window passes);
        not once the connection is lost for good, when there is nothing left to keep."""
        if not self.confirm_leaving or not self.controller.playing:
            return True
        answer = QMessageBox.question(
            self,
            "Leave the game?",
            "You are playing in this game. If you leave it, you lose it by forfeit "
            "unless you come back in time.\n\nLeave the game?",
            QMessageBox.StandardButtons(QMessageBox.StandardButton.Yes)
            | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def start_game(self, request: NewGameRequest) -> None:
        """Create the game on the server (the form was valid)."""
        if not self.leave_current_game():
            return
        try:
            client = self.client()
        except ServerAddressError as error:
            self.setup.show_error(str(error))
            return
        self.settings.server_url = client.base_url
        self.settings.seats, self.settings.match = self.setup.values().to_settings()
        self.setup.set_busy(True)
        self.controller.new_game(client, request)

    def _game_created(self, game_id: str) -> None:
        self.setup.set_busy(False)
        self.setup.show_error("")
        self.tabs.setCurrentIndex(0)
        self.board.setFocus()

    def _game_failed(self, text: str) -> None:
        self.setup.set_busy(False)
        self.setup.show_error(text)  # under the button the person just pressed
        # The Game tab keeps the game it showed: the failure must not read as news of it.
        message = f"The new game was not started. {text.rstrip('.')}."
        if self.controller.model is not None:
            message += " The game shown is still the one from before."
        self.panel.show_message(message, "error")
        # The server may have gone since it was connected: check again, so the top of
        # the form does not keep saying "Connected to" above the failure.
        self.connect_server(keep_error=True)

    def spectate(self, game_id: str, url: str | None = None) -> None:
        """Watch a live game of the server at ``url`` (default: the form's)."""
        if not self.leave_current_game():
            return
        self._watch(game_id, url)

    def _watch(self, game_id: str, url: str | None) -> bool:
        """``spectate``, leaving settled; False (and a message) for no server address."""
        try:
            client = self.client(url)
        except ServerAddressError as error:
            self.panel.show_message(str(error), "error")
            return False
        self.controller.spectate(client, game_id)
        self.tabs.setCurrentIndex(0)
        return True

    def open_server_game(self, game_id: str) -> None:
        if not self.leave_current_game():
            return
        try:
            client = self.client()
        except ServerAddressError as error:
            self.panel.show_message(str(error), "error")
            return
        self.controller.open_server_game(client, game_id)
        self.tabs.setCurrentIndex(0)

    def show_browser(self) -> None:
        """The games browser of the form's server (created once, then reused)."""
        try:
            client = self.client()
        except ServerAddressError as error:
            self.panel.show_message(str(error), "error")
            return
        if self.browser is None:
            self.browser = GamesBrowser(client, self)
            self.browser.watchRequested.connect(self.spectate)
            self.browser.openRequested.connect(self.open_server_game)
            self.browser.refresh()
        elif self.browser.client is not client:
            self.browser.set_client(client)
        else:
            self.browser.refresh()
        self.browser.show()
        self.browser.raise_()
        self.browser.activateWindow()

    def quit(self) -> None:
        """Close the window (which ends the application)."""
        self.close()

    def show_setup(self) -> None:
        self.tabs.setCurrentIndex(1)
        self.setup.new_game_button.setFocus()

    # ------------------------------------------------------------------ files

    def open_file(self, path: str | Path) -> bool:
        """Replay a ``.htttx`` file; False (and a message saying where) if it cannot."""
        if not self.leave_current_game():
            return False
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            self.panel.show_message(f"Cannot read {path.name}: {reason}.", "error")
            self.tabs.setCurrentIndex(0)
            return False
        try:
            record = notation.loads(text)
        except notation.NotationError as error:
            self.panel.show_message(
                f"{path.name} is not a valid HTTTX game: line {error.line}, "
                f"column {error.column}: {error.reason}.",
                "error",
            )
            self.tabs.setCurrentIndex(0)
            return False
        self._replay(record, path.name)
        self.settings.last_directory = str(path.parent)
        return True

    def open_url(self, url: str) -> Call | None:
        """Replay the game at ``url`` (a game server's ``/g/ID``, ``/games/ID`` or
        ``/games/ID/notation``, see ``ui.record_url``) as ``open_file`` replays a file;
        a game still being played is watched live instead (``spectate``).
        The notation is fetched and read off the GUI thread; a failure is a message
        saying why. None (and a message) if ``url`` names no game. A challenge link
        (``http://HOST/c/ID``) is accepted and played instead (``OnlinePlay``)."""
        if not self.leave_current_game():
            return None
        if is_challenge_url(url):
            return self.online.open_challenge(url)
        self.tabs.setCurrentIndex(0)
        try:
            source = notation_url(url)
        except RecordUrlError as error:
            self.panel.show_message(f"{error}.", "error")
            return None
        self.panel.show_message(f"Fetching {source}\u2026", "info")
        call = fetch_record(self.network, source)

        def loaded(record: object) -> None:
            if not isinstance(record, GameRecord):
                return
            address = game_address(source)
            if record.result is None and address is not None:
                # Replayed, a running game would stand still, "X to move", for good.
                server, game_id = address
                if self._watch(game_id, server):
                    self.panel.show_message(
                        f"Game {game_id} is still being played: watching it live.", "info"
                    )
                return
            self._replay(record, source)

        call.finished.connect(loaded)
        call.failed.connect(lambda text: self.panel.show_message(f"{text}.", "error"))
        return call

    def _replay(self, record: GameRecord, source: str) -> None:
        self.controller.show_record(record)
        self.panel.show_message(f"Replaying {source}.", "info")
        self.tabs.setCurrentIndex(0)

    def export_file(self, path: str | Path) -> bool:
        """Save the shown game as HTTTX notation; False (and a message) if it cannot."""
        model = self.controller.model
        if model is None or not self.controller.has_game:
            return False
        path = Path(path)
        try:
            text = notation.dumps(model.to_record(), clean_tags=True)
            path.write_text(text, encoding="utf-8")
        except (OSError, ValueError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            self.panel.show_message(f"Cannot save {path.name}: {reason}.", "error")
            return False
        self.settings.last_directory = str(path.parent)
        self.panel.show_message(f"Saved {path.name}.", "info")
        return True

    def open_file_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open game", self.settings.last_directory, NOTATION_FILTER
        )
        if path:
            self.open_file(path)

    def open_url_dialog(self) -> None:
        """Ask for a game's or a challenge's link (the clipboard's, when it holds one)
        and open it as ``--open`` does (``open_url``)."""
        clipboard = QApplication.clipboard()
        pasted = clipboard.text().strip() if clipboard is not None else ""
        start = pasted if pasted.startswith(("http://", "https://")) else ""
        url, ok = QInputDialog.getText(
            self,
            "Open URL",
            "A game's link (http://HOST/g/ID, /games/ID or its notation) or a "
            "challenge's (http://HOST/c/ID):",
            QLineEdit.EchoMode.Normal,
            start,
        )
        if ok and url.strip():
            self.open_url(url.strip())

    def export_file_dialog(self) -> None:
        model = self.controller.model
        if model is None or not self.controller.has_game:
            return
        name = f"{model.game_id or 'game'}.htttx"
        start = str(Path(self.settings.last_directory or Path.home()) / name)
        path, _ = QFileDialog.getSaveFileName(self, "Export game", start, NOTATION_FILTER)
        if path:
            if not Path(path).suffix:
                path += ".htttx"
            self.export_file(path)

    def show_about(self) -> None:
        QMessageBox.about(
            self,
            f"About {APP_TITLE}",
            "<b>HTTTX Arena</b><br>Hexagonal tic-tac-toe: six in a row on an infinite "
            "board, two stones a turn.<br><br>Play against the server's bots or a friend at "
            "the same screen, watch live games and replay saved ones.",
        )

    # ------------------------------------------------------------------ events

    def _hovered(self, cell: Hex | None) -> None:
        if cell is None:
            self.hover_label.setText("")
            return
        q, r = cell
        self.hover_label.setText(f"q {q}, r {r}  (s {-q - r})")

    def _game_changed(self) -> None:
        model = self.controller.model
        # A game id still being asked for is no game yet: nothing to save or title.
        known = self.controller.has_game
        self.export_action.setEnabled(known)
        if model is None or not known:
            self.setWindowTitle(APP_TITLE)
            return
        x = player_name(model.player_x, "x")
        o = player_name(model.player_o, "o")
        self.setWindowTitle(f"{x} vs {o} \u2014 {APP_TITLE}")

    def keyPressEvent(self, event: QKeyEvent | None) -> None:
        # Keys no child used reach the window: the arrows, Home and End step the replay.
        if event is not None and self.replay.handle_key(event.key()):
            event.accept()
            return
        super().keyPressEvent(event)

    def closeEvent(self, event: QCloseEvent | None) -> None:
        if not self.leave_current_game():
            if event is not None:
                event.ignore()  # the person stays in the game
            return
        self.settings.window_geometry = self.saveGeometry()
        self.settings.window_state = self.saveState()
        self.settings.seats, self.settings.match = self.setup.values().to_settings()
        self.settings.sync()
        self.controller.close()
        if self.browser is not None:
            self.browser.close()
        self.online.close()
        self.network.close()
        super().closeEvent(event)

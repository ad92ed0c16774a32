"""One shown game, tied together: the model, its sockets, the board and the side panel.

``GameController`` shows one game at a time, from one of three sources:

* a game this client created (``new_game``): a spectator socket feeds the ``GameModel``
  (names, meta, clocks, evaluations, history) and each human seat gets its own
  ``HumanSeat`` over ``/ws?token=``; with two human seats (two people at one screen)
  each click goes to the seat whose turn it is;
* a seat handed out by the server (``take_seat``: the queue paired the person, or they
  accepted an open challenge): the same, for that one seat;
* a live game watched from the games browser (``spectate``): the spectator socket only;
* a record (``show_record``): a finished game from the server or a ``.htttx`` file.

A move is two clicks (``ui.move_input``): the first stone is shown as pending (clicking
it again or Esc takes it back), the second sends the ``move_response``; a first stone
that wins on its own is sent at once. Viewing an older position (replay bar, move
list) turns input off; a new move request, or a click on the board while the person
is to move, brings the view back to the latest position.

While a person is to move, the seat's own board is the authority: the spectator stream
may lag behind the ``move_request`` by a packet, so whichever board has more stones is
shown. Every failure — a refused request, a ``nope``, a forfeit, a dropped socket —
becomes a message in the panel; a dropped seat reconnects with its token a few times
(the server keeps the seat for a while and resends ``setup`` and the pending request).
Once the client gives up on every socket of a live game, the game is shown stopped:
its clocks stop, it is no longer live or playable, and its result is unknown here.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PyQt5.QtCore import QObject, QTimer, pyqtSignal

from game.hexgrid import Hex
from models import (
    AnalysisPacket,
    BoardUpdatePacket,
    EndPacket,
    GameRecord,
    Match,
    NewGameRequest,
    NewGameResponse,
    NopePacket,
    ProtocolError,
    SetupPacket,
)
from ui.arena_client import ArenaClient
from ui.board_widget import BoardWidget
from ui.game_model import GameModel, InconsistentGameError, read_spectator_packet
from ui.game_session import (
    GiveUp,
    SeatLink,
    SeatOfflineError,
    Session,
    ShownPosition,
    after_drop,
)
from ui.move_input import MoveInput
from ui.player_panel import PlayerPanel
from ui.replay_bar import ReplayBar
from ui.seat import (
    GameEnded,
    GameFinishedError,
    HeartbeatSeen,
    HumanSeat,
    MoveRequested,
    OpponentStatus,
    Refused,
    SeatEvent,
    SeatStarted,
    Violation,
)
from ui.socket_link import SocketLink

#: The cells drawn while no game is shown.
EMPTY_BOARD: frozenset[Hex] = frozenset(
    (q, r) for q in range(-5, 6) for r in range(-5, 6) if abs(q + r) <= 5
)


class GameController(QObject):
    """Shows one game on ``board``, ``panel`` and ``replay``.

    Signals: ``gameChanged`` (another game is shown, or it changed: title, actions),
    ``connectionChanged(text)`` (for the status bar), ``newGameFailed(text)`` and
    ``gameCreated(game_id)`` (answers to ``new_game``), ``opponentStatus(side,
    connected, reconnect_ms)`` (a person's opponent dropped or came back; -1: the
    server gave no reconnect window).
    """

    gameChanged = pyqtSignal()
    opponentStatus = pyqtSignal(str, bool, int)
    connectionChanged = pyqtSignal(str)
    newGameFailed = pyqtSignal(str)
    gameCreated = pyqtSignal(str)

    def __init__(
        self,
        board: BoardWidget,
        panel: PlayerPanel,
        replay: ReplayBar,
        *,
        open_socket: Callable[[str], SocketLink],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.board = board
        self.panel = panel
        self.replay = replay
        self._open_socket = open_socket
        self.session: Session | None = None
        #: The move being clicked (its pending first stone).
        self.input = MoveInput(board, panel, sent=self._render)
        #: What the board shows now.
        self.shown = ShownPosition()
        self._render()
        board.cellClicked.connect(self._cell_clicked)
        board.inactiveCellClicked.connect(self._back_to_current)
        board.escapePressed.connect(self.input.take_back)
        replay.indexChanged.connect(self._index_changed)
        panel.moveSelected.connect(replay.set_index)

    # ------------------------------------------------------------------ queries

    @property
    def model(self) -> GameModel | None:
        return self.session.model if self.session is not None else None

    @property
    def pending(self) -> Hex | None:
        """The first stone of the move being clicked, if any."""
        return self.input.cell

    @property
    def seats(self) -> list[SeatLink]:
        return self.session.seats if self.session is not None else []

    def active_seat(self) -> SeatLink | None:
        """The human seat the server is waiting for, if any."""
        return self.session.active_seat() if self.session is not None else None

    @property
    def playing(self) -> bool:
        """Whether a person at this screen holds a seat in the shown, running game."""
        return self.session is not None and self.session.playing

    def resign(self) -> str:
        """Resign the game for the person at this screen (the seat to move when two
        people share it); the side resigned. Raises ``SeatError`` when there is
        nothing to resign, ``SeatOfflineError`` while the seat's socket is down (the
        resignation could not reach the server). The server ends the game; its ``end``
        follows."""
        entry = self.session.seat_to_resign() if self.session is not None else None
        if entry is None:
            raise GameFinishedError("there is no game of yours to resign")
        if entry.link is None or not entry.connected:
            raise SeatOfflineError(
                "not connected to the server, so the resignation cannot be sent; "
                "try again once reconnected"
            )
        text = entry.seat.resign()
        entry.link.send(text)
        entry.request = None
        self.input.clear()
        self.panel.set_turn_clock(None)
        self.panel.show_message(f"{entry.side.upper()} resigned.", "info")
        self._render()
        self.gameChanged.emit()
        return entry.side

    # ------------------------------------------------------------------ sources

    def new_game(self, client: ArenaClient, request: NewGameRequest) -> None:
        """``POST /game/new``, then seat this client on every human seat and watch."""
        call = client.new_game(request)

        def created(response: object) -> None:
            if not isinstance(response, NewGameResponse):
                self.newGameFailed.emit("The server sent an unexpected answer to POST /game/new.")
                return
            self.start(client, request, response)
            self.gameCreated.emit(response.game_id)

        call.finished.connect(created)
        call.failed.connect(self.newGameFailed.emit)

    def start(
        self, client: ArenaClient, request: NewGameRequest, response: NewGameResponse
    ) -> None:
        """Show the game just created: watch it and take its human seats."""
        tokens = (("x", response.token_x), ("o", response.token_o))
        session = Session.live(
            client,
            response.game_id,
            request.match_config,
            tokens=[(side, token) for side, token in tokens if token is not None],
            request=request,
        )
        self._replace(session, live=True)
        humans = len(session.seats)
        if humans == 2:
            self.panel.show_message(
                "Two people at one screen: each click plays for the side to move.", "info"
            )
        self._connect_spectator(session)
        for entry in session.seats:
            self._connect_seat(session, entry)

    def take_seat(
        self,
        client: ArenaClient,
        game_id: str,
        side: str,
        token: str,
        *,
        match: Match | None = None,
    ) -> None:
        """Play ``side`` of the game ``game_id`` with the seat ``token`` the server
        handed out (the queue's ``matched``, an accepted challenge), and watch it."""
        session = Session.live(client, game_id, match, tokens=[(side, token)])
        self._replace(session, live=True)
        self._connect_spectator(session)
        self._connect_seat(session, session.seats[0])

    def spectate(self, client: ArenaClient, game_id: str) -> None:
        """Watch a live game from its current position (its history comes with it)."""
        session = Session.live(client, game_id)
        self._replace(session, live=True)
        self._connect_spectator(session)

    def show_record(self, record: GameRecord, *, index: int | None = None) -> None:
        """Replay a recorded game (from the server or a file), offline."""
        try:
            model = GameModel.from_record(record)
        except InconsistentGameError as error:
            self.panel.show_message(f"This game cannot be replayed: {error}.", "error")
            return
        self._replace(Session(model=model), live=False, index=index)
        self.panel.set_connection("Replay")
        self.connectionChanged.emit("Replay")

    def open_server_game(self, client: ArenaClient, game_id: str) -> None:
        """Load a finished game's record from the server and replay it."""
        call = client.game(game_id)

        def loaded(record: object) -> None:
            if isinstance(record, GameRecord):
                self.show_record(record)
            else:
                self.panel.show_message("The server sent an unexpected game record.", "error")

        call.finished.connect(loaded)
        call.failed.connect(lambda text: self.panel.show_message(f"{text}.", "error"))

    @property
    def has_game(self) -> bool:
        """Whether a game is shown that exists (see ``Session.known``): one to export."""
        return self.session is not None and self.session.known

    def close(self) -> None:
        """Stop the shown game's sockets (the game itself goes on on the server)."""
        session = self.session
        if session is None:
            return
        session.closed = True
        if session.spectator is not None:
            session.spectator.close()
        for entry in session.seats:
            if entry.link is not None:
                entry.link.close()

    # ------------------------------------------------------------------ internals

    def _replace(self, session: Session, *, live: bool, index: int | None = None) -> None:
        self.close()
        self.session = session
        self.input.clear()
        self.panel.clear_message()
        self.panel.set_model(session.model)
        self.replay.reset(len(session.model.moves), live=live, index=index)
        self._render()
        self.board.fit_to_stones()
        self.gameChanged.emit()

    def _show_nothing(self) -> None:
        """No game: the sockets closed, the empty board, the panel's "No game"."""
        self.close()
        self.session = None
        self.input.clear()
        self.panel.clear_message()
        self.panel.set_model(None)
        self.panel.set_connection("")
        self.connectionChanged.emit("")
        self.replay.reset(0, live=False)
        self._render()
        self.gameChanged.emit()

    def _alive(self, session: Session) -> bool:
        return self.session is session and not session.closed

    def _model_changed(self, session: Session) -> None:
        self.panel.refresh()
        model = session.model
        self.replay.set_live_game(model.result is None and not model.stream_lost)
        self.replay.set_count(len(session.model.moves))
        self._render()
        self.gameChanged.emit()

    # ---- spectator socket

    def _connect_spectator(self, session: Session) -> None:
        assert session.client is not None and session.model.game_id is not None
        link = self._open_socket(session.client.spectate_url(session.model.game_id))
        session.spectator = link
        link.connect_handlers(
            opened=lambda: self._spectator_opened(session),
            message=lambda text: self._spectator_message(session, text),
            lost=lambda code, reason: self._spectator_lost(session, link, code, reason),
        )
        self._update_connection()

    def _spectator_opened(self, session: Session) -> None:
        if not self._alive(session):
            return
        session.spectator_connected = True
        session.spectator_attempts = 0
        self._update_connection()

    def _spectator_message(self, session: Session, text: str) -> None:
        if not self._alive(session):
            return
        model = session.model
        try:
            packet = read_spectator_packet(text)
        except ProtocolError as error:
            self.panel.show_message(f"The server sent something unreadable: {error}", "error")
            return
        if packet is None:
            return  # a packet type this client does not know (a newer server's): ignored
        if isinstance(packet, NopePacket):
            self.panel.show_message(
                f"The server refused to show this game: {packet.reason}", "error"
            )
            return
        assert isinstance(packet, SetupPacket | BoardUpdatePacket | AnalysisPacket | EndPacket)
        try:
            model.apply(packet, time.monotonic())
            session.heard = True
        except InconsistentGameError as error:
            # The stream contradicts itself: start it over, the setup resends everything.
            self.panel.show_message(f"Reloading the game ({error}).", "warning")
            if session.spectator is not None:
                session.spectator.close()
            return
        if isinstance(packet, EndPacket):
            self._game_over(session, packet)
        self._model_changed(session)

    def _spectator_lost(self, session: Session, link: SocketLink, code: int, reason: str) -> None:
        if not self._alive(session) or session.spectator is not link:
            return
        session.spectator_connected = False
        if session.model.result is not None:
            self._update_connection()
            return
        delay = after_drop(code, session.spectator_attempts)
        if delay is GiveUp.REFUSED:
            # Refused for good (an unknown game): trying again cannot help.
            session.spectator_lost = True
            message = f"The server cannot show this game: {reason}."
            if not session.known:
                # Nothing was ever shown of it: no board, players or record to keep.
                self._show_nothing()
                self.panel.show_message(message, "error")
                return
            self._gave_up(session, message)
            return
        if delay is GiveUp.EXHAUSTED:
            session.spectator_lost = True
            # While a seat is still being retaken, its own outcome says what matters.
            self._gave_up(session, session.lost_message(reason) if session.cut_off else None)
            return
        session.spectator_attempts += 1
        self._update_connection(reconnecting=True)

        def retry() -> None:
            if self._alive(session) and session.model.result is None:
                self._connect_spectator(session)

        QTimer.singleShot(int(delay * 1000), retry)

    # ---- human seats

    def _connect_seat(self, session: Session, entry: SeatLink) -> None:
        assert session.client is not None
        link = self._open_socket(session.client.seat_url(entry.token))
        entry.link = link
        link.connect_handlers(
            opened=lambda: self._seat_opened(session, entry),
            message=lambda text: self._seat_message(session, entry, text),
            lost=lambda code, reason: self._seat_lost(session, entry, link, code, reason),
        )
        self._update_connection()

    def _seat_opened(self, session: Session, entry: SeatLink) -> None:
        if not self._alive(session):
            return
        entry.connected = True
        if entry.attempts:
            self.panel.show_message(f"Reconnected as {entry.side.upper()}.", "info")
        entry.attempts = 0
        self._update_connection()

    def _seat_message(self, session: Session, entry: SeatLink, text: str) -> None:
        if not self._alive(session):
            return
        for event in entry.seat.receive(text):
            self._seat_event(session, entry, event)
        self._render()

    def _seat_event(self, session: Session, entry: SeatLink, event: SeatEvent) -> None:
        match event:
            case SeatStarted():
                pass
            case MoveRequested():
                entry.request = event
                if self.input.side != event.side:
                    self.input.clear()
                self.replay.follow()
                clock = event.clock_x_ms if event.side == "x" else event.clock_o_ms
                if clock is None and event.time_limit_s is not None:
                    clock = int(event.time_limit_s * 1000)
                self.panel.set_turn_clock(event.side, clock)
            case HeartbeatSeen(waiting=waiting):
                self.panel.heartbeat_seen(waiting)
            case GameEnded(packet=packet):
                entry.request = None
                self.input.clear()
                self.panel.set_turn_clock(None)
                # The spectator stream normally reports the end too; without it, this does.
                if session.model.result is None and not session.spectator_connected:
                    session.model.apply(packet, time.monotonic())
                    self._game_over(session, packet)
                    self._model_changed(session)
            case Refused(reason=reason):
                entry.request = None
                self.input.clear()
                self.panel.show_message(
                    f"The server refused the move of {entry.side.upper()}: {reason}", "error"
                )
            case OpponentStatus(side=side, connected=connected, reconnect_ms=ms):
                self.opponentStatus.emit(side, connected, -1 if ms is None else ms)
            case Violation(reason=reason):
                entry.request = None
                self.input.clear()
                self.panel.show_message(
                    f"The server broke the protocol ({reason}); the seat of "
                    f"{entry.side.upper()} was closed.",
                    "error",
                )
                if entry.link is not None:
                    entry.link.close()

    def _seat_lost(
        self, session: Session, entry: SeatLink, link: SocketLink, code: int, reason: str
    ) -> None:
        if not self._alive(session) or entry.link is not link:
            return
        entry.connected = False
        entry.request = None
        self.panel.set_turn_clock(None)
        self.input.clear(entry.side)
        if entry.seat.over or session.model.result is not None:
            self._update_connection()
            self._render()
            return
        delay = after_drop(code, entry.attempts)
        if delay is GiveUp.REFUSED:
            # The token was refused (unknown, or the seat is taken): no use trying again.
            entry.link, entry.lost, entry.refused = None, True, True
            self._gave_up(session, session.refused_message(entry.side, reason))
            return
        if delay is GiveUp.EXHAUSTED:
            entry.link, entry.lost = None, True
            self._gave_up(session, session.lost_message(reason))
            return
        entry.attempts += 1
        self._update_connection(reconnecting=True)
        self.panel.show_message(
            f"The connection of {entry.side.upper()} dropped; reconnecting\u2026", "warning"
        )

        def retry() -> None:
            if self._alive(session) and session.model.result is None and not entry.seat.over:
                # The server starts a returning seat over with ``setup``: a fresh state machine.
                entry.seat = HumanSeat(entry.side, match=entry.seat.match)
                self._connect_seat(session, entry)

        QTimer.singleShot(int(delay * 1000), retry)
        self._render()

    def _gave_up(self, session: Session, message: str | None) -> None:
        """A socket of ``session`` will not be opened again; ``message`` says what that
        means (None: nothing yet). Once no socket carries the live game, it is stopped
        here rather than shown running on (clocks counting, Resign offered)."""
        if message is not None:
            self.panel.show_message(message, "error")
        if session.cut_off and session.model.result is None:
            session.model.lose_stream(time.monotonic())
        self._update_connection()
        self._model_changed(session)

    def _game_over(self, session: Session, packet: EndPacket) -> None:
        for entry in session.seats:
            entry.request = None
        self.input.clear()
        if session.model.result is None:
            return
        message = session.end_message(packet)
        if message is not None:
            self.panel.show_message(*message)
        self._update_connection()

    def _update_connection(self, *, reconnecting: bool = False) -> None:
        session = self.session
        if session is None or session.client is None:
            return
        text, ok = session.connection_state(reconnecting=reconnecting)
        self.panel.set_connection(text, ok=ok)
        self.connectionChanged.emit(text)

    # ------------------------------------------------------------------ board

    def _index_changed(self, index: int) -> None:
        self.panel.select_index(index)
        self._render()
        if not self.replay.following:  # stepping: the move stepped to, at the zoom chosen
            self.board.bring_into_view(self.shown.last_move)

    def _render(self) -> None:
        session = self.session
        if session is None:
            # No game: an empty stretch of board around the origin, not a blank canvas.
            self.board.set_position({}, legal=EMPTY_BOARD)
            self.board.set_interactive(False)
            self.board.set_pending(None)
            self.shown = ShownPosition()
            return
        shown = session.shown_at(self.replay.index)
        self.board.set_position(
            shown.stones,
            last_move=shown.last_move,
            winning_line=shown.winning_line,
            legal=shown.legal,
        )
        at_latest = shown.index == len(session.model.moves)
        if at_latest and shown.last_move and self.replay.following:
            self._keep_in_view(shown.last_move)
        self.shown = shown
        side = shown.interactive_side
        self.board.set_interactive(side is not None, side)
        if side is None or self.input.side != side:
            self.input.clear()
        self.board.set_pending(self.input.cell, self.input.side if self.input.cell else None)
        # Still the person's move while they look back at an older position.
        active = session.active_seat()
        self.panel.set_human_turn(active.side if active is not None else None)

    def _keep_in_view(self, cells: tuple[Hex, ...]) -> None:
        """Following a live game, a move played off-screen reframes the board."""
        area = self.board.rect().adjusted(8, 8, -8, -8)
        if self.board.isVisible() and not all(
            area.contains(self.board.center_of(cell)) for cell in cells
        ):
            self.board.fit_to_stones()

    def _cell_clicked(self, q: int, r: int) -> None:
        entry = self.active_seat()
        if entry is None or entry.request is None or entry.link is None:
            return
        self.input.click(entry, (q, r))

    def _back_to_current(self) -> None:
        """A click on the board while it takes no input: if the person is to move, they
        are looking back at an older position, so it brings back the current one."""
        looking_back = self.replay.index < self.replay.count
        if self.active_seat() is None or not looking_back:
            return
        self.replay.follow()
        self.panel.show_message("Back to the current position — click again to play.", "info")

    def take_back(self) -> None:
        """Remove the pending first stone (Esc, or a click on it)."""
        self.input.take_back()

"""The side panel: its texts (pure), the widget fed by a GameModel, and the panel in a
short window (the real window, a game opened offline)."""

from __future__ import annotations

from PyQt5.QtCore import QEvent, Qt
from PyQt5.QtGui import QKeyEvent
from PyQt5.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from game import notation
from models import (
    Board,
    Cell,
    EndCause,
    GameResult,
    GameStatus,
    Meta,
    Player,
    PlayerType,
    PositionEvaluation,
    RecordPlayer,
    ResultReason,
    SetupPacket,
)
from ui.game_model import GameModel
from ui.main_window import MainWindow
from ui.player_panel import PlayerPanel
from ui.player_text import (
    describe_evaluation,
    describe_result,
    evaluation_share,
    format_clock,
    player_details,
    player_name,
)

ANN = RecordPlayer(name="Ann", type=PlayerType.HUMAN)
BOT = RecordPlayer(
    type=PlayerType.BOT, meta=Meta(name="threat", version="2.1", tags=["tactical", "fast"])
)


def test_clock_texts() -> None:
    assert format_clock(None) == "\u2014"
    assert format_clock(0) == "0:00.0"
    assert format_clock(9_950) == "0:09.9"
    assert format_clock(61_000) == "1:01.0"
    assert format_clock(3_600_000) == "1:00:00"


def test_names_and_details() -> None:
    assert player_name(ANN, "x") == "Ann"
    assert player_name(BOT, "o") == "threat"
    assert player_name(RecordPlayer(type=PlayerType.HUMAN), "o") == "Human"
    assert player_name(RecordPlayer(), "o") == "Player O"
    assert player_details(ANN) == "Human"
    assert player_details(BOT) == "Bot \u00b7 v2.1 \u00b7 tactical, fast"
    assert player_details(RecordPlayer()) == ""


def test_results_name_the_players_and_the_cause() -> None:
    win = GameResult(winner=Player.O, reason=ResultReason.WIN)
    assert describe_result(win, ANN, BOT) == "threat (O) wins with a line."
    timeout = GameResult(winner=Player.X, reason=ResultReason.FORFEIT, cause=EndCause.TIMEOUT)
    assert describe_result(timeout, ANN, BOT) == "Ann (X) wins: threat (O) ran out of time."
    nope = GameResult(winner=Player.O, reason=ResultReason.FORFEIT, cause=EndCause.PROTOCOL_ERROR)
    assert describe_result(nope, ANN, BOT) == "threat (O) wins: Ann (X) broke the protocol."
    draw = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.TURN_LIMIT)
    assert describe_result(draw, ANN, BOT) == "Draw: the turn limit was reached."


def test_evaluations() -> None:
    assert describe_evaluation(PositionEvaluation(win_in=-3)) == "O wins in 3"
    assert describe_evaluation(PositionEvaluation(heuristic=0.25)) == "+0.25 (X better)"
    assert describe_evaluation(PositionEvaluation(heuristic=0.0)) == "Even"
    assert evaluation_share(PositionEvaluation(heuristic=-4.0)) == 0.0
    assert evaluation_share(PositionEvaluation(heuristic=0.5)) == 0.75
    assert evaluation_share(PositionEvaluation(win_in=2)) == 1.0


GAME = """version[2]
playercross[Ann]
playercircle[Bob];
1. [1,0] [2,0];
2. [0,1] [0,2] {%40};
3. [-1,0] [-2,0];
"""


def test_the_panel_shows_a_recorded_game(qtbot: QtBot) -> None:
    now = [100.0]
    panel = PlayerPanel(clock=lambda: now[0])
    qtbot.addWidget(panel)
    assert panel.evaluation.isHidden()
    model = GameModel.from_record(notation.loads(GAME))
    panel.set_model(model)
    assert panel.card_x.name.text() == "Ann"
    assert panel.card_o.name.text() == "Bob"
    assert [panel.moves.item(i).text() for i in range(panel.moves.count())] == [  # type: ignore[union-attr]
        "Start",
        "1. O [1,0] [2,0]",
        "2. X [0,1] [0,2]",
        "3. O [-1,0] [-2,0]",
    ]
    assert model.latest_evaluation() == PositionEvaluation(heuristic=0.4)
    assert not panel.evaluation.isHidden()
    assert panel.evaluation.caption == "+0.40 (X better)"
    emitted: list[int] = []
    panel.moveSelected.connect(emitted.append)
    item = panel.moves.item(2)
    assert item is not None
    panel.moves.itemClicked.emit(item)
    assert emitted == [2]
    panel.select_index(1)
    assert panel.moves.currentRow() == 1


def send_key(widget: QWidget, key: Qt.Key) -> None:
    for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        QApplication.sendEvent(widget, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier))


def test_the_keys_that_move_along_the_move_list_move_the_board_too(
    window: MainWindow,
) -> None:
    # A person clicks a move in the list, then walks through the game with the arrow
    # keys as in any list: the board must show the row the list highlights. The list
    # took Up and Down (and Home, End, Page Up/Down) for itself and moved its
    # highlight alone, the board staying on the move clicked.
    window.controller.show_record(notation.loads(GAME))
    window.tabs.setCurrentIndex(0)
    model, moves, replay = window.controller.model, window.panel.moves, window.replay
    assert model is not None
    replay.set_index(1)
    moves.setFocus()
    send_key(moves, Qt.Key.Key_Down)
    assert (moves.currentRow(), replay.index) == (2, 2)
    assert window.controller.shown.stones == model.stones_at(2)
    send_key(moves, Qt.Key.Key_Up)
    send_key(moves, Qt.Key.Key_Up)
    assert (moves.currentRow(), replay.index) == (0, 0)
    send_key(moves, Qt.Key.Key_End)
    assert (moves.currentRow(), replay.index) == (3, 3)
    send_key(moves, Qt.Key.Key_Home)
    assert (moves.currentRow(), replay.index) == (0, 0)
    # Left and Right, which a one-column list does not use, step the replay as before.
    send_key(moves, Qt.Key.Key_Right)
    assert (moves.currentRow(), replay.index) == (1, 1)


def test_heartbeats_and_messages(qtbot: QtBot) -> None:
    now = [10.0]
    panel = PlayerPanel(clock=lambda: now[0])
    qtbot.addWidget(panel)
    panel.heartbeat_seen(True)
    now[0] = 13.2
    panel.tick()
    assert panel.heartbeat.text() == "\u2665 3 s ago \u00b7 waiting for you"
    panel.show_message("Cannot reach the server.", "error")
    assert not panel.message.isHidden() and panel.message.property("level") == "error"
    panel.clear_message()
    assert panel.message.isHidden()


def test_a_human_turn_clock_counts_down_and_turns_red(qtbot: QtBot) -> None:
    now = [0.0]
    panel = PlayerPanel(clock=lambda: now[0])
    qtbot.addWidget(panel)
    panel.set_model(GameModel())
    panel.set_turn_clock("o", 12_000)
    assert panel.card_o.clock.text() == "0:12.0"
    assert panel.card_o.turn.text() == "to move"
    assert "c0392b" not in panel.card_o.clock.styleSheet()
    now[0] = 3.0
    panel.tick()
    assert panel.card_o.clock.text() == "0:09.0"
    assert "c0392b" in panel.card_o.clock.styleSheet()
    now[0] = 30.0
    panel.tick()
    assert panel.card_o.clock.text() == "0:00.0"
    panel.set_turn_clock(None)
    assert panel.card_o.clock.text() == "\u2014"


def test_a_move_request_ahead_of_the_stream_stops_the_opponent_s_turn_and_clock(
    qtbot: QtBot,
) -> None:
    # A person plays X against a bot. The bot's move reaches the person's seat (a move
    # request) before the spectator stream, which the server flushes a little later
    # (--spectator-flush, 250 ms by default, up to 1 s): the stream still says O is to
    # move. Only X is to move now, and O's clock stopped when O moved.
    now = [50.0]
    panel = PlayerPanel(clock=lambda: now[0])
    qtbot.addWidget(panel)
    model = GameModel()
    model.apply(
        SetupPacket(
            game_id="g1",
            board=Board(cells=[Cell(q=0, r=0, p=Player.X)]),
            player_x=ANN,
            player_o=BOT,
            to_move=Player.O,
            status=GameStatus.IN_PROGRESS,
            clock_x_ms=60_000,
            clock_o_ms=60_000,
        ),
        now[0],
    )
    panel.set_model(model)
    now[0] = 52.0  # O thought for 2 s, then moved
    panel.set_turn_clock("x", 60_000)
    panel.set_human_turn("x")
    assert panel.card_x.turn.text() == "your move"
    assert panel.card_o.turn.text() == ""
    now[0] = 53.5
    panel.tick()
    assert panel.card_x.clock.text() == "0:58.5"
    assert panel.card_o.clock.text() == "0:58.0"  # not still running down


def test_the_evaluation_bar_shows_the_result_once_the_game_is_over(qtbot: QtBot) -> None:
    panel = PlayerPanel(clock=lambda: 0.0)
    qtbot.addWidget(panel)
    model = GameModel.from_record(notation.loads(GAME))
    model.result = GameResult(winner=Player.O, reason=ResultReason.FORFEIT, cause=EndCause.TIMEOUT)
    panel.set_model(model)
    assert (panel.evaluation.caption, panel.evaluation.share) == ("O won", 0.0)


def test_an_aborted_game_is_not_called_a_draw(qtbot: QtBot) -> None:
    panel = PlayerPanel(clock=lambda: 0.0)
    qtbot.addWidget(panel)
    model = GameModel.from_record(notation.loads(GAME))
    model.result = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.ABORTED)
    panel.set_model(model)
    assert (panel.evaluation.caption, panel.evaluation.share) == ("Aborted", 0.5)
    assert panel.evaluation.neutral  # grey: not an even split between the sides
    panel.select_index(2)  # an earlier position: the bot's opinion, in the sides' colours
    assert not panel.evaluation.neutral
    model.result = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.TURN_LIMIT)
    panel.select_index(3)
    assert (panel.evaluation.caption, panel.evaluation.neutral) == ("Draw", False)


def test_the_evaluation_bar_follows_the_position_in_view(qtbot: QtBot) -> None:
    panel = PlayerPanel(clock=lambda: 0.0)
    qtbot.addWidget(panel)
    model = GameModel.from_record(notation.loads(GAME))  # %40 given with move 2
    panel.set_model(model)
    assert panel.evaluation.caption == "+0.40 (X better)"
    panel.select_index(1)  # before any evaluation
    assert (panel.evaluation.caption, panel.evaluation.share) == ("No evaluation yet", 0.5)
    panel.select_index(2)
    assert panel.evaluation.caption == "+0.40 (X better)"
    panel.select_index(3)  # move 3 gave none: the last opinion stands
    assert panel.evaluation.caption == "+0.40 (X better)"


def test_a_short_window_cuts_no_line_of_a_card_or_of_the_status(
    qtbot: QtBot, window: MainWindow
) -> None:
    # A bot's tags wrap onto a second line of its card, the result onto three lines.
    # Qt counts a wrapped label's minimum as one line, so a short window squeezed the
    # card and the status and cut their lines in half.
    record = notation.loads(
        "version[2] playercircle[A person with a long name] endreason[time] winner[circle];"
        " 1. [1,0] [2,0];"
    )
    searcher = RecordPlayer(
        type=PlayerType.BOT,
        meta=Meta(name="SearchBot", tags=["search", "alpha-beta", "threat-search"]),
    )
    window.controller.show_record(record.model_copy(update={"player_x": searcher}))
    window.tabs.setCurrentIndex(0)
    window.resize(400, 300)  # less than it can be: it stops at its minimum
    for _ in range(3):
        QApplication.processEvents()  # the layout settles
    panel = window.panel
    details, status = panel.card_x.details, panel.status
    assert details.heightForWidth(details.width()) > details.fontMetrics().height()  # wraps
    for label in (details, status):
        assert label.height() >= label.heightForWidth(label.width()), label.text()
    assert panel.card_x.contentsRect().contains(details.geometry())

"""The desktop client end to end: the real window against a real game server on loopback.

Games are played by simulated mouse clicks on the board; the server's hosted threat bot
is the opponent. Run with ``QT_QPA_PLATFORM=offscreen``.
"""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path

import pytest
from PyQt5.QtCore import QEvent, QPoint, QPointF, QSettings, Qt, QTimer
from PyQt5.QtGui import QKeyEvent, QMouseEvent
from PyQt5.QtWidgets import QApplication, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from game import notation
from game.hexgrid import Hex, distance
from models import (
    GameRecord,
    GameStatus,
    NewGameRequest,
    Player,
    PlayerConfig,
    PlayerType,
    ResultReason,
)
from tests.ui_server import game_server
from ui.app import main, parse_args
from ui.controller import GameController
from ui.games_browser import RESULT_COLUMN, GamesBrowser
from ui.main_window import MainWindow
from ui.settings import Settings
from ui.setup_panel import FormValues, SeatChoice

#: Generous bounds, only against hangs (games against the threat bot take seconds).
WAIT_MS = 60_000


# Input goes in as events, as the platform would send it: pytest-qt's QTest helpers are
# untyped, and the offscreen platform turns no cursor move into an event.


def send_click(widget: QWidget, at: QPoint) -> None:
    for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
        held = (
            Qt.MouseButton.LeftButton
            if kind == QEvent.Type.MouseButtonPress
            else Qt.MouseButton.NoButton
        )
        event = QMouseEvent(
            kind,
            QPointF(at),
            Qt.MouseButton.LeftButton,
            Qt.MouseButtons(held),
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(widget, event)


def send_key(widget: QWidget, key: Qt.Key) -> None:
    for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        QApplication.sendEvent(widget, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier))


def send_move(widget: QWidget, at: QPoint) -> None:
    event = QMouseEvent(
        QEvent.Type.MouseMove,
        QPointF(at),
        Qt.MouseButton.NoButton,
        Qt.MouseButtons(Qt.MouseButton.NoButton),
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(widget, event)


def fetch_record(url: str, game_id: str) -> GameRecord:
    # A plain blocking GET is fine in a test: the server runs in its own thread.
    with urllib.request.urlopen(f"{url}/games/{game_id}", timeout=30) as response:
        return GameRecord.model_validate(json.loads(response.read()))


def finished_record(qtbot: QtBot, url: str, game_id: str) -> GameRecord:
    """The server's record once it holds the result (it is stored just after the end)."""
    records: list[GameRecord] = []

    def done() -> bool:
        records.append(fetch_record(url, game_id))
        return records[-1].result is not None

    qtbot.waitUntil(done, timeout=WAIT_MS)
    return records[-1]


def connect(qtbot: QtBot, window: MainWindow, url: str) -> None:
    window.setup.set_server_url(url)
    window.connect_server(url)
    try:
        qtbot.waitUntil(lambda: window.setup.seat_o.kind.count() > 2, timeout=WAIT_MS)
    except AssertionError:
        raise AssertionError(window.setup.server_status.text()) from None


def visible(window: MainWindow, cell: Hex) -> bool:
    point = window.board.center_of(cell)
    return window.board.rect().adjusted(20, 20, -20, -20).contains(point)


def click(qtbot: QtBot, window: MainWindow, cell: Hex) -> None:
    assert visible(window, cell), f"{cell} is off the board's view"
    send_click(window.board, window.board.center_of(cell))


def visible_legal(window: MainWindow, legal: frozenset[Hex]) -> list[Hex]:
    """The legal cells in view, zooming out (as a person would) until most are."""
    for _ in range(20):
        cells = [cell for cell in legal if visible(window, cell)]
        if len(cells) * 2 >= len(legal):
            return cells
        window.board.zoom_by(0.8)
    return cells


def pick_far_cells(window: MainWindow, legal: frozenset[Hex]) -> tuple[Hex, Hex]:
    """Two visible legal cells far from every stone: a player who never blocks."""
    stones = window.controller.shown.stones
    candidates = visible_legal(window, legal)
    candidates.sort(key=lambda c: (-min(distance(c, s) for s in stones), c))
    first = candidates[0]
    second = next(c for c in candidates[1:] if distance(c, first) > 1)
    return first, second


def play_human_moves(qtbot: QtBot, window: MainWindow, *, take_back_once: bool = True) -> None:
    """Click moves for whichever human seat is to move until the game ends."""
    controller = window.controller
    took_back = not take_back_once
    while True:
        qtbot.waitUntil(
            lambda: (
                controller.active_seat() is not None
                or (controller.model is not None and controller.model.result is not None)
            ),
            timeout=WAIT_MS,
        )
        model = controller.model
        assert model is not None
        if model.result is not None:
            return
        entry = controller.active_seat()
        assert entry is not None and entry.request is not None
        assert controller.shown.interactive_side == entry.side
        first, second = pick_far_cells(window, entry.request.legal)
        click(qtbot, window, first)
        assert controller.pending == first
        if not took_back:
            # Esc takes the first stone back; clicking it again does too.
            send_key(window.board, Qt.Key.Key_Escape)
            assert controller.pending is None
            click(qtbot, window, first)
            click(qtbot, window, first)
            assert controller.pending is None
            click(qtbot, window, first)
            took_back = True
        moves_before = len(model.moves)
        click(qtbot, window, second)
        assert controller.pending is None
        # The stones are on the board at once, before the server confirms them.
        assert controller.shown.stones.get(first) == entry.side
        assert controller.shown.stones.get(second) == entry.side
        qtbot.waitUntil(
            lambda model=model, before=moves_before: (
                len(model.moves) > before or model.result is not None
            ),
            timeout=WAIT_MS,
        )


def test_human_plays_the_threat_bot_by_clicks_until_it_wins(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    connect(qtbot, window, server_url)
    threat = f"{server_url}/bots/threat"
    window.setup.set_values(
        FormValues(x=SeatChoice("hosted", threat), o=SeatChoice("human", name="Tester"))
    )
    window.setup.new_game_button.click()
    controller = window.controller
    qtbot.waitUntil(lambda: controller.model is not None, timeout=WAIT_MS)
    model = controller.model
    assert model is not None and model.game_id is not None
    play_human_moves(qtbot, window)

    assert model.result is not None
    assert model.result.winner is Player.X and model.result.reason is ResultReason.WIN
    assert "wins with a line" in window.panel.status.text()
    assert len(controller.shown.winning_line) == 6
    assert all(controller.shown.stones[c] == "x" for c in controller.shown.winning_line)
    assert controller.shown.interactive_side is None
    record = finished_record(qtbot, server_url, model.game_id)
    assert record.result == model.result
    assert [m.pieces for m in record.moves] == [m.pieces for m in model.moves]
    assert record.player_o.name == "Tester"
    # The move list holds the start and every move; clicking a row shows that position.
    assert window.panel.moves.count() == len(record.moves) + 1
    item = window.panel.moves.item(1)
    assert item is not None
    rect = window.panel.moves.visualItemRect(item)
    viewport = window.panel.moves.viewport()
    assert viewport is not None
    send_click(viewport, rect.center())
    assert window.replay.index == 1
    assert controller.shown.stones == model.stones_at(1)
    assert not controller.shown.winning_line


def test_two_people_at_one_screen_play_to_the_end(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    controller = start_two_people(qtbot, window, server_url)
    model = controller.model
    assert model is not None and model.game_id is not None
    # X builds a line along +q from the origin; O plays far away. X's clicks and O's go
    # to their own seats, each in turn.
    x_line = [(q, 0) for q in range(1, 6)]
    sides_seen: list[str] = []
    while model.result is None:
        qtbot.waitUntil(
            lambda: controller.active_seat() is not None or model.result is not None,
            timeout=WAIT_MS,
        )
        if model.result is not None:
            break
        entry = controller.active_seat()
        assert entry is not None and entry.request is not None
        sides_seen.append(entry.side)
        if entry.side == "x":
            first, second = x_line.pop(0), x_line.pop(0) if len(x_line) > 1 else None
            click(qtbot, window, first)
            if second is not None:
                click(qtbot, window, second)
            else:
                # The first stone wins: it is sent at once, no second click needed.
                assert controller.pending is None
        else:
            far = sorted(
                (c for c in visible_legal(window, entry.request.legal) if c[1] <= -3),
                key=lambda c: (c[1], c[0]),
            )
            click(qtbot, window, far[0])
            click(qtbot, window, far[-1])
        qtbot.waitUntil(
            lambda entry=entry: (  # type: ignore[misc]
                controller.active_seat() is not entry or model.result is not None
            ),
            timeout=WAIT_MS,
        )
    assert sides_seen[:4] == ["o", "x", "o", "x"]
    assert model.result is not None and model.result.winner is Player.X
    assert set(controller.shown.winning_line) == {(q, 0) for q in range(6)}
    assert "Ann (X) wins with a line" in window.panel.status.text()
    record = finished_record(qtbot, server_url, model.game_id)
    # The winning move ended on its first stone: the record holds just that stone.
    assert [c.as_tuple() for c in record.moves[-1].pieces] == [(5, 0)]


def test_spectating_a_live_bot_game_follows_it_to_the_end(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    connect(qtbot, window, server_url)
    window.setup.set_values(
        FormValues(
            x=SeatChoice("hosted", f"{server_url}/bots/threat"),
            o=SeatChoice("hosted", f"{server_url}/bots/random"),
        )
    )
    window.setup.new_game_button.click()
    controller = window.controller
    qtbot.waitUntil(lambda: controller.model is not None, timeout=WAIT_MS)
    model = controller.model
    assert model is not None and model.game_id is not None
    assert controller.seats == []
    qtbot.waitUntil(lambda: model.result is not None, timeout=WAIT_MS)
    record = finished_record(qtbot, server_url, model.game_id)
    assert [m.pieces for m in model.moves] == [m.pieces for m in record.moves]
    assert window.panel.moves.count() == len(record.moves) + 1
    assert window.replay.index == len(record.moves)
    assert controller.shown.stones == model.stones_at(len(record.moves))
    assert model.player_x.meta is not None and model.player_x.meta.name
    assert window.panel.card_x.name.text() == model.player_x.meta.name
    for tag in model.player_x.meta.tags or []:
        assert tag in window.panel.card_x.details.text()


def test_watching_from_the_browser_joins_a_running_game(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    # A human seat nobody takes keeps the game running while it is browsed.
    controller = start_human_against_threat(qtbot, window, server_url)
    model = controller.model
    assert model is not None and model.game_id is not None
    game_id = model.game_id

    window.show_browser()
    browser = window.browser
    assert browser is not None
    qtbot.waitUntil(lambda: any(s.game_id == game_id for s in browser.summaries), timeout=WAIT_MS)
    row = next(i for i, s in enumerate(browser.summaries) if s.game_id == game_id)
    assert browser.table.item(row, RESULT_COLUMN).text().endswith("Live")  # type: ignore[union-attr]
    browser.table.selectRow(row)
    assert browser.open_button.text() == "Watch"
    browser.open_button.click()
    qtbot.waitUntil(
        lambda: (
            window.controller.model is not model
            and window.controller.model is not None
            and window.controller.model.status is GameStatus.IN_PROGRESS
        ),
        timeout=WAIT_MS,
    )
    watched = window.controller.model
    assert watched is not None and watched.game_id == game_id
    assert window.controller.seats == []
    # X's first stone is at the origin, O (the unseated human) is to move.
    assert watched.to_move == "o"
    assert window.controller.shown.stones == {(0, 0): "x"}
    browser.close()


def test_the_browser_lists_finished_games_and_opens_one(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    connect(qtbot, window, server_url)
    window.show_browser()
    browser = window.browser
    assert browser is not None
    browser.status_filter.setCurrentIndex(2)  # Finished
    qtbot.waitUntil(lambda: len(browser.summaries) > 0, timeout=WAIT_MS)
    assert all(s.status.value == "finished" for s in browser.summaries)
    summary = browser.summaries[0]
    browser.table.selectRow(0)
    assert browser.open_button.text() == "Open"
    browser.activate(0)
    qtbot.waitUntil(
        lambda: (
            window.controller.model is not None
            and window.controller.model.game_id == summary.game_id
        ),
        timeout=WAIT_MS,
    )
    model = window.controller.model
    assert model is not None and model.result == summary.result
    assert len(model.moves) == summary.moves
    assert not window.replay.live_button.isVisibleTo(window)
    browser.close()


def test_the_browser_shows_a_tournament_s_games_by_name(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    body = json.dumps(
        {
            "name": "browser cup",
            "bots": [
                {"name": "threat", "url": f"{server_url}/bots/threat"},
                {"name": "center", "url": f"{server_url}/bots/center"},
            ],
            "openings": "none",
        }
    ).encode()
    request = urllib.request.Request(
        f"{server_url}/tournaments", data=body, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        tournament_id = json.loads(response.read())["tournament_id"]

    def finished() -> bool:
        with urllib.request.urlopen(f"{server_url}/tournaments/{tournament_id}") as response:
            return bool(json.loads(response.read())["status"] == "finished")

    qtbot.waitUntil(finished, timeout=WAIT_MS)
    connect(qtbot, window, server_url)
    window.show_browser()
    browser = window.browser
    assert browser is not None
    browser.refresh()
    qtbot.waitUntil(
        lambda: sum("browser cup" in (s.name or "") for s in browser.summaries) == 2,
        timeout=WAIT_MS,
    )
    labels = {browser.table.item(row, 1).text() for row in range(browser.table.rowCount())}  # type: ignore[union-attr]
    assert {"browser cup: game 1 (round 1)", "browser cup: game 2 (round 1)"} <= labels
    browser.close()


SAVED_GAME = """\
version[2]
playercross[Ann]
playercircle[Bob];
1. [1,0] [2,0];
2. [0,1] [0,2];
3. [-1,0] [-2,0];
"""


def test_a_saved_game_replays_with_buttons_keys_and_slider(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "saved.htttx"
    path.write_text(SAVED_GAME)
    assert window.open_file(path)
    controller: GameController = window.controller
    replay = window.replay
    model = controller.model
    assert model is not None and len(model.moves) == 3
    assert replay.index == 3
    assert controller.shown.stones == model.stones_at(3)
    assert window.windowTitle().startswith("Ann vs Bob")

    replay.first_button.click()
    assert controller.shown.stones == {(0, 0): "x"}
    replay.next_button.click()
    assert controller.shown.stones == {(0, 0): "x", (1, 0): "o", (2, 0): "o"}
    assert set(controller.shown.last_move) == {(1, 0), (2, 0)}
    # Keys the board does not use reach the window, which steps the replay.
    send_key(window.board, Qt.Key.Key_Right)
    assert replay.index == 2
    assert controller.shown.stones == model.stones_at(2)
    send_key(window.board, Qt.Key.Key_Left)
    send_key(window.board, Qt.Key.Key_Left)
    assert replay.index == 0
    send_key(window, Qt.Key.Key_End)
    assert replay.index == 3
    # Home is the first position (as its button's tooltip says), the board focused too.
    window.board.setFocus()
    send_key(window.board, Qt.Key.Key_Home)
    assert replay.index == 0
    send_key(window.board, Qt.Key.Key_End)
    assert replay.index == 3
    replay.slider.setValue(1)
    assert controller.shown.stones == model.stones_at(1)
    replay.last_button.click()
    assert controller.shown.stones == model.stones_at(3)
    assert window.panel.moves.currentRow() == 3


def test_a_long_name_is_cut_with_an_ellipsis_and_shown_whole_in_its_tooltip(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    long_name = "Maximilian Alexander von Hohenzollern-Sigmaringen the Third"
    path = tmp_path / "long.htttx"
    path.write_text(SAVED_GAME.replace("playercross[Ann]", f"playercross[{long_name}]"))
    assert window.open_file(path)
    qtbot.wait(50)  # the layout settles
    card = window.panel.card_x
    assert card.turn.text() == "to move"
    assert card.name.text().endswith("\u2026")
    assert long_name.startswith(card.name.text()[:-1])
    assert card.name.toolTip() == long_name
    # The name stops before "to move" and the clock instead of running under them.
    assert card.name.geometry().right() < card.turn.geometry().left()
    assert window.panel.card_o.name.text() == "Bob"
    assert window.panel.card_o.name.toolTip() == ""


def test_export_then_open_gives_the_same_record(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    source = tmp_path / "in.htttx"
    source.write_text(SAVED_GAME)
    assert window.open_file(source)
    model = window.controller.model
    assert model is not None
    exported = tmp_path / "out.htttx"
    assert window.export_file(exported)
    again = notation.loads(exported.read_text())
    assert again == model.to_record()
    assert window.open_file(exported)
    reopened = window.controller.model
    assert reopened is not None and reopened is not model
    assert reopened.to_record() == again


def test_a_broken_file_says_where_and_changes_nothing(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "broken.htttx"
    path.write_text("version[2];\n1. [1,0] [2,0]\n2. [0,1];\n")
    assert not window.open_file(path)
    text = window.panel.message.text()
    assert "broken.htttx" in text and "line 3" in text and "column" in text
    assert window.controller.model is None


def test_an_unreachable_server_is_reported_and_the_window_stays_usable(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    # Port 9 on loopback: nothing listens there.
    window.setup.set_server_url("http://127.0.0.1:9")
    window.setup.connect_button.click()
    qtbot.waitUntil(lambda: "Cannot reach" in window.setup.server_status.text(), timeout=WAIT_MS)
    assert "127.0.0.1:9" in window.panel.message.text()
    assert "(make run)" in window.panel.message.text()  # the Makefile's target
    assert window.panel.message.property("level") == "error"
    # Starting a game there fails with the reason, and the form is usable again.
    window.setup.set_values(FormValues(x=SeatChoice("human"), o=SeatChoice("human")))
    window.setup.new_game_button.click()
    qtbot.waitUntil(lambda: window.setup.new_game_button.isEnabled(), timeout=WAIT_MS)
    assert "Cannot reach" in window.setup.error.text()
    assert window.controller.model is None
    # A saved game still opens.
    path = tmp_path / "saved.htttx"
    path.write_text(SAVED_GAME)
    assert window.open_file(path)
    assert window.controller.model is not None


def test_an_unreachable_server_does_not_cover_a_replay_s_message(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    path = tmp_path / "saved.htttx"
    path.write_text(SAVED_GAME)
    assert window.open_file(path)
    # As `htttx-ui --open saved.htttx` does with a remembered server that is down: a
    # port bound but not listening refuses the connection.
    with socket.socket() as closed_port:
        closed_port.bind(("127.0.0.1", 0))
        window.connect_server(f"http://127.0.0.1:{closed_port.getsockname()[1]}")
        qtbot.waitUntil(
            lambda: "Cannot reach" in window.setup.server_status.text(), timeout=WAIT_MS
        )
    assert window.panel.message.text() == "Replaying saved.htttx."
    assert window.panel.message.property("level") == "info"
    assert window.connection_label.text() == "Replay"


def test_the_form_s_server_line_and_error_never_contradict_each_other(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    window.setup.set_values(FormValues(x=SeatChoice("human"), o=SeatChoice("human")))
    with socket.socket() as closed_port:  # bound by the OS, not listening: refused
        closed_port.bind(("127.0.0.1", 0))
        window.setup.set_server_url(f"http://127.0.0.1:{closed_port.getsockname()[1]}")
        window.setup.new_game_button.click()
        qtbot.waitUntil(lambda: "Cannot reach" in window.setup.error.text(), timeout=WAIT_MS)
    with game_server(tmp_path) as url:
        # Reached now: the earlier failure is stale and goes.
        connect(qtbot, window, url)
        assert window.setup.server_status.text().startswith(f"Connected to {url}")
        assert not window.setup.error.isVisibleTo(window)
    # The server is gone: a new game fails, and the server line no longer says
    # "Connected to" above the failure.
    window.setup.new_game_button.click()
    qtbot.waitUntil(lambda: "Cannot reach" in window.setup.error.text(), timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: window.setup.server_status.text().startswith("Cannot reach"), timeout=WAIT_MS
    )
    assert window.setup.error.isVisibleTo(window)


def test_hovering_shows_the_cell_in_the_status_bar(qtbot: QtBot, window: MainWindow) -> None:
    point: QPoint = window.board.center_of((2, -1))
    send_move(window.board, point)
    qtbot.waitUntil(lambda: "q 2, r -1" in window.hover_label.text(), timeout=WAIT_MS)


def test_command_line_errors_are_clear(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--server", "ftp://x"])
    assert "must start with http://" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--open", str(tmp_path / "missing.htttx")])
    assert "no such file" in capsys.readouterr().err
    # A file that is there but is no game: said here too, not in a window opened for it.
    not_a_game = tmp_path / "passwd"
    not_a_game.write_text("root:x:0:0:root:/root:/bin/bash\n")
    with pytest.raises(SystemExit):
        parse_args(["--open", str(not_a_game)])
    err = capsys.readouterr().err
    assert f"--open: {not_a_game} is not a valid HTTTX game: line 1, column 5" in err
    assert len(err.strip().splitlines()) == 2  # usage, then the one error line
    binary = tmp_path / "game.htttx"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SystemExit):
        parse_args(["--open", str(binary)])
    assert f"--open: cannot read {binary}" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--spectate", "  "])
    assert "--spectate: give the id of a game" in capsys.readouterr().err
    args = parse_args(["--server", "127.0.0.1:8001/"])
    assert args.server == "http://127.0.0.1:8001"


def start_human_against_threat(
    qtbot: QtBot, window: MainWindow, url: str, *, clock_type: str = "none", clock: float = 60.0
) -> GameController:
    """A game of a person (O) against the threat bot, the person to move."""
    connect(qtbot, window, url)
    window.setup.set_values(
        FormValues(
            x=SeatChoice("hosted", f"{url}/bots/threat"),
            o=SeatChoice("human"),
            clock_type=clock_type,
            clock_seconds=clock,
        )
    )
    window.setup.new_game_button.click()
    controller = window.controller
    qtbot.waitUntil(lambda: controller.active_seat() is not None, timeout=WAIT_MS)
    return controller


def start_two_people(qtbot: QtBot, window: MainWindow, url: str) -> GameController:
    """A game of two people at this screen, Ann (X) and Bob (O), both seats taken."""
    connect(qtbot, window, url)
    window.setup.set_values(
        FormValues(x=SeatChoice("human", name="Ann"), o=SeatChoice("human", name="Bob"))
    )
    window.setup.new_game_button.click()
    controller = window.controller
    qtbot.waitUntil(lambda: len(controller.seats) == 2, timeout=WAIT_MS)
    return controller


def test_a_dropped_seat_reconnects_with_its_token_and_plays_on(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    controller = start_human_against_threat(qtbot, window, server_url)
    entry = controller.active_seat()
    assert entry is not None and entry.link is not None
    old_link = entry.link
    old_link.close()  # as if the network dropped it
    qtbot.waitUntil(lambda: window.panel.connection.text() == "Reconnecting\u2026", timeout=WAIT_MS)
    assert "reconnecting" in window.panel.message.text()
    qtbot.waitUntil(lambda: entry.link is not old_link, timeout=WAIT_MS)
    # The server resends setup and the pending request to the returning seat.
    qtbot.waitUntil(lambda: controller.active_seat() is entry, timeout=WAIT_MS)
    assert window.panel.connection.text() == "Connected as O"
    assert "Reconnected as O" in window.panel.message.text()
    model = controller.model
    assert model is not None and model.result is None
    moves = len(model.moves)
    first, second = pick_far_cells(window, entry.request.legal)  # type: ignore[union-attr]
    click(qtbot, window, first)
    click(qtbot, window, second)
    qtbot.waitUntil(lambda: len(model.moves) > moves, timeout=WAIT_MS)
    assert model.moves[moves].side is Player.O
    assert {c.as_tuple() for c in model.moves[moves].pieces} == {first, second}


def test_a_refused_packet_and_the_forfeit_are_explained(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    controller = start_human_against_threat(qtbot, window, server_url)
    entry = controller.active_seat()
    assert entry is not None and entry.link is not None
    entry.link.send('{"type": "move_response", "move": {"pieces": []}}')
    model = controller.model
    assert model is not None
    qtbot.waitUntil(lambda: model.result is not None, timeout=WAIT_MS)
    assert model.result is not None and model.result.reason is ResultReason.FORFEIT
    qtbot.waitUntil(lambda: "broke the protocol" in window.panel.status.text(), timeout=WAIT_MS)
    assert "ThreatBot (X) wins" in window.panel.status.text()
    message = window.panel.message.text()
    assert "broke the protocol" in message or "refused" in message
    assert controller.shown.interactive_side is None


def test_a_person_who_runs_out_of_time_loses_and_is_told_why(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    controller = start_human_against_threat(qtbot, window, server_url, clock_type="turn", clock=3.0)
    # The clock of the person to move counts down in the panel.
    assert window.panel.card_o.clock.text() != "\u2014"
    qtbot.waitUntil(lambda: window.panel.card_o.clock.text() < "0:02.5", timeout=WAIT_MS)
    model = controller.model
    assert model is not None
    qtbot.waitUntil(lambda: model.result is not None, timeout=WAIT_MS)
    assert model.result is not None and model.result.winner is Player.X
    assert "ran out of time" in window.panel.status.text()
    assert window.panel.message.property("level") == "error"
    assert window.panel.card_o.clock.text() == "0:00.0"


def test_main_runs_the_window_until_it_closes(
    qtbot: QtBot, tmp_path: Path, server_url: str
) -> None:
    path = tmp_path / "saved.htttx"
    path.write_text(SAVED_GAME)
    settings = Settings(QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    shown: list[MainWindow] = []
    # Windows of earlier tests may not be deleted yet: main's is the new one.
    earlier = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]

    def look_and_close() -> None:
        window = next(
            w
            for w in QApplication.topLevelWidgets()
            if isinstance(w, MainWindow) and all(w is not old for old in earlier)
        )
        shown.append(window)
        model = window.controller.model
        assert model is not None and len(model.moves) == 3
        window.close()

    QTimer.singleShot(0, look_and_close)
    assert main(["--server", server_url, "--open", str(path)], settings=settings) == 0
    assert shown and shown[0].windowTitle().startswith("Ann vs Bob")
    assert settings.server_url == server_url


def test_the_browser_pages_with_more(qtbot: QtBot, window: MainWindow, server_url: str) -> None:
    client = window.client(server_url)
    for _ in range(3):  # quick games: the threat bot wins in a few moves
        client.new_game(
            NewGameRequest(
                player_x=PlayerConfig(type=PlayerType.BOT, bot_url=f"{server_url}/bots/threat"),
                player_o=PlayerConfig(type=PlayerType.BOT, bot_url=f"{server_url}/bots/random"),
            )
        )
    browser = GamesBrowser(client, window, page_size=2)
    qtbot.addWidget(browser)
    browser.status_filter.setCurrentIndex(2)  # Finished

    def three_finished() -> bool:
        if browser.loading:
            return False
        if len(browser.summaries) >= 2 and browser.more_button.isEnabled():
            return True
        browser.refresh()
        return False

    qtbot.waitUntil(three_finished, timeout=WAIT_MS)
    assert len(browser.summaries) == 2
    browser.more_button.click()
    qtbot.waitUntil(lambda: len(browser.summaries) > 2, timeout=WAIT_MS)
    ids = [s.game_id for s in browser.summaries]
    assert len(ids) == len(set(ids)) == browser.table.rowCount()
    assert browser.message.text() == f"{len(ids)} games"


def test_watching_an_unknown_game_says_so_once_and_shows_no_game(
    qtbot: QtBot, window: MainWindow, server_url: str, tmp_path: Path
) -> None:
    window.setup.set_server_url(server_url)
    window.spectate("0123456789abcdef0123456789abcdef")
    qtbot.waitUntil(lambda: "cannot show this game" in window.panel.message.text(), timeout=WAIT_MS)
    assert window.panel.message.text() == "The server cannot show this game: no such game."
    # No made-up game in its place: no stones, players, title or record to export.
    assert window.controller.model is None
    assert window.controller.shown.stones == {}
    assert window.windowTitle() == "HTTTX Arena"
    assert window.panel.status.text().startswith("No game")
    assert not window.replay.live_button.isVisibleTo(window)
    assert not window.export_action.isEnabled()
    assert not window.export_file(tmp_path / "unknown.htttx")


def test_closing_the_window_mid_game_asks_first_and_no_keeps_it_open(
    qtbot: QtBot, window: MainWindow, server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller = start_human_against_threat(qtbot, window, server_url)
    window.confirm_leaving = True
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    asked: list[str] = []

    def question(*args: object, **kwargs: object) -> QMessageBox.StandardButton:
        asked.append(str(args[1]))  # the dialog's title
        return answers.pop(0)

    monkeypatch.setattr(QMessageBox, "question", question)
    assert not window.close()  # "No": the person stays in the game
    assert window.isVisible() and controller.active_seat() is not None
    assert window.close()  # "Yes"
    assert asked == ["Leave the game?", "Leave the game?"]
    window.confirm_leaving = False  # the fixture closes the window again

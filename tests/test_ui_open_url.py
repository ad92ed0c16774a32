"""Opening a game by URL (``htttx-ui --open URL``, ``MainWindow.open_url``,
``ui.record_url``): against a real game server on loopback, and a loopback server that
answers with something other than notation. Run with ``QT_QPA_PLATFORM=offscreen``."""

from __future__ import annotations

import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PyQt5.QtCore import QSettings, QTimer
from PyQt5.QtWidgets import QApplication, QInputDialog
from pytestqt.qtbot import QtBot

from game import notation
from models import GameRecord
from tests.http_json import finished_record, post_ok
from tests.test_ui_app import click, pick_far_cells, start_human_against_threat
from tests.ui_fixtures import make_window
from ui.app import main, parse_args
from ui.main_window import MainWindow
from ui.record_url import RecordUrlError, notation_url
from ui.settings import Settings

WAIT_MS = 60_000  # only against hangs


@pytest.fixture(scope="module")
def finished_game(server_url: str) -> GameRecord:
    """A game of the hosted threat bot against the random bot, played to its end."""
    body = {
        "player_x": {"type": "bot", "bot_url": f"{server_url}/bots/threat", "name": "Tess"},
        "player_o": {"type": "bot", "bot_url": f"{server_url}/bots/random", "name": "Rand"},
    }
    # Blocking calls are fine here: the server runs in its own thread.
    game_id = post_ok(f"{server_url}/game/new", body)["game_id"]
    return GameRecord.model_validate(finished_record(server_url, game_id))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))


@pytest.fixture
def window(qtbot: QtBot, settings: Settings) -> Iterator[MainWindow]:
    shown = MainWindow(settings)
    shown.confirm_leaving = False
    qtbot.addWidget(shown)
    shown.show()
    yield shown
    shown.close()


class _NotNotation(BaseHTTPRequestHandler):
    """Answers every GET with a web page, or JSON under /json/."""

    def do_GET(self) -> None:
        if self.path.startswith("/json/"):
            body, kind = b'{"detail": "hello"}', "application/json"
        else:
            body, kind = b"<html><body>a web page</body></html>", "text/html"
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def other_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotNotation)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def replayed(qtbot: QtBot, window: MainWindow) -> GameRecord:
    qtbot.waitUntil(lambda: window.controller.model is not None, timeout=WAIT_MS)
    model = window.controller.model
    assert model is not None
    return model.to_record()


def failure(qtbot: QtBot, window: MainWindow) -> str:
    qtbot.waitUntil(lambda: window.panel.message.property("level") == "error", timeout=WAIT_MS)
    assert window.controller.model is None
    return window.panel.message.text()


# ------------------------------------------------------------------------ tests


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8001/g/4f2a", "http://127.0.0.1:8001/games/4f2a/notation"),
        ("http://h/games/4f2a/notation?download=1", "http://h/games/4f2a/notation"),
        ("HTTPS://h/arena/games/4f2a/", "https://h/arena/games/4f2a/notation"),
    ],
)
def test_a_game_url_maps_to_its_notation_on_the_same_host(url: str, expected: str) -> None:
    assert notation_url(url) == expected


@pytest.mark.parametrize(
    "url", ["http://h/", "http://h/g/", "http://h/g/1/notation", "http:///g/1"]
)
def test_a_url_that_names_no_game_is_refused_saying_what_is_expected(url: str) -> None:
    with pytest.raises(RecordUrlError, match="http"):
        notation_url(url)


def test_the_command_line_takes_a_url_or_a_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert parse_args(["--open", "http://h:1/g/ab"]).open == "http://h:1/games/ab/notation"
    saved = tmp_path / "a.htttx"
    saved.write_text("version[2];\n")
    assert parse_args(["--open", str(saved)]).open == saved
    with pytest.raises(SystemExit):
        parse_args(["--open", "http://h:1/somewhere"])
    assert "names no game: expected http://HOST/g/GAME_ID" in capsys.readouterr().err


@pytest.mark.parametrize("form", ["/games/{id}/notation", "/g/{id}", "/games/{id}"])
def test_a_game_opened_by_url_replays_like_its_file(
    qtbot: QtBot,
    window: MainWindow,
    server_url: str,
    finished_game: GameRecord,
    form: str,
    tmp_path: Path,
) -> None:
    assert finished_game.game_id is not None
    url = server_url + form.format(id=finished_game.game_id)
    assert window.open_url(url) is not None
    by_url = replayed(qtbot, window)
    assert "Replaying http://" in window.panel.message.text()

    with urllib.request.urlopen(notation_url(url), timeout=30) as response:
        text = response.read().decode()
    saved = tmp_path / "game.htttx"
    saved.write_text(text)
    assert window.open_file(saved)
    assert by_url == replayed(qtbot, window) == notation.loads(text)
    assert [move.pieces for move in by_url.moves] == [m.pieces for m in finished_game.moves]
    assert window.windowTitle().startswith("Tess vs Rand")


def test_open_url_in_the_game_menu_replays_the_game_its_link_names(
    qtbot: QtBot,
    window: MainWindow,
    server_url: str,
    finished_game: GameRecord,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    link = f"{server_url}/g/{finished_game.game_id}"
    clipboard = QApplication.clipboard()
    assert clipboard is not None
    clipboard.setText(link)  # a link just copied from the web page
    offered: list[str] = []

    def get_text(*args: object) -> tuple[str, bool]:
        offered.append(str(args[-1]))  # the text the dialog starts with
        return f"  {link} ", True

    monkeypatch.setattr(QInputDialog, "getText", get_text)
    game_menu = window.menuBar().actions()[0].menu()  # type: ignore[union-attr]
    assert window.open_url_action in game_menu.actions()  # type: ignore[union-attr]
    window.open_url_action.trigger()
    replayed_game = replayed(qtbot, window)
    assert offered == [link]
    assert [m.pieces for m in replayed_game.moves] == [m.pieces for m in finished_game.moves]


def test_a_game_still_being_played_opened_by_url_is_watched_live(
    qtbot: QtBot, window: MainWindow, server_url: str, tmp_path: Path
) -> None:
    # Someone plays O against the threat bot in a window of their own; it is O's move.
    player = make_window(qtbot, tmp_path)
    seat = start_human_against_threat(qtbot, player, server_url).active_seat()
    game = player.controller.model
    assert seat is not None and seat.request is not None
    assert game is not None and game.game_id is not None

    # Its link, copied from the web page, opens the game as it goes on, not a still of
    # the position fetched that says "to move" for good.
    window.open_url(f"{server_url}/g/{game.game_id}")
    qtbot.waitUntil(lambda: window.panel.connection.text() == "Watching live", timeout=WAIT_MS)
    assert window.panel.message.text() == (
        f"Game {game.game_id} is still being played: watching it live."
    )
    assert window.replay.live_button.isVisibleTo(window)
    watched = window.controller.model
    assert watched is not None and watched.game_id == game.game_id
    first, second = pick_far_cells(player, seat.request.legal)
    click(qtbot, player, first)
    click(qtbot, player, second)
    qtbot.waitUntil(lambda: len(watched.moves) >= 2, timeout=WAIT_MS)
    assert {piece.as_tuple() for piece in watched.moves[0].pieces} == {first, second}
    player.close()


def test_an_unknown_game_is_said_not_to_exist(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    window.open_url(f"{server_url}/g/no-such-game")
    assert failure(qtbot, window) == f"Game no-such-game does not exist on {server_url}."


def test_an_unknown_game_opened_by_id_is_said_not_to_exist(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    # As the games browser's Open does, with an id the server does not know.
    window.setup.set_server_url(server_url)
    window.open_server_game("no-such-game")
    assert failure(qtbot, window) == f"Game no-such-game does not exist on {server_url}."


@pytest.mark.parametrize(("path", "words"), [("/g/x", "line 1"), ("/json/g/x", "got JSON")])
def test_an_answer_that_is_not_notation_is_reported(
    qtbot: QtBot, window: MainWindow, other_site: str, path: str, words: str
) -> None:
    window.open_url(other_site + path)
    text = failure(qtbot, window)
    assert "is not what this client understands" in text and words in text


def test_an_unreachable_server_is_reported(qtbot: QtBot, window: MainWindow) -> None:
    # Port 9 on loopback: nothing listens there.
    window.open_url("http://127.0.0.1:9/g/abc")
    assert "Cannot reach the server at http://127.0.0.1:9" in failure(qtbot, window)


def test_a_url_naming_no_game_is_a_message_at_once(window: MainWindow) -> None:
    assert window.open_url("http://127.0.0.1:9/nothing") is None
    assert "names no game" in window.panel.message.text()


@pytest.mark.parametrize(
    ("link", "words"),
    [
        ("http://[::1/g/abc", "its IPv6 host has no closing ]"),
        ("http://[::1/c/abc", "its IPv6 host has no closing ]"),
        ("http://127.0.0.1:99999/g/abc", "its port must be a number from 0 to 65535"),
        ("http://127.0.0.1:99999/c/abc", "its port must be a number from 0 to 65535"),
    ],
)
def test_a_malformed_link_typed_in_open_url_is_a_message_not_a_crash(
    qtbot: QtBot,
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    link: str,
    words: str,
) -> None:
    # Python's URL parser refuses such a host or port with a bare ValueError; escaping
    # the menu action's slot, it aborted the whole client.
    monkeypatch.setattr(QInputDialog, "getText", lambda *args: (link, True))
    window.open_url_action.trigger()
    assert window.panel.message.property("level") == "error"
    assert window.panel.message.text() == f"{link!r} is not a valid address: {words}."
    assert window.controller.model is None
    with pytest.raises(SystemExit):
        parse_args(["--open", link])
    assert f"--open: {link!r} is not a valid address: {words}" in capsys.readouterr().err


def test_main_opens_a_url_given_on_the_command_line(
    qtbot: QtBot, settings: Settings, server_url: str, finished_game: GameRecord
) -> None:
    shown: list[GameRecord] = []
    looks = iter(range(WAIT_MS // 20))  # only against hangs
    # Windows of earlier tests may not be deleted yet (one seated in a running game
    # would ask before closing, a modal question nobody answers): main's is the new one.
    earlier = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]

    def look_and_close() -> None:
        window = next(
            w
            for w in QApplication.topLevelWidgets()
            if isinstance(w, MainWindow) and all(w is not old for old in earlier)
        )
        model = window.controller.model
        if model is None and next(looks, None) is not None:  # still fetching
            QTimer.singleShot(20, look_and_close)
            return
        if model is not None:
            shown.append(model.to_record())
        window.close()

    QTimer.singleShot(0, look_and_close)
    url = f"{server_url}/g/{finished_game.game_id}"
    assert main(["--server", server_url, "--open", url], settings=settings) == 0
    assert len(shown) == 1 and len(shown[0].moves) == len(finished_game.moves)

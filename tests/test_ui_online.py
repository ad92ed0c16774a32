"""Playing people online, end to end: the real window against a real game server on
loopback. People resign and hear of their opponent's drops; the queue pairs two people
(two windows) or a person with a bot; an open challenge is accepted from its link; the
leaderboard lists the rated games. Run with ``QT_QPA_PLATFORM=offscreen``."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from PyQt5.QtCore import QSettings, QTimer
from PyQt5.QtWidgets import QApplication, QInputDialog, QMessageBox
from pytestqt.qtbot import QtBot

from models import EndCause, Player, ResultReason
from tests.test_ui_app import (
    WAIT_MS,
    click,
    pick_far_cells,
    start_human_against_threat,
    start_two_people,
)
from tests.ui_fixtures import make_window
from tests.ui_server import restartable_game_server
from ui.app import main
from ui.game_session import SeatLink
from ui.main_window import MainWindow
from ui.play_online import PlayOnlineDialog
from ui.settings import Settings


def answer_questions(
    monkeypatch: pytest.MonkeyPatch, *answers: QMessageBox.StandardButton
) -> list[str]:
    """``QMessageBox.question`` answers ``answers`` in turn; the titles asked."""
    asked: list[str] = []
    queue = list(answers)

    def question(*args: object, **kwargs: object) -> QMessageBox.StandardButton:
        asked.append(str(args[1]))
        return queue.pop(0)

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def register_bot(url: str, name: str, bot_url: str) -> None:
    """``POST /bots``: a ladder bot the queue may pair a person with."""
    request = urllib.request.Request(
        f"{url}/bots",
        data=json.dumps({"name": name, "url": bot_url, "ladder": True}).encode(),
        headers={"content-type": "application/json"},
    )
    # A plain blocking call is fine in a test: the server runs in its own thread.
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 201


# ------------------------------------------------------------------ resign


def test_a_person_resigns_after_confirming_and_the_bot_wins(
    qtbot: QtBot, window: MainWindow, server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller = start_human_against_threat(qtbot, window, server_url)
    assert window.seat_bar.resign_button.isVisible()
    asked = answer_questions(
        monkeypatch, QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes
    )
    window.seat_bar.resign_button.click()  # "No": nothing happens
    model = controller.model
    assert model is not None and model.result is None
    assert controller.active_seat() is not None
    window.seat_bar.resign_button.click()  # "Yes"
    assert asked == ["Resign?", "Resign?"]
    assert controller.active_seat() is None  # no more moves from this seat
    qtbot.waitUntil(lambda: model.result is not None, timeout=WAIT_MS)
    assert model.result is not None
    assert model.result.winner is Player.X
    assert model.result.reason is ResultReason.FORFEIT
    assert model.result.cause is EndCause.RESIGN
    qtbot.waitUntil(lambda: "resigned" in window.panel.status.text(), timeout=WAIT_MS)
    assert window.panel.status.text() == "ThreatBot (X) wins: Human (O) resigned."
    qtbot.waitUntil(lambda: not window.seat_bar.resign_button.isVisible(), timeout=WAIT_MS)


def test_two_people_hear_of_each_others_drop_and_return(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    controller = start_two_people(qtbot, window, server_url)
    qtbot.waitUntil(lambda: all(e.connected for e in controller.seats), timeout=WAIT_MS)
    seen: list[str] = []
    banners: list[str] = []

    def news(side: str, connected: bool, ms: int) -> None:
        # Connected after the window's own slot: the banner already shows the news.
        seen.append(f"{side} {connected} {ms > 0}")
        banners.append(window.seat_bar.banner.text())

    controller.opponentStatus.connect(news)
    bob = next(entry for entry in controller.seats if entry.side == "o")
    assert bob.link is not None
    bob.link.close()  # Bob's connection drops; the client takes the seat back
    qtbot.waitUntil(lambda: "o False True" in seen, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "o True False" in seen, timeout=WAIT_MS)
    # The banner said so: Bob dropped with a minute to come back, then he was back.
    assert banners[0] == "Bob disconnected \u2014 60 s to come back"
    assert window.seat_bar.banner.text() == "Bob is back"
    assert window.seat_bar.banner.isVisible()


# ------------------------------------------------------------------ the queue


def join_queue(
    qtbot: QtBot,
    window: MainWindow,
    url: str,
    name: str,
    *,
    bot_after_s: int | None = None,
    time_control: str = "none",
) -> PlayOnlineDialog:
    """Fill in Play online and press Find a game, as a person would."""
    dialog = window.online.show_play_online()
    qtbot.waitExposed(dialog)
    dialog.set_server(url)
    dialog.name.setText(name)
    dialog.time_control.setCurrentText(time_control)
    dialog.bot_after.setChecked(bot_after_s is not None)
    if bot_after_s is not None:
        dialog.bot_wait.setValue(bot_after_s)
    dialog.find_button.click()
    assert dialog.waiting_page, dialog.error.text()
    return dialog


def seated(qtbot: QtBot, window: MainWindow) -> SeatLink:
    """The window's one human seat, once its game has started."""
    controller = window.controller
    qtbot.waitUntil(
        lambda: len(controller.seats) == 1 and controller.seats[0].connected, timeout=WAIT_MS
    )
    return controller.seats[0]


def click_far_move(qtbot: QtBot, window: MainWindow) -> None:
    """Wait for the window's turn and play two stones far from the others."""
    controller = window.controller
    qtbot.waitUntil(lambda: controller.active_seat() is not None, timeout=WAIT_MS)
    entry = controller.active_seat()
    assert entry is not None and entry.request is not None
    first, second = pick_far_cells(window, entry.request.legal)
    click(qtbot, window, first)
    click(qtbot, window, second)


def test_two_people_are_paired_by_the_queue_play_and_are_rated(
    qtbot: QtBot, tmp_path: Path, server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ann = make_window(qtbot, tmp_path / "ann")
    bob = make_window(qtbot, tmp_path / "bob")
    waiting = join_queue(qtbot, ann, server_url, "Ann")
    qtbot.waitUntil(lambda: waiting.last_waiting is not None, timeout=WAIT_MS)
    assert waiting.queue_state.text() == "You are the only one waiting."
    assert waiting.rating.text() == "Your rating: 1500"
    assert waiting.waited.text().startswith("Waited 0:0")
    assert waiting.bot_note.text() == "People only: you wait until someone comes."
    join_queue(qtbot, bob, server_url, "Bob")
    ann_seat, bob_seat = seated(qtbot, ann), seated(qtbot, bob)
    assert {ann_seat.side, bob_seat.side} == {"x", "o"}
    assert not waiting.isVisible()
    message = bob.panel.message.text()
    assert message.startswith(f"You play {bob_seat.side.upper()} against Ann (a person")
    assert message.endswith("a rated game.")
    # The person tokens are kept per server, each in its own window's settings.
    assert ann.settings.online_player(server_url)[0] == "Ann"
    assert ann.settings.online_player(server_url)[1] is not None
    assert bob.settings.online_player(server_url)[1] is not None
    # O moves first; then X resigns.
    o_window, x_window = (ann, bob) if ann_seat.side == "o" else (bob, ann)
    click_far_move(qtbot, o_window)
    qtbot.waitUntil(lambda: x_window.controller.active_seat() is not None, timeout=WAIT_MS)
    x_window.online.confirm_resign = False
    x_window.seat_bar.resign_button.click()
    model = o_window.controller.model
    assert model is not None
    qtbot.waitUntil(lambda: model.result is not None, timeout=WAIT_MS)
    assert model.result is not None and model.result.winner is Player.O
    assert model.result.cause is EndCause.RESIGN
    # The game was rated: the leaderboard lists both, the winner first.
    o_name = "Ann" if o_window is ann else "Bob"
    x_name = "Bob" if o_name == "Ann" else "Ann"
    board = ann.online.show_leaderboard()
    assert board is not None
    board.kind.setCurrentIndex(2)  # People
    qtbot.waitUntil(lambda: not board.loading and len(board.entries) >= 2, timeout=WAIT_MS)
    names = [entry.name for entry in board.entries]
    assert names.index(o_name) < names.index(x_name)
    row = board.entries[names.index(o_name)]
    assert (row.games, row.wins, row.losses, row.kind) == (1, 1, 0, "human")
    cells = {
        name: board.table.item(row, 1).text()  # type: ignore[union-attr]
        for row, name in enumerate(names)
    }
    assert (cells["Ann"], cells["Bob"]) == ("Ann (you)", "Bob (person)")  # Ann's window
    bob.close()
    ann.close()


def test_a_name_someone_else_holds_is_refused_with_the_servers_reason(
    qtbot: QtBot, tmp_path: Path, server_url: str
) -> None:
    cleo = make_window(qtbot, tmp_path / "cleo")
    dialog = join_queue(qtbot, cleo, server_url, "Cleo", time_control="600")
    qtbot.waitUntil(lambda: dialog.last_waiting is not None, timeout=WAIT_MS)
    assert cleo.settings.online_player(server_url)[1] is not None
    dialog.cancel_button.click()  # leaves the queue
    assert not dialog.waiting_page
    # Someone else, without Cleo's token, cannot take her name.
    other = make_window(qtbot, tmp_path / "other")
    refused = join_queue(qtbot, other, server_url, "cleo", time_control="600")
    qtbot.waitUntil(lambda: not refused.waiting_page, timeout=WAIT_MS)
    assert refused.error.text().startswith("The server refused: ")
    assert "cleo" in refused.error.text().lower()
    assert other.controller.model is None
    # Cleo comes back with her saved token and is queued again.
    again = join_queue(qtbot, cleo, server_url, "Cleo", time_control="600")
    qtbot.waitUntil(lambda: again.last_waiting is not None, timeout=WAIT_MS)
    again.cancel()
    other.close()
    cleo.close()


def test_a_person_who_waited_plays_a_ladder_bot(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    register_bot(server_url, "Randy", f"{server_url}/bots/random")
    dialog = join_queue(qtbot, window, server_url, "Dora", bot_after_s=0, time_control="turn=60")
    assert dialog.bot_note.text() == "If nobody comes within 0 s, you play a bot of your strength."
    entry = seated(qtbot, window)
    assert "against Randy (a bot" in window.panel.message.text()
    if entry.side == "o":  # O moves first
        click_far_move(qtbot, window)
    model = window.controller.model
    assert model is not None and model.result is None
    assert window.seat_bar.resign_button.isVisible()


def test_the_wait_for_a_bot_counts_down_and_esc_leaves_the_queue(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    dialog = join_queue(qtbot, window, server_url, "Hal", bot_after_s=600, time_control="900")
    qtbot.waitUntil(lambda: dialog.last_waiting is not None, timeout=WAIT_MS)
    assert dialog.last_waiting is not None and dialog.last_waiting.bot_in_ms is not None
    assert dialog.bot_note.text().startswith("If nobody comes, you play a bot of your strength in ")
    assert dialog.bot_note.text()[-6:] in ("10:00.", " 9:59.", " 9:58.")
    assert dialog.details.text() == f"Hal \u00b7 900 s a side \u00b7 {server_url}"
    dialog.reject()  # Esc
    assert not dialog.isVisible() and dialog.link is None
    assert not dialog.waiting_page


# ------------------------------------------------------------ reconnecting


def test_a_person_waiting_in_the_queue_survives_a_server_restart(
    qtbot: QtBot, tmp_path: Path
) -> None:
    with restartable_game_server(tmp_path / "server") as server:
        ann = make_window(qtbot, tmp_path / "ann")
        bob = make_window(qtbot, tmp_path / "bob")
        waiting = join_queue(qtbot, ann, server.url, "Ann")
        qtbot.waitUntil(lambda: waiting.last_waiting is not None, timeout=WAIT_MS)
        first_since = waiting._waiting_since
        assert first_since is not None and waiting.link is not None
        attempts: list[int] = []
        waiting.link.reconnecting.connect(lambda attempt, delay: attempts.append(attempt))
        server.stop()  # the queue is in memory: Ann's socket is dropped
        qtbot.waitUntil(lambda: len(attempts) >= 2, timeout=WAIT_MS)  # still down
        assert waiting.waiting_page and not waiting.error.isVisible()
        assert waiting.queue_state.text().startswith(
            "Connection lost \u2014 reconnecting (attempt "
        )
        server.start()  # same port, same database; an empty queue
        qtbot.waitUntil(
            lambda: waiting.queue_state.text() == "You are the only one waiting.",
            timeout=WAIT_MS,
        )
        # The time waited still counts from Ann's first join.
        assert waiting._waiting_since is not None and waiting._waiting_since <= first_since
        # Bob comes to the restarted server: Ann, back in its queue by herself, is his.
        join_queue(qtbot, bob, server.url, "Bob")
        ann_seat, bob_seat = seated(qtbot, ann), seated(qtbot, bob)
        assert {ann_seat.side, bob_seat.side} == {"x", "o"}
        assert "against Ann (a person" in bob.panel.message.text()
        assert not waiting.isVisible()
        bob.close()
        ann.close()


def test_cancel_while_reconnecting_stops_it(qtbot: QtBot, tmp_path: Path) -> None:
    with restartable_game_server(tmp_path / "server") as server:
        eve = make_window(qtbot, tmp_path / "eve")
        dialog = join_queue(qtbot, eve, server.url, "Eve", bot_after_s=600)
        qtbot.waitUntil(lambda: dialog.last_waiting is not None, timeout=WAIT_MS)
        link = dialog.link
        assert link is not None
        attempts: list[int] = []
        link.reconnecting.connect(lambda attempt, delay: attempts.append(attempt))
        server.stop()
        qtbot.waitUntil(lambda: len(attempts) >= 1, timeout=WAIT_MS)
        # The server's countdown to a bot is unknown until Eve is back in.
        assert dialog.bot_note.text() == "The wait for a bot starts again once back in the queue."
        dialog.cancel_button.click()
        assert not dialog.waiting_page and not dialog.error.isVisible()
        assert not link.active and link.client.state == "closed"
        server.start()
        # Nothing comes back: Eve is in no queue (the retry timer is stopped).
        assert not link._retry.isActive()
        eve.close()


# ------------------------------------------------------------ open challenges


def test_a_challenge_link_is_made_in_one_window_and_accepted_in_another(
    qtbot: QtBot, tmp_path: Path, server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    eve = make_window(qtbot, tmp_path / "eve")
    dialog = eve.online.show_play_online()
    dialog.set_server(server_url)
    dialog.name.setText("Eve")
    dialog.time_control.setCurrentText("none")
    dialog.challenge_button.click()
    qtbot.waitUntil(lambda: dialog.challenge_link.text() != "", timeout=WAIT_MS)
    link = dialog.challenge_link.text()
    assert "/c/" in link
    assert dialog.headline.text() == "Waiting for someone to accept"
    # Fay opens the link (htttx-ui --open LINK does this); asked for a name first.
    fay = make_window(qtbot, tmp_path / "fay")
    asked: list[str] = []

    def get_text(*args: object, **kwargs: object) -> tuple[str, bool]:
        asked.append(str(args[2]))
        return " Fay ", True

    monkeypatch.setattr(QInputDialog, "getText", get_text)
    assert fay.open_url(link) is not None
    assert asked == [f"The name to play under on {server_url}:"]
    fay_seat, eve_seat = seated(qtbot, fay), seated(qtbot, eve)
    assert {fay_seat.side, eve_seat.side} == {"x", "o"}
    assert fay.settings.online_player(server_url)[0] == "Fay"
    assert fay.settings.online_player(server_url)[1] is not None  # her new token
    model = fay.controller.model
    assert model is not None
    qtbot.waitUntil(
        lambda: {model.player_x.name, model.player_o.name} == {"Eve", "Fay"}, timeout=WAIT_MS
    )
    fay.close()
    eve.close()


def test_a_challenge_accepted_while_its_creator_was_cut_off_seats_the_creator(
    qtbot: QtBot, tmp_path: Path
) -> None:
    with restartable_game_server(tmp_path / "server") as server:
        gil = make_window(qtbot, tmp_path / "gil")
        dialog = gil.online.show_play_online()
        dialog.set_server(server.url)
        dialog.name.setText("Gil")
        dialog.time_control.setCurrentText("none")
        dialog.challenge_button.click()
        qtbot.waitUntil(lambda: dialog.challenge_link.text() != "", timeout=WAIT_MS)
        challenge_id = dialog.challenge_link.text().rsplit("/", 1)[1]
        server.restart()  # the challenge is in the database; Gil's socket is gone
        qtbot.waitUntil(
            lambda: "your link still works" in dialog.queue_state.text(), timeout=WAIT_MS
        )
        accepted = post_json(f"{server.url}/challenges/{challenge_id}/accept", {"name": "Hedy"})
        gil_seat = seated(qtbot, gil)
        assert gil_seat.side != accepted["side"]
        assert not dialog.isVisible()
        gil.close()


def post_json(url: str, body: dict[str, object]) -> dict[str, object]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        answer: dict[str, object] = json.loads(response.read())
    return answer


def test_htttx_ui_open_a_challenge_link_plays_it(
    qtbot: QtBot, tmp_path: Path, server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ivy opened a challenge over REST (the web page's way); Jo runs htttx-ui --open LINK.
    created = post_json(f"{server_url}/challenges", {"name": "Ivy", "time_control": "none"})
    link = created["url"]
    assert isinstance(link, str)
    settings = Settings(QSettings(str(tmp_path / "jo.ini"), QSettings.Format.IniFormat))
    settings.set_online_player(server_url, "Jo", None)
    monkeypatch.setattr(  # leaving the game at the end: yes
        QMessageBox, "question", lambda *args, **kwargs: QMessageBox.StandardButton.Yes
    )
    seen: list[str] = []

    def look() -> None:
        window = next(
            w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()
        )
        seats = window.controller.seats
        if len(seats) == 1 and seats[0].connected:
            seen.append(window.panel.message.text())
            window.close()
        else:
            QTimer.singleShot(50, look)

    QTimer.singleShot(0, look)
    assert main(["--open", link], settings=settings) == 0
    assert seen and seen[0].startswith("You play ") and "against Ivy (a person" in seen[0]
    assert settings.online_player(server_url)[1] is not None  # Jo's new token


def test_a_challenge_that_does_not_exist_says_so(
    qtbot: QtBot, window: MainWindow, server_url: str
) -> None:
    window.settings.set_online_player(server_url, "Gus", None)
    window.open_url(f"{server_url}/c/no-such-challenge")
    qtbot.waitUntil(lambda: window.panel.message.property("level") == "error", timeout=WAIT_MS)
    assert window.panel.message.text().startswith("The server refused the challenge (404)")
    assert window.controller.model is None

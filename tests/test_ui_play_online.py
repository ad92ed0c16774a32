"""The Play online dialog, the seat bar and the leaderboard's texts, without a queue
server: the form's checks, an unreachable server, what is remembered per server, the
opponent banner's countdown. (The queue itself, end to end: tests/test_ui_online.py.)"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PyQt5.QtCore import QSettings
from pytestqt.qtbot import QtBot

from models import LeaderboardEntry, ProtocolError
from ui.app import parse_args
from ui.leaderboard import LeaderboardWindow, entry_row, read_leaderboard
from ui.net import Network
from ui.online import ChallengeAddressError, challenge_address
from ui.play_online import PlayOnlineDialog
from ui.seat_bar import SeatBar
from ui.settings import Settings

WAIT_MS = 60_000


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))


@pytest.fixture
def network() -> Iterator[Network]:
    net = Network()
    yield net
    net.close()


@pytest.fixture
def dialog(qtbot: QtBot, network: Network, settings: Settings) -> PlayOnlineDialog:
    widget = PlayOnlineDialog(network, settings)
    qtbot.addWidget(widget)
    return widget


# ------------------------------------------------------------------ the dialog


def test_the_form_says_what_is_wrong_and_sends_nothing(dialog: PlayOnlineDialog) -> None:
    dialog.server.setText("http://127.0.0.1:8001")
    dialog.name.setText("")
    dialog.find_game()
    assert dialog.error.text() == "Enter a name to play under"
    assert not dialog.waiting_page and dialog.link is None
    dialog.name.setText("Ann")
    dialog.time_control.setCurrentText("40 moves in 2 hours")
    dialog.find_game()
    assert dialog.error.text().startswith("Time control '40 moves in 2 hours': expected")
    dialog.time_control.setCurrentText("300")
    dialog.server.setText("ftp://example.org")
    dialog.find_game()
    assert "must start with http:// or https://" in dialog.error.text()
    assert dialog.link is None


def test_an_unreachable_server_brings_the_form_back_with_the_reason(
    qtbot: QtBot, dialog: PlayOnlineDialog
) -> None:
    port = closed_port()
    dialog.server.setText(f"127.0.0.1:{port}")
    dialog.name.setText("Ann")
    dialog.bot_after.setChecked(False)
    dialog.find_game()
    assert dialog.waiting_page
    assert dialog.bot_note.text() == "People only: you wait until someone comes."
    qtbot.waitUntil(lambda: not dialog.waiting_page, timeout=WAIT_MS)
    assert dialog.error.text() == (
        f"Cannot connect to the server at ws://127.0.0.1:{port}: connection refused"
    )
    assert dialog.error.isVisibleTo(dialog)


def test_the_form_remembers_its_choices_and_the_name_of_each_server(
    qtbot: QtBot, network: Network, settings: Settings
) -> None:
    settings.set_online_player("http://a.example:8001", "Ann", "token-a")
    settings.set_online_player("http://b.example:8001", "Bea", None)
    settings.online = {
        "server_url": "http://a.example:8001",
        "time_control": "5+2",
        "bot_after_s": None,
    }
    dialog = PlayOnlineDialog(network, settings)
    qtbot.addWidget(dialog)
    assert dialog.values().server_url == "http://a.example:8001"
    assert dialog.values().name == "Ann"
    assert dialog.values().time_control == "5+2"
    assert dialog.values().bot_after_s is None and not dialog.bot_wait.isEnabled()
    assert "token is saved" in dialog.identity.text()
    assert settings.online_player("http://b.example:8001") == ("Bea", None)
    assert settings.online_player("http://c.example:8001") == ("", None)


def test_damaged_online_settings_fall_back_to_nothing(settings: Settings) -> None:
    settings.store.setValue("online/players", '{"http://a": 7, "http://b": {"name": 3}}')
    assert settings.online_player("http://a") == ("", None)
    assert settings.online_player("http://b") == ("", None)
    settings.store.setValue("online/players", "not json")
    assert settings.online_player("http://a") == ("", None)


def test_htttx_ui_open_takes_a_challenge_link() -> None:
    assert parse_args(["--open", "http://127.0.0.1:8001/c/ab12"]).open == (
        "http://127.0.0.1:8001/c/ab12"
    )


def test_challenge_links_name_the_server_and_the_challenge() -> None:
    assert challenge_address("https://example.org/arena/c/x9?utm=1") == (
        "https://example.org/arena",
        "x9",
    )
    with pytest.raises(ChallengeAddressError, match="expected http://HOST/c/CHALLENGE_ID"):
        challenge_address("http://example.org/c/")


# ------------------------------------------------------------------ the seat bar


def test_the_banner_counts_down_the_opponents_time_to_come_back(qtbot: QtBot) -> None:
    now = [100.0]
    bar = SeatBar(clock=lambda: now[0])
    qtbot.addWidget(bar)
    bar.set_playing(True)
    assert bar.resign_button.isVisibleTo(bar)
    bar.opponent_status(False, 45_000, "Bob")
    assert bar.banner.text() == "Bob disconnected \u2014 45 s to come back"
    assert bar.banner.property("level") == "warning"
    now[0] += 20.5
    bar._tick()
    assert bar.banner.text() == "Bob disconnected \u2014 25 s to come back"
    now[0] += 30
    bar._tick()
    assert bar.banner.text().endswith("the time to come back is over")
    bar.opponent_status(True, None, "Bob")
    assert bar.banner.text() == "Bob is back"
    assert bar.banner.property("level") == "info"
    bar.set_playing(False)
    assert not bar.banner.isVisibleTo(bar) and not bar.resign_button.isVisibleTo(bar)


# ------------------------------------------------------------------ the leaderboard


def test_a_leaderboard_row_says_everything_about_a_player() -> None:
    entry = LeaderboardEntry(
        rank=2,
        name="alice",
        rating=1589,
        uncertainty=142,
        kind="human",
        provisional=True,
        games=7,
        wins=4,
        losses=2,
        draws=1,
        failures={"disconnect": 1},
        avg_think_ms=8400,
        last_seen=datetime(2026, 11, 24, 20, 30, tzinfo=UTC),
    )
    now = datetime(2026, 11, 24, 21, 0, tzinfo=UTC)
    assert entry_row(entry, now) == (
        "2",
        "alice (person)",
        "1589 \u00b1 142 ?",
        "7",
        "4 / 2 / 1",
        "disconnect 1",
        "8.4 s",
        "30 min ago",
    )
    assert entry_row(entry, now, me="ALICE")[1] == "alice (you)"
    retired = entry.model_copy(update={"name": "old", "kind": "bot", "status": "retired"})
    assert entry_row(retired, now)[1] == "old \u2014 retired"


def test_an_answer_that_is_no_leaderboard_is_refused() -> None:
    with pytest.raises(ProtocolError, match=r"entries\[0\]\.rank: expected an integer"):
        read_leaderboard({"entries": [{"rank": "first"}]})
    with pytest.raises(ProtocolError, match="expected a JSON object, got list"):
        read_leaderboard([])


def test_an_unreachable_leaderboard_says_why(qtbot: QtBot, network: Network) -> None:
    port = closed_port()
    window = LeaderboardWindow(network, f"http://127.0.0.1:{port}")
    qtbot.addWidget(window)
    window.refresh()
    qtbot.waitUntil(lambda: not window.loading, timeout=WAIT_MS)
    assert window.message.text() == (
        f"Cannot reach the server at http://127.0.0.1:{port}: connection refused"
    )
    assert window.table.rowCount() == 0

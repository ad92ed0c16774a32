"""The "New game" form: the pure request builder, settings round trips and the widget
(alone, and in the window's side panel)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from PyQt5.QtCore import QPoint, QRect, QSettings
from pytestqt.qtbot import QtBot

from models import DEFAULT_TURN_LIMIT, Meta, NewGameRequest, PlayerType
from tests.test_ui_app import WAIT_MS, connect
from tests.ui_fixtures import make_window
from ui.settings import DEFAULT_SERVER_URL, Settings
from ui.setup_panel import FormError, FormValues, SeatChoice, SetupPanel, build_request

THREAT = "http://127.0.0.1:8001/bots/threat"


@dataclass(frozen=True)
class FakeBot:
    name: str
    url: str
    meta: Meta | None


BOTS = [
    FakeBot("random", "http://127.0.0.1:8001/bots/random", None),
    FakeBot("threat", THREAT, Meta(name="threat", version="1.2", tags=["tactical"])),
]


# ------------------------------------------------------------------ build_request


def test_human_against_hosted_bot_with_defaults() -> None:
    request = build_request(
        FormValues(x=SeatChoice("human", name=" Ann "), o=SeatChoice("hosted", THREAT))
    )
    assert request.player_x.type is PlayerType.HUMAN
    assert request.player_x.name == "Ann"
    assert request.player_o.type is PlayerType.BOT
    assert request.player_o.bot_url == THREAT
    assert request.player_o.name is None
    assert request.match_config.clock_type == "none"
    assert request.match_config.clock is None
    assert request.match_config.turn_limit == DEFAULT_TURN_LIMIT


def test_clock_settings_follow_the_clock_type() -> None:
    values = FormValues(
        x=SeatChoice("human"),
        o=SeatChoice("human"),
        clock_type="incremental",
        clock_seconds=120.0,
        increment_seconds=2.5,
        turn_limit=40,
        heartbeat_ms=1500,
        view_distance=5,
        win_distance=4,
    )
    match = build_request(values).match_config
    assert (match.clock_type, match.clock, match.increment) == ("incremental", 120.0, 2.5)
    assert (match.turn_limit, match.heartbeat, match.view_distance, match.win_distance) == (
        40,
        1500,
        5,
        4,
    )
    # An increment typed in but not applicable is not sent (the server would refuse it).
    per_game = build_request(FormValues(x=SeatChoice(), o=SeatChoice(), clock_type="match"))
    assert (per_game.match_config.clock, per_game.match_config.increment) == (300.0, 0.0)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (FormValues(o=SeatChoice("hosted", "")), "Player O: choose a bot"),
        (FormValues(x=SeatChoice("url", "  ")), "Player X: enter the bot's address"),
        (FormValues(x=SeatChoice("url", "localhost:8080")), "is not a bot address"),
        (FormValues(o=SeatChoice("url", "ftp://host/bot")), "should start with http://"),
        (FormValues(o=SeatChoice(), heartbeat_ms=10), "Heartbeat: input should be greater"),
        (FormValues(o=SeatChoice(), win_distance=1), "Win distance: input should be greater"),
        (FormValues(o=SeatChoice(), clock_type="fast"), "Clock: input should be"),
    ],
)
def test_problems_become_one_sentence(values: FormValues, expected: str) -> None:
    with pytest.raises(FormError) as caught:
        build_request(values)
    message = str(caught.value)
    assert expected in message
    assert message.endswith(".")
    assert "pydantic" not in message and "\n" not in message


def test_a_bot_url_seat_is_sent_as_typed() -> None:
    request = build_request(
        FormValues(x=SeatChoice("url", " ws://127.0.0.1:9000/ws ", "Mine"), o=SeatChoice())
    )
    assert request.player_x.bot_url == "ws://127.0.0.1:9000/ws"
    assert request.player_x.name == "Mine"


def test_form_values_survive_the_settings_round_trip(tmp_path: Path) -> None:
    values = FormValues(
        x=SeatChoice("url", "http://127.0.0.1:9/bot", "B"),
        o=SeatChoice("hosted", THREAT),
        clock_type="turn",
        clock_seconds=7.5,
        turn_limit=12,
    )
    settings = Settings(QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    settings.seats, settings.match = values.to_settings()
    settings.server_url = " http://127.0.0.1:9001 "
    settings.sync()
    again = Settings(QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    assert FormValues.from_settings(again.seats, again.match) == values
    assert again.server_url == "http://127.0.0.1:9001"


def test_damaged_settings_fall_back_to_defaults(tmp_path: Path) -> None:
    store = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    store.setValue("game/seats", "{not json")
    store.setValue("game/match", '{"clock_type": "warp", "turn_limit": "many", "win_distance": 5}')
    settings = Settings(store)
    assert settings.server_url == DEFAULT_SERVER_URL
    values = FormValues.from_settings(settings.seats, settings.match)
    assert values.x == FormValues().x
    assert values.clock_type == "none"
    assert values.turn_limit == 0
    assert values.win_distance == 5


# ------------------------------------------------------------------------- widget


def test_panel_builds_the_request_from_its_widgets(qtbot: QtBot) -> None:
    panel = SetupPanel()
    qtbot.addWidget(panel)
    panel.set_bots(BOTS)
    panel.set_values(
        FormValues(
            x=SeatChoice("human", name="Ann"),
            o=SeatChoice("hosted", THREAT),
            clock_type="match",
            clock_seconds=90.0,
        )
    )
    assert panel.seat_o.kind.currentText() == "Bot: threat"
    assert "tactical" in panel.seat_o.kind.itemData(panel.seat_o.kind.currentIndex(), 3)
    assert not panel.increment.isEnabled() and panel.clock_seconds.isEnabled()
    with qtbot.waitSignal(panel.newGameRequested) as blocker:
        panel.new_game_button.click()
    request = blocker.args[0]
    assert isinstance(request, NewGameRequest)
    assert request.player_o.bot_url == THREAT
    assert request.player_x.name == "Ann"
    assert request.match_config.clock == 90.0
    assert panel.error.isHidden()


def test_panel_shows_problems_instead_of_emitting(qtbot: QtBot) -> None:
    panel = SetupPanel()
    qtbot.addWidget(panel)
    panel.set_values(FormValues(x=SeatChoice("url", "nonsense"), o=SeatChoice()))
    emitted: list[object] = []
    panel.newGameRequested.connect(emitted.append)
    panel.new_game_button.click()
    assert emitted == []
    assert not panel.error.isHidden()
    assert "Player X" in panel.error.text() and "not a bot address" in panel.error.text()
    # Fixing it clears the message and starts the game.
    panel.seat_x.set_choice(SeatChoice("human"))
    panel.new_game_button.click()
    assert len(emitted) == 1
    assert panel.error.isHidden()


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("http://[::1:8080", "its IPv6 host has no closing ]"),
        ("http://127.0.0.1:99999", "its port must be a number from 0 to 65535"),
    ],
)
def test_a_bot_address_with_a_malformed_host_or_port_is_a_problem_not_a_crash(
    qtbot: QtBot, typed: str, words: str
) -> None:
    # The parser's bare ValueError used to escape the button's slot and abort the client.
    panel = SetupPanel()
    qtbot.addWidget(panel)
    panel.set_values(FormValues(x=SeatChoice("url", typed), o=SeatChoice()))
    emitted: list[object] = []
    panel.newGameRequested.connect(emitted.append)
    panel.new_game_button.click()
    assert emitted == []
    assert panel.error.text() == f"Player X: {typed!r} is not a valid address: {words}."


def test_a_hosted_choice_survives_reloading_the_bot_list(qtbot: QtBot) -> None:
    panel = SetupPanel()
    qtbot.addWidget(panel)
    panel.set_bots(BOTS)
    panel.seat_x.set_choice(SeatChoice("hosted", THREAT))
    panel.set_bots(list(reversed(BOTS)))
    assert panel.seat_x.choice() == SeatChoice("hosted", THREAT)
    # A bot the server no longer offers is kept as its address.
    panel.set_bots(BOTS[:1])
    assert panel.seat_x.choice() == SeatChoice("url", THREAT)
    assert panel.seat_x.url.isVisibleTo(panel)


def test_connect_asks_for_the_typed_server(qtbot: QtBot) -> None:
    panel = SetupPanel()
    qtbot.addWidget(panel)
    panel.set_server_url("http://127.0.0.1:9999")
    with qtbot.waitSignal(panel.connectRequested) as blocker:
        panel.connect_button.click()
    assert blocker.args == ["http://127.0.0.1:9999"]


@pytest.mark.parametrize("height", [800, 600])
def test_the_new_game_button_stays_in_view_under_an_error_and_a_bot_url(
    qtbot: QtBot, tmp_path: Path, server_url: str, height: int
) -> None:
    window = make_window(qtbot, tmp_path)
    window.resize(1280, height)
    connect(qtbot, window, server_url)  # the server line takes two lines then
    window.show_setup()
    form = window.setup
    # Port 9 on loopback: nothing listens there, so the server refuses the game (422)
    # with a reason three lines long.
    form.set_values(
        FormValues(x=SeatChoice("url", "http://127.0.0.1:9/bot"), o=SeatChoice("human"))
    )
    form.new_game_button.click()
    qtbot.waitUntil(lambda: "(422)" in form.error.text(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: form.new_game_button.isEnabled(), timeout=WAIT_MS)
    qtbot.wait(50)  # the layout settles
    button = form.new_game_button
    shown = button.visibleRegion().boundingRect()
    assert shown == button.rect(), f"the button shows {shown} of {button.rect()}"
    top_left = button.mapTo(window, QPoint(0, 0))
    assert window.rect().contains(QRect(top_left, button.size()))
    window.close()

"""The desktop client shows the server's analysis bot: the ``analysis`` packets of the
spectator stream (``ui.game_model``, ``ui.player_panel``, ``ui.controller``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from models import AnalysisPacket, PositionEvaluation, ProtocolError, SetupPacket
from tests.ui_server import game_server
from ui.game_model import GameModel, read_spectator_packet
from ui.main_window import MainWindow
from ui.player_panel import PlayerPanel
from ui.setup_panel import FormValues, SeatChoice

WAIT_MS = 60_000  # only against hangs


def analysis(ply: int, heuristic: float, bot: str = "Judge") -> AnalysisPacket:
    return AnalysisPacket(ply=ply, evaluation=PositionEvaluation(heuristic=heuristic), bot=bot)


def test_the_spectator_view_shows_the_analysis_bots_evaluation_of_the_position(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    with (
        game_server(tmp_path / "bots") as bots,
        game_server(tmp_path / "arena", analysis_bot=f"{bots}/bots/threat") as url,
    ):
        window.setup.set_server_url(url)
        window.connect_server(url)
        qtbot.waitUntil(lambda: window.setup.seat_o.kind.count() > 2, timeout=WAIT_MS)
        # The random bot reports no evaluation, and the person waits to move: the
        # position in view stays put while the analysis bot judges it.
        window.setup.set_values(
            FormValues(
                x=SeatChoice("human", name="Tester"), o=SeatChoice("hosted", f"{url}/bots/random")
            )
        )
        window.setup.new_game_button.click()
        controller = window.controller
        qtbot.waitUntil(lambda: controller.active_seat() is not None, timeout=WAIT_MS)
        model = controller.model
        assert model is not None
        ply = len(model.moves)
        qtbot.waitUntil(
            lambda: (found := model.analysis_at(ply)) is not None and found.ply == ply,
            timeout=WAIT_MS,
        )
        bar = window.panel.analysis
        assert bar.isVisible()
        assert bar.caption.startswith("ThreatBot: ")
        assert not window.panel.evaluation.isVisible()  # no player gave an evaluation


def test_the_analysis_bar_follows_the_position_in_view(qtbot: QtBot) -> None:
    panel = PlayerPanel()
    qtbot.addWidget(panel)
    panel.show()
    model = GameModel()
    model.apply(SetupPacket(), 0.0)
    panel.set_model(model)
    assert not panel.analysis.isVisible()  # nothing known yet
    model.apply(analysis(0, 0.5), 0.0)
    panel.refresh()
    assert panel.analysis.isVisible()
    assert panel.analysis.caption == "Judge: +0.50 (X better)"
    assert panel.analysis.share == 0.75


def test_the_analysis_of_an_earlier_position_says_which(qtbot: QtBot) -> None:
    model = GameModel()
    model.apply(analysis(0, -0.25), 0.0)
    model.apply(analysis(3, 0.1), 0.0)
    found = model.analysis_at(2)
    assert found is not None and found.ply == 0
    panel = PlayerPanel()
    qtbot.addWidget(panel)
    panel.analysis.set_analysis(found, viewed=2)
    assert panel.analysis.caption == "Judge (after move 0): -0.25 (O better)"


def test_a_packet_type_the_client_does_not_know_is_ignored_not_an_error() -> None:
    assert read_spectator_packet('{"type": "x-commentary", "text": "nice"}') is None
    with pytest.raises(ProtocolError):  # a known type, broken, is still an error
        read_spectator_packet('{"type": "analysis", "ply": "three"}')
    with pytest.raises(ProtocolError):
        read_spectator_packet("[1, 2]")

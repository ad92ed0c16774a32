"""``python -m game.demo``: one offline game, its board and its record."""

from __future__ import annotations

import pytest

from game import demo, notation
from models import Match, ResultReason


def test_demo_prints_a_finished_game_whose_record_reads_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert demo.main(["--seed", "7"]) == 0
    out = capsys.readouterr().out
    record_text = out[out.index("version[2]") :]
    record = notation.loads(record_text)  # replays every stone through the rules
    assert record.result is not None
    assert record.result.reason in (ResultReason.WIN, ResultReason.DRAW)
    assert record.player_x.name == "lines" and record.player_o.name == "random"
    assert "r= 0" in out or "r=0" in out  # the ASCII board
    if record.result.reason is ResultReason.WIN:
        assert any(ch in out for ch in "XO")  # the winning line, in capitals


def test_the_same_seed_plays_the_same_game() -> None:
    first = demo.play((demo.LinePlayer("a", 3), demo.RandomPlayer("b", 4)), Match())
    second = demo.play((demo.LinePlayer("a", 3), demo.RandomPlayer("b", 4)), Match())
    assert [m.pieces for m in first.moves] == [m.pieces for m in second.moves]


def test_a_bad_setting_is_a_clear_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        demo.main(["--view-distance", "0"])
    assert exit_info.value.code == 2
    # In the wire contract's words, not pydantic's ("Input should be ...").
    assert "view_distance: expected at least 1, got 0" in capsys.readouterr().err

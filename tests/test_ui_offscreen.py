"""Offscreen Qt set-up for the screenshot tool and the board benchmark."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PyQt5.QtCore import qInstallMessageHandler, qWarning

from ui.offscreen import prepare_offscreen


def test_offscreen_notes_are_dropped_and_other_messages_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "minimal")  # a choice is kept
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    prepare_offscreen()
    try:
        qWarning("This plugin does not support propagateSizeHints()")
        qWarning("a real problem")
    finally:
        qInstallMessageHandler(None)  # back to Qt's own handler for the other tests
    assert os.environ["QT_QPA_PLATFORM"] == "minimal"
    runtime = Path(os.environ["XDG_RUNTIME_DIR"])
    assert runtime.parent == tmp_path and runtime.is_dir()
    assert (runtime.stat().st_mode & 0o777) == 0o700
    assert capsys.readouterr().err == "a real problem\n"

"""``htttx-tournament`` resuming a tournament: what the resumed run shows first, and how
``--resume ID`` finds the tournament."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_tournament_cli import RUN_TIMEOUT, _done_rows, marked_command

#: ``<id or name>: <status>, <counted>/<total> games counted``: a progress line.
PROGRESS = re.compile(r"^\S+: (\w+), (\d+)/(\d+) games counted", re.MULTILINE)


def counted_in(out: str, status: str) -> list[int]:
    """The games counted of each progress line of ``out`` with ``status``, in order."""
    return [int(m[2]) for m in PROGRESS.finditer(out) if m[1] == status]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_resumed_run_shows_the_games_counted_before_from_its_first_line(
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.sqlite"
    command = marked_command(f"progress-{os.getpid()}", db, "--rounds", "12")
    runner = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT
        while len(_done_rows(db)) < 4:
            assert runner.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.05)
        runner.send_signal(signal.SIGINT)
        out, _ = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 130, out
    [counted_before] = counted_in(out, "stopped")
    assert counted_before >= 4, out

    again = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Resuming tournament" in again.stdout
    # The first line after the resume counts what was played (it said 0/24 games).
    first, *_ = counted_in(again.stdout, "running")
    assert first >= counted_before, again.stdout

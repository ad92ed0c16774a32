"""``htttx-tournament`` resuming a tournament: what the resumed run shows first, and how
``--resume ID`` finds the tournament."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from game.store import GameStore
from game.tournament_args import UsageError, parse_arguments
from game.tournament_cli import main
from tests.test_tournament_cli import RANDOM, RUN_TIMEOUT, THREAT, _done_rows, marked_command

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


# ------------------------------------------------------------------ --resume ID


async def store_stopped(db: Path, *tournament_ids: str) -> None:
    """Tournaments in ``db`` as a run stopped before its first game leaves them: threat
    against random, local programs, one round, no openings."""
    request = parse_arguments(
        [
            "--bot",
            f"name=threat,cmd={THREAT}",
            "--bot",
            f"name=random,cmd={RANDOM}",
            "--openings",
            "none",
        ]
    ).request
    assert request is not None
    async with await GameStore.open(f"sqlite+aiosqlite:///{db}") as store:
        for tournament_id in tournament_ids:
            await store.tournaments.create(
                tournament_id,
                name=None,
                request_json=request.model_dump_json(),
                games_total=request.games,
                created_at=datetime.now(UTC),
            )
            await store.tournaments.set_status(tournament_id, "stopped", reason="stopped")


def resume(tmp_path: Path, prefix: str, *argv: str) -> int:
    """``htttx-tournament --resume prefix`` on ``tmp_path``'s database; its status."""
    return main(
        [
            "--resume",
            prefix,
            "--db",
            str(tmp_path / "r.sqlite"),
            "--log-dir",
            str(tmp_path / "logs"),
            "--report",
            str(tmp_path / "report.json"),
            "--no-progress",
            *argv,
        ]
    )


def test_resume_takes_the_start_of_an_id_that_no_other_id_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wanted, other = "5d62dc89" + "0" * 24, "5d62dc8a" + "0" * 24
    asyncio.run(store_stopped(tmp_path / "r.sqlite", wanted, other))
    # The 8 characters a progress line shows; options of the run itself are welcome.
    status = resume(tmp_path, "5d62dc89", "--port", "0", "--bot-memory-mb", "none")
    assert status == 0, capsys.readouterr()
    view = json.loads((tmp_path / "report.json").read_text())
    assert view["tournament_id"] == wanted and view["status"] == "finished"
    assert f"Resuming tournament {wanted} (stopped)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        (
            "5d62",
            "--resume '5d62' is ambiguous: it starts "
            f"{'5d62dc8a' + '0' * 24} (stopped), {'5d62dc89' + '0' * 24} (stopped); "
            "give more of the id",
        ),
        ("5d63", "--resume '5d63': no tournament of --db has an id starting so"),
    ],
)
def test_a_prefix_of_several_ids_or_of_none_is_one_line_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prefix: str, message: str
) -> None:
    asyncio.run(store_stopped(tmp_path / "r.sqlite", "5d62dc89" + "0" * 24, "5d62dc8a" + "0" * 24))
    assert resume(tmp_path, prefix) == 2
    assert capsys.readouterr().err == f"htttx-tournament: {message}\n"


def test_resume_from_a_database_that_is_not_there_is_refused_and_creates_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert resume(tmp_path, "5d62dc89") == 2
    assert capsys.readouterr().err == (
        f"htttx-tournament: --resume 5d62dc89: there is no database {tmp_path / 'r.sqlite'} "
        "to resume from; give --db the file the tournament ran with\n"
    )
    assert not (tmp_path / "r.sqlite").exists()


def test_a_prefix_under_4_characters_is_refused() -> None:
    with pytest.raises(UsageError, match="--resume '5d6': give at least 4 characters of the id"):
        parse_arguments(["--resume", "5d6"])


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        (["--rounds", "5"], "--rounds"),
        (["--bot", "name=a,url=http://127.0.0.1:1", "--sprt", "elo0=0,elo1=5"], "--bot, --sprt"),
        (["--concurrency", "1", "--openings", "default"], "--concurrency, --openings"),
    ],
)
def test_resume_refuses_the_settings_it_reads_from_the_database(
    settings: list[str], named: str
) -> None:
    with pytest.raises(UsageError) as caught:
        parse_arguments(["--resume", "5d62dc89", *settings])
    assert str(caught.value) == (
        f"--resume reads the tournament's settings from --db: leave out {named} (or run "
        "the same command without --resume: the unfinished tournament with exactly those "
        "settings goes on)"
    )


def test_a_quiet_run_still_prints_its_full_id_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "--bot",
            f"name=threat,cmd={THREAT}",
            "--bot",
            f"name=random,cmd={RANDOM}",
            "--openings",
            "none",
            "--db",
            str(tmp_path / "r.sqlite"),
            "--log-dir",
            str(tmp_path / "logs"),
            "--report",
            str(tmp_path / "report.json"),
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    tournament_id = json.loads((tmp_path / "report.json").read_text())["tournament_id"]
    assert len(tournament_id) == 32
    assert out.startswith(f"Tournament {tournament_id}: 2 games; standings at http://127.0.0.1:")

"""Every benchmark script under ``bench/`` has a command line: ``--help`` says what it
measures (the first paragraph of its docstring, whole) and exits 0 without measuring
anything; an argument it does not know is one line on stderr and exit status 2, never
a traceback and never a run that ignores it. The two helper modules the scripts
import (``games``, ``processes``) are not scripts."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HELPERS = {"games.py", "processes.py"}
SCRIPTS = sorted(path.name for path in (ROOT / "bench").glob("*.py") if path.name not in HELPERS)


def run(script: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"},
    )


def first_paragraph(script: str) -> str:
    tree = ast.parse((ROOT / "bench" / script).read_text(encoding="utf-8"))
    docstring = ast.get_docstring(tree)
    assert docstring, f"bench/{script} has no docstring"
    return " ".join(docstring.split("\n\n")[0].split())


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_describes_the_script_and_measures_nothing(script: str) -> None:
    result = run(script, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: "), result.stdout[:300]
    assert first_paragraph(script) in " ".join(result.stdout.split())


@pytest.mark.parametrize("script", SCRIPTS)
def test_an_unknown_argument_is_one_line_and_status_2(script: str) -> None:
    result = run(script, "--no-such-option")
    assert result.returncode == 2, (result.stdout[-300:], result.stderr[-300:])
    assert "Traceback" not in result.stderr
    assert "--no-such-option" in result.stderr.strip().splitlines()[-1]
    assert result.stdout == ""


def test_game_lengths_says_what_it_plays_as_it_goes() -> None:
    # The RandomBot self-play pairing takes minutes: without a line per game a run
    # looked hung.
    result = run(
        "game_lengths.py", "--games", "1", "--cap", "4", "--random-games", "2", "--random-cap", "3"
    )
    assert result.returncode == 0, result.stderr
    progress = result.stderr.splitlines()
    assert progress.count("  game 1 of 2: 3 moves") == 1 and "  game 2 of 2: 3 moves" in progress
    starts = [line for line in progress if line.endswith(" moves ...")]
    assert len(starts) == 9 and "random (x) vs random (o): 2 games of at most 3 moves ..." in starts
    assert len(result.stdout.splitlines()) == 10  # a line per pairing, and the longest game


def options_without_help(help_text: str) -> list[str]:
    """The options that ``--help`` lists with no words after them (argparse puts an
    option's help on its own line, or on the next one, indented, when the option is
    long)."""
    lines = help_text.splitlines()
    bare = []
    for index, line in enumerate(lines):
        if not line.startswith("  -") or "  " in line.strip():
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if not following.startswith(" " * 10):
            bare.append(line.strip())
    return bare


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_says_what_every_option_does(script: str) -> None:
    result = run(script, "--help")
    assert options_without_help(result.stdout) == []

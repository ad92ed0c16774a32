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

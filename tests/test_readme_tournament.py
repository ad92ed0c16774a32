"""The README's first ``htttx-tournament`` example, run as written against a throwaway
server standing in for ``make run``'s (a round instead of 200: a few games)."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path

from game.tournament_cli import main
from tests.test_tournaments import arena

README = Path(__file__).resolve().parent.parent / "README.md"
#: Where the README's examples find ``make run``'s server, and the venv's programs.
MAKE_RUN_SERVER = "http://127.0.0.1:8001"
VENV_BIN = ".venv/bin/"


def first_tournament_example() -> list[str]:
    """The words of the first ``sh`` block of "Run a tournament", its lines joined."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Run a tournament: `htttx-tournament`") :]
    block = section[section.index("```sh\n") + len("```sh\n") :]
    block = block[: block.index("```")]
    return shlex.split(block.replace("\\\n", " "))


async def test_the_readme_first_tournament_example_runs_as_written(tmp_path: Path) -> None:
    argv = first_tournament_example()
    assert argv[0] == f"{VENV_BIN}htttx-tournament", argv
    # Nothing in it may reach past loopback; make run's server is the stand-in's.
    urls = [word for arg in argv for word in arg.split(",") if "://" in word]
    assert urls and all(url.split("=", 1)[-1].startswith(MAKE_RUN_SERVER) for url in urls)
    rounds = argv.index("--rounds")
    argv[rounds + 1] = "1"
    db = argv.index("--db")
    argv[db + 1] = str(tmp_path / "results.sqlite")
    report = tmp_path / "report.json"
    async with arena(tmp_path / "server.sqlite") as stand_in:
        # The venv's programs are those of the venv running the tests (.venv in make test).
        args = [
            arg.replace(MAKE_RUN_SERVER, stand_in.base).replace(
                VENV_BIN, f"{Path(sys.executable).parent}/"
            )
            for arg in argv[1:]
        ]
        extra = ["--log-dir", str(tmp_path / "logs"), "--report", str(report), "--no-progress"]
        status = await asyncio.to_thread(main, [*args, *extra])
    view = json.loads(report.read_text())
    assert status == 0, view["reason"]
    assert view["status"] == "finished" and view["games_counted"] == 2
    assert sorted(line["name"] for line in view["standings"]) == ["local", "threat"]

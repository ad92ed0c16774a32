"""Every option a command's ``--help`` lists is in the README's account of that command,
and every option the account names is one the command takes."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from bot.serve_cli import main as bot_main
from game.serve import main as server_main
from game.tournament_cli import main as tournament_main
from ui.app import parse_args as ui_arguments

README = Path(__file__).resolve().parent.parent / "README.md"
#: An option as ``--help`` and the README write it.
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*[a-z]")


def readme_between(start: str, end: str) -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index(start) :]
    return section[: section.index(end)]


def help_options(
    main: Callable[[Sequence[str]], Any], capsys: pytest.CaptureFixture[str]
) -> set[str]:
    """The options ``main(["--help"])`` prints (``--help`` aside)."""
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    usage = capsys.readouterr().out.split("\n\n", 1)[0]  # "usage: ...", every option once
    return set(OPTION.findall(usage)) - {"--help"}


#: Each command, and where the README lists its options: from the first text to the second.
COMMANDS: dict[str, tuple[Callable[[Sequence[str]], Any], str, str]] = {
    "htttx-server": (server_main, "Options of `htttx-server`:", "**Pages of other sites"),
    "htttx-bot": (bot_main, "`--bot module:Class` imports", "What your bot gets:"),
    "htttx-tournament": (tournament_main, "**Options.** `--bot name=N", "**How it runs.**"),
    "htttx-ui": (
        ui_arguments,
        "make ui                                   # or:",
        "`--open URL` takes",
    ),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_the_readme_lists_every_option_of(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    main, start, end = COMMANDS[command]
    taken = help_options(main, capsys)
    listed = set(OPTION.findall(readme_between(start, end)))
    assert sorted(taken - listed) == [], f"{command} options the README does not list"
    assert sorted(listed - taken) == [], f"options the README lists that {command} does not take"

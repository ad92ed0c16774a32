"""Every option a command's ``--help`` lists is in the README's account of that command,
and every option the account names is one the command takes; and each option that has a
default says it in ``--help``."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from bot.serve_cli import _arguments as bot_arguments
from bot.serve_cli import main as bot_main
from game.demo import _arguments as demo_arguments
from game.serve import main as server_main
from game.serve_args import arguments as server_arguments
from game.tournament_args import _arguments as tournament_arguments
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


#: Each command's parser (htttx-ui's one option with a default, --server, reads it from
#: the settings: its help says so in words).
PARSERS: dict[str, Callable[[], argparse.ArgumentParser]] = {
    "htttx-server": server_arguments,
    "htttx-bot": bot_arguments,
    "htttx-tournament": lambda: tournament_arguments()[0],
    "python -m game.demo": demo_arguments,
}


def has_a_default(action: argparse.Action) -> bool:
    """Whether leaving the option out gives it a value of its own (not a flag's False,
    nor nothing at all)."""
    if action.nargs == 0 or action.default is argparse.SUPPRESS:
        return False
    return action.default is not None and action.default != ()


@pytest.mark.parametrize("command", PARSERS)
def test_every_option_with_a_default_says_it_in_its_help(command: str) -> None:
    parser = PARSERS[command]()
    silent = [
        action.option_strings[0]
        for action in parser._actions
        if has_a_default(action) and "default" not in (action.help or "").lower()
    ]
    assert silent == [], f"{command} options whose --help does not say their default"

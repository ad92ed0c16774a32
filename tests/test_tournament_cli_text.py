"""``htttx-tournament`` on a terminal prints names as written: rich markup in them is
text, not styles or links (nor a ``MarkupError`` that ends the run)."""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path

from rich.console import Console

from game.tournament_args import parse_arguments
from game.tournament_cli import run_tournament

RANDOM = f"{sys.executable} -m bot.serve --bot bot.bots:RandomBot --port {{port}}"
#: A tournament's name is a ``Name``: any printable text, square brackets too.
MARKUP_NAME = "Cup [/] [bold red]x[/] [link=https://evil.example]y[/link]"


def test_a_name_with_rich_markup_is_shown_as_written_in_the_live_table(tmp_path: Path) -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=160, color_system="truecolor")
    options = parse_arguments(
        [
            *("--bot", f"name=a,cmd={RANDOM}", "--bot", f"name=b,cmd={RANDOM}"),
            *("--name", MARKUP_NAME, "--rounds", "1", "--openings", "none"),
            *("--db", str(tmp_path / "r.sqlite"), "--log-dir", str(tmp_path / "logs")),
        ]
    )
    assert asyncio.run(run_tournament(options, console)) == 0
    shown = screen.getvalue()
    # The live table's titles (wrapped at the table's width) and the report's first line.
    assert shown.count(f"{MARKUP_NAME}:") >= 2, shown
    assert "\x1b]8;" not in shown  # no hyperlink escape: "[link=...]" stayed text

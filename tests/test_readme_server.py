"""The README's examples of the game server that nothing else runs: what
``htttx-server`` prints as it starts, checked against ``banner`` (no server started),
and the fields it lists of an answer, against the answer's model."""

from __future__ import annotations

import re
from pathlib import Path

from game.serve import DEFAULT_HOST, DEFAULT_PORT
from game.serve_intro import banner
from game.server import GameServer, create_app, server_config
from game.store import GameStore
from wire.ladder import LadderStatus

README = Path(__file__).resolve().parent.parent / "README.md"
#: Where the README's examples find the server: htttx-server's defaults.
BASE = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"


def sh_block_after(heading: str) -> str:
    """The first ``sh`` block of the README after ``heading``."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    block = section[section.index("```sh\n") + len("```sh\n") :]
    return block[: block.index("```")]


class ServerAtTheDefaults(GameServer):
    """A game server that says it listens where ``htttx-server`` does by default,
    without listening: ``banner`` reads only its host and port."""

    @property
    def port(self) -> int:
        return DEFAULT_PORT


def test_the_readme_shows_what_htttx_server_prints_as_it_starts() -> None:
    shown = sh_block_after("## Run the server").splitlines()
    assert shown[0].startswith(".venv/bin/htttx-server ")
    # The README abbreviates the bots' URLs after the first: ".../bots/center".
    readme_lines = [
        line.removeprefix("# ").replace(" .../bots/", f" {BASE}/bots/") for line in shown[1:]
    ]
    app = create_app()
    server = ServerAtTheDefaults(app, server_config(app, host=DEFAULT_HOST, port=DEFAULT_PORT))
    printed = banner(server, db_url=GameStore.DEFAULT_URL, example_bots=True, with_token=False)
    # The README stops at the bots: the curl that follows is shown in its own block.
    assert readme_lines == printed.splitlines()[: len(readme_lines)]


def test_the_readme_names_every_field_of_get_ladder() -> None:
    text = README.read_text(encoding="utf-8")
    sentence = text[text.index("`GET /ladder` answers `LadderStatus`:") :]
    sentence = sentence[sentence.index(":") : sentence.index("`POST /ladder/pause`")]
    assert re.findall(r"`(\w+)`", sentence) == list(LadderStatus.model_fields)

"""The README's examples of the game server that nothing else runs: what
``htttx-server`` prints as it starts, checked against ``banner`` (no server started),
the fields it lists of an answer, against the answer's model, and the body of every
``curl`` it shows, read by the model its route reads it with (and the packets it shows
a person sending to ``/queue``, with extensions.md's)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from pydantic import BaseModel

from game.serve import DEFAULT_HOST, DEFAULT_PORT
from game.serve_intro import banner
from game.server import GameServer, create_app, server_config
from game.store import GameStore
from models import NewGameRequest, parse_body, parse_packet
from wire.arena import BotRegistration, BotUpdate
from wire.ladder import LadderStatus
from wire.queue import QUEUE_CLIENT_PACKETS, ChallengeAccept, ChallengeRequest
from wire.series import SeriesRequest
from wire.tournaments import TournamentRequest

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


# ------------------------------------------------------------- the curl bodies

#: The model that reads each route's body, by method and path (ids as ``{}``).
BODIES: dict[tuple[str, str], type[BaseModel]] = {
    ("POST", "/game/new"): NewGameRequest,
    ("POST", "/tournaments"): TournamentRequest,
    ("POST", "/series"): SeriesRequest,
    ("POST", "/bots"): BotRegistration,
    ("PATCH", "/bots/{}"): BotUpdate,
    ("POST", "/challenges"): ChallengeRequest,
    ("POST", "/challenges/{}/accept"): ChallengeAccept,
}


def readme_curls() -> list[list[str]]:
    """Every ``curl`` of the README's ``sh`` blocks, as its words."""
    text = README.read_text(encoding="utf-8")
    curls: list[list[str]] = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL):
        for line in logical_lines(block):
            lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
            lexer.whitespace_split, lexer.commenters = True, "#"
            words = list(lexer)
            while "curl" in words:
                words = words[words.index("curl") + 1 :]
                ends = [i for i, word in enumerate(words) if word in ("|", ")", ";", "&&")]
                curls.append(words[: ends[0]] if ends else words)
    return curls


def logical_lines(block: str) -> list[str]:
    """The block's command lines: a line ending in ``\\`` goes on, and so does a
    single-quoted body until its quote closes."""
    lines: list[str] = []
    pending = ""
    for line in block.splitlines():
        pending = f"{pending}\n{line}" if pending else line
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        try:
            shlex.split(pending, comments=True)
        except ValueError:  # a quote still open
            continue
        lines.append(pending)
        pending = ""
    return lines


def route_of(words: list[str]) -> tuple[str, str, str | None]:
    """The method, the path (ids as ``{}``) and the body of one ``curl``."""
    url = next(word for word in words if "127.0.0.1:" in word or "localhost:" in word)
    path = re.sub(r"^(https?://)?[^/]+", "", url).split("?")[0]
    body = words[words.index("-d") + 1] if "-d" in words else None
    method = words[words.index("-X") + 1] if "-X" in words else ("POST" if body else "GET")
    known = {route: re.sub(r"\{\}", "[^/]+", route[1]) for route in BODIES}
    for (route_method, route_path), pattern in known.items():
        if method == route_method and re.fullmatch(pattern, path):
            return method, route_path, body
    return method, path, body


def test_the_readme_has_curls_with_bodies() -> None:
    routes = {route_of(words)[:2] for words in readme_curls() if "-d" in words}
    assert routes == set(BODIES)  # every route that takes a body has an example


@pytest.mark.parametrize(
    "words", [w for w in readme_curls() if "-d" in w], ids=lambda w: " ".join(w)[:60]
)
def test_every_curl_body_of_the_readme_is_one_its_route_reads(words: list[str]) -> None:
    # A field renamed or removed would make the example a 422 (every body refuses a
    # field it does not know): the models read the bodies exactly as the routes do.
    method, path, body = route_of(words)
    assert body is not None and (method, path) in BODIES, (method, path)
    parse_body(BODIES[method, path], body)


def queue_packets_shown() -> list[str]:
    """The packets a person sends to ``/queue`` in the README's websocat example and in
    extensions.md's "Client to server"."""
    readme = README.read_text(encoding="utf-8")
    shown = re.findall(r'^\{"type":"queue_join".*\}$', readme, flags=re.MULTILINE)
    extensions = (README.parent / "docs" / "extensions.md").read_text(encoding="utf-8")
    section = extensions[extensions.index("### Client to server") :]
    block = section[section.index("```json\n") + len("```json\n") :]
    return shown + block[: block.index("```")].splitlines()


@pytest.mark.parametrize("text", queue_packets_shown())
def test_every_queue_packet_shown_is_one_the_server_reads(text: str) -> None:
    parse_packet(text, allowed=QUEUE_CLIENT_PACKETS)

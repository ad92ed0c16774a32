"""Cross-site request forgery: what a page of another site makes a visitor's browser
send to the game server is refused when it would change something (``game.cross_site``).
The requests carry the headers a browser sets on them (``Origin``, ``Sec-Fetch-Site``)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from game.cross_site import cross_site_refusal
from tests.http_json import get_ok
from tests.ui_server import game_server

EVIL = "http://evil.example"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with game_server(tmp_path_factory.mktemp("cross-site")) as url:
        yield url


def send(url: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, str]:
    """A POST as a browser would send it for a page: a body of type text/plain (a
    "simple" request, which the browser sends without asking the server first)."""
    request = urllib.request.Request(
        url, data=body, headers={"content-type": "text/plain", **headers}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def new_game(server: str, name: str) -> bytes:
    seat = {"type": "bot", "bot_url": f"{server}/bots/center"}
    return json.dumps({"player_x": seat, "player_o": seat, "name": name}).encode()


def games_named(server: str, name: str) -> list[str]:
    page = get_ok(f"{server}/games?limit=200")
    return [g["game_id"] for g in page["items"] if g.get("name") == name]


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": EVIL, "sec-fetch-site": "cross-site"},
        # A page on another port of the same host is another origin of the same site.
        {"origin": "http://127.0.0.1:1", "sec-fetch-site": "same-site"},
        {"origin": EVIL},  # a browser that does not send Sec-Fetch-Site
        {"origin": "null"},  # a sandboxed frame, a page from a file
    ],
)
def test_a_page_of_another_site_cannot_create_a_game(server: str, headers: dict[str, str]) -> None:
    status, answer = send(f"{server}/game/new", new_game(server, "forged"), headers)
    assert status == 403, answer
    assert "may not send POST requests to this server" in json.loads(answer)["detail"]
    assert games_named(server, "forged") == []


def test_a_page_of_another_site_cannot_stop_a_tournament(server: str) -> None:
    headers = {"origin": EVIL, "sec-fetch-site": "cross-site"}
    status, answer = send(f"{server}/tournaments/some-id/stop", None, headers)
    assert status == 403, answer  # not looked up at all: no 404


@pytest.mark.parametrize(
    "headers",
    [
        {},  # curl, the desktop client, a script
        {"sec-fetch-site": "same-origin"},  # the server's own page
        {"origin": "{server}"},  # its own page, in a browser without Sec-Fetch-Site
    ],
)
def test_the_servers_own_page_and_other_clients_still_create_games(
    server: str, headers: dict[str, str]
) -> None:
    headers = {name: value.format(server=server) for name, value in headers.items()}
    status, answer = send(f"{server}/game/new", new_game(server, "wanted"), headers)
    assert status == 200, answer
    assert json.loads(answer)["game_id"] in games_named(server, "wanted")


def test_reading_is_open_to_any_page(server: str) -> None:
    request = urllib.request.Request(
        f"{server}/health", headers={"origin": EVIL, "sec-fetch-site": "cross-site"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200


def test_a_refusal_names_the_page() -> None:
    refusal = cross_site_refusal("DELETE", {"origin": EVIL, "host": "arena:8001"})
    assert refusal is not None and EVIL in refusal and "DELETE" in refusal

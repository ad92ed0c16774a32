"""Games opened by URL (``htttx-ui --open http://host/g/ID``): which URL the notation is
fetched from, and the fetch itself, through ``ui.net.Network`` (off the GUI thread,
with a deadline; the notation is read in the worker thread too).

A game server shows a game at three addresses, and each opens the same notation::

    http://host:8001/games/ID/notation    the notation itself
    http://host:8001/games/ID             the record (JSON)
    http://host:8001/g/ID                 the game's web page

Whatever comes before ``/games`` or ``/g`` is kept, so a server behind a path prefix
works too; a query or fragment is dropped.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote, urlsplit, urlunsplit

from game import notation
from models import GameRecord, ProtocolError
from ui.net import Call, Network
from ui.server_address import ServerAddressError, split_address

__all__ = [
    "FETCH_TIMEOUT",
    "RecordUrlError",
    "fetch_record",
    "game_address",
    "is_url",
    "notation_url",
]

#: How long fetching a game may take, at most (seconds).
FETCH_TIMEOUT: Final = 30.0


class RecordUrlError(ValueError):
    """A URL that does not name a game on a game server."""


def is_url(text: str) -> bool:
    """Whether ``--open`` was given a URL rather than a file.

    >>> is_url("HTTP://h/g/1"), is_url("game.htttx"), is_url("C:/games/x.htttx")
    (True, False, False)
    """
    return text[:8].lower().startswith(("http://", "https://"))


def notation_url(text: str) -> str:
    """The URL of the notation of the game ``text`` names (see the module's doc).

    >>> notation_url("http://127.0.0.1:8001/g/4f2a")
    'http://127.0.0.1:8001/games/4f2a/notation'
    >>> notation_url("https://example.org/arena/games/4f2a?x=1")
    'https://example.org/arena/games/4f2a/notation'

    Raises ``RecordUrlError`` for anything else, saying what is expected.
    """
    try:
        parts = split_address(text)
    except ServerAddressError as error:
        raise RecordUrlError(str(error)) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise RecordUrlError(f"{text!r} is not an http:// or https:// address")
    segments = parts.path.rstrip("/").split("/")
    kinds: tuple[str, ...] = ("games", "g")
    if segments[-1] == "notation":
        segments, kinds = segments[:-1], ("games",)
    if len(segments) < 3 or segments[-2] not in kinds or not segments[-1]:
        raise RecordUrlError(
            f"{text!r} names no game: expected http://HOST/g/GAME_ID, "
            "http://HOST/games/GAME_ID or http://HOST/games/GAME_ID/notation"
        )
    prefix, game_id = segments[:-2], segments[-1]
    path = "/".join([*prefix, "games", game_id, "notation"])
    return urlunsplit((parts.scheme.lower(), parts.netloc, path, "", ""))


def fetch_record(network: Network, url: str, *, timeout: float = FETCH_TIMEOUT) -> Call:
    """Fetch the notation at ``url`` (a ``notation_url``) and read it; the call's
    ``finished`` carries a ``GameRecord``, its ``failed`` a sentence: no such game
    (404: "Game ID does not exist on http://HOST"), not notation, unreachable, timed
    out."""
    return network.request(
        "GET",
        url,
        timeout=timeout,
        description=f"the game at {url}",
        parse=_record,
        refused=f"No game at {url}",
        missing=_no_game(url),
    )


def game_address(url: str) -> tuple[str, str] | None:
    """The server's base URL and the game's id of a ``notation_url`` (None for any other
    URL): where to watch the game live when it is still being played.

    >>> game_address("http://h:8001/arena/games/4f2a/notation")
    ('http://h:8001/arena', '4f2a')
    >>> game_address("http://h:8001/other") is None
    True
    """
    parts = urlsplit(url)
    segments = parts.path.split("/")
    if len(segments) < 4 or segments[-3:-2] != ["games"] or segments[-1] != "notation":
        return None
    server = urlunsplit((parts.scheme, parts.netloc, "/".join(segments[:-3]), "", ""))
    return server, unquote(segments[-2])


def _no_game(url: str) -> str:
    """What a 404 for the notation at ``url`` means: that game does not exist there.

    >>> _no_game("http://h:8001/arena/games/4f2a/notation")
    'Game 4f2a does not exist on http://h:8001/arena'
    """
    address = game_address(url)
    if address is None:
        return f"No game at {url}"  # not a notation_url: no id to name
    server, game_id = address
    return f"Game {game_id} does not exist on {server}"


def _record(value: object) -> GameRecord:
    # Runs in the network's worker thread: a long game takes a while to read.
    if not isinstance(value, str):
        raise ProtocolError(f"expected HTTTX notation text, got JSON ({type(value).__name__})")
    return notation.loads(value)

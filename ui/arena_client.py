"""The REST API of one game server, for the desktop client.

``ArenaClient`` builds each request of the server's HTTP API and the addresses of its
WebSockets; its calls go through ``ui.net.Network`` (off the GUI thread) and their
answers are parsed into typed values (``GamePage``, ``GameRecord``, ``list[HostedBot]``
...) in the worker thread, so a slot receives exactly the type the method names.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote, urlencode

import msgspec
from pydantic import BaseModel
from PyQt5.QtCore import QObject

# GamePage comes from the store so the client reads exactly what the server writes;
# importing it also imports SQLAlchemy, which costs little at start-up.
from game.store import GamePage
from models import (
    GameRecord,
    HostedBots,
    NewGameRequest,
    NewGameResponse,
    ProtocolError,
    parse_body,
)
from ui.net import Call, Network
from ui.server_address import normalize_server_url

__all__ = ["ArenaClient"]


class ArenaClient(QObject):
    """The REST API of one game server. Each method returns a ``Call`` whose
    ``finished`` carries the typed answer named in its docstring.

    Raises ``ServerAddressError`` for a ``base_url`` that is not an http(s) address.
    """

    def __init__(self, network: Network, base_url: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.network = network
        self.base_url = normalize_server_url(base_url)

    def health(self, *, timeout: float = 5.0) -> Call:
        """``GET /health`` -> ``dict`` (``{"status": "ok", "live_games": n}``)."""
        return self._get("/health", "the server's health", _as_dict, timeout=timeout)

    def bots(self) -> Call:
        """``GET /bots`` -> ``list[HostedBot]``, the bots the server hosts."""
        return self._get("/bots", "the list of hosted bots", _hosted_bots)

    def new_game(self, request: NewGameRequest, *, timeout: float = 30.0) -> Call:
        """``POST /game/new`` -> ``NewGameResponse``. The server fetches the bots'
        capabilities before answering, hence the longer timeout."""
        return self.network.request(
            "POST",
            self.base_url + "/game/new",
            request,
            timeout=timeout,
            description="a new game",
            parse=_model(NewGameResponse),
            refused="The server refused the game",
        )

    def games(self, status: str | None = None, cursor: str | None = None, limit: int = 50) -> Call:
        """``GET /games`` -> ``GamePage`` (newest first; ``next_cursor`` for more)."""
        query: dict[str, str | int] = {"limit": limit}
        if status is not None:
            query["status"] = status
        if cursor is not None:
            query["cursor"] = cursor
        return self._get(f"/games?{urlencode(query)}", "the list of games", _model(GamePage))

    def game(self, game_id: str) -> Call:
        """``GET /games/{id}`` -> ``GameRecord``; an unknown id fails the call with
        "Game ID does not exist on SERVER"."""
        return self._get(
            f"/games/{quote(game_id, safe='')}",
            f"game {game_id}",
            _model(GameRecord),
            missing=self._no_game(game_id),
        )

    def notation(self, game_id: str) -> Call:
        """``GET /games/{id}/notation`` -> ``str``, the game in HTTTX notation."""
        return self._get(
            f"/games/{quote(game_id, safe='')}/notation",
            f"the notation of game {game_id}",
            _as_text,
            missing=self._no_game(game_id),
        )

    def seat_url(self, token: str) -> str:
        """The WebSocket address of a human seat."""
        return f"{self._ws_base()}/ws?{urlencode({'token': token})}"

    def spectate_url(self, game_id: str) -> str:
        """The WebSocket address to watch a game."""
        return f"{self._ws_base()}/spectate/{quote(game_id, safe='')}"

    def _ws_base(self) -> str:
        scheme, rest = self.base_url.split("://", 1)
        return f"{'wss' if scheme == 'https' else 'ws'}://{rest}"

    def _get(
        self,
        path: str,
        description: str,
        parse: Callable[[object], object],
        *,
        timeout: float = 10.0,
        missing: str | None = None,
    ) -> Call:
        return self.network.request(
            "GET",
            self.base_url + path,
            timeout=timeout,
            description=description,
            parse=parse,
            missing=missing,
        )

    def _no_game(self, game_id: str) -> str:
        # A 404 for a game is no refusal: the id names nothing on this server.
        return f"Game {game_id} does not exist on {self.base_url}"


def _model(model: type[BaseModel]) -> Callable[[object], object]:
    def parse(value: object) -> object:
        if not isinstance(value, dict):
            raise ProtocolError(f"expected a JSON object, got {type(value).__name__}")
        return parse_body(model, msgspec.json.encode(value))

    return parse


def _hosted_bots(value: object) -> object:
    page = _model(HostedBots)(value)
    assert isinstance(page, HostedBots)
    return list(page.bots)


def _as_dict(value: object) -> object:
    if not isinstance(value, dict):
        raise ProtocolError(f"expected a JSON object, got {type(value).__name__}")
    return value


def _as_text(value: object) -> object:
    if not isinstance(value, str):
        raise ProtocolError("expected text")
    return value
